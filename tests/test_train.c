/* pt_train as a library inside a larger program: calls running at once in several threads
 * (each its own stop state, error and model), stop tokens and pt_request_stop, the thread
 * counts a call leaves behind, and parameter structs not set up by their _init. */
#include <cblas.h>
#include <omp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "paths/paths.h"
#include "testutil.h"

/* ------------------------------------------------------------------------ helpers */

/* A one-shot event between threads. */
typedef struct flag {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int set;
} flag;

static void flag_init(flag *f)
{
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->cv, NULL);
    f->set = 0;
}

static void flag_set(flag *f)
{
    pthread_mutex_lock(&f->mu);
    f->set = 1;
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
}

static void flag_wait(flag *f)
{
    pthread_mutex_lock(&f->mu);
    while (!f->set) pthread_cond_wait(&f->cv, &f->mu);
    pthread_mutex_unlock(&f->mu);
}

static void flag_destroy(flag *f)
{
    pthread_mutex_destroy(&f->mu);
    pthread_cond_destroy(&f->cv);
}

/* One pt_train call, run on the calling thread or in a thread of its own. Its progress
 * callback requests the call's own stop token after epoch stop_after; after epoch hold_epoch
 * it sets *reached and waits for *release (so another thread can act while this call is
 * inside pt_train). *reached is also set when the call returns, so nobody waits for a call
 * that ended before reaching hold_epoch. Asserts only in the main thread: the job records. */
typedef struct job {
    const pt_dataset *ds;
    pt_train_params p;
    int stop_after, hold_epoch;
    flag *reached, *release;
    /* results */
    pt_status status;
    pt_model *m;
    pt_train_report rep;
    char error[1024];
    int held; /* the callback held at hold_epoch */
} job;

static int on_progress(int epoch, size_t mistakes, double seconds, void *user)
{
    (void)mistakes;
    (void)seconds;
    job *j = user;
    if (epoch == j->hold_epoch) {
        j->held = 1;
        if (j->reached) flag_set(j->reached);
        if (j->release) flag_wait(j->release);
    }
    if (epoch == j->stop_after) pt_stop_request(j->p.stop);
    return 0;
}

static void *run_job(void *arg)
{
    job *j = arg;
    j->p.progress = on_progress;
    j->p.progress_user = j;
    j->status = pt_train(j->ds, &j->p, &j->m, &j->rep);
    snprintf(j->error, sizeof j->error, "%s", pt_last_error());
    if (j->reached) flag_set(j->reached);
    return NULL;
}

/* A job on ds with params p and a fresh stop token of its own. */
static job job_make(const pt_dataset *ds, const pt_train_params *p, int stop_after)
{
    job j;
    memset(&j, 0, sizeof j);
    j.ds = ds;
    j.p = *p;
    j.stop_after = stop_after;
    j.p.stop = pt_stop_create();
    ck_assert_ptr_nonnull(j.p.stop);
    return j;
}

static void job_clear(job *j)
{
    pt_model_free(j->m);
    pt_train_report_clear(&j->rep);
    pt_stop_free(j->p.stop);
    memset(j, 0, sizeof *j);
}

/* The model file's bytes: weights as %.9g (exact for floats), votes, support vectors and the
 * state of an interrupted run, so equal bytes are the same model bit for bit. */
static char *model_bytes(const pt_model *m)
{
    const char *path = tu_path("model", ".model");
    ck_assert_msg(pt_model_save(m, path) == PT_OK, "%s", pt_last_error());
    char *text = tu_read_file(path, NULL);
    ck_assert_ptr_nonnull(text);
    remove(path);
    return text;
}

/* got is exactly what ref (the same job run alone) gave: status, report and model. */
static void assert_same_run(const job *ref, const job *got, const char *what)
{
    ck_assert_msg(got->status == ref->status, "%s: status %d (%s), alone %d (%s)", what,
                  got->status, got->error, ref->status, ref->error);
    ck_assert_msg(got->rep.epochs_run == ref->rep.epochs_run, "%s: %d epochs, alone %d", what,
                  got->rep.epochs_run, ref->rep.epochs_run);
    ck_assert_msg(got->rep.updates == ref->rep.updates, "%s: %zu updates, alone %zu", what,
                  got->rep.updates, ref->rep.updates);
    for (int e = 0; e < ref->rep.epochs_run; e++)
        ck_assert_msg(got->rep.mistakes_per_epoch[e] == ref->rep.mistakes_per_epoch[e],
                      "%s: epoch %d", what, e + 1);
    ck_assert_msg((got->m == NULL) == (ref->m == NULL), "%s: model presence", what);
    if (!ref->m) return;
    char *a = model_bytes(ref->m), *b = model_bytes(got->m);
    ck_assert_msg(strcmp(a, b) == 0, "%s: the model differs from the one trained alone", what);
    free(a);
    free(b);
}

