/* LIBSVM / svmlight text: a parallel two-pass reader into either layout, and the writer.
 *
 * The reader splits the file into byte chunks aligned to line starts and reads each chunk
 * with pread through a small per-thread buffer that grows to hold the longest line (so any
 * line length works). Pass 1 (parallel) counts lines, data rows and INDEX:VALUE entries (the
 * ':' of a line's data) per chunk and takes each line's last "idx:" as its largest index
 * (true for every valid line; invalid lines are caught in pass 2). From n, d and the entries
 * the layout is chosen and checked against the memory budget before anything big is
 * allocated; prefix sums over the chunks give each chunk its first row and, for the sparse
 * layout, its first entry. Pass 2 (parallel) parses every row straight into its place: a
 * dense row, or the chunk's run of CSR entries (explicit zeros left out). A chunk whose
 * entries came out fewer than counted (explicit zeros, "qid:") leaves a gap, which a final
 * sequential pass closes. Each chunk keeps its first error; the one from the lowest chunk is
 * the file's first.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io_text.h"

/* The LIBSVM reader reads regular files with pread in blocks rather than mapping them: under
 * virtualisation a pass over a 4 KiB-page file mapping can cost several times a pread copy
 * into a small reused buffer (TLB misses under nested paging; bench load/format:libsvm). */
typedef struct source {
    const char *path;
    int fd;           /* pread from here, or */
    const char *mem;  /* the whole input in memory (pipes and the like) */
    size_t len;
    size_t begin, end; /* the bytes read: [0, len), or a share's whole lines */
} source;

static pt_status source_open(const char *path, size_t budget, source *src)
{
    struct stat st;
    memset(src, 0, sizeof *src);
    src->path = path;
    src->fd = -1;
    int fd;
    PT_TRY(pt_text_open(path, &fd, &st));
    if (S_ISREG(st.st_mode) && !pt_text_gzip(fd)) {
        src->fd = fd;
        src->len = (size_t)st.st_size;
        posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
        return PT_OK;
    }
    pt_status s = pt_text_read_all(path, fd, budget, &src->mem, &src->len);
    close(fd);
    return s;
}

static void source_close(source *src)
{
    if (src->fd >= 0) close(src->fd);
    free((void *)src->mem);
}

/* pread all of [off, off+n) unless the file ends first; returns the bytes read or -1. */
static ssize_t pread_full(int fd, char *buf, size_t n, size_t off)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, buf + got, n - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return -1;
        if (r == 0) break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

/* The first line start at or after off (len if none). */
static size_t line_start_at(const source *src, size_t off)
{
    if (off == 0) return 0;
    if (off >= src->len) return src->len;
    if (src->mem) {
        const char *nl = memchr(src->mem + off - 1, '\n', src->len - off + 1);
        return nl ? (size_t)(nl - src->mem) + 1 : src->len;
    }
    char win[4096];
    for (size_t at = off - 1; at < src->len; at += sizeof win) {
        ssize_t r = pread_full(src->fd, win, sizeof win, at);
        if (r <= 0) break; /* a read error shows again, and is reported, in pass 1 */
        const char *nl = memchr(win, '\n', (size_t)r);
        if (nl) return at + (size_t)(nl - win) + 1;
    }
    return src->len;
}

/* ------------------------------------------------------------------ the reader */

typedef struct chunk {
    size_t off, off_end;           /* whole lines of the file */
    size_t lines, rows, max_index; /* pass 1 */
    size_t ents;                   /* pass 1: ':' in data (an upper bound of the entries) */
    size_t line0, row0, ent0;      /* lines, rows and entries before this chunk */
    size_t line, row, ent;         /* pass 2: where it is */
    size_t nnz;
    size_t err_line;               /* 0: no error (SIZE_MAX: not tied to a line) */
    pt_status err_status;
    char err[512];
} chunk;

typedef struct reader {
    const char *path;
    size_t max_features, d, stride;
    float *X;            /* dense, or */
    uint64_t *rowptr;    /* sparse: entries before each row's end go to rowptr[row + 1] */
    uint32_t *col;
    float *val;
    double *labels;
} reader;

/* What pass 1 needs: the index limit, and whether to count entries (the sparse layout may be
 * chosen). */
typedef struct scan_opts {
    size_t max_features;
    bool count_entries;
} scan_opts;

/* A block buffer, one per thread. Grows when a line does not fit. */
typedef struct block_buf {
    char *p;
    size_t cap;
} block_buf;

#define BLOCK_BYTES (512u << 10) /* fits in L2 with room to spare */

/* Longest token shown in a message. */
#define TOK_SHOWN 40

/* Character classes for the token loop: one table look-up instead of a chain of compares. */
enum { C_BLANK = 1, C_NL = 2, C_HASH = 4 };
static const unsigned char cclass[256] = {[' '] = C_BLANK, ['\t'] = C_BLANK, ['\r'] = C_BLANK,
                                          ['\n'] = C_NL, ['#'] = C_HASH};

