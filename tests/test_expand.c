/* Feature expansion: the polynomial map's kernel identity and dimension, the online path on the
 * expansion against the (dual) polynomial kernel perceptron, streamed against materialised
 * training, the refusals, and random Fourier features against the RBF kernel. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "features/expand.h"
#include "model/model.h"
#include "testutil.h"

/* The kernel table a run gets by default. */
static const pt_kernels *auto_kernels(void)
{
    const pt_kernels *k = NULL;
    ck_assert(pt_kernels_get(PT_ISA_AUTO, &k) == PT_OK);
    return k;
}

static pt_expander *make(pt_expand_kind kind, int degree, float coef0, size_t rff_dim, float gamma,
                         uint64_t seed, size_t d)
{
    pt_expand_params p;
    pt_expand_params_init(&p);
    p.kind = kind;
    p.degree = degree;
    p.coef0 = coef0;
    p.rff_dim = rff_dim;
    p.gamma = gamma;
    p.seed = seed;
    pt_expander *e = NULL;
    ck_assert_msg(pt_expander_create(&p, d, auto_kernels(), &e) == PT_OK, "%s", pt_last_error());
    return e;
}

static float *row_buf(const pt_expander *e)
{
    float *b = pt_calloc(pt_stride_for(pt_expander_d_out(e)) * sizeof(float), "test row");
    ck_assert(b != NULL);
    return b;
}

static double dotd(const float *a, const float *b, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++) s += (double)a[i] * b[i];
    return s;
}

static uint64_t lcg = 12345;
static double urand(void) /* [0, 1) */
{
    lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(lcg >> 11) * 0x1.0p-53;
}

/* C(n, k) in exact integer arithmetic (small values). */
static uint64_t binom(uint64_t n, uint64_t k)
{
    uint64_t r = 1;
    for (uint64_t i = 1; i <= k; i++) r = r * (n - k + i) / i;
    return r;
}

/* ------------------------------------------------------------------- dimension, layout */

START_TEST(test_dimension)
{
    pt_expand_params p;
    pt_expand_params_init(&p);
    ck_assert_int_eq(p.kind, PT_EXPAND_POLY);
    /* the notes on perceptron learning and kernels: n = 2, d = 3 and n = 3, d = 2 both give
     * 10 monomials */
    p.degree = 3;
    ck_assert_uint_eq(pt_expand_dim(&p, 2), 10);
    p.degree = 2;
    ck_assert_uint_eq(pt_expand_dim(&p, 3), 10);
    /* by hand: C(5 + 4, 4) = 126, C(1 + D, D) = D + 1, C(0 + D, D) = 1 */
    p.degree = 4;
    ck_assert_uint_eq(pt_expand_dim(&p, 5), 126);
    ck_assert_uint_eq(pt_expand_dim(&p, 1), 5);
    ck_assert_uint_eq(pt_expand_dim(&p, 0), 1);
    for (size_t d = 1; d <= 40; d += 13)
        for (int D = 1; D <= 6; D++) {
            p.degree = D;
            ck_assert_uint_eq(pt_expand_dim(&p, d), binom(d + (size_t)D, (size_t)D));
        }
    /* the notes on what the perceptron optimizes: d = 6, m = 100 gives "about 1.6 billion"
     * terms: C(105, 6) = 1,609,344,100 monomials of degree exactly 6; with all lower degrees
     * C(106, 6) = 1,705,904,746 */
    p.degree = 6;
    ck_assert_uint_eq(pt_expand_dim(&p, 100), 1705904746u);
    p.degree = 5;
    ck_assert_uint_eq(pt_expand_dim(&p, 100), 1705904746u - 1609344100u);
    /* overflow */
    p.degree = 8;
    ck_assert_uint_eq(pt_expand_dim(&p, SIZE_MAX / 4), SIZE_MAX);
    p.degree = 32;
    ck_assert_uint_eq(pt_expand_dim(&p, 1000000), SIZE_MAX);
    p.kind = PT_EXPAND_RFF;
    p.rff_dim = 777;
    ck_assert_uint_eq(pt_expand_dim(&p, 12345), 777);
}
END_TEST

/* The layout and coefficients by hand for d = 2, D = 2, C = 3:
 * (3, sqrt(6) x0, sqrt(6) x1, x0^2, sqrt(2) x0 x1, x1^2) */
START_TEST(test_layout_by_hand)
{
    pt_expander *e = make(PT_EXPAND_POLY, 2, 3.0f, 0, 1, 1, 2);
    ck_assert_uint_eq(pt_expander_d_out(e), 6);
    float *o = row_buf(e);
    const float x[16] = {2.0f, -5.0f};
    pt_expander_row(e, x, o);
    const double want[6] = {3.0, sqrt(6.0) * 2, sqrt(6.0) * -5, 4.0, sqrt(2.0) * -10, 25.0};
    for (int i = 0; i < 6; i++) ck_assert_double_eq_tol(o[i], want[i], 1e-5);
    for (int i = 6; i < 16; i++) ck_assert_float_eq(o[i], 0.0f);
    pt_free(o);
    pt_expander_free(e);
}
END_TEST

/* phi(x).phi(z) = (C + x.z)^D for D = 1..5, several d, C in {0, 1, 2.5}, on random data in
 * [-1, 1]^d. Tolerance: 2e-6 relative to (C + |x|.|z|)^D, the sum of the absolute values of the
 * terms (float products and coefficients, summed in double); the error measured is 2.0e-7.
 * The row form and the block form give the same bits. */
