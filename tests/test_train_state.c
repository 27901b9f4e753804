/* Run states on every path: long runs whose every checkpoint loads, predicts and resumes to the
 * uninterrupted run's model file, byte for byte; runs stopped in the middle of an epoch; one-vs-rest
 * classes that stand at different samples; what a state keeps (the last 1000 epochs), and what
 * it allocates (nothing that grows with the epochs asked for). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "paths/paths.h"
#include "testutil.h"

/* A run configuration: the data and the parameters that matter. */
typedef struct config {
    const char *name;
    size_t n, d, classes;
    pt_path path;
    pt_variant variant;
    pt_multiclass multiclass;
    int shuffle;
    size_t batch_size;
    int average_iterates;
    pt_loss loss;
    float lambda;
    pt_online_pass pass;
    int threads;
    int expand;        /* polynomial degree of a streamed expansion, 0 for none */
    pt_kernel kernel;
    pt_gram_storage gram;
} config;

#define AVG PT_VARIANT_AVERAGED
static const config configs[] = {
    {.name = "online classic d=2", .n = 40, .d = 2, .classes = 2, .shuffle = 1},
    {.name = "online classic plain d=20", .n = 60, .d = 20, .classes = 2},
    {.name = "online averaged d=20", .n = 60, .d = 20, .classes = 2, .variant = AVG, .shuffle = 1},
    {.name = "online averaged blocked d=2", .n = 50, .d = 2, .classes = 2, .variant = AVG,
     .shuffle = 1, .pass = PT_PASS_BLOCKED, .threads = 2},
    {.name = "online voted d=2", .n = 30, .d = 2, .classes = 2, .variant = PT_VARIANT_VOTED,
     .shuffle = 1},
    {.name = "online expand poly 2", .n = 40, .d = 2, .classes = 2, .variant = AVG, .shuffle = 1,
     .expand = 2},
    {.name = "batch full, average of iterates", .n = 40, .d = 2, .classes = 2,
     .path = PT_PATH_BATCH, .average_iterates = 1},
    {.name = "batch mini-batches hinge", .n = 50, .d = 20, .classes = 2, .path = PT_PATH_BATCH,
     .shuffle = 1, .batch_size = 7, .loss = PT_LOSS_HINGE, .lambda = 0.01f},
    {.name = "batch expand poly 2", .n = 40, .d = 2, .classes = 2, .path = PT_PATH_BATCH,
     .shuffle = 1, .batch_size = 9, .expand = 2},
    {.name = "kernel rbf averaged rows", .n = 40, .d = 2, .classes = 2, .path = PT_PATH_KERNEL,
     .variant = AVG, .shuffle = 1, .kernel = PT_KERNEL_RBF, .gram = PT_GRAM_ROWS},
    {.name = "kernel linear full Gram", .n = 40, .d = 2, .classes = 2, .path = PT_PATH_KERNEL,
     .kernel = PT_KERNEL_LINEAR, .gram = PT_GRAM_FULL},
    {.name = "multiclass perceptron averaged", .n = 60, .d = 2, .classes = 4, .variant = AVG,
     .multiclass = PT_MULTI_DIRECT, .shuffle = 1},
    {.name = "one-vs-rest online averaged", .n = 60, .d = 2, .classes = 4, .variant = AVG,
     .shuffle = 1, .threads = 2},
    {.name = "one-vs-rest online classic", .n = 60, .d = 3, .classes = 3, .threads = 1},
    {.name = "one-vs-rest voted", .n = 45, .d = 2, .classes = 3, .variant = PT_VARIANT_VOTED,
     .shuffle = 1, .threads = 2},
    {.name = "one-vs-rest batch", .n = 60, .d = 2, .classes = 3, .path = PT_PATH_BATCH,
     .shuffle = 1, .batch_size = 16, .threads = 2},
    {.name = "one-vs-rest kernel rbf averaged", .n = 48, .d = 2, .classes = 4,
     .path = PT_PATH_KERNEL, .variant = AVG, .shuffle = 1, .kernel = PT_KERNEL_RBF,
     .gram = PT_GRAM_FULL},
};
#define NCONFIGS (sizeof configs / sizeof configs[0])

/* Rows uniform in [-1, 1]^d with random labels of `classes` classes, and the first rows repeated
 * with another label: no run ever converges, in any feature space. */
