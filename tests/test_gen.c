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

int main(void)
{
    Suite *s = suite_create("gen");
    TCase *tc = tcase_create("gen");
    tcase_add_test(tc, test_deterministic);
    tcase_add_test(tc, test_golden_values);
    tcase_add_test(tc, test_separable_margin);
    tcase_add_test(tc, test_noisy_flips);
    tcase_add_test(tc, test_xor_circle_blobs);
    tcase_add_test(tc, test_bad_params);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
