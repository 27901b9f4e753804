/* Generators: determinism (a fingerprint fixed across machines), the margin guarantee, the
 * label structure of each kind. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data/data.h"
#include "testutil.h"

static pt_dataset *gen(pt_gen_kind kind, size_t n, size_t d, double margin, uint64_t seed)
{
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.kind = kind;
    g.n = n;
    g.d = d;
    g.margin = margin;
    g.seed = seed;
    pt_dataset *ds;
    ck_assert_msg(pt_generate(&g, &ds) == PT_OK, "%s", pt_last_error());
    return ds;
}

static uint64_t fingerprint(const pt_dataset *ds)
{
    uint64_t h = pt_checksum(ds->X, ds->n * ds->stride * sizeof(float));
    return h ^ (pt_checksum(ds->cls, ds->n * sizeof(int32_t)) * 31);
}

START_TEST(test_deterministic)
{
    for (int kind = PT_GEN_SEPARABLE; kind <= PT_GEN_BLOBS; kind++) {
        pt_dataset *a = gen((pt_gen_kind)kind, 300, 5, 0.1, 7), *b = gen((pt_gen_kind)kind, 300, 5, 0.1, 7),
                   *c = gen((pt_gen_kind)kind, 300, 5, 0.1, 8);
        ck_assert_uint_eq(fingerprint(a), fingerprint(b));
        ck_assert_uint_ne(fingerprint(a), fingerprint(c));
        pt_dataset_free(a);
        pt_dataset_free(b);
        pt_dataset_free(c);
    }
}
END_TEST

/* The generator's output is part of the CLI contract ("identical on every machine"): these
 * values were produced by this code on x86-64; a change to the generator must be deliberate. */
START_TEST(test_golden_values)
{
    pt_dataset *ds = gen(PT_GEN_SEPARABLE, 4, 3, 0.1, 1);
    const float *x = pt_dataset_row_const(ds, 0);
    char buf[256];
    snprintf(buf, sizeof buf, "%.9g %.9g %.9g %g", x[0], x[1], x[2], pt_dataset_label(ds, 0));
    const char *golden = getenv("PTRON_GEN_GOLDEN_PRINT");
    if (golden) fprintf(stderr, "golden: %s\n", buf);
    ck_assert_str_eq(buf, "-0.85790956 -0.237631112 0.734304965 1");
    pt_dataset_free(ds);
}
END_TEST

START_TEST(test_separable_margin)
{
    const double margins[] = {0.01, 0.1, 0.5};
    for (size_t k = 0; k < 3; k++) {
        pt_dataset *ds = gen(PT_GEN_SEPARABLE, 2000, 10, margins[k], 3);
        double R, gamma;
        const double *w = pt_dataset_truth(ds, &R, &gamma);
        ck_assert_ptr_nonnull(w);
        double norm = 0, minm = INFINITY, maxr = 0;
        for (size_t j = 0; j < 10; j++) norm += w[j] * w[j];
        ck_assert_double_eq_tol(norm, 1.0, 1e-12);
        for (size_t i = 0; i < ds->n; i++) {
            const float *x = pt_dataset_row_const(ds, i);
            double m = 0, r = 0;
            for (size_t j = 0; j < 10; j++) {
                m += w[j] * x[j];
                r += (double)x[j] * x[j];
            }
            m *= ds->y[i];
            minm = m < minm ? m : minm;
            maxr = r > maxr ? r : maxr;
        }
        ck_assert(minm >= margins[k]);
        ck_assert_double_eq_tol(minm, gamma, 1e-12);
        ck_assert_double_eq_tol(sqrt(maxr), R, 1e-12);
        pt_dataset_free(ds);
    }
}
END_TEST

START_TEST(test_noisy_flips)
{
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.kind = PT_GEN_NOISY;
    g.n = 20000;
    g.d = 4;
    g.noise = 0.2;
    pt_dataset *ds;
    ck_assert_int_eq(pt_generate(&g, &ds), PT_OK);
    const double *w = pt_dataset_truth(ds, NULL, NULL);
    size_t wrong = 0;
    for (size_t i = 0; i < ds->n; i++) {
        const float *x = pt_dataset_row_const(ds, i);
        double m = 0;
        for (size_t j = 0; j < 4; j++) m += w[j] * x[j];
        wrong += m * ds->y[i] < 0;
    }
    double frac = (double)wrong / (double)ds->n;
    ck_assert_msg(fabs(frac - 0.2) < 0.015, "flipped fraction %g", frac);
    pt_dataset_free(ds);
}
END_TEST

