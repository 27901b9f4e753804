/* The batch subgradient path: the subgradient and the steps against a double-precision
 * reference, the n = 1 identity with the online path, convergence on separable data, Pegasos
 * against a dual coordinate-descent SVM, gemv against fused, thread and seed reproducibility,
 * compact rows against their float32 copy. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "paths/paths.h"
#include "testutil.h"
#include "paths/train_batch.h"

static pt_model *train(const pt_dataset *ds, const pt_train_params *p, pt_train_report *r)
{
    pt_model *m = NULL;
    pt_status s = pt_train(ds, p, &m, r);
    ck_assert_msg(s == PT_OK, "pt_train: %s", pt_last_error());
    return m;
}

static pt_dataset *gen(pt_gen_kind kind, size_t n, size_t d, uint64_t seed)
{
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.kind = kind;
    g.n = n;
    g.d = d;
    g.seed = seed;
    pt_dataset *ds = NULL;
    ck_assert_int_eq(pt_generate(&g, &ds), PT_OK);
    return ds;
}

/* Text-like sparse rows (PT_GEN_SPARSE) and their dense copy. */
static pt_dataset *gen_sparse(size_t n, size_t d, size_t nnz, uint64_t seed, pt_dataset **dense)
{
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.kind = PT_GEN_SPARSE;
    g.n = n;
    g.d = d;
    g.nnz = nnz;
    g.margin = 0.001;
    g.noise = 0.05;
    g.seed = seed;
    pt_dataset *ds = NULL;
    ck_assert_int_eq(pt_generate(&g, &ds), PT_OK);
    ck_assert_int_eq(pt_dataset_layout(ds), PT_LAYOUT_SPARSE);
    ck_assert_int_eq(pt_dataset_convert(ds, PT_LAYOUT_DENSE, 0, dense), PT_OK);
    return ds;
}

static void batch_params(pt_train_params *p)
{
    pt_train_params_init(p);
    p->path = PT_PATH_BATCH;
}

/* ------------------------------------------------------------ double-precision reference */

typedef struct ref_eval {
    size_t mistakes;
    double objective;
} ref_eval;

static double ref_margin(const pt_dataset *ds, size_t i, const double *w, double b, int bias)
{
    const float *x = ds->X + i * ds->stride;
    double m = bias ? b : 0.0;
    for (size_t j = 0; j < ds->d; j++) m += w[j] * (double)x[j];
    return m;
}

/* loss and subgradient in m, with the conventions of train_batch.c's header */
static double ref_loss(pt_loss loss, double m, double y, double *g)
{
    double ym = y * m;
    switch (loss) {
    case PT_LOSS_HINGE: *g = ym < 1.0 ? -y : 0.0; return ym < 1.0 ? 1.0 - ym : 0.0;
    case PT_LOSS_SQUARED: *g = m - y; return 0.5 * (m - y) * (m - y);
    default: *g = ym <= 0.0 ? -y : 0.0; return ym <= 0.0 ? -ym : 0.0;
    }
}

/* F(w, b), the subgradient (gw = X^T g / n + lambda w, gb = mean g) and the mistakes. */
static ref_eval ref_subgrad(const pt_dataset *ds, const pt_train_params *p, const double *w,
                            double b, double *gw, double *gb)
{
    const size_t n = ds->n, d = ds->d;
    ref_eval e = {0, 0.0};
    double loss = 0.0, gs = 0.0, w2 = 0.0;
    if (gw) memset(gw, 0, d * sizeof *gw);
    for (size_t i = 0; i < n; i++) {
        double y = ds->y[i], m = ref_margin(ds, i, w, b, p->bias), g;
        loss += ref_loss(p->batch.loss, m, y, &g);
        e.mistakes += y * m <= 0.0;
        gs += g;
        if (gw)
            for (size_t j = 0; j < d; j++) gw[j] += g * (double)ds->X[i * ds->stride + j];
    }
    for (size_t j = 0; j < d; j++) {
        if (gw) gw[j] = gw[j] / (double)n + p->batch.lambda * w[j];
        w2 += w[j] * w[j];
    }
    if (gb) *gb = p->bias ? gs / (double)n : 0.0;
    e.objective = loss / (double)n + 0.5 * p->batch.lambda * w2;
    return e;
}

static int ref_projections; /* Pegasos projections ref_train made (so a test knows it hit one) */

/* The full-batch algorithm in double, from w = 0, b = 0. Returns the epochs run. */
static int ref_train(const pt_dataset *ds, const pt_train_params *p, double *w, double *b,
                     ref_eval *per_epoch)
{
    const size_t d = ds->d;
    double *gw = malloc(d * sizeof *gw), *avg = calloc(d, sizeof *avg), gb, avg_b = 0.0, t = 0.0;
    memset(w, 0, d * sizeof *w);
    *b = 0.0;
    int e;
    for (e = 1; e <= p->epochs; e++) {
        ref_eval ev = ref_subgrad(ds, p, w, *b, gw, &gb);
        if (per_epoch) per_epoch[e - 1] = ev;
        if (p->batch.loss == PT_LOSS_PERCEPTRON && ev.mistakes == 0) break;
        t += 1.0;
        double eta = p->batch.schedule == PT_SCHEDULE_INVSQRT   ? p->eta / sqrt(t)
                     : p->batch.schedule == PT_SCHEDULE_PEGASOS ? 1.0 / (p->batch.lambda * t)
                                                          : p->eta;
        double w2 = 0.0;
        for (size_t j = 0; j < d; j++) {
            w[j] -= eta * gw[j];
            w2 += w[j] * w[j];
        }
        *b -= eta * gb;
        if (p->batch.schedule == PT_SCHEDULE_PEGASOS && w2 * p->batch.lambda > 1.0) {
            for (size_t j = 0; j < d; j++) w[j] /= sqrt(p->batch.lambda * w2);
            ref_projections++;
        }
        for (size_t j = 0; j < d; j++) avg[j] += (w[j] - avg[j]) / t;
        avg_b += (*b - avg_b) / t;
    }
    if (p->batch.average_iterates && t > 0.0) {
        memcpy(w, avg, d * sizeof *w);
        *b = avg_b;
    }
    free(gw);
    free(avg);
    return e > p->epochs ? p->epochs : e;
}

/* A small random dataset with inputs in [-1, 1] and labels from a random hyperplane, 15%
 * flipped; d is chosen off the padding so the stride has zeros past d. */