static pt_dataset *noisy(size_t n, size_t d, uint64_t seed)
{
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.kind = PT_GEN_NOISY; /* never separable: every path runs all its epochs */
    g.n = n;
    g.d = d;
    g.noise = 0.05;
    g.seed = seed;
    pt_dataset *ds;
    ck_assert_msg(pt_generate(&g, &ds) == PT_OK, "%s", pt_last_error());
    return ds;
}

/* A (stopping itself with its own token after epoch a_stop) and B, concurrently: B holds at
 * the end of its first epoch until A has returned, so A is stopped, and ends, while B is inside
 * pt_train; A holds at its first epoch until B got there, so both are running at once. Each
 * gets exactly what it gets alone. */
static void concurrent_pair(const pt_dataset *da, const pt_train_params *pa, int a_stop,
                            const pt_dataset *db, const pt_train_params *pb, const char *what)
{
    job ref_a = job_make(da, pa, a_stop), ref_b = job_make(db, pb, 0);
    run_job(&ref_a);
    run_job(&ref_b);
    ck_assert_msg(ref_a.status == PT_ERR_INTERRUPTED, "%s: A alone: %s", what, ref_a.error);
    ck_assert_msg(ref_a.rep.epochs_run == a_stop, "%s: A alone ran %d epochs", what,
                  ref_a.rep.epochs_run);
    ck_assert_msg(ref_b.status == PT_OK, "%s: B alone: %s", what, ref_b.error);
    ck_assert_int_gt(ref_b.rep.epochs_run, 1);

    for (int round = 0; round < 3; round++) {
        flag a_at_1, b_at_1, a_done;
        flag_init(&a_at_1);
        flag_init(&b_at_1);
        flag_init(&a_done);
        job a = job_make(da, pa, a_stop), b = job_make(db, pb, 0);
        a.hold_epoch = b.hold_epoch = 1;
        a.reached = &a_at_1;
        a.release = &b_at_1;
        b.reached = &b_at_1;
        b.release = &a_done;
        pthread_t ta, tb;
        ck_assert_int_eq(pthread_create(&tb, NULL, run_job, &b), 0);
        ck_assert_int_eq(pthread_create(&ta, NULL, run_job, &a), 0);
        pthread_join(ta, NULL);
        flag_set(&a_done); /* A has returned: B may go on */
        pthread_join(tb, NULL);
        ck_assert_msg(a.held && b.held, "%s: the calls did not overlap", what);
        assert_same_run(&ref_a, &a, what);
        assert_same_run(&ref_b, &b, what);
        ck_assert_msg(!pt_stop_is_requested(b.p.stop), "%s: B's token was requested", what);
        job_clear(&a);
        job_clear(&b);
        flag_destroy(&b_at_1);
        flag_destroy(&a_done);
        flag_destroy(&a_at_1);
    }
    job_clear(&ref_a);
    job_clear(&ref_b);
}

/* ------------------------------------------------------------------------- tests */

/* Two pt_train calls at once in two threads, on different data and options, one stopping
 * itself through its own token: each gets the model it gets alone, bit for bit, and stopping
 * one does not stop the other. Pairs over the paths: online (averaged, shuffled) against batch
 * (fused, two threads), kernel (RBF) against the online blocked pass (two threads). */
START_TEST(test_concurrent_calls_each_get_their_own_model)
{
    pt_dataset *d1 = noisy(3000, 24, 1), *d2 = noisy(2500, 40, 2), *d3 = noisy(800, 6, 3);
    pt_train_params online, batch, kernel, blocked;
    pt_train_params_init(&online);
    online.variant = PT_VARIANT_AVERAGED;
    online.shuffle = 1;
    online.seed = 7;
    online.epochs = 12;
    online.threads = 1;
    pt_train_params_init(&batch);
    batch.path = PT_PATH_BATCH;
    batch.batch.impl = PT_BATCH_FUSED;
    batch.batch.loss = PT_LOSS_HINGE;
    batch.batch.lambda = 1e-3f;
    batch.eta = 0.1f;
    batch.epochs = 15;
    batch.threads = 2;
    pt_train_params_init(&kernel);
    kernel.path = PT_PATH_KERNEL;
    kernel.kernel.kind = PT_KERNEL_RBF;
    kernel.kernel.gamma = 0.5f;
    kernel.variant = PT_VARIANT_AVERAGED;
    kernel.epochs = 8;
    kernel.threads = 1;
    pt_train_params_init(&blocked);
    blocked.online.pass = PT_PASS_BLOCKED;
    blocked.shuffle = 1;
    blocked.seed = 3;
    blocked.epochs = 10;
    blocked.threads = 2;

    concurrent_pair(d1, &online, 3, d2, &batch, "online stopped / batch");
    concurrent_pair(d2, &batch, 4, d1, &online, "batch stopped / online");
    concurrent_pair(d3, &kernel, 2, d1, &blocked, "kernel stopped / online blocked");
    pt_dataset_free(d1);
    pt_dataset_free(d2);
    pt_dataset_free(d3);
}
END_TEST

