#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <errno.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *tmp_dir(void)
{
    const char *t = getenv("PTRON_TEST_TMP");
    return t && *t ? t : "/tmp";
}

const char *tu_path(const char *tag, const char *ext)
{
    static char bufs[8][512];
    static unsigned counter;
    char *b = bufs[counter % 8];
    snprintf(b, sizeof bufs[0], "%s/%s-%ld-%u%s", tmp_dir(), tag, (long)getpid(), counter, ext);
    counter++;
    return b;
}

const char *tu_write_bytes(const char *tag, const char *ext, const void *data, size_t len)
{
    const char *p = tu_path(tag, ext);
    FILE *f = fopen(p, "wb");
    ck_assert_msg(f != NULL, "cannot create %s", p);
    ck_assert(fwrite(data, 1, len, f) == len);
    ck_assert(fclose(f) == 0);
    return p;
}

const char *tu_write_file(const char *tag, const char *ext, const char *text)
{
    return tu_write_bytes(tag, ext, text, strlen(text));
}

char *tu_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    char *b = malloc(cap);
    size_t r;
    while ((r = fread(b + n, 1, cap - n - 1, f)) > 0) {
        n += r;
        if (cap - n - 1 == 0) b = realloc(b, cap *= 2);
    }
    fclose(f);
    b[n] = '\0';
    if (len) *len = n;
    return b;
}

/* sh -c cmd in a child: its wait status, and its peak resident memory in KiB (wait4's
 * ru_maxrss: the child's, or that of the children it waited for, whichever is larger). */
static int sh_wait4(const char *cmd, long *peak_kib)
{
    fflush(NULL);
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    int st;
    struct rusage ru;
    while (wait4(pid, &st, 0, &ru) < 0) ck_assert(errno == EINTR);
    if (peak_kib) *peak_kib = ru.ru_maxrss;
    return st;
}

/* "PREFIX; [FEED |] exec $PTRON_BIN ARGS", standard input /dev/null without FEED. */
static int run_cli(const char *prefix, const char *feed, const char *args, char **out,
                   char **err, long *peak_kib)
{
    const char *bin = getenv("PTRON_BIN");
    ck_assert_msg(bin != NULL, "PTRON_BIN not set");
    char ofile[512], efile[512];
    snprintf(ofile, sizeof ofile, "%s", tu_path("cli", ".out"));
    snprintf(efile, sizeof efile, "%s", tu_path("cli", ".err"));
    size_t len = strlen(bin) + strlen(args) + strlen(prefix) + (feed ? strlen(feed) : 0) + 1200;
    char *cmd = malloc(len);
    snprintf(cmd, len, "%s%s %s%s exec %s %s >%s 2>%s%s", prefix, *prefix ? ";" : "",
             feed ? feed : "", feed ? " |" : "", bin, args, ofile, efile,
             feed ? "" : " </dev/null");
    int st = sh_wait4(cmd, peak_kib);
    free(cmd);
    if (out) *out = tu_read_file(ofile, NULL);
    if (err) *err = tu_read_file(efile, NULL);
    unlink(ofile);
    unlink(efile);
    if (WIFSIGNALED(st)) return 1000 + WTERMSIG(st);
    /* sh reports a child killed by a signal as 128 + the signal */
    return WEXITSTATUS(st) > 128 && WEXITSTATUS(st) < 128 + 65 ? 1000 + WEXITSTATUS(st) - 128
                                                               : WEXITSTATUS(st);
}

int tu_run_cli_sh(const char *prefix, const char *args, char **out, char **err)
{
    return run_cli(prefix, NULL, args, out, err, NULL);
}

int tu_run_cli_peak(const char *feed, const char *args, char **out, char **err, long *peak_kib)
{
    return run_cli("", feed, args, out, err, peak_kib);
}

int tu_run_cli(const char *args, char **out, char **err) { return tu_run_cli_sh("", args, out, err); }

int tu_spawn_cli(const char *args, const char *out_path, const char *err_path)
{
    const char *bin = getenv("PTRON_BIN");
    ck_assert_msg(bin != NULL, "PTRON_BIN not set");
    char *copy = strdup(args), *argv[128], *save = NULL;
    int argc = 0;
    argv[argc++] = (char *)bin;
    for (char *t = strtok_r(copy, " ", &save); t && argc < 127; t = strtok_r(NULL, " ", &save))
        argv[argc++] = t;
    argv[argc] = NULL;
    fflush(NULL);
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        int out = open(out_path ? out_path : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int err = open(err_path ? err_path : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int in = open("/dev/null", O_RDONLY);
        if (out < 0 || err < 0 || in < 0) _exit(97);
        dup2(in, 0);
        dup2(out, 1);
        dup2(err, 2);
        /* the default dispositions, whatever the test runner set */
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        execv(bin, argv);
        _exit(98);
    }
    free(copy);
    return (int)pid;
}

int tu_wait_cli(int pid)
{
    int st;
    ck_assert(waitpid((pid_t)pid, &st, 0) == (pid_t)pid);
    return WIFSIGNALED(st) ? 1000 + WTERMSIG(st) : WEXITSTATUS(st);
}

void tu_wait_for_file(const char *path, int pid)
{
    for (;;) {
        if (access(path, F_OK) == 0) return;
        int st;
        pid_t r = waitpid((pid_t)pid, &st, WNOHANG);
        ck_assert_msg(r == 0, "the run ended (%s %d) before %s appeared",
                      WIFSIGNALED(st) ? "signal" : "exit", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st),
                      path);
        usleep(1000);
    }
}

