/*
 * The row source: how every layer above data/ reads the rows of a dataset while it trains or
 * scores, without knowing their form. The rows come dense (float32, bf16, or u8 with a divisor
 * per feature or one for all) or CSR; in memory or streamed from their file window by window;
 * a whole file or a rank's share. A consumer opens one pt_rows on the dataset, one pt_cursor
 * per thread on the pt_rows, and reads pt_row and pt_block values through static inline
 * accessors, so a hot loop keeps its own kernel calls, summation order and SIMD fast paths, at
 * no function call per row. Where a consumer has a faster routine for one form (the CSR step,
 * the compact step_rows), it hands one function per form to PT_ROWS_PICK and gets back the one
 * that fits, once per run: the form is chosen in data/, never tested above it.
 *
 * Fields and constants whose names end in an underscore (and the PT_FORM_ values) are data/'s
 * own: scripts/check-layers fails a file of features, model, paths, multiclass, train or
 * workflow that names them, or names the form directly (PT_LAYOUT_*, PT_DTYPE_*, pt_window_*,
 * pt_csr_row, pt_row_f32, ...). Private to the library, not installed.
 */
#ifndef PT_ROWS_H
#define PT_ROWS_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "data.h"

/* How a cursor hands dense rows. */
typedef enum pt_read {
    PT_READ_FLOAT = 0, /* as float32: compact rows widened as they are read (by the kernel
                        * table's widening: the float32 copy's values, bit for bit) */
    PT_READ_STORED = 1 /* compact rows as stored, for the compact kernels (pt_stored_*); float32
                        * and CSR rows come as with PT_READ_FLOAT */
} pt_read;

/* What a consumer needs of the rows beyond reading them (pt_rows_opts.need). */
enum {
    PT_NEED_WHOLE = 1u << 0,      /* every row in memory at once (the kernel path's Gram and
                                   * kernel rows): a streamed source is refused */
    PT_NEED_FLOAT_COPY = 1u << 1, /* compact rows copied to float32 once, within budget (the
                                   * kernel path reads each row many times over) */
    PT_NEED_DENSE = 1u << 2       /* CSR refused with pt_require_dense's message (scaling moves
                                   * zeros; a row map reads dense rows) */
};

typedef struct pt_rows_opts {
    const float *class_weight;  /* per class (nclass of them, counted by the caller), NULL: 1 */
    const float *sample_weight; /* per row (n of them), NULL: 1 */
    unsigned need;              /* PT_NEED_* */
    size_t budget;              /* bytes the float32 copy may take (0: the default budget) */
    const char *what;           /* the reader, named in refusals ("the kernel path") */
} pt_rows_opts;

/* data/ only: the form (how the accessors read a row) and the element decoding. */
enum { PT_FORM_F32, PT_FORM_BF16, PT_FORM_U8, PT_FORM_CSR };
typedef struct pt_elems {
    const float *X;          /* float32 rows, len floats apart (PT_FORM_F32) */
    const unsigned char *Xc; /* compact rows as stored, row_bytes apart */
    size_t row_bytes;        /* bytes of a stored dense row */
    pt_dtype t;              /* compact: the element type */
    const float *rh, *rl;    /* u8: the divisors' reciprocals (pt_u8_decode), len each */
    bool one;                /* u8: one divisor for every feature (pt_one_divisor) */
    const uint64_t *rowptr;  /* CSR: n + 1 offsets into col and val */
    const uint32_t *col;
    const float *val;
} pt_elems;

/* The rows of one run: opened once on a dataset, read-only once open, so any number of
 * threads read it through their own cursors. Views (one class against the rest, a block of
 * rows) are pt_rows values that share the source's storage and own nothing. */