START_TEST(test_poly_kernel_identity)
{
    const size_t dims[] = {1, 3, 8, 17, 33};
    const float cs[] = {0.0f, 1.0f, 2.5f};
    double worst = 0.0;
    for (size_t di = 0; di < sizeof dims / sizeof dims[0]; di++)
        for (int D = 1; D <= 5; D++)
            for (size_t ci = 0; ci < 3; ci++) {
                size_t d = dims[di];
                float C = cs[ci];
                pt_expander *e = make(PT_EXPAND_POLY, D, C, 0, 1, 1, d);
                size_t n_out = pt_expander_d_out(e), so = pt_stride_for(n_out), si = pt_stride_for(d);
                ck_assert_uint_eq(n_out, binom(d + (size_t)D, (size_t)D));
                const size_t rows = 6;
                float *X = pt_calloc(rows * si * sizeof(float), "x");
                float *B = pt_alloc(rows * so * sizeof(float), "block");
                float *R = pt_alloc(rows * so * sizeof(float), "rows");
                for (size_t i = 0; i < rows; i++)
                    for (size_t j = 0; j < d; j++) X[i * si + j] = (float)(2 * urand() - 1);
                pt_expander_block(e, X, si, rows, B, so);
                for (size_t i = 0; i < rows; i++) pt_expander_row(e, X + i * si, R + i * so);
                ck_assert_int_eq(memcmp(B, R, rows * so * sizeof(float)), 0);
                for (size_t a = 0; a < rows; a++)
                    for (size_t b = a; b < rows; b++) {
                        const float *x = X + a * si, *z = X + b * si;
                        double xz = dotd(x, z, d), axz = 0.0;
                        for (size_t j = 0; j < d; j++) axz += fabs((double)x[j] * z[j]);
                        double want = pow(C + xz, D), scale = pow(C + axz, D);
                        double got = dotd(B + a * so, B + b * so, n_out);
                        double rel = fabs(got - want) / (scale > 1e-30 ? scale : 1e-30);
                        if (rel > worst) worst = rel;
                        ck_assert_msg(rel <= 2e-6, "d=%zu D=%d C=%g: phi.phi=%.9g, (C+x.z)^D=%.9g",
                                      d, D, (double)C, got, want);
                    }
                pt_free(X);
                pt_free(B);
                pt_free(R);
                pt_expander_free(e);
            }
    ck_assert(worst < 2e-6);
}
END_TEST

/* ------------------------------------------------------- online on phi = kernel perceptron */

/* The dual perceptron with K = (C + x.z)^D in double, the reference: mistakes per epoch.
 * Integer inputs and C make every K and every score f an exact integer, and scores of exactly
 * 0 do occur (K = 0 where x.z = -C, cancelling pairs). The primal computes f in float with an
 * error far below 0.5, so both sides update on y f <= 0.5 (the margin tau = 0.5): for an
 * integer f that is the Rosenblatt rule y f <= 0, and the primal's rounding cannot flip it.
 * *zeros counts the exact-zero scores met with some alpha != 0 (the cases a tau = 0 comparison
 * would leave to rounding). */
static int dual_reference(const float *X, const float *y, size_t n, size_t d, int D, double C,
                          int epochs, size_t *mistakes, int *zeros)
{
    double *K = malloc(n * n * sizeof *K);
    long *alpha = calloc(n, sizeof *alpha);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            double s = C;
            for (size_t t = 0; t < d; t++) s += (double)X[i * d + t] * X[j * d + t];
            K[i * n + j] = pow(s, D);
        }
    int e = 0;
    *zeros = 0;
    long total = 0;
    while (e < epochs) {
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
            double f = 0.0;
            for (size_t j = 0; j < n; j++) f += alpha[j] * (double)y[j] * K[j * n + i];
            if (f == 0.0 && total > 0) (*zeros)++;
            if (y[i] * f <= 0.5) {
                alpha[i]++;
                total++;
                m++;
            }
        }
        mistakes[e++] = m;
        if (m == 0) break;
    }
    free(K);
    free(alpha);
    return e;
}

START_TEST(test_online_on_expansion_equals_kernel_perceptron)
{
    /* 48 points with coordinates in {-2..2}, not all 0, labelled by a quadratic rule */
    enum { N = 48, DIM = 3, EPOCHS = 30 };
    float X[N * DIM];
    double lab[N];
    float y[N];
    for (int i = 0; i < N; i++) {
        int nz = 0;
        while (!nz)
            for (int j = 0; j < DIM; j++) nz |= (X[i * DIM + j] = (float)((int)(urand() * 5) - 2)) != 0;
        double v = X[i * DIM] * X[i * DIM + 1] - X[i * DIM + 2] + 0.5;
        lab[i] = v > 0 ? 1 : -1;
        y[i] = (float)lab[i];
    }
    pt_dataset *ds = tu_dataset(N, DIM, X, lab);
    const int Ds[] = {2, 3};
    const float Cs[] = {1.0f, 2.0f}; /* integers: exact kernel values */
    int kernel_checked = 0, zeros_seen = 0;
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++) {
            int D = Ds[a];
            float C = Cs[b];
            size_t ref[EPOCHS];
            int zeros;
            int ref_epochs = dual_reference(X, y, N, DIM, D, C, EPOCHS, ref, &zeros);
            zeros_seen += zeros;

            pt_train_params p;
            pt_train_params_init(&p);
            p.bias = 0;
            p.epochs = EPOCHS;
            p.margin = 0.5f;
            p.expand.kind = PT_EXPAND_POLY;
            p.expand.degree = D;
            p.expand.coef0 = C;
            pt_model *m;
            pt_train_report r;
            ck_assert_msg(pt_train(ds, &p, &m, &r) == PT_OK, "%s", pt_last_error());
            ck_assert_int_eq(r.epochs_run, ref_epochs);
            for (int e = 0; e < ref_epochs; e++)
                ck_assert_msg(r.mistakes_per_epoch[e] == ref[e],
                              "D=%d C=%g epoch %d: online on phi %zu mistakes, dual %zu", D,
                              (double)C, e + 1, r.mistakes_per_epoch[e], ref[e]);
            pt_train_report_clear(&r);
            pt_model_free(m);

            /* the kernel path itself, once it exists */
            pt_train_params_init(&p);
            p.path = PT_PATH_KERNEL;
            p.kernel.kind = PT_KERNEL_POLY;
            p.kernel.gamma = 1.0f;
            p.kernel.coef0 = C;
            p.kernel.degree = D;
            p.bias = 0;
            p.epochs = EPOCHS;
            p.margin = 0.5f;
            pt_status s = pt_train(ds, &p, &m, &r);
            if (s == PT_ERR_UNSUPPORTED) continue;
            ck_assert_msg(s == PT_OK, "%s", pt_last_error());
            ck_assert_int_eq(r.epochs_run, ref_epochs);
            for (int e = 0; e < ref_epochs; e++) ck_assert_uint_eq(r.mistakes_per_epoch[e], ref[e]);
            kernel_checked++;
            pt_train_report_clear(&r);
            pt_model_free(m);
        }
    if (getenv("PTRON_TEST_VERBOSE")) fprintf(stderr, "kernel path compared in %d of 4 cases\n", kernel_checked);
    ck_assert(zeros_seen > 0); /* the data does exercise the exact-zero case */
    pt_dataset_free(ds);
}
END_TEST