static inline bool is_blank(char c) { return cclass[(unsigned char)c] == C_BLANK; }

/* Where a token ends: at a blank, a newline, a comment or the end. */
static inline const char *token_end(const char *p, const char *end)
{
    while (p < end && cclass[(unsigned char)*p] == 0) p++;
    return p;
}

static inline bool at_delim(const char *p, const char *end)
{
    return p == end || cclass[(unsigned char)*p] != 0;
}

static inline const char *next_line(const char *p, const char *end)
{
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    return nl ? nl + 1 : end;
}

static bool chunk_fail(chunk *c, const char *path, size_t line, pt_status s, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Record the chunk's error as "PATH:LINE: message" (line 0: "PATH: message"). */
static bool chunk_fail(chunk *c, const char *path, size_t line, pt_status s, const char *fmt, ...)
{
    int k = line ? snprintf(c->err, sizeof c->err, "%s:%zu: ", path, line)
                 : snprintf(c->err, sizeof c->err, "%s: ", path);
    if (k < 0 || (size_t)k >= sizeof c->err) k = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err + k, sizeof c->err - (size_t)k, fmt, ap);
    va_end(ap);
    c->err_line = line ? line : SIZE_MAX;
    c->err_status = s;
    return false;
}

typedef void (*lines_fn)(chunk *c, const void *ctx, const char *b, const char *e);

/* Feed the chunk's bytes to fn in runs of whole lines (the last may lack its newline at the
 * end of the file), through buf; stops at the chunk's first error. */
static void for_each_block(const source *src, chunk *c, block_buf *buf, lines_fn fn,
                           const void *ctx)
{
    if (src->mem) {
        fn(c, ctx, src->mem + c->off, src->mem + c->off_end);
        return;
    }
    size_t off = c->off, keep = 0; /* keep: an unfinished line at the start of buf */
    while (off < c->off_end && !c->err_line) {
        if (keep == buf->cap) { /* a line longer than the buffer: grow it */
            size_t cap = buf->cap ? buf->cap * 2 : BLOCK_BYTES;
            char *p = realloc(buf->p, cap);
            if (!p) {
                chunk_fail(c, src->path, 0, PT_ERR_NOMEM, "cannot allocate %zu bytes for a line", cap);
                return;
            }
            buf->p = p;
            buf->cap = cap;
        }
        size_t want = buf->cap - keep, left = c->off_end - off;
        ssize_t r = pread_full(src->fd, buf->p + keep, want < left ? want : left, off);
        if (r <= 0) {
            chunk_fail(c, src->path, 0, PT_ERR_IO, "read failed at byte %zu: %s", off,
                       r < 0 ? strerror(errno) : "file shrank while being read");
            return;
        }
        off += (size_t)r;
        size_t have = keep + (size_t)r, whole = have;
        if (off < c->off_end) {
            const char *nl = memrchr(buf->p, '\n', have);
            whole = nl ? (size_t)(nl - buf->p) + 1 : 0;
        }
        if (whole) fn(c, ctx, buf->p, buf->p + whole);
        keep = have - whole;
        memmove(buf->p, buf->p + whole, keep);
    }
}

/* Split [0, len) into n chunks that start at line starts (some may be empty). */
static void split_chunks(const source *src, chunk *ch, size_t n)
{
    size_t prev = src->begin, span = src->end - src->begin;
    for (size_t k = 0; k < n; k++) {
        size_t b = k == 0 ? src->begin : line_start_at(src, src->begin + span / n * k);
        if (b < prev) b = prev;
        if (b > src->end) b = src->end;
        ch[k].off = b;
        if (k > 0) ch[k - 1].off_end = b;
        prev = b;
    }
    ch[n - 1].off_end = src->end;
}

/* The index of the feature token at [t, e) if it is DIGITS ':' ..., else 0. */
static size_t token_index(const char *t, const char *e, size_t max_features)
{
    size_t idx = 0;
    for (; t < e && is_digit(*t); t++) {
        if (idx > (SIZE_MAX - 9) / 10) return 0;
        idx = idx * 10 + (size_t)(*t - '0');
        if (idx > max_features) return 0; /* pass 2 reports it */
    }
    return t < e && *t == ':' ? idx : 0;
}

/* The ':' in [p, e): each INDEX:VALUE entry has one. */
static size_t count_colons(const char *p, const char *e)
{
    size_t k = 0;
    for (; p < e; p++) k += *p == ':';
    return k;
}

/* Pass 1: count lines, data rows and entries; the largest index is each data line's last
 * one. */
