/* The online path against the lecture notes (docs/theory.md): worked example, XOR, the circle
 * embedding, the mistake bounds, the averaged perceptron's lazy sum, shuffling. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paths/paths.h"
#include "testutil.h"

static pt_model *train(const pt_dataset *ds, pt_train_params *p, pt_train_report *r)
{
    pt_model *m = NULL;
    pt_status s = pt_train(ds, p, &m, r);
    ck_assert_msg(s == PT_OK, "pt_train: %s", pt_last_error());
    return m;
}

/* Two runs made the same mistakes in every epoch (what names the run on a failure). */
static void assert_same_mistakes(const pt_train_report *r, const pt_train_report *ref, const char *what)
{
    ck_assert_msg(r->epochs_run == ref->epochs_run, "%s: %d epochs, not %d", what, r->epochs_run,
                  ref->epochs_run);
    ck_assert_msg(memcmp(r->mistakes_per_epoch, ref->mistakes_per_epoch, (size_t)r->epochs_run * sizeof(size_t)) == 0,
                  "%s: other mistakes than the reference run", what);
}

/* Two models have the same w and b, bit for bit. */
static void assert_same_weights(const pt_model *m, const pt_model *ref, size_t d)
{
    float b1, b2;
    const float *w1 = pt_model_weights(m, &b1), *w2 = pt_model_weights(ref, &b2);
    ck_assert_mem_eq(w1, w2, d * sizeof(float));
    ck_assert_mem_eq(&b1, &b2, sizeof b1);
}

/* The notes on separable and inseparable data: (1,0) labelled + and (0,1) labelled -, no
 * bias, w = 0: two updates give w = (1,-1), then an epoch with no mistake. */
START_TEST(test_worked_example)
{
    const float x[] = {1, 0, 0, 1};
    const double y[] = {1, -1};
    pt_dataset *ds = tu_dataset(2, 2, x, y);
    pt_train_params p;
    pt_train_params_init(&p);
    p.bias = 0;
    p.isa = PT_ISA_SCALAR;
    pt_train_report r;
    pt_model *m = train(ds, &p, &r);
    float b;
    const float *w = pt_model_weights(m, &b);
    ck_assert_float_eq(w[0], 1.0f);
    ck_assert_float_eq(w[1], -1.0f);
    ck_assert_float_eq(b, 0.0f);
    ck_assert_int_eq(r.epochs_run, 2);
    ck_assert_uint_eq(r.mistakes_per_epoch[0], 2);
    ck_assert_uint_eq(r.mistakes_per_epoch[1], 0);
    ck_assert_uint_eq(r.updates, 2);
    ck_assert_int_eq(r.converged, 1);
    pt_train_report_clear(&r);
    pt_model_free(m);
    pt_dataset_free(ds);
}
END_TEST

/* The notes on the threshold unit: XOR is not linearly separable, with or without bias. */
START_TEST(test_xor_never_separated)
{
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.kind = PT_GEN_XOR;
    g.n = 200;
    g.d = 2;
    pt_dataset *ds;
    ck_assert_int_eq(pt_generate(&g, &ds), PT_OK);
    pt_train_params p;
    pt_train_params_init(&p);
    p.epochs = 50;
    pt_train_report r;
    pt_model *m = train(ds, &p, &r);
    ck_assert_int_eq(r.converged, 0);
    ck_assert_int_eq(r.epochs_run, 50);
    for (int e = 0; e < r.epochs_run; e++) ck_assert_uint_gt(r.mistakes_per_epoch[e], 0);
    pt_train_report_clear(&r);
    pt_model_free(m);
    pt_dataset_free(ds);

    /* the four corners, the textbook case */
    const float x[] = {0, 0, 0, 1, 1, 0, 1, 1};
    const double y[] = {-1, 1, 1, -1};
    ds = tu_dataset(4, 2, x, y);
    p.epochs = 1000;
    m = train(ds, &p, &r);
    ck_assert_int_eq(r.converged, 0);
    pt_train_report_clear(&r);
    pt_model_free(m);
    pt_dataset_free(ds);
}
END_TEST

/* The notes on perceptron learning and kernels: the circle is separable after
 * phi(x1, x2) = (x1, x2, x1^2 + x2^2). */
START_TEST(test_circle_embedding)
{
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.kind = PT_GEN_CIRCLE;
    g.n = 500;
    g.d = 2;
    g.margin = 0.2;
    pt_dataset *ds;
    ck_assert_int_eq(pt_generate(&g, &ds), PT_OK);
    pt_train_params p;
    pt_train_params_init(&p);
    p.epochs = 2000;
    pt_train_report r;
    /* without the embedding: not separable */
    pt_model *m = train(ds, &p, &r);
    ck_assert_int_eq(r.converged, 0);
    pt_train_report_clear(&r);
    pt_model_free(m);

    pt_dataset *phi = pt_dataset_create(g.n, 3);
    double *labels = malloc(g.n * sizeof *labels);
    for (size_t i = 0; i < g.n; i++) {
        const float *x = pt_dataset_row_const(ds, i);
        float *z = pt_dataset_row(phi, i);
        z[0] = x[0];
        z[1] = x[1];
        z[2] = x[0] * x[0] + x[1] * x[1];
        labels[i] = pt_dataset_label(ds, i);
    }
    ck_assert_int_eq(pt_dataset_set_labels(phi, labels), PT_OK);
    m = train(phi, &p, &r);
    ck_assert_int_eq(r.converged, 1);
    pt_eval ev;
    ck_assert_int_eq(pt_model_evaluate(m, phi, &ev), PT_OK);
    ck_assert_double_eq(ev.accuracy, 1.0);
    pt_train_report_clear(&r);
    pt_model_free(m);
    free(labels);
    pt_dataset_free(phi);
    pt_dataset_free(ds);
}
END_TEST

/* Block/Novikoff: on separable data the updates never exceed (R/gamma)^2, with R and gamma
 * as the generator stored them (R over the vectors trained on: bias off here, so the stored
 * R applies; with bias on, R grows by the constant coordinate). */
START_TEST(test_mistake_bound_separable)
{
    const size_t dims[] = {2, 5, 16, 64};
    const double margins[] = {0.05, 0.1, 0.3};
    for (uint64_t seed = 1; seed <= 4; seed++)
        for (size_t a = 0; a < 4; a++)
            for (size_t b = 0; b < 3; b++) {
                pt_gen_params g;
                pt_gen_params_init(&g);
                g.n = 1000;
                g.d = dims[a];
                g.margin = margins[b];
                g.seed = seed;
                pt_dataset *ds;
                ck_assert_int_eq(pt_generate(&g, &ds), PT_OK);
                double R, gamma;
                ck_assert_ptr_nonnull(pt_dataset_truth(ds, &R, &gamma));
                ck_assert(gamma >= g.margin);
                for (int bias = 0; bias <= 1; bias++) {
                    pt_train_params p;
                    pt_train_params_init(&p);
                    p.bias = bias;
                    p.epochs = 100000;
                    p.shuffle = (int)(seed & 1);
                    p.seed = seed;
                    pt_train_report r;
                    pt_model *m = train(ds, &p, &r);
                    double Rt = bias ? sqrt(R * R + 1.0) : R;
                    double bound = (Rt / gamma) * (Rt / gamma);
                    ck_assert_int_eq(r.converged, 1);
                    ck_assert_msg((double)r.updates <= bound, "seed %llu d %zu G %g: %zu updates > %g",
                                  (unsigned long long)seed, g.d, g.margin, r.updates, bound);
                    pt_train_report_clear(&r);
                    pt_model_free(m);
                }
                pt_dataset_free(ds);
            }
}
END_TEST

/* The averaged perceptron equals the explicit average of every intermediate w (one per
 * sample visited), computed here in double. */
