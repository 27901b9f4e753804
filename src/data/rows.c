/*
 * The row source (rows.h): opening it on a dataset (the form and its element decoding read
 * once, the refusals of what a consumer cannot take, the float32 copy), its views, its
 * capabilities, and the cursors' buffers and windows. The per-row accessors are rows.h's
 * inlines.
 */
#include <string.h>

#include "rows.h"

/* The form, decoding, labels and shares of ds's rows into src (zeroed). */
static void read_form(pt_rows *src, const pt_dataset *ds, const pt_kernels *k)
{
    src->n = ds->n;
    src->d = ds->d;
    src->len = ds->stride;
    src->nnz = ds->nnz;
    src->shares = ds->shard_count > 1 ? ds->shard_count : 1;
    src->n_all = ds->shard_count ? ds->n_total : ds->n;
    src->replicated = ds->replicated;
    src->nclass = ds->nclass;
    src->class_values = ds->class_values;
    src->y = ds->y;
    src->cls = ds->cls;
    src->ds_ = ds;
    src->win_ = pt_dataset_streamed(ds);
    src->k_ = k;
    pt_elems *e = &src->e_;
    if (ds->layout == PT_LAYOUT_SPARSE) {
        src->form_ = PT_FORM_CSR;
        e->rowptr = ds->rowptr;
        e->col = ds->col;
        e->val = ds->val;
        return;
    }
    e->t = ds->dtype;
    e->row_bytes = ds->stride * pt_elem_bytes(ds->dtype);
    if (ds->dtype == PT_DTYPE_F32) {
        src->form_ = PT_FORM_F32;
        e->X = ds->X;
        return;
    }
    src->form_ = ds->dtype == PT_DTYPE_BF16 ? PT_FORM_BF16 : PT_FORM_U8;
    e->Xc = ds->Xc;
    if (ds->dtype == PT_DTYPE_U8) {
        e->rh = ds->u8_rh;
        e->rl = ds->u8_rl;
        e->one = pt_one_divisor(ds->u8_rh, ds->u8_rl, ds->stride);
    }
}

/* A PT_NEED_WHOLE source that is streamed. */
static pt_status refuse_streamed(const pt_rows *src, const char *what)
{
    return pt_fail(PT_ERR_LIMIT, "%s needs every row in memory at once, and the %.1f MiB matrix "
                   "is streamed from its file (it exceeded the reader's memory budget): read it "
                   "with pt_read_options.mem_budget_bytes above that", what,
                   (double)pt_rows_stored_bytes(src) / 1048576.0);
}

pt_status pt_rows_open(pt_rows *src, const pt_dataset *ds, const pt_kernels *k,
                       const pt_rows_opts *o)
{
    static const pt_rows_opts none = {0};
    if (!o) o = &none;
    const char *what = o->what ? o->what : "reading the rows";
    memset(src, 0, sizeof *src);
    if (o->need & PT_NEED_DENSE) PT_TRY(pt_require_dense(ds, what));
    const pt_dataset *use = ds;
    pt_dataset *copy = NULL;
    if (o->need & PT_NEED_FLOAT_COPY) PT_TRY(pt_dataset_as_f32(ds, o->budget, what, &copy, &use));
    read_form(src, use, k);
    src->copy_ = copy;
    src->cw_ = o->class_weight;
    src->sw_ = o->sample_weight;
    if ((o->need & PT_NEED_WHOLE) && src->win_) {
        pt_status s = refuse_streamed(src, what);
        pt_rows_close(src);
        return s;
    }
    return PT_OK;
}

void pt_rows_close(pt_rows *src)
{
    pt_dataset_free(src->copy_);
    memset(src, 0, sizeof *src);
}

void pt_rows_binary_view(const pt_rows *src, size_t c, float *y, pt_rows *view)
{
    *view = *src;
    for (size_t i = 0; i < src->n; i++) y[i] = src->cls[i] == (int32_t)c ? 1.0f : -1.0f;
    view->y = y;
    view->nclass = 2;
    view->class_values = NULL;
    view->copy_ = NULL; /* the source's */
}

void pt_rows_block_view(const pt_rows *src, const pt_block *b, pt_rows *view)
{
    *view = *src;
    view->n = view->n_all = b->rows;
    view->shares = 1;
    view->replicated = false;
    view->y = b->Y;
    view->cls = b->cls;
    view->sw_ = src->sw_ ? src->sw_ + b->r0 : NULL;
    view->ds_ = NULL; /* in memory: nothing to walk */
    view->win_ = 0;
    view->copy_ = NULL;
    pt_elems *e = &view->e_;
    if (b->rowptr) {
        e->rowptr = b->rowptr;
        view->nnz = (size_t)(b->rowptr[b->rows] - b->rowptr[0]);
        return;
    }
    view->nnz = src->n ? (size_t)((double)src->nnz * (double)b->rows / (double)src->n) : 0;
    if (b->X) { /* float32 rows (a compact block read FLOAT: its widened rows) */
        view->form_ = PT_FORM_F32;
        e->X = b->X;
        e->Xc = NULL;
        e->row_bytes = src->len * sizeof(float);
    } else {
        e->Xc = b->stored;
    }
}