static void scan_lines(chunk *c, const void *ctx, const char *b, const char *end)
{
    const scan_opts *so = ctx;
    size_t max_features = so->max_features;
    size_t lines = 0, rows = 0, ents = 0, max_index = c->max_index;
    for (const char *p = b; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        lines++;
        const char *q = p;
        while (q < le && is_blank(*q)) q++;
        if (q < le && *q != '#') {
            rows++;
            const char *hash = memchr(q, '#', (size_t)(le - q));
            const char *e = hash ? hash : le;
            while (e > q && is_blank(e[-1])) e--;
            if (so->count_entries) ents += count_colons(q, e);
            const char *t = e;
            while (t > q && !is_blank(t[-1])) t--;
            if (t > q) { /* not the label alone */
                size_t idx = token_index(t, e, max_features);
                if (idx > max_index) max_index = idx;
            }
        }
        p = nl ? nl + 1 : end;
    }
    c->lines += lines;
    c->rows += rows;
    c->ents += ents;
    c->max_index = max_index;
}

/* The label at p, a number (not NaN or Inf). Returns the end of its token or NULL. */
static const char *parse_label(const reader *r, chunk *c, size_t line, const char *p,
                               const char *end, double *label)
{
    const char *q = pt_scan_double(p, end, label);
    if (q && at_delim(q, end)) return q;
    q = token_end(p, end);
    int st = pt_parse_double_slow(p, (size_t)(q - p), label);
    int shown = (int)(q - p < TOK_SHOWN ? q - p : TOK_SHOWN);
    if (st == NUM_BAD)
        return chunk_fail(c, r->path, line, PT_ERR_PARSE, "label '%.*s' is not a number", shown, p), NULL;
    if (st == NUM_NONFINITE)
        return chunk_fail(c, r->path, line, PT_ERR_PARSE,
                          "label '%.*s' is not finite (NaN and Inf are refused)", shown, p), NULL;
    return q;
}

/* The value of feature idx at p when the fast scan could not take it: strtof decides, or
 * the error is recorded. Returns the end of the value or NULL. */
static __attribute__((noinline)) const char *value_slow(const reader *r, chunk *c, size_t line,
                                                        size_t idx, const char *p,
                                                        const char *end, float *v)
{
    const char *q = token_end(p, end);
    if (q == p)
        return chunk_fail(c, r->path, line, PT_ERR_PARSE, "missing value after '%zu:'", idx), NULL;
    int st = pt_parse_float_slow(p, (size_t)(q - p), v);
    int shown = (int)(q - p < TOK_SHOWN ? q - p : TOK_SHOWN);
    if (st == NUM_BAD)
        return chunk_fail(c, r->path, line, PT_ERR_PARSE, "value '%.*s' of feature %zu is not a number",
                          shown, p, idx), NULL;
    if (st == NUM_NONFINITE)
        return chunk_fail(c, r->path, line, PT_ERR_PARSE,
                          "value '%.*s' of feature %zu is not finite (NaN and Inf are refused)",
                          shown, p, idx), NULL;
    return q;
}

/* A token that is not DIGITS:VALUE: svmlight's qid:N is skipped, the rest are errors. */
static const char *other_token(const reader *r, chunk *c, size_t line, const char *p,
                               const char *end)
{
    const char *e = token_end(p, end);
    int shown = (int)(e - p < TOK_SHOWN ? e - p : TOK_SHOWN);
    if (e - p > 4 && memcmp(p, "qid:", 4) == 0) return e;
    const char *colon = memchr(p, ':', (size_t)(e - p));
    if (colon && *p == '-' && colon > p + 1) {
        const char *t = p + 1;
        while (t < colon && is_digit(*t)) t++;
        if (t == colon)
            return chunk_fail(c, r->path, line, PT_ERR_PARSE, "feature index %.*s must be >= 1",
                              (int)(colon - p < TOK_SHOWN ? colon - p : TOK_SHOWN), p), NULL;
    }
    return chunk_fail(c, r->path, line, PT_ERR_PARSE, "expected INDEX:VALUE, got '%.*s'", shown, p),
           NULL;
}

/* Why the index token at t (digits, then p) was refused: always returns NULL. */
static __attribute__((noinline)) const char *index_error(const reader *r, chunk *c, size_t line,
                                                         const char *t, const char *p,
                                                         const char *end, uint64_t idx, size_t prev)
{
    int shown = (int)(p - t < TOK_SHOWN ? p - t : TOK_SHOWN);
    if (p == end || *p != ':') return other_token(r, c, line, t, end); /* digits without ':' */
    if (idx == 0)
        return chunk_fail(c, r->path, line, PT_ERR_PARSE, "feature index %.*s must be >= 1", shown,
                          t), NULL;
    if (idx > r->max_features)
        return chunk_fail(c, r->path, line, PT_ERR_PARSE,
                          "feature index %.*s exceeds the limit of %zu (raise pt_read_options.max_features)",
                          shown, t, r->max_features), NULL;
    return chunk_fail(c, r->path, line, PT_ERR_PARSE, "feature index %zu after index %zu: "
                      "indices must be strictly increasing", (size_t)idx, prev), NULL;
}