START_TEST(test_averaged_equals_explicit_average)
{
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.kind = PT_GEN_NOISY;
    g.n = 60;
    g.d = 7;
    g.seed = 3;
    pt_dataset *ds;
    ck_assert_int_eq(pt_generate(&g, &ds), PT_OK);
    pt_train_params p;
    pt_train_params_init(&p);
    p.variant = PT_VARIANT_AVERAGED;
    p.epochs = 5;
    p.eta = 0.5f;
    p.isa = PT_ISA_SCALAR;
    pt_train_report r;
    pt_model *m = train(ds, &p, &r);

    /* replay in double */
    size_t d = g.d;
    double w[8] = {0}, b = 0, sum[8] = {0}, sumb = 0;
    size_t T = 0, updates = 0;
    for (int e = 0; e < r.epochs_run; e++)
        for (size_t i = 0; i < g.n; i++) {
            const float *x = pt_dataset_row_const(ds, i);
            double y = pt_dataset_y(ds)[i], s = b;
            for (size_t j = 0; j < d; j++) s += w[j] * x[j];
            if (y * s <= 0) {
                for (size_t j = 0; j < d; j++) w[j] += 0.5 * y * x[j];
                b += 0.5 * y;
                updates++;
            }
            for (size_t j = 0; j < d; j++) sum[j] += w[j];
            sumb += b;
            T++;
        }
    ck_assert_uint_eq(updates, r.updates);
    float fb;
    const float *fw = pt_model_weights(m, &fb);
    for (size_t j = 0; j < d; j++)
        ck_assert_msg(fabs(fw[j] - sum[j] / T) <= 1e-4 * (1 + fabs(sum[j] / T)), "w[%zu] %g vs %g", j,
                      fw[j], sum[j] / T);
    ck_assert(fabs(fb - sumb / T) <= 1e-4 * (1 + fabs(sumb / T)));
    pt_train_report_clear(&r);
    pt_model_free(m);
    pt_dataset_free(ds);
}
END_TEST

/* The same seed gives the same run; another seed a different order. */
START_TEST(test_shuffle_deterministic)
{
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.kind = PT_GEN_NOISY;
    g.n = 500;
    g.d = 10;
    pt_dataset *ds;
    ck_assert_int_eq(pt_generate(&g, &ds), PT_OK);
    pt_train_params p;
    pt_train_params_init(&p);
    p.shuffle = 1;
    p.epochs = 3;
    pt_train_report r1, r2, r3;
    pt_model *m1 = train(ds, &p, &r1), *m2 = train(ds, &p, &r2);
    p.seed = 99;
    pt_model *m3 = train(ds, &p, &r3);
    ck_assert_mem_eq(pt_model_weights(m1, NULL), pt_model_weights(m2, NULL), g.d * sizeof(float));
    ck_assert_int_ne(memcmp(pt_model_weights(m1, NULL), pt_model_weights(m3, NULL), g.d * sizeof(float)), 0);
    pt_train_report_clear(&r1);
    pt_train_report_clear(&r2);
    pt_train_report_clear(&r3);
    pt_model_free(m1);
    pt_model_free(m2);
    pt_model_free(m3);
    pt_dataset_free(ds);
}
END_TEST

/* The margin perceptron (tau > 0) keeps updating until every point has y w.x > tau. */
START_TEST(test_margin_perceptron)
{
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.n = 300;
    g.d = 4;
    g.margin = 0.2;
    pt_dataset *ds;
    ck_assert_int_eq(pt_generate(&g, &ds), PT_OK);
    pt_train_params p;
    pt_train_params_init(&p);
    p.margin = 1.0f;
    p.epochs = 100000;
    pt_train_report r;
    pt_model *m = train(ds, &p, &r);
    ck_assert_int_eq(r.converged, 1);
    float *s = malloc(g.n * sizeof *s);
    ck_assert_int_eq(pt_model_scores(m, ds, s), PT_OK);
    for (size_t i = 0; i < g.n; i++) ck_assert_float_gt(pt_dataset_y(ds)[i] * s[i], 1.0f);
    free(s);
    pt_train_report_clear(&r);
    pt_model_free(m);
    pt_dataset_free(ds);
}
END_TEST

START_TEST(test_label_errors)
{
    const float x[] = {1, 2, 3};
    const double one[] = {1, 1, 1}, three[] = {0, 1, 2};
    pt_dataset *ds = tu_dataset(3, 1, x, one);
    pt_train_params p;
    pt_train_params_init(&p);
    pt_model *m;
    ck_assert_int_eq(pt_train(ds, &p, &m, NULL), PT_ERR_LABELS);
    ck_assert_ptr_nonnull(strstr(pt_last_error(), "training needs two classes"));
    pt_dataset_free(ds);
    ds = tu_dataset(3, 1, x, three);
    p.multiclass = PT_MULTI_DIRECT;
    p.path = PT_PATH_BATCH;
    ck_assert_int_eq(pt_train(ds, &p, &m, NULL), PT_ERR_LABELS);
    p.multiclass = PT_MULTI_OVR;
    p.path = PT_PATH_ONLINE;
    ck_assert_ptr_nonnull(strstr(pt_last_error(), "3 classes"));
    pt_dataset_free(ds);
    /* bad parameters */
    ds = tu_dataset(3, 1, x, (const double[]){0, 1, 0});
    p.epochs = 0;
    ck_assert_int_eq(pt_train(ds, &p, &m, NULL), PT_ERR_INVALID);
    p.epochs = 1;
    p.eta = -1;
    ck_assert_int_eq(pt_train(ds, &p, &m, NULL), PT_ERR_INVALID);
    pt_dataset_free(ds);
}
END_TEST

/* {0,1} and arbitrary two-valued labels map to -1/+1 by order, and predictions give them back. */
START_TEST(test_label_mapping)
{
    const float x[] = {-2, -1, 1, 2};
    const double y[] = {3, 3, 7, 7};
    pt_dataset *ds = tu_dataset(4, 1, x, y);
    pt_train_params p;
    pt_train_params_init(&p);
    pt_train_report r;
    pt_model *m = train(ds, &p, &r);
    double pred[4];
    ck_assert_int_eq(pt_model_predict(m, ds, pred), PT_OK);
    for (int i = 0; i < 4; i++) ck_assert_double_eq(pred[i], y[i]);
    pt_train_report_clear(&r);
    pt_model_free(m);
    pt_dataset_free(ds);
}
END_TEST

/* Absurd values make the weights overflow: a clear numeric error, not a model of Inf. */
START_TEST(test_non_finite_weights)
{
    const float x[] = {3e38f, -3e38f, -3e38f, 3e38f};
    const double y[] = {1, -1};
    pt_dataset *ds = tu_dataset(2, 2, x, y);
    pt_train_params p;
    pt_train_params_init(&p);
    p.eta = 1e10f;
    pt_model *m = NULL;
    ck_assert_int_eq(pt_train(ds, &p, &m, NULL), PT_ERR_NUMERIC);
    ck_assert_ptr_null(m);
    ck_assert_ptr_nonnull(strstr(pt_last_error(), "epoch 1"));
    pt_dataset_free(ds);
}
END_TEST

/* Integer-valued data: every dot and update is exact in float, so every ISA and both passes
 * must make the same mistakes and end with bit-identical weights. */
static pt_dataset *integer_dataset(size_t n, size_t d, uint64_t seed)
{
    pt_rng rng;
    pt_rng_seed(&rng, seed);
    float *x = malloc(n * d * sizeof *x);
    double *y = malloc(n * sizeof *y);
    int w[64];
    for (size_t j = 0; j < d; j++) w[j] = (int)pt_rng_below(&rng, 7) - 3;
    for (size_t i = 0; i < n; i++) {
        long s = 0;
        for (size_t j = 0; j < d; j++) {
            int v = (int)pt_rng_below(&rng, 9) - 4;
            x[i * d + j] = (float)v;
            s += (long)v * w[j];
        }
        /* 5% label noise so that training runs many epochs */
        y[i] = (s >= 0) != (pt_rng_uniform(&rng) < 0.05) ? 1.0 : -1.0;
    }
    pt_dataset *ds = tu_dataset(n, d, x, y);
    free(x);
    free(y);
    return ds;
}

