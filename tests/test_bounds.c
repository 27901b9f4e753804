/* The classic mistake bounds (docs/theory.md): the formulas against direct computation, the
 * perceptron never exceeding them on generated data, and which bound covers which run
 * (pt_bounds_for_run). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
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

/* The run bounds' formulas by hand: x = (2,0)+ and (-1,1)-, w* = (1,0), no bias: R = 2,
 * gamma = 1. With tau = 3 and eta = 2, A = R^2 + 2 tau/eta = 7: separable bound 7. Over two
 * passes, f(c) = 7 c^2 + 4 (max(0, 1 - 2c) + max(0, 1 - c)) falls until the kink at c = 1/2
 * (slope 7 - 12 < 0 before it, 7 - 4 > 0 after): f = 7/4 + 4 (1/2) = 3.75, loss 1/2 a pass. */
START_TEST(test_run_bounds_formulas)
{
    const float x[] = {2, 0, -1, 1};
    pt_dataset *ds = tu_dataset(2, 2, x, (const double[]){1, -1});
    pt_model *ref = pt_model_alloc_linear(2);
    ref->w[0] = 1.0f;
    ref->nclass = 2;
    pt_train_params p;
    pt_train_params_init(&p);
    p.bias = 0;
    p.margin = 3.0f;
    p.eta = 2.0f;
    pt_run_bounds b;
    ck_assert_msg(pt_bounds_for_run(ds, &p, ref, 2, &b) == PT_OK, "%s", pt_last_error());
    ck_assert_int_eq(b.covered, 1);
    ck_assert_str_eq(b.space, "input");
    ck_assert_double_eq_tol(b.R, 2.0, 1e-12);
    ck_assert_double_eq_tol(b.gamma, 1.0, 1e-12);
    ck_assert_int_eq(b.separable, 1);
    ck_assert_double_eq_tol(b.separable_bound, 7.0, 1e-12);
    ck_assert_double_eq_tol(b.hinge_scale, 0.5, 1e-12);
    ck_assert_double_eq_tol(b.hinge_loss, 0.5, 1e-12);
    ck_assert_double_eq_tol(b.hinge_bound, 3.75, 1e-12);
    /* tau = 0, one pass: the lecture notes' statements (docs/theory.md), as pt_bounds_compute
     * gives them */
    p.margin = 0.0f;
    pt_bounds nb;
    ck_assert_int_eq(pt_bounds_for_run(ds, &p, ref, 1, &b), PT_OK);
    ck_assert_int_eq(pt_bounds_compute(ds, ref->w, 0.0f, 0, &nb), PT_OK);
    ck_assert_double_eq_tol(b.separable_bound, nb.mistake_bound, 1e-12);
    ck_assert_double_eq_tol(b.hinge_bound, nb.hinge_mistake_bound, 1e-12);
    pt_model_free(ref);
    pt_dataset_free(ds);
}
END_TEST

/* On sparse data the bounds are those of the dense copy, exactly (R from the rows' non-zeros,
 * the margins from the same products): the generator's w* and a reference model, the
 * separable case and the noisy one. What reads dense rows only says so. */