/* Parse one data line from its first token at p: into the zeroed dense row x, or (sparse)
 * as CSR entries at c->ent, up to the chunk's counted end. Returns the start of the next line,
 * or NULL after recording the error in c. This is the hot loop: the usual token costs a few
 * table look-ups, two SWAR digit runs and one multiply. Inlined into one copy per layout. */
static inline __attribute__((always_inline)) const char *
parse_row(const reader *r, chunk *c, size_t line, const char *p, const char *end, float *x,
          double *label, const bool sparse)
{
    size_t ent = c->ent, ent_end = c->ent0 + c->ents;
    p = parse_label(r, c, line, p, end, label);
    if (!p) return NULL;
    size_t prev = 0, nnz = 0;
    bool beyond_d = false;
    for (;;) {
        while (p < end && cclass[(unsigned char)*p] == C_BLANK) p++;
        if (p == end || cclass[(unsigned char)*p] != 0) break; /* newline or comment */
        if (!is_digit(*p)) {
            p = other_token(r, c, line, p, end);
            if (!p) return NULL;
            continue;
        }
        const char *t = p;
        uint64_t idx = 0;
        int k = 0;
#if HAVE_SWAR
        if (end - p >= 8) k = digits8(p, &idx);
#endif
        if (k > 0 && k < 8) p += k;
        else
            for (idx = 0; p < end && is_digit(*p); p++)
                if (idx < (UINT64_C(1) << 60)) idx = idx * 10 + (uint64_t)(*p - '0');
        /* idx <= prev also catches index 0 */
        if (p == end || *p != ':' || idx <= prev || idx > r->max_features)
            return index_error(r, c, line, t, p, end, idx, prev);
        p++;
        float v;
        const char *q = pt_scan_float(p, end, &v);
        if (q && at_delim(q, end)) p = q;
        else if (!(p = value_slow(r, c, line, (size_t)idx, p, end, &v))) return NULL;
        uint32_t bits;
        memcpy(&bits, &v, sizeof bits);
        bool nonzero = (bits << 1) != 0; /* -0 is no non-zero */
        /* Only an invalid line can hold an index above pass 1's maximum; it fails above. */
        if (idx > r->d) {
            beyond_d = true;
        } else if (!sparse) {
            x[idx - 1] = v;
        } else if (nonzero) {
            /* pass 1 counted every ':' of these lines: more entries means the file changed */
            if (ent == ent_end)
                return chunk_fail(c, r->path, line, PT_ERR_IO, "more entries than the first "
                                  "pass counted (the file changed while being read)"), NULL;
            r->col[ent] = (uint32_t)(idx - 1);
            r->val[ent++] = v;
        }
        nnz += nonzero;
        prev = (size_t)idx;
    }
    if (beyond_d)
        return chunk_fail(c, r->path, line, PT_ERR_PARSE, "internal error: feature index %zu above "
                          "the scanned maximum %zu", prev, r->d), NULL;
    c->nnz += nnz;
    c->ent = ent;
    return next_line(p, end);
}

/* Pass 2: parse the data rows of a run of whole lines into their places. */
static inline __attribute__((always_inline)) void
parse_lines(chunk *c, const reader *r, const char *p, const char *end, const bool sparse)
{
    size_t row_end = c->row0 + c->rows;
    while (p < end) {
        c->line++;
        while (p < end && is_blank(*p)) p++;
        if (p == end) break;
        if (*p == '\n' || *p == '#') {
            p = next_line(p, end);
            continue;
        }
        if (c->row == row_end) { /* pass 1 and pass 2 disagree: never write past the chunk */
            chunk_fail(c, r->path, c->line, PT_ERR_PARSE, "internal error: more rows than counted");
            return;
        }
        float *x = NULL;
        if (!sparse) {
            x = r->X + c->row * r->stride;
            /* Zero the row just before filling it: the first touch of the matrix happens
             * here, spread over the threads and while the row is in cache. */
            memset(x, 0, r->stride * sizeof *x);
        }
        p = parse_row(r, c, c->line, p, end, x, &r->labels[c->row], sparse);
        if (!p) return;
        if (sparse) r->rowptr[c->row + 1] = c->ent;
        c->row++;
    }
}

static void parse_lines_dense(chunk *c, const void *ctx, const char *p, const char *end)
{
    parse_lines(c, ctx, p, end, false);
}

static void parse_lines_sparse(chunk *c, const void *ctx, const char *p, const char *end)
{
    parse_lines(c, ctx, p, end, true);
}

static size_t plan_chunks(size_t len, int threads)
{
    if (threads <= 1) return 1;
    size_t by_size = len / (16u << 10) + 1; /* at least 16 KiB a chunk */
    size_t want = (size_t)threads * 4;      /* a few per thread: some cores may be busy */
    return by_size < want ? by_size : want;
}