typedef struct pt_rows {
    size_t n;               /* rows here (a share's own, a view's) */
    size_t d;               /* features */
    size_t len;             /* floats of a dense row and of a weight vector (the stride) */
    size_t nnz;             /* non-zeros the dataset counted (loops' parallel thresholds) */
    size_t n_all;           /* rows of all shares: a run's states count these */
    size_t shares;          /* ranks sharing the rows (1: one process holds them all) */
    bool replicated;        /* every rank holds all the rows (kernel one-vs-rest over ranks) */
    size_t nclass;          /* classes (a binary view's: 2) */
    const double *class_values; /* nclass label values, ascending (NULL in a view) */
    const float *y;         /* +1/-1 labels (two classes, or a view's), else NULL */
    const int32_t *cls;     /* each row's class index */
    /* data/ only below: the dataset whose windows the cursors walk (NULL: in memory), the
     * kernel table, the form and its decoding, the weights, the float32 copy owned */
    const pt_dataset *ds_;
    size_t win_;            /* rows of a streamed window, 0 in memory */
    const pt_kernels *k_;
    int form_;
    pt_elems e_;
    const float *cw_, *sw_;
    pt_dataset *copy_;
} pt_rows;

/* Open a source on ds's rows with the kernel table k (which widens compact rows and runs the
 * stored kernels); o NULL: no weights, no needs. Refuses (PT_ERR_UNSUPPORTED, PT_ERR_LIMIT,
 * PT_ERR_NOMEM, naming o->what) what o->need excludes, or a float32 copy over budget. The
 * source must not outlive ds. */
pt_status pt_rows_open(pt_rows *src, const pt_dataset *ds, const pt_kernels *k,
                       const pt_rows_opts *o);
/* Free what the source owns (its float32 copy); nothing for a view, or a zeroed source. */
void pt_rows_close(pt_rows *src);
/* The binary problem "class c against the rest" on src's rows (one-vs-rest): y gets src->n
 * labels, +1 for class c, and the view reads src's rows with them (weights still by the row's
 * own class). The view owns nothing and must not outlive src or y. */
void pt_rows_binary_view(const pt_rows *src, size_t c, float *y, pt_rows *view);

/* Capabilities: what a consumer asks to choose its pass or size its buffers, never the form. */
/* Rows of a streamed source's window, 0 in memory: a shuffle walks a streamed source in chunks
 * of this many rows unless told otherwise (each chunk read once), and a streamed prediction
 * scores a window at a time. */
size_t pt_rows_window(const pt_rows *src);
/* Bytes of the matrix as stored (a CSR matrix's entries and offsets; SIZE_MAX past size_t):
 * whether the blocked pass may pay, and what a refusal of a streamed matrix says it weighs. */
size_t pt_rows_stored_bytes(const pt_rows *src);
/* What a walker holds for `rows` dense rows as float32 (a window's copy, the widened rows):
 * the budget of a streamed shuffle's chunks; 0 for CSR rows, read in the mapping. SIZE_MAX on
 * overflow. */
size_t pt_rows_held_bytes(const pt_rows *src, size_t rows);
/* Bytes a walker reads for an average row (dense: the stored row; CSR: its pairs and its
 * offset): the blocked pass sizes its chunks by it. */
size_t pt_rows_row_bytes(const pt_rows *src);
/* Whether threads may score rows ahead of the walk (the blocked pass): float32 or CSR rows in
 * memory, which dot_rows reads in place (compact rows would be widened by every thread, and a
 * streamed window belongs to one walker). */
bool pt_rows_parallel_scoring(const pt_rows *src);
/* Whether weights were given (even all 1): each row then steps with its own step size, which
 * only the passes that take a row at a time apply (a plain pass is one kernel call a block). */
bool pt_rows_weighted(const pt_rows *src);
/* Whether the rows read are a float32 copy (PT_NEED_FLOAT_COPY of compact rows): what a run
 * counted on them is the copy's, not the stored rows' as another reader would widen them. */
bool pt_rows_copied(const pt_rows *src);
/* Bytes of a stored element, 4, 2 or 1: rates per byte read (the batch path times its
 * prefetch per element size) and prefetch distances. */
