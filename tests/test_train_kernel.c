/* The kernel (dual) path: the tiled Gram against a double-precision Gram, the exp, the
 * cross-path identities (linear kernel = online path, polynomial kernel = online path on the
 * explicit expansion), rows on demand = full Gram, XOR and the circle, predictions against
 * the dual sum, limits and callbacks. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "features/gram.h"
#include "paths/paths.h"
#include "testutil.h"

static const pt_isa all_isas[] = {PT_ISA_SCALAR, PT_ISA_AVX2, PT_ISA_AVX512, PT_ISA_NEON};
#define NISA (sizeof all_isas / sizeof all_isas[0])

/* The table of an ISA this build and CPU run, else NULL. */
static const pt_kernels *isa_table(pt_isa isa)
{
    const pt_kernels *k = NULL;
    return pt_isa_available(isa) && pt_kernels_get(isa, &k) == PT_OK ? k : NULL;
}

static void set_threads(int t)
{
#ifdef _OPENMP
    omp_set_num_threads(t);
#else
    (void)t;
#endif
}

/* n x d uniform in [-1, 1] from the library's generator (deterministic). */
static pt_dataset *uniform_dataset(size_t n, size_t d, uint64_t seed)
{
    pt_dataset *ds = pt_dataset_create(n, d);
    ck_assert_ptr_nonnull(ds);
    double *lab = malloc(n * sizeof *lab);
    pt_rng rng;
    pt_rng_seed(&rng, seed);
    for (size_t i = 0; i < n; i++) {
        float *x = pt_dataset_row(ds, i);
        for (size_t k = 0; k < d; k++) x[k] = (float)(2.0 * pt_rng_uniform(&rng) - 1.0);
        lab[i] = i % 2 ? 1.0 : -1.0;
    }
    ck_assert_int_eq(pt_dataset_set_labels(ds, lab), PT_OK);
    free(lab);
    return ds;
}

static pt_model *train_ok(const pt_dataset *ds, const pt_train_params *p, pt_train_report *r)
{
    pt_model *m = NULL;
    pt_status s = pt_train(ds, p, &m, r);
    ck_assert_msg(s == PT_OK, "pt_train: %s", pt_last_error());
    return m;
}

static void kernel_params(pt_train_params *p, pt_kernel kind)
{
    pt_train_params_init(p);
    p->path = PT_PATH_KERNEL;
    p->kernel.kind = kind;
}

/* ---------------------------------------------------------------- the test's own oracle */

/* The kernel in double from the float inputs (x.z, |x - z|^2 accumulated in double). */
static double kref(const pt_kfun *kf, const float *x, const float *z, size_t d)
{
    double dot = 0.0, dist = 0.0;
    for (size_t k = 0; k < d; k++) {
        dot += (double)x[k] * z[k];
        dist += ((double)x[k] - z[k]) * ((double)x[k] - z[k]);
    }
    double v = dot;
    if (kf->kind == PT_KERNEL_POLY) v = pow(kf->gamma * dot + kf->coef0, kf->degree);
    if (kf->kind == PT_KERNEL_RBF) v = exp(-(double)kf->gamma * dist);
    return v + kf->add;
}

/* The bound gram.h states, eps = 2^-24 (written out here, not taken from the library). */
static double ktol(const pt_kfun *kf, size_t d, const float *x, const float *z)
{
    double xx = 0.0, zz = 0.0, eps = 0x1p-24;
    for (size_t k = 0; k < d; k++) {
        xx += (double)x[k] * x[k];
        zz += (double)z[k] * z[k];
    }
    if (kf->kind == PT_KERNEL_RBF)
        return (2.0 * d + 4.0) * eps * kf->gamma * (xx + zz) + 5.0 * eps + eps * kf->add;
    if (kf->kind == PT_KERNEL_POLY) {
        double T = kf->gamma * sqrt(xx * zz) + fabs(kf->coef0);
        return kf->degree * (d + 4.0) * eps * pow(T, kf->degree) + eps * kf->add;
    }
    return (d + 1.0) * eps * (sqrt(xx * zz) + kf->add);
}

/* ------------------------------------------------------------------------ Gram build */

/* n = 500: tiles of 240, 240 and 20, not a multiple of 16 either; a few rows with large
 * norms and near-duplicates, where |x|^2 + |z|^2 - 2 x.z cancels. */