/* Run fn over every chunk, in parallel, each thread with its own block buffer. */
static void run_pass(const source *src, chunk *ch, size_t nch, int threads, lines_fn fn,
                     const void *ctx)
{
    if ((size_t)threads > nch) threads = (int)nch;
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
        block_buf buf = {NULL, 0};
#pragma omp for schedule(dynamic, 1)
        for (size_t k = 0; k < nch; k++) for_each_block(src, &ch[k], &buf, fn, ctx);
        free(buf.p);
    }
}

/* The first error in file order: chunks are in line order and each stops at its first. */
static pt_status first_error(const chunk *ch, size_t nch)
{
    for (size_t k = 0; k < nch; k++)
        if (ch[k].err_line) return pt_fail(ch[k].err_status, "%s", ch[k].err);
    return PT_OK;
}

/* Close the gaps pass 2 left between the chunks' runs of entries (each chunk stored fewer
 * than pass 1 counted when a line held explicit zeros or "qid:"): move each run down to
 * follow the previous one and shift its rows' offsets. Nothing moves when there is no gap. */
static void close_gaps(const chunk *ch, size_t nch, pt_dataset *ds)
{
    size_t to = 0;
    for (size_t k = 0; k < nch; k++) {
        const chunk *c = &ch[k];
        size_t len = c->ent - c->ent0, shift = c->ent0 - to;
        if (shift) {
            memmove(ds->col + to, ds->col + c->ent0, len * sizeof *ds->col);
            memmove(ds->val + to, ds->val + c->ent0, len * sizeof *ds->val);
            for (size_t i = c->row0 + 1; i <= c->row0 + c->rows; i++) ds->rowptr[i] -= shift;
        }
        to += len;
    }
}

/* What pass 1 found: rows, lines, the largest index and the counted entries. */
typedef struct scan_totals {
    size_t n, lines, d, ents;
} scan_totals;

/* Split into chunks and run pass 1; each chunk gets its first row, line and entry. */
static pt_status scan_chunks(const source *src, const pt_read_options *o, chunk *ch, size_t nch,
                             int threads, scan_totals *t)
{
    split_chunks(src, ch, nch);
    scan_opts so = {o->max_features, o->layout != PT_LAYOUT_DENSE};
    run_pass(src, ch, nch, threads, scan_lines, &so);
    PT_TRY(first_error(ch, nch));

    size_t n = 0, lines = 0, d = 0, ents = 0;
    for (size_t k = 0; k < nch; k++) {
        ch[k].row0 = ch[k].row = n;
        ch[k].line0 = ch[k].line = lines;
        ch[k].ent0 = ch[k].ent = ents;
        n += ch[k].rows;
        lines += ch[k].lines;
        ents += ch[k].ents;
        if (ch[k].max_index > d) d = ch[k].max_index;
    }
    *t = (scan_totals){n, lines, d, ents};
    if (n == 0) return pt_fail(PT_ERR_PARSE, "%s: no data rows", src->path);
    return PT_OK;
}

/* Pass 2 into a dataset in memory, after scan_chunks (t0: when pass 1 began). */
static pt_status parse_chunks(const source *src, const pt_read_options *o, chunk *ch, size_t nch,
                              int threads, const scan_totals *t, double t0, pt_dataset **out)
{
    const char *path = src->path;
    size_t n = t->n, lines = t->lines, d = t->d, ents = t->ents;
    pt_layout layout;
    PT_TRY(pt_layout_resolve(path, o->layout, n, d, ents, o->mem_budget_bytes, &layout));
    bool sparse = layout == PT_LAYOUT_SPARSE;
    double t1 = pt_now();
    /* pass 2 writes every row (a dense one zeroed first) and every entry */
    pt_dataset *ds = sparse ? pt_dataset_alloc_sparse(n, d, ents) : pt_dataset_alloc_uninit(n, d);
    if (!ds) return PT_ERR_NOMEM;
    double *labels = malloc(n * sizeof *labels);
    pt_status s = labels ? PT_OK : pt_fail(PT_ERR_NOMEM, "%s: cannot allocate %zu labels", path, n);
    double t2 = pt_now();
    if (s == PT_OK) {
        reader r = {path, o->max_features, d, ds->stride, ds->X, ds->rowptr, ds->col, ds->val,
                    labels};
        run_pass(src, ch, nch, threads, sparse ? parse_lines_sparse : parse_lines_dense, &r);
        s = first_error(ch, nch);
    }
    double t3 = pt_now();
    if (s == PT_OK) {
        ds->nnz = 0;
        for (size_t k = 0; k < nch; k++) ds->nnz += ch[k].nnz;
        if (sparse) close_gaps(ch, nch, ds);
        s = pt_dataset_set_class_table(ds, labels);
    }
    free(labels);
    if (s != PT_OK) {
        pt_dataset_free(ds);
        return s;
    }
    pt_log(PT_LOG_DEBUG, "%s: %zu rows x %zu features, %zu non-zeros, %s, %zu lines, %d threads, "
           "%zu chunks: scan %.3f s, allocate %.3f s, parse %.3f s, labels %.3f s", path, n, d,
           ds->nnz, pt_layout_name(layout), lines, threads, nch, t1 - t0, t2 - t1, t3 - t2,
           pt_now() - t3);
    *out = ds;
    return PT_OK;
}

