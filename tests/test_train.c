/* pt_train as a library inside a larger program: calls running at once in several threads
 * (each its own stop state, error and model), stop tokens and pt_request_stop, the thread
 * counts a call leaves behind, and parameter structs not set up by their _init. */
#include <cblas.h>
#include <omp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* ------------------------------------------------------- a data file that shrinks */

/* A noisy .ptd file of n rows x d (never converges: every epoch reads every row); its path. */
static const char *noisy_ptd(size_t n, size_t d)
{
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.kind = PT_GEN_NOISY;
    g.n = n;
    g.d = d;
    g.noise = 0.2;
    pt_dataset *ds;
    ck_assert_int_eq(pt_generate(&g, &ds), PT_OK);
    const char *path = tu_path("shrink", ".ptd");
    ck_assert_int_eq(pt_dataset_write(ds, path, PT_FORMAT_PTD), PT_OK);
    pt_dataset_free(ds);
    return path;
}

/* The epoch hook that truncates the data file to its header's first page at epoch `at`: the
 * next epoch's first row is in the part that went, so the run reads it, certainly. */
typedef struct shrink_at {
    const char *path;
    int at, hooks;
} shrink_at;

static int shrink_hook(const pt_model *m, int epoch, size_t mistakes, void *user)
{
    (void)m;
    (void)mistakes;
    shrink_at *s = user;
    s->hooks++;
    if (epoch == s->at) ck_assert_int_eq(truncate(s->path, 4096), 0);
    return 0;
}

/* How the data is read and trained: the path, threads, and (streamed) the window's way. */
typedef struct shrink_case {
    pt_path path;
    int threads;
    size_t budget; /* the reader's memory budget (small: streamed) */
    const char *arrival; /* streamed: pt_window_force_arrival's way, or NULL */
} shrink_case;

static pt_dataset *read_case(const char *path, const shrink_case *c)
{
    pt_read_options o;
    pt_read_options_init(&o);
    if (c->budget) o.mem_budget_bytes = c->budget;
    pt_dataset *ds;
    ck_assert_msg(pt_dataset_read(path, &o, &ds) == PT_OK, "%s", pt_last_error());
    ck_assert_int_eq(pt_dataset_streamed(ds) > 0, c->budget > 0);
    if (c->arrival) pt_window_force_arrival(ds, c->arrival);
    return ds;
}

static pt_train_params case_params(const shrink_case *c, int epochs)
{
    pt_train_params p;
    pt_train_params_init(&p);
    p.path = c->path;
    p.threads = c->threads;
    p.epochs = epochs;
    p.shuffle = 1;
    if (c->path == PT_PATH_BATCH) p.batch.size = 64;
    return p;
}

/* A file truncated from the epoch hook at the end of epoch 2, on each way of reading it: the
 * run stops (no SIGBUS), PT_ERR_IO names the file, the model handed back is epoch 2's
 * (resumable), and resumed on the whole file it ends as the uninterrupted run does: nothing
 * computed from the zeros the part that went read as is in it. */