/* ------------------------------------------------------- streamed against materialised */

static pt_dataset *circle(size_t n, size_t d, uint64_t seed)
{
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.kind = PT_GEN_CIRCLE;
    g.n = n;
    g.d = d;
    g.seed = seed;
    pt_dataset *ds;
    ck_assert(pt_generate(&g, &ds) == PT_OK);
    return ds;
}

/* POLY: bit-identical weights, bias and mistakes (the row and block forms compute every value
 * with the same operations), for the online path (classic and averaged, bias on) and the batch
 * path; scores of the expanded model equal the materialised model's, bit for bit. */
START_TEST(test_streamed_equals_materialised)
{
    pt_dataset *ds = circle(300, 4, 7);
    for (int variant = 0; variant < 3; variant++) {
        pt_train_params p;
        pt_train_params_init(&p);
        p.epochs = 8;
        p.shuffle = 1;
        if (variant == 1) p.variant = PT_VARIANT_AVERAGED;
        if (variant == 2) {
            p.path = PT_PATH_BATCH;
            p.batch.loss = PT_LOSS_HINGE;
            p.eta = 0.1f;
        }
        pt_expand_params ep;
        pt_expand_params_init(&ep);
        ep.degree = 3;
        ep.coef0 = 1.0f;

        pt_dataset *x;
        ck_assert(pt_expand(ds, &ep, &x) == PT_OK);
        ck_assert_uint_eq(pt_dataset_d(x), 35);
        ck_assert_uint_eq(pt_dataset_nclass(x), 2);
        pt_model *mm, *ms;
        pt_train_report rm, rs;
        ck_assert_msg(pt_train(x, &p, &mm, &rm) == PT_OK, "%s", pt_last_error());
        p.expand = ep;
        ck_assert_msg(pt_train(ds, &p, &ms, &rs) == PT_OK, "%s", pt_last_error());

        ck_assert_int_eq(rm.epochs_run, rs.epochs_run);
        for (int e = 0; e < rm.epochs_run; e++)
            ck_assert_uint_eq(rm.mistakes_per_epoch[e], rs.mistakes_per_epoch[e]);
        float bm, bs;
        const float *wm = pt_model_weights(mm, &bm), *ws = pt_model_weights(ms, &bs);
        pt_model_info im, is;
        pt_model_get_info(mm, &im);
        pt_model_get_info(ms, &is);
        ck_assert_uint_eq(is.d, 35);
        ck_assert_int_eq(memcmp(wm, ws, 35 * sizeof(float)), 0);
        ck_assert(memcmp(&bm, &bs, sizeof bm) == 0);

        /* scores: the expanded model expands ds itself */
        float *sm = malloc(300 * sizeof(float)), *ss = malloc(300 * sizeof(float));
        ck_assert(pt_model_scores(mm, x, sm) == PT_OK);
        ck_assert(pt_model_scores(ms, ds, ss) == PT_OK);
        ck_assert_int_eq(memcmp(sm, ss, 300 * sizeof(float)), 0);
        pt_eval ev;
        ck_assert(pt_model_evaluate(ms, ds, &ev) == PT_OK);
        if (variant == 0) ck_assert(ev.accuracy > 0.9); /* the circle is quadratic */
        free(sm);
        free(ss);
        pt_train_report_clear(&rm);
        pt_train_report_clear(&rs);
        pt_model_free(mm);
        pt_model_free(ms);
        pt_dataset_free(x);
    }
    pt_dataset_free(ds);
}
END_TEST

/* RFF: the streamed rows (d axpys) and the materialised ones (sgemm) agree within rounding:
 * |difference| <= 1e-6 (values are at most sqrt(2/D)). */
START_TEST(test_rff_row_block_agree)
{
    pt_dataset *ds = circle(200, 6, 3);
    pt_expand_params ep;
    pt_expand_params_init(&ep);
    ep.kind = PT_EXPAND_RFF;
    ep.rff_dim = 300;
    ep.gamma = 0.7f;
    pt_dataset *x;
    ck_assert(pt_expand(ds, &ep, &x) == PT_OK);
    pt_expander *e;
    ck_assert(pt_expander_create(&ep, 6, auto_kernels(), &e) == PT_OK);
    float *o = row_buf(e);
    double worst = 0.0;
    for (size_t i = 0; i < 200; i++) {
        pt_expander_row(e, pt_dataset_row_const(ds, i), o);
        const float *r = pt_dataset_row_const(x, i);
        for (size_t j = 0; j < pt_stride_for(300); j++) {
            double df = fabs((double)o[j] - r[j]);
            if (df > worst) worst = df;
        }
    }
    ck_assert_msg(worst <= 1e-6, "row and block differ by %g", worst);
    pt_free(o);
    pt_expander_free(e);

    /* training streamed RFF works and predicts through the expansion */
    pt_train_params p;
    pt_train_params_init(&p);
    p.epochs = 20;
    p.expand = ep;
    pt_model *m;
    ck_assert(pt_train(ds, &p, &m, NULL) == PT_OK);
    pt_eval ev;
    ck_assert(pt_model_evaluate(m, ds, &ev) == PT_OK);
    ck_assert(ev.accuracy > 0.85);
    pt_model_free(m);
    pt_dataset_free(x);
    pt_dataset_free(ds);
}
END_TEST