static pt_status read_chunks(const source *src, const pt_read_options *o, chunk *ch, size_t nch,
                             int threads, pt_dataset **out)
{
    double t0 = pt_now();
    scan_totals t;
    PT_TRY(scan_chunks(src, o, ch, nch, threads, &t));
    return parse_chunks(src, o, ch, nch, threads, &t, t0, out);
}

pt_status pt_read_libsvm(const char *path, const pt_read_options *o, pt_dataset **out)
{
    source src;
    *out = NULL;
    PT_TRY(source_open(path, o->mem_budget_bytes, &src));
    if (src.len == 0) {
        source_close(&src);
        return pt_fail(PT_ERR_PARSE, "%s: no data rows (empty file)", path);
    }
    src.end = src.len;
    char share_name[1024];
    if (o->shard_count > 1) {
        /* a share of a distributed run: the lines that start in its bytes; its messages
         * count lines from its first */
        if (src.fd < 0) {
            source_close(&src);
            return pt_fail(PT_ERR_INVALID, "%s: a share of a distributed run is read from a "
                           "regular file, not gzip or standard input: decompress it first", path);
        }
        size_t i = o->shard_index, P = o->shard_count;
        src.begin = line_start_at(&src, (size_t)((unsigned __int128)src.len * i / P));
        src.end = line_start_at(&src, (size_t)((unsigned __int128)src.len * (i + 1) / P));
        snprintf(share_name, sizeof share_name, "%s (share %zu of %zu, from byte %zu)", path,
                 i + 1, P, src.begin);
        src.path = share_name;
        if (src.begin == src.end) {
            source_close(&src);
            return pt_fail(PT_ERR_PARSE, "%s: no data rows (no line starts in the share's "
                           "bytes)", share_name);
        }
    }
    int threads = pt_threads_resolve(o->threads);
    size_t nch = plan_chunks(src.end - src.begin, threads);
    chunk *ch = calloc(nch, sizeof *ch);
    pt_status s = ch ? read_chunks(&src, o, ch, nch, threads, out)
                     : pt_fail(PT_ERR_NOMEM, "%s: cannot allocate %zu chunks", src.path, nch);
    free(ch);
    source_close(&src);
    return s;
}

/* ------------------------------------------------------------------ the writer */

/* Row i's non-zeros, " INDEX:VALUE" each (1-based): a dense row's scanned, a sparse one's as
 * stored (explicit zeros left out in both). */
static pt_status libsvm_row(FILE *f, const pt_dataset *ds, const char *label, size_t i,
                            const float *x, char *buf, size_t *used)
{
    const uint32_t *col = NULL;
    size_t m = ds->d;
    if (ds->layout == PT_LAYOUT_SPARSE) m = pt_csr_row(ds, i, &col, &x);
    char *p = buf + *used;
    p = stpcpy(p, label);
    for (size_t k = 0; k < m; k++) {
        if (x[k] == 0.0f) continue;
        if ((size_t)(p - buf) > PT_TEXT_WBUF - PT_TEXT_WMAX_ITEM) {
            *used = (size_t)(p - buf);
            PT_TRY(pt_text_flush(f, buf, used));
            p = buf;
        }
        *p++ = ' ';
        p = pt_put_uint(p, (col ? col[k] : k) + (uint64_t)1);
        *p++ = ':';
        p = pt_put_float(p, x[k]);
    }
    *p++ = '\n';
    *used = (size_t)(p - buf);
    return PT_OK;
}

pt_status pt_write_libsvm(FILE *f, const void *ds) { return pt_text_write_rows(f, ds, libsvm_row); }

/* ------------------------------------------------------------------ bounded convert */

/* Text per chunk for the bounded convert: windows are made of whole chunks, so chunks are
 * small next to the budget (and at most 1 MiB of text, a few thousand rows). */
static size_t convert_chunk_bytes(size_t budget)
{
    size_t b = budget / 64;
    return b < (16u << 10) ? 16u << 10 : b > (1u << 20) ? 1u << 20 : b;
}

/* The bytes chunk c parses into: its dense rows, or its row ends and counted entries. */
static size_t chunk_out_bytes(const chunk *c, bool sparse, size_t stride)
{
    return sparse ? c->rows * sizeof(uint64_t) + c->ents * (sizeof(uint32_t) + sizeof(float))
                  : c->rows * stride * sizeof(float);
}

typedef struct convert_job {
    const source *src;
    chunk *ch;
    size_t nch, d, max_features, window;
    int threads;
    bool sparse;
    double *labels; /* n, kept whole */
} convert_job;

/* Pass 2 window by window: consecutive chunks whose output fits the window are parsed (in
 * parallel) into one buffer, rows and entries counted from the window's first, then handed to
 * w in order (w NULL: only count the entries kept, which the sparse file's layout needs). */