START_TEST(test_isa_and_pass_identical)
{
    const size_t dims[] = {3, 16, 37};
    for (size_t a = 0; a < 3; a++) {
        pt_dataset *ds = integer_dataset(3000, dims[a], 11 + a);
        for (int variant = 0; variant <= 1; variant++)
            for (int shuffle = 0; shuffle <= 1; shuffle++) {
                pt_train_params p;
                pt_train_params_init(&p);
                p.epochs = 6;
                p.shuffle = shuffle;
                p.variant = variant ? PT_VARIANT_AVERAGED : PT_VARIANT_CLASSIC;
                p.isa = PT_ISA_SCALAR;
                p.online.pass = PT_PASS_SEQUENTIAL;
                pt_train_report ref;
                pt_model *mref = train(ds, &p, &ref);
                for (int isa = PT_ISA_SCALAR; isa <= PT_ISA_NEON; isa++) {
                    if (!pt_isa_available((pt_isa)isa)) continue;
                    for (int pass = PT_PASS_SEQUENTIAL; pass <= PT_PASS_BLOCKED; pass++)
                        for (int threads = 1; threads <= 2; threads++) {
                            p.isa = (pt_isa)isa;
                            p.online.pass = (pt_online_pass)pass;
                            p.threads = threads;
                            pt_train_report r;
                            pt_model *m = train(ds, &p, &r);
                            char what[96];
                            snprintf(what, sizeof what, "d %zu variant %d shuffle %d isa %d pass %d threads %d",
                                     dims[a], variant, shuffle, isa, pass, threads);
                            assert_same_mistakes(&r, &ref, what);
                            if (!variant) {
                                assert_same_weights(m, mref, dims[a]);
                            } else {
                                /* the average divides by T: equal up to that rounding */
                                float b1, b2;
                                const float *w1 = pt_model_weights(m, &b1), *w2 = pt_model_weights(mref, &b2);
                                for (size_t j = 0; j < dims[a]; j++)
                                    ck_assert_float_eq_tol(w1[j], w2[j], 1e-4f * (1 + fabsf(w2[j])));
                            }
                            pt_train_report_clear(&r);
                            pt_model_free(m);
                        }
                }
                pt_train_report_clear(&ref);
                pt_model_free(mref);
            }
        pt_dataset_free(ds);
    }
}
END_TEST

/* An identity row map that asks training to stop at its stop_at-th call: a deterministic
 * interrupt in the middle of an epoch. */
typedef struct stopper {
    size_t calls, stop_at, d;
    pt_stop *stop; /* the run's own token */
} stopper;

static void stop_map(const void *ctx, const float *x, float *out)
{
    stopper *st = (stopper *)ctx;
    memcpy(out, x, pt_stride_for(st->d) * sizeof(float));
    if (++st->calls == st->stop_at) pt_stop_request(st->stop);
}

static pt_model *train_mapped(const pt_dataset *ds, pt_train_params *p, stopper *st, pt_status *status)
{
    const pt_kernels *k;
    ck_assert_int_eq(pt_kernels_get(PT_ISA_AUTO, &k), PT_OK);
    pt_row_map map = {.d_out = ds->d, .map = stop_map, .ctx = st};
    pt_model *m = pt_model_alloc_linear(ds->d);
    pt_model_set_meta(m, ds, p);
    pt_train_report r;
    memset(&r, 0, sizeof r);
    pt_train_params call = *p;
    ck_assert_ptr_nonnull(call.stop = st->stop = pt_stop_create());
    *status = pt_train_online_mapped(ds, &map, &call, k, m, &r);
    pt_stop_free(st->stop);
    m->epochs_run = r.epochs_run; /* as pt_train records it */
    pt_train_report_clear(&r);
    return m;
}

/* Interrupted anywhere (mid-epoch, at an epoch's last sample), saved, loaded and resumed: the
 * same weights as the uninterrupted run, bit for bit. */
START_TEST(test_resume_after_interrupt)
{
    pt_dataset *ds = integer_dataset(700, 9, 5);
    for (int variant = 0; variant <= 1; variant++) {
        pt_train_params p;
        pt_train_params_init(&p);
        p.epochs = 6;
        p.shuffle = 1;
        p.seed = 17;
        p.variant = variant ? PT_VARIANT_AVERAGED : PT_VARIANT_CLASSIC;
        stopper never = {.stop_at = 0, .d = ds->d};
        pt_status st;
        pt_model *full = train_mapped(ds, &p, &never, &st);
        ck_assert_int_eq(st, PT_OK);
        const size_t stops[] = {1, 350, 700, 701, 2099, 3500};
        for (size_t k = 0; k < sizeof stops / sizeof stops[0]; k++) {
            stopper s1 = {.stop_at = stops[k], .d = ds->d};
            pt_model *part = train_mapped(ds, &p, &s1, &st);
            ck_assert_int_eq(st, PT_ERR_INTERRUPTED);
            ck_assert(pt_model_resumable(part));
            const char *path = tu_path("resume", ".model");
            ck_assert_msg(pt_model_save(part, path) == PT_OK, "%s", pt_last_error());
            pt_model *loaded;
            ck_assert_msg(pt_model_load(path, &loaded) == PT_OK, "%s", pt_last_error());
            pt_train_params q = p;
            q.resume = loaded;
            stopper never2 = {.stop_at = 0, .d = ds->d};
            pt_model *rest = train_mapped(ds, &q, &never2, &st);
            ck_assert_msg(st == PT_OK, "%s", pt_last_error());
            ck_assert_msg(memcmp(rest->w, full->w, ds->d * sizeof(float)) == 0,
                          "variant %d, stopped at call %zu: weights differ", variant, stops[k]);
            ck_assert_float_eq(rest->b, full->b);
            pt_model_free(part);
            pt_model_free(loaded);
            pt_model_free(rest);
        }
        pt_model_free(full);
    }
    pt_dataset_free(ds);
}
END_TEST

/* The epoch hook's snapshots are checkpoints: resuming from the one of epoch 3 gives the
 * uninterrupted run's model, on the blocked pass too. */
static pt_model *saved_checkpoint;

static int keep_epoch_3(const pt_model *m, int epoch, size_t mistakes, void *user)
{
    (void)mistakes;
    (void)user;
    if (epoch == 3) saved_checkpoint = pt_model_clone(m);
    return 0;
}

START_TEST(test_resume_from_checkpoint)
{
    pt_dataset *ds = integer_dataset(5000, 16, 8);
    for (int pass = PT_PASS_SEQUENTIAL; pass <= PT_PASS_BLOCKED; pass++) {
        pt_train_params p;
        pt_train_params_init(&p);
        p.epochs = 8;
        p.shuffle = 1;
        p.online.pass = (pt_online_pass)pass;
        p.threads = 2;
        p.variant = PT_VARIANT_AVERAGED;
        p.epoch_hook = keep_epoch_3;
        pt_train_report r1, r2;
        pt_model *full = train(ds, &p, &r1);
        ck_assert_ptr_nonnull(saved_checkpoint);
        p.epoch_hook = NULL;
        p.resume = saved_checkpoint;
        pt_model *rest = train(ds, &p, &r2);
        ck_assert_mem_eq(pt_model_weights(rest, NULL), pt_model_weights(full, NULL), 16 * sizeof(float));
        /* the resumed report lists the epochs after the three it took over; the totals are
         * the whole run's */
        ck_assert_int_eq(r2.epochs_before, 3);
        ck_assert_int_eq(r2.epochs_run, r1.epochs_run);
        ck_assert_mem_eq(r2.mistakes_per_epoch, r1.mistakes_per_epoch + 3,
                         (size_t)(r1.epochs_run - 3) * sizeof(size_t));
        ck_assert_uint_eq(r1.updates, r2.updates);
        ck_assert_int_eq(r1.converged, r2.converged);
        /* each epoch's wall time: there, >= 0, adding up to no more than the call */
        const pt_train_report *reps[2] = {&r1, &r2};
        for (int k = 0; k < 2; k++) {
            const pt_train_report *q = reps[k];
            ck_assert_ptr_nonnull(q->seconds_per_epoch);
            double sum = 0.0;
            for (int e = 0; e < q->epochs_run - q->epochs_before; e++) {
                ck_assert(isfinite(q->seconds_per_epoch[e]) && q->seconds_per_epoch[e] >= 0.0);
                sum += q->seconds_per_epoch[e];
            }
            ck_assert(sum <= q->train_seconds * (1.0 + 1e-9));
        }
        /* a checkpoint for other data is refused */
        pt_dataset *other = integer_dataset(4000, 16, 8);
        pt_model *m;
        ck_assert_int_eq(pt_train(other, &p, &m, NULL), PT_ERR_FORMAT);
        pt_dataset_free(other);
        pt_model_free(saved_checkpoint);
        saved_checkpoint = NULL;
        pt_train_report_clear(&r1);
        pt_train_report_clear(&r2);
        pt_model_free(full);
        pt_model_free(rest);
    }
    pt_dataset_free(ds);
}
END_TEST

/* The voted perceptron: the vectors and survival counts of Freund and Schapire, replayed by
 * hand; the vote through a model file; the memory-budget refusal. */