/* The model remembers its expansion: saved and loaded (RFF's W and b drawn again from the seed),
 * it scores bit for bit as before; and the voted variant votes in the expanded space. */
START_TEST(test_model_save_load)
{
    pt_dataset *ds = circle(200, 3, 5);
    for (int kind = 0; kind < 2; kind++) {
        pt_train_params p;
        pt_train_params_init(&p);
        p.epochs = 5;
        p.expand.kind = kind == 0 ? PT_EXPAND_POLY : PT_EXPAND_RFF;
        p.expand.degree = 4;
        p.expand.coef0 = 0.5f;
        p.expand.rff_dim = 200;
        p.expand.gamma = 2.0f;
        p.expand.seed = 77;
        pt_model *m, *l;
        ck_assert_msg(pt_train(ds, &p, &m, NULL) == PT_OK, "%s", pt_last_error());
        const char *path = tu_path("exp-model", ".model");
        ck_assert_msg(pt_model_save(m, path) == PT_OK, "%s", pt_last_error());
        ck_assert_msg(pt_model_load(path, &l) == PT_OK, "%s", pt_last_error());
        ck_assert_int_eq(l->params.expand.kind, p.expand.kind);
        ck_assert_uint_eq(l->expand_d_in, 3);
        float *a = malloc(200 * sizeof(float)), *b = malloc(200 * sizeof(float));
        ck_assert(pt_model_scores(m, ds, a) == PT_OK);
        ck_assert(pt_model_scores(l, ds, b) == PT_OK);
        for (int i = 0; i < 200; i++)
            ck_assert_msg(memcmp(&a[i], &b[i], sizeof(float)) == 0, "kind %d row %d: %.9g / %.9g",
                          kind, i, (double)a[i], (double)b[i]);
        pt_eval ev;
        ck_assert(pt_model_evaluate(l, ds, &ev) == PT_OK);
        ck_assert_msg(ev.accuracy > 0.8, "kind %d: accuracy %g", kind, ev.accuracy);
        free(a);
        free(b);
        pt_model_free(m);
        pt_model_free(l);
        unlink(path);
    }

    /* the voted variant: the streamed model votes as the materialised one does */
    pt_expand_params ep;
    pt_expand_params_init(&ep);
    ep.degree = 3;
    pt_dataset *x;
    ck_assert(pt_expand(ds, &ep, &x) == PT_OK);
    pt_train_params p;
    pt_train_params_init(&p);
    p.epochs = 4;
    p.variant = PT_VARIANT_VOTED;
    pt_model *mm, *ms;
    pt_status st = pt_train(x, &p, &mm, NULL);
    if (st != PT_ERR_UNSUPPORTED) {
        ck_assert_msg(st == PT_OK, "%s", pt_last_error());
        p.expand = ep;
        ck_assert_msg(pt_train(ds, &p, &ms, NULL) == PT_OK, "%s", pt_last_error());
        float *a = malloc(200 * sizeof(float)), *b = malloc(200 * sizeof(float));
        ck_assert(pt_model_scores(mm, x, a) == PT_OK);
        ck_assert(pt_model_scores(ms, ds, b) == PT_OK);
        ck_assert_int_eq(memcmp(a, b, 200 * sizeof(float)), 0);
        free(a);
        free(b);
        pt_model_free(mm);
        pt_model_free(ms);
    }
    pt_dataset_free(x);

    /* an 'expand' line that does not give the model's d is refused on load */
    pt_train_params_init(&p);
    p.epochs = 2;
    p.expand = ep;
    ck_assert(pt_train(ds, &p, &ms, NULL) == PT_OK);
    const char *path = tu_path("exp-model", ".model");
    ck_assert(pt_model_save(ms, path) == PT_OK);
    pt_model_free(ms);
    size_t len;
    char *text = tu_read_file(path, &len);
    char *at = strstr(text, " d_in 3\n"), *ck = strstr(text, "\nchecksum ");
    ck_assert(at && ck);
    at[6] = '4'; /* C(4 + 3, 3) = 35 != C(3 + 3, 3) = 20 */
    size_t body = (size_t)(ck - text) + 1;
    snprintf(ck + 1, len - body + 1, "checksum %016llx\n", (unsigned long long)pt_checksum(text, body));
    const char *bad = tu_write_file("exp-bad", ".model", text);
    pt_model *l;
    ck_assert_int_eq(pt_model_load(bad, &l), PT_ERR_PARSE);
    ck_assert_msg(strstr(pt_last_error(), "expand") && strstr(pt_last_error(), "35"), "%s",
                  pt_last_error());
    free(text);
    unlink(path);
    unlink(bad);
    pt_dataset_free(ds);
}
END_TEST

/* ---------------------------------------------------------------------------- refusals */