START_TEST(test_gram_matches_double)
{
    const size_t n = 500, d = 37;
    pt_dataset *ds = uniform_dataset(n, d, 7);
    for (size_t i = 0; i < 8; i++) {
        float *x = pt_dataset_row(ds, i);
        for (size_t k = 0; k < d; k++) x[k] *= 30.0f;
    }
    memcpy(pt_dataset_row(ds, 1), pt_dataset_row(ds, 0), d * sizeof(float));
    pt_dataset_row(ds, 2)[5] = pt_dataset_row(ds, 0)[5] + 1e-3f;
    for (size_t k = 0; k < d; k++) pt_dataset_row(ds, 3)[k] = pt_dataset_row(ds, 0)[k] + 1e-4f;
    const pt_kfun kfs[] = {
        {.kind = PT_KERNEL_LINEAR},
        {.kind = PT_KERNEL_POLY, .degree = 3, .gamma = 0.5f, .coef0 = 1.0f},
        {.kind = PT_KERNEL_RBF, .gamma = 0.3f},
        {.kind = PT_KERNEL_RBF, .gamma = 1.0f / 37.0f},
    };
    const size_t ld = pt_round_up(n, 16);
    float *G = malloc(n * ld * sizeof(float)), *ref = malloc(n * ld * sizeof(float));
    float *row = malloc(ld * sizeof(float));
    for (size_t q = 0; q < sizeof kfs / sizeof kfs[0]; q++)
        for (int add = 0; add <= 1; add++) {
            pt_kfun kf = kfs[q];
            kf.add = (float)add;
            int have_ref = 0;
            for (size_t a = 0; a < NISA; a++) {
                const pt_kernels *k = isa_table(all_isas[a]);
                if (!k) continue;
                for (int threads = 1; threads <= 2; threads++) {
                    set_threads(threads);
                    pt_gram_rows r;
                    ck_assert_int_eq(pt_gram_rows_init(&r, ds->X, n, d, ds->stride, d, kf.kind,
                                                       k, threads), PT_OK);
                    memset(G, 0xff, n * ld * sizeof(float)); /* NaN: every entry must be written */
                    ck_assert_int_eq(pt_gram_full(&r, &kf, k, G, ld, threads), PT_OK);
                    /* checked in bulk: a ck_assert per entry costs a write to check's pipe */
                    double worst = 0.0;
                    size_t bad = 0, asym = 0, above = 0, bi = 0, bj = 0;
                    for (size_t i = 0; i < n; i++)
                        for (size_t j = 0; j < n; j++) {
                            const float *x = ds->X + i * ds->stride, *z = ds->X + j * ds->stride;
                            float g = G[i * ld + j];
                            double err = fabs(g - kref(&kf, x, z, d)), tol = ktol(&kf, d, x, z);
                            if (!(err <= tol) && bad++ == 0) {
                                bi = i;
                                bj = j;
                            }
                            if (err / tol > worst) worst = err / tol;
                            asym += g != G[j * ld + i]; /* exactly symmetric */
                            above += kf.kind == PT_KERNEL_RBF && !(g <= 1.0f + kf.add); /* clamped */
                        }
                    ck_assert_msg(bad == 0, "kernel %d add %d isa %s threads %d: %zu entries off, "
                                  "first K[%zu][%zu] = %.9g against %.9g (bound %.3g)",
                                  kf.kind, add, pt_isa_name(all_isas[a]), threads, bad, bi, bj,
                                  G[bi * ld + bj], kref(&kf, ds->X + bi * ds->stride, ds->X + bj * ds->stride, d),
                                  ktol(&kf, d, ds->X + bi * ds->stride, ds->X + bj * ds->stride));
                    ck_assert_uint_eq(asym, 0);
                    ck_assert_uint_eq(above, 0);
                    /* the bound is not vacuous: the errors come within 1000x of it */
                    ck_assert_msg(worst > 1e-3 || kf.kind == PT_KERNEL_LINEAR, "worst %.3g", worst);
                    /* every variant and thread count: the same bits */
                    if (!have_ref) {
                        memcpy(ref, G, n * ld * sizeof(float));
                        have_ref = 1;
                    }
                    for (size_t i = 0; i < n; i++)
                        ck_assert_mem_eq(G + i * ld, ref + i * ld, n * sizeof(float));
                    /* kernel rows on demand: the Gram's rows, bit for bit */
                    for (size_t i = 0; i < n; i += 37) {
                        pt_gram_row(&r, &kf, k, i, row, 0.0f, NULL, threads);
                        ck_assert_mem_eq(row, G + i * ld, n * sizeof(float));
                        pt_gram_kvec(&r, &kf, k, ds->X + i * ds->stride,
                                     r.norm ? r.norm[i] : 0.0f, row);
                        ck_assert_mem_eq(row, G + i * ld, n * sizeof(float));
                    }
                    pt_gram_rows_free(&r);
                }
            }
        }
    free(G);
    free(ref);
    free(row);
    pt_dataset_free(ds);
}
END_TEST

/* The RBF's exp: within 2 ulp of exp over [-87, 0], 0 below, 1 at 0, every variant the same. */
START_TEST(test_exp_accuracy)
{
    const size_t n = 1 << 20;
    float *x = malloc(n * sizeof(float)), *y = malloc(n * sizeof(float)), *y0 = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) x[i] = -87.0f * (float)i / (float)(n - 1);
    x[0] = 0.0f;
    x[1] = -0.0f;
    x[2] = -87.5f;
    x[3] = -1000.0f;
    x[4] = -INFINITY;
    x[5] = -1e-30f;
    isa_table(PT_ISA_SCALAR)->gram->exp(x, y0, n);
    double worst = 0.0;
    for (size_t i = 5; i < n; i++) {
        double e = exp((double)x[i]), rel = fabs(y0[i] - e) / e;
        if (rel > worst) worst = rel;
    }
    ck_assert_msg(worst <= 0x1p-22, "exp: relative error %.3g above 2 ulp", worst);
    ck_assert(y0[0] == 1.0f && y0[1] == 1.0f && y0[5] == 1.0f);
    ck_assert(y0[2] == 0.0f && y0[3] == 0.0f && y0[4] == 0.0f);
    for (size_t a = 1; a < NISA; a++) {
        const pt_kernels *k = isa_table(all_isas[a]);
        if (!k) continue;
        k->gram->exp(x, y, n);
        ck_assert_mem_eq(y, y0, n * sizeof(float));
    }
    free(x);
    free(y);
    free(y0);
}
END_TEST

/* ------------------------------------------------------------- cross-path identities */

/* Integer features in [-4, 4], labels from an integer separator with a few flipped: every
 * inner product and margin is a small integer, exact in float on both paths. */
static pt_dataset *integer_dataset(size_t n, size_t d, uint64_t seed)
{
    pt_dataset *ds = pt_dataset_create(n, d);
    double *lab = malloc(n * sizeof *lab);
    pt_rng rng;
    pt_rng_seed(&rng, seed);
    for (size_t i = 0; i < n; i++) {
        float *x = pt_dataset_row(ds, i);
        long s = 1;
        for (size_t k = 0; k < d; k++) {
            x[k] = (float)((long)pt_rng_below(&rng, 9) - 4);
            s += (long)(k % 3 + 1) * (k % 2 ? -1 : 1) * (long)x[k];
        }
        lab[i] = (s >= 0) != (pt_rng_below(&rng, 10) == 0) ? 1.0 : -1.0;
    }
    ck_assert_int_eq(pt_dataset_set_labels(ds, lab), PT_OK);
    free(lab);
    return ds;
}