size_t pt_rows_elem_bytes(const pt_rows *src);
/* PT_ERR_UNSUPPORTED saying that `what` cannot read src's rows (CSR: pt_require_dense's
 * message): for a consumer whose PT_ROWS_PICK gave NULL. */
pt_status pt_rows_refuse(const pt_rows *src, const char *what);

/* The weight a row counts with: its class's weight times its own (1 without weights). */
static inline float pt_rows_weight(const pt_rows *src, size_t i)
{
    if (!src->cw_ && !src->sw_) return 1.0f;
    return (src->cw_ ? src->cw_[src->cls[i]] : 1.0f) * (src->sw_ ? src->sw_[i] : 1.0f);
}

/* data/ only: which of a consumer's functions fits src read by `read`: 0 dense float32, 1
 * stored compact, 2 CSR. */
static inline int pt_rows_pick_(const pt_rows *src, pt_read read)
{
    if (src->form_ == PT_FORM_CSR) return 2;
    return read == PT_READ_STORED && src->form_ != PT_FORM_F32 ? 1 : 0;
}
/* The one of three values (functions of one type, or constants) that fits src's rows read by
 * `read`, the cursors being opened with the same read: csr_fn for CSR rows; stored_fn for
 * compact rows read PT_READ_STORED; dense_fn otherwise (float32 rows, and compact rows read
 * PT_READ_FLOAT, which come widened). A form the consumer has no function for gets NULL,
 * which it refuses with pt_rows_refuse. Evaluated once per run, outside the loops. */
#define PT_ROWS_PICK(src, read, dense_fn, stored_fn, csr_fn)                                     \
    (pt_rows_pick_((src), (read)) == 2   ? (csr_fn)                                              \
     : pt_rows_pick_((src), (read)) == 1 ? (stored_fn)                                           \
                                         : (dense_fn))

/* One row as a cursor hands it. Which fields are set is the form's, and only the function
 * PT_ROWS_PICK gave reads them: x (dense float32: in the matrix, the window's copy, or widened
 * into the cursor's buffer until its next row or block), stored (compact rows read STORED), or
 * idx, x and nnz (CSR: the columns and values of the non-zeros). */
typedef struct pt_row {
    size_t i;        /* the row's index in the source */
    float y;         /* +1/-1 (0 where the source has no binary labels) */
    float weight;    /* pt_rows_weight */
    int32_t cls;     /* its class */
    const float *x;
    const void *stored;
    const uint32_t *idx;
    size_t nnz;
} pt_row;

/* Rows [r0, r0 + rows) in file order: X (dense float32 rows ld floats apart: in the matrix,
 * the window's copy or widened into the cursor's buffer), stored (compact rows read STORED,
 * ld elements apart), or rowptr (rows + 1 offsets into col and val, which start at the
 * source's first entry: col + rowptr[r] is row r0 + r's first column); Y their labels. */
typedef struct pt_block {
    size_t r0, rows, ld;
    const float *X;
    const void *stored;
    const uint64_t *rowptr;
    const uint32_t *col;
    const float *val;
    const float *Y;
    const int32_t *cls;
} pt_block;

/* Cursor flags. */
enum {
    PT_CURSOR_PREFETCH = 1u << 0, /* shuffled rows: fetch the rows a few samples ahead (the
                                   * hardware prefetcher cannot follow a random order) */
    PT_CURSOR_SPAN = 1u << 1      /* blocks are exactly the rows asked, never clipped to a
                                   * window: a streamed source's rows are brought in by advice
                                   * as a block is taken and let go as the next one is (chunks
                                   * whose sums must not depend on the window size) */
};
/* data/ only: a span's rows are entered (pt_window_enter) and not yet left. */
#define PT_CURSOR_HOLDS_SPAN_ (1u << 8)
#define PT_CURSOR_OWNS_WIDE_ (1u << 9)