static pt_dataset *noise_data(const config *c)
{
    const size_t dup = c->classes, n = c->n + dup;
    pt_dataset *ds = pt_dataset_create(n, c->d);
    ck_assert_ptr_nonnull(ds);
    double *y = malloc(n * sizeof *y);
    uint64_t s = 0x9E3779B97F4A7C15u ^ (c->n * 31 + c->d);
    for (size_t i = 0; i < c->n; i++) {
        float *x = pt_dataset_row(ds, i);
        for (size_t j = 0; j < c->d; j++) {
            s = s * 6364136223846793005u + 1442695040888963407u;
            x[j] = (float)((double)(s >> 11) / 9007199254740992.0 * 2.0 - 1.0);
        }
        s = s * 6364136223846793005u + 1442695040888963407u;
        y[i] = (double)((s >> 33) % c->classes);
    }
    for (size_t k = 0; k < c->classes; k++) y[k] = (double)k; /* every class present */
    for (size_t k = 0; k < dup; k++) {
        memcpy(pt_dataset_row(ds, c->n + k), pt_dataset_row(ds, k), c->d * sizeof(float));
        y[c->n + k] = (double)((k + 1) % c->classes);
    }
    ck_assert_int_eq(pt_dataset_set_labels(ds, y), PT_OK);
    free(y);
    return ds;
}

static void params_of(const config *c, int epochs, pt_train_params *p)
{
    pt_train_params_init(p);
    p->path = c->path;
    p->variant = c->variant;
    p->multiclass = c->multiclass;
    p->epochs = epochs;
    p->shuffle = c->shuffle;
    p->seed = 7;
    p->batch.size = c->batch_size;
    p->batch.average_iterates = c->average_iterates;
    p->batch.loss = c->loss;
    p->batch.lambda = c->lambda;
    p->eta = c->path == PT_PATH_BATCH ? 0.5f : 1.0f;
    p->online.pass = c->pass ? c->pass : PT_PASS_SEQUENTIAL;
    p->threads = c->threads ? c->threads : 1;
    p->kernel.kind = c->kernel;
    p->kernel.gamma = 2.0f;
    p->kernel.gram_storage = c->gram;
    if (c->expand) {
        p->expand.kind = PT_EXPAND_POLY;
        p->expand.degree = c->expand;
    }
}

static pt_model *train_ok(const pt_dataset *ds, const pt_train_params *p, pt_train_report *r)
{
    pt_model *m = NULL;
    pt_status s = pt_train(ds, p, &m, r);
    ck_assert_msg(s == PT_OK, "pt_train: %s", pt_last_error());
    ck_assert_msg(!pt_model_resumable(m), "a finished run's model keeps its run state");
    return m;
}

/* A scratch file name: in memory where the system has it (hundreds of files are written and
 * each save syncs the disk), else in the test directory. */
static const char *scratch(const char *tag)
{
    static char buf[8][512];
    static unsigned k;
    char *b = buf[k++ % 8];
    if (access("/dev/shm", W_OK) == 0)
        snprintf(b, sizeof buf[0], "/dev/shm/ptron-%s-%ld-%u.model", tag, (long)getpid(), k);
    else
        snprintf(b, sizeof buf[0], "%s", tu_path(tag, ".model"));
    return b;
}

/* The bytes of a model file. */
static char *saved(const pt_model *m, size_t *len)
{
    const char *p = scratch("state");
    ck_assert_msg(pt_model_save(m, p) == PT_OK, "%s", pt_last_error());
    char *t = tu_read_file(p, len);
    unlink(p);
    return t;
}

static void assert_same_file(const char *a, size_t la, const char *b, size_t lb, const char *what)
{
    if (la == lb && memcmp(a, b, la) == 0) return;
    size_t i = 0, line = 1;
    while (i < la && i < lb && a[i] == b[i]) line += a[i++] == '\n';
    ck_abort_msg("%s: the model files differ at line %zu", what, line);
}

/* The epoch hook of the uninterrupted run: every `every` epochs its snapshot into a file. */
typedef struct keeper {
    int every, count;
    char paths[64][512];
} keeper;

static int keep_checkpoints(const pt_model *m, int epoch, size_t mistakes, void *user)
{
    (void)mistakes;
    keeper *k = user;
    if (epoch % k->every) return 0;
    ck_assert_int_lt(k->count, 64);
    ck_assert_msg(pt_model_resumable(m), "the snapshot of epoch %d records no run", epoch);
    snprintf(k->paths[k->count], sizeof k->paths[0], "%s", scratch("ckpt"));
    ck_assert_msg(pt_model_save(m, k->paths[k->count]) == PT_OK, "epoch %d: %s", epoch,
                  pt_last_error());
    k->count++;
    return 0;
}