static void assert_same_mistakes(const pt_train_report *a, const pt_train_report *b)
{
    ck_assert_int_eq(a->epochs_run, b->epochs_run);
    for (int e = 0; e < a->epochs_run; e++)
        ck_assert_msg(a->mistakes_per_epoch[e] == b->mistakes_per_epoch[e],
                      "epoch %d: %zu mistakes against %zu", e + 1, a->mistakes_per_epoch[e],
                      b->mistakes_per_epoch[e]);
    ck_assert_uint_eq(a->updates, b->updates);
    ck_assert_int_eq(a->converged, b->converged);
}

START_TEST(test_linear_equals_online)
{
    pt_dataset *ds = integer_dataset(300, 6, 3);
    float *s1 = malloc(300 * sizeof(float)), *s2 = malloc(300 * sizeof(float));
    for (int bias = 0; bias <= 1; bias++)
        for (int shuffle = 0; shuffle <= 1; shuffle++)
            for (int averaged = 0; averaged <= 1; averaged++) {
                pt_train_params p;
                pt_train_params_init(&p);
                p.epochs = 12;
                p.bias = bias;
                p.shuffle = shuffle;
                p.variant = averaged ? PT_VARIANT_AVERAGED : PT_VARIANT_CLASSIC;
                pt_train_report ro, rk;
                pt_model *mo = train_ok(ds, &p, &ro);
                p.path = PT_PATH_KERNEL;
                p.kernel.kind = PT_KERNEL_LINEAR;
                pt_model *mk = train_ok(ds, &p, &rk);
                ck_assert_int_gt(ro.mistakes_per_epoch[ro.epochs_run - 1], 0); /* not separable */
                assert_same_mistakes(&ro, &rk);
                /* the same separator: sum_i c_i (x_i.x + 1) = w.x + b, exactly on integers */
                ck_assert_int_eq(pt_model_scores(mo, ds, s1), PT_OK);
                ck_assert_int_eq(pt_model_scores(mk, ds, s2), PT_OK);
                size_t off = 0;
                for (size_t i = 0; i < 300; i++) {
                    if (!averaged) off += s1[i] != s2[i];
                    /* averaged: the online path sums its lazy u in float, this path in double */
                    else off += !(fabsf(s1[i] - s2[i]) <= 2e-3f * (1.0f + fabsf(s1[i])));
                }
                ck_assert_msg(off == 0, "bias %d shuffle %d averaged %d: %zu scores differ", bias,
                              shuffle, averaged, off);
                pt_train_report_clear(&ro);
                pt_train_report_clear(&rk);
                pt_model_free(mo);
                pt_model_free(mk);
            }
    free(s1);
    free(s2);
    pt_dataset_free(ds);
}
END_TEST

/* The 2-D map of the notes on separable and inseparable data, with (x.z + 1)^2 = phi(x).phi(z). */
static void phi2(const float *x, float *out)
{
    const float r2 = sqrtf(2.0f);
    out[0] = 1.0f;
    out[1] = r2 * x[0];
    out[2] = r2 * x[1];
    out[3] = x[0] * x[0];
    out[4] = r2 * x[0] * x[1];
    out[5] = x[1] * x[1];
}

/* The dual perceptron with (x.z + 1)^2 on x = k / 4 in exact integers (16 x, so the kernel
 * is (k.l + 16)^2 / 256): 1 if every visit after the first update has |f| above 1e-4 of the
 * sum of the magnitudes it adds up, so that neither path's float rounding (the sqrt(2) of the
 * expansion, the sums) can flip a decision. */
static int exact_run_is_safe(const int *xi, const int *yi, size_t n, int epochs)
{
    long *alpha = calloc(n, sizeof *alpha);
    int safe = 1, any = 0;
    for (int e = 0; e < epochs && safe; e++)
        for (size_t t = 0; t < n; t++) {
            long f = 0, mag = 0;
            for (size_t i = 0; i < n; i++) {
                long dot = (long)xi[2 * i] * xi[2 * t] + (long)xi[2 * i + 1] * xi[2 * t + 1] + 16;
                f += alpha[i] * yi[i] * dot * dot;
                mag += alpha[i] * dot * dot;
            }
            if (any && labs(f) * 10000 <= mag) safe = 0;
            if ((long)yi[t] * f <= 0) {
                alpha[t]++;
                any = 1;
            }
        }
    free(alpha);
    return safe;
}