START_TEST(test_voted)
{
    pt_dataset *ds = integer_dataset(200, 5, 21);
    pt_train_params p;
    pt_train_params_init(&p);
    p.variant = PT_VARIANT_VOTED;
    p.epochs = 3;
    pt_train_report r;
    pt_model *m = train(ds, &p, &r);
    /* replay: v_1 = 0, c = survival; on a mistake store (v, c), update, c = 1 */
    double w[5] = {0}, b = 0, c = 0;
    size_t nv = 0;
    double votes_c[4096];
    for (int e = 0; e < r.epochs_run; e++)
        for (size_t i = 0; i < 200; i++) {
            const float *x = pt_dataset_row_const(ds, i);
            double y = pt_dataset_y(ds)[i], s = b;
            for (int j = 0; j < 5; j++) s += w[j] * x[j];
            if (y * s <= 0) {
                if (c > 0) votes_c[nv++] = c;
                for (int j = 0; j < 5; j++) w[j] += y * x[j];
                b += y;
                c = 1;
            } else {
                c += 1;
            }
        }
    votes_c[nv++] = c;
    ck_assert_uint_eq(m->n_votes, nv);
    for (size_t v = 0; v < nv; v++) ck_assert_float_eq(m->vote_c[v], (float)votes_c[v]);
    for (int j = 0; j < 5; j++) ck_assert_float_eq(m->votes[(nv - 1) * 16 + j], (float)w[j]);
    /* the prediction is the weighted vote, and survives a model file */
    float *s1 = malloc(200 * sizeof *s1), *s2 = malloc(200 * sizeof *s2);
    ck_assert_int_eq(pt_model_scores(m, ds, s1), PT_OK);
    for (size_t i = 0; i < 200; i += 37) {
        double vote = 0;
        for (size_t v = 0; v < nv; v++) {
            double s = m->vote_b[v];
            for (int j = 0; j < 5; j++) s += (double)m->votes[v * 16 + j] * pt_dataset_row_const(ds, i)[j];
            vote += s >= 0 ? m->vote_c[v] : -m->vote_c[v]; /* sigma(0) = +1 */
        }
        ck_assert_float_eq_tol(s1[i], (float)vote, 1e-3f);
    }
    const char *path = tu_path("voted", ".model");
    pt_model *back;
    ck_assert_int_eq(pt_model_save(m, path), PT_OK);
    ck_assert_msg(pt_model_load(path, &back) == PT_OK, "%s", pt_last_error());
    ck_assert_int_eq(pt_model_scores(back, ds, s2), PT_OK);
    ck_assert_mem_eq(s1, s2, 200 * sizeof(float));
    free(s1);
    free(s2);
    pt_model_free(back);
    pt_train_report_clear(&r);
    pt_model_free(m);
    /* a budget too small for the vectors: refused with a message that says what to do (rows
     * of 1024 features with 10% of labels flipped: hundreds of vectors of 4 KiB, over 1 MiB,
     * the least budget) */
    pt_dataset_free(ds);
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.kind = PT_GEN_NOISY;
    g.n = 2000;
    g.d = 1024;
    ck_assert_int_eq(pt_generate(&g, &ds), PT_OK);
    p.mem_budget_bytes = (size_t)1 << 20;
    ck_assert_int_eq(pt_train(ds, &p, &m, NULL), PT_ERR_LIMIT);
    ck_assert_ptr_nonnull(strstr(pt_last_error(), "PT_VARIANT_AVERAGED"));
    pt_dataset_free(ds);
}
END_TEST

static pt_dataset *generated(pt_gen_kind kind, size_t n, size_t d, size_t classes, uint64_t seed);

/* What a cap of K keeps of an uncapped voted run's vectors (full): the last (the current
 * one) and, of the others, the K - 1 of largest survival counts (of equal counts the later),
 * in their order; capped must hold exactly those, bit for bit. */
static void assert_cap_of(const pt_model *capped, const pt_model *full, size_t K)
{
    const size_t nv = full->n_votes, len = pt_stride_for(full->d);
    ck_assert_uint_gt(nv, K); /* the cap drops some */
    char *keep = calloc(nv, 1);
    keep[nv - 1] = 1;
    for (size_t t = 0; t + 1 < K; t++) {
        size_t best = SIZE_MAX;
        for (size_t v = 0; v + 1 < nv; v++)
            if (!keep[v] && (best == SIZE_MAX || full->vote_c[v] >= full->vote_c[best])) best = v;
        keep[best] = 1;
    }
    size_t k = 0;
    for (size_t v = 0; v < nv; v++) {
        if (!keep[v]) continue;
        ck_assert_uint_lt(k, capped->n_votes);
        ck_assert_float_eq(capped->vote_c[k], full->vote_c[v]);
        ck_assert_float_eq(capped->vote_b[k], full->vote_b[v]);
        ck_assert_mem_eq(capped->votes + k * len, full->votes + v * len, len * sizeof(float));
        k++;
    }
    ck_assert_uint_eq(capped->n_votes, K);
    free(keep);
}

static pt_model *cap_checkpoint;
static int keep_epoch_2(const pt_model *m, int epoch, size_t mistakes, void *user)
{
    (void)mistakes, (void)user;
    if (epoch == 2) {
        cap_checkpoint = pt_model_clone(m);
        ck_assert_uint_le(m->n_votes, 40); /* the current vector included */
    }
    return 0;
}

/* pt_train_params.voted_max_vectors: the vectors the rule keeps, the same through an epoch
 * checkpoint saved, loaded and resumed, and through the final model's file; one-vs-rest caps
 * each class; another variant refuses a cap. */
START_TEST(test_voted_cap)
{
    pt_dataset *ds = generated(PT_GEN_NOISY, 1500, 6, 2, 5);
    pt_train_params p;
    pt_train_params_init(&p);
    p.variant = PT_VARIANT_VOTED;
    p.epochs = 4;
    p.shuffle = 1;
    pt_model *full = train(ds, &p, NULL);
    p.online.voted_max_vectors = 40;
    p.epoch_hook = keep_epoch_2;
    pt_model *capped = train(ds, &p, NULL);
    assert_cap_of(capped, full, 40);
    ck_assert_mem_eq(capped->w, full->w, pt_stride_for(6) * sizeof(float));
    /* the checkpoint of epoch 2, through its file, resumes to the same vectors */
    ck_assert_ptr_nonnull(cap_checkpoint);
    const char *path = tu_path("voted_cap", ".model");
    pt_model *back, *rest;
    ck_assert_int_eq(pt_model_save(cap_checkpoint, path), PT_OK);
    ck_assert_msg(pt_model_load(path, &back) == PT_OK, "%s", pt_last_error());
    p.epoch_hook = NULL;
    p.resume = back;
    rest = train(ds, &p, NULL);
    assert_cap_of(rest, full, 40);
    p.resume = NULL;
    pt_model_free(back);
    pt_model_free(rest);
    pt_model_free(cap_checkpoint);
    cap_checkpoint = NULL;
    /* the final model's file keeps the cap and the vectors */
    ck_assert_int_eq(pt_model_save(capped, path), PT_OK);
    ck_assert_msg(pt_model_load(path, &back) == PT_OK, "%s", pt_last_error());
    ck_assert_uint_eq(back->params.online.voted_max_vectors, 40);
    assert_cap_of(back, full, 40);
    pt_model_free(back);
    /* K = 1: the last iterate alone */
    p.online.voted_max_vectors = 1;
    pt_model *one = train(ds, &p, NULL);
    assert_cap_of(one, full, 1);
    pt_model_free(one);
    pt_model_free(capped);
    pt_model_free(full);
    /* one-vs-rest: each class's own vectors, capped */
    pt_dataset *three = generated(PT_GEN_BLOBS, 900, 2, 3, 9);
    p.online.voted_max_vectors = 0;
    full = train(three, &p, NULL);
    p.online.voted_max_vectors = 4;
    capped = train(three, &p, NULL);
    for (size_t c = 0; c < 3; c++) assert_cap_of(capped->sub[c], full->sub[c], 4);
    pt_model_free(full);
    pt_model_free(capped);
    pt_dataset_free(three);
    /* a cap is the voted variant's */
    p.variant = PT_VARIANT_AVERAGED;
    pt_model *m = NULL;
    ck_assert_int_eq(pt_train(ds, &p, &m, NULL), PT_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(pt_last_error(), "voted_max_vectors"));
    pt_dataset_free(ds);
}
END_TEST

/* The vote of dense rows is scored a block of rows against a block of vectors at a time: the
 * scores are pt_vote_score's row by row, bit for bit, on float32 rows and on compact ones
 * (bf16, widened as read), with more vectors than a block holds and rows that do not fill the
 * last block. */