START_TEST(test_xor_circle_blobs)
{
    pt_dataset *ds = gen(PT_GEN_XOR, 1000, 3, 0.1, 2);
    for (size_t i = 0; i < ds->n; i++) {
        const float *x = pt_dataset_row_const(ds, i);
        ck_assert(fabsf(x[0]) >= 0.1f && fabsf(x[1]) >= 0.1f);
        ck_assert_float_eq(ds->y[i], x[0] * x[1] > 0 ? 1.0f : -1.0f);
    }
    pt_dataset_free(ds);

    ds = gen(PT_GEN_CIRCLE, 1000, 2, 0.2, 2);
    double rin = 0, rout = INFINITY;
    size_t inside = 0;
    for (size_t i = 0; i < ds->n; i++) {
        const float *x = pt_dataset_row_const(ds, i);
        double r = sqrt((double)x[0] * x[0] + (double)x[1] * x[1]);
        if (ds->y[i] > 0) {
            inside++;
            rin = r > rin ? r : rin;
        } else {
            rout = r < rout ? r : rout;
        }
    }
    ck_assert(rout - rin >= 0.2 - 1e-5); /* the gap */
    ck_assert(inside > 400 && inside < 600);
    pt_dataset_free(ds);

    pt_gen_params g;
    pt_gen_params_init(&g);
    g.kind = PT_GEN_BLOBS;
    g.n = 500;
    g.d = 3;
    g.classes = 5;
    ck_assert_int_eq(pt_generate(&g, &ds), PT_OK);
    ck_assert_uint_eq(pt_dataset_nclass(ds), 5);
    ck_assert_ptr_null(pt_dataset_y(ds));
    for (size_t k = 0; k < 5; k++) ck_assert_double_eq(pt_dataset_class_value(ds, k), (double)k);
    pt_dataset_free(ds);
}
END_TEST

START_TEST(test_bad_params)
{
    pt_gen_params g;
    pt_gen_params_init(&g);
    pt_dataset *ds;
    g.n = 0;
    ck_assert_int_eq(pt_generate(&g, &ds), PT_ERR_INVALID);
    g.n = 10;
    g.kind = PT_GEN_XOR;
    g.d = 1;
    ck_assert_int_eq(pt_generate(&g, &ds), PT_ERR_INVALID);
    g.kind = PT_GEN_NOISY;
    g.noise = 1.5;
    ck_assert_int_eq(pt_generate(&g, &ds), PT_ERR_INVALID);
    pt_gen_kind k;
    ck_assert_int_eq(pt_gen_kind_parse("spiral", &k), PT_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(pt_last_error(), "separable"));
}
END_TEST

/* ------------------------------------------------------------------ gen sparse */

static pt_dataset *gen_sparse(size_t n, size_t d, size_t nnz, double margin, double noise,
                              uint64_t seed)
{
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.kind = PT_GEN_SPARSE;
    g.n = n;
    g.d = d;
    g.nnz = nnz;
    g.margin = margin;
    g.noise = noise;
    g.seed = seed;
    pt_dataset *ds;
    ck_assert_msg(pt_generate(&g, &ds) == PT_OK, "%s", pt_last_error());
    return ds;
}

/* The CSR arrays, labels and truth, hashed. */
static uint64_t sparse_fingerprint(const pt_dataset *ds)
{
    uint64_t h = pt_checksum(ds->rowptr, (ds->n + 1) * sizeof(uint64_t));
    h = h * 31 ^ pt_checksum(ds->col, ds->nnz * sizeof(uint32_t));
    h = h * 31 ^ pt_checksum(ds->val, ds->nnz * sizeof(float));
    h = h * 31 ^ pt_checksum(ds->cls, ds->n * sizeof(int32_t));
    return h * 31 ^ pt_checksum(ds->wstar, ds->d * sizeof(double));
}