size_t pt_rows_window(const pt_rows *src) { return src->win_; }

size_t pt_rows_stored_bytes(const pt_rows *src)
{
    if (src->form_ == PT_FORM_CSR)
        return pt_sparse_bytes(src->n, (size_t)(src->e_.rowptr[src->n] - src->e_.rowptr[0]));
    size_t bytes;
    return pt_mul_ok(src->n, src->e_.row_bytes, &bytes) ? bytes : SIZE_MAX;
}

size_t pt_rows_held_bytes(const pt_rows *src, size_t rows)
{
    if (src->form_ == PT_FORM_CSR) return 0;
    size_t bytes;
    return pt_mul_ok(rows, src->len * sizeof(float), &bytes) ? bytes : SIZE_MAX;
}

size_t pt_rows_row_bytes(const pt_rows *src)
{
    if (src->form_ == PT_FORM_CSR)
        return src->n ? (src->nnz * 8 + src->n * 8) / src->n : 8; /* a pair 8, an offset 8 */
    return (src->len ? src->len : 1) * pt_rows_elem_bytes(src);
}

bool pt_rows_parallel_scoring(const pt_rows *src)
{
    return (src->form_ == PT_FORM_F32 || src->form_ == PT_FORM_CSR) && !src->win_;
}

bool pt_rows_weighted(const pt_rows *src) { return src->cw_ || src->sw_; }

bool pt_rows_copied(const pt_rows *src) { return src->copy_ != NULL; }

size_t pt_rows_elem_bytes(const pt_rows *src)
{
    return src->form_ == PT_FORM_BF16 ? 2 : src->form_ == PT_FORM_U8 ? 1 : 4;
}

pt_status pt_rows_refuse(const pt_rows *src, const char *what)
{
    if (src->form_ == PT_FORM_CSR) {
        /* the one text of this refusal (dataset_csr.c), for a source with or without its
         * dataset at hand */
        const pt_dataset sparse = {.layout = PT_LAYOUT_SPARSE};
        return pt_require_dense(&sparse, what);
    }
    const char *form = src->form_ == PT_FORM_F32 ? "float32" : src->form_ == PT_FORM_BF16 ? "bf16"
                                                                                           : "u8";
    return pt_fail(PT_ERR_UNSUPPORTED, "%s cannot read dense %s rows", what, form);
}

pt_status pt_cursor_open(pt_cursor *c, const pt_rows *src, const pt_cursor_opts *o)
{
    static const pt_cursor_opts none = {0};
    if (!o) o = &none;
    memset(c, 0, sizeof *c);
    c->src = src;
    c->read = o->read;
    c->order = o->order;
    c->from = o->from;
    c->to = o->to ? o->to : src->n;
    c->flags_ = o->flags & (PT_CURSOR_PREFETCH | PT_CURSOR_SPAN);
    /* the window's range as given: a walk with an end of its own reads in place (window.c) */
    c->at_ = (pt_window_pos){.rows = o->window_rows, .from = o->from, .to = o->to};
    const bool compact = src->form_ == PT_FORM_BF16 || src->form_ == PT_FORM_U8;
    if (!compact || c->read != PT_READ_FLOAT) return PT_OK;
    c->wide_rows_ = o->block_rows ? o->block_rows : 1;
    if (o->buf) {
        c->wide_ = o->buf;
        return PT_OK;
    }
    size_t floats, bytes;
    if (!pt_mul_ok(c->wide_rows_, src->len, &floats) || !pt_mul_ok(floats, sizeof(float), &bytes))
        return pt_fail(PT_ERR_LIMIT, "a cursor's %zu widened rows of %zu floats overflow",
                       c->wide_rows_, src->len);
    if (!(c->wide_ = pt_alloc(bytes, "widened rows"))) return PT_ERR_NOMEM;
    c->flags_ |= PT_CURSOR_OWNS_WIDE_;
    return PT_OK;
}

void pt_cursor_span_(pt_cursor *c, size_t r0, size_t rows)
{
    pt_cursor_leave_(c);
    pt_window_enter(c->src->ds_, r0, rows);
    c->span_r0_ = r0;
    c->span_rows_ = rows;
    c->flags_ |= PT_CURSOR_HOLDS_SPAN_;
}

void pt_cursor_leave_(pt_cursor *c)
{
    if (!(c->flags_ & PT_CURSOR_HOLDS_SPAN_)) return;
    pt_window_leave(c->src->ds_, c->span_r0_, c->span_rows_);
    c->flags_ &= ~PT_CURSOR_HOLDS_SPAN_;
}

void pt_cursor_drop(pt_cursor *c)
{
    if (!c->src) return;
    pt_cursor_leave_(c);
    if (!c->src->win_) return;
    pt_window_end(c->src->ds_, &c->at_);
    /* as a cursor just opened: the next walk chooses its way of reading afresh */
    c->at_ = (pt_window_pos){.rows = c->at_.rows, .from = c->at_.from, .to = c->at_.to};
}

void pt_cursor_close(pt_cursor *c)
{
    pt_cursor_drop(c);
    if (c->flags_ & PT_CURSOR_OWNS_WIDE_) pt_free(c->wide_);
    memset(c, 0, sizeof *c);
}