START_TEST(test_vote_blocks_exact)
{
    pt_dataset *ds = generated(PT_GEN_NOISY, 701, 150, 2, 6), *bf = NULL;
    pt_train_params p;
    pt_train_params_init(&p);
    p.variant = PT_VARIANT_VOTED;
    p.epochs = 2;
    pt_model *m = train(ds, &p, NULL);
    const size_t len = pt_stride_for(150), n = pt_dataset_n(ds);
    ck_assert_uint_gt(m->n_votes, ((size_t)128 << 10) / (len * sizeof(float))); /* > a block */
    ck_assert_int_eq(pt_dataset_to_dtype(ds, PT_DTYPE_BF16, 0, &bf), PT_OK);
    const pt_kernels *k;
    ck_assert_int_eq(pt_kernels_get(PT_ISA_AUTO, &k), PT_OK);
    float *got = malloc(n * sizeof *got), *row = malloc(len * sizeof *row);
    const pt_dataset *sets[2] = {ds, bf};
    for (int t = 0; t < 2; t++) {
        ck_assert_int_eq(pt_model_scores(m, sets[t], got), PT_OK);
        for (size_t i = 0; i < n; i++) {
            const float *x = pt_row_f32(k, sets[t], i, row);
            float want = pt_vote_score(k, m->votes, len, m->vote_b, m->vote_c, m->n_votes, x,
                                       len, 1.0f);
            ck_assert_msg(memcmp(&got[i], &want, sizeof want) == 0, "row %zu: %g, %g", i,
                          (double)got[i], (double)want);
        }
    }
    free(got);
    free(row);
    pt_model_free(m);
    pt_dataset_free(bf);
    pt_dataset_free(ds);
}
END_TEST

/* The threshold unit's sigma(z) = +1 for z >= 0: a score of exactly 0 predicts the +1 label (the
 * larger one), for the last iterate and inside the voted perceptron's vote; a multiclass tie
 * goes to the lowest class. The worked example (no bias) gives w = (1, -1): the row (1, 1)
 * scores exactly 0. */
START_TEST(test_sign_of_zero_is_positive)
{
    const float x[] = {1, 0, 0, 1};
    pt_dataset *ds = tu_dataset(2, 2, x, (const double[]){7, 3}); /* +1 is the label 7 */
    const float q[] = {1, 1, -1, 0};
    pt_dataset *rows = tu_dataset(2, 2, q, (const double[]){7, 3});
    pt_train_params p;
    pt_train_params_init(&p);
    p.bias = 0;
    pt_model *m = train(ds, &p, NULL);
    float s[2];
    double lab[2];
    ck_assert_int_eq(pt_model_scores(m, rows, s), PT_OK);
    ck_assert_float_eq(s[0], 0.0f);
    ck_assert_int_eq(pt_model_predict(m, rows, lab), PT_OK);
    ck_assert_double_eq(lab[0], 7.0);
    ck_assert_double_eq(lab[1], 3.0);
    pt_eval ev;
    ck_assert_int_eq(pt_model_evaluate(m, rows, &ev), PT_OK);
    ck_assert_uint_eq(ev.correct, 2);
    pt_model_free(m);
    /* voted: (1,0) survived 1 sample, (1,-1) the last 3; on (1,1) both count +: 1 + 3 */
    p.variant = PT_VARIANT_VOTED;
    m = train(ds, &p, NULL);
    ck_assert_uint_eq(m->n_votes, 2);
    ck_assert_int_eq(pt_model_scores(m, rows, s), PT_OK);
    ck_assert_float_eq(s[0], 4.0f);
    ck_assert_int_eq(pt_model_predict(m, rows, lab), PT_OK);
    ck_assert_double_eq(lab[0], 7.0);
    pt_model_free(m);
    pt_dataset_free(rows);
    pt_dataset_free(ds);
    /* three classes, all scores equal (a zero model after one epoch of ties is not reachable
     * by training, so the model is built by hand): the lowest class wins */
    const float z[] = {1, 2};
    pt_dataset *three = tu_dataset(1, 2, z, (const double[]){5});
    const double labels[] = {2, 5, 9};
    pt_model *mc = pt_model_alloc_multiclass(2, 3, labels);
    mc->bias = 1;
    for (size_t c = 0; c < 3; c++) mc->Bk[c] = 0.5f;
    ck_assert_int_eq(pt_model_predict(mc, three, lab), PT_OK);
    ck_assert_double_eq(lab[0], 2.0);
    mc->Bk[2] = 0.75f;
    ck_assert_int_eq(pt_model_predict(mc, three, lab), PT_OK);
    ck_assert_double_eq(lab[0], 9.0);
    pt_model_free(mc);
    pt_dataset_free(three);
}
END_TEST

/* ---------------------------------------------------------------- sparse data (CSR) */

/* Integer-valued data with about 3 values in 4 zero (and every 97th row empty), labels from an
 * integer w with 5% noise: every dot and update is exact in float, in either layout. */
static pt_dataset *sparse_integer_dense(size_t n, size_t d, uint64_t seed)
{
    pt_rng rng;
    pt_rng_seed(&rng, seed);
    float *x = calloc(n * d, sizeof *x);
    double *y = malloc(n * sizeof *y);
    int *w = malloc(d * sizeof *w);
    for (size_t j = 0; j < d; j++) w[j] = (int)pt_rng_below(&rng, 7) - 3;
    for (size_t i = 0; i < n; i++) {
        long s = 0;
        for (size_t j = 0; i % 97 != 0 && j < d; j++) {
            if (pt_rng_below(&rng, 4) != 0) continue;
            int v = (int)pt_rng_below(&rng, 9) - 4;
            x[i * d + j] = (float)v;
            s += (long)v * w[j];
        }
        y[i] = (s >= 0) != (pt_rng_uniform(&rng) < 0.05) ? 1.0 : -1.0;
    }
    pt_dataset *ds = tu_dataset(n, d, x, y);
    free(x);
    free(y);
    free(w);
    return ds;
}

/* The sparse copy of a dataset. */
static pt_dataset *sparse_copy(const pt_dataset *ds)
{
    pt_dataset *sp;
    ck_assert_msg(pt_dataset_convert(ds, PT_LAYOUT_SPARSE, 0, &sp) == PT_OK, "%s", pt_last_error());
    ck_assert_int_eq(pt_dataset_layout(sp), PT_LAYOUT_SPARSE);
    return sp;
}

/* Two models are the same bytes once saved. */
static void assert_same_file(const pt_model *a, const pt_model *b, const char *what)
{
    const char *pa = tu_path("sp_a", ".model"), *pb = tu_path("sp_b", ".model");
    ck_assert_int_eq(pt_model_save(a, pa), PT_OK);
    ck_assert_int_eq(pt_model_save(b, pb), PT_OK);
    size_t la, lb;
    char *fa = tu_read_file(pa, &la), *fb = tu_read_file(pb, &lb);
    ck_assert_msg(fa && fb && la == lb && memcmp(fa, fb, la) == 0, "%s: the model files differ",
                  what);
    free(fa);
    free(fb);
    remove(pa);
    remove(pb);
}

/* Every online variant on sparse data is the run on the dense copy: the same mistakes in every
 * epoch and, on integer-valued data, the same model file; on every ISA, with rows short and
 * long (the SIMD kernels sum rows of 32 non-zeros or more in lanes), in order and shuffled,
 * with a margin, a step size and no bias; and the sparse scores of those models. */
START_TEST(test_sparse_equals_dense)
{
    const size_t dims[] = {37, 300};
    for (size_t a = 0; a < 2; a++) {
        pt_dataset *dn = sparse_integer_dense(1500, dims[a], 30 + a), *sp = sparse_copy(dn);
        float *s1 = malloc(1500 * sizeof *s1), *s2 = malloc(1500 * sizeof *s2);
        for (int variant = PT_VARIANT_CLASSIC; variant <= PT_VARIANT_VOTED; variant++)
            for (int shuffle = 0; shuffle <= 1; shuffle++)
                for (int opt = 0; opt <= 1; opt++)
                    for (int isa = PT_ISA_SCALAR; isa <= PT_ISA_NEON; isa++) {
                        if (!pt_isa_available((pt_isa)isa)) continue;
                        pt_train_params p;
                        pt_train_params_init(&p);
                        p.epochs = 5;
                        p.variant = (pt_variant)variant;
                        p.shuffle = shuffle;
                        p.isa = (pt_isa)isa;
                        if (opt) {
                            p.margin = 2.0f;
                            p.eta = 0.5f;
                            p.bias = 0;
                        }
                        char what[96];
                        snprintf(what, sizeof what, "d %zu variant %d shuffle %d opt %d isa %d",
                                 dims[a], variant, shuffle, opt, isa);
                        pt_train_report rd, rs;
                        pt_model *md = train(dn, &p, &rd), *ms = train(sp, &p, &rs);
                        assert_same_mistakes(&rs, &rd, what);
                        ck_assert_msg(rs.updates == rd.updates, "%s: updates", what);
                        assert_same_file(ms, md, what);
                        /* scored from either layout: the same scores */
                        ck_assert_int_eq(pt_model_scores(ms, sp, s1), PT_OK);
                        ck_assert_int_eq(pt_model_scores(ms, dn, s2), PT_OK);
                        /* the average is not integer-valued: its dots are equal to rounding */
                        for (size_t i = 0; i < 1500; i++)
                            ck_assert_msg(variant == PT_VARIANT_AVERAGED
                                              ? fabsf(s1[i] - s2[i]) <= 1e-4f * (1 + fabsf(s2[i]))
                                              : s1[i] == s2[i],
                                          "%s: score %zu: %g, %g", what, i, s1[i], s2[i]);
                        pt_train_report_clear(&rd);
                        pt_train_report_clear(&rs);
                        pt_model_free(md);
                        pt_model_free(ms);
                    }
        free(s1);
        free(s2);
        pt_dataset_free(dn);
        pt_dataset_free(sp);
    }
}
END_TEST