START_TEST(test_sparse_bounds)
{
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.kind = PT_GEN_SPARSE;
    g.n = 1500;
    g.d = 2000;
    g.nnz = 30;
    g.margin = 0.001;
    for (int noisy = 0; noisy <= 1; noisy++) {
        g.noise = noisy ? 0.1 : 0.0;
        pt_dataset *sp, *dn;
        ck_assert_msg(pt_generate(&g, &sp) == PT_OK, "%s", pt_last_error());
        ck_assert_int_eq(pt_dataset_layout(sp), PT_LAYOUT_SPARSE);
        ck_assert_int_eq(pt_dataset_convert(sp, PT_LAYOUT_DENSE, 0, &dn), PT_OK);
        float *w = truth_f(sp);
        pt_bounds a, b;
        ck_assert_int_eq(pt_bounds_compute(sp, w, 0.0f, 1, &a), PT_OK);
        ck_assert_int_eq(pt_bounds_compute(dn, w, 0.0f, 1, &b), PT_OK);
        ck_assert(a.R == b.R && a.gamma == b.gamma && a.hinge_loss == b.hinge_loss);
        ck_assert(a.R > 0.0 && (noisy ? a.gamma < 0.0 : a.gamma > 0.0));
        pt_train_params p;
        pt_train_params_init(&p);
        p.epochs = 3;
        pt_model *m;
        ck_assert_int_eq(pt_train(sp, &p, &m, NULL), PT_OK);
        for (int ref = 0; ref <= 1; ref++) {
            pt_run_bounds ra, rb;
            ck_assert_msg(pt_bounds_for_run(sp, &p, ref ? m : NULL, 3, &ra) == PT_OK, "%s",
                          pt_last_error());
            ck_assert_int_eq(pt_bounds_for_run(dn, &p, ref ? m : NULL, 3, &rb), PT_OK);
            ck_assert(ra.covered && rb.covered);
            ck_assert(ra.R == rb.R && ra.gamma == rb.gamma);
            ck_assert(ra.hinge_bound == rb.hinge_bound && ra.hinge_scale == rb.hinge_scale);
            ck_assert(ra.separable == rb.separable);
        }
        pt_model_free(m);
        /* a kernel reference (the kernel path on the sparse rows): R from K(x, x), the same as
         * on the dense copy; gamma from the kernel scores, equal to their rounding */
        if (!noisy) {
            pt_train_params kp;
            pt_train_params_init(&kp);
            kp.path = PT_PATH_KERNEL;
            kp.kernel.kind = PT_KERNEL_POLY;
            kp.kernel.degree = 2;
            kp.kernel.gamma = 1.0f;
            kp.epochs = 3;
            pt_model *km;
            ck_assert_msg(pt_train(sp, &kp, &km, NULL) == PT_OK, "%s", pt_last_error());
            pt_run_bounds ka, kb;
            ck_assert_msg(pt_bounds_for_run(sp, &kp, km, 3, &ka) == PT_OK, "%s",
                          pt_last_error());
            ck_assert_int_eq(pt_bounds_for_run(dn, &kp, km, 3, &kb), PT_OK);
            ck_assert_str_eq(ka.space, "kernel");
            ck_assert(ka.covered && kb.covered && ka.R == kb.R && ka.R > 1.0);
            ck_assert_double_eq_tol(ka.gamma, kb.gamma, 1e-4 * fabs(kb.gamma));
            pt_model_free(km);
        }
        free(w);
        pt_dataset_free(sp);
        pt_dataset_free(dn);
    }
}
END_TEST

static pt_run_bounds run_bounds(const pt_dataset *ds, const pt_train_params *p, const pt_model *ref,
                                int passes)
{
    pt_run_bounds b;
    ck_assert_msg(pt_bounds_for_run(ds, p, ref, passes, &b) == PT_OK, "%s", pt_last_error());
    return b;
}

/* On generated separable data, every online run (margins tau up to 20, step sizes, bias or
 * not, shuffled or not, every variant) makes at most (R^2 + 2 tau/eta)/gamma^2 updates, and at
 * most the hinge bound over the passes it made. With tau > 0, (R/gamma)^2 alone is exceeded:
 * the claim ptron used to print whatever the run. */