static pt_status parse_windows(const convert_job *j, pt_ptd_writer *w, size_t *entries,
                               size_t *nnz)
{
    size_t stride = pt_stride_for(j->d), max_rows = 0, max_ents = 0;
    for (size_t g0 = 0, g1; g0 < j->nch; g0 = g1) {
        size_t bytes = 0, rows = 0, ents = 0;
        for (g1 = g0; g1 < j->nch; g1++) {
            size_t b = chunk_out_bytes(&j->ch[g1], j->sparse, stride);
            if (g1 > g0 && bytes + b > j->window) break;
            bytes += b;
            rows += j->ch[g1].rows;
            ents += j->ch[g1].ents;
        }
        if (rows > max_rows) max_rows = rows;
        if (ents > max_ents) max_ents = ents;
    }
    float *X = NULL, *val = NULL;
    uint64_t *rowptr = NULL;
    uint32_t *col = NULL;
    if (j->sparse) {
        rowptr = pt_alloc((max_rows + 1) * sizeof *rowptr, "convert window");
        col = pt_alloc((max_ents ? max_ents : 1) * sizeof *col, "convert window");
        val = pt_alloc((max_ents ? max_ents : 1) * sizeof *val, "convert window");
    } else {
        X = pt_alloc((max_rows ? max_rows : 1) * stride * sizeof *X, "convert window");
    }
    pt_status s = (j->sparse ? rowptr && col && val : X != NULL) ? PT_OK : PT_ERR_NOMEM;
    size_t row_at = 0, ent_at = 0, kept = 0, nz = 0;
    for (size_t g0 = 0, g1; g0 < j->nch && s == PT_OK; g0 = g1) {
        size_t bytes = 0, row_base = row_at, ent_base = ent_at, line_at = j->ch[g0].line0;
        for (g1 = g0; g1 < j->nch; g1++) {
            chunk *c = &j->ch[g1];
            size_t b = chunk_out_bytes(c, j->sparse, stride);
            if (g1 > g0 && bytes + b > j->window) break;
            bytes += b;
            c->row0 = c->row = row_at - row_base;
            c->ent0 = c->ent = ent_at - ent_base;
            c->line0 = c->line = line_at;
            c->nnz = 0;
            row_at += c->rows;
            ent_at += c->ents;
            line_at += c->lines;
        }
        reader r = {j->src->path, j->max_features, j->d, stride, X, rowptr, col, val,
                    j->labels + row_base};
        if (j->sparse) rowptr[0] = 0;
        run_pass(j->src, j->ch + g0, g1 - g0, j->threads,
                 j->sparse ? parse_lines_sparse : parse_lines_dense, &r);
        if ((s = first_error(j->ch + g0, g1 - g0)) != PT_OK) break;
        for (size_t k = g0; k < g1; k++) nz += j->ch[k].nnz;
        if (!w) {
            for (size_t k = g0; k < g1; k++) kept += j->ch[k].ent - j->ch[k].ent0;
            continue;
        }
        if (!j->sparse) {
            s = pt_ptd_writer_dense(w, X, row_at - row_base);
            continue;
        }
        /* each chunk's run of entries, its row ends made absolute (closing the gaps) */
        for (size_t k = g0; k < g1 && s == PT_OK; k++) {
            const chunk *c = &j->ch[k];
            uint64_t *ends = rowptr + c->row0 + 1;
            for (size_t i = 0; i < c->rows; i++) ends[i] = ends[i] - c->ent0 + kept;
            s = pt_ptd_writer_sparse(w, ends, c->rows, col + c->ent0, val + c->ent0,
                                     c->ent - c->ent0);
            kept += c->ent - c->ent0;
        }
    }
    pt_free(X);
    pt_free(rowptr);
    pt_free(col);
    pt_free(val);
    if (entries) *entries = kept;
    if (nnz) *nnz = nz;
    return s;
}

typedef struct convert_out {
    const convert_job *job;
    size_t n, entries, nnz;
    const pt_dataset *meta; /* the class table and class indices */
} convert_out;

static pt_status write_converted(FILE *f, const void *ctx)
{
    const convert_out *o = ctx;
    pt_ptd_writer *w;
    PT_TRY(pt_ptd_writer_begin(f, o->n, o->job->d, o->job->sparse, o->entries, o->meta->nclass,
                               &w));
    size_t nnz;
    pt_status s = parse_windows(o->job, w, NULL, &nnz);
    if (s == PT_OK) s = pt_ptd_writer_end(w, o->meta->class_values, o->meta->cls, nnz);
    pt_ptd_writer_free(w);
    return s;
}

/* After pass 1 (ch, n rows, d features, ents counted): the dataset exceeds the budget, so
 * the rows are parsed a window at a time and written to the file (twice for the sparse layout:
 * a first windowed pass counts the entries kept, which fix the file's layout). The labels (8
 * bytes a row) and the class indices (4, and 4 more for two classes) stay in memory. */