static pt_dataset *random_data(size_t n, size_t d, uint64_t seed)
{
    pt_rng r;
    pt_rng_seed(&r, seed);
    float *x = malloc(n * d * sizeof *x);
    double *y = malloc(n * sizeof *y), *u = malloc(d * sizeof *u);
    for (size_t j = 0; j < d; j++) u[j] = pt_rng_normal(&r);
    for (size_t i = 0; i < n; i++) {
        double s = 0.2;
        for (size_t j = 0; j < d; j++) {
            x[i * d + j] = (float)(2 * pt_rng_uniform(&r) - 1);
            s += u[j] * x[i * d + j];
        }
        y[i] = (s >= 0) == (pt_rng_uniform(&r) >= 0.15) ? 1.0 : -1.0;
    }
    pt_dataset *ds = tu_dataset(n, d, x, y);
    free(x);
    free(y);
    free(u);
    return ds;
}

static double max_abs(const double *a, size_t n)
{
    double m = 0.0;
    for (size_t j = 0; j < n; j++) m = fmax(m, fabs(a[j]));
    return m;
}

/* ------------------------------------------------------------------------------- tests */

static const pt_loss losses[] = {PT_LOSS_PERCEPTRON, PT_LOSS_HINGE, PT_LOSS_SQUARED};

/* The subgradient at a given (w, b), by both implementations, equals the double computation,
 * for each loss, with and without lambda and bias. w is random, so every loss has rows on
 * both sides of its kink; no margin lies within 1e-3 of a kink, so float and double agree on
 * which rows count. */
START_TEST(test_subgradient_matches_double)
{
    const size_t n = 97, d = 19;
    pt_dataset *ds = random_data(n, d, 11);
    const pt_kernels *k;
    ck_assert_int_eq(pt_kernels_get(PT_ISA_AUTO, &k), PT_OK);
    const size_t len = ds->stride;
    float *w = pt_calloc(len * sizeof *w, "w"), *gw = pt_calloc(len * sizeof *gw, "gw");
    double wd[19], ref[19], rb;
    pt_rng r;
    pt_rng_seed(&r, 5);
    for (size_t j = 0; j < d; j++) wd[j] = w[j] = (float)(0.6 * pt_rng_normal(&r));
    const float b = 0.125f;
    for (int li = 0; li < 3; li++)
        for (int lam = 0; lam < 2; lam++)
            for (int bias = 0; bias < 2; bias++)
                for (int impl = PT_BATCH_GEMV; impl <= PT_BATCH_FUSED; impl++) {
                    pt_train_params p;
                    batch_params(&p);
                    p.batch.loss = losses[li];
                    p.batch.lambda = lam ? 0.3f : 0.0f;
                    p.bias = bias;
                    size_t active = 0;
                    for (size_t i = 0; i < n; i++) {
                        double ym = ds->y[i] * ref_margin(ds, i, wd, b, bias), g;
                        ck_assert_msg(fabs(ym) > 1e-3 && fabs(ym - 1.0) > 1e-3, "tie at row %zu",
                                      i);
                        ref_loss(p.batch.loss, ym * ds->y[i], ds->y[i], &g);
                        active += g != 0.0;
                    }
                    ck_assert_msg((active > 5 && active < n - 5) || p.batch.loss == PT_LOSS_SQUARED,
                                  "loss %d: %zu of %zu rows active", li, active, n);
                    ref_eval re = ref_subgrad(ds, &p, wd, b, ref, &rb);
                    float gb = -1.0f;
                    pt_batch_eval ev;
                    ck_assert_int_eq(
                        pt_batch_subgradient(ds, &p, k, (pt_batch_impl)impl, w, b, gw, &gb, &ev),
                        PT_OK);
                    double scale = fmax(max_abs(ref, d), 1.0);
                    for (size_t j = 0; j < d; j++)
                        ck_assert_msg(fabs(gw[j] - ref[j]) <= 1e-5 * scale,
                                      "loss %d lambda %d bias %d impl %d: g[%zu] = %.8g, want %.8g",
                                      li, lam, bias, impl, j, gw[j], ref[j]);
                    for (size_t j = d; j < len; j++) ck_assert_float_eq(gw[j], 0.0f);
                    ck_assert_msg(fabs(gb - rb) <= 1e-6, "gb %.8g want %.8g", gb, rb);
                    ck_assert_uint_eq(ev.mistakes, re.mistakes);
                    ck_assert_uint_eq(ev.active, active);
                    /* the pass's loss against the reference objective less lambda/2 |w|^2 */
                    double w2 = 0.0;
                    for (size_t j = 0; j < d; j++) w2 += wd[j] * wd[j];
                    double want = re.objective - 0.5 * p.batch.lambda * w2, got = ev.loss / (double)n;
                    ck_assert_msg(fabs(got - want) <= 1e-5 * fmax(1.0, want), "loss %.9g want %.9g",
                                  got, want);
                }
    pt_free(w);
    pt_free(gw);
    pt_dataset_free(ds);
}
END_TEST

/* A few full-batch steps through pt_train equal the double-precision algorithm: the update,
 * the schedules (constant, 1/sqrt(t), Pegasos with its projection), averaging, the bias, and
 * the objective and mistakes reported per epoch. */