/* Real-valued sparse data (the text-like generator): the same mistakes in every epoch as on
 * the dense copy, and the weights equal to float rounding (the dense and sparse dots add the
 * same products in other orders). */
START_TEST(test_sparse_float_data)
{
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.kind = PT_GEN_SPARSE;
    g.n = 2000;
    g.d = 3000;
    g.nnz = 40;
    g.margin = 0.001;
    g.seed = 5;
    pt_dataset *sp, *dn;
    ck_assert_msg(pt_generate(&g, &sp) == PT_OK, "%s", pt_last_error());
    ck_assert_int_eq(pt_dataset_layout(sp), PT_LAYOUT_SPARSE);
    ck_assert_int_eq(pt_dataset_convert(sp, PT_LAYOUT_DENSE, 0, &dn), PT_OK);
    for (int variant = PT_VARIANT_CLASSIC; variant <= PT_VARIANT_AVERAGED; variant++)
        for (int shuffle = 0; shuffle <= 1; shuffle++) {
            pt_train_params p;
            pt_train_params_init(&p);
            p.epochs = 4;
            p.variant = (pt_variant)variant;
            p.shuffle = shuffle;
            pt_train_report rd, rs;
            pt_model *md = train(dn, &p, &rd), *ms = train(sp, &p, &rs);
            assert_same_mistakes(&rs, &rd, "generated sparse");
            float b1, b2;
            const float *w1 = pt_model_weights(ms, &b1), *w2 = pt_model_weights(md, &b2);
            for (size_t j = 0; j < g.d; j++)
                ck_assert_float_eq_tol(w1[j], w2[j], 1e-5f * (1 + fabsf(w2[j])));
            ck_assert_float_eq_tol(b1, b2, 1e-5f * (1 + fabsf(b2)));
            pt_eval e1, e2;
            ck_assert_int_eq(pt_model_evaluate(ms, sp, &e1), PT_OK);
            ck_assert_int_eq(pt_model_evaluate(ms, dn, &e2), PT_OK);
            ck_assert_uint_eq(e1.correct, e2.correct);
            pt_train_report_clear(&rd);
            pt_train_report_clear(&rs);
            pt_model_free(md);
            pt_model_free(ms);
        }
    pt_dataset_free(dn);
    pt_dataset_free(sp);
}
END_TEST

/* Interrupted on sparse data (a stop requested before the call: after the first chunk of the
 * plain pass, after the first sample otherwise), or checkpointed by the epoch hook, and
 * resumed: the uninterrupted run's model file, every variant. */
START_TEST(test_sparse_resume)
{
    pt_dataset *dn = sparse_integer_dense(10000, 40, 9), *sp = sparse_copy(dn);
    pt_stop *tok = pt_stop_create();
    pt_stop_request(tok);
    for (int variant = PT_VARIANT_CLASSIC; variant <= PT_VARIANT_VOTED; variant++)
        for (int shuffle = 0; shuffle <= 1; shuffle++) {
            pt_train_params p;
            pt_train_params_init(&p);
            p.epochs = 5;
            p.variant = (pt_variant)variant;
            p.shuffle = shuffle;
            pt_model *full = train(sp, &p, NULL);
            /* interrupted in epoch 1 */
            p.stop = tok;
            pt_model *part;
            ck_assert_int_eq(pt_train(sp, &p, &part, NULL), PT_ERR_INTERRUPTED);
            ck_assert(pt_model_resumable(part));
            p.stop = NULL;
            p.resume = part;
            pt_model *rest = train(sp, &p, NULL);
            assert_same_file(rest, full, "resumed after a stop");
            pt_model_free(rest);
            pt_model_free(part);
            /* from the checkpoint of epoch 3 */
            p.resume = NULL;
            p.epoch_hook = keep_epoch_3;
            pt_model *again = train(sp, &p, NULL);
            ck_assert_ptr_nonnull(saved_checkpoint);
            assert_same_file(again, full, "with the hook");
            p.epoch_hook = NULL;
            p.resume = saved_checkpoint;
            rest = train(sp, &p, NULL);
            assert_same_file(rest, full, "resumed from a checkpoint");
            pt_model_free(saved_checkpoint);
            saved_checkpoint = NULL;
            pt_model_free(rest);
            pt_model_free(again);
            pt_model_free(full);
        }
    pt_stop_free(tok);
    pt_dataset_free(dn);
    pt_dataset_free(sp);
}
END_TEST

/* The blocked pass on sparse data is the sequential pass, bit for bit: the same mistakes and
 * model file, every variant, in order and shuffled, on integer-valued data and on the
 * text-like generator's (separable: the late epochs' few mistakes let the walk skip ahead). */
START_TEST(test_sparse_blocked_identical)
{
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.kind = PT_GEN_SPARSE;
    g.n = 20000;
    g.d = 3000;
    g.nnz = 40;
    g.margin = 0.001;
    g.noise = 0.0;
    g.seed = 8;
    pt_dataset *dn = sparse_integer_dense(20000, 40, 12), *sets[2] = {sparse_copy(dn), NULL};
    ck_assert_msg(pt_generate(&g, &sets[1]) == PT_OK, "%s", pt_last_error());
    for (int k = 0; k < 2; k++)
        for (int variant = PT_VARIANT_CLASSIC; variant <= (k ? PT_VARIANT_AVERAGED
                                                              : PT_VARIANT_VOTED); variant++)
            for (int shuffle = 0; shuffle <= 1; shuffle++) {
                pt_train_params p;
                pt_train_params_init(&p);
                p.epochs = 6;
                p.variant = (pt_variant)variant;
                p.shuffle = shuffle;
                p.threads = 2;
                p.online.pass = PT_PASS_SEQUENTIAL;
                pt_train_report rs, rb;
                pt_model *ms = train(sets[k], &p, &rs);
                p.online.pass = PT_PASS_BLOCKED;
                pt_model *mb = train(sets[k], &p, &rb);
                char what[64];
                snprintf(what, sizeof what, "set %d variant %d shuffle %d", k, variant, shuffle);
                assert_same_mistakes(&rb, &rs, what);
                assert_same_file(mb, ms, what);
                pt_train_report_clear(&rs);
                pt_train_report_clear(&rb);
                pt_model_free(ms);
                pt_model_free(mb);
            }
    pt_dataset_free(dn);
    pt_dataset_free(sets[0]);
    pt_dataset_free(sets[1]);
}
END_TEST

/* Scoring sparse data with more features than the model's: the features past the model's d
 * are ignored, as on the dense copy; a model on an expansion of sparse rows predicts as on dense. */
