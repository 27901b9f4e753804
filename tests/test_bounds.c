/* The notes' mistake bounds: the formulas against direct computation, and the perceptron
 * never exceeding them on generated data. */
#include <math.h>
#include <stdlib.h>

#include "internal.h"
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
    g.noise = 0.05;
    pt_dataset *ds;
    ck_assert_int_eq(pt_generate(&g, &ds), PT_OK);
    return ds;
}

static float *truth_f(const pt_dataset *ds)
{
    const double *w = pt_dataset_truth(ds, NULL, NULL);
    float *f = malloc(pt_dataset_d(ds) * sizeof *f);
    for (size_t j = 0; j < pt_dataset_d(ds); j++) f[j] = (float)w[j];
    return f;
}

/* A hand-checkable case: two points, w* = (1, 0). */
START_TEST(test_formulas)
{
    const float x[] = {2, 0, -1, 1};
    const double y[] = {1, -1};
    pt_dataset *ds = tu_dataset(2, 2, x, y);
    const float w[] = {1, 0};
    pt_bounds b;
    ck_assert_int_eq(pt_bounds_compute(ds, w, 0.0f, 0, &b), PT_OK);
    ck_assert_double_eq_tol(b.R, 2.0, 1e-12);
    ck_assert_double_eq_tol(b.gamma, 1.0, 1e-12);
    ck_assert_double_eq_tol(b.mistake_bound, 4.0, 1e-12);
    /* margins 2 and 1: f(c) = 4 c^2 + 2 (max(0,1-2c) + max(0,1-c)); minimum at c = 1/2:
     * f = 1 + 2 (0 + 1/2) = 2 */
    ck_assert_double_eq_tol(b.wstar_norm, 0.5, 1e-12);
    ck_assert_double_eq_tol(b.hinge_mistake_bound, 2.0, 1e-12);
    /* with the bias coordinate R grows: sqrt(4 + 1) */
    ck_assert_int_eq(pt_bounds_compute(ds, w, 0.0f, 1, &b), PT_OK);
    ck_assert_double_eq_tol(b.R, sqrt(5.0), 1e-12);
    pt_dataset_free(ds);
}
END_TEST

/* The hinge bound is the minimum over the scale: check against a fine grid. */
START_TEST(test_hinge_bound_is_minimum)
{
    pt_dataset *ds = gen(PT_GEN_NOISY, 500, 6, 0.1, 5);
    float *w = truth_f(ds);
    pt_bounds b;
    ck_assert_int_eq(pt_bounds_compute(ds, w, 0.0f, 1, &b), PT_OK);
    ck_assert(b.gamma < 0); /* flipped labels */
    ck_assert(isinf(b.mistake_bound));
    double best = INFINITY;
    for (double c = 0.01; c < 100; c *= 1.01) {
        double h = 0;
        for (size_t i = 0; i < ds->n; i++) {
            const float *x = pt_dataset_row_const(ds, i);
            double m = 0, nw = 0;
            for (size_t j = 0; j < 6; j++) {
                m += (double)w[j] * x[j];
                nw += (double)w[j] * w[j];
            }
            m = ds->y[i] * m / sqrt(nw);
            h += fmax(0.0, 1.0 - c * m);
        }
        double f = b.R * b.R * c * c + 2 * h;
        best = f < best ? f : best;
    }
    ck_assert(b.hinge_mistake_bound <= best + 1e-9 * best);
    ck_assert(b.hinge_mistake_bound >= best * (1 - 1e-3));
    free(w);
    pt_dataset_free(ds);
}
END_TEST

/* Updates <= R^2 |w*|^2 + 2 L_hinge(w*) on noisy data, for several seeds and dimensions. */
START_TEST(test_perceptron_within_hinge_bound)
{
    for (uint64_t seed = 1; seed <= 5; seed++)
        for (size_t d = 2; d <= 32; d *= 4) {
            pt_dataset *ds = gen(PT_GEN_NOISY, 800, d, 0.1, seed);
            float *w = truth_f(ds);
            pt_bounds b;
            ck_assert_int_eq(pt_bounds_compute(ds, w, 0.0f, 1, &b), PT_OK);
            /* the bound is on the mistakes of a single pass (the online setting) */
            pt_train_params p;
            pt_train_params_init(&p);
            p.epochs = 1;
            pt_model *m;
            pt_train_report r;
            ck_assert_int_eq(pt_train(ds, &p, &m, &r), PT_OK);
            ck_assert_msg((double)r.updates <= b.hinge_mistake_bound, "%zu > %g", r.updates,
                          b.hinge_mistake_bound);
            pt_train_report_clear(&r);
            pt_model_free(m);
            free(w);
            pt_dataset_free(ds);
        }
}
END_TEST

START_TEST(test_errors)
{
    const float x[] = {1, 2, 3};
    const double y[] = {0, 1, 2};
    pt_dataset *ds = tu_dataset(3, 1, x, y);
    const float w[] = {1};
    pt_bounds b;
    ck_assert_int_eq(pt_bounds_compute(ds, w, 0, 1, &b), PT_ERR_LABELS);
    pt_dataset_free(ds);
    ds = tu_dataset(2, 1, x, (const double[]){0, 1});
    const float zero[] = {0};
    ck_assert_int_eq(pt_bounds_compute(ds, zero, 0, 0, &b), PT_ERR_INVALID);
    pt_dataset_free(ds);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("bounds");
    TCase *tc = tcase_create("bounds");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_formulas);
    tcase_add_test(tc, test_hinge_bound_is_minimum);
    tcase_add_test(tc, test_perceptron_within_hinge_bound);
    tcase_add_test(tc, test_errors);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
