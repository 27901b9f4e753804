/* Text helpers shared by the LIBSVM and CSV readers and writers: whole-file access, the slow
 * number parsers (strtof/strtod in the C locale) and the buffered row writer. The fast number
 * scanner and the number formatting are inline in io_text.h. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "io_text.h"

/* ------------------------------------------------------------------------ numbers */

/* strtof/strtod on a NUL-terminated copy of the token [s, s+len), in the C locale: the token
 * must be consumed whole (this also takes hex floats, "inf" and "nan", refused here). */
static int parse_slow(const char *s, size_t len, float *f, double *d)
{
    char small[128];
    char *b = len < sizeof small ? small : malloc(len + 1);
    if (!b) return NUM_BAD;
    memcpy(b, s, len);
    b[len] = '\0';
    char *e;
    double v = f ? (double)(*f = strtof_l(b, &e, pt_c_locale())) : (*d = strtod_l(b, &e, pt_c_locale()));
    int r = len == 0 || e != b + len ? NUM_BAD : isfinite(v) ? NUM_OK : NUM_NONFINITE;
    if (b != small) free(b);
    return r;
}

int pt_parse_float_slow(const char *s, size_t len, float *out) { return parse_slow(s, len, out, NULL); }
int pt_parse_double_slow(const char *s, size_t len, double *out) { return parse_slow(s, len, NULL, out); }

/* ---------------------------------------------------------------- whole-file access */

const char pt_stdin_path[] = "standard input";

/* The refusal of a text that outgrew the budget, limit bytes, as it was read: what it is
 * (gzip, standard input, a device or pipe) and the way out. */
static pt_status text_over_budget(const char *path, bool gzip, size_t limit)
{
    const char *what = gzip ? "gzip text is decompressed"
                       : path == pt_stdin_path ? "standard input is read"
                                               : "a device or pipe is read";
    const char *fix = gzip ? "give the path of an uncompressed file (gunzip it), which is read "
                             "in place"
                           : "give the path of a file holding the text, which is read in place";
    return pt_fail(PT_ERR_LIMIT, "%s: the text exceeds the memory budget of %.1f MiB "
                   "(pt_read_options.mem_budget_bytes) after %zu bytes: %s into memory whole; "
                   "%s, or raise the budget", path, (double)limit / 1048576.0, limit, what, fix);
}

pt_status pt_text_read_all(const char *path, int fd, size_t budget, const char **data,
                           size_t *len)
{
    *data = NULL;
    *len = 0;
    const size_t limit = budget ? budget : pt_default_mem_budget();
    /* gzdopen takes its own descriptor: gzclose_r closes it, the caller closes fd */
    int own = dup(fd);
    gzFile gz = own >= 0 ? gzdopen(own, "rb") : NULL;
    if (!gz) {
        int e = errno;
        if (own >= 0) close(own);
        return pt_fail(own < 0 ? PT_ERR_IO : PT_ERR_NOMEM, "%s: cannot read: %s", path,
                       own < 0 ? strerror(e) : "cannot set up zlib");
    }
    gzbuffer(gz, 1 << 17);
    /* the buffer never grows past limit + 1 bytes: one more than the limit is a refusal */
    size_t cap = limit < (1u << 16) ? limit + 1 : 1u << 16, n = 0;
    char *buf = malloc(cap);
    pt_status s = PT_OK;
    for (;;) {
        if (!buf) {
            s = pt_fail(PT_ERR_NOMEM, "%s: cannot allocate %zu bytes to read it", path, cap);
            break;
        }
        if (n > limit) {
            s = text_over_budget(path, !gzdirect(gz), limit);
            break;
        }
        size_t want = cap - n < (1u << 30) ? cap - n : (1u << 30);
        int r = gzread(gz, buf + n, (unsigned)want);
        int err = Z_OK;
        const char *msg = gzerror(gz, &err);
        if (r < 0 || err != Z_OK) {
            /* Z_ERRNO: the read itself failed; else zlib's reason (corrupt data, or
             * "unexpected end of file" for a truncated member) */
            if (strncmp(msg, "<fd:", 4) == 0 && strstr(msg, ": ")) /* zlib's name for fd */
                msg = strstr(msg, ": ") + 2;
            if (err == Z_ERRNO)
                s = pt_fail(PT_ERR_IO, "%s: read failed: %s", path, strerror(errno));
            else s = pt_fail(PT_ERR_PARSE, "%s: gzip data after %zu bytes is not readable: %s",
                             path, n + (r > 0 ? (size_t)r : 0), msg);
            break;
        }
        if (r == 0) break;
        n += (size_t)r;
        if (n == cap && n <= limit) {
            cap = cap > (limit + 1) / 2 ? limit + 1 : cap * 2;
            char *nb = realloc(buf, cap);
            if (!nb) free(buf);
            buf = nb;
        }
    }
    gzclose_r(gz);
    if (s != PT_OK || n == 0) {
        free(buf);
        return s;
    }
    *data = buf;
    *len = n;
    return PT_OK;
}