START_TEST(test_sparse_scoring_and_refusals)
{
    pt_dataset *narrow = sparse_integer_dense(500, 20, 3), *wide = sparse_integer_dense(500, 50, 4);
    pt_dataset *nsp = sparse_copy(narrow), *wsp = sparse_copy(wide);
    pt_train_params p;
    pt_train_params_init(&p);
    p.epochs = 3;
    for (int variant = PT_VARIANT_CLASSIC; variant <= PT_VARIANT_VOTED; variant += 2) {
        p.variant = (pt_variant)variant;
        pt_model *m = train(nsp, &p, NULL);
        float s1[500], s2[500];
        ck_assert_int_eq(pt_model_scores(m, wsp, s1), PT_OK);
        ck_assert_int_eq(pt_model_scores(m, wide, s2), PT_OK);
        ck_assert_mem_eq(s1, s2, sizeof s1);
        double l1[500], l2[500];
        ck_assert_int_eq(pt_model_predict(m, wsp, l1), PT_OK);
        ck_assert_int_eq(pt_model_predict(m, wide, l2), PT_OK);
        ck_assert_mem_eq(l1, l2, sizeof l1);
        pt_model_free(m);
    }
    p.variant = PT_VARIANT_CLASSIC;
    pt_model *m;
    p.expand.kind = PT_EXPAND_POLY;
    p.expand.degree = 2;
    /* an expansion of sparse rows: materialised sparse, trained as sparse data; the model
     * predicts the sparse rows as their dense copy */
    ck_assert_int_eq(pt_train(nsp, &p, &m, NULL), PT_OK);
    double e1[500], e2[500];
    ck_assert_int_eq(pt_model_predict(m, nsp, e1), PT_OK);
    ck_assert_int_eq(pt_model_predict(m, narrow, e2), PT_OK);
    ck_assert_mem_eq(e1, e2, nsp->n * sizeof *e1);
    pt_model_free(m);
    pt_dataset_free(narrow);
    pt_dataset_free(wide);
    pt_dataset_free(nsp);
    pt_dataset_free(wsp);
}
END_TEST

static pt_dataset *generated(pt_gen_kind kind, size_t n, size_t d, size_t classes, uint64_t seed)
{
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.kind = kind;
    g.n = n;
    g.d = d;
    g.classes = classes;
    g.seed = seed;
    pt_dataset *ds;
    ck_assert_int_eq(pt_generate(&g, &ds), PT_OK);
    return ds;
}

/* Two models (binary or K classes) have the same weights and biases, bit for bit. */
static void assert_same_model(const pt_model *a, const pt_model *b, const char *what)
{
    size_t len = pt_stride_for(b->d);
    ck_assert_uint_eq(a->d, b->d);
    if (b->W) {
        ck_assert_msg(memcmp(a->W, b->W, b->nclass * len * sizeof(float)) == 0, "%s: W differs", what);
        ck_assert_msg(memcmp(a->Bk, b->Bk, b->nclass * sizeof(float)) == 0, "%s: biases differ", what);
    } else {
        ck_assert_msg(memcmp(a->w, b->w, len * sizeof(float)) == 0, "%s: w differs", what);
        ck_assert_msg(memcmp(&a->b, &b->b, sizeof a->b) == 0, "%s: b differs", what);
    }
}

/* Warm start, exactly: training from the model of epoch k (init) for E - k more epochs, in
 * order, gives the E-epoch run's weights bit for bit (classic variant): both passes, a
 * margin and a step size, bias or not, an expansion, one-vs-rest and the multiclass
 * perceptron; from the model in memory and from its file. */
START_TEST(test_init_continues_run)
{
    pt_dataset *bin = integer_dataset(3000, 12, 4), *four = generated(PT_GEN_BLOBS, 800, 2, 4, 9);
    const struct { pt_dataset *ds; int pass, bias, expand; pt_multiclass multi; float tau, eta; } runs[] = {
        {bin, PT_PASS_SEQUENTIAL, 1, 0, PT_MULTI_OVR, 0.0f, 1.0f},
        {bin, PT_PASS_BLOCKED, 1, 0, PT_MULTI_OVR, 0.5f, 0.25f},
        {bin, PT_PASS_SEQUENTIAL, 0, 0, PT_MULTI_OVR, 0.0f, 2.0f},
        {bin, PT_PASS_SEQUENTIAL, 1, 1, PT_MULTI_OVR, 0.0f, 1.0f},
        {four, PT_PASS_SEQUENTIAL, 1, 0, PT_MULTI_OVR, 0.0f, 1.0f},
        {four, PT_PASS_SEQUENTIAL, 1, 0, PT_MULTI_DIRECT, 0.25f, 1.0f},
    };
    const int E = 9, k = 3;
    for (size_t q = 0; q < sizeof runs / sizeof runs[0]; q++) {
        pt_train_params p;
        pt_train_params_init(&p);
        p.online.pass = (pt_online_pass)runs[q].pass;
        p.threads = 2;
        p.bias = runs[q].bias;
        p.multiclass = runs[q].multi;
        p.margin = runs[q].tau;
        p.eta = runs[q].eta;
        if (runs[q].expand) p.expand.kind = PT_EXPAND_POLY;
        p.epochs = E;
        pt_train_report r;
        pt_model *full = train(runs[q].ds, &p, &r);
        ck_assert_int_eq(r.epochs_run, E); /* mistakes in every epoch: no early stop */
        pt_train_report_clear(&r);
        p.epochs = k;
        pt_model *part = train(runs[q].ds, &p, NULL);
        /* a start with a bias weight too (so that the continuation must take it) */
        ck_assert_msg(!runs[q].bias || (part->W ? part->Bk[0] != 0.0f : part->b != 0.0f), "run %zu: no bias weight", q);
        const char *path = tu_path("init", ".model");
        ck_assert_int_eq(pt_model_save(part, path), PT_OK);
        pt_model *loaded;
        ck_assert_msg(pt_model_load(path, &loaded) == PT_OK, "%s", pt_last_error());
        for (int from_file = 0; from_file <= 1; from_file++) {
            p.init = from_file ? loaded : part;
            p.epochs = E - k;
            pt_model *cont = train(runs[q].ds, &p, &r);
            ck_assert_int_eq(r.epochs_run, E - k);
            char what[64];
            snprintf(what, sizeof what, "run %zu (%s)", q, from_file ? "file" : "memory");
            assert_same_model(cont, full, what);
            pt_train_report_clear(&r);
            pt_model_free(cont);
        }
        pt_model_free(loaded);
        pt_model_free(part);
        pt_model_free(full);
    }
    pt_dataset_free(bin);
    pt_dataset_free(four);
}
END_TEST

/* init_random starts from the weights pt_random_start draws from the seed (each uniform in
 * [0, 1), as the perceptron notebook): the run equals one from a model holding those weights,
 * another seed starts elsewhere, and the perceptron still separates separable data from there
 * (binary and one-vs-rest, which draws class after class). */
START_TEST(test_init_random)
{
    pt_dataset *ds = generated(PT_GEN_SEPARABLE, 500, 6, 2, 2);
    const size_t d = 6, len = pt_stride_for(d);
    pt_train_params p;
    pt_train_params_init(&p);
    p.seed = 77;
    p.shuffle = 1;
    p.epochs = 100000;
    pt_model *hand = pt_model_alloc_linear(d);
    hand->bias = 1;
    hand->class_values[0] = pt_dataset_class_value(ds, 0);
    hand->class_values[1] = pt_dataset_class_value(ds, 1);
    pt_random_start(77, 1, d, 1, hand->w, len, &hand->b);
    for (size_t j = 0; j < d; j++) ck_assert(hand->w[j] >= 0.0f && hand->w[j] < 1.0f);
    ck_assert(hand->b >= 0.0f && hand->b < 1.0f && hand->b != hand->w[0]);
    for (size_t j = d; j < len; j++) ck_assert_float_eq(hand->w[j], 0.0f);
    pt_train_report r1, r2;
    p.init_random = 1;
    pt_model *a = train(ds, &p, &r1);
    ck_assert_int_eq(r1.converged, 1);
    p.init_random = 0;
    p.init = hand;
    pt_model *b = train(ds, &p, &r2);
    assert_same_model(a, b, "init_random vs its weights");
    assert_same_mistakes(&r1, &r2, "init_random vs its weights");
    pt_train_report_clear(&r1);
    pt_train_report_clear(&r2);
    pt_model_free(b);
    /* from w = 0 the first epoch differs */
    p.init = NULL;
    pt_model *z = train(ds, &p, &r2);
    ck_assert(memcmp(z->w, a->w, len * sizeof(float)) != 0);
    pt_train_report_clear(&r2);
    pt_model_free(z);
    float w2[16], b2;
    pt_random_start(78, 1, d, 1, w2, len, &b2);
    ck_assert(memcmp(w2, hand->w, d * sizeof(float)) != 0);
    pt_model_free(a);
    pt_model_free(hand);
    pt_dataset_free(ds);
    /* one-vs-rest: class after class, d weights then the bias */
    ds = generated(PT_GEN_BLOBS, 300, 3, 3, 5);
    const double labels[] = {0, 1, 2};
    pt_model *hm = pt_model_alloc_multiclass(3, 3, labels);
    hm->bias = 1;
    pt_random_start(77, 3, 3, 1, hm->W, pt_stride_for(3), hm->Bk);
    pt_train_params_init(&p);
    p.seed = 77;
    p.epochs = 5;
    p.init_random = 1;
    a = train(ds, &p, NULL);
    p.init_random = 0;
    p.init = hm;
    b = train(ds, &p, NULL);
    assert_same_model(a, b, "one-vs-rest init_random vs its weights");
    pt_model_free(a);
    pt_model_free(b);
    pt_model_free(hm);
    pt_dataset_free(ds);
}
END_TEST