START_TEST(test_poly_equals_online_expansion)
{
    const size_t n = 60;
    int xi[2 * 60], yi[60];
    float x[2 * 60], px[6 * 60];
    double lab[60];
    uint64_t seed = 1;
    for (;; seed++) {
        ck_assert_uint_lt(seed, 1000);
        pt_rng rng;
        pt_rng_seed(&rng, seed);
        for (size_t i = 0; i < n; i++) {
            xi[2 * i] = (int)pt_rng_below(&rng, 17) - 8;
            xi[2 * i + 1] = (int)pt_rng_below(&rng, 17) - 8;
            /* a quadratic rule (on 16 x), a few labels flipped so it runs every epoch */
            int q = xi[2 * i] * xi[2 * i] - 2 * xi[2 * i] * xi[2 * i + 1] + 4 * xi[2 * i + 1] - 20;
            yi[i] = ((q > 0) != (pt_rng_below(&rng, 15) == 0)) ? 1 : -1;
        }
        if (exact_run_is_safe(xi, yi, n, 10)) break;
    }
    for (size_t i = 0; i < n; i++) {
        x[2 * i] = (float)xi[2 * i] / 4.0f;
        x[2 * i + 1] = (float)xi[2 * i + 1] / 4.0f;
        lab[i] = yi[i];
        phi2(x + 2 * i, px + 6 * i);
    }
    pt_dataset *ds = tu_dataset(n, 2, x, lab), *dp = tu_dataset(n, 6, px, lab);
    pt_train_params p;
    pt_train_params_init(&p);
    p.bias = 0;
    p.epochs = 10;
    pt_train_report ro, rk;
    pt_model *mo = train_ok(dp, &p, &ro);
    kernel_params(&p, PT_KERNEL_POLY);
    p.bias = 0;
    p.epochs = 10;
    p.kernel.degree = 2;
    p.kernel.gamma = 1.0f;
    p.kernel.coef0 = 1.0f;
    pt_model *mk = train_ok(ds, &p, &rk);
    ck_assert_int_gt(rk.epochs_run, 2);
    assert_same_mistakes(&ro, &rk);
    pt_train_report_clear(&ro);
    pt_train_report_clear(&rk);
    pt_model_free(mo);
    pt_model_free(mk);
    pt_dataset_free(ds);
    pt_dataset_free(dp);
}
END_TEST

/* ------------------------------------------------------------- storage: the same model */

static void assert_same_model(const pt_model *a, const pt_model *b)
{
    ck_assert_uint_eq(a->n_sv, b->n_sv);
    ck_assert_uint_eq(a->d, b->d);
    ck_assert_mem_eq(a->coef, b->coef, a->n_sv * sizeof(float));
    ck_assert_mem_eq(a->sv, b->sv, a->n_sv * pt_stride_for(a->d) * sizeof(float));
}

static char logged[4096];
static int logged_level = -1;
static void capture_log(pt_log_level level, const char *msg, void *user)
{
    (void)user;
    if (level == PT_LOG_WARN) {
        snprintf(logged, sizeof logged, "%s", msg);
        logged_level = (int)level;
    }
}

START_TEST(test_rows_equal_full)
{
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.kind = PT_GEN_CIRCLE;
    g.n = 1000; /* Gram 3.8 MiB; a 1 MiB cache holds 260 rows */
    g.d = 8;
    g.margin = 0.0;
    pt_dataset *ds;
    ck_assert_int_eq(pt_generate(&g, &ds), PT_OK);
    const pt_kernel kinds[] = {PT_KERNEL_RBF, PT_KERNEL_POLY};
    for (size_t q = 0; q < 2; q++)
        for (int averaged = 0; averaged <= 1; averaged++) {
            pt_train_params p;
            kernel_params(&p, kinds[q]);
            p.kernel.gamma = kinds[q] == PT_KERNEL_RBF ? 0.5f : 0.25f;
            p.kernel.degree = 3;
            p.epochs = 8;
            p.shuffle = 1;
            p.seed = 5;
            p.variant = averaged ? PT_VARIANT_AVERAGED : PT_VARIANT_CLASSIC;
            p.kernel.gram_storage = PT_GRAM_FULL;
            pt_train_report rf;
            pt_model *mf = train_ok(ds, &p, &rf);
            ck_assert_int_gt(rf.mistakes_per_epoch[1], 0);
            /* rows on demand: no cache (64 MiB: whole), a cache of a quarter (evicting), AUTO */
            const struct { pt_gram_storage st; size_t mb; int threads; pt_isa isa; } runs[] = {
                {PT_GRAM_ROWS, 1, 0, PT_ISA_AUTO},   {PT_GRAM_ROWS, 64, 0, PT_ISA_AUTO},
                {PT_GRAM_ROWS, 1, 1, PT_ISA_AUTO},   {PT_GRAM_AUTO, 0, 0, PT_ISA_AUTO},
                {PT_GRAM_AUTO, 1, 2, PT_ISA_AUTO},   {PT_GRAM_ROWS, 1, 2, PT_ISA_SCALAR},
                {PT_GRAM_FULL, 0, 1, PT_ISA_AVX2},   {PT_GRAM_ROWS, 2, 2, PT_ISA_AVX2},
                {PT_GRAM_AUTO, 0, 2, PT_ISA_AUTO}, /* with the switch forced: below */
            };
            for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
                if (runs[k].isa != PT_ISA_AUTO && !pt_isa_available(runs[k].isa)) continue;
                pt_train_params pr = p;
                pr.kernel.gram_storage = runs[k].st;
                pr.kernel.cache_mb = runs[k].mb;
                pr.threads = runs[k].threads;
                pr.isa = runs[k].isa;
                pt_train_report rr;
                /* the last: AUTO switching from rows to the Gram after its first block */
                pt_gram_set_switch_seconds(k + 1 == sizeof runs / sizeof runs[0] ? 1e-9 : -1.0);
                pt_model *mr = train_ok(ds, &pr, &rr);
                pt_gram_set_switch_seconds(-1.0);
                assert_same_mistakes(&rf, &rr);
                assert_same_model(mf, mr);
                pt_train_report_clear(&rr);
                pt_model_free(mr);
            }
            pt_train_report_clear(&rf);
            pt_model_free(mf);
        }
    /* a Gram over --cache-mb: AUTO says so and what it needs; FULL refuses */
    pt_train_params p;
    kernel_params(&p, PT_KERNEL_RBF);
    p.epochs = 2;
    p.kernel.cache_mb = 1;
    logged[0] = 0;
    pt_set_log(capture_log, NULL);
    pt_train_report r;
    pt_model *m = train_ok(ds, &p, &r);
    pt_set_log(NULL, NULL);
    ck_assert_msg(strstr(logged, "3.8 MiB") && strstr(logged, "pt_train_params.cache_mb"), "warning: %s", logged);
    pt_train_report_clear(&r);
    pt_model_free(m);
    p.kernel.gram_storage = PT_GRAM_FULL;
    ck_assert_int_eq(pt_train(ds, &p, &m, NULL), PT_ERR_LIMIT);
    ck_assert_msg(strstr(pt_last_error(), "pt_train_params.cache_mb") && strstr(pt_last_error(), "MiB"),
                  "%s",
                  pt_last_error());
    /* and the memory budget: refused before allocating, with the bytes it needs (20,000 rows
     * of 8 features: 1.2 MiB of packed rows alone, over the least budget, 1 MiB) */
    pt_dataset_free(ds);
    g.n = 20000;
    ck_assert_int_eq(pt_generate(&g, &ds), PT_OK);
    p.kernel.gram_storage = PT_GRAM_AUTO;
    p.mem_budget_bytes = (size_t)1 << 20;
    ck_assert_int_eq(pt_train(ds, &p, &m, NULL), PT_ERR_LIMIT);
    ck_assert_msg(strstr(pt_last_error(), "before any kernel value, above the memory budget of "
                         "1048576 bytes"), "%s", pt_last_error());
    pt_dataset_free(ds);
}
END_TEST