START_TEST(test_margin_perceptron_within_bound)
{
    const size_t dims[] = {2, 8, 32};
    const double margins[] = {0.05, 0.2};
    const float taus[] = {0.0f, 1.0f, 20.0f}, etas[] = {0.5f, 1.0f, 4.0f};
    size_t runs = 0, classic_claim_false = 0;
    for (uint64_t seed = 1; seed <= 3; seed++)
        for (size_t a = 0; a < 3; a++)
            for (size_t g = 0; g < 2; g++) {
                pt_dataset *ds = gen(PT_GEN_SEPARABLE, 400, dims[a], margins[g], seed);
                for (size_t t = 0; t < 3; t++)
                    for (size_t e = 0; e < 3; e++) {
                        pt_train_params p;
                        pt_train_params_init(&p);
                        p.margin = taus[t];
                        p.eta = etas[e];
                        p.bias = (int)((seed + e) & 1);
                        p.shuffle = (int)((seed + t) & 1);
                        p.seed = seed;
                        p.variant = (pt_variant)((a + t + e) % 3);
                        p.epochs = 1000000;
                        pt_model *m;
                        pt_train_report r;
                        ck_assert_int_eq(pt_train(ds, &p, &m, &r), PT_OK);
                        ck_assert_int_eq(r.converged, 1);
                        pt_run_bounds b = run_bounds(ds, &p, NULL, r.epochs_run);
                        ck_assert_int_eq(b.covered, 1);
                        ck_assert_int_eq(b.separable, 1);
                        ck_assert(b.gamma >= margins[g] * (1 - 1e-6));
                        ck_assert_msg((double)r.updates <= b.separable_bound,
                                      "seed %llu d %zu tau %g eta %g: %zu updates > %g",
                                      (unsigned long long)seed, dims[a], (double)taus[t],
                                      (double)etas[e], r.updates, b.separable_bound);
                        ck_assert_msg((double)r.updates <= b.hinge_bound, "%zu updates > hinge %g",
                                      r.updates, b.hinge_bound);
                        classic_claim_false += (double)r.updates > (b.R / b.gamma) * (b.R / b.gamma);
                        runs++;
                        pt_train_report_clear(&r);
                        pt_model_free(m);
                    }
                pt_dataset_free(ds);
            }
    ck_assert_uint_eq(runs, 162);
    ck_assert_uint_gt(classic_claim_false, 0);
}
END_TEST

/* The hinge bound sums the loss over the sequence: E passes on noisy data stay within the
 * bound with E L_hinge, and exceed the single-pass one (so E matters). */
START_TEST(test_hinge_bound_over_passes)
{
    size_t over_single = 0;
    for (uint64_t seed = 1; seed <= 4; seed++)
        for (int epochs = 1; epochs <= 40; epochs *= 3)
            for (int t = 0; t < 2; t++) {
                pt_dataset *ds = gen(PT_GEN_NOISY, 600, 6, 0.1, seed);
                pt_train_params p;
                pt_train_params_init(&p);
                p.epochs = epochs;
                p.margin = t ? 0.5f : 0.0f;
                p.shuffle = 1;
                p.seed = seed;
                pt_model *m;
                pt_train_report r;
                ck_assert_int_eq(pt_train(ds, &p, &m, &r), PT_OK);
                ck_assert_int_eq(r.epochs_run, epochs);
                pt_run_bounds b = run_bounds(ds, &p, NULL, r.epochs_run);
                ck_assert_int_eq(b.covered, 1);
                ck_assert_int_eq(b.separable, 0); /* flipped labels */
                ck_assert(isnan(b.separable_bound) || isinf(b.separable_bound));
                ck_assert_msg((double)r.updates <= b.hinge_bound, "seed %llu E %d: %zu > %g",
                              (unsigned long long)seed, epochs, r.updates, b.hinge_bound);
                over_single += (double)r.updates > run_bounds(ds, &p, NULL, 1).hinge_bound;
                pt_train_report_clear(&r);
                pt_model_free(m);
                pt_dataset_free(ds);
            }
    ck_assert_uint_gt(over_single, 0);
}
END_TEST

/* Runs no theorem covers get no bound, with the reason; references that do not fit the run
 * are errors. */