/* The voted perceptron's memory budget running out is an error of its own call (PT_ERR_LIMIT,
 * its message in its thread), not a stop of every call: the other call, running meanwhile,
 * ends as it ends alone. */
START_TEST(test_voted_budget_error_is_its_own_call)
{
    /* A's vectors of 1024 features: hundreds of 4 KiB, over 1 MiB, the least budget */
    pt_dataset *da = noisy(2000, 1024, 4), *db = noisy(2500, 20, 5);
    pt_train_params voted, other;
    pt_train_params_init(&voted);
    voted.variant = PT_VARIANT_VOTED;
    voted.epochs = 5;
    voted.mem_budget_bytes = (size_t)1 << 20;
    pt_train_params_init(&other);
    other.variant = PT_VARIANT_AVERAGED;
    other.epochs = 8;
    other.threads = 1;

    job ref = job_make(db, &other, 0);
    run_job(&ref);
    ck_assert_msg(ref.status == PT_OK, "%s", ref.error);

    flag b_at_1, a_done;
    flag_init(&b_at_1);
    flag_init(&a_done);
    job a = job_make(da, &voted, 0), b = job_make(db, &other, 0);
    b.hold_epoch = 1;
    b.reached = &b_at_1;
    b.release = &a_done;
    pthread_t ta, tb;
    ck_assert_int_eq(pthread_create(&tb, NULL, run_job, &b), 0);
    flag_wait(&b_at_1); /* B is inside pt_train, held after its first epoch */
    ck_assert_int_eq(pthread_create(&ta, NULL, run_job, &a), 0);
    pthread_join(ta, NULL);
    flag_set(&a_done);
    pthread_join(tb, NULL);

    ck_assert_msg(a.status == PT_ERR_LIMIT, "voted: status %d: %s", a.status, a.error);
    ck_assert_msg(strstr(a.error, "voted") && strstr(a.error, "pt_train_params.mem_budget_bytes"),
                  "voted: %s", a.error);
    ck_assert_ptr_null(a.m);
    ck_assert_msg(b.error[0] == '\0', "the other call's error: %s", b.error);
    assert_same_run(&ref, &b, "beside a voted run out of budget");
    job_clear(&a);
    job_clear(&b);
    job_clear(&ref);
    flag_destroy(&b_at_1);
    flag_destroy(&a_done);
    pt_dataset_free(da);
    pt_dataset_free(db);
}
END_TEST

/* pt_request_stop stops every call running when it is called, and no call that starts later. */
START_TEST(test_request_stop_stops_every_running_call)
{
    pt_dataset *d1 = noisy(2000, 12, 6), *d2 = noisy(1500, 30, 7);
    pt_train_params online, batch;
    pt_train_params_init(&online);
    online.epochs = 10;
    online.threads = 1;
    pt_train_params_init(&batch);
    batch.path = PT_PATH_BATCH;
    batch.batch.impl = PT_BATCH_FUSED;
    batch.epochs = 10;
    batch.threads = 1;

    flag a_at_1, b_at_1, go;
    flag_init(&a_at_1);
    flag_init(&b_at_1);
    flag_init(&go);
    job a = job_make(d1, &online, 0), b = job_make(d2, &batch, 0);
    a.hold_epoch = b.hold_epoch = 1;
    a.reached = &a_at_1;
    b.reached = &b_at_1;
    a.release = b.release = &go;
    pthread_t ta, tb;
    ck_assert_int_eq(pthread_create(&ta, NULL, run_job, &a), 0);
    ck_assert_int_eq(pthread_create(&tb, NULL, run_job, &b), 0);
    flag_wait(&a_at_1);
    flag_wait(&b_at_1);
    ck_assert(a.held && b.held); /* both inside pt_train, after their first epoch */
    pt_request_stop();
    flag_set(&go);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    ck_assert_msg(a.status == PT_ERR_INTERRUPTED && a.rep.epochs_run == 1, "online: %d, %d epochs",
                  a.status, a.rep.epochs_run);
    ck_assert_msg(b.status == PT_ERR_INTERRUPTED && b.rep.epochs_run == 1, "batch: %d, %d epochs",
                  b.status, b.rep.epochs_run);
    ck_assert_ptr_nonnull(a.m); /* the model as it stands */
    ck_assert_ptr_nonnull(b.m);

    /* a call after the request runs to its end */
    job c = job_make(d1, &online, 0);
    run_job(&c);
    ck_assert_msg(c.status == PT_OK && c.rep.epochs_run == 10, "after: %d, %d epochs: %s",
                  c.status, c.rep.epochs_run, c.error);
    job_clear(&a);
    job_clear(&b);
    job_clear(&c);
    flag_destroy(&a_at_1);
    flag_destroy(&b_at_1);
    flag_destroy(&go);
    pt_dataset_free(d1);
    pt_dataset_free(d2);
}
END_TEST