/* Resume the run recorded in file `path` with p's epochs: the model file must be `want`. */
static void resume_equals(const pt_dataset *ds, const char *path, int epochs, int threads,
                          const char *want, size_t want_len, const char *what)
{
    pt_model *ck = NULL;
    ck_assert_msg(pt_model_load(path, &ck) == PT_OK, "%s: %s", what, pt_last_error());
    ck_assert_msg(pt_model_resumable(ck), "%s: not resumable", what);
    /* it predicts as it stands */
    pt_eval ev;
    ck_assert_msg(pt_model_evaluate(ck, ds, &ev) == PT_OK, "%s: %s", what, pt_last_error());
    ck_assert_uint_eq(ev.n, pt_dataset_n(ds));
    pt_train_params q;
    pt_model_get_params(ck, &q);
    q.epochs = epochs;
    q.threads = threads;
    q.resume = ck;
    pt_train_report r;
    pt_model *rest = NULL;
    pt_status s = pt_train(ds, &q, &rest, &r);
    ck_assert_msg(s == PT_OK, "%s: resume: %s", what, pt_last_error());
    size_t len;
    char *got = saved(rest, &len);
    assert_same_file(got, len, want, want_len, what);
    free(got);
    pt_train_report_clear(&r);
    pt_model_free(rest);
    pt_model_free(ck);
}

/* Thousands of epochs, a checkpoint every `every`: each one loads, predicts and resumes to the
 * uninterrupted run's model file. The run with the epoch hook gives the model the run without
 * it gives. */
static void long_run(const config *c, int epochs, int every)
{
    pt_dataset *ds = noise_data(c);
    pt_train_params p;
    params_of(c, epochs, &p);
    pt_train_report r;
    pt_model *plain = train_ok(ds, &p, &r);
    ck_assert_msg(r.epochs_run == epochs && !r.converged, "%s: the run must not converge (%d epochs)",
                  c->name, r.epochs_run);
    pt_train_report_clear(&r);
    size_t want_len, len;
    char *want = saved(plain, &want_len);
    keeper k = {.every = every};
    p.epoch_hook = keep_checkpoints;
    p.epoch_user = &k;
    pt_model *hooked = train_ok(ds, &p, NULL);
    char *got = saved(hooked, &len);
    assert_same_file(got, len, want, want_len, c->name);
    free(got);
    ck_assert_int_eq(k.count, epochs / every);
    for (int i = 0; i < k.count; i++) {
        char what[256];
        snprintf(what, sizeof what, "%s, checkpoint of epoch %d", c->name, (i + 1) * every);
        pt_model *ck = NULL;
        ck_assert_int_eq(pt_model_load(k.paths[i], &ck), PT_OK);
        pt_model_info info;
        pt_model_get_info(ck, &info);
        ck_assert_msg(info.resumable && info.run_epochs_done == (i + 1) * every && info.run_position == 0,
                      "%s: stands at epoch %d, sample %zu", what, info.run_epochs_done, info.run_position);
        ck_assert_int_eq(info.epochs_run, (i + 1) * every);
        if (c->classes == 2 || c->multiclass == PT_MULTI_DIRECT) {
            int keep = info.run_epochs_done < PT_STATE_HISTORY ? info.run_epochs_done : PT_STATE_HISTORY;
            ck_assert_int_eq(info.run_recent_epochs, keep);
        }
        pt_model_free(ck);
        resume_equals(ds, k.paths[i], epochs, p.threads, want, want_len, what);
        unlink(k.paths[i]);
    }
    free(want);
    pt_model_free(plain);
    pt_model_free(hooked);
    pt_dataset_free(ds);
}

START_TEST(test_long_runs_every_checkpoint_resumes)
{
    const config *c = &configs[_i];
    /* the narrow and the wide online runs the most often, the others less */
    int every = c->path == PT_PATH_ONLINE && c->classes == 2 && !c->expand ? 50 : 300;
    long_run(c, 3000, every);
}
END_TEST

/* ------------------------------------------------------------- stopped mid-epoch */

/* Ask training to stop at the end of epoch `at`: the run stops early in the next epoch. */
static int stop_after(const pt_model *m, int epoch, size_t mistakes, void *user)
{
    (void)m;
    (void)mistakes;
    if (epoch == *(int *)user) pt_request_stop();
    return 0;
}

static int stop_progress(int epoch, size_t mistakes, double seconds, void *user)
{
    (void)mistakes;
    (void)seconds;
    return epoch == *(int *)user;
}

/* Interrupted (in the middle of epoch `at` + 1, or by the progress callback at an epoch's end),
 * saved, loaded, resumed, on other threads too: the uninterrupted run's model file. */