/* ---------------------------------------------------------- what the kernel can separate */

START_TEST(test_xor_and_circle_degree_2)
{
    const pt_gen_kind kinds[] = {PT_GEN_XOR, PT_GEN_CIRCLE};
    for (size_t q = 0; q < 2; q++) {
        pt_gen_params g;
        pt_gen_params_init(&g);
        g.kind = kinds[q];
        g.n = 400;
        g.d = 2;
        pt_dataset *ds;
        ck_assert_int_eq(pt_generate(&g, &ds), PT_OK);
        pt_train_params p;
        kernel_params(&p, PT_KERNEL_POLY);
        p.kernel.degree = 2;
        p.epochs = 100;
        pt_train_report r;
        pt_model *m = train_ok(ds, &p, &r);
        ck_assert_msg(r.converged, "%s: not separated in %d epochs", pt_gen_kind_name(kinds[q]), r.epochs_run);
        pt_eval e;
        ck_assert_int_eq(pt_model_evaluate(m, ds, &e), PT_OK);
        ck_assert_uint_eq(e.correct, 400);
        /* a linear kernel cannot (XOR: never; the circle: not through the origin's side) */
        p.kernel.degree = 1;
        p.epochs = 20;
        pt_model *m1 = train_ok(ds, &p, NULL);
        ck_assert_int_eq(pt_model_evaluate(m1, ds, &e), PT_OK);
        ck_assert_uint_lt(e.correct, 400);
        pt_model_free(m1);
        pt_train_report_clear(&r);
        pt_model_free(m);
        pt_dataset_free(ds);
    }
}
END_TEST

/* ----------------------------------------------------------------------- predictions */

static double naive_score(const pt_model *m, const pt_kfun *kf, const float *x, size_t d_x,
                          double *tol)
{
    /* the model's view of x: its first d features, zeros past the data's */
    float *z = calloc(m->d + 1, sizeof(float));
    memcpy(z, x, (d_x < m->d ? d_x : m->d) * sizeof(float));
    double s = 0.0, t = 0.0;
    const size_t stride = pt_stride_for(m->d);
    for (size_t i = 0; i < m->n_sv; i++) {
        const float *v = m->sv + i * stride;
        s += m->coef[i] * kref(kf, v, z, m->d);
        t += fabs(m->coef[i]) * (ktol(kf, m->d, v, z) + 1e-6 * fabs(kref(kf, v, z, m->d)));
    }
    free(z);
    *tol = t + 1e-6;
    return s;
}

START_TEST(test_predictions_equal_dual_sum)
{
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.kind = PT_GEN_CIRCLE;
    g.n = 700;
    g.d = 3;
    pt_dataset *ds;
    ck_assert_int_eq(pt_generate(&g, &ds), PT_OK);
    pt_dataset *wide = uniform_dataset(300, 5, 11), *narrow = uniform_dataset(300, 2, 12);
    float *s = malloc(700 * sizeof(float));
    const pt_kernel kinds[] = {PT_KERNEL_RBF, PT_KERNEL_POLY, PT_KERNEL_LINEAR};
    for (size_t q = 0; q < 3; q++)
        for (int v = 0; v < 2; v++) {
            pt_train_params p;
            kernel_params(&p, kinds[q]);
            p.kernel.gamma = 2.0f;
            p.kernel.degree = 3;
            p.epochs = 4;
            p.bias = v;
            p.variant = v ? PT_VARIANT_AVERAGED : PT_VARIANT_CLASSIC;
            pt_model *m = train_ok(ds, &p, NULL);
            ck_assert_uint_gt(m->n_sv, 20);
            pt_kfun kf;
            pt_kfun_from_params(&kf, &p);
            const pt_dataset *sets[] = {ds, wide, narrow};
            for (size_t t = 0; t < 3; t++) {
                const pt_dataset *x = sets[t];
                ck_assert_int_eq(pt_model_scores(m, x, s), PT_OK);
                size_t bad = 0, first = 0;
                double fref = 0.0, ftol = 0.0;
                for (size_t i = 0; i < x->n; i++) {
                    double tol, ref = naive_score(m, &kf, x->X + i * x->stride, x->d, &tol);
                    if (!(fabs(s[i] - ref) <= tol) && bad++ == 0) {
                        first = i;
                        fref = ref;
                        ftol = tol;
                    }
                }
                ck_assert_msg(bad == 0, "kernel %d set %zu: %zu rows off, first %zu: %.9g vs %.9g (tol %.3g)",
                              kinds[q], t, bad, first, s[first], fref, ftol);
            }
            pt_model_free(m);
        }
    free(s);
    pt_dataset_free(ds);
    pt_dataset_free(wide);
    pt_dataset_free(narrow);
}
END_TEST