START_TEST(test_sparse_deterministic)
{
    pt_dataset *a = gen_sparse(2000, 10000, 30, 0.001, 0.1, 7),
               *b = gen_sparse(2000, 10000, 30, 0.001, 0.1, 7),
               *c = gen_sparse(2000, 10000, 30, 0.001, 0.1, 8);
    ck_assert_uint_eq(sparse_fingerprint(a), sparse_fingerprint(b));
    ck_assert_uint_ne(sparse_fingerprint(a), sparse_fingerprint(c));
    pt_dataset_free(a);
    pt_dataset_free(b);
    pt_dataset_free(c);
}
END_TEST

/* As test_golden_values: the first row of a small sparse set, fixed across machines (the
 * generator takes its logarithms from + - * / only). */
START_TEST(test_sparse_golden_values)
{
    pt_dataset *ds = gen_sparse(3, 1000, 4, 0.0, 0.0, 1);
    const uint32_t *col;
    const float *val;
    size_t m = pt_csr_row(ds, 0, &col, &val);
    char buf[512];
    int at = snprintf(buf, sizeof buf, "%g", pt_dataset_label(ds, 0));
    for (size_t k = 0; k < m && at < (int)sizeof buf - 40; k++)
        at += snprintf(buf + at, sizeof buf - (size_t)at, " %u:%.9g", col[k], (double)val[k]);
    if (getenv("PTRON_GEN_GOLDEN_PRINT")) fprintf(stderr, "golden sparse: %s\n", buf);
    ck_assert_str_eq(buf, "-1 219:0.384688288 500:0.359669596 515:0.691838026 820:0.493976533");
    pt_dataset_free(ds);
}
END_TEST

static int by_count_desc(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x < y) - (x > y);
}

/* The shape promised: clean CSR, row lengths within [K/2, 3K/2] averaging K, unit rows (R = 1),
 * a Zipf (1/r) popularity (the document frequency of the feature ranked 100 is about 10 times
 * that of the one ranked 1000), positive values; without noise every row is on the side of w*
 * its label says, at least the margin away, and the stored R and gamma are the data's. */
START_TEST(test_sparse_shape)
{
    const size_t n = 20000, d = 47236, K = 50;
    const double G = 0.001;
    pt_dataset *ds = gen_sparse(n, d, K, G, 0.0, 3);
    tu_assert_clean_csr(ds);
    ck_assert_int_eq(pt_dataset_layout(ds), PT_LAYOUT_SPARSE);
    ck_assert(pt_dataset_n(ds) == n && pt_dataset_d(ds) == d);
    double mean = (double)pt_dataset_nnz(ds) / (double)n;
    ck_assert_msg(mean > 0.97 * K && mean < 1.03 * K, "%g non-zeros a row", mean);
    uint32_t *df = calloc(d, sizeof *df);
    ck_assert_ptr_nonnull(df);
    double Rw, gamma;
    const double *w = pt_dataset_truth(ds, &Rw, &gamma);
    ck_assert_ptr_nonnull(w);
    double maxnorm = 0.0, mingap = INFINITY;
    for (size_t i = 0; i < n; i++) {
        const uint32_t *col;
        const float *val;
        size_t m = pt_csr_row(ds, i, &col, &val);
        ck_assert_msg(m >= K / 2 && m <= K + K / 2, "row %zu: %zu non-zeros", i, m);
        double norm2 = 0.0, score = 0.0;
        for (size_t k = 0; k < m; k++) {
            ck_assert(val[k] > 0.0f);
            df[col[k]]++;
            norm2 += (double)val[k] * val[k];
            score += w[col[k]] * (double)val[k];
        }
        ck_assert_msg(fabs(sqrt(norm2) - 1.0) < 1e-6, "row %zu: length %.9g", i, sqrt(norm2));
        if (sqrt(norm2) > maxnorm) maxnorm = sqrt(norm2);
        double y = pt_dataset_label(ds, i), gap = y * score;
        ck_assert_msg(gap >= G, "row %zu: y w*.x = %g, margin %g", i, gap, G);
        if (gap < mingap) mingap = gap;
    }
    ck_assert_double_eq_tol(Rw, maxnorm, 1e-12);
    ck_assert_double_eq_tol(gamma, mingap, 1e-12);
    /* w* is a unit vector on at most 3000 features */
    double wn = 0.0;
    size_t support = 0;
    for (size_t j = 0; j < d; j++) {
        wn += w[j] * w[j];
        support += w[j] != 0.0;
    }
    ck_assert_double_eq_tol(wn, 1.0, 1e-9);
    ck_assert(support > 1000 && support <= 3000);
    /* the popularity: sorted document frequencies fall as 1/rank past the saturated head */
    qsort(df, d, sizeof *df, by_count_desc);
    double ratio = (double)df[99] / (double)df[999];
    ck_assert_msg(ratio > 6.0 && ratio < 15.0, "df of rank 100 / rank 1000 = %g (%u / %u)", ratio,
                  df[99], df[999]);
    ck_assert(df[0] > n / 2); /* the commonest features are in most rows */
    /* both classes */
    size_t pos = 0;
    for (size_t i = 0; i < n; i++) pos += pt_dataset_label(ds, i) > 0;
    ck_assert(pos > n / 5 && pos < 4 * n / 5);
    free(df);
    pt_dataset_free(ds);
}
END_TEST