START_TEST(test_interrupt_every_path)
{
    const config *c = &configs[_i];
    pt_dataset *ds = noise_data(c);
    const int epochs = 40;
    pt_train_params p;
    params_of(c, epochs, &p);
    pt_model *plain = train_ok(ds, &p, NULL);
    size_t want_len;
    char *want = saved(plain, &want_len);
    for (int how = 0; how < 3; how++) {
        int at = how == 2 ? 23 : 7 + 11 * how;
        pt_train_params q = p;
        if (how < 2) {
            q.epoch_hook = stop_after;
            q.epoch_user = &at;
        } else {
            q.progress = stop_progress;
            q.progress_user = &at;
        }
        pt_model *part = NULL;
        pt_train_report r;
        pt_status s = pt_train(ds, &q, &part, &r);
        ck_assert_msg(s == PT_ERR_INTERRUPTED, "%s: status %d: %s", c->name, (int)s, pt_last_error());
        ck_assert_ptr_nonnull(part);
        ck_assert(pt_model_resumable(part));
        pt_model_info info;
        pt_model_get_info(part, &info);
        ck_assert_int_eq(info.run_epochs_done, at);
        /* a stop asked for at an epoch's end lands after the next epoch's first sample (or
         * block, or chunk), or before it (the blocked pass, the kernel path's next class) */
        if (how == 2) ck_assert_uint_eq(info.run_position, 0);
        bool at_sample = c->pass != PT_PASS_BLOCKED && !(c->path == PT_PATH_KERNEL && c->classes > 2);
        if (how < 2 && at_sample)
            ck_assert_msg(info.run_position > 0, "%s: not in the middle of an epoch", c->name);
        pt_train_report_clear(&r);
        const char *path = scratch("part");
        ck_assert_msg(pt_model_save(part, path) == PT_OK, "%s: %s", c->name, pt_last_error());
        char what[256];
        snprintf(what, sizeof what, "%s, stopped after epoch %d (%s)", c->name, at,
                 how < 2 ? "mid-epoch" : "progress callback");
        /* resumed on the threads it ran on, and on another count */
        resume_equals(ds, path, epochs, p.threads, want, want_len, what);
        resume_equals(ds, path, epochs, p.threads == 1 ? 2 : 1, want, want_len, what);
        unlink(path);
        pt_model_free(part);
    }
    free(want);
    pt_model_free(plain);
    pt_dataset_free(ds);
}
END_TEST

/* One-vs-rest classes that stand at different places (trained by threads that stopped at
 * different samples): one lockstep pass lets each join at its own sample. */
START_TEST(test_ovr_classes_at_different_places)
{
    const config c = {.name = "one-vs-rest", .n = 60, .d = 2, .classes = 4,
                      .variant = PT_VARIANT_AVERAGED, .shuffle = 1, .threads = 1};
    pt_dataset *ds = noise_data(&c);
    pt_train_params p;
    params_of(&c, 30, &p);
    pt_model *plain = train_ok(ds, &p, NULL);
    size_t want_len;
    char *want = saved(plain, &want_len);
    pt_model *parts[2];
    int at[2] = {5, 12};
    for (int k = 0; k < 2; k++) {
        pt_train_params q = p;
        q.epoch_hook = stop_after;
        q.epoch_user = &at[k];
        ck_assert_int_eq(pt_train(ds, &q, &parts[k], NULL), PT_ERR_INTERRUPTED);
    }
    /* classes 1 and 3 from the later stop */
    for (size_t cl = 1; cl < 4; cl += 2) {
        pt_train_state_free(parts[0]->states[cl]);
        parts[0]->states[cl] = pt_train_state_clone(parts[1]->states[cl]);
    }
    parts[0]->epochs_run = parts[1]->epochs_run;
    const char *path = scratch("mixed");
    ck_assert_int_eq(pt_model_save(parts[0], path), PT_OK);
    resume_equals(ds, path, 30, 1, want, want_len, "classes at epochs 6 and 13");
    resume_equals(ds, path, 30, 2, want, want_len, "classes at epochs 6 and 13, two threads");
    unlink(path);
    pt_model_free(parts[0]);
    pt_model_free(parts[1]);
    free(want);
    pt_model_free(plain);
    pt_dataset_free(ds);
}
END_TEST

/* What a state keeps: the last 1000 epochs' mistakes, whatever the length of the run; the
 * report of a resumed run lists the epochs after those it took over. */