pt_dataset *tu_dataset(size_t n, size_t d, const float *x, const double *labels)
{
    pt_dataset *ds = pt_dataset_create(n, d);
    ck_assert(ds != NULL);
    for (size_t i = 0; i < n; i++) memcpy(pt_dataset_row(ds, i), x + i * d, d * sizeof(float));
    ck_assert_int_eq(pt_dataset_set_labels(ds, labels), PT_OK);
    return ds;
}

void tu_row_dense(const pt_dataset *ds, size_t i, float *out)
{
    size_t stride = pt_dataset_stride(ds);
    if (pt_dataset_layout(ds) == PT_LAYOUT_DENSE) {
        memcpy(out, pt_dataset_row_const(ds, i), stride * sizeof *out);
        return;
    }
    const uint64_t *rowptr;
    const uint32_t *col;
    const float *val;
    ck_assert_int_eq(pt_dataset_csr(ds, &rowptr, &col, &val), PT_OK);
    memset(out, 0, stride * sizeof *out);
    for (uint64_t k = rowptr[i]; k < rowptr[i + 1]; k++) out[col[k]] = val[k];
}

void tu_assert_same_data(const pt_dataset *a, const pt_dataset *b, const char *what)
{
    size_t n = pt_dataset_n(a), d = pt_dataset_d(a);
    ck_assert_msg(pt_dataset_n(b) == n && pt_dataset_d(b) == d, "%s: %zu x %zu vs %zu x %zu", what,
                  n, d, pt_dataset_n(b), pt_dataset_d(b));
    float *x = malloc(pt_dataset_stride(a) * sizeof *x),
          *y = malloc(pt_dataset_stride(b) * sizeof *y);
    ck_assert(x && y);
    for (size_t i = 0; i < n; i++) {
        tu_row_dense(a, i, x);
        tu_row_dense(b, i, y);
        for (size_t j = 0; j < d; j++)
            if (!(x[j] == 0.0f && y[j] == 0.0f) && memcmp(&x[j], &y[j], sizeof(float)) != 0)
                ck_abort_msg("%s: row %zu, column %zu: %.9g vs %.9g", what, i, j, (double)x[j],
                             (double)y[j]);
        if (pt_dataset_label(a, i) != pt_dataset_label(b, i))
            ck_abort_msg("%s: row %zu: label %g vs %g", what, i, pt_dataset_label(a, i),
                         pt_dataset_label(b, i));
    }
    ck_assert_msg(pt_dataset_nnz(a) == pt_dataset_nnz(b), "%s: nnz %zu vs %zu", what,
                  pt_dataset_nnz(a), pt_dataset_nnz(b));
    free(x);
    free(y);
}

void tu_assert_clean_csr(const pt_dataset *ds)
{
    const uint64_t *rowptr;
    const uint32_t *col;
    const float *val;
    ck_assert_int_eq(pt_dataset_layout(ds), PT_LAYOUT_SPARSE);
    ck_assert_int_eq(pt_dataset_csr(ds, &rowptr, &col, &val), PT_OK);
    ck_assert(((uintptr_t)rowptr | (uintptr_t)col | (uintptr_t)val) % PT_ALIGN_BYTES == 0);
    ck_assert_uint_eq(rowptr[0], 0);
    for (size_t i = 0; i < pt_dataset_n(ds); i++) {
        if (rowptr[i + 1] < rowptr[i]) ck_abort_msg("row %zu: offsets decrease", i);
        for (uint64_t k = rowptr[i]; k < rowptr[i + 1]; k++)
            if (col[k] >= pt_dataset_d(ds) || (k > rowptr[i] && col[k] <= col[k - 1]) ||
                !(val[k] - val[k] == 0.0f) || val[k] == 0.0f)
                ck_abort_msg("row %zu, entry %llu: column %u, value %.9g", i,
                             (unsigned long long)(k - rowptr[i]), col[k], (double)val[k]);
    }
    ck_assert_uint_eq(rowptr[pt_dataset_n(ds)], pt_dataset_nnz(ds));
}

int tu_run_suite(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