START_TEST(test_refusals)
{
    pt_dataset *ds = circle(50, 100, 1);
    pt_expand_params ep;
    pt_expand_params_init(&ep);
    ep.degree = 6;
    pt_dataset *x = NULL;
    ck_assert_int_eq(pt_expand(ds, &ep, &x), PT_ERR_LIMIT);
    ck_assert(x == NULL);
    const char *msg = pt_last_error();
    ck_assert_msg(strstr(msg, "1705904746") && strstr(msg, "6823619008 bytes"), "%s", msg);

    /* within --max-features but over the memory budget: the matrix's bytes */
    ep.degree = 2; /* 5151 features, 5152 padded: 50 rows need 1,030,400 bytes */
    ep.mem_budget_bytes = 1000000;
    ck_assert_int_eq(pt_expand(ds, &ep, &x), PT_ERR_LIMIT);
    msg = pt_last_error();
    ck_assert_msg(strstr(msg, "5151") && strstr(msg, "1030400 bytes"), "%s", msg);
    ep.mem_budget_bytes = 1030400;
    ck_assert_int_eq(pt_expand(ds, &ep, &x), PT_OK);
    pt_dataset_free(x);

    /* training: streamed refuses on the dimension, batch on the matrix */
    pt_train_params p;
    pt_train_params_init(&p);
    p.expand = ep;
    p.expand.degree = 6;
    pt_model *m;
    ck_assert_int_eq(pt_train(ds, &p, &m, NULL), PT_ERR_LIMIT);
    ck_assert_msg(strstr(pt_last_error(), "1705904746"), "%s", pt_last_error());
    /* 60 rows need 1,236,480 bytes, over the least memory budget a run may have (1 MiB) */
    pt_dataset *rows60 = circle(60, 100, 1);
    p.expand.degree = 2;
    p.expand.mem_budget_bytes = (size_t)2 << 20;
    p.path = PT_PATH_BATCH;
    p.mem_budget_bytes = (size_t)1 << 20;
    ck_assert_int_eq(pt_train(rows60, &p, &m, NULL), PT_ERR_LIMIT);
    ck_assert_msg(strstr(pt_last_error(), "1236480 bytes") &&
                  strstr(pt_last_error(), "pt_train_params.mem_budget_bytes"), "%s", pt_last_error());
    p.path = PT_PATH_ONLINE; /* the same budget streams fine */
    ck_assert_int_eq(pt_train(rows60, &p, &m, NULL), PT_OK);
    pt_model_free(m);
    pt_dataset_free(rows60);
    p.path = PT_PATH_KERNEL;
    ck_assert_int_eq(pt_train(ds, &p, &m, NULL), PT_ERR_INVALID);

    /* bad parameters */
    pt_expand_params_init(&ep);
    ep.coef0 = -1.0f;
    ck_assert_int_eq(pt_expand(ds, &ep, &x), PT_ERR_INVALID);
    ep.coef0 = 1.0f;
    ep.degree = 0;
    ck_assert_int_eq(pt_expand(ds, &ep, &x), PT_ERR_INVALID);
    ep.kind = PT_EXPAND_NONE;
    ck_assert_int_eq(pt_expand(ds, &ep, &x), PT_ERR_INVALID);
    ep.kind = PT_EXPAND_RFF;
    ep.gamma = 0.0f;
    ck_assert_int_eq(pt_expand(ds, &ep, &x), PT_ERR_INVALID);
    pt_dataset_free(ds);

    /* overflow to Inf is an error, not a matrix of Inf */
    const float big[] = {1e30f, 1.0f, -1e30f, 2.0f};
    const double lab[] = {1, -1};
    ds = tu_dataset(2, 2, big, lab);
    pt_expand_params_init(&ep);
    ep.degree = 3;
    ck_assert_int_eq(pt_expand(ds, &ep, &x), PT_ERR_NUMERIC);
    pt_dataset_free(ds);
}
END_TEST

START_TEST(test_cli)
{
    pt_dataset *ds = circle(100, 100, 2); /* degree 2: 5151 features, 2,060,800 bytes */
    const char *in = tu_path("exp-in", ".ptd");
    char inb[512], outb[512], modelb[512];
    snprintf(inb, sizeof inb, "%s", in);
    ck_assert(pt_dataset_write(ds, inb, PT_FORMAT_PTD) == PT_OK);
    snprintf(outb, sizeof outb, "%s", tu_path("exp-out", ".ptd"));
    snprintf(modelb, sizeof modelb, "%s", tu_path("exp-model", ".model"));
    char args[2048], *out, *err;

    /* oversize: the dimension first, then the refusal with the bytes, exit 2 */
    snprintf(args, sizeof args, "expand %s --degree 6 -o %s", inb, outb);
    ck_assert_int_eq(tu_run_cli(args, &out, &err), 2);
    ck_assert_msg(strstr(out, "1705904746"), "stdout: %s", out);
    ck_assert_msg(strstr(err, "1705904746") && strstr(err, "bytes"), "stderr: %s", err);
    free(out);
    free(err);
    snprintf(args, sizeof args, "expand %s --degree 2 --mem-mb 1 -o %s", inb, outb);
    ck_assert_int_eq(tu_run_cli(args, &out, &err), 2);
    ck_assert_msg(strstr(err, "5151") && strstr(err, "bytes"), "stderr: %s", err);
    free(out);
    free(err);
    snprintf(args, sizeof args, "expand %s --degree 2 --max-features 5000 --json -o %s", inb, outb);
    ck_assert_int_eq(tu_run_cli(args, &out, &err), 2);
    ck_assert_msg(strstr(out, "\"dim\": 5151"), "stdout: %s", out);
    free(out);
    free(err);

    /* a working expansion, then train streamed and predict through the model */
    snprintf(args, sizeof args, "expand %s --degree 2 --json -o %s", inb, outb);
    ck_assert_int_eq(tu_run_cli(args, &out, &err), 0);
    ck_assert_msg(strstr(out, "\"dim\": 5151"), "stdout: %s", out);
    free(out);
    free(err);
    pt_dataset *x;
    ck_assert(pt_dataset_read(outb, NULL, &x) == PT_OK);
    ck_assert_uint_eq(pt_dataset_d(x), 5151);
    ck_assert_uint_eq(pt_dataset_n(x), 100);
    pt_dataset_free(x);
    snprintf(args, sizeof args, "expand %s --rff 64 --gamma 0.5 --seed 3 -o %s", inb, outb);
    ck_assert_int_eq(tu_run_cli(args, &out, &err), 0);
    free(out);
    free(err);
    snprintf(args, sizeof args, "expand %s -o %s", inb, outb);
    ck_assert_int_eq(tu_run_cli(args, &out, &err), 1); /* neither --degree nor --rff */
    free(out);
    free(err);

    /* the model keeps the expansion: predict on the training file gives the train accuracy */
    const char *specs[] = {"poly:2", "2 --coef0 0.5", "rff:128 --gamma 0.05 --seed 9"};
    for (int i = 0; i < 3; i++) {
        snprintf(args, sizeof args, "train %s --expand %s -o %s --json", inb, specs[i], modelb);
        ck_assert_int_eq(tu_run_cli(args, &out, &err), 0);
        const char *t = strstr(out, "\"train_accuracy\": ");
        ck_assert_msg(t, "stdout: %s / %s", out, err);
        double train_acc = atof(t + 18);
        ck_assert_msg(strstr(out, i < 2 ? "\"expanded_d\": 5151" : "\"expanded_d\": 128"), "%s", out);
        free(out);
        free(err);
        snprintf(args, sizeof args, "predict %s %s --json", modelb, inb);
        ck_assert_int_eq(tu_run_cli(args, &out, &err), 0);
        t = strstr(out, "\"accuracy\": ");
        ck_assert_msg(t, "stdout: %s / %s", out, err);
        ck_assert_double_eq_tol(atof(t + 12), train_acc, 1e-12);
        free(out);
        free(err);
    }
    snprintf(args, sizeof args, "train %s --expand poly:0 -o %s", inb, modelb);
    ck_assert_int_eq(tu_run_cli(args, &out, &err), 1);
    free(out);
    free(err);
    snprintf(args, sizeof args, "train %s --expand 6 -o %s", inb, modelb);
    ck_assert_int_eq(tu_run_cli(args, &out, &err), 2);
    ck_assert_msg(strstr(err, "1705904746"), "stderr: %s", err);
    free(out);
    free(err);
    pt_dataset_free(ds);
}
END_TEST

