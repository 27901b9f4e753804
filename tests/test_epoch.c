/* The end of an epoch (paths/epoch.c), the same on every path: the progress callback sees
 * every epoch with its mistakes and stops the run after the epoch it returns non-zero on
 * (PT_ERR_INTERRUPTED, the model as it stands); the epoch hook sees the model after each epoch
 * and stops the run (PT_OK) after the epoch it returns non-zero on; weights that become
 * non-finite stop the run with a message naming the epoch and what to change. Only the public
 * API: the same checks hold for any build. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* A run to check: a path, a variant, and the data's classes. */
typedef struct run_case {
    const char *name;
    pt_path path;
    pt_variant variant;
    pt_multiclass multiclass;
    size_t classes;
    pt_expand_kind expand;
} run_case;

static const run_case cases[] = {
    {"online", PT_PATH_ONLINE, PT_VARIANT_CLASSIC, PT_MULTI_OVR, 2, PT_EXPAND_NONE},
    {"online averaged", PT_PATH_ONLINE, PT_VARIANT_AVERAGED, PT_MULTI_OVR, 2, PT_EXPAND_NONE},
    {"online voted", PT_PATH_ONLINE, PT_VARIANT_VOTED, PT_MULTI_OVR, 2, PT_EXPAND_NONE},
    {"online expanded", PT_PATH_ONLINE, PT_VARIANT_CLASSIC, PT_MULTI_OVR, 2, PT_EXPAND_POLY},
    {"batch", PT_PATH_BATCH, PT_VARIANT_CLASSIC, PT_MULTI_OVR, 2, PT_EXPAND_NONE},
    {"kernel", PT_PATH_KERNEL, PT_VARIANT_CLASSIC, PT_MULTI_OVR, 2, PT_EXPAND_NONE},
    {"multiclass perceptron", PT_PATH_ONLINE, PT_VARIANT_AVERAGED, PT_MULTI_DIRECT, 4,
     PT_EXPAND_NONE},
    {"one-vs-rest online", PT_PATH_ONLINE, PT_VARIANT_CLASSIC, PT_MULTI_OVR, 4, PT_EXPAND_NONE},
    {"one-vs-rest voted", PT_PATH_ONLINE, PT_VARIANT_VOTED, PT_MULTI_OVR, 4, PT_EXPAND_NONE},
    {"one-vs-rest batch", PT_PATH_BATCH, PT_VARIANT_CLASSIC, PT_MULTI_OVR, 4, PT_EXPAND_NONE},
    {"one-vs-rest kernel", PT_PATH_KERNEL, PT_VARIANT_CLASSIC, PT_MULTI_OVR, 4, PT_EXPAND_NONE},
};
#define NCASES (sizeof cases / sizeof cases[0])

/* Noisy data that no path separates within the epochs run. */
static pt_dataset *data_for(const run_case *c)
{
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.kind = c->classes > 2 ? PT_GEN_BLOBS : PT_GEN_NOISY;
    g.n = 300;
    g.d = 6;
    g.noise = 0.2;
    g.classes = c->classes;
    g.seed = 11;
    pt_dataset *ds = NULL;
    ck_assert_msg(pt_generate(&g, &ds) == PT_OK, "%s", pt_last_error());
    return ds;
}

static void params_for(const run_case *c, pt_train_params *p)
{
    pt_train_params_init(p);
    p->path = c->path;
    p->variant = c->variant;
    p->multiclass = c->multiclass;
    p->epochs = 6;
    p->threads = 2;
    if (c->path == PT_PATH_KERNEL) {
        p->kernel.kind = PT_KERNEL_RBF;
        p->kernel.gamma = 0.5f;
    }
    if (c->path == PT_PATH_BATCH) p->eta = 0.1f;
    p->expand.kind = c->expand;
}

/* What the callbacks saw. */
typedef struct seen {
    int stop_at;       /* return non-zero at this epoch */
    int calls;
    int epochs[16];
    size_t mistakes[16];
    int model_epochs[16]; /* the hook's model's epochs_run */
    int resumable[16];    /* and whether it records where the run stands */
} seen;

static int on_progress(int epoch, size_t mistakes, double seconds, void *user)
{
    seen *s = user;
    ck_assert(seconds >= 0.0);
    if (s->calls < 16) {
        s->epochs[s->calls] = epoch;
        s->mistakes[s->calls] = mistakes;
    }
    s->calls++;
    return epoch == s->stop_at;
}

static int on_epoch(const pt_model *m, int epoch, size_t mistakes, void *user)
{
    seen *s = user;
    if (s->calls < 16) {
        s->epochs[s->calls] = epoch;
        s->mistakes[s->calls] = mistakes;
        s->model_epochs[s->calls] = pt_model_epochs_run(m);
        s->resumable[s->calls] = pt_model_resumable(m);
    }
    s->calls++;
    return epoch == s->stop_at;
}

/* The callbacks saw epochs 1..stop, each with the mistakes the report lists. */
static void check_seen(const run_case *c, const seen *s, const pt_train_report *r, int stop)
{
    ck_assert_msg(s->calls == stop, "%s: %d calls, not %d", c->name, s->calls, stop);
    ck_assert_msg(r->epochs_run == stop && r->epochs_before == 0, "%s: report of %d epochs",
                  c->name, r->epochs_run);
    for (int e = 0; e < stop; e++) {
        ck_assert_msg(s->epochs[e] == e + 1, "%s: call %d saw epoch %d", c->name, e, s->epochs[e]);
        ck_assert_msg(s->mistakes[e] == r->mistakes_per_epoch[e],
                      "%s: epoch %d: %zu mistakes, the report %zu", c->name, e + 1, s->mistakes[e],
                      r->mistakes_per_epoch[e]);
        ck_assert_msg(s->mistakes[e] > 0, "%s: epoch %d had no mistake", c->name, e + 1);
    }
}