/* A warm start that does not fit the run is refused before training, saying what differs. */
START_TEST(test_init_refused)
{
    pt_dataset *ds = generated(PT_GEN_SEPARABLE, 200, 4, 2, 1);
    pt_train_params p;
    pt_train_params_init(&p);
    pt_model *m0 = train(ds, &p, NULL);
    pt_model *m = NULL;
    /* both, kernel path, resume: parameters alone */
    p.init = m0;
    p.init_random = 1;
    ck_assert_int_eq(pt_train(ds, &p, &m, NULL), PT_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(pt_last_error(), "both"));
    p.init_random = 0;
    p.path = PT_PATH_KERNEL;
    ck_assert_int_eq(pt_train_params_check(&p), PT_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(pt_last_error(), "kernel path"));
    p.init = NULL;
    p.init_random = 1;
    ck_assert_int_eq(pt_train(ds, &p, &m, NULL), PT_ERR_INVALID);
    p.path = PT_PATH_ONLINE;
    p.resume = m0;
    ck_assert_int_eq(pt_train_params_check(&p), PT_ERR_INVALID);
    p.resume = NULL;
    p.init_random = 0;
    /* against the data: features, bias, classes, labels, kind of model, expansion */
    pt_dataset *wide = generated(PT_GEN_SEPARABLE, 200, 5, 2, 1);
    p.init = m0;
    ck_assert_int_eq(pt_train(wide, &p, &m, NULL), PT_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(pt_last_error(), "the init model has 4 features, the run trains on 5"));
    p.bias = 0;
    ck_assert_int_eq(pt_train_check(ds, &p), PT_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(pt_last_error(), "bias"));
    p.bias = 1;
    p.expand.kind = PT_EXPAND_POLY;
    ck_assert_int_eq(pt_train_check(ds, &p), PT_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(pt_last_error(), "expansion"));
    p.expand.kind = PT_EXPAND_NONE;
    pt_dataset *three = generated(PT_GEN_BLOBS, 90, 4, 3, 1);
    ck_assert_int_eq(pt_train_check(three, &p), PT_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(pt_last_error(), "2 classes, the data 3"));
    const float x[] = {1, 0, 0, 0, 0, 1, 0, 0};
    pt_dataset *other = tu_dataset(2, 4, x, (const double[]){5, 9});
    ck_assert_int_eq(pt_train_check(other, &p), PT_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(pt_last_error(), "class 0 is"));
    pt_train_params kp;
    pt_train_params_init(&kp);
    kp.path = PT_PATH_KERNEL;
    pt_model *km = train(ds, &kp, NULL);
    p.init = km;
    ck_assert_int_eq(pt_train_check(ds, &p), PT_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(pt_last_error(), "no weight vector"));
    ck_assert_ptr_null(m);
    pt_model_free(km);
    pt_dataset_free(other);
    pt_dataset_free(three);
    pt_dataset_free(wide);
    pt_model_free(m0);
    pt_dataset_free(ds);
}
END_TEST

/* The blocked pass (online_blocked.c) on float data, with 1 to 4 threads (more threads than
 * this machine's cores, too): helper threads score chunks ahead with the w of their time, and
 * again after an update; the walk must never take a decision from a score computed before an
 * update. The decisions, the mistakes per epoch and w (and the voted counts) must be the
 * sequential pass's, bit for bit, on every ISA, variant, order, margin and step size.
 * Separable sets get to epochs with a few mistakes (the helpers run ahead, and a mistake makes
 * their chunks stale); noisy ones keep mistakes in most chunks (the walker takes samples one by
 * one, the helpers pause and resume). */
START_TEST(test_blocked_float_identical)
{
    const struct {
        pt_gen_kind kind;
        size_t d;
        double margin;
    } sets[] = {{PT_GEN_SEPARABLE, 7, 0.02}, {PT_GEN_SEPARABLE, 64, 0.05}, {PT_GEN_NOISY, 130, 0.05},
                {PT_GEN_NOISY, 16, 0.0}};
    for (size_t a = 0; a < sizeof sets / sizeof sets[0]; a++) {
        pt_gen_params g;
        pt_gen_params_init(&g);
        g.kind = sets[a].kind;
        g.n = 20000;
        g.d = sets[a].d;
        g.margin = sets[a].margin;
        g.noise = 0.02;
        g.seed = 40 + a;
        pt_dataset *ds;
        ck_assert_int_eq(pt_generate(&g, &ds), PT_OK);
        for (int isa = PT_ISA_SCALAR; isa <= PT_ISA_NEON; isa++) {
            if (!pt_isa_available((pt_isa)isa)) continue;
            for (int variant = 0; variant <= 2; variant++)
                for (int shuffle = 0; shuffle <= 1; shuffle++) {
                    pt_train_params p;
                    pt_train_params_init(&p);
                    p.isa = (pt_isa)isa;
                    p.epochs = variant == 2 ? 3 : 12;
                    p.shuffle = shuffle;
                    p.seed = 5;
                    p.variant = variant == 0 ? PT_VARIANT_CLASSIC : variant == 1 ? PT_VARIANT_AVERAGED
                                                                                 : PT_VARIANT_VOTED;
                    p.eta = shuffle ? 0.37f : 1.0f;
                    p.margin = variant == 0 && a % 2 ? 0.25f : 0.0f;
                    p.online.pass = PT_PASS_SEQUENTIAL;
                    pt_train_report ref;
                    pt_model *mref = train(ds, &p, &ref);
                    for (int threads = 1; threads <= 4; threads++) {
                        p.online.pass = PT_PASS_BLOCKED;
                        p.threads = threads;
                        pt_train_report r;
                        pt_model *m = train(ds, &p, &r);
                        char what[96];
                        snprintf(what, sizeof what, "set %zu isa %d variant %d shuffle %d threads %d", a, isa,
                                 variant, shuffle, threads);
                        assert_same_mistakes(&r, &ref, what);
                        assert_same_weights(m, mref, g.d);
                        if (variant == 2) {
                            ck_assert_uint_eq(m->n_votes, mref->n_votes);
                            ck_assert_mem_eq(m->vote_c, mref->vote_c, m->n_votes * sizeof(float));
                        }
                        pt_train_report_clear(&r);
                        pt_model_free(m);
                    }
                    pt_train_report_clear(&ref);
                    pt_model_free(mref);
                }
        }
        pt_dataset_free(ds);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("train_online");
    TCase *tc = tcase_create("online");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_worked_example);
    tcase_add_test(tc, test_xor_never_separated);
    tcase_add_test(tc, test_circle_embedding);
    tcase_add_test(tc, test_mistake_bound_separable);
    tcase_add_test(tc, test_averaged_equals_explicit_average);
    tcase_add_test(tc, test_shuffle_deterministic);
    tcase_add_test(tc, test_margin_perceptron);
    tcase_add_test(tc, test_label_errors);
    tcase_add_test(tc, test_label_mapping);
    tcase_add_test(tc, test_non_finite_weights);
    tcase_add_test(tc, test_isa_and_pass_identical);
    tcase_add_test(tc, test_resume_after_interrupt);
    tcase_add_test(tc, test_voted);
    tcase_add_test(tc, test_voted_cap);
    tcase_add_test(tc, test_vote_blocks_exact);
    tcase_add_test(tc, test_resume_from_checkpoint);
    tcase_add_test(tc, test_blocked_float_identical);
    tcase_add_test(tc, test_sign_of_zero_is_positive);
    tcase_add_test(tc, test_init_continues_run);
    tcase_add_test(tc, test_init_random);
    tcase_add_test(tc, test_init_refused);
    tcase_add_test(tc, test_sparse_equals_dense);
    tcase_add_test(tc, test_sparse_float_data);
    tcase_add_test(tc, test_sparse_resume);
    tcase_add_test(tc, test_sparse_blocked_identical);
    tcase_add_test(tc, test_sparse_scoring_and_refusals);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
