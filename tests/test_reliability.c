/* Reliability: what happens when the disk fills up, when memory runs out, when the input holds
 * NaN or Inf, and whether a run is reproducible bit for bit (same seed; 1 or 2 threads).
 * Also the regression tests of what the fuzzers (tests/fuzz/) found.
 *
 * Disk full is simulated with RLIMIT_FSIZE (`ulimit -f`) with SIGXFSZ ignored, so a write
 * past the limit fails with EFBIG; memory exhaustion with RLIMIT_AS (`ulimit -v`). Both run
 * in a child process. Under AddressSanitizer an address-space limit cannot work (the shadow
 * memory alone is terabytes of reservations), so those tests print a note and skip there. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "paths/paths.h"
#include "testutil.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif


/* A skipped check says so (stderr: unbuffered, so it survives check's forked children). */
static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("note: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
}

static char path_buf[16][512];
static const char *keep(int slot, const char *p)
{
    snprintf(path_buf[slot], sizeof path_buf[slot], "%s", p);
    return path_buf[slot];
}

/* --------------------------------------------------------------------------- helpers */

/* tu_run_cli_sh with printf-style arguments. */
static int run_sh(char **out, char **err, const char *prefix, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int run_sh(char **out, char **err, const char *prefix, const char *fmt, ...)
{
    char args[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    return tu_run_cli_sh(prefix, args, out, err);
}

static int run(char **out, char **err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int run(char **out, char **err, const char *fmt, ...)
{
    char args[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    return run_sh(out, err, "", "%s", args);
}

/* A CLI step that must succeed. */
static void ok(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void ok(const char *fmt, ...)
{
    char args[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    char *out, *err;
    int rc = run(&out, &err, "%s", args);
    ck_assert_msg(rc == 0, "ptron %s: exit %d: %s", args, rc, err);
    free(out);
    free(err);
}

/* Model files equal line for line, except lines recording thread counts (and the checksum,
 * which covers them). Returns the first differing line (static buffer) or NULL. */
static const char *model_diff(const char *a, const char *b)
{
    static char msg[512];
    char *x = tu_read_file(a, NULL), *y = tu_read_file(b, NULL);
    ck_assert_msg(x && y, "cannot read %s or %s", a, b);
    const char *res = NULL;
    char *sx, *sy;
    char *lx = strtok_r(x, "\n", &sx), *ly = strtok_r(y, "\n", &sy);
    for (int line = 1;; line++) {
        while (lx && (strncmp(lx, "threads", 7) == 0 || strncmp(lx, "checksum ", 9) == 0))
            lx = strtok_r(NULL, "\n", &sx);
        while (ly && (strncmp(ly, "threads", 7) == 0 || strncmp(ly, "checksum ", 9) == 0))
            ly = strtok_r(NULL, "\n", &sy);
        if (!lx || !ly) {
            if (lx || ly) {
                snprintf(msg, sizeof msg, "one file is longer: '%s'", lx ? lx : ly);
                res = msg;
            }
            break;
        }
        if (strcmp(lx, ly) != 0) {
            snprintf(msg, sizeof msg, "line %d: '%.200s' vs '%.200s'", line, lx, ly);
            res = msg;
            break;
        }
        lx = strtok_r(NULL, "\n", &sx);
        ly = strtok_r(NULL, "\n", &sy);
    }
    free(x);
    free(y);
    return res;
}

/* Files in path's directory whose names start with path's base name + ".tmp." (what
 * pt_write_atomic leaves behind if it does not clean up). */
static int temp_leftovers(const char *path)
{
    char dir[512], prefix[512];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    const char *base = slash ? slash + 1 : path;
    snprintf(prefix, sizeof prefix, "%s.tmp.", base);
    if (slash) *slash = '\0';
    else snprintf(dir, sizeof dir, ".");
    DIR *d = opendir(dir);
    ck_assert(d != NULL);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    closedir(d);
    return n;
}

/* Run fn in a child under a resource limit; the child's message comes back in msg. Returns
 * the child's exit status (fn's return value), or 1000 + the signal that killed it. */
typedef int (*child_fn)(const void *arg, char *msg, size_t cap);

static int in_child(int resource, rlim_t limit, child_fn fn, const void *arg, char *msg, size_t cap)
{
    int fds[2];
    ck_assert(pipe(fds) == 0);
    fflush(NULL);
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        signal(SIGXFSZ, SIG_IGN); /* a write past RLIMIT_FSIZE then fails with EFBIG */
        struct rlimit rl;
        getrlimit(resource, &rl);
        rl.rlim_cur = limit;
        if (setrlimit(resource, &rl) != 0) _exit(90);
        char m[2048] = "";
        int rc = fn(arg, m, sizeof m);
        ssize_t w = write(fds[1], m, strlen(m));
        (void)w;
        _exit(rc);
    }
    close(fds[1]);
    size_t got = 0;
    ssize_t r;
    while (got + 1 < cap && (r = read(fds[0], msg + got, cap - 1 - got)) > 0) got += (size_t)r;
    msg[got] = '\0';
    close(fds[0]);
    int st;
    ck_assert(waitpid(pid, &st, 0) == pid);
    return WIFSIGNALED(st) ? 1000 + WTERMSIG(st) : WEXITSTATUS(st);
}

/* A dataset of n rows and d features with varied values (no zeros) and labels +1/-1. */
static pt_dataset *make_dataset(size_t n, size_t d)
{
    pt_dataset *ds = pt_dataset_create(n, d);
    ck_assert(ds != NULL);
    double *y = malloc(n * sizeof *y);
    for (size_t i = 0; i < n; i++) {
        float *x = pt_dataset_row(ds, i);
        for (size_t j = 0; j < d; j++) x[j] = (float)((i * 31 + j * 17) % 1000) / 7.0f - 60.5f;
        y[i] = i % 2 ? 1.0 : -1.0;
    }
    ck_assert_int_eq(pt_dataset_set_labels(ds, y), PT_OK);
    free(y);
    return ds;
}

static const char *write_text(const char *tag, const char *ext, const char *text)
{
    return tu_write_file(tag, ext, text);
}

/* ------------------------------------------------------------- fuzz regressions */

/* Found by fuzz_libsvm and fuzz_csv: the text writers' put_float (src/data/io_text.h) converted a
 * float to int32_t before checking its magnitude, undefined behaviour for |v| >= 2^31 (UBSan
 * stops there). The values must also come back exactly. */
START_TEST(test_text_writers_large_values)
{
    const float vals[] = {3.4028235e38f, -1e10f, 2147483648.0f, -2147483904.0f, 1e9f, 123.0f,
                          -4294967296.0f, 999999936.0f};
    const size_t d = sizeof vals / sizeof vals[0];
    double y[2] = {-1, 1};
    float x[2 * 8];
    for (size_t j = 0; j < d; j++) {
        x[j] = vals[j];
        x[d + j] = -vals[j];
    }
    pt_dataset *ds = tu_dataset(2, d, x, y);
    const pt_format fmts[] = {PT_FORMAT_LIBSVM, PT_FORMAT_CSV};
    for (int f = 0; f < 2; f++) {
        const char *p = tu_path("big", f ? ".csv" : ".svm");
        ck_assert_msg(pt_dataset_write(ds, p, fmts[f]) == PT_OK, "%s", pt_last_error());
        pt_dataset *back;
        ck_assert_msg(pt_dataset_read(p, NULL, &back) == PT_OK, "%s", pt_last_error());
        ck_assert_uint_eq(pt_dataset_d(back), d);
        for (size_t i = 0; i < 2; i++)
            for (size_t j = 0; j < d; j++)
                ck_assert_msg(pt_dataset_row_const(back, i)[j] == x[i * d + j],
                              "%s: row %zu feature %zu: %.9g came back as %.9g",
                              pt_format_name(fmts[f]), i, j, (double)x[i * d + j],
                              (double)pt_dataset_row_const(back, i)[j]);
        pt_dataset_free(back);
        unlink(p);
    }
    pt_dataset_free(ds);
}
END_TEST

/* A kernel model text with "n_sv 0" and d features, with its checksum. */
static char *kernel_model_text(unsigned long long d)
{
    char *t = malloc(4096);
    int k = snprintf(t, 4096,
                     "ptron-model 1\npath kernel\nvariant classic\nbias 1\nd %llu\nnclass 2\n"
                     "labels -1 1\nmulticlass ovr\neta 1\nmargin 0\nepochs 10\nshuffle 0\nseed 1\n"
                     "loss perceptron\nlambda 0\nschedule constant\nbatch_size 0\ntol 0\n"
                     "average_iterates 0\nbatch_impl auto\nkernel rbf\ndegree 2\ngamma 1\ncoef0 1\n"
                     "cache_mb 0\ngram_storage auto\nepochs_run 1\nb 0\nn_sv 0\n",
                     d);
    snprintf(t + k, 4096 - (size_t)k, "checksum %016llx\n",
             (unsigned long long)pt_checksum(t, (size_t)k));
    return t;
}

static int load_model_child(const void *arg, char *msg, size_t cap)
{
    pt_model *m;
    pt_status s = pt_model_load(arg, &m);
    snprintf(msg, cap, "status %d: %s", (int)s, pt_last_error());
    pt_model_free(m);
    return s == PT_ERR_NOMEM ? 1 : 0;
}

/* Found by fuzz_model: a kernel model file of a few hundred bytes with "n_sv 0" and
 * "d 1000000000" made pt_model_load allocate d + 1 floats (4 GB) for a row buffer it never
 * uses (src/model/model_io.c, parse_kernel). A file this small must load, or be refused as a bad
 * file, within a small address space. */
START_TEST(test_kernel_model_huge_d_small_file)
{
    /* The format as the loader knows it: the hand-written model must load, or the test below
     * would pass for the wrong reason. */
    char *t = kernel_model_text(3);
    const char *small = keep(0, tu_write_file("kd", ".model", t));
    free(t);
    pt_model *m;
    pt_status s = pt_model_load(small, &m);
    pt_model_free(m);
    ck_assert_msg(s == PT_OK, "the hand-written kernel model does not load: %s", pt_last_error());
    if (UNDER_ASAN) {
        note("test_kernel_model_huge_d_small_file skipped under AddressSanitizer "
               "(needs an address-space limit)\n");
        return;
    }
    t = kernel_model_text(1000000000ull);
    size_t len = strlen(t);
    const char *big = keep(1, tu_write_file("kd", ".model", t));
    free(t);
    char msg[2048];
    int rc = in_child(RLIMIT_AS, (rlim_t)1 << 30, load_model_child, big, msg, sizeof msg);
    ck_assert_msg(rc == 0, "a %zu-byte model file needs more than 1 GiB to load (exit %d): %s",
                  len, rc, msg);
}
END_TEST

/* Found by fuzz_cli: `ptron predict MODEL DATA -o FILE` cast each predicted label value to
 * size_t as a class index for pt_model_class_name (src/cli/cmd_predict.c), undefined for -1
 * (UBSan stops there). The file must hold the predicted labels, -1 and 1 here. */
START_TEST(test_predict_output_negative_labels)
{
    const char *data = keep(0, tu_write_file("pl", ".svm", "1 1:1\n-1 1:-1\n1 1:2\n-1 1:-2\n"));
    const char *model = keep(1, tu_path("pl", ".model")), *pred = keep(2, tu_path("pl", ".txt"));
    ok("train %s -o %s --quiet", data, model);
    char *out, *err;
    int rc = run(&out, &err, "predict %s %s -o %s --quiet", model, data, pred);
    ck_assert_msg(rc == 0, "exit %d: %s", rc, err);
    char *p = tu_read_file(pred, NULL);
    ck_assert_ptr_nonnull(p);
    ck_assert_str_eq(p, "1\n-1\n1\n-1\n");
    free(p);
    free(out);
    free(err);
}
END_TEST

/* ----------------------------------------------------------- write failures (disk full) */

typedef struct write_job {
    const pt_dataset *ds;
    const pt_model *m;
    const char *path;
    pt_format f;
} write_job;

static int write_child(const void *arg, char *msg, size_t cap)
{
    const write_job *j = arg;
    pt_status s = j->ds ? pt_dataset_write(j->ds, j->path, j->f) : pt_model_save(j->m, j->path);
    snprintf(msg, cap, "%s", pt_last_error());
    return (int)s;
}

/* Write under a 64 KiB file-size limit over an existing file: PT_ERR_IO, the old contents
 * intact, no temporary file left behind, and a message naming the file (a missing name is
 * appended to bad, so one run reports every case). */
static void check_write_fails(const write_job *j0, const char *what, char *bad, size_t cap)
{
    write_job j = *j0;
    const char *old = "previous contents\n";
    FILE *f = fopen(j.path, "w");
    ck_assert(f && fputs(old, f) >= 0 && fclose(f) == 0);
    char msg[2048];
    int rc = in_child(RLIMIT_FSIZE, 64 << 10, write_child, &j, msg, sizeof msg);
    ck_assert_msg(rc == PT_ERR_IO, "%s: status %d, expected PT_ERR_IO (%d): %s", what, rc,
                  PT_ERR_IO, msg);
    char *now = tu_read_file(j.path, NULL);
    ck_assert_msg(now && strcmp(now, old) == 0, "%s: %s was changed by a failed write", what, j.path);
    free(now);
    ck_assert_msg(temp_leftovers(j.path) == 0, "%s: a temporary file was left next to %s", what,
                  j.path);
    if (!strstr(msg, j.path))
        snprintf(bad + strlen(bad), cap - strlen(bad), "\n  %s: the message does not name the file: '%s'",
                 what, msg);
    unlink(j.path);
}

/* Small outputs fail when the stream is flushed, large ones (over the 1 MiB stream buffer)
 * inside the writer: both must say which file. */
START_TEST(test_dataset_write_disk_full)
{
    const struct {
        size_t n, d;
    } sizes[] = {{2000, 16}, {6000, 64}}; /* .ptd: 128 KB and 1.5 MB; text about 3x that */
    const struct {
        pt_format f;
        const char *ext;
    } fmts[] = {{PT_FORMAT_LIBSVM, ".svm"}, {PT_FORMAT_CSV, ".csv"}, {PT_FORMAT_PTD, ".ptd"}};
    char bad[4096] = "";
    for (size_t k = 0; k < 2; k++) {
        pt_dataset *ds = make_dataset(sizes[k].n, sizes[k].d);
        for (size_t f = 0; f < 3; f++) {
            char what[128];
            snprintf(what, sizeof what, "%s, %zu x %zu", pt_format_name(fmts[f].f), sizes[k].n,
                     sizes[k].d);
            write_job j = {ds, NULL, keep(2, tu_path("full", fmts[f].ext)), fmts[f].f};
            check_write_fails(&j, what, bad, sizeof bad);
        }
        pt_dataset_free(ds);
    }
    ck_assert_msg(bad[0] == '\0', "%s", bad);
}
END_TEST

START_TEST(test_model_save_disk_full)
{
    const size_t ds_d[] = {20000, 200000}; /* about 200 KB and 2 MB of model text */
    char bad[4096] = "";
    for (size_t k = 0; k < 2; k++) {
        pt_dataset *ds = make_dataset(4, ds_d[k]);
        pt_train_params p;
        pt_train_params_init(&p);
        p.epochs = 2;
        p.threads = 1;
        pt_model *m;
        ck_assert_msg(pt_train(ds, &p, &m, NULL) == PT_OK, "%s", pt_last_error());
        char what[64];
        snprintf(what, sizeof what, "model of %zu features", ds_d[k]);
        write_job j = {NULL, m, keep(2, tu_path("full", ".model")), PT_FORMAT_AUTO};
        check_write_fails(&j, what, bad, sizeof bad);
        pt_model_free(m);
        pt_dataset_free(ds);
    }
    ck_assert_msg(bad[0] == '\0', "%s", bad);
}
END_TEST

/* `ptron train ... -o existing.model` with the disk full: exit 2, existing.model intact. */
START_TEST(test_cli_train_disk_full_keeps_model)
{
    const char *data = keep(0, tu_path("wide", ".ptd")), *model = keep(1, tu_path("keep", ".model"));
    const char *tiny = keep(2, tu_write_file("tiny", ".svm", "1 1:1\n-1 1:-1\n"));
    ok("gen separable --n 50 --d 5000 -o %s", data);
    ok("train %s -o %s --quiet", tiny, model);
    size_t before_len;
    char *before = tu_read_file(model, &before_len);
    char *out, *err;
    /* 16 KiB (dash counts 512-byte blocks); the model text is about 50 KB */
    int rc = run_sh(&out, &err, "trap '' XFSZ; ulimit -f 32", "train %s -o %s --quiet", data, model);
    ck_assert_msg(rc == 2, "exit %d, expected 2: %s", rc, err);
    size_t after_len;
    char *after = tu_read_file(model, &after_len);
    ck_assert_msg(after && after_len == before_len && memcmp(before, after, before_len) == 0,
                  "%s was changed by a failed save", model);
    ck_assert_int_eq(temp_leftovers(model), 0);
    HAS(err, model);
    free(out);
    free(err);
    free(before);
    free(after);

    /* convert too: the output is left as it was */
    const char *conv = keep(3, tu_write_file("conv", ".svm", "old\n"));
    rc = run_sh(&out, &err, "trap '' XFSZ; ulimit -f 32", "convert %s -o %s", data, conv);
    ck_assert_msg(rc == 2, "convert: exit %d, expected 2: %s", rc, err);
    char *c = tu_read_file(conv, NULL);
    ck_assert_str_eq(c, "old\n");
    ck_assert_int_eq(temp_leftovers(conv), 0);
    HAS(err, conv);
    free(c);
    free(out);
    free(err);
}
END_TEST

/* `ptron predict MODEL DATA -o existing.txt` with the disk full: exit 2 naming the file, the
 * previous predictions intact, no temporary left. */
START_TEST(test_cli_predict_disk_full_keeps_predictions)
{
    const char *data = keep(0, tu_path("pd", ".svm")), *model = keep(1, tu_path("pd", ".model"));
    const char *pred = keep(2, tu_path("pd", ".txt"));
    ok("gen separable --n 4000 --d 3 --seed 3 -o %s", data);
    ok("train %s -o %s --quiet", data, model);
    ok("predict %s %s -o %s --quiet", model, data, pred);
    size_t before_len;
    char *before = tu_read_file(pred, &before_len);
    ck_assert_uint_gt(before_len, 4 * 4000 / 2); /* past the 1 KiB limit below */
    char *out, *err;
    /* 1 KiB (dash counts 512-byte blocks) */
    int rc = run_sh(&out, &err, "trap '' XFSZ; ulimit -f 2", "predict %s %s -o %s", model, data,
                    pred);
    ck_assert_msg(rc == 2, "exit %d, expected 2: %s", rc, err);
    HAS(err, pred);
    size_t after_len;
    char *after = tu_read_file(pred, &after_len);
    ck_assert_msg(after && after_len == before_len && memcmp(before, after, before_len) == 0,
                  "%s was changed by a failed write", pred);
    ck_assert_int_eq(temp_leftovers(pred), 0);
    free(out);
    free(err);
    free(before);
    free(after);
}
END_TEST

/* -o /dev/full: ENOSPC is exit 2 with the reason, and /dev/full is still the device (as root, a
 * rename over it once turned it into a regular file). */
START_TEST(test_cli_output_to_dev_full)
{
    const char *data = keep(0, tu_write_file("df", ".svm", "1 1:1\n-1 1:-1\n1 1:2\n-1 1:-2\n"));
    const char *model = keep(1, tu_path("df", ".model"));
    ok("train %s -o %s --quiet", data, model);
    const char *cmds[] = {"convert %s -o /dev/full --to libsvm", "predict %s %s -o /dev/full",
                          "train %s -o /dev/full --quiet"};
    for (int k = 0; k < 3; k++) {
        char *out, *err;
        int rc = k == 1 ? run(&out, &err, cmds[k], model, data) : run(&out, &err, cmds[k], data);
        ck_assert_msg(rc == 2, "%s: exit %d, expected 2: %s", cmds[k], rc, err);
        HAS(err, "/dev/full: write failed: No space left on device");
        struct stat sb;
        ck_assert_int_eq(lstat("/dev/full", &sb), 0);
        ck_assert_msg(S_ISCHR(sb.st_mode), "%s: /dev/full is no longer a character device", cmds[k]);
        free(out);
        free(err);
    }
}
END_TEST

/* ------------------------------------------------------------------- inputs kept */

/* An output that is an input (the same file, or a symlink to it) is refused naming both
 * paths, exit 1, and the input is left as it was: train (-o, MODEL, --checkpoint), convert,
 * scale (-o, --save-params), expand and predict. */
START_TEST(test_cli_output_is_input_refused)
{
    const char *data = keep(0, tu_path("same", ".svm")), *link = keep(1, tu_path("same", ".svm"));
    const char *model = keep(2, tu_path("same", ".model"));
    ok("gen separable --n 200 --d 3 --seed 2 -o %s", data);
    ok("train %s -o %s --quiet", data, model);
    ck_assert_int_eq(symlink(data, link), 0);
    size_t len;
    char *before = tu_read_file(data, &len);
    const struct {
        const char *fmt, *out_what, *in_what;
    } cases[] = {
        {"train %1$s -o %1$s --quiet", "-o", "DATA"},
        {"train %1$s %2$s --quiet", "MODEL", "DATA"},
        {"train %1$s -o %3$s --checkpoint %2$s --quiet", "--checkpoint", "DATA"},
        {"train %3$s -o %2$s --test %1$s --quiet", "-o", "--test"},
        {"convert %1$s -o %2$s", "-o", "IN"},
        {"convert %1$s -o %1$s --to csv", "-o", "IN"},
        {"scale %1$s -o %2$s", "-o", "DATA"},
        {"scale %1$s -o %4$s --save-params %2$s", "--save-params", "DATA"},
        {"expand %1$s --degree 2 -o %2$s", "-o", "FILE"},
        {"predict %3$s %1$s -o %2$s", "-o", "FILE"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        /* %3$s: the model, or another data file to train on (--test names the shared one);
         * %4$s: an output of no concern, which a refused command never writes */
        const char *other = k == 3 ? keep(3, tu_path("other", ".svm")) : model;
        if (k == 3) ok("gen separable --n 50 --d 3 -o %s", other);
        const char *spare = keep(4, tu_path("spare", ".out"));
        char args[2048];
        snprintf(args, sizeof args, cases[k].fmt, data, link, other, spare);
        char *out, *err;
        int rc = run(&out, &err, "%s", args);
        ck_assert_msg(rc == 1, "%s: exit %d, expected 1: %s", args, rc, err);
        HAS(err, "are the same file");
        HAS(err, cases[k].out_what);
        HAS(err, cases[k].in_what);
        HAS(err, data);
        size_t after_len;
        char *after = tu_read_file(data, &after_len);
        ck_assert_msg(after && after_len == len && memcmp(before, after, len) == 0,
                      "%s: the input was changed", args);
        ck_assert_int_eq(access(spare, F_OK), -1);
        free(after);
        free(out);
        free(err);
    }
    /* another file of the same name elsewhere is no input: written */
    ok("convert %s -o %s --to csv", data, keep(5, tu_path("same", ".csv")));
    free(before);
    unlink(link);
}
END_TEST

/* ------------------------------------------------------------------ bounded memory */

/* The peak resident memory (KiB) of a CLI run that must succeed. */
static long peak_ok(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static long peak_ok(const char *fmt, ...)
{
    char args[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    char *err;
    long peak = 0;
    int rc = tu_run_cli_peak(NULL, args, NULL, &err, &peak);
    ck_assert_msg(rc == 0, "ptron %s: exit %d: %s", args, rc, err);
    free(err);
    return peak;
}

/* On a streamed .ptd file (its matrix ten to twenty times --mem-mb), --bounds and the writers
 * (text, and .ptd) walk the windows as training does: their peak stays within 10 MiB (their
 * write buffers) of a streamed epoch's, below the matrix, which they once held resident whole
 * (37.5 MiB of float32 rows, 18.75 MiB of bf16 ones, widened where read). */
START_TEST(test_streamed_bounds_and_writers_within_budget)
{
    const char *f32 = keep(0, tu_path("stream", ".ptd")), *bf16 = keep(1, tu_path("stream", ".ptd"));
    const char *model = keep(2, tu_path("stream", ".model")), *out = keep(3, tu_path("stream", ""));
    ok("gen separable --n 100000 --d 96 --seed 5 -o %s", f32); /* a 38.4 MB matrix */
    ok("convert %s -o %s --dtype bf16", f32, bf16);            /* 19.2 MB */
    const struct {
        const char *data;
        long mem_mb;
    } files[] = {{f32, 4}, {bf16, 2}};
    const char *cmds[] = {"train %s -o %s --epochs 1 --mem-mb %ld --bounds --quiet",
                          "convert %s -o %s.svm --mem-mb %ld", "convert %s -o %s.csv --mem-mb %ld",
                          "convert %s -o %s.ptd --mem-mb %ld"};
    for (size_t f = 0; f < 2; f++) {
        const char *data = files[f].data;
        long base = peak_ok("train %s -o %s --epochs 1 --mem-mb %ld --quiet", data, model,
                            files[f].mem_mb);
        for (size_t k = 0; k < sizeof cmds / sizeof *cmds; k++) {
            long peak = peak_ok(cmds[k], data, k ? out : model, files[f].mem_mb);
            ck_assert_msg(peak < base + 10240, "%s (%s): peak %ld KiB, a streamed epoch's %ld KiB",
                          cmds[k], data, peak, base);
        }
        char name[600];
        for (const char *const *ext = (const char *const[]){".svm", ".csv", ".ptd", NULL}; *ext;
             ext++) {
            snprintf(name, sizeof name, "%s%s", out, *ext);
            unlink(name);
        }
    }
    unlink(f32);
    unlink(bf16);
}
END_TEST

/* Text that cannot be mapped (gzip, standard input, a device) is read into memory whole: it
 * stops at --mem-mb with a message naming the budget and the way out, its peak within four
 * times the budget of a tiny run's (the budget, and the smaller buffers it grew out of, which
 * a sanitizer's allocator keeps in quarantine), however much text there is: 96 MiB of zeros
 * behind a 94 KB gzip file, /dev/zero without end, 96 MiB of valid lines on a pipe. */
START_TEST(test_unmappable_text_stops_at_budget)
{
    const char *tiny = keep(0, tu_write_file("tiny", ".svm", "1 1:1\n-1 1:-1\n"));
    const char *gz = keep(1, tu_path("zeros", ".svm.gz")), *model = keep(2, tu_path("t", ".model"));
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "head -c 100663296 /dev/zero | gzip -1 >%s", gz);
    ck_assert_int_eq(system(cmd), 0);
    char *err;
    long base = 0;
    char args[2048];
    snprintf(args, sizeof args, "train %s -o %s --quiet", tiny, model);
    ck_assert_int_eq(tu_run_cli_peak(NULL, args, NULL, NULL, &base), 0);
    const struct {
        const char *feed, *fmt, *what;
    } cases[] = {
        {NULL, "train %s -o %s --mem-mb 8", "gzip text is decompressed"},
        {NULL, "train /dev/zero -o %2$s --format csv --mem-mb 8", "a device or pipe"},
        {NULL, "train /dev/zero -o %2$s --mem-mb 8", "a device or pipe"},
        {NULL, "convert %s -o %2$s.ptd --mem-mb 8", "gzip text is decompressed"},
        {"yes '1 1:0.5 2:1' | head -c 100663296", "train - -o %2$s --mem-mb 8",
         "standard input is read"},
        {"yes '1,0.5,1' | head -c 100663296", "convert - -o %2$s.ptd --format csv --mem-mb 8",
         "standard input is read"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        snprintf(args, sizeof args, cases[k].fmt, gz, model);
        long peak = 0;
        int rc = tu_run_cli_peak(cases[k].feed, args, NULL, &err, &peak);
        ck_assert_msg(rc == 2, "%s: exit %d, expected 2: %s", args, rc, err);
        HAS(err, "exceeds the memory budget of 8.0 MiB (--mem-mb)");
        HAS(err, cases[k].what);
        HAS(err, "give the path of");
        ck_assert_msg(peak < base + 4 * 8192, "%s: peak %ld KiB, a tiny run's %ld KiB", args, peak,
                      base);
        free(err);
    }
    unlink(gz);
}
END_TEST

/* ------------------------------------------------------------------ shrinking inputs */

/* `ptron train DATA --checkpoint FIFO -o MODEL` with DATA truncated while the run is blocked in
 * writing epoch 1's checkpoint (the test holds the FIFO's reading end and reads only after the
 * truncation; the checkpoint is larger than the pipe holds, so the writer is blocked until
 * then): epoch 2 then reads the part that went. No SIGBUS: exit 2 naming the file, and MODEL
 * is epoch 1's checkpoint, which --resume on the restored file continues to the model of the
 * uninterrupted run. In memory, streamed (--mem-mb) and on the batch path. */
START_TEST(test_cli_data_shrinks_during_training)
{
    const char *whole = keep(0, tu_path("whole", ".ptd")), *data = keep(1, tu_path("data", ".ptd"));
    const char *fifo = keep(2, tu_path("ck", ".fifo")), *model = keep(3, tu_path("m", ".model"));
    const char *resumed = keep(4, tu_path("r", ".model")), *straight = keep(5, tu_path("u", ".model"));
    const char *errf = keep(6, tu_path("shrink", ".err"));
    ok("gen noisy --n 256 --d 16384 --seed 3 -o %s", whole); /* 16 MiB; a model of ~200 KB */
    const char *variants[] = {"", "--mem-mb 4", "--path batch"};
    for (size_t k = 0; k < 3; k++) {
        char cmd[2048];
        snprintf(cmd, sizeof cmd, "cp %s %s", whole, data);
        ck_assert_int_eq(system(cmd), 0);
        unlink(fifo);
        ck_assert_int_eq(mkfifo(fifo, 0600), 0);
        snprintf(cmd, sizeof cmd, "train %s -o %s --epochs 3 --checkpoint %s %s", data, model,
                 fifo, variants[k]);
        int pid = tu_spawn_cli(cmd, NULL, errf);
        int rd = open(fifo, O_RDONLY); /* returns once epoch 1's checkpoint is being written */
        ck_assert_int_ge(rd, 0);
        ck_assert_int_eq(truncate(data, 4096), 0);
        int pipe_bytes = fcntl(rd, F_GETPIPE_SZ);
        size_t got = 0, cap = 1 << 20;
        char *ck = malloc(cap);
        for (ssize_t r; (r = read(rd, ck + got, cap - got)) > 0;) {
            got += (size_t)r;
            if (got == cap) ck = realloc(ck, cap *= 2);
        }
        close(rd);
        ck_assert_msg(pipe_bytes > 0 && got > (size_t)pipe_bytes, "the checkpoint (%zu bytes) "
                      "fits in the pipe (%d): the run was not held at epoch 1", got, pipe_bytes);
        int rc = tu_wait_cli(pid);
        char *err = tu_read_file(errf, NULL);
        ck_assert_msg(rc == 2, "%s: exit %d, expected 2: %s", cmd, rc, err);
        char want[600];
        snprintf(want, sizeof want, "%s: file shrank while training read it", data);
        HAS(err, want);
        HAS(err, "the model handed back is that of epoch 1");
        HAS(err, model);
        free(err);
        /* MODEL is the checkpoint of epoch 1 */
        const char *ckpath = keep(7, tu_write_bytes("ck", ".model", ck, got));
        free(ck);
        const char *diff = model_diff(ckpath, model);
        ck_assert_msg(!diff, "%s: the model saved is not epoch 1's checkpoint: %s", cmd, diff);
        /* resumed on the whole file: the uninterrupted run */
        snprintf(cmd, sizeof cmd, "cp %s %s", whole, data);
        ck_assert_int_eq(system(cmd), 0);
        ok("train %s --resume %s -o %s --epochs 3 --quiet %s", data, model, resumed, variants[k]);
        ok("train %s -o %s --epochs 3 --quiet %s", data, straight, variants[k]);
        diff = model_diff(resumed, straight);
        ck_assert_msg(!diff, "%s: resumed, not the uninterrupted run's model: %s", variants[k],
                      diff);
        unlink(ckpath);
    }
    unlink(fifo);
    unlink(whole);
    unlink(data);
}
END_TEST

/* ---------------------------------------------------------------- allocation failures */

/* A LIBSVM file whose dense matrix needs rows x (index) x 4 bytes. */
static const char *wide_libsvm(size_t rows, size_t index)
{
    size_t cap = rows * 48 + 16, len = 0;
    char *t = malloc(cap);
    for (size_t i = 0; i < rows; i++)
        len += (size_t)snprintf(t + len, cap - len, "%d 1:%zu %zu:1\n", i % 2 ? 1 : -1, i + 1, index);
    const char *p = tu_write_bytes("wide", ".svm", t, len);
    free(t);
    return p;
}

static int read_child(const void *arg, char *msg, size_t cap)
{
    pt_read_options o;
    pt_read_options_init(&o);
    o.mem_budget_bytes = (size_t)1 << 40; /* past the budget check: the allocation must fail */
    o.layout = PT_LAYOUT_DENSE;           /* (sparse, these rows would take a few KiB) */
    pt_dataset *ds;
    pt_status s = pt_dataset_read(arg, &o, &ds);
    snprintf(msg, cap, "%s", pt_last_error());
    pt_dataset_free(ds);
    return (int)s;
}

/* The library under a 1 GiB address-space limit, reading 2.4 GB of dense data: PT_ERR_NOMEM
 * naming what it could not allocate, and no crash. */
START_TEST(test_read_out_of_memory)
{
    if (UNDER_ASAN) {
        note("test_read_out_of_memory skipped under AddressSanitizer (address-space "
               "limit)\n");
        return;
    }
    const char *p = keep(0, wide_libsvm(300, 2000000));
    char msg[2048];
    int rc = in_child(RLIMIT_AS, (rlim_t)1 << 30, read_child, p, msg, sizeof msg);
    ck_assert_msg(rc == PT_ERR_NOMEM, "status %d, expected PT_ERR_NOMEM (%d): %s", rc, PT_ERR_NOMEM,
                  msg);
    ck_assert_msg(strstr(msg, "allocate") && strstr(msg, "feature matrix"),
                  "the message does not say what could not be allocated: '%s'", msg);
    unlink(p);
}
END_TEST

/* The CLI the same way (`ulimit -v`): exit 2, a message saying what it tried to allocate, no
 * signal. OpenBLAS reserves its buffers when the program loads and spins forever if it cannot
 * (below about 400 MB here), so the limit leaves it room. */
START_TEST(test_cli_out_of_memory)
{
    if (UNDER_ASAN) {
        note("test_cli_out_of_memory skipped under AddressSanitizer (address-space limit)\n");
        return;
    }
    const char *p = keep(0, wide_libsvm(300, 2000000)), *model = keep(1, tu_path("oom", ".model"));
    char *out, *err;
    int rc = run_sh(&out, &err, "ulimit -v 1048576",
                    "train %s -o %s --mem-mb 100000 --layout dense --quiet", p, model);
    ck_assert_msg(rc == 2, "exit %d (1000+: a signal), expected 2: %s", rc, err);
    HAS(err, "allocate");
    HAS(err, "feature matrix");
    ck_assert(access(model, F_OK) != 0);
    free(out);
    free(err);

    /* A budget refusal is the same kind of failure, said before allocating. */
    rc = run(&out, &err, "train %s -o %s --mem-mb 64 --layout dense --quiet", p, model);
    ck_assert_msg(rc == 2, "exit %d, expected 2: %s", rc, err);
    HAS(err, p);
    HAS(err, "MiB");
    free(out);
    free(err);

    /* Memory needed by training rather than loading: the kernel path's full Gram of
     * 30000^2 floats (3.6 GB). */
    const char *pts = keep(2, tu_path("gram", ".ptd"));
    ok("gen circle --n 30000 --d 2 -o %s", pts);
    rc = run_sh(&out, &err, "ulimit -v 1048576",
                "train %s -o %s --path kernel --gram full --cache-mb 100000 --mem-mb 100000 --quiet",
                pts, model);
    ck_assert_msg(rc == 2, "kernel: exit %d (1000+: a signal), expected 2: %s", rc, err);
    ck_assert_msg(strstr(err, "allocate") || strstr(err, "MiB"),
                  "kernel: the message does not say what it needed: %s", err);
    free(out);
    free(err);
    unlink(p);
    unlink(pts);
}
END_TEST

/* A one-feature model of K classes 0..K-1 whose class K-1 always wins (its bias is the
 * largest), saved to a new path. */
static const char *many_class_model(size_t K)
{
    double *labels = malloc(K * sizeof *labels);
    for (size_t c = 0; c < K; c++) labels[c] = (double)c;
    pt_model *m = pt_model_alloc_multiclass(1, K, labels);
    ck_assert_ptr_nonnull(m);
    pt_train_params_init(&m->params);
    m->path = m->params.path = PT_PATH_ONLINE;
    m->bias = m->params.bias = 1;
    m->multiclass = m->params.multiclass = PT_MULTI_OVR;
    m->epochs_run = 1;
    for (size_t c = 0; c < K; c++) m->Bk[c] = (float)c;
    const char *p = tu_path("classes", ".model");
    ck_assert_msg(pt_model_save(m, p) == PT_OK, "%s", pt_last_error());
    pt_model_free(m);
    free(labels);
    return p;
}

/* A crafted model of 15,000 classes made predict build a K x K confusion matrix (1.8 GB).
 * Above 1000 classes it is skipped with a note; accuracy and the per-class figures stay, and
 * the run fits in 1 GiB of address space. */
START_TEST(test_predict_many_classes)
{
    /* 10 rows: five of class 3 (wrong: class K-1 wins), five of class K-1 (right) */
    const char *data = keep(0, tu_write_file("mc", ".svm",
                                             "3 1:1\n14999 1:1\n3 1:1\n14999 1:1\n3 1:1\n"
                                             "14999 1:1\n3 1:1\n14999 1:1\n3 1:1\n14999 1:1\n"));
    const char *model = keep(1, many_class_model(15000));
    char *out, *err;
    int rc = UNDER_ASAN ? run(&out, &err, "predict %s %s", model, data)
                        : run_sh(&out, &err, "ulimit -v 1048576", "predict %s %s", model, data);
    ck_assert_msg(rc == 0, "exit %d (1000+: a signal): %s", rc, err);
    HAS(out, "Accuracy = 50% (5/10)");
    ck_assert_msg(!strstr(out, "confusion matrix"), "a confusion matrix was printed");
    HAS(err, "15000 classes: no confusion matrix above 1000 classes");
    free(out);
    free(err);
    rc = run(&out, &err, "predict %s %s --json", model, data);
    ck_assert_msg(rc == 0, "exit %d: %s", rc, err);
    HAS(out, "\"correct\": 5,");
    ck_assert_msg(!strstr(out, "\"confusion\""), "--json holds a confusion matrix");
    free(out);
    free(err);
    unlink(model);

    /* at the limit the matrix is there: 1000 x 1000 counts */
    const char *at = keep(2, tu_write_file("mc", ".svm", "3 1:1\n999 1:1\n"));
    model = keep(1, many_class_model(1000));
    rc = run(&out, &err, "predict %s %s --json", model, at);
    ck_assert_msg(rc == 0, "exit %d: %s", rc, err);
    HAS(out, "\"correct\": 1,");
    HAS(out, "\"confusion\": [");
    ck_assert_msg(!strstr(err, "no confusion matrix"), "%s", err);
    free(out);
    free(err);
    unlink(model);
}
END_TEST

/* Training with --epochs 1000000000 allocates nothing that grows with the epochs asked for
 * (the run state once held one entry per epoch, 8 GB up front): under a 1 GiB address-space
 * limit such a run trains, on every path that keeps a run state, until it is stopped. */
static int stop_at_3(int epoch, size_t mistakes, double seconds, void *user)
{
    (void)mistakes;
    (void)seconds;
    (void)user;
    return epoch == 3;
}

static int keep_nothing(const pt_model *m, int epoch, size_t mistakes, void *user)
{
    (void)m;
    (void)epoch;
    (void)mistakes;
    (void)user;
    return 0;
}

static int train_billion_child(const void *arg, char *msg, size_t cap)
{
    const pt_path *path = arg;
    pt_dataset *ds = make_dataset(64, 4);
    pt_train_params p;
    pt_train_params_init(&p);
    p.path = *path;
    p.epochs = 1000000000;
    p.threads = 1;
    p.eta = 0.01f;
    p.progress = stop_at_3;
    p.epoch_hook = keep_nothing;
    pt_model *m = NULL;
    pt_status s = pt_train(ds, &p, &m, NULL);
    snprintf(msg, cap, "status %d: %s", (int)s, pt_last_error());
    pt_model_free(m);
    pt_dataset_free(ds);
    return s == PT_ERR_INTERRUPTED ? 0 : 1;
}

START_TEST(test_billion_epochs_allocate_nothing_per_epoch)
{
    if (UNDER_ASAN) {
        note("test_billion_epochs_allocate_nothing_per_epoch skipped under AddressSanitizer "
             "(address-space limit)\n");
        return;
    }
    const pt_path paths[] = {PT_PATH_ONLINE, PT_PATH_BATCH, PT_PATH_KERNEL};
    for (int k = 0; k < 3; k++) {
        char msg[2048];
        int rc = in_child(RLIMIT_AS, (rlim_t)1 << 30, train_billion_child, &paths[k], msg, sizeof msg);
        ck_assert_msg(rc == 0, "%s path, --epochs 1000000000: exit %d: %s", pt_path_name(paths[k]),
                      rc, msg);
    }
}
END_TEST

/* ------------------------------------------------------------------------ NaN and Inf */

static void refused(const char *ext, const char *text, const char *where, const char *what)
{
    const char *p = tu_write_file("nan", ext, text);
    pt_dataset *ds;
    pt_status s = pt_dataset_read(p, NULL, &ds);
    ck_assert_msg(s == PT_ERR_PARSE, "%s: status %d, expected PT_ERR_PARSE: %s", text, (int)s,
                  pt_last_error());
    ck_assert_ptr_null(ds);
    char want[600];
    snprintf(want, sizeof want, "%s:%s", p, where);
    ck_assert_msg(strstr(pt_last_error(), want) != NULL, "'%s' not in '%s'", want, pt_last_error());
    ck_assert_msg(strstr(pt_last_error(), what) != NULL, "'%s' not in '%s'", what, pt_last_error());
    unlink(p);
}

START_TEST(test_nan_inf_refused_libsvm)
{
    refused(".svm", "1 1:1\n-1 1:nan\n", "2:", "not finite");
    refused(".svm", "1 1:1\n# comment\n-1 2:NaN 3:1\n", "3:", "not finite");
    refused(".svm", "1 1:inf\n", "1:", "not finite");
    refused(".svm", "1 1:1\n-1 1:-Infinity\n", "2:", "not finite");
    refused(".svm", "1 1:1e39\n", "1:", "not finite"); /* overflows float */
    refused(".svm", "1 1:1\r\n-1 1:nan(123)\r\n", "2:", "not finite");
    refused(".svm", "nan 1:1\n", "1:", "not finite");
    refused(".svm", "1 1:1\ninf 1:1\n", "2:", "not finite");
}
END_TEST

START_TEST(test_nan_inf_refused_csv)
{
    refused(".csv", "1,2\n-1,nan\n", "2:", "not finite");
    refused(".csv", "y,a,b\n1,2,3\n-1,4,inf\n", "3:", "not finite");
    refused(".csv", "1,-Inf\n", "1:", "not finite");
    refused(".csv", "1,2\r\n-1,1e39\r\n", "2:", "not finite");
    refused(".csv", "NaN,1\n-1,2\n", "1:", "not finite");
}
END_TEST

/* And through the CLI: exit 2, file:line in the message. */
START_TEST(test_nan_cli)
{
    const char *p = keep(0, write_text("nan", ".svm", "1 1:1\n-1 1:1\n1 2:nan\n"));
    char *out, *err;
    int rc = run(&out, &err, "train %s -o %s", p, tu_path("nan", ".model"));
    ck_assert_int_eq(rc, 2);
    char want[600];
    snprintf(want, sizeof want, "%s:3:", p);
    HAS(err, want);
    free(out);
    free(err);
}
END_TEST

/* -------------------------------------------------------------------------- determinism */

/* Train twice with the same data, options and seed: the same model file. */
static void same_twice(const char *data, const char *opts, const char *what)
{
    const char *a = keep(4, tu_path("det", ".model")), *b = keep(5, tu_path("det", ".model"));
    ok("train %s -o %s --quiet %s", data, a, opts);
    ok("train %s -o %s --quiet %s", data, b, opts);
    const char *d = model_diff(a, b);
    ck_assert_msg(d == NULL, "%s: two runs differ: %s", what, d);
    unlink(a);
    unlink(b);
}

/* The same options on 1 and on 2 threads: the same model file. */
static void same_threads(const char *data, const char *opts, const char *what)
{
    const char *a = keep(4, tu_path("thr", ".model")), *b = keep(5, tu_path("thr", ".model"));
    char *out, *err;
    int rc = run(&out, &err, "train %s -o %s --quiet --threads 1 %s", data, a, opts);
    ck_assert_msg(rc == 0, "%s, 1 thread: exit %d: %s", what, rc, err);
    free(out);
    free(err);
    ok("train %s -o %s --quiet --threads 2 %s", data, b, opts);
    const char *d = model_diff(a, b);
    ck_assert_msg(d == NULL, "%s: 1 and 2 threads differ: %s", what, d);
    unlink(a);
    unlink(b);
}

START_TEST(test_deterministic_online)
{
    const char *sep = keep(0, tu_path("det", ".ptd")), *noisy = keep(1, tu_path("detn", ".svm"));
    ok("gen separable --n 20000 --d 32 --margin 0.02 --seed 5 -o %s", sep);
    ok("gen noisy --n 5000 --d 16 --noise 0.05 --seed 6 -o %s", noisy);
    const char *datas[] = {sep, noisy};
    for (int k = 0; k < 2; k++) {
        same_twice(datas[k], "--pass sequential --shuffle --seed 11 --epochs 5", "online sequential");
        same_twice(datas[k], "--pass blocked --shuffle --seed 11 --epochs 5 --threads 2",
                   "online blocked");
        same_twice(datas[k], "--pass blocked --shuffle --seed 11 --epochs 5 --averaged --threads 2",
                   "online blocked averaged");
        same_threads(datas[k], "--pass blocked --shuffle --seed 3 --epochs 5", "online blocked");
        same_threads(datas[k], "--pass blocked --shuffle --seed 3 --epochs 5 --averaged",
                     "online blocked averaged");
    }
    /* The blocked pass promises the sequential pass's model exactly. */
    const char *a = keep(6, tu_path("seq", ".model")), *b = keep(7, tu_path("blk", ".model"));
    ok("train %s -o %s --quiet --pass sequential --shuffle --seed 9 --epochs 6", sep, a);
    ok("train %s -o %s --quiet --pass blocked --threads 2 --shuffle --seed 9 --epochs 6", sep, b);
    pt_model *ma, *mb;
    ck_assert_int_eq(pt_model_load(a, &ma), PT_OK);
    ck_assert_int_eq(pt_model_load(b, &mb), PT_OK);
    float ba, bb;
    const float *wa = pt_model_weights(ma, &ba), *wb = pt_model_weights(mb, &bb);
    pt_model_info ia;
    pt_model_get_info(ma, &ia);
    ck_assert(wa && wb);
    ck_assert_msg(memcmp(wa, wb, ia.d * sizeof(float)) == 0 && memcmp(&ba, &bb, sizeof ba) == 0,
                  "blocked and sequential passes gave different weights");
    pt_model_free(ma);
    pt_model_free(mb);
    unlink(sep);
    unlink(noisy);
}
END_TEST

START_TEST(test_deterministic_batch)
{
    const char *data = keep(0, tu_path("detb", ".ptd"));
    /* 20000 x 32 floats: 2.5 MB, several chunks for the fused pass */
    ok("gen noisy --n 20000 --d 32 --noise 0.05 --seed 8 -o %s", data);
    same_twice(data, "--path batch --batch-impl fused --epochs 5 --threads 2", "batch fused");
    same_threads(data, "--path batch --batch-impl fused --epochs 5", "batch fused");
    same_threads(data, "--path batch --batch-impl fused --loss hinge --lambda 0.001 --epochs 5",
                 "batch fused hinge");
    same_threads(data,
                 "--path batch --batch-impl fused --batch-size 4096 --shuffle --seed 4 --epochs 3",
                 "batch fused mini-batch");
    same_twice(data, "--path batch --batch-impl fused --batch-size 4096 --shuffle --seed 4 "
                     "--epochs 3 --threads 2", "batch fused mini-batch");
    unlink(data);
}
END_TEST

START_TEST(test_deterministic_kernel)
{
    const char *data = keep(0, tu_path("detk", ".ptd"));
    ok("gen circle --n 1500 --d 4 --seed 2 -o %s", data);
    same_threads(data, "--path kernel --kernel rbf --gamma 1 --gram full --epochs 3",
                 "kernel (full Gram)");
    same_twice(data, "--path kernel --kernel rbf --gamma 1 --gram full --epochs 3 --threads 2",
               "kernel (full Gram)");
    same_threads(data, "--path kernel --kernel poly --degree 3 --gram full --epochs 3",
                 "kernel poly (full Gram)");
    unlink(data);
}
END_TEST

static Suite *reliability_suite(void)
{
    Suite *s = suite_create("reliability");
    TCase *tc = tcase_create("fuzz regressions");
    tcase_add_test(tc, test_text_writers_large_values);
    tcase_add_test(tc, test_kernel_model_huge_d_small_file);
    tcase_add_test(tc, test_predict_output_negative_labels);
    suite_add_tcase(s, tc);
    tc = tcase_create("write failures");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_dataset_write_disk_full);
    tcase_add_test(tc, test_model_save_disk_full);
    tcase_add_test(tc, test_cli_train_disk_full_keeps_model);
    tcase_add_test(tc, test_cli_predict_disk_full_keeps_predictions);
    tcase_add_test(tc, test_cli_output_to_dev_full);
    tcase_add_test(tc, test_predict_many_classes);
    suite_add_tcase(s, tc);
    tc = tcase_create("inputs kept");
    tcase_add_test(tc, test_cli_output_is_input_refused);
    suite_add_tcase(s, tc);
    tc = tcase_create("shrinking inputs");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_cli_data_shrinks_during_training);
    suite_add_tcase(s, tc);
    tc = tcase_create("bounded memory");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_streamed_bounds_and_writers_within_budget);
    tcase_add_test(tc, test_unmappable_text_stops_at_budget);
    suite_add_tcase(s, tc);
    tc = tcase_create("allocation failures");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_read_out_of_memory);
    tcase_add_test(tc, test_cli_out_of_memory);
    tcase_add_test(tc, test_billion_epochs_allocate_nothing_per_epoch);
    suite_add_tcase(s, tc);
    tc = tcase_create("non-finite input");
    tcase_add_test(tc, test_nan_inf_refused_libsvm);
    tcase_add_test(tc, test_nan_inf_refused_csv);
    tcase_add_test(tc, test_nan_cli);
    suite_add_tcase(s, tc);
    tc = tcase_create("determinism");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_deterministic_online);
    tcase_add_test(tc, test_deterministic_batch);
    tcase_add_test(tc, test_deterministic_kernel);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tu_run_suite(reliability_suite()); }