/* ------------------------------------------------------------------- random Fourier */

/* Mean absolute error of z(x).z(y) against exp(-gamma |x - y|^2) over random pairs. */
static double rff_mae(size_t D, uint64_t seed)
{
    enum { d = 5, PAIRS = 300 };
    const float gamma = 0.5f;
    pt_expander *e = make(PT_EXPAND_RFF, 0, 0, D, gamma, seed, d);
    float *zx = row_buf(e), *zy = row_buf(e);
    uint64_t keep = lcg;
    lcg = 99; /* the same pairs for every D */
    double sum = 0.0;
    for (int t = 0; t < PAIRS; t++) {
        float x[16] = {0}, y[16] = {0};
        double dist = 0.0;
        for (int j = 0; j < d; j++) {
            x[j] = (float)(urand() * 2 - 1);
            y[j] = (float)(x[j] + (urand() * 2 - 1) * 0.6);
            dist += ((double)x[j] - y[j]) * ((double)x[j] - y[j]);
        }
        pt_expander_row(e, x, zx);
        pt_expander_row(e, y, zy);
        sum += fabs(dotd(zx, zy, D) - exp(-gamma * dist));
    }
    lcg = keep;
    pt_free(zx);
    pt_free(zy);
    pt_expander_free(e);
    return sum / PAIRS;
}

/* The Monte Carlo error shrinks like 1/sqrt(D): measured 0.034-0.038 at D = 256 and
 * 0.010-0.011 at 4096 (seeds 1-3); the bound is 0.02 at 4096. */
START_TEST(test_rff_approximates_rbf)
{
    double e256 = rff_mae(256, 1), e4096 = rff_mae(4096, 1);
    ck_assert_msg(e4096 < 0.02, "MAE at D = 4096: %g", e4096);
    ck_assert_msg(e4096 < e256, "MAE at 4096 (%g) not below 256 (%g)", e4096, e256);
}
END_TEST

/* The same seed gives the same features, bit for bit; another seed others. */
START_TEST(test_rff_seeded)
{
    pt_expander *a = make(PT_EXPAND_RFF, 0, 0, 128, 1.0f, 42, 7);
    pt_expander *b = make(PT_EXPAND_RFF, 0, 0, 128, 1.0f, 42, 7);
    pt_expander *c = make(PT_EXPAND_RFF, 0, 0, 128, 1.0f, 43, 7);
    float *za = row_buf(a), *zb = row_buf(b), *zc = row_buf(c);
    float x[16] = {0.3f, -1.0f, 0.5f, 2.0f, 0.0f, -0.25f, 1.5f};
    pt_expander_row(a, x, za);
    pt_expander_row(b, x, zb);
    pt_expander_row(c, x, zc);
    ck_assert_int_eq(memcmp(za, zb, pt_stride_for(128) * sizeof(float)), 0);
    ck_assert_int_ne(memcmp(za, zc, 128 * sizeof(float)), 0);
    /* |z(x)|^2 = 2/D sum cos^2 ~ 1 */
    ck_assert_double_eq_tol(dotd(za, za, 128), 1.0, 0.25);
    pt_free(za);
    pt_free(zb);
    pt_free(zc);
    pt_expander_free(a);
    pt_expander_free(b);
    pt_expander_free(c);
}
END_TEST

/* The vectorised cosine of every ISA's table: absolute error under 2e-7 against the double
 * cosine of the same float argument where the polynomial is used, |a| < 8192 (measured
 * 7.7e-8), and libm beyond. */
START_TEST(test_cos_accuracy)
{
    enum { N = 4099 };
    float *v = malloc(N * sizeof(float)), *zero = calloc(N, sizeof(float)), *a = malloc(N * sizeof(float));
    const double ranges[] = {1.0, 10.0, 1000.0, 8000.0, 1e5, 1e8}; /* the last two: libm */
    int isas = 0;
    for (int isa = PT_ISA_SCALAR; isa <= PT_ISA_NEON; isa++) {
        const pt_kernels *k;
        if (!pt_isa_available((pt_isa)isa) || pt_kernels_get((pt_isa)isa, &k) != PT_OK) continue;
        isas++;
        for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++) {
            for (int i = 0; i < N; i++) a[i] = v[i] = (float)((urand() * 2 - 1) * ranges[r]);
            a[0] = v[0] = 0.0f;
            k->expand->cos(v, zero, N, 1.0f);
            double worst = 0.0;
            for (int i = 0; i < N; i++) {
                double err = fabs((double)v[i] - cos((double)a[i]));
                if (err > worst) worst = err;
            }
            ck_assert_msg(worst < 2e-7, "%s, |a| < %g: max error %g", k->name, ranges[r], worst);
        }
    }
    ck_assert_int_ge(isas, 1);
    free(v);
    free(zero);
    free(a);
}
END_TEST