START_TEST(test_file_shrinks_under_the_run)
{
    const shrink_case cases[] = {
        {PT_PATH_ONLINE, 1, 0, NULL},          {PT_PATH_ONLINE, 2, 0, NULL},
        {PT_PATH_ONLINE, 1, 256 << 10, "copied"}, {PT_PATH_ONLINE, 1, 256 << 10, "populated"},
        {PT_PATH_ONLINE, 1, 256 << 10, "faulted"}, {PT_PATH_BATCH, 2, 0, NULL},
        {PT_PATH_BATCH, 2, 256 << 10, "copied"},   {PT_PATH_BATCH, 2, 256 << 10, "faulted"},
    };
    char whole[512], path[512];
    snprintf(whole, sizeof whole, "%s", noisy_ptd(6000, 40)); /* a 1 MB matrix */
    snprintf(path, sizeof path, "%s", tu_path("shrink", ".ptd"));
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        const shrink_case *c = &cases[k];
        char cmd[1200]; /* a copy of its own to truncate */
        snprintf(cmd, sizeof cmd, "cp %s %s", whole, path);
        ck_assert_int_eq(system(cmd), 0);
        pt_dataset *ds = read_case(path, c);
        pt_train_params p = case_params(c, 6);
        shrink_at sh = {path, 2, 0};
        pt_train_params_set_epoch_hook(&p, shrink_hook, &sh);
        pt_model *m = NULL;
        pt_status s = pt_train(ds, &p, &m, NULL);
        ck_assert_msg(s == PT_ERR_IO, "case %zu: status %d: %s", k, s, pt_last_error());
        char want[600];
        snprintf(want, sizeof want, "%s: file shrank while training read it", path);
        HAS(pt_last_error(), want);
        HAS(pt_last_error(), "that of epoch 2, the last read whole");
        ck_assert_int_eq(sh.hooks, 2); /* no hook for an epoch that read zeros */
        ck_assert_ptr_nonnull(m);
        ck_assert_int_eq(pt_model_epochs_run(m), 2);
        ck_assert(pt_model_resumable(m));
        ck_assert_int_eq(pt_dataset_intact(ds), PT_ERR_IO);
        pt_dataset_free(ds);

        /* resumed on the whole file: the uninterrupted run's model, bit for bit */
        pt_dataset *w = read_case(whole, c);
        pt_train_params q = case_params(c, 6);
        q.resume = m;
        pt_model *resumed = NULL, *straight = NULL;
        ck_assert_msg(pt_train(w, &q, &resumed, NULL) == PT_OK, "%s", pt_last_error());
        q.resume = NULL;
        ck_assert_msg(pt_train(w, &q, &straight, NULL) == PT_OK, "%s", pt_last_error());
        float b1, b2;
        const float *w1 = pt_model_weights(resumed, &b1), *w2 = pt_model_weights(straight, &b2);
        ck_assert_msg(memcmp(w1, w2, 40 * sizeof *w1) == 0 && b1 == b2,
                      "case %zu: the resumed run differs from the uninterrupted one", k);
        ck_assert_int_eq(pt_dataset_intact(w), PT_OK);
        pt_model_free(resumed);
        pt_model_free(straight);
        pt_model_free(m);
        pt_dataset_free(w);
        unlink(path);
    }
    unlink(whole);
}
END_TEST

/* Truncated before the first epoch ended: no model, and the message says why; scoring and
 * writing the dataset fail too (the output left unwritten), rather than using the zeros. */
START_TEST(test_file_shrinks_before_an_epoch_ends)
{
    char path[512], out[512];
    snprintf(path, sizeof path, "%s", noisy_ptd(2000, 40));
    snprintf(out, sizeof out, "%s", tu_path("shrink", ".svm"));
    const shrink_case c = {PT_PATH_ONLINE, 1, 0, NULL};
    pt_dataset *ds = read_case(path, &c);
    pt_train_params p = case_params(&c, 1);
    pt_model *m0 = NULL, *m = (pt_model *)1;
    ck_assert_int_eq(pt_train(ds, &p, &m0, NULL), PT_OK);
    ck_assert_int_eq(truncate(path, 4096), 0);
    ck_assert_int_eq(pt_train(ds, &p, &m, NULL), PT_ERR_IO);
    ck_assert_ptr_null(m);
    HAS(pt_last_error(), "before any epoch was read whole: no model");
    pt_eval ev;
    ck_assert_int_eq(pt_model_evaluate(m0, ds, &ev), PT_ERR_IO);
    HAS(pt_last_error(), "file shrank while being read");
    float *sc = malloc(2000 * sizeof *sc);
    ck_assert_int_eq(pt_model_scores(m0, ds, sc), PT_ERR_IO);
    free(sc);
    ck_assert_int_eq(pt_dataset_write(ds, out, PT_FORMAT_LIBSVM), PT_ERR_IO);
    ck_assert_int_eq(access(out, F_OK), -1);
    pt_model_free(m0);
    pt_dataset_free(ds);
    unlink(path);
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
    tc = tcase_create("shrinking data");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_file_shrinks_under_the_run);
    tcase_add_test(tc, test_file_shrinks_before_an_epoch_ends);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
