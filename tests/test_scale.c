/* Feature scaling (features/scale.c): the fit from the values that are not zero, the same on a
 * sparse dataset as on its dense copy, and exact where double arithmetic allows. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "features/scale.h"
#include "testutil.h"

static const pt_scale_kind kinds[] = {PT_SCALE_RANGE, PT_SCALE_RANGE01, PT_SCALE_STANDARDIZE};

/* Two fits of the same kind give the same offsets and factors, bit for bit. */
static void assert_same_fit(const pt_dataset *a, const pt_dataset *b, pt_scale_kind kind)
{
    pt_scaling *sa, *sb;
    ck_assert_int_eq(pt_scaling_fit(a, kind, &sa), PT_OK);
    ck_assert_int_eq(pt_scaling_fit(b, kind, &sb), PT_OK);
    size_t da, db;
    const double *oa, *fa, *ob, *fb;
    pt_scaling_get(sa, &da, &oa, &fa);
    pt_scaling_get(sb, &db, &ob, &fb);
    ck_assert_uint_eq(da, db);
    for (size_t j = 0; j < da; j++) {
        ck_assert_msg(memcmp(&oa[j], &ob[j], sizeof(double)) == 0, "%s: offset %zu: %.17g, %.17g",
                      pt_scale_kind_name(kind), j, oa[j], ob[j]);
        ck_assert_msg(memcmp(&fa[j], &fb[j], sizeof(double)) == 0, "%s: factor %zu: %.17g, %.17g",
                      pt_scale_kind_name(kind), j, fa[j], fb[j]);
    }
    pt_scaling_free(sa);
    pt_scaling_free(sb);
}

/* n x d values, mostly zero, of every sign, with a feature never zero (no implicit zero), one
 * always zero, one negative where not zero, one positive where not zero. */
static pt_dataset *mixed_dense(size_t n, size_t d, uint64_t seed)
{
    float *x = malloc(n * d * sizeof *x);
    double *y = malloc(n * sizeof *y);
    uint64_t s = seed;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < d; j++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            unsigned r = (unsigned)(s >> 33);
            float v = (float)((int)(r % 2001) - 1000) / 37.0f;
            bool zero = j != 0 && (j == 1 || r % 10 < 7);
            if (j == 2) v = -fabsf(v) - 0.5f;
            if (j == 3) v = fabsf(v) + 0.5f;
            x[i * d + j] = zero ? 0.0f : v;
        }
        y[i] = i % 3 ? 1.0 : -1.0;
    }
    pt_dataset *ds = tu_dataset(n, d, x, y);
    free(x);
    free(y);
    return ds;
}

/* The fit of a sparse dataset is its dense copy's, bit for bit, for every kind: hand-made rows
 * of every sign (the sparse copy of dense rows), and the sparse generator's (the dense copy of
 * sparse rows). */
START_TEST(test_sparse_fit_is_dense_fit)
{
    pt_dataset *dense = mixed_dense(500, 37, 3), *sparse = NULL;
    ck_assert_int_eq(pt_dataset_convert(dense, PT_LAYOUT_SPARSE, 0, &sparse), PT_OK);
    ck_assert_int_eq(pt_dataset_layout(sparse), PT_LAYOUT_SPARSE);
    for (size_t k = 0; k < 3; k++) assert_same_fit(sparse, dense, kinds[k]);
    pt_dataset_free(dense);
    pt_dataset_free(sparse);
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.kind = PT_GEN_SPARSE;
    g.n = 3000;
    g.d = 2000;
    g.nnz = 20;
    g.margin = 0.001f;
    ck_assert_msg(pt_generate(&g, &sparse) == PT_OK, "%s", pt_last_error());
    ck_assert_int_eq(pt_dataset_layout(sparse), PT_LAYOUT_SPARSE);
    ck_assert_int_eq(pt_dataset_convert(sparse, PT_LAYOUT_DENSE, 0, &dense), PT_OK);
    for (size_t k = 0; k < 3; k++) assert_same_fit(sparse, dense, kinds[k]);
    pt_dataset_free(dense);
    pt_dataset_free(sparse);
}
END_TEST

/* The fitted figures, against their definitions: a range's ends (zero among them where a
 * feature has zeros), and the mean and the standard deviation over n exactly where double
 * arithmetic holds them: 64 rows of 1e6 + k, k = 0..7, have the mean 1e6 + 3.5 and the
 * variance 5.25 exactly (sums of integers below 2^53, a division by a power of two), which a
 * running mean updated row by row misses by its roundings. */
START_TEST(test_fit_values)
{
    const size_t n = 64;
    float x[64 * 3];
    double y[64];
    for (size_t i = 0; i < n; i++) {
        x[i * 3] = 1e6f + (float)(i % 8);
        x[i * 3 + 1] = i % 4 ? 0.0f : 2.0f;   /* 16 twos, 48 zeros */
        x[i * 3 + 2] = i % 2 ? -3.0f : 5.0f;  /* never zero */
        y[i] = i % 2 ? 1.0 : -1.0;
    }
    pt_dataset *ds = tu_dataset(n, 3, x, y), *sp = NULL;
    ck_assert_int_eq(pt_dataset_convert(ds, PT_LAYOUT_SPARSE, 0, &sp), PT_OK);
    const pt_dataset *both[2] = {ds, sp};
    for (int l = 0; l < 2; l++) {
        pt_scaling *s;
        const double *off, *fac;
        ck_assert_int_eq(pt_scaling_fit(both[l], PT_SCALE_RANGE01, &s), PT_OK);
        pt_scaling_get(s, NULL, &off, &fac);
        ck_assert_double_eq(off[1], 0.0); /* the zeros' */
        ck_assert_double_eq(fac[1], 0.5);
        ck_assert_double_eq(off[2], -3.0);
        ck_assert_double_eq(fac[2], 1.0 / 8.0);
        pt_scaling_free(s);
        ck_assert_int_eq(pt_scaling_fit(both[l], PT_SCALE_STANDARDIZE, &s), PT_OK);
        pt_scaling_get(s, NULL, &off, &fac);
        double m0 = 0.0; /* the first feature's values as float holds them */
        for (size_t i = 0; i < 8; i++) m0 += (double)x[i * 3];
        m0 /= 8.0;
        double v0 = 0.0;
        for (size_t i = 0; i < 8; i++) v0 += ((double)x[i * 3] - m0) * ((double)x[i * 3] - m0);
        ck_assert_double_eq(off[0], m0);
        ck_assert_double_eq(fac[0], 1.0 / sqrt(v0 / 8.0));
        ck_assert_double_eq(off[1], 0.5); /* 16 x 2 / 64 */
        ck_assert_double_eq(fac[1], 1.0 / sqrt(0.75)); /* (16 x 1.5^2 + 48 x 0.5^2) / 64 */
        ck_assert_double_eq(off[2], 1.0);
        ck_assert_double_eq(fac[2], 0.25);
        pt_scaling_free(s);
    }
    pt_dataset_free(sp);
    pt_dataset_free(ds);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("scale");
    TCase *tc = tcase_create("scale");
    tcase_add_test(tc, test_sparse_fit_is_dense_fit);
    tcase_add_test(tc, test_fit_values);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