typedef struct pt_cursor_opts {
    pt_read read;          /* PT_READ_FLOAT (the zero default) or PT_READ_STORED */
    const uint32_t *order; /* sample t is row order[t] (NULL: row t); src->n entries */
    size_t from, to;       /* the rows walked, [from, to) (to 0: to the end): a streamed
                            * source's windows are clipped to them, so walkers of
                            * neighbouring ranges do not drop each other's rows */
    size_t window_rows;    /* streamed: rows a window (0: the source's), a shuffle's chunk */
    size_t block_rows;     /* the most rows a FLOAT block of compact rows widens (0: 1) */
    float *buf;            /* room for them, block_rows * len floats, the caller's (NULL: the
                            * cursor allocates it, where the rows need widening) */
    unsigned flags;        /* PT_CURSOR_* */
} pt_cursor_opts;

/* One walker (a thread's) over a source: its window, its widening buffer. Zeroed, then
 * opened; the public fields are the open's, read-only. */
typedef struct pt_cursor {
    const pt_rows *src;
    pt_read read;
    const uint32_t *order;
    size_t from, to; /* to: resolved (src->n where 0 was given) */
    /* data/ only: the window position, the widening buffer and its rows, the flags */
    pt_window_pos at_;
    float *wide_;
    size_t wide_rows_;
    unsigned flags_;
    size_t span_r0_, span_rows_;
} pt_cursor;

/* Open a cursor on src (o NULL: FLOAT rows in file order, all of them). PT_ERR_NOMEM when the
 * widening buffer cannot be allocated. */
pt_status pt_cursor_open(pt_cursor *c, const pt_rows *src, const pt_cursor_opts *o);
/* Let go of what the cursor holds (the window, a span's rows); it stays open, and its next row
 * or block brings its own rows in: an epoch's end. */
void pt_cursor_drop(pt_cursor *c);
/* pt_cursor_drop, then free the cursor's buffer. A zeroed cursor may be closed. */
void pt_cursor_close(pt_cursor *c);

/* data/ only (rows.c): a span's rows entered, and left. */
void pt_cursor_span_(pt_cursor *c, size_t r0, size_t rows);
void pt_cursor_leave_(pt_cursor *c);

#define PT_ROWS_PREFETCH_AHEAD 4 /* samples ahead a shuffled walk fetches */

/* Bring sample t's row toward the cache, as stored (a float32 row in the matrix, a compact
 * row's bytes, a CSR row's pairs); nothing for rows the window copied (they are in cache). */
static inline void pt_cursor_prefetch(const pt_cursor *c, size_t t)
{
    const pt_rows *s = c->src;
    const size_t i = c->order ? c->order[t] : t;
    if (s->form_ == PT_FORM_CSR) {
        const uint64_t a = s->e_.rowptr[i], e = s->e_.rowptr[i + 1];
        for (uint64_t j = a; j < e; j += 16) {
            __builtin_prefetch(s->e_.col + j, 0, 3);
            __builtin_prefetch(s->e_.val + j, 0, 3);
        }
        return;
    }
    if (c->at_.copy) return;
    const char *p = s->form_ == PT_FORM_F32 ? (const char *)(s->e_.X + i * s->len)
                                            : (const char *)(s->e_.Xc + i * s->e_.row_bytes);
    for (size_t j = 0; j < s->e_.row_bytes; j += 64) __builtin_prefetch(p + j, 0, 3);
}

/* data/ only: the fetches ahead of sample t of a shuffled walk (the row PT_ROWS_PREFETCH_AHEAD
 * samples on; for CSR also the offsets and labels twice as far, whose loads the pairs'
 * addresses wait on). */
static inline void pt_cursor_ahead_(const pt_cursor *c, size_t t)
{
    const pt_rows *s = c->src;
    if (!c->order) return;
    if (t + PT_ROWS_PREFETCH_AHEAD < s->n) pt_cursor_prefetch(c, t + PT_ROWS_PREFETCH_AHEAD);
    if (s->form_ == PT_FORM_CSR && t + 2 * PT_ROWS_PREFETCH_AHEAD < s->n) {
        const size_t i = c->order[t + 2 * PT_ROWS_PREFETCH_AHEAD];
        __builtin_prefetch(s->e_.rowptr + i, 0, 3);
        __builtin_prefetch(s->cls + i, 0, 3);
        if (s->y) __builtin_prefetch(s->y + i, 0, 3);
    }
}