START_TEST(test_progress_stops_after_its_epoch)
{
    const run_case *c = &cases[_i];
    pt_dataset *ds = data_for(c);
    pt_train_params p;
    params_for(c, &p);
    seen s = {.stop_at = 2};
    p.progress = on_progress;
    p.progress_user = &s;
    pt_model *m = NULL;
    pt_train_report r;
    pt_status st = pt_train(ds, &p, &m, &r);
    ck_assert_msg(st == PT_ERR_INTERRUPTED, "%s: %s", c->name, pt_strerror(st));
    ck_assert_str_eq(pt_last_error(), "stopped by the progress callback after epoch 2");
    ck_assert_msg(m != NULL && pt_model_epochs_run(m) == 2, "%s: model", c->name);
    ck_assert_msg(pt_model_resumable(m), "%s: the stopped run's model records where it stands",
                  c->name);
    check_seen(c, &s, &r, 2);
    pt_train_report_clear(&r);
    pt_model_free(m);
    pt_dataset_free(ds);
}
END_TEST

START_TEST(test_hook_stops_after_its_epoch)
{
    const run_case *c = &cases[_i];
    pt_dataset *ds = data_for(c);
    pt_train_params p;
    params_for(c, &p);
    seen s = {.stop_at = 3};
    pt_train_params_set_epoch_hook(&p, on_epoch, &s);
    pt_model *m = NULL;
    pt_train_report r;
    pt_status st = pt_train(ds, &p, &m, &r);
    ck_assert_msg(st == PT_OK, "%s: %s (%s)", c->name, pt_strerror(st), pt_last_error());
    ck_assert_msg(m != NULL && pt_model_epochs_run(m) == 3, "%s: model", c->name);
    check_seen(c, &s, &r, 3);
    for (int e = 0; e < 3; e++) {
        ck_assert_msg(s.model_epochs[e] == e + 1, "%s: the hook's model after epoch %d says %d",
                      c->name, e + 1, s.model_epochs[e]);
        ck_assert_msg(s.resumable[e], "%s: the hook's model after epoch %d records no run",
                      c->name, e + 1);
    }
    pt_train_report_clear(&r);
    pt_model_free(m);
    pt_dataset_free(ds);
}
END_TEST

/* Rows so large that one update overflows float: the run stops after epoch 1 and says what
 * became non-finite and what to change. */
static void check_overflow(pt_path path, pt_multiclass multiclass, size_t classes,
                           const char *want)
{
    enum { N = 6 };
    const float big = 1e20f;
    float x[N * 2];
    double y[N];
    for (size_t i = 0; i < N; i++) {
        x[2 * i] = big * (float)(i + 1);
        x[2 * i + 1] = -big;
        y[i] = (double)(i % classes);
    }
    pt_dataset *ds = tu_dataset(N, 2, x, y);
    pt_train_params p;
    pt_train_params_init(&p);
    p.path = path;
    p.multiclass = multiclass;
    p.eta = 1e30f;
    if (path == PT_PATH_KERNEL) {
        p.kernel.kind = PT_KERNEL_POLY;
        p.kernel.degree = 3;
        p.eta = 1.0f;
    }
    pt_model *m = NULL;
    pt_status st = pt_train(ds, &p, &m, NULL);
    ck_assert_msg(st == PT_ERR_NUMERIC, "%s: %s (%s)", want, pt_strerror(st), pt_last_error());
    ck_assert_str_eq(pt_last_error(), want);
    ck_assert(m == NULL);
    pt_dataset_free(ds);
}

START_TEST(test_non_finite_weights_stop_the_run)
{
    check_overflow(PT_PATH_ONLINE, PT_MULTI_OVR, 2,
                   "weights became non-finite in epoch 1: lower pt_train_params.eta or rescale "
                   "the features");
    check_overflow(PT_PATH_BATCH, PT_MULTI_OVR, 2,
                   "weights became non-finite in epoch 1: lower pt_train_params.eta, raise "
                   "pt_train_params.lambda or rescale the features");
    check_overflow(PT_PATH_KERNEL, PT_MULTI_OVR, 2,
                   "kernel margins became non-finite in epoch 1: lower pt_train_params.degree, "
                   "pt_train_params.gamma or pt_train_params.coef0, or rescale the features");
    check_overflow(PT_PATH_ONLINE, PT_MULTI_DIRECT, 3,
                   "weights became non-finite in epoch 1: lower pt_train_params.eta or rescale "
                   "the features");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("epoch");
    TCase *tc = tcase_create("epoch");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_progress_stops_after_its_epoch, 0, NCASES);
    tcase_add_loop_test(tc, test_hook_stops_after_its_epoch, 0, NCASES);
    tcase_add_test(tc, test_non_finite_weights_stop_the_run);
    suite_add_tcase(s, tc);
    return tu_run_suite(s) ? EXIT_FAILURE : EXIT_SUCCESS;
}