START_TEST(test_state_keeps_last_epochs)
{
    const config c = {.name = "d=2", .n = 30, .d = 2, .classes = 2, .shuffle = 1};
    pt_dataset *ds = noise_data(&c);
    pt_train_params p;
    params_of(&c, 2500, &p);
    int at = 2400;
    pt_train_params q = p;
    q.progress = stop_progress;
    q.progress_user = &at;
    pt_train_report full, part, rest;
    pt_model *m = train_ok(ds, &p, &full), *stopped = NULL, *done = NULL;
    ck_assert_int_eq(pt_train(ds, &q, &stopped, &part), PT_ERR_INTERRUPTED);
    pt_model_info info;
    pt_model_get_info(stopped, &info);
    ck_assert_int_eq(info.run_recent_epochs, PT_STATE_HISTORY);
    ck_assert_mem_eq(info.run_recent_mistakes, full.mistakes_per_epoch + at - PT_STATE_HISTORY,
                     PT_STATE_HISTORY * sizeof(size_t));
    ck_assert_uint_eq(info.run_updates, part.updates);
    /* the saved file holds those and no more */
    size_t len;
    char *text = saved(stopped, &len);
    const char *h = strstr(text, "\nhistory ");
    ck_assert_ptr_nonnull(h);
    int numbers = 0;
    for (const char *t = h + 1; *t != '\n'; t++) numbers += *t == ' ';
    ck_assert_int_eq(numbers, PT_STATE_HISTORY);
    free(text);
    p.resume = stopped;
    ck_assert_int_eq(pt_train(ds, &p, &done, &rest), PT_OK);
    ck_assert_int_eq(rest.epochs_before, at);
    ck_assert_int_eq(rest.epochs_run, full.epochs_run);
    ck_assert_uint_eq(rest.updates, full.updates);
    ck_assert_mem_eq(rest.mistakes_per_epoch, full.mistakes_per_epoch + at,
                     (size_t)(full.epochs_run - at) * sizeof(size_t));
    pt_train_report_clear(&full);
    pt_train_report_clear(&part);
    pt_train_report_clear(&rest);
    pt_model_free(m);
    pt_model_free(stopped);
    pt_model_free(done);
    pt_dataset_free(ds);
}
END_TEST

/* Resuming refuses what would not give the uninterrupted run: other data, other parameters,
 * fewer epochs than done, a final model. */
START_TEST(test_resume_refusals)
{
    const config c = {.name = "d=2", .n = 30, .d = 2, .classes = 2, .variant = PT_VARIANT_AVERAGED, .shuffle = 1};
    pt_dataset *ds = noise_data(&c);
    pt_train_params p;
    params_of(&c, 20, &p);
    int at = 10;
    pt_train_params q = p;
    q.progress = stop_progress;
    q.progress_user = &at;
    pt_model *part = NULL, *final = train_ok(ds, &p, NULL), *m = NULL;
    ck_assert_int_eq(pt_train(ds, &q, &part, NULL), PT_ERR_INTERRUPTED);
    q = p;
    q.resume = final;
    ck_assert_int_eq(pt_train(ds, &q, &m, NULL), PT_ERR_INVALID);
    ck_assert(strstr(pt_last_error(), "final") != NULL);
    q.resume = part;
    q.epochs = 9;
    ck_assert_int_eq(pt_train(ds, &q, &m, NULL), PT_ERR_INVALID);
    q.epochs = 20;
    q.eta = 0.5f;
    ck_assert_int_eq(pt_train(ds, &q, &m, NULL), PT_ERR_INVALID);
    ck_assert(strstr(pt_last_error(), "eta") != NULL);
    q.eta = 1.0f;
    q.variant = PT_VARIANT_CLASSIC;
    ck_assert_int_eq(pt_train(ds, &q, &m, NULL), PT_ERR_FORMAT);
    q.variant = PT_VARIANT_AVERAGED;
    const config c2 = {.name = "other", .n = 31, .d = 2, .classes = 2};
    pt_dataset *other = noise_data(&c2);
    ck_assert_int_eq(pt_train(other, &q, &m, NULL), PT_ERR_FORMAT);
    ck_assert(strstr(pt_last_error(), "rows") != NULL);
    ck_assert_ptr_null(m);
    pt_dataset_free(other);
    pt_model_free(part);
    pt_model_free(final);
    pt_dataset_free(ds);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("train_state");
    TCase *tc = tcase_create("resume");
    tcase_set_timeout(tc, 600);
    tcase_add_loop_test(tc, test_long_runs_every_checkpoint_resumes, 0, NCONFIGS);
    tcase_add_loop_test(tc, test_interrupt_every_path, 0, NCONFIGS);
    tcase_add_test(tc, test_ovr_classes_at_different_places);
    tcase_add_test(tc, test_state_keeps_last_epochs);
    tcase_add_test(tc, test_resume_refusals);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