/* --noise P flips a fraction P of the labels of the clean set (same seed: same rows). */
START_TEST(test_sparse_noise)
{
    const size_t n = 20000;
    pt_dataset *clean = gen_sparse(n, 5000, 20, 0.001, 0.0, 9),
               *noisy = gen_sparse(n, 5000, 20, 0.001, 0.2, 9);
    ck_assert(clean->nnz == noisy->nnz &&
              memcmp(clean->col, noisy->col, clean->nnz * sizeof(uint32_t)) == 0 &&
              memcmp(clean->val, noisy->val, clean->nnz * sizeof(float)) == 0);
    size_t flipped = 0;
    for (size_t i = 0; i < n; i++)
        flipped += pt_dataset_label(clean, i) != pt_dataset_label(noisy, i);
    ck_assert_msg(flipped > 0.18 * n && flipped < 0.22 * n, "%zu of %zu flipped", flipped, n);
    pt_dataset_free(clean);
    pt_dataset_free(noisy);
}
END_TEST

/* url-like width: 3.2 million features; memory is the non-zeros' and O(d), so this is quick;
 * a margin no row can reach is refused by name; tiny d caps rows at d features. */
START_TEST(test_sparse_wide_and_limits)
{
    pt_dataset *ds = gen_sparse(2000, 3200000, 100, 0.0005, 0.0, 4);
    tu_assert_clean_csr(ds);
    ck_assert_uint_eq(pt_dataset_d(ds), 3200000);
    pt_dataset_free(ds);
    ds = gen_sparse(50, 3, 10, 0.0, 0.0, 4);
    tu_assert_clean_csr(ds);
    ck_assert_uint_eq(pt_dataset_nnz(ds), 150); /* every row holds all 3 features */
    pt_dataset_free(ds);

    pt_gen_params g;
    pt_gen_params_init(&g);
    g.kind = PT_GEN_SPARSE;
    g.n = 10;
    g.d = 1000;
    g.margin = 0.9;
    ck_assert_int_eq(pt_generate(&g, &ds), PT_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(pt_last_error(), "pt_gen_params.margin"));
    g.margin = 0.0;
    g.nnz = 0;
    ck_assert_int_eq(pt_generate(&g, &ds), PT_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(pt_last_error(), "pt_gen_params.nnz"));
    /* memory said before allocating: 2^31 rows of up to 75 non-zeros take 1.2 TB, past half
     * of any RAM this runs on */
    g.nnz = 50;
    g.n = (size_t)1 << 31;
    ck_assert_int_eq(pt_generate(&g, &ds), PT_ERR_LIMIT);
    ck_assert_ptr_nonnull(strstr(pt_last_error(), "MiB, over the memory budget"));
    ck_assert_ptr_nonnull(strstr(pt_last_error(), "pt_gen_params.n"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("gen");
    TCase *tc = tcase_create("gen");
    tcase_set_timeout(tc, 120); /* the sparse shapes take a second or two; more on a busy host */
    tcase_add_test(tc, test_deterministic);
    tcase_add_test(tc, test_golden_values);
    tcase_add_test(tc, test_separable_margin);
    tcase_add_test(tc, test_noisy_flips);
    tcase_add_test(tc, test_xor_circle_blobs);
    tcase_add_test(tc, test_bad_params);
    tcase_add_test(tc, test_sparse_deterministic);
    tcase_add_test(tc, test_sparse_golden_values);
    tcase_add_test(tc, test_sparse_shape);
    tcase_add_test(tc, test_sparse_noise);
    tcase_add_test(tc, test_sparse_wide_and_limits);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