/* --------------------------------------------------------------------- callbacks, save */

static int stop_after_two(int epoch, size_t mistakes, double seconds, void *user)
{
    (void)mistakes;
    (void)seconds;
    (void)user;
    return epoch >= 2;
}

static int count_hook(const pt_model *m, int epoch, size_t mistakes, void *user)
{
    (void)mistakes;
    int *calls = user;
    ck_assert_uint_gt(m->n_sv, 0);
    ck_assert_int_eq(m->epochs_run, epoch);
    (*calls)++;
    return 0;
}

START_TEST(test_callbacks_and_save)
{
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.kind = PT_GEN_CIRCLE;
    g.n = 500;
    g.d = 4;
    pt_dataset *ds;
    ck_assert_int_eq(pt_generate(&g, &ds), PT_OK);
    pt_train_params p;
    kernel_params(&p, PT_KERNEL_RBF);
    p.epochs = 10;
    p.progress = stop_after_two;
    pt_model *m = NULL;
    pt_train_report r;
    ck_assert_int_eq(pt_train(ds, &p, &m, &r), PT_ERR_INTERRUPTED);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(r.epochs_run, 2);
    pt_train_report_clear(&r);
    pt_model_free(m);
    int calls = 0;
    p.progress = NULL;
    p.epoch_hook = count_hook;
    p.epoch_user = &calls;
    m = train_ok(ds, &p, &r);
    ck_assert_int_eq(calls, r.epochs_run);
    /* saved and loaded, the same scores */
    const char *path = tu_path("kernel", ".model");
    pt_model *back;
    ck_assert_int_eq(pt_model_save(m, path), PT_OK);
    ck_assert_msg(pt_model_load(path, &back) == PT_OK, "%s", pt_last_error());
    float *s1 = malloc(500 * sizeof(float)), *s2 = malloc(500 * sizeof(float));
    ck_assert_int_eq(pt_model_scores(m, ds, s1), PT_OK);
    ck_assert_int_eq(pt_model_scores(back, ds, s2), PT_OK);
    ck_assert_mem_eq(s1, s2, 500 * sizeof(float));
    free(s1);
    free(s2);
    pt_model_free(back);
    pt_train_report_clear(&r);
    pt_model_free(m);
    pt_dataset_free(ds);
}
END_TEST

/* The notes on separable and inseparable data require c >= 0 for the polynomial kernel
 * (gamma x.z + c)^k: the kernel path refuses c < 0 before any work, naming the parameter;
 * c = 0 is a kernel, and other paths and kernels do not use coef0. */
START_TEST(test_poly_negative_coef0_refused)
{
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.n = 50;
    g.d = 3;
    pt_dataset *ds;
    ck_assert_int_eq(pt_generate(&g, &ds), PT_OK);
    pt_train_params p;
    kernel_params(&p, PT_KERNEL_POLY);
    p.kernel.coef0 = -0.5f;
    ck_assert_int_eq(pt_train_params_check(&p), PT_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(pt_last_error(), "coef0"));
    ck_assert_ptr_nonnull(strstr(pt_last_error(), ">= 0"));
    pt_model *m = NULL;
    ck_assert_int_eq(pt_train(ds, &p, &m, NULL), PT_ERR_INVALID);
    ck_assert_ptr_null(m);
    p.kernel.coef0 = 0.0f;
    ck_assert_int_eq(pt_train_params_check(&p), PT_OK);
    p.kernel.coef0 = -0.5f;
    p.kernel.kind = PT_KERNEL_RBF;
    ck_assert_int_eq(pt_train_params_check(&p), PT_OK);
    p.kernel.kind = PT_KERNEL_POLY;
    p.path = PT_PATH_ONLINE;
    ck_assert_int_eq(pt_train_params_check(&p), PT_OK);
    pt_dataset_free(ds);
}
END_TEST

/* Text-like sparse rows and their dense copy. */
static pt_dataset *sparse_pair(size_t n, size_t d, size_t nnz, uint64_t seed, pt_dataset **dense)
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
    pt_dataset *sp;
    ck_assert_int_eq(pt_generate(&g, &sp), PT_OK);
    ck_assert_int_eq(pt_dataset_convert(sp, PT_LAYOUT_DENSE, 0, dense), PT_OK);
    return sp;
}

/* A model of sparse rows keeps the support vectors of the dense copy's model, sparsely. */
static void assert_same_svs(const pt_model *ms, const pt_model *md)
{
    ck_assert_ptr_null(ms->sv);
    ck_assert_ptr_nonnull(ms->sv_ptr);
    ck_assert_uint_eq(ms->n_sv, md->n_sv);
    ck_assert_mem_eq(ms->coef, md->coef, md->n_sv * sizeof(float));
    size_t len = pt_stride_for(md->d);
    float *row = calloc(len, sizeof *row);
    for (size_t i = 0; i < md->n_sv; i++) {
        memset(row, 0, len * sizeof *row);
        for (uint64_t z = ms->sv_ptr[i]; z < ms->sv_ptr[i + 1]; z++) {
            ck_assert_uint_lt(ms->sv_col[z], md->d);
            ck_assert(ms->sv_val[z] != 0.0f);
            row[ms->sv_col[z]] = ms->sv_val[z];
        }
        ck_assert_mem_eq(row, md->sv + i * len, len * sizeof *row);
    }
    free(row);
}