/* A token requested before the call stops it at once, on every path; after pt_stop_reset it
 * trains as if never requested. */
START_TEST(test_token_requested_before_the_call)
{
    pt_dataset *ds = noisy(600, 8, 8);
    for (int path = 0; path < 3; path++) {
        pt_train_params p;
        pt_train_params_init(&p);
        p.path = (pt_path)path;
        p.epochs = 4;
        p.threads = 1;
        pt_stop *tok = pt_stop_create();
        ck_assert_ptr_nonnull(tok);
        ck_assert_int_eq(pt_stop_is_requested(tok), 0);
        pt_stop_request(tok);
        ck_assert_int_eq(pt_stop_is_requested(tok), 1);
        p.stop = tok;
        pt_model *m = NULL;
        pt_train_report rep;
        ck_assert_int_eq(pt_train(ds, &p, &m, &rep), PT_ERR_INTERRUPTED);
        ck_assert_int_eq(rep.epochs_run, 0);
        pt_model_free(m);
        pt_train_report_clear(&rep);
        pt_stop_reset(tok);
        ck_assert_int_eq(pt_stop_is_requested(tok), 0);
        ck_assert_msg(pt_train(ds, &p, &m, &rep) == PT_OK, "%s", pt_last_error());
        ck_assert_int_eq(rep.epochs_run, 4);
        pt_model_free(m);
        pt_train_report_clear(&rep);
        pt_stop_free(tok);
    }
    pt_stop_free(NULL);
    pt_dataset_free(ds);
}
END_TEST

/* The calling thread's OpenMP count and OpenBLAS's count are what they were before pt_train,
 * on every path (one-vs-rest, whose classes run in parallel, included) and after an error. */
START_TEST(test_thread_counts_restored)
{
    pt_dataset *bin = noisy(3000, 20, 9);
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.kind = PT_GEN_BLOBS;
    g.n = 1200;
    g.d = 10;
    g.classes = 4;
    pt_dataset *blobs;
    ck_assert_int_eq(pt_generate(&g, &blobs), PT_OK);
    /* two different counts, neither the calls' */
    openblas_set_num_threads(1);
    omp_set_num_threads(3);
    ck_assert_int_eq(omp_get_max_threads(), 3);
    ck_assert_int_eq(openblas_get_num_threads(), 1);
    struct {
        pt_path path;
        pt_batch_impl impl;
        int multi;
        size_t budget;
    } runs[] = {
        {PT_PATH_ONLINE, PT_BATCH_AUTO, 0, 0},
        {PT_PATH_BATCH, PT_BATCH_GEMV, 0, 0},
        {PT_PATH_BATCH, PT_BATCH_FUSED, 0, 0},
        {PT_PATH_KERNEL, PT_BATCH_AUTO, 0, 0},
        {PT_PATH_BATCH, PT_BATCH_GEMV, 1, 0},
        {PT_PATH_ONLINE, PT_BATCH_AUTO, 1, 0},
        {PT_PATH_KERNEL, PT_BATCH_AUTO, 1, 0},
        {PT_PATH_KERNEL, PT_BATCH_AUTO, 0, 1 << 20}, /* refused: the Gram over the budget */
    };
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
        pt_train_params p;
        pt_train_params_init(&p);
        p.path = runs[r].path;
        p.batch.impl = runs[r].impl;
        p.epochs = 3;
        p.threads = 2;
        if (runs[r].budget) {
            p.mem_budget_bytes = runs[r].budget;
            p.kernel.gram_storage = PT_GRAM_FULL;
        }
        pt_model *m = NULL;
        pt_status s = pt_train(runs[r].multi ? blobs : bin, &p, &m, NULL);
        ck_assert_msg(runs[r].budget ? s == PT_ERR_LIMIT : s == PT_OK, "run %zu: %s", r,
                      pt_last_error());
        pt_model_free(m);
        ck_assert_msg(omp_get_max_threads() == 3, "run %zu: OpenMP count %d after pt_train", r,
                      omp_get_max_threads());
        ck_assert_msg(openblas_get_num_threads() == 1, "run %zu: OpenBLAS count %d after pt_train",
                      r, openblas_get_num_threads());
    }
    pt_dataset_free(bin);
    pt_dataset_free(blobs);
}
END_TEST