/* data/ only: compact row i widened to float32 into out (len floats). */
static inline void pt_rows_widen_(const pt_rows *s, size_t i, float *out)
{
    const unsigned char *x = s->e_.Xc + i * s->e_.row_bytes;
    if (s->form_ == PT_FORM_BF16)
        s->k_->compact->widen_bf16((const uint16_t *)(const void *)x, out, s->len);
    else
        s->k_->compact->widen_u8(x, s->e_.rh, s->e_.rl, out, s->len);
}

/* Sample t of the walk (row order[t], or t): its window brought in when streamed (the walk
 * takes a window's rows together: in file order, or in an order shuffled by windows), its
 * labels, weight and values. */
static inline void pt_cursor_row(pt_cursor *c, size_t t, pt_row *r)
{
    const pt_rows *s = c->src;
    const size_t i = c->order ? c->order[t] : t;
    if (s->win_) {
        if (c->order) pt_window_at_order(s->ds_, &c->at_, c->order, t, s->n);
        else pt_window_at(s->ds_, &c->at_, i);
    }
    r->i = i;
    r->y = s->y ? s->y[i] : 0.0f;
    r->cls = s->cls ? s->cls[i] : 0;
    r->weight = pt_rows_weight(s, i);
    if (c->flags_ & PT_CURSOR_PREFETCH) pt_cursor_ahead_(c, t);
    r->stored = NULL;
    r->idx = NULL;
    r->nnz = 0;
    switch (s->form_) {
    case PT_FORM_CSR: {
        const uint64_t a = s->e_.rowptr[i];
        r->idx = s->e_.col + a;
        r->x = s->e_.val + a;
        r->nnz = (size_t)(s->e_.rowptr[i + 1] - a);
        return;
    }
    case PT_FORM_F32:
        r->x = c->at_.copy ? c->at_.copy + (i - c->at_.lo) * s->len : s->e_.X + i * s->len;
        return;
    default:
        if (c->read == PT_READ_STORED) {
            r->x = NULL;
            r->stored = s->e_.Xc + i * s->e_.row_bytes;
            return;
        }
        pt_rows_widen_(s, i, c->wide_);
        r->x = c->wide_;
        return;
    }
}

/* data/ only: the block's rows within its storage (rows already clipped). */
static inline void pt_rows_fill_(const pt_rows *s, size_t r0, size_t rows, pt_block *b)
{
    *b = (pt_block){.r0 = r0, .rows = rows, .ld = s->len,
                    .Y = s->y ? s->y + r0 : NULL, .cls = s->cls ? s->cls + r0 : NULL};
    if (s->form_ == PT_FORM_CSR) {
        b->rowptr = s->e_.rowptr + r0;
        b->col = s->e_.col;
        b->val = s->e_.val;
    } else if (s->form_ == PT_FORM_F32) {
        b->X = s->e_.X + r0 * s->len;
    } else {
        b->stored = s->e_.Xc + r0 * s->e_.row_bytes;
    }
}

/* Rows [r0, r0 + rows) of src where they are stored, exactly those rows, with no window and no
 * advice: float32 rows in the matrix, compact rows as stored (stored, whatever the read),
 * CSR offsets. For a whole matrix in memory (a PT_NEED_WHOLE source), or to read a streamed
 * source's CSR offsets (the batch path's chunk bounds), whose pages the reads fault in. */
static inline void pt_rows_span(const pt_rows *src, size_t r0, size_t rows, pt_block *b)
{
    pt_rows_fill_(src, r0, rows, b);
}

/* The block of samples from t on (file order: a cursor opened without order), at most
 * max_rows, clipped to the cursor's range, to a streamed source's window (not with
 * PT_CURSOR_SPAN) and, for compact rows read FLOAT, to the buffer's block_rows (widened
 * there). b->rows is 0 only at the range's end. */