static pt_status convert_bounded(const source *src, const pt_read_options *o, chunk *ch,
                                 size_t nch, int threads, size_t n, size_t d, size_t ents,
                                 const char *out)
{
    size_t budget = o->mem_budget_bytes ? o->mem_budget_bytes : pt_default_mem_budget();
    pt_layout layout;
    PT_TRY(pt_layout_resolve(src->path, o->layout, n, d, ents, SIZE_MAX, &layout));
    /* held with the windows: the labels, the class indices and +1/-1 labels, the chunks and
     * the text buffers (the class table's sorted copy of the labels comes between windows) */
    size_t fixed = n * (sizeof(double) + sizeof(int32_t) + sizeof(float)) +
                   nch * sizeof(chunk) + (size_t)threads * BLOCK_BYTES, least = 256u << 10;
    if (fixed > budget || budget - fixed < least)
        return pt_fail(PT_ERR_LIMIT, "%s: converting %zu rows in bounded memory needs %.1f MiB "
                       "for the labels, the text buffers and the smallest window, over the memory "
                       "budget of %.1f MiB; raise --mem-mb (pt_read_options.mem_budget_bytes)",
                       src->path, n, (double)(fixed + least) / 1048576.0, budget / 1048576.0);
    convert_job j = {src, ch, nch, d, o->max_features, (budget - fixed) / 2, threads,
                     layout == PT_LAYOUT_SPARSE, NULL};
    pt_log(PT_LOG_INFO, "%s: %zu rows x %zu features (%s) exceed the memory budget of %.1f "
           "MiB: converted in windows of %.1f MiB", src->path, n, d, pt_layout_name(layout),
           budget / 1048576.0, j.window / 1048576.0);
    pt_dataset *meta = calloc(1, sizeof *meta);
    j.labels = malloc((n ? n : 1) * sizeof *j.labels);
    pt_status s = meta && j.labels ? PT_OK
                                   : pt_fail(PT_ERR_NOMEM, "%s: cannot allocate %zu labels",
                                             src->path, n);
    convert_out co = {&j, n, 0, 0, meta};
    /* the labels come with the rows: a first windowed pass reads them (and, sparse, counts the
     * entries kept) before the file, whose header needs the class count, is begun */
    if (s == PT_OK) s = parse_windows(&j, NULL, &co.entries, &co.nnz);
    if (s == PT_OK) {
        meta->n = n;
        meta->cls = pt_alloc((n ? n : 1) * sizeof *meta->cls, "class indices");
        s = meta->cls ? pt_dataset_set_class_table(meta, j.labels) : PT_ERR_NOMEM;
    }
    if (s == PT_OK) s = pt_write_atomic(out, write_converted, &co); /* labels parsed again */
    free(j.labels);
    pt_dataset_free(meta);
    return s;
}

pt_status pt_convert_libsvm_ptd(const char *path, const pt_read_options *o, const char *out)
{
    source src;
    PT_TRY(source_open(path, o->mem_budget_bytes, &src));
    if (src.len == 0) {
        source_close(&src);
        return pt_fail(PT_ERR_PARSE, "%s: no data rows (empty file)", path);
    }
    src.end = src.len;
    size_t budget = o->mem_budget_bytes ? o->mem_budget_bytes : pt_default_mem_budget();
    int threads = pt_threads_resolve(o->threads);
    size_t nch = plan_chunks(src.len, threads), small = src.len / convert_chunk_bytes(budget) + 1;
    if (src.fd >= 0 && small > nch) nch = small;
    chunk *ch = calloc(nch, sizeof *ch);
    pt_status s = ch ? PT_OK : pt_fail(PT_ERR_NOMEM, "%s: cannot allocate %zu chunks", path, nch);
    double t0 = pt_now();
    scan_totals t;
    if (s == PT_OK) s = scan_chunks(&src, o, ch, nch, threads, &t);
    pt_layout layout;
    bool fits = s == PT_OK &&
                pt_layout_resolve(path, o->layout, t.n, t.d, t.ents, budget, &layout) == PT_OK;
    if (s == PT_OK && fits) {
        pt_dataset *ds = NULL;
        s = parse_chunks(&src, o, ch, nch, threads, &t, t0, &ds);
        if (s == PT_OK) s = pt_write_atomic(out, pt_write_ptd, ds);
        pt_dataset_free(ds);
    } else if (s == PT_OK && src.fd < 0) {
        char why[512];
        snprintf(why, sizeof why, "%s", pt_last_error());
        s = pt_fail(PT_ERR_LIMIT, "%s; standard input and gzip text are read once, in memory: "
                    "give the path of an uncompressed file to convert it in bounded memory", why);
    } else if (s == PT_OK) {
        s = convert_bounded(&src, o, ch, nch, threads, t.n, t.d, t.ents, out);
    }
    free(ch);
    source_close(&src);
    return s;
}