/* A parameter struct that its _init did not set up is refused with a message saying so, by
 * every call that takes one, before anything else of it is read. */
START_TEST(test_params_not_from_init_refused)
{
    pt_dataset *ds = noisy(100, 4, 10);
    pt_train_params p;
    pt_train_params_init(&p);
    ck_assert_uint_eq(p.struct_size, sizeof p);
    ck_assert_uint_eq(p.expand.struct_size, sizeof p.expand);
    pt_model *m = NULL;
    for (int k = 0; k < 3; k++) {
        pt_train_params q = p;
        if (k == 0) q.struct_size = 0;                 /* never initialised */
        if (k == 1) q.struct_size = sizeof q - 8;      /* another version of the header */
        if (k == 2) q.expand.struct_size = 0;          /* an expansion struct not from _init */
        ck_assert_int_eq(pt_train_params_check(&q), PT_ERR_INVALID);
        ck_assert_msg(strstr(pt_last_error(), k == 2 ? "pt_expand_params_init" : "pt_train_params_init"),
                      "%s", pt_last_error());
        ck_assert_int_eq(pt_train(ds, &q, &m, NULL), PT_ERR_INVALID);
        ck_assert_ptr_null(m);
        ck_assert_msg(strstr(pt_last_error(), "struct_size"), "%s", pt_last_error());
    }

    pt_read_options o;
    pt_read_options_init(&o);
    o.struct_size = 0;
    pt_dataset *out = NULL;
    ck_assert_int_eq(pt_dataset_read("unused.svm", &o, &out), PT_ERR_INVALID);
    ck_assert_msg(strstr(pt_last_error(), "pt_read_options_init"), "%s", pt_last_error());

    pt_gen_params g;
    pt_gen_params_init(&g);
    g.struct_size = 1;
    ck_assert_int_eq(pt_generate(&g, &out), PT_ERR_INVALID);
    ck_assert_msg(strstr(pt_last_error(), "pt_gen_params_init"), "%s", pt_last_error());

    pt_expand_params e;
    pt_expand_params_init(&e);
    e.struct_size = 0;
    ck_assert_int_eq(pt_expand(ds, &e, &out), PT_ERR_INVALID);
    ck_assert_msg(strstr(pt_last_error(), "pt_expand_params_init"), "%s", pt_last_error());
    ck_assert_ptr_null(out);
    pt_dataset_free(ds);
}
END_TEST

/* Library messages name the field a caller set, never a command-line flag. */
START_TEST(test_messages_name_fields)
{
    pt_train_params p;
    pt_train_params_init(&p);
    p.epochs = 0;
    ck_assert_int_eq(pt_train_params_check(&p), PT_ERR_INVALID);
    ck_assert_str_eq(pt_last_error(), "pt_train_params.epochs must be at least 1 (got 0)");
    pt_train_params_init(&p);
    p.batch.schedule = PT_SCHEDULE_PEGASOS;
    ck_assert_int_eq(pt_train_params_check(&p), PT_ERR_INVALID);
    ck_assert_msg(strstr(pt_last_error(), "pt_train_params.lambda") && !strstr(pt_last_error(), "--"),
                  "%s", pt_last_error());
}
END_TEST

int main(void)
{
    Suite *s = suite_create("train");
    TCase *tc = tcase_create("embedding");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_concurrent_calls_each_get_their_own_model);
    tcase_add_test(tc, test_voted_budget_error_is_its_own_call);
    tcase_add_test(tc, test_request_stop_stops_every_running_call);
    tcase_add_test(tc, test_token_requested_before_the_call);
    tcase_add_test(tc, test_thread_counts_restored);
    tcase_add_test(tc, test_params_not_from_init_refused);
    tcase_add_test(tc, test_messages_name_fields);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