/* Scores of a on da and of b on db agree to rounding (sparse dots sum in another order). */
static void assert_close_scores(const pt_model *a, const pt_dataset *da, const pt_model *b,
                                const pt_dataset *db, const char *what)
{
    size_t n = pt_dataset_n(da);
    float *sa = malloc(n * sizeof *sa), *sb = malloc(n * sizeof *sb);
    ck_assert_int_eq(pt_model_scores(a, da, sa), PT_OK);
    ck_assert_int_eq(pt_model_scores(b, db, sb), PT_OK);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(fabsf(sa[i] - sb[i]) <= 1e-4f * (1.0f + fabsf(sa[i])),
                      "%s: row %zu: %.9g vs %.9g", what, i, sa[i], sb[i]);
    free(sa);
    free(sb);
}

/* The kernel path on sparse rows equals it on their dense copy: the same mistakes every epoch,
 * the same support vectors and coefficients, scores equal to rounding whatever the layouts of
 * the model and the rows; for every kernel, the lazy Gram and rows computed at each mistake
 * (ROWS, or a Gram over --cache-mb), averaged or not, 1 or 2 threads (bit for bit); and
 * one-vs-rest. */
START_TEST(test_sparse_equals_dense)
{
    pt_dataset *dn, *sp = sparse_pair(600, 800, 15, 4, &dn);
    const pt_kernel kinds[] = {PT_KERNEL_LINEAR, PT_KERNEL_POLY, PT_KERNEL_RBF};
    const struct { pt_gram_storage st; size_t mb; } stor[] = {
        {PT_GRAM_AUTO, 0}, {PT_GRAM_ROWS, 0}, {PT_GRAM_AUTO, 1}, {PT_GRAM_FULL, 0}};
    for (size_t q = 0; q < 3; q++)
        for (int averaged = 0; averaged <= 1; averaged++) {
            pt_train_params p;
            kernel_params(&p, kinds[q]);
            p.kernel.gamma = 1.0f;
            p.kernel.degree = 2;
            p.kernel.coef0 = 1.0f;
            p.epochs = 6;
            p.shuffle = 1;
            p.variant = averaged ? PT_VARIANT_AVERAGED : PT_VARIANT_CLASSIC;
            pt_train_report rd;
            pt_model *md = train_ok(dn, &p, &rd);
            ck_assert_int_gt(rd.mistakes_per_epoch[1], 0);
            for (size_t v = 0; v < 4; v++) {
                p.kernel.gram_storage = stor[v].st;
                p.kernel.cache_mb = stor[v].mb; /* 1 MiB: the 1.4 MiB Gram does not fit */
                pt_train_report rs;
                pt_model *ms = train_ok(sp, &p, &rs);
                assert_same_mistakes(&rd, &rs);
                assert_same_svs(ms, md);
                assert_close_scores(md, dn, ms, sp, "sparse model, sparse rows");
                assert_close_scores(md, dn, ms, dn, "sparse model, dense rows");
                assert_close_scores(md, dn, md, sp, "dense model, sparse rows");
                if (v == 0) {
                    p.threads = 1;
                    pt_train_report r1;
                    pt_model *m1 = train_ok(sp, &p, &r1);
                    p.threads = 2;
                    assert_same_mistakes(&rs, &r1);
                    ck_assert_mem_eq(m1->coef, ms->coef, ms->n_sv * sizeof(float));
                    pt_train_report_clear(&r1);
                    pt_model_free(m1);
                    m1 = train_ok(sp, &p, &r1);
                    p.threads = 0;
                    assert_same_mistakes(&rs, &r1);
                    pt_train_report_clear(&r1);
                    pt_model_free(m1);
                }
                pt_train_report_clear(&rs);
                pt_model_free(ms);
            }
            pt_train_report_clear(&rd);
            pt_model_free(md);
        }
    pt_dataset_free(sp);
    pt_dataset_free(dn);

    /* one-vs-rest: three blobs, their sparse copy */
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.kind = PT_GEN_BLOBS;
    g.n = 400;
    g.d = 12;
    g.seed = 2;
    pt_dataset *bd, *bs;
    ck_assert_int_eq(pt_generate(&g, &bd), PT_OK);
    ck_assert_int_eq(pt_dataset_convert(bd, PT_LAYOUT_SPARSE, 0, &bs), PT_OK);
    pt_train_params p;
    kernel_params(&p, PT_KERNEL_RBF);
    p.kernel.gamma = 0.5f;
    p.epochs = 4;
    pt_train_report rd, rs;
    pt_model *md = train_ok(bd, &p, &rd), *ms = train_ok(bs, &p, &rs);
    assert_same_mistakes(&rd, &rs);
    double *pd = malloc(400 * sizeof *pd), *ps = malloc(400 * sizeof *ps);
    ck_assert_int_eq(pt_model_predict(md, bd, pd), PT_OK);
    ck_assert_int_eq(pt_model_predict(ms, bs, ps), PT_OK);
    ck_assert_mem_eq(pd, ps, 400 * sizeof *pd);
    ck_assert_int_eq(pt_model_predict(ms, bd, ps), PT_OK);
    ck_assert_mem_eq(pd, ps, 400 * sizeof *pd);
    free(pd);
    free(ps);
    pt_train_report_clear(&rd);
    pt_train_report_clear(&rs);
    pt_model_free(md);
    pt_model_free(ms);
    pt_dataset_free(bd);
    pt_dataset_free(bs);
}
END_TEST


/* One-vs-rest on dense rows: the training rows' right predictions the kernel path counts from
 * its stored rows equal pt_model_evaluate's (the same sums of the same kernel values), on every
 * storage, kernel, variant and bias; a cache that lost a support vector's row counts nothing. */
