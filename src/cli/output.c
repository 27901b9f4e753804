/* Messages, JSON output and the progress bar of the CLI. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

int cli_exit_status(pt_status s)
{
    switch (s) {
    case PT_OK: return EXIT_OK;
    case PT_ERR_INVALID: return EXIT_USAGE;
    default: return EXIT_INPUT;
    }
}

int cli_fail(pt_status s)
{
    const char *msg = pt_last_error();
    fprintf(stderr, "ptron: %s\n", msg && *msg ? cli_message(msg) : pt_strerror(s));
    return cli_exit_status(s);
}

bool cli_is_std(const char *path) { return path && strcmp(path, "-") == 0; }

/* Whether a and b name one regular file (symlinks followed: the device and inode). A device
 * or FIFO is written through, not replaced (/dev/stdin and /dev/stdout may be one terminal). */
static bool same_regular_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (!a || !b || cli_is_std(a) || cli_is_std(b)) return false;
    if (stat(a, &sa) != 0 || stat(b, &sb) != 0) return false;
    return S_ISREG(sa.st_mode) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int cli_refuse_same_file(const char *cmd, const cli_file *outputs, const cli_file *inputs)
{
    for (const cli_file *o = outputs; o->what; o++)
        for (const cli_file *i = inputs; i->what; i++)
            if (same_regular_file(o->path, i->path))
                return cli_usage_error(cmd, "%s %s and %s %s are the same file: writing it would "
                                       "replace the input; give the output another path",
                                       o->what, o->path, i->what, i->path);
    return EXIT_OK;
}

int cli_report_to_stderr(void)
{
    if (fflush(stdout) != 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
        fprintf(stderr, "ptron: standard output: %s\n", strerror(errno));
        return EXIT_INPUT;
    }
    return EXIT_OK;
}

static void log_to_stderr(pt_log_level level, const char *msg, void *user)
{
    bool quiet = user != NULL;
    if (level == PT_LOG_WARN) fprintf(stderr, "ptron: warning: %s\n", cli_message(msg));
    else if (!quiet && level == PT_LOG_INFO && getenv("PTRON_VERBOSE"))
        fprintf(stderr, "ptron: %s\n", cli_message(msg));
}

void cli_install_log(bool quiet) { pt_set_log(log_to_stderr, quiet ? (void *)1 : NULL); }

/* ---------------------------------------------------------------------- JSON */

static void json_escaped(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

static void json_key(json_out *j, const char *key)
{
    fputs(j->first ? "" : ", ", j->f);
    j->first = false;
    json_escaped(j->f, key);
    fputs(": ", j->f);
}

static void json_number(FILE *f, double v)
{
    if (!isfinite(v)) fputs("null", f); /* JSON has no Inf/NaN */
    else if (v == floor(v) && fabs(v) < 1e15) fprintf(f, "%.0f", v);
    else fprintf(f, "%.9g", v);
}

void json_begin(json_out *j, FILE *f)
{
    j->f = f;
    j->first = true;
    j->depth = 1;
    fputc('{', f);
}

void json_end(json_out *j) { fputs("}\n", j->f); }

void json_str(json_out *j, const char *key, const char *value)
{
    json_key(j, key);
    json_escaped(j->f, value);
}

void json_num(json_out *j, const char *key, double value)
{
    json_key(j, key);
    json_number(j->f, value);
}

void json_int(json_out *j, const char *key, long long value)
{
    json_key(j, key);
    fprintf(j->f, "%lld", value);
}

void json_bool(json_out *j, const char *key, bool value)
{
    json_key(j, key);
    fputs(value ? "true" : "false", j->f);
}

void json_size_array(json_out *j, const char *key, const size_t *v, size_t n)
{
    json_key(j, key);
    fputc('[', j->f);
    for (size_t i = 0; i < n; i++) fprintf(j->f, "%s%zu", i ? ", " : "", v[i]);
    fputc(']', j->f);
}

void json_double_array(json_out *j, const char *key, const double *v, size_t n)
{
    json_key(j, key);
    fputc('[', j->f);
    for (size_t i = 0; i < n; i++) {
        if (i) fputs(", ", j->f);
        json_number(j->f, v[i]);
    }
    fputc(']', j->f);
}

void json_object_begin(json_out *j, const char *key)
{
    json_key(j, key);
    fputc('{', j->f);
    j->first = true;
}

void json_object_end(json_out *j)
{
    fputc('}', j->f);
    j->first = false;
}

/* ------------------------------------------------------------------- progress */

void progress_init(progress *p, bool quiet, int epochs, size_t n)
{
    p->enabled = !quiet && isatty(STDERR_FILENO);
    p->epochs = epochs;
    p->n = n;
}

int progress_epoch(int epoch, size_t mistakes, double seconds, void *user)
{
    progress *p = user;
    if (!p->enabled) return 0;
    int width = 30, filled = p->epochs ? epoch * width / p->epochs : width;
    char bar[64];
    for (int i = 0; i < width; i++) bar[i] = i < filled ? '#' : '.';
    bar[width] = '\0';
    double rate = seconds > 0 ? (double)p->n * epoch / seconds : 0.0;
    fprintf(stderr, "\r[%s] epoch %d/%d  mistakes %zu  %.3g samples/s ", bar, epoch, p->epochs,
            mistakes, rate);
    fflush(stderr);
    return 0;
}

void progress_done(progress *p)
{
    if (p->enabled) fputs("\n", stderr);
}