/* Expansions of sparse rows equal those of their dense copy: POLY stays sparse and holds the
 * dense expansion's non-zeros bit for bit (every degree 1-4, coef0 0 and not, rows with no
 * non-zero), RFF is dense and equals the row form (rff_row) bit for bit; and the batch path
 * on a sparse expansion makes the same mistakes as on the dense one. */
START_TEST(test_sparse_input)
{
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.kind = PT_GEN_SPARSE;
    g.n = 200;
    g.d = 40;
    g.nnz = 5;
    g.margin = 0.001;
    pt_dataset *sp, *dn;
    ck_assert_int_eq(pt_generate(&g, &sp), PT_OK);
    /* an empty row: its expansion is the constant alone */
    for (uint64_t z = sp->rowptr[3]; z < sp->rowptr[4]; z++) sp->val[z] = 0.0f;
    pt_dataset *tmp;
    ck_assert_int_eq(pt_dataset_convert(sp, PT_LAYOUT_DENSE, 0, &dn), PT_OK);
    ck_assert_int_eq(pt_dataset_convert(dn, PT_LAYOUT_SPARSE, 0, &tmp), PT_OK);
    pt_dataset_free(sp);
    sp = tmp;
    ck_assert_uint_eq(sp->rowptr[4] - sp->rowptr[3], 0);
    for (int D = 1; D <= 4; D++)
        for (int c0 = 0; c0 <= 1; c0++) {
            pt_expand_params p;
            pt_expand_params_init(&p);
            p.degree = D;
            p.coef0 = c0 ? 0.5f : 0.0f;
            pt_dataset *es, *ed, *edc;
            ck_assert_msg(pt_expand(sp, &p, &es) == PT_OK, "%s", pt_last_error());
            ck_assert_int_eq(pt_expand(dn, &p, &ed), PT_OK);
            ck_assert_int_eq(pt_dataset_layout(es), PT_LAYOUT_SPARSE);
            tu_assert_clean_csr(es);
            ck_assert_int_eq(pt_dataset_convert(ed, PT_LAYOUT_SPARSE, 0, &edc), PT_OK);
            ck_assert_uint_eq(es->nnz, edc->nnz);
            ck_assert_mem_eq(es->rowptr, edc->rowptr, (es->n + 1) * sizeof *es->rowptr);
            ck_assert_mem_eq(es->col, edc->col, es->nnz * sizeof *es->col);
            ck_assert_mem_eq(es->val, edc->val, es->nnz * sizeof *es->val);
            tu_assert_same_data(es, ed, "poly");
            pt_dataset_free(es);
            pt_dataset_free(ed);
            pt_dataset_free(edc);
        }
    pt_expander *e = make(PT_EXPAND_RFF, 0, 0.0f, 200, 0.5f, 3, g.d);
    pt_expand_params p;
    pt_expand_params_init(&p);
    p.kind = PT_EXPAND_RFF;
    p.rff_dim = 200;
    p.gamma = 0.5f;
    p.seed = 3;
    pt_dataset *er;
    ck_assert_int_eq(pt_expand(sp, &p, &er), PT_OK);
    ck_assert_int_eq(pt_dataset_layout(er), PT_LAYOUT_DENSE);
    float *row = calloc(er->stride, sizeof *row);
    for (size_t i = 0; i < g.n; i++) {
        pt_expander_row(e, dn->X + i * dn->stride, row);
        ck_assert_mem_eq(row, er->X + i * er->stride, er->stride * sizeof *row);
    }
    free(row);
    pt_expander_free(e);
    pt_dataset_free(er);

    /* training on the expansion: the batch path, sparse against dense */
    pt_train_params t;
    pt_train_params_init(&t);
    t.path = PT_PATH_BATCH;
    t.epochs = 5;
    t.expand.kind = PT_EXPAND_POLY;
    t.expand.degree = 2;
    pt_model *ms, *md;
    pt_train_report rs, rd;
    ck_assert_msg(pt_train(sp, &t, &ms, &rs) == PT_OK, "%s", pt_last_error());
    ck_assert_int_eq(pt_train(dn, &t, &md, &rd), PT_OK);
    ck_assert_int_eq(rs.epochs_run, rd.epochs_run);
    for (int ep = 0; ep < rs.epochs_run; ep++)
        ck_assert_uint_eq(rs.mistakes_per_epoch[ep], rd.mistakes_per_epoch[ep]);
    float *s1 = malloc(g.n * sizeof *s1), *s2 = malloc(g.n * sizeof *s2);
    ck_assert_int_eq(pt_model_scores(md, dn, s1), PT_OK);
    ck_assert_int_eq(pt_model_scores(ms, dn, s2), PT_OK);
    for (size_t i = 0; i < g.n; i++) ck_assert(fabsf(s1[i] - s2[i]) <= 1e-4f * (1 + fabsf(s1[i])));
    ck_assert_int_eq(pt_model_scores(md, sp, s2), PT_OK); /* sparse rows staged densely */
    for (size_t i = 0; i < g.n; i++) ck_assert(s1[i] == s2[i]);
    free(s1);
    free(s2);
    pt_train_report_clear(&rs);
    pt_train_report_clear(&rd);
    pt_model_free(ms);
    pt_model_free(md);
    pt_dataset_free(sp);
    pt_dataset_free(dn);
}
END_TEST

/* The test's own copy of the hash (expand.c: splitmix64's finaliser of the position and the
 * seed's mix; column the low bits, sign the top bit). */