START_TEST(test_runs_not_covered)
{
    pt_dataset *ds = gen(PT_GEN_SEPARABLE, 200, 4, 0.1, 3);
    pt_train_params p;
    pt_train_params_init(&p);
    p.path = PT_PATH_BATCH;
    pt_run_bounds b = run_bounds(ds, &p, NULL, 5);
    ck_assert_int_eq(b.covered, 0);
    ck_assert_ptr_nonnull(strstr(b.reason, "batch"));
    ck_assert(isnan(b.hinge_bound) && isnan(b.separable_bound));
    ck_assert(b.R > 0 && b.gamma > 0); /* measured: the batch path trains in the input space */
    /* warm starts */
    pt_train_params_init(&p);
    p.init_random = 1;
    b = run_bounds(ds, &p, NULL, 5);
    ck_assert_int_eq(b.covered, 0);
    ck_assert_ptr_nonnull(strstr(b.reason, "w = 0"));
    /* an expansion with an input-space w*: measured nowhere */
    pt_train_params_init(&p);
    p.expand.kind = PT_EXPAND_POLY;
    b = run_bounds(ds, &p, NULL, 5);
    ck_assert_int_eq(b.covered, 0);
    ck_assert_str_eq(b.space, "expanded");
    ck_assert(isnan(b.R) && isnan(b.gamma));
    /* a polynomial kernel with a linear w* */
    pt_train_params_init(&p);
    p.path = PT_PATH_KERNEL;
    p.kernel.kind = PT_KERNEL_POLY;
    b = run_bounds(ds, &p, NULL, 5);
    ck_assert_int_eq(b.covered, 0);
    ck_assert_str_eq(b.space, "kernel");
    ck_assert(isnan(b.R));
    /* references of another dimension, or of three classes */
    pt_train_params_init(&p);
    pt_model *ref = pt_model_alloc_linear(5);
    ref->w[0] = 1.0f;
    ck_assert_int_eq(pt_bounds_for_run(ds, &p, ref, 1, &b), PT_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(pt_last_error(), "has 5 features; the run trains on 4"));
    ck_assert_int_eq(pt_bounds_check_reference(ds, &p, ref), PT_ERR_INVALID);
    p.expand.kind = PT_EXPAND_POLY; /* d = 4, degree 2: 15 expanded features */
    ck_assert_int_eq(pt_bounds_check_reference(ds, &p, ref), PT_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(pt_last_error(), "15 (the expanded features)"));
    pt_model_free(ref);
    pt_model *three = pt_model_alloc_multiclass(4, 3, (const double[]){0, 1, 2});
    ck_assert_int_eq(pt_bounds_check_reference(ds, &p, three), PT_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(pt_last_error(), "two-class"));
    pt_model_free(three);
    pt_dataset_free(ds);
    /* more than two classes; no generator w* without a reference */
    pt_dataset *blobs = gen(PT_GEN_BLOBS, 90, 4, 0.1, 1);
    pt_train_params_init(&p);
    ck_assert_int_eq(pt_bounds_check_reference(blobs, &p, NULL), PT_ERR_INVALID);
    ref = pt_model_alloc_linear(4);
    ref->w[1] = 1.0f;
    b = run_bounds(blobs, &p, ref, 3);
    ck_assert_int_eq(b.covered, 0);
    ck_assert_ptr_nonnull(strstr(b.reason, "two classes"));
    pt_model_free(ref);
    pt_dataset_free(blobs);
}
END_TEST

static pt_model *train_to_convergence(const pt_dataset *ds, pt_train_params *p)
{
    p->epochs = 100000;
    pt_model *m;
    pt_train_report r;
    ck_assert_msg(pt_train(ds, p, &m, &r) == PT_OK, "%s", pt_last_error());
    ck_assert_int_eq(r.converged, 1);
    pt_train_report_clear(&r);
    return m;
}

/* R and gamma in the feature space: a polynomial kernel model and a model trained on the
 * same explicit expansion are the same w* in the same phi (phi(x).phi(z) = (x.z + 1)^2), so
 * the kernel path's and the expanded run's R and gamma agree; runs in either space (shuffled,
 * with a margin) keep within their bounds; an RBF kernel's phi has |phi(x)|^2 = 1 (+ 1 for the
 * bias); the linear kernel trains in the input space and makes the online run's updates. */