START_TEST(test_steps_match_double)
{
    const size_t n = 83, d = 13;
    pt_dataset *ds = random_data(n, d, 23);
    struct {
        pt_loss loss;
        pt_schedule sched;
        float eta, lambda;
        int bias, avg;
    } cases[] = {
        {PT_LOSS_PERCEPTRON, PT_SCHEDULE_CONSTANT, 0.5f, 0.0f, 1, 0},
        {PT_LOSS_PERCEPTRON, PT_SCHEDULE_CONSTANT, 0.5f, 0.1f, 0, 0},
        {PT_LOSS_HINGE, PT_SCHEDULE_INVSQRT, 0.7f, 0.05f, 1, 0},
        {PT_LOSS_HINGE, PT_SCHEDULE_PEGASOS, 1.0f, 0.5f, 0, 0},
        {PT_LOSS_HINGE, PT_SCHEDULE_PEGASOS, 1.0f, 2.0f, 1, 1},
        {PT_LOSS_HINGE, PT_SCHEDULE_PEGASOS, 1.0f, 0.01f, 1, 0}, /* projects: radius 10 */
        {PT_LOSS_SQUARED, PT_SCHEDULE_CONSTANT, 0.3f, 0.01f, 1, 1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (int impl = PT_BATCH_GEMV; impl <= PT_BATCH_FUSED; impl++) {
            pt_train_params p;
            batch_params(&p);
            p.batch.loss = cases[c].loss;
            p.batch.schedule = cases[c].sched;
            p.eta = cases[c].eta;
            p.batch.lambda = cases[c].lambda;
            p.bias = cases[c].bias;
            p.batch.average_iterates = cases[c].avg;
            p.batch.impl = (pt_batch_impl)impl;
            p.epochs = 4;
            double wr[13], br;
            ref_eval re[4];
            int er = ref_train(ds, &p, wr, &br, re);
            pt_train_report r;
            pt_model *m = train(ds, &p, &r);
            float b;
            const float *w = pt_model_weights(m, &b);
            ck_assert_int_eq(r.epochs_run, er);
            double scale = fmax(max_abs(wr, d), 1.0);
            for (size_t j = 0; j < d; j++)
                ck_assert_msg(fabs(w[j] - wr[j]) <= 1e-5 * scale,
                              "case %zu impl %d: w[%zu] %.8g want %.8g", c, impl, j, w[j], wr[j]);
            ck_assert_msg(fabs(b - br) <= 1e-5 * fmax(fabs(br), 1.0), "case %zu: b %.8g want %.8g",
                          c, b, br);
            ck_assert_ptr_nonnull(r.objective_per_epoch);
            for (int e = 0; e < er; e++) {
                ck_assert_uint_eq(r.mistakes_per_epoch[e], re[e].mistakes);
                ck_assert_msg(fabs(r.objective_per_epoch[e] - re[e].objective) <=
                                  1e-5 * fmax(1.0, re[e].objective),
                              "case %zu epoch %d: objective %.9g want %.9g", c, e + 1,
                              r.objective_per_epoch[e], re[e].objective);
            }
            pt_train_report_clear(&r);
            pt_model_free(m);
        }
    ck_assert_int_gt(ref_projections, 0);
    pt_dataset_free(ds);
}
END_TEST

/* With n = 1, eta = 1, no lambda and the perceptron loss, one batch step is one online
 * update: same w and b, for a positive and a negative sample, with and without bias. */
START_TEST(test_single_sample_is_online_update)
{
    const float x[] = {0.5f, -1.25f, 2.0f, 0.1f, -0.3f, 3.0f, 0.7f, -2.5f, 1.5f, 0.2f,
                       -0.9f, 0.4f, 1.1f, -0.6f};
    const double y[] = {1, -1};
    pt_dataset *ds = tu_dataset(2, 7, x, y);
    for (size_t i = 0; i < 2; i++)
        for (int bias = 0; bias < 2; bias++) {
            pt_dataset *one;
            ck_assert_int_eq(pt_dataset_slice(ds, i, 1, &one), PT_OK);
            pt_train_params p;
            pt_train_params_init(&p);
            p.epochs = 1;
            p.bias = bias;
            pt_model *mo = train(one, &p, NULL);
            p.path = PT_PATH_BATCH;
            for (int impl = PT_BATCH_GEMV; impl <= PT_BATCH_FUSED; impl++) {
                p.batch.impl = (pt_batch_impl)impl;
                pt_train_report r;
                pt_model *mb = train(one, &p, &r);
                float bo, bb;
                const float *wo = pt_model_weights(mo, &bo), *wb = pt_model_weights(mb, &bb);
                for (size_t j = 0; j < 7; j++) {
                    ck_assert_float_eq(wb[j], wo[j]);
                    ck_assert_float_eq(wb[j], (float)y[i] * x[i * 7 + j]);
                }
                ck_assert_float_eq(bb, bo);
                ck_assert_float_eq(bb, bias ? (float)y[i] : 0.0f);
                ck_assert_uint_eq(r.mistakes_per_epoch[0], 1);
                ck_assert_uint_eq(r.updates, 1);
                pt_train_report_clear(&r);
                pt_model_free(mb);
            }
            pt_model_free(mo);
            pt_dataset_free(one);
        }
    pt_dataset_free(ds);
}
END_TEST

/* Separable data: the perceptron loss reaches an epoch with no mistake, full batch and
 * mini-batch, with and without lambda, and the model then classifies every training row
 * correctly. Full batch keeps the w that made no mistake: no step in the last epoch. */
START_TEST(test_separable_converges)
{
    pt_dataset *ds = gen(PT_GEN_SEPARABLE, 600, 10, 3);
    const size_t bs[] = {0, 50};
    for (int ib = 0; ib < 2; ib++)
        for (int impl = PT_BATCH_GEMV; impl <= PT_BATCH_FUSED; impl++)
        for (int lam = 0; lam < 2; lam++) {
            pt_train_params p;
            batch_params(&p);
            p.batch.lambda = lam ? 1e-4f : 0.0f;
            p.batch.size = bs[ib];
            p.batch.impl = (pt_batch_impl)impl;
            p.epochs = 5000;
            pt_train_report r;
            pt_model *m = train(ds, &p, &r);
            ck_assert_msg(r.converged == 1, "batch size %zu: %zu mistakes after %d epochs", bs[ib],
                          r.mistakes_per_epoch[r.epochs_run - 1], r.epochs_run);
            ck_assert_uint_eq(r.mistakes_per_epoch[r.epochs_run - 1], 0);
            ck_assert_int_lt(r.epochs_run, p.epochs);
            if (bs[ib] == 0) ck_assert_uint_eq(r.updates, (size_t)r.epochs_run - 1);
            pt_eval ev;
            ck_assert_int_eq(pt_model_evaluate(m, ds, &ev), PT_OK);
            ck_assert_uint_eq(ev.correct, ev.n);
            pt_train_report_clear(&r);
            pt_model_free(m);
        }
    pt_dataset_free(ds);
}
END_TEST

/* The minimum of lambda/2 |w|^2 + (1/n) sum hinge (no bias), by dual coordinate descent
 * (Hsieh et al. 2008) in double: 0 <= alpha_i <= C = 1/(lambda n), w = sum alpha_i y_i x_i;
 * run until the duality gap is below 1e-10. */
static double svm_minimum(const pt_dataset *ds, double lambda, double *w)
{
    const size_t n = ds->n, d = ds->d;
    const double C = 1.0 / (lambda * (double)n);
    double *alpha = calloc(n, sizeof *alpha), *q = malloc(n * sizeof *q);
    memset(w, 0, d * sizeof *w);
    for (size_t i = 0; i < n; i++) {
        q[i] = 0.0;
        const float *x = ds->X + i * ds->stride;
        for (size_t j = 0; j < d; j++) q[i] += (double)x[j] * x[j];
    }
    double primal = INFINITY;
    for (int it = 0; it < 100000; it++) {
        for (size_t i = 0; i < n; i++) {
            const float *x = ds->X + i * ds->stride;
            double y = ds->y[i], g = -1.0, a0 = alpha[i];
            for (size_t j = 0; j < d; j++) g += y * w[j] * x[j];
            double a = fmin(fmax(a0 - g / q[i], 0.0), C);
            if (a != a0)
                for (size_t j = 0; j < d; j++) w[j] += (a - a0) * y * x[j];
            alpha[i] = a;
        }
        /* SVM form: P = 1/2|w|^2 + C sum hinge, D = sum alpha - 1/2|w|^2; objective = lambda P */
        double w2 = 0.0, hinge = 0.0, sa = 0.0;
        for (size_t j = 0; j < d; j++) w2 += w[j] * w[j];
        for (size_t i = 0; i < n; i++) {
            double m = ds->y[i] * ref_margin(ds, i, w, 0.0, 0);
            hinge += fmax(0.0, 1.0 - m);
            sa += alpha[i];
        }
        primal = 0.5 * w2 + C * hinge;
        double dual = sa - 0.5 * w2;
        if (primal - dual <= 1e-10 * fabs(primal)) break;
    }
    free(alpha);
    free(q);
    return lambda * primal;
}

/* Noisy data: Pegasos (full batch, no bias, as in the paper) ends within 1% of the hinge
 * objective's minimum found by the dual solver; so does mini-batch Pegasos with averaging. */
START_TEST(test_pegasos_reaches_svm_minimum)
{
    pt_dataset *ds = gen(PT_GEN_NOISY, 400, 5, 7);
    const double lambda = 0.05;
    double wsvm[5];
    const double fmin_ = svm_minimum(ds, lambda, wsvm);
    ck_assert(fmin_ > 0.0);
    struct {
        size_t bs;
        int avg, shuffle, epochs;
    } cases[] = {{0, 0, 0, 2000}, {0, 1, 0, 2000}, {40, 1, 1, 500}};
    for (size_t c = 0; c < 3; c++)
        for (int impl = PT_BATCH_GEMV; impl <= PT_BATCH_FUSED; impl++) {
            pt_train_params p;
            batch_params(&p);
            p.batch.loss = PT_LOSS_HINGE;
            p.batch.schedule = PT_SCHEDULE_PEGASOS;
            p.batch.lambda = (float)lambda;
            p.bias = 0;
            p.batch.size = cases[c].bs;
            p.batch.average_iterates = cases[c].avg;
            p.shuffle = cases[c].shuffle;
            p.epochs = cases[c].epochs;
            p.batch.impl = (pt_batch_impl)impl;
            pt_model *m = train(ds, &p, NULL);
            const float *w = pt_model_weights(m, NULL);
            double wd[5];
            for (size_t j = 0; j < 5; j++) wd[j] = w[j];
            p.bias = 0;
            double f = ref_subgrad(ds, &p, wd, 0.0, NULL, NULL).objective;
            ck_assert_msg(f >= fmin_ * (1 - 1e-9), "below the minimum: %.9g < %.9g", f, fmin_);
            ck_assert_msg(f <= 1.01 * fmin_,
                          "case %zu impl %d: objective %.6g, minimum %.6g (+%.2f%%)", c, impl, f,
                          fmin_, 100.0 * (f / fmin_ - 1.0));
            pt_model_free(m);
        }
    pt_dataset_free(ds);
}
END_TEST

/* gemv and fused give the same iterates up to float rounding over 20 steps: |w_gemv -
 * w_fused| <= 1e-4 max|w|, b and every epoch's objective within 1e-5 relative. */
START_TEST(test_gemv_fused_agree)
{
    pt_dataset *ds = gen(PT_GEN_NOISY, 5000, 40, 9);
    const size_t bs[] = {0, 700};
    for (int li = 0; li < 3; li++)
        for (int ib = 0; ib < 2; ib++) {
            pt_train_params p;
            batch_params(&p);
            p.batch.loss = losses[li];
            p.batch.lambda = 0.01f;
            p.eta = li == PT_LOSS_SQUARED ? 0.05f : 0.5f;
            p.batch.schedule = PT_SCHEDULE_INVSQRT;
            p.epochs = ib ? 3 : 20; /* 20 steps either way: 3 epochs of 8 blocks = 24 */
            p.batch.size = bs[ib];
            p.shuffle = 1;
            p.batch.impl = PT_BATCH_GEMV;
            pt_train_report rg, rf;
            pt_model *mg = train(ds, &p, &rg);
            p.batch.impl = PT_BATCH_FUSED;
            pt_model *mf = train(ds, &p, &rf);
            float bg, bf;
            const float *wg = pt_model_weights(mg, &bg), *wf = pt_model_weights(mf, &bf);
            double wmax = 0.0, diff = 0.0;
            for (size_t j = 0; j < ds->d; j++) {
                wmax = fmax(wmax, fabs(wg[j]));
                diff = fmax(diff, fabs(wg[j] - wf[j]));
            }
            ck_assert_msg(diff <= 1e-4 * wmax, "loss %d bs %zu: max |dw| %.3g, max |w| %.3g", li,
                          bs[ib], diff, wmax);
            ck_assert_msg(fabs(bg - bf) <= 1e-5 * fmax(1.0, fabs(bg)), "b %.9g vs %.9g", bg, bf);
            ck_assert_int_eq(rg.epochs_run, rf.epochs_run);
            ck_assert_uint_eq(rg.updates, rf.updates);
            for (int e = 0; e < rg.epochs_run; e++)
                ck_assert_msg(fabs(rg.objective_per_epoch[e] - rf.objective_per_epoch[e]) <=
                                  1e-5 * rg.objective_per_epoch[e],
                              "epoch %d: %.9g vs %.9g", e + 1, rg.objective_per_epoch[e],
                              rf.objective_per_epoch[e]);
            pt_train_report_clear(&rg);
            pt_train_report_clear(&rf);
            pt_model_free(mg);
            pt_model_free(mf);
        }
    pt_dataset_free(ds);
}
END_TEST

/* Both implementations are bit-identical for 1, 2 and 3 threads: the data is cut into chunks
 * (20,000 rows of 192 bytes: about 15; 1,000 features: 64) whose buffers are summed in chunk
 * order, and gemv runs each chunk's sgemv on one thread. */
START_TEST(test_threads_bit_identical)
{
    const struct { size_t n, d; } shapes[] = {{20000, 40}, {3000, 1000}};
    const size_t bs[] = {0, 1500};
    for (size_t sh = 0; sh < 2; sh++) {
        pt_dataset *ds = gen(PT_GEN_NOISY, shapes[sh].n, shapes[sh].d, 4);
        for (int impl = PT_BATCH_GEMV; impl <= PT_BATCH_FUSED; impl++)
            for (int li = 0; li < 3; li++)
                for (int ib = 0; ib < 2; ib++) {
                    pt_train_params p;
                    batch_params(&p);
                    p.batch.loss = losses[li];
                    p.batch.lambda = 0.001f;
                    p.eta = 0.1f;
                    p.epochs = 6;
                    p.batch.size = bs[ib];
                    p.batch.average_iterates = 1;
                    p.batch.impl = (pt_batch_impl)impl;
                    pt_model *m[3];
                    pt_train_report r[3];
                    for (int t = 0; t < 3; t++) {
                        p.threads = t + 1;
                        m[t] = train(ds, &p, &r[t]);
                        ck_assert_int_eq(r[t].threads, t + 1);
                    }
                    float b0, b;
                    const float *w0 = pt_model_weights(m[0], &b0);
                    for (int t = 1; t < 3; t++) {
                        const float *w = pt_model_weights(m[t], &b);
                        ck_assert_msg(memcmp(w, w0, ds->stride * sizeof *w) == 0,
                                      "%s d %zu loss %d bs %zu: %d threads differ from 1",
                                      pt_batch_impl_name(p.batch.impl), ds->d, li, bs[ib], t + 1);
                        ck_assert(memcmp(&b, &b0, sizeof b) == 0);
                        ck_assert_int_eq(r[t].epochs_run, r[0].epochs_run);
                        ck_assert(memcmp(r[t].objective_per_epoch, r[0].objective_per_epoch,
                                         (size_t)r[0].epochs_run * sizeof(double)) == 0);
                        ck_assert(memcmp(r[t].mistakes_per_epoch, r[0].mistakes_per_epoch,
                                         (size_t)r[0].epochs_run * sizeof(size_t)) == 0);
                    }
                    for (int t = 0; t < 3; t++) {
                        pt_train_report_clear(&r[t]);
                        pt_model_free(m[t]);
                    }
                }
        pt_dataset_free(ds);
    }
}
END_TEST

/* Rows wider than the fused pass takes (d > 65,536 floats of 64-byte rows) go to gemv under
 * AUTO; its model is the same at 1, 2 and 3 threads, bit for bit (few rows keep it fast). */
START_TEST(test_wide_auto_gemv_threads_bit_identical)
{
    pt_dataset *ds = gen(PT_GEN_NOISY, 96, 70000, 8);
    const pt_kernels *k;
    ck_assert_int_eq(pt_kernels_get(PT_ISA_AUTO, &k), PT_OK);
    ck_assert_int_eq(pt_batch_impl_resolve(PT_BATCH_AUTO, k, ds->stride), PT_BATCH_GEMV);
    pt_train_params p;
    batch_params(&p);
    p.batch.loss = PT_LOSS_HINGE;
    p.batch.lambda = 1e-3f;
    p.eta = 0.5f;
    p.epochs = 4;
    pt_model *m[3];
    for (int t = 0; t < 3; t++) {
        p.threads = t + 1;
        m[t] = train(ds, &p, NULL);
    }
    for (int t = 1; t < 3; t++) {
        ck_assert_msg(memcmp(m[t]->w, m[0]->w, ds->stride * sizeof(float)) == 0,
                      "%d threads differ from 1", t + 1);
        ck_assert(memcmp(&m[t]->b, &m[0]->b, sizeof(float)) == 0);
    }
    for (int t = 0; t < 3; t++) pt_model_free(m[t]);
    pt_dataset_free(ds);
}
END_TEST

/* Mini-batches with shuffle: the same seed gives the same model bit for bit; another seed,
 * or no shuffle, gives another. */
START_TEST(test_minibatch_shuffle_reproducible)
{
    pt_dataset *ds = gen(PT_GEN_NOISY, 1000, 8, 5);
    for (int impl = PT_BATCH_GEMV; impl <= PT_BATCH_FUSED; impl++) {
        pt_train_params p;
        batch_params(&p);
        p.batch.loss = PT_LOSS_HINGE;
        p.batch.lambda = 0.01f;
        p.eta = 0.2f;
        p.epochs = 5;
        p.batch.size = 64;
        p.shuffle = 1;
        p.seed = 42;
        p.batch.impl = (pt_batch_impl)impl;
        pt_model *a = train(ds, &p, NULL), *b = train(ds, &p, NULL);
        p.seed = 43;
        pt_model *c = train(ds, &p, NULL);
        p.shuffle = 0;
        pt_model *e = train(ds, &p, NULL);
        float ba, bb, bc, be;
        const float *wa = pt_model_weights(a, &ba), *wb = pt_model_weights(b, &bb),
                    *wc = pt_model_weights(c, &bc), *we = pt_model_weights(e, &be);
        size_t bytes = ds->stride * sizeof(float);
        ck_assert(memcmp(wa, wb, bytes) == 0 && ba == bb);
        ck_assert_msg(memcmp(wa, wc, bytes) != 0, "seeds 42 and 43 gave the same model");
        ck_assert_msg(memcmp(wa, we, bytes) != 0, "shuffle had no effect");
        pt_model_free(a);
        pt_model_free(b);
        pt_model_free(c);
        pt_model_free(e);
    }
    pt_dataset_free(ds);
}
END_TEST

/* tol stops when the objective settles; a divergent run fails with PT_ERR_NUMERIC. */
START_TEST(test_tol_and_divergence)
{
    pt_dataset *ds = gen(PT_GEN_NOISY, 500, 6, 2);
    pt_train_params p;
    batch_params(&p);
    p.batch.loss = PT_LOSS_SQUARED;
    p.eta = 0.5f;
    p.epochs = 10000;
    p.batch.tol = 1e-6;
    pt_train_report r;
    pt_model *m = train(ds, &p, &r);
    ck_assert_int_lt(r.epochs_run, p.epochs);
    ck_assert_int_eq(r.converged, 0);
    int e = r.epochs_run - 1;
    ck_assert(fabs(r.objective_per_epoch[e] - r.objective_per_epoch[e - 1]) <=
              1e-6 * r.objective_per_epoch[e - 1]);
    ck_assert(fabs(r.objective_per_epoch[e - 1] - r.objective_per_epoch[e - 2]) >
              1e-6 * r.objective_per_epoch[e - 2]);
    pt_train_report_clear(&r);
    pt_model_free(m);

    p.eta = 1e6f;
    p.batch.tol = 0.0;
    p.epochs = 1000;
    pt_model *bad = NULL;
    ck_assert_int_eq(pt_train(ds, &p, &bad, NULL), PT_ERR_NUMERIC);
    ck_assert_ptr_null(bad);
    pt_dataset_free(ds);
}
END_TEST

/* AUTO: fused with a SIMD table, gemv with the scalar one (its dot is one serial chain) and
 * for rows too wide for L2; an explicit choice is kept. */
START_TEST(test_auto_choice)
{
    const pt_kernels *scalar, *best;
    ck_assert_int_eq(pt_kernels_get(PT_ISA_SCALAR, &scalar), PT_OK);
    ck_assert_int_eq(pt_kernels_get(PT_ISA_AUTO, &best), PT_OK);
    ck_assert_int_eq(pt_batch_impl_resolve(PT_BATCH_AUTO, scalar, 256), PT_BATCH_GEMV);
    ck_assert_int_eq(pt_batch_impl_resolve(PT_BATCH_FUSED, scalar, 256), PT_BATCH_FUSED);
    ck_assert_int_eq(pt_batch_impl_resolve(PT_BATCH_GEMV, best, 256), PT_BATCH_GEMV);
    if (best->isa != PT_ISA_SCALAR) {
        ck_assert_int_eq(pt_batch_impl_resolve(PT_BATCH_AUTO, best, 256), PT_BATCH_FUSED);
        ck_assert_int_eq(pt_batch_impl_resolve(PT_BATCH_AUTO, best, (size_t)1 << 20),
                         PT_BATCH_GEMV);
    }
}
END_TEST

/* The batch path has no averaged or voted variant: asking for one is refused (it would train
 * the plain iterate under another name); --average-iterates is its averaging. */
START_TEST(test_variants_refused)
{
    pt_dataset *ds = gen(PT_GEN_SEPARABLE, 100, 4, 1);
    for (int v = PT_VARIANT_AVERAGED; v <= PT_VARIANT_VOTED; v++) {
        pt_train_params p;
        batch_params(&p);
        p.variant = (pt_variant)v;
        pt_model *m = NULL;
        ck_assert_int_eq(pt_train(ds, &p, &m, NULL), PT_ERR_INVALID);
        ck_assert_ptr_null(m);
        ck_assert_ptr_nonnull(strstr(pt_last_error(), v == PT_VARIANT_VOTED ? "PT_VARIANT_VOTED"
                                                                             : "PT_VARIANT_AVERAGED"));
        ck_assert_ptr_nonnull(strstr(pt_last_error(), "pt_train_params.average_iterates"));
    }
    pt_dataset_free(ds);
}
END_TEST

/* Warm start on the batch path: from the model of epoch k, E - k more epochs (constant step,
 * in order) give the E-epoch run's weights bit for bit, full batch and mini-batches, both
 * implementations, perceptron and regularised hinge loss; init_random equals a start from a
 * model holding pt_random_start's weights. */
START_TEST(test_init_continues_run)
{
    pt_dataset *ds = gen(PT_GEN_NOISY, 2000, 10, 6);
    const int E = 7, k = 3;
    for (int impl = PT_BATCH_GEMV; impl <= PT_BATCH_FUSED; impl++)
        for (int li = 0; li < 2; li++)
            for (size_t bs = 0; bs <= 300; bs += 300) {
                pt_train_params p;
                batch_params(&p);
                p.batch.impl = (pt_batch_impl)impl;
                p.batch.loss = losses[li];
                p.batch.lambda = li ? 0.01f : 0.0f;
                p.eta = 0.5f;
                p.batch.size = bs;
                p.epochs = E;
                pt_train_report r;
                pt_model *full = train(ds, &p, &r);
                ck_assert_int_eq(r.epochs_run, E);
                pt_train_report_clear(&r);
                p.epochs = k;
                pt_model *part = train(ds, &p, NULL);
                ck_assert(part->b != 0.0f);
                p.init = part;
                p.epochs = E - k;
                pt_model *cont = train(ds, &p, NULL);
                ck_assert_msg(memcmp(cont->w, full->w, ds->stride * sizeof(float)) == 0,
                              "impl %d loss %d batch %zu: w differs", impl, li, bs);
                ck_assert(memcmp(&cont->b, &full->b, sizeof(float)) == 0);
                pt_model_free(cont);
                pt_model_free(part);
                pt_model_free(full);
            }
    /* the random start */
    pt_train_params p;
    batch_params(&p);
    p.seed = 5;
    p.epochs = 4;
    p.init_random = 1;
    pt_model *a = train(ds, &p, NULL);
    pt_model *hand = pt_model_alloc_linear(10);
    hand->bias = 1;
    hand->class_values[0] = pt_dataset_class_value(ds, 0);
    hand->class_values[1] = pt_dataset_class_value(ds, 1);
    pt_random_start(5, 1, 10, 1, hand->w, ds->stride, &hand->b);
    p.init_random = 0;
    p.init = hand;
    pt_model *b = train(ds, &p, NULL);
    ck_assert(memcmp(a->w, b->w, ds->stride * sizeof(float)) == 0 && a->b == b->b);
    pt_model_free(a);
    pt_model_free(b);
    pt_model_free(hand);
    pt_dataset_free(ds);
}
END_TEST

/* The batch path on sparse rows equals it on their dense copy: the same mistakes and
 * objectives per epoch and weights equal to rounding, for every loss, schedule, full batch and
 * shuffled mini-batches, averaged iterates or not; and one-vs-rest over it. */
/* The subgradient of compact rows (bf16 of the noisy rows; u8 of their absolute values, a
 * divisor per feature) is their float32 copy's, bit for bit, by both implementations at 1, 2
 * and 3 threads: the pass widens the rows where it reads them (20,000 rows of 48 floats: 15
 * chunks). */
START_TEST(test_compact_subgradient_bit_identical)
{
    pt_dataset *ds = gen(PT_GEN_NOISY, 20000, 40, 6);
    const pt_kernels *k;
    ck_assert_int_eq(pt_kernels_get(PT_ISA_AUTO, &k), PT_OK);
    const size_t len = ds->stride;
    float *w = pt_calloc(len * sizeof *w, "w"), *ga = pt_calloc(len * sizeof *ga, "ga"),
          *gb = pt_calloc(len * sizeof *gb, "gb");
    pt_rng r;
    pt_rng_seed(&r, 8);
    for (size_t j = 0; j < ds->d; j++) w[j] = (float)(0.5 * pt_rng_normal(&r));
    for (int t = 0; t < 2; t++) {
        pt_dataset *src = NULL, *c, *wide;
        if (t == 1) { /* u8 holds values >= 0 */
            ck_assert_int_eq(pt_dataset_slice(ds, 0, ds->n, &src), PT_OK);
            for (size_t i = 0; i < src->n * src->stride; i++) src->X[i] = fabsf(src->X[i]);
        }
        ck_assert_int_eq(pt_dataset_to_dtype(src ? src : ds, t ? PT_DTYPE_U8 : PT_DTYPE_BF16, 0,
                                             &c),
                         PT_OK);
        ck_assert_int_eq(pt_dataset_to_dtype(c, PT_DTYPE_F32, 0, &wide), PT_OK);
        for (int li = 0; li < 3; li++)
            for (int impl = PT_BATCH_GEMV; impl <= PT_BATCH_FUSED; impl++)
                for (int threads = 1; threads <= 3; threads++) {
                    pt_train_params p;
                    batch_params(&p);
                    p.batch.loss = losses[li];
                    p.batch.lambda = 0.01f;
                    p.threads = threads;
                    float ba = 0.0f, bb = 1.0f;
                    pt_batch_eval ea, eb;
                    ck_assert_int_eq(pt_batch_subgradient(wide, &p, k, (pt_batch_impl)impl, w,
                                                          0.25f, ga, &ba, &ea),
                                     PT_OK);
                    ck_assert_int_eq(pt_batch_subgradient(c, &p, k, (pt_batch_impl)impl, w,
                                                          0.25f, gb, &bb, &eb),
                                     PT_OK);
                    ck_assert_msg(memcmp(ga, gb, len * sizeof *ga) == 0 &&
                                      memcmp(&ba, &bb, sizeof ba) == 0,
                                  "%s loss %d %s %d threads: the gradient differs",
                                  t ? "u8" : "bf16", li, pt_batch_impl_name(p.batch.impl),
                                  threads);
                    ck_assert(ea.mistakes == eb.mistakes && ea.active == eb.active &&
                              ea.loss == eb.loss && ea.gsum == eb.gsum);
                }
        pt_dataset_free(src);
        pt_dataset_free(c);
        pt_dataset_free(wide);
    }
    pt_free(w);
    pt_free(ga);
    pt_free(gb);
    pt_dataset_free(ds);
}
END_TEST

START_TEST(test_sparse_equals_dense)
{
    pt_dataset *dn, *sp = gen_sparse(3000, 2000, 20, 5, &dn);
    const size_t bs[] = {0, 250};
    const pt_schedule sch[] = {PT_SCHEDULE_CONSTANT, PT_SCHEDULE_INVSQRT, PT_SCHEDULE_PEGASOS};
    for (int li = 0; li < 3; li++)
        for (int ib = 0; ib < 2; ib++)
            for (int si = 0; si < 3; si++) {
                if (losses[li] == PT_LOSS_SQUARED && sch[si] == PT_SCHEDULE_PEGASOS) continue;
                pt_train_params p;
                batch_params(&p);
                p.batch.loss = losses[li];
                p.batch.lambda = sch[si] == PT_SCHEDULE_PEGASOS ? 0.01f : 0.001f;
                p.eta = losses[li] == PT_LOSS_SQUARED ? 0.5f : 2.0f;
                p.batch.schedule = sch[si];
                p.epochs = 8;
                p.batch.size = bs[ib];
                p.shuffle = 1;
                p.batch.average_iterates = si == 1;
                pt_train_report rd, rs;
                pt_model *md = train(dn, &p, &rd), *ms = train(sp, &p, &rs);
                float bd, bsp;
                const float *wd = pt_model_weights(md, &bd), *ws = pt_model_weights(ms, &bsp);
                double wmax = 0.0, diff = 0.0;
                for (size_t j = 0; j < dn->d; j++) {
                    wmax = fmax(wmax, fabs(wd[j]));
                    diff = fmax(diff, fabs(wd[j] - ws[j]));
                }
                ck_assert_msg(wmax > 0.0, "loss %d: no update", li);
                ck_assert_msg(diff <= 1e-4 * wmax, "loss %d bs %zu schedule %d: max |dw| %.3g, "
                              "max |w| %.3g", li, bs[ib], si, diff, wmax);
                ck_assert_msg(fabs(bd - bsp) <= 1e-4 * fmax(1.0, fabs(bd)), "b %.9g vs %.9g", bd,
                              bsp);
                ck_assert_int_eq(rd.epochs_run, rs.epochs_run);
                for (int e = 0; e < rd.epochs_run; e++) {
                    ck_assert_msg(rd.mistakes_per_epoch[e] == rs.mistakes_per_epoch[e],
                                  "loss %d bs %zu schedule %d epoch %d: %zu vs %zu mistakes", li,
                                  bs[ib], si, e + 1, rd.mistakes_per_epoch[e],
                                  rs.mistakes_per_epoch[e]);
                    ck_assert_msg(fabs(rd.objective_per_epoch[e] - rs.objective_per_epoch[e]) <=
                                      1e-5 * fabs(rd.objective_per_epoch[e]),
                                  "epoch %d: objective %.9g vs %.9g", e + 1,
                                  rd.objective_per_epoch[e], rs.objective_per_epoch[e]);
                }
                pt_train_report_clear(&rd);
                pt_train_report_clear(&rs);
                pt_model_free(md);
                pt_model_free(ms);
            }
    pt_dataset_free(sp);
    pt_dataset_free(dn);

    /* one-vs-rest: three classes from blobs, made sparse */
    pt_dataset *blobs = gen(PT_GEN_BLOBS, 900, 30, 3), *bsp = NULL;
    ck_assert_int_eq(pt_dataset_convert(blobs, PT_LAYOUT_SPARSE, 0, &bsp), PT_OK);
    pt_train_params p;
    batch_params(&p);
    p.batch.loss = PT_LOSS_HINGE;
    p.epochs = 5;
    pt_train_report rd, rs;
    pt_model *md = train(blobs, &p, &rd), *ms = train(bsp, &p, &rs);
    ck_assert_uint_eq(pt_model_nclass(md), 3);
    for (size_t c = 0; c < 3; c++) {
        float bd, bs2;
        const float *Wd = pt_model_class_weights(md, c, &bd);
        const float *Ws = pt_model_class_weights(ms, c, &bs2);
        for (size_t j = 0; j < blobs->d; j++)
            ck_assert_msg(fabsf(Wd[j] - Ws[j]) <= 1e-4f * fmaxf(1.0f, fabsf(Wd[j])),
                          "class %zu w[%zu] %.9g vs %.9g", c, j, Wd[j], Ws[j]);
        ck_assert(fabsf(bd - bs2) <= 1e-4f * fmaxf(1.0f, fabsf(bd)));
    }
    ck_assert_int_eq(rd.epochs_run, rs.epochs_run);
    for (int e = 0; e < rd.epochs_run; e++)
        ck_assert_uint_eq(rd.mistakes_per_epoch[e], rs.mistakes_per_epoch[e]);
    pt_train_report_clear(&rd);
    pt_train_report_clear(&rs);
    pt_model_free(md);
    pt_model_free(ms);
    pt_dataset_free(bsp);
    pt_dataset_free(blobs);
}
END_TEST

/* On sparse rows the model is the same at 1, 2 and 3 threads, bit for bit (the chunks are cut
 * by non-zeros, never by threads), whatever batch_impl asks; and the subgradient of the pass
 * is X^T g computed in double. */
START_TEST(test_sparse_threads_bit_identical)
{
    pt_dataset *dn, *sp = gen_sparse(20000, 300, 30, 7, &dn);
    const size_t bs[] = {0, 4000};
    for (int li = 0; li < 3; li++)
        for (int ib = 0; ib < 2; ib++) {
            pt_train_params p;
            batch_params(&p);
            p.batch.loss = losses[li];
            p.batch.lambda = 0.001f;
            p.eta = 1.0f;
            p.epochs = 5;
            p.batch.size = bs[ib];
            p.batch.average_iterates = 1;
            pt_model *m[3];
            pt_train_report r[3];
            for (int t = 0; t < 3; t++) {
                p.threads = t + 1;
                p.batch.impl = (pt_batch_impl)t; /* auto, gemv, fused: one sparse pass */
                m[t] = train(sp, &p, &r[t]);
            }
            float b0, b;
            const float *w0 = pt_model_weights(m[0], &b0);
            for (int t = 1; t < 3; t++) {
                const float *w = pt_model_weights(m[t], &b);
                ck_assert_msg(memcmp(w, w0, sp->stride * sizeof *w) == 0,
                              "loss %d bs %zu: %d threads differ from 1", li, bs[ib], t + 1);
                ck_assert(memcmp(&b, &b0, sizeof b) == 0);
                ck_assert_int_eq(r[t].epochs_run, r[0].epochs_run);
                ck_assert(memcmp(r[t].objective_per_epoch, r[0].objective_per_epoch,
                                 (size_t)r[0].epochs_run * sizeof(double)) == 0);
            }
            for (int t = 0; t < 3; t++) {
                pt_train_report_clear(&r[t]);
                pt_model_free(m[t]);
            }
        }

    /* the subgradient at a random point against double */
    const pt_kernels *k;
    ck_assert_int_eq(pt_kernels_get(PT_ISA_AUTO, &k), PT_OK);
    pt_train_params p;
    batch_params(&p);
    p.batch.loss = PT_LOSS_HINGE;
    p.batch.lambda = 0.0f;
    p.threads = 2;
    const size_t len = sp->stride;
    float *w = calloc(len, sizeof *w), *gw = calloc(len, sizeof *gw);
    double *ref = calloc(len, sizeof *ref);
    for (size_t j = 0; j < sp->d; j++) w[j] = (float)((j * 2654435761u) % 1000) / 500.0f - 1.0f;
    float gb;
    ck_assert_int_eq(pt_batch_subgradient(sp, &p, k, PT_BATCH_AUTO, w, 0.1f, gw, &gb, NULL),
                     PT_OK);
    double gsum = 0.0, scale = 0.0;
    for (size_t i = 0; i < sp->n; i++) {
        double m = 0.1;
        const float *x = dn->X + i * dn->stride;
        for (size_t j = 0; j < sp->d; j++) m += (double)w[j] * x[j];
        double y = sp->y[i], g = y * m < 1.0 ? -y : 0.0;
        gsum += g;
        for (size_t j = 0; j < sp->d; j++) ref[j] += g * x[j], scale += fabs(g * x[j]);
    }
    for (size_t j = 0; j < sp->d; j++)
        ck_assert_msg(fabs(gw[j] - ref[j] / (double)sp->n) <= 1e-6 * scale / (double)sp->n + 1e-7,
                      "gw[%zu] %.9g vs %.9g", j, gw[j], ref[j] / (double)sp->n);
    ck_assert(fabs(gb - gsum / (double)sp->n) <= 1e-6);
    free(w);
    free(gw);
    free(ref);
    pt_dataset_free(sp);
    pt_dataset_free(dn);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("train_batch");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_subgradient_matches_double);
    tcase_add_test(tc, test_steps_match_double);
    tcase_add_test(tc, test_single_sample_is_online_update);
    tcase_add_test(tc, test_separable_converges);
    tcase_add_test(tc, test_pegasos_reaches_svm_minimum);
    tcase_add_test(tc, test_gemv_fused_agree);
    tcase_add_test(tc, test_threads_bit_identical);
    tcase_add_test(tc, test_wide_auto_gemv_threads_bit_identical);
    tcase_add_test(tc, test_minibatch_shuffle_reproducible);
    tcase_add_test(tc, test_tol_and_divergence);
    tcase_add_test(tc, test_auto_choice);
    tcase_add_test(tc, test_variants_refused);
    tcase_add_test(tc, test_init_continues_run);
    tcase_add_test(tc, test_compact_subgradient_bit_identical);
    tcase_add_test(tc, test_sparse_equals_dense);
    tcase_add_test(tc, test_sparse_threads_bit_identical);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tu_run_suite(suite()); }