bool pt_text_gzip(int fd)
{
    unsigned char m[2];
    return pread(fd, m, 2, 0) == 2 && m[0] == 0x1f && m[1] == 0x8b;
}

pt_status pt_text_open(const char *path, int *fd, struct stat *st)
{
    *fd = path == pt_stdin_path ? fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 0)
                                : open(path, O_RDONLY | O_CLOEXEC);
    if (*fd < 0) return pt_fail(PT_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    if (fstat(*fd, st) != 0) {
        int e = errno;
        close(*fd);
        return pt_fail(PT_ERR_IO, "%s: cannot stat: %s", path, strerror(e));
    }
    return PT_OK;
}

pt_status pt_text_map(const char *path, size_t budget, const char **data, size_t *len,
                      bool *mapped, pt_guard **guard)
{
    *guard = NULL;
    int fd;
    struct stat st;
    *data = NULL;
    *len = 0;
    *mapped = false;
    PT_TRY(pt_text_open(path, &fd, &st));
    pt_status s = PT_OK;
    void *p = MAP_FAILED;
    bool plain = S_ISREG(st.st_mode) && !pt_text_gzip(fd);
    if (plain && st.st_size > 0)
        p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p != MAP_FAILED) {
        madvise(p, (size_t)st.st_size, MADV_SEQUENTIAL);
        *data = p;
        *len = (size_t)st.st_size;
        *mapped = true;
        *guard = pt_guard_map(p, *len, path);
    } else if (!plain || st.st_size > 0) {
        s = pt_text_read_all(path, fd, budget, data, len);
    }
    close(fd);
    return s;
}

void pt_text_unmap(const char *data, size_t len, bool mapped, pt_guard *guard)
{
    if (!data) return;
    pt_guard_release(guard);
    if (mapped) munmap((void *)data, len);
    else free((void *)data);
}

/* -------------------------------------------------------------------------- writers */

/* Shortest %.{1..17}g text that reads back as v exactly. */
static void format_label(double v, char *buf, size_t size)
{
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, v);
        if (strtod_l(buf, NULL, pt_c_locale()) == v) return;
    }
}

/* Per-class label texts; NULL after setting the error on failure. */
static char (*label_texts(const pt_dataset *ds))[32]
{
    char (*t)[32] = malloc((ds->nclass ? ds->nclass : 1) * sizeof *t);
    if (!t) {
        pt_fail(PT_ERR_NOMEM, "cannot allocate %zu label texts", ds->nclass);
        return NULL;
    }
    for (size_t k = 0; k < ds->nclass; k++) format_label(ds->class_values[k], t[k], sizeof t[k]);
    return t;
}

pt_status pt_text_flush(FILE *f, char *buf, size_t *used)
{
    if (*used && fwrite(buf, 1, *used, f) != *used)
        return pt_fail(PT_ERR_IO, "write failed: %s", strerror(errno));
    *used = 0;
    return PT_OK;
}

pt_status pt_text_write_rows(FILE *f, const pt_dataset *ds, pt_text_row_fn fn)
{
    char(*labels)[32] = label_texts(ds);
    char *buf = malloc(PT_TEXT_WBUF);
    const bool compact = ds->layout == PT_LAYOUT_DENSE && ds->dtype != PT_DTYPE_F32;
    float *wide = compact ? pt_alloc(ds->stride * sizeof *wide, "a widened row") : NULL;
    if (!labels || !buf || (compact && !wide)) {
        /* (label_texts and pt_alloc say why themselves) */
        pt_status s = labels && !buf ? pt_fail(PT_ERR_NOMEM, "cannot allocate a write buffer")
                                     : PT_ERR_NOMEM;
        free(labels);
        free(buf);
        pt_free(wide);
        return s;
    }
    locale_t old = uselocale(pt_c_locale());
    pt_status s = PT_OK;
    size_t used = 0;
    pt_window_pos at = {0}; /* streamed: window by window, each dropped behind */
    for (size_t i = 0; i < ds->n && s == PT_OK; i++) {
        if (used > PT_TEXT_WBUF - PT_TEXT_WMAX_ITEM) s = pt_text_flush(f, buf, &used);
        pt_window_at(ds, &at, i);
        const float *x = ds->layout == PT_LAYOUT_SPARSE ? NULL
                         : compact ? pt_compact_widen_row(ds, i, wide)
                                   : pt_window_row(ds, &at, i);
        if (s == PT_OK) s = fn(f, ds, labels[ds->cls[i]], i, x, buf, &used);
    }
    pt_window_end(ds, &at);
    if (s == PT_OK) s = pt_text_flush(f, buf, &used);
    if (s == PT_OK) s = pt_guard_check(ds->guard); /* (a file that shrank under ds: zeros) */
    uselocale(old);
    free(buf);
    free(labels);
    pt_free(wide);
    return s;
}