START_TEST(test_feature_space_bounds)
{
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.kind = PT_GEN_CIRCLE;
    g.n = 400;
    g.d = 2;
    g.margin = 0.2;
    pt_dataset *ds;
    ck_assert_int_eq(pt_generate(&g, &ds), PT_OK);
    pt_train_params kp, ep;
    pt_train_params_init(&kp);
    kp.path = PT_PATH_KERNEL;
    kp.kernel.kind = PT_KERNEL_POLY;
    kp.kernel.degree = 2;
    kp.kernel.gamma = 1.0f; /* the expansion's (x.z + 1)^2 */
    pt_train_params_init(&ep);
    ep.expand.kind = PT_EXPAND_POLY;
    ep.expand.degree = 2;
    pt_model *kref = train_to_convergence(ds, &kp), *eref = train_to_convergence(ds, &ep);
    pt_run_bounds kb = run_bounds(ds, &kp, kref, 1), eb = run_bounds(ds, &ep, eref, 1);
    ck_assert_int_eq(kb.covered, 1);
    ck_assert_int_eq(eb.covered, 1);
    ck_assert_str_eq(kb.space, "kernel");
    ck_assert_str_eq(eb.space, "expanded");
    ck_assert_int_eq(kb.separable, 1);
    ck_assert_double_eq_tol(kb.R, eb.R, 1e-5 * eb.R);
    ck_assert_double_eq_tol(kb.gamma, eb.gamma, 1e-3 * eb.gamma);
    for (int t = 0; t < 2; t++) {
        kp.shuffle = ep.shuffle = 1;
        kp.margin = ep.margin = t ? 2.0f : 0.0f;
        kp.eta = ep.eta = t ? 0.5f : 1.0f;
        pt_train_params *ps[2] = {&kp, &ep};
        pt_model *refs[2] = {kref, eref};
        for (int s = 0; s < 2; s++) {
            pt_train_report r;
            pt_model *m;
            ps[s]->epochs = 100000;
            ck_assert_int_eq(pt_train(ds, ps[s], &m, &r), PT_OK);
            pt_run_bounds b = run_bounds(ds, ps[s], refs[s], r.epochs_run);
            ck_assert_int_eq(b.covered, 1);
            ck_assert_msg((double)r.updates <= b.separable_bound && (double)r.updates <= b.hinge_bound,
                          "space %s tau %g: %zu updates, bounds %g %g", b.space, (double)ps[s]->margin,
                          r.updates, b.separable_bound, b.hinge_bound);
            pt_train_report_clear(&r);
            pt_model_free(m);
        }
    }
    /* a kernel reference of another kernel: no claim */
    kp.kernel.kind = PT_KERNEL_RBF;
    pt_run_bounds rb = run_bounds(ds, &kp, kref, 1);
    ck_assert_int_eq(rb.covered, 0);
    pt_model *rref = train_to_convergence(ds, &kp);
    rb = run_bounds(ds, &kp, rref, 1);
    ck_assert_int_eq(rb.covered, 1);
    ck_assert_double_eq_tol(rb.R, sqrt(2.0), 1e-6);
    pt_model_free(rref);
    pt_model_free(kref);
    pt_model_free(eref);
    pt_dataset_free(ds);
    /* linear kernel: the online run's updates and the same input-space bounds */
    ds = gen(PT_GEN_SEPARABLE, 300, 5, 0.1, 7);
    pt_train_params op;
    pt_train_params_init(&op);
    op.margin = 1.0f;
    kp = op;
    kp.path = PT_PATH_KERNEL;
    kp.kernel.kind = PT_KERNEL_LINEAR;
    pt_train_report ro, rk;
    pt_model *mo, *mk;
    op.epochs = kp.epochs = 100000;
    ck_assert_int_eq(pt_train(ds, &op, &mo, &ro), PT_OK);
    ck_assert_int_eq(pt_train(ds, &kp, &mk, &rk), PT_OK);
    ck_assert_uint_eq(ro.updates, rk.updates);
    pt_run_bounds bo = run_bounds(ds, &op, NULL, ro.epochs_run), bk = run_bounds(ds, &kp, NULL, rk.epochs_run);
    ck_assert_int_eq(bk.covered, 1);
    ck_assert_str_eq(bk.space, "input");
    ck_assert(bo.separable_bound == bk.separable_bound && bo.hinge_bound == bk.hinge_bound);
    ck_assert((double)rk.updates <= bk.separable_bound);
    pt_train_report_clear(&ro);
    pt_train_report_clear(&rk);
    pt_model_free(mo);
    pt_model_free(mk);
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
    tcase_add_test(tc, test_run_bounds_formulas);
    tcase_add_test(tc, test_margin_perceptron_within_bound);
    tcase_add_test(tc, test_hinge_bound_over_passes);
    tcase_add_test(tc, test_runs_not_covered);
    tcase_add_test(tc, test_feature_space_bounds);
    tcase_add_test(tc, test_sparse_bounds);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