static uint64_t t_mix64(uint64_t z)
{
    z += 0x9E3779B97F4A7C15u;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

/* --hash-bits: the hashed expansion against a direct computation from the unhashed one (each
 * non-zero monomial added at its column with its sign, in order, collisions included), the
 * same from sparse and dense rows, deterministic and seeded; training on it sparse equals dense
 * and its model file round-trips (version 3); the refusals. */
START_TEST(test_hash_bits)
{
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.kind = PT_GEN_SPARSE;
    g.n = 150;
    g.d = 30;
    g.nnz = 6;
    g.margin = 0.001;
    pt_dataset *sp, *dn;
    ck_assert_int_eq(pt_generate(&g, &sp), PT_OK);
    ck_assert_int_eq(pt_dataset_convert(sp, PT_LAYOUT_DENSE, 0, &dn), PT_OK);
    for (int D = 1; D <= 3; D++)
        for (int bi = 0; bi < 3; bi++) {
            const int B = (int[]){4, 12, 17}[bi]; /* 1, 2 and 3 radix passes (expand.c) */
            pt_expand_params p;
            pt_expand_params_init(&p);
            p.degree = D;
            p.seed = 7;
            pt_dataset *plain, *hs, *hd, *hs2;
            ck_assert_int_eq(pt_expand(dn, &p, &plain), PT_OK);
            p.hash_bits = B;
            ck_assert_uint_eq(pt_expand_dim(&p, g.d), (size_t)1 << B);
            ck_assert_msg(pt_expand(sp, &p, &hs) == PT_OK, "%s", pt_last_error());
            ck_assert_int_eq(pt_expand(dn, &p, &hd), PT_OK);
            ck_assert_int_eq(pt_expand(sp, &p, &hs2), PT_OK);
            ck_assert_int_eq(pt_dataset_layout(hs), PT_LAYOUT_SPARSE);
            ck_assert_int_eq(pt_dataset_layout(hd), PT_LAYOUT_DENSE);
            tu_assert_clean_csr(hs);
            tu_assert_same_data(hs, hd, "hashed, sparse against dense rows");
            ck_assert_mem_eq(hs->val, hs2->val, hs->nnz * sizeof(float)); /* deterministic */
            const size_t len = (size_t)1 << B;
            float *ref = malloc(len * sizeof *ref), *got = malloc(pt_stride_for(len) * sizeof *got);
            for (size_t i = 0; i < g.n; i++) {
                memset(ref, 0, len * sizeof *ref);
                const float *u = plain->X + i * plain->stride;
                for (size_t pos = 0; pos < plain->d; pos++) {
                    if (u[pos] == 0.0f) continue;
                    uint64_t h = t_mix64((uint64_t)pos ^ t_mix64(7));
                    ref[h & (len - 1)] += h >> 63 ? -u[pos] : u[pos];
                }
                tu_row_dense(hs, i, got);
                size_t off = 0;
                for (size_t c = 0; c < len; c++) off += !(ref[c] == got[c]);
                ck_assert_msg(off == 0, "D %d B %d row %zu: %zu columns differ", D, B, i, off);
            }
            free(ref);
            free(got);
            /* another seed, other columns */
            p.seed = 8;
            pt_dataset *other;
            ck_assert_int_eq(pt_expand(sp, &p, &other), PT_OK);
            ck_assert(other->nnz != hs->nnz ||
                      memcmp(other->col, hs->col, hs->nnz * sizeof *hs->col) != 0);
            pt_dataset_free(other);
            pt_dataset_free(plain);
            pt_dataset_free(hs);
            pt_dataset_free(hd);
            pt_dataset_free(hs2);
        }

    /* training on it: the batch path, sparse and dense rows alike; the model file */
    pt_train_params t;
    pt_train_params_init(&t);
    t.path = PT_PATH_BATCH;
    t.epochs = 4;
    t.expand.kind = PT_EXPAND_POLY;
    t.expand.degree = 2;
    t.expand.hash_bits = 12;
    pt_model *ms, *md;
    pt_train_report rs, rd;
    ck_assert_msg(pt_train(sp, &t, &ms, &rs) == PT_OK, "%s", pt_last_error());
    ck_assert_int_eq(pt_train(dn, &t, &md, &rd), PT_OK);
    for (int ep = 0; ep < rs.epochs_run; ep++)
        ck_assert_uint_eq(rs.mistakes_per_epoch[ep], rd.mistakes_per_epoch[ep]);
    const char *path = tu_path("hashed", ".model");
    ck_assert_int_eq(pt_model_save(ms, path), PT_OK);
    pt_model *back = NULL;
    ck_assert_msg(pt_model_load(path, &back) == PT_OK, "%s", pt_last_error());
    ck_assert_int_eq(back->params.expand.hash_bits, 12);
    float *s1 = malloc(g.n * sizeof *s1), *s2 = malloc(g.n * sizeof *s2);
    ck_assert_int_eq(pt_model_scores(ms, dn, s1), PT_OK);
    ck_assert_int_eq(pt_model_scores(back, sp, s2), PT_OK);
    ck_assert_mem_eq(s1, s2, g.n * sizeof *s1);
    free(s1);
    free(s2);
    unlink(path);
    pt_model_free(back);
    pt_train_report_clear(&rs);
    pt_train_report_clear(&rd);
    pt_model_free(ms);
    pt_model_free(md);

    /* refusals */
    pt_expand_params p;
    pt_expand_params_init(&p);
    p.hash_bits = 32;
    pt_dataset *x;
    ck_assert_int_eq(pt_expand(sp, &p, &x), PT_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(pt_last_error(), "hash bits must be in 0..31"));
    p.hash_bits = 8;
    p.kind = PT_EXPAND_RFF;
    ck_assert_int_eq(pt_expand(sp, &p, &x), PT_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(pt_last_error(), "polynomial expansion only"));
    pt_dataset_free(sp);
    pt_dataset_free(dn);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("expand");
    TCase *tc = tcase_create("expand");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_dimension);
    tcase_add_test(tc, test_layout_by_hand);
    tcase_add_test(tc, test_poly_kernel_identity);
    tcase_add_test(tc, test_online_on_expansion_equals_kernel_perceptron);
    tcase_add_test(tc, test_streamed_equals_materialised);
    tcase_add_test(tc, test_rff_row_block_agree);
    tcase_add_test(tc, test_model_save_load);
    tcase_add_test(tc, test_refusals);
    tcase_add_test(tc, test_cli);
    tcase_add_test(tc, test_rff_approximates_rbf);
    tcase_add_test(tc, test_rff_seeded);
    tcase_add_test(tc, test_cos_accuracy);
    tcase_add_test(tc, test_sparse_input);
    tcase_add_test(tc, test_hash_bits);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