static inline void pt_cursor_block(pt_cursor *c, size_t t, size_t max_rows, pt_block *b)
{
    const pt_rows *s = c->src;
    assert(!c->order); /* a block is consecutive rows */
    size_t rows = t < c->to ? c->to - t : 0;
    if (rows > max_rows) rows = max_rows;
    const bool widen = s->form_ != PT_FORM_F32 && s->form_ != PT_FORM_CSR &&
                       c->read == PT_READ_FLOAT;
    if (widen && rows > c->wide_rows_) rows = c->wide_rows_;
    if (s->win_ && rows) {
        if (c->flags_ & PT_CURSOR_SPAN) {
            pt_cursor_span_(c, t, rows);
        } else {
            pt_window_at(s->ds_, &c->at_, t);
            if (rows > c->at_.hi - t) rows = c->at_.hi - t;
        }
    }
    pt_rows_fill_(s, t, rows, b);
    if (c->at_.copy && s->form_ == PT_FORM_F32 && !(c->flags_ & PT_CURSOR_SPAN))
        b->X = c->at_.copy + (t - c->at_.lo) * s->len;
    if (widen) {
        for (size_t r = 0; r < rows; r++) pt_rows_widen_(s, t + r, c->wide_ + r * s->len);
        b->stored = NULL;
        b->X = c->wide_;
    }
}

/* Row r as dense float32: r->x for dense rows read FLOAT; else written into buf (len floats):
 * a stored compact row widened, a CSR row's values scattered into zeros. For the consumers
 * that read every row densely (a row map, a scaling fit). */
static inline const float *pt_cursor_dense(const pt_cursor *c, const pt_row *r, float *buf)
{
    const pt_rows *s = c->src;
    if (s->form_ == PT_FORM_CSR) {
        for (size_t j = 0; j < s->len; j++) buf[j] = 0.0f;
        for (size_t e = 0; e < r->nnz; e++) buf[r->idx[e]] = r->x[e];
        return buf;
    }
    if (r->x) return r->x;
    pt_rows_widen_(s, r->i, buf);
    return buf;
}

/* The compact kernels (kernels.h's pt_compact_kernels) on stored rows, the element type and
 * divisors bound by the source: x a row's stored elements (pt_row.stored), buf the kernels'
 * scratch of src->len floats (used where the ISA widens through memory). Each gives exactly
 * the float32 kernel's result on the widened row. */
static inline float pt_stored_dot(const pt_rows *src, const float *w, const void *x, float *buf)
{
    return src->k_->compact->dot(w, x, src->e_.t, src->e_.rh, src->e_.rl, src->e_.one, src->len,
                                 buf);
}
static inline void pt_stored_axpy(const pt_rows *src, float a, const void *x, float *y,
                                  float *buf)
{
    src->k_->compact->axpy(a, x, src->e_.t, src->e_.rh, src->e_.rl, src->e_.one, y, src->len,
                           buf);
}
/* The online step on every row of a stored block, in order (the plain pass): w, *bw (the bias
 * weight) updated where y s <= tau, as step_rows does on the widened rows. Returns the
 * updates. */
static inline size_t pt_stored_step_rows(const pt_rows *src, const pt_block *b, float *w,
                                         float *bw, float tau, float eta, float bias, float *buf)
{
    return src->k_->compact->step_rows(w, bw, b->stored, src->len, src->e_.t, src->e_.rh,
                                       src->e_.rl, b->Y, b->rows, src->len, tau, eta, bias, buf);
}

/* The block's rows as a source of their own (in memory: the block's rows, labels and weights,
 * nothing to walk): the streamed prediction scores a window's rows with the in-memory scorers.
 * Take the block with PT_READ_STORED to view compact rows as compact. The view owns nothing
 * and lives no longer than the block's rows (the cursor's next block, or its window). */
void pt_rows_block_view(const pt_rows *src, const pt_block *b, pt_rows *view);

#endif /* PT_ROWS_H */