START_TEST(test_train_correct_equals_evaluate)
{
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.kind = PT_GEN_BLOBS;
    g.n = 1200;
    g.d = 24;
    g.classes = 5;
    g.margin = 0.0;
    g.seed = 3;
    pt_dataset *ds;
    ck_assert_int_eq(pt_generate(&g, &ds), PT_OK);
    /* one row in five moved to the next class: no run gets every row right */
    double *labels = malloc(g.n * sizeof *labels);
    for (size_t i = 0; i < g.n; i++)
        labels[i] = ds->class_values[(size_t)(ds->cls[i] + (i % 5 == 0)) % g.classes];
    ck_assert_int_eq(pt_dataset_set_labels(ds, labels), PT_OK);
    free(labels);
    const struct { pt_kernel kind; pt_gram_storage st; size_t mb; int averaged, bias, threads; } runs[] = {
        {PT_KERNEL_RBF, PT_GRAM_FULL, 0, 1, 1, 0},  {PT_KERNEL_RBF, PT_GRAM_ROWS, 64, 1, 1, 2},
        {PT_KERNEL_RBF, PT_GRAM_AUTO, 0, 0, 0, 1},  {PT_KERNEL_POLY, PT_GRAM_ROWS, 64, 1, 0, 0},
        {PT_KERNEL_POLY, PT_GRAM_FULL, 0, 0, 1, 2}, {PT_KERNEL_LINEAR, PT_GRAM_AUTO, 0, 1, 1, 0},
    };
    size_t scored = 0;
    for (size_t q = 0; q < sizeof runs / sizeof runs[0]; q++) {
        pt_train_params p;
        kernel_params(&p, runs[q].kind);
        p.kernel.gamma = 0.05f;
        p.kernel.degree = 2;
        p.epochs = 3;
        p.shuffle = 1;
        p.variant = runs[q].averaged ? PT_VARIANT_AVERAGED : PT_VARIANT_CLASSIC;
        p.bias = runs[q].bias;
        p.kernel.gram_storage = runs[q].st;
        p.kernel.cache_mb = runs[q].mb;
        p.threads = runs[q].threads;
        pt_train_report r;
        pt_model *m = train_ok(ds, &p, &r);
        pt_eval ev;
        ck_assert_int_eq(pt_model_evaluate(m, ds, &ev), PT_OK);
        ck_assert_msg(ev.correct < ev.n, "run %zu: every row right, a weak check", q);
        if (r.train_scored) {
            ck_assert_uint_eq(r.train_correct, ev.correct);
            scored++;
        }
        pt_train_report_clear(&r);
        pt_model_free(m);
    }
    /* the FULL and ROWS runs at least (AUTO holds the rows once it has switched to the Gram,
     * which depends on time) */
    ck_assert_uint_ge(scored, 4);
    /* a row cache smaller than the support vectors: no count (the CLI evaluates the model) */
    pt_train_params p;
    kernel_params(&p, PT_KERNEL_RBF);
    p.kernel.gamma = 0.05f;
    p.epochs = 3;
    p.kernel.gram_storage = PT_GRAM_ROWS;
    p.kernel.cache_mb = 1; /* 218 rows */
    pt_train_report r;
    pt_model *m = train_ok(ds, &p, &r);
    ck_assert_int_gt((int)m->sub[0]->n_sv, 0);
    ck_assert_int_eq(r.train_scored, 0);
    pt_train_report_clear(&r);
    pt_model_free(m);
    /* AUTO, never switching to the Gram: rows of d >= 300 are cached (every support vector's
     * row is there at the end), cheaper ones recomputed (not there) */
    pt_gram_set_switch_seconds(1e9);
    p.kernel.gram_storage = PT_GRAM_AUTO;
    p.kernel.cache_mb = 0;
    m = train_ok(ds, &p, &r);
    ck_assert_int_eq(r.train_scored, 0); /* d = 24 */
    pt_train_report_clear(&r);
    pt_model_free(m);
    pt_dataset_free(ds);
    g.n = 400;
    g.d = 320;
    ck_assert_int_eq(pt_generate(&g, &ds), PT_OK);
    labels = malloc(g.n * sizeof *labels);
    for (size_t i = 0; i < g.n; i++)
        labels[i] = ds->class_values[(size_t)(ds->cls[i] + (i % 5 == 0)) % g.classes];
    ck_assert_int_eq(pt_dataset_set_labels(ds, labels), PT_OK);
    free(labels);
    p.kernel.gamma = 0.005f;
    m = train_ok(ds, &p, &r);
    pt_gram_set_switch_seconds(-1.0);
    pt_eval ev;
    ck_assert_int_eq(pt_model_evaluate(m, ds, &ev), PT_OK);
    ck_assert_int_eq(r.train_scored, 1);
    ck_assert_uint_eq(r.train_correct, ev.correct);
    pt_train_report_clear(&r);
    pt_model_free(m);
    pt_dataset_free(ds);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("train_kernel");
    const struct { const char *name; const TTest *test; } tests[] = {
        {"gram", test_gram_matches_double},
        {"exp", test_exp_accuracy},
        {"linear", test_linear_equals_online},
        {"poly", test_poly_equals_online_expansion},
        {"storage", test_rows_equal_full},
        {"separable", test_xor_and_circle_degree_2},
        {"predict", test_predictions_equal_dual_sum},
        {"callbacks", test_callbacks_and_save},
        {"coef0", test_poly_negative_coef0_refused},
        {"sparse", test_sparse_equals_dense},
        {"train_correct", test_train_correct_equals_evaluate},
    };
    /* one case per test, so CK_RUN_CASE=name runs one */
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        TCase *tc = tcase_create(tests[i].name);
        tcase_set_timeout(tc, 300);
        tcase_add_test(tc, tests[i].test);
        suite_add_tcase(s, tc);
    }
    return tu_run_suite(s);
}
