/* The row source (src/data/rows.h): in every form (dense float32, bf16, u8 with a divisor per
 * feature and with one for all, CSR; in memory, streamed from a .ptd file window by window in
 * each way its pages arrive, a share of a file), a source's rows, blocks, widened values, CSR
 * slices, labels, weights and picks are the dataset's own, read directly; shuffled orders walk
 * the windows; binary and block views; the stored kernels equal the float32 kernels on the
 * widened rows; refusals and capabilities. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "data/rows.h"
#include "testutil.h"

enum { N = 203, D = 37, NCLASS = 4 };

/* The forms a test walks: the dataset's layout and element type. */
enum { F_F32, F_BF16, F_U8, F_U8_ONE, F_CSR, NFORMS };
static const char *form_name[NFORMS] = {"f32", "bf16", "u8", "u8 one divisor", "csr"};

static uint64_t seed = 0x9E3779B97F4A7C15ull;

static uint64_t next(void)
{
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    return seed;
}

/* N x D values of the form's kind: signed with zeros (float32, bf16, CSR); >= 0 at a scale
 * of each feature's own (u8 per feature); pixels k / 255 (u8 of one divisor). Labels: NCLASS
 * classes, or two. */
static pt_dataset *values(int form, size_t classes)
{
    float *x = malloc((size_t)N * D * sizeof *x);
    double *y = malloc(N * sizeof *y);
    ck_assert(x && y);
    for (size_t i = 0; i < N; i++) {
        for (size_t j = 0; j < D; j++) {
            float *v = &x[i * D + j];
            if (form == F_U8_ONE) *v = (float)(next() % 256) / 255.0f;
            else if (form == F_U8) *v = (float)(next() % 100000) / 100000.0f * (float)(j + 1);
            else *v = next() % 5 == 0 ? 0.0f : (float)((double)(next() % 40001) / 10000.0 - 2.0);
        }
        y[i] = (double)(classes == 2 ? (i * 7 + 3) % 2 : (i * 5 + 1) % classes);
    }
    if (form == F_U8_ONE) x[0] = 1.0f; /* 255 / 255: the single divisor is exact */
    pt_dataset *ds = tu_dataset(N, D, x, y);
    ck_assert_int_eq(pt_dataset_count_nnz(ds, "rows test"), PT_OK);
    free(x);
    free(y);
    return ds;
}

/* A dataset in the form (in memory). */
static pt_dataset *in_form(int form, size_t classes)
{
    pt_dataset *f = values(form, classes), *c = NULL;
    if (form == F_F32) return f;
    if (form == F_CSR) ck_assert_int_eq(pt_dataset_convert(f, PT_LAYOUT_SPARSE, 0, &c), PT_OK);
    else ck_assert_msg(pt_dataset_to_dtype(f, form == F_BF16 ? PT_DTYPE_BF16 : PT_DTYPE_U8, 0,
                                           &c) == PT_OK, "%s", pt_last_error());
    pt_dataset_free(f);
    if (form == F_U8_ONE) ck_assert(c->u8_single);
    if (form == F_U8) ck_assert(!c->u8_single);
    return c;
}

/* ds written to a .ptd file and read back streamed, windows of about `rows` rows. */
static pt_dataset *streamed(const pt_dataset *ds, size_t rows)
{
    const char *p = tu_path("rows", ".ptd");
    ck_assert_int_eq(pt_dataset_write(ds, p, PT_FORMAT_PTD), PT_OK);
    const bool csr = ds->layout == PT_LAYOUT_SPARSE;
    size_t row = csr ? (ds->rowptr[ds->n] * 8 + (ds->n + 1) * 8) / ds->n
                     : ds->stride * pt_elem_bytes(ds->dtype);
    pt_read_options o;
    pt_read_options_init(&o);
    o.mem_budget_bytes = 8 * rows * row; /* a window an eighth of the budget */
    o.layout = ds->layout;
    pt_dataset *s = NULL;
    ck_assert_msg(pt_dataset_read(p, &o, &s) == PT_OK, "%s", pt_last_error());
    unlink(p);
    ck_assert_uint_gt(pt_dataset_streamed(s), 1);
    ck_assert_uint_lt(pt_dataset_streamed(s), N / 4);
    return s;
}

static const pt_kernels *table(pt_isa isa)
{
    const pt_kernels *k = NULL;
    ck_assert_int_eq(pt_kernels_get(isa, &k), PT_OK);
    return k;
}

/* Row i of ds as float32, read directly: the matrix's row, the compact row widened by the
 * dataset's own routine, a CSR row scattered. */
static void direct_row(const pt_dataset *ds, size_t i, float *out)
{
    if (ds->layout == PT_LAYOUT_SPARSE) tu_row_dense(ds, i, out);
    else pt_compact_widen_row(ds, i, out);
}

/* The bytes of ref's stored row i (a compact row as stored). */
static size_t stored_bytes(const pt_dataset *ref) { return ref->stride * pt_elem_bytes(ref->dtype); }

/* The row a cursor handed for row i holds ref's row i, read directly, in its form: the CSR
 * pairs, the compact row's stored bytes (read STORED), or the float32 values. */
static void assert_row(const pt_dataset *ref, const pt_cursor *c, const pt_row *r, size_t i,
                       const char *what)
{
    ck_assert_msg(r->i == i, "%s: row %zu handed as %zu", what, i, r->i);
    ck_assert_msg(r->cls == ref->cls[i], "%s: row %zu class", what, i);
    ck_assert_msg(r->y == (ref->y ? ref->y[i] : 0.0f), "%s: row %zu label", what, i);
    if (ref->layout == PT_LAYOUT_SPARSE) {
        const uint32_t *col;
        const float *val;
        size_t nnz = pt_csr_row(ref, i, &col, &val);
        ck_assert_msg(r->nnz == nnz && !r->stored && memcmp(r->idx, col, nnz * 4) == 0 &&
                          memcmp(r->x, val, nnz * 4) == 0,
                      "%s: row %zu is not the dataset's CSR row", what, i);
        return;
    }
    if (c->read == PT_READ_STORED && ref->dtype != PT_DTYPE_F32) {
        ck_assert_msg(!r->x && memcmp(r->stored, pt_compact_row(ref, i), stored_bytes(ref)) == 0,
                      "%s: row %zu's stored bytes differ", what, i);
        return;
    }
    float want[64];
    direct_row(ref, i, want);
    ck_assert_msg(r->x && !r->stored && memcmp(r->x, want, ref->stride * sizeof(float)) == 0,
                  "%s: row %zu's values differ", what, i);
}

/* Block row r (row b->r0 + r) holds ref's row, as assert_row. */
static void assert_block_row(const pt_dataset *ref, pt_read read, const pt_block *b, size_t r,
                             const char *what)
{
    const size_t i = b->r0 + r;
    ck_assert_msg(b->Y[r] == ref->y[i] && b->cls[r] == ref->cls[i], "%s: block row %zu labels",
                  what, i);
    if (ref->layout == PT_LAYOUT_SPARSE) {
        const uint32_t *col;
        const float *val;
        size_t nnz = pt_csr_row(ref, i, &col, &val), a = (size_t)b->rowptr[r];
        ck_assert_msg(b->rowptr[r + 1] - a == nnz && memcmp(b->col + a, col, nnz * 4) == 0 &&
                          memcmp(b->val + a, val, nnz * 4) == 0,
                      "%s: block row %zu is not the dataset's CSR row", what, i);
        return;
    }
    if (read == PT_READ_STORED && ref->dtype != PT_DTYPE_F32) {
        const unsigned char *x = (const unsigned char *)b->stored + r * stored_bytes(ref);
        ck_assert_msg(!b->X && memcmp(x, pt_compact_row(ref, i), stored_bytes(ref)) == 0,
                      "%s: block row %zu's stored bytes differ", what, i);
        return;
    }
    float want[64];
    direct_row(ref, i, want);
    ck_assert_msg(memcmp(b->X + r * b->ld, want, ref->stride * sizeof(float)) == 0,
                  "%s: block row %zu's values differ", what, i);
}

static void open_rows(pt_rows *src, const pt_dataset *ds, const pt_kernels *k,
                      const pt_rows_opts *o)
{
    ck_assert_msg(pt_rows_open(src, ds, k, o) == PT_OK, "%s", pt_last_error());
}

static void open_cursor(pt_cursor *c, const pt_rows *src, const pt_cursor_opts *o)
{
    ck_assert_msg(pt_cursor_open(c, src, o) == PT_OK, "%s", pt_last_error());
}

/* Every row of ds through a cursor read `read`, in order (order NULL) or in order[], each
 * weighing its class's weight cw times its own sw (NULL: 1). */
static void walk_rows_weighed(const pt_dataset *ds, const pt_rows *src, pt_read read,
                              const uint32_t *order, size_t window_rows, unsigned flags,
                              const float *cw, const float *sw, const char *what)
{
    pt_cursor c;
    open_cursor(&c, src, &(pt_cursor_opts){.read = read, .order = order,
                                           .window_rows = window_rows, .flags = flags});
    for (size_t t = 0; t < ds->n; t++) {
        pt_row r;
        pt_cursor_row(&c, t, &r);
        assert_row(ds, &c, &r, order ? order[t] : t, what);
        const float want = (cw ? cw[ds->cls[r.i]] : 1.0f) * (sw ? sw[r.i] : 1.0f);
        ck_assert_msg(r.weight == want, "%s: row %zu weighs %g, not %g", what, r.i,
                      (double)r.weight, (double)want);
    }
    pt_cursor_close(&c);
}

static void walk_rows(const pt_dataset *ds, const pt_rows *src, pt_read read,
                      const uint32_t *order, size_t window_rows, unsigned flags, const char *what)
{
    walk_rows_weighed(ds, src, read, order, window_rows, flags, NULL, NULL, what);
}

START_TEST(rows_are_the_datasets)
{
    const pt_isa isas[] = {PT_ISA_AUTO, PT_ISA_SCALAR};
    for (int f = 0; f < NFORMS; f++) {
        pt_dataset *ds = in_form(f, 2);
        for (size_t a = 0; a < 2; a++) {
            pt_rows src;
            open_rows(&src, ds, table(isas[a]), NULL);
            ck_assert_uint_eq(src.n, N);
            ck_assert_uint_eq(src.d, D);
            ck_assert_uint_eq(src.len, ds->stride);
            ck_assert_uint_eq(src.nnz, ds->nnz);
            ck_assert_uint_eq(src.nclass, 2);
            ck_assert(src.y == ds->y && src.cls == ds->cls && src.class_values == ds->class_values);
            ck_assert_uint_eq(src.shares, 1);
            ck_assert_uint_eq(src.n_all, N);
            walk_rows(ds, &src, PT_READ_FLOAT, NULL, 0, 0, form_name[f]);
            walk_rows(ds, &src, PT_READ_STORED, NULL, 0, 0, form_name[f]);
            pt_rows_close(&src);
        }
        pt_dataset_free(ds);
    }
}
END_TEST

/* PT_ROWS_PICK: the dense value for float32 rows and compact rows read FLOAT, the stored one
 * for compact rows read STORED, the CSR one for CSR rows. */
START_TEST(picks_by_form)
{
    const int want_float[NFORMS] = {1, 1, 1, 1, 3}, want_stored[NFORMS] = {1, 2, 2, 2, 3};
    for (int f = 0; f < NFORMS; f++) {
        pt_dataset *ds = in_form(f, 2);
        pt_rows src;
        open_rows(&src, ds, table(PT_ISA_AUTO), NULL);
        ck_assert_int_eq(PT_ROWS_PICK(&src, PT_READ_FLOAT, 1, 2, 3), want_float[f]);
        ck_assert_int_eq(PT_ROWS_PICK(&src, PT_READ_STORED, 1, 2, 3), want_stored[f]);
        /* a form the consumer has nothing for: NULL */
        const char *none = PT_ROWS_PICK(&src, PT_READ_FLOAT, "dense", NULL, NULL);
        ck_assert(f == F_CSR ? none == NULL : strcmp(none, "dense") == 0);
        pt_rows_close(&src);
        pt_dataset_free(ds);
    }
}
END_TEST

/* Blocks in file order: consecutive, max_rows at most (and a FLOAT block of compact rows at
 * most its buffer's rows), each row the dataset's. */
static void walk_blocks(const pt_dataset *ds, const pt_rows *src, pt_read read, size_t max,
                        size_t block_rows, const char *what)
{
    pt_cursor c;
    open_cursor(&c, src, &(pt_cursor_opts){.read = read, .block_rows = block_rows});
    const bool widened = read == PT_READ_FLOAT && ds->layout == PT_LAYOUT_DENSE &&
                         ds->dtype != PT_DTYPE_F32;
    const size_t most = widened && block_rows < max ? block_rows : max;
    for (size_t t = 0; t < ds->n;) {
        pt_block b;
        pt_cursor_block(&c, t, max, &b);
        ck_assert_msg(b.r0 == t && b.rows == (ds->n - t < most ? ds->n - t : most),
                      "%s: block at %zu has %zu rows", what, t, b.rows);
        ck_assert_uint_eq(b.ld, ds->stride);
        if (ds->layout == PT_LAYOUT_SPARSE) /* the dataset's own arrays: no copy */
            ck_assert(b.rowptr == ds->rowptr + t && b.col == ds->col && b.val == ds->val);
        else if (!widened && read == PT_READ_STORED && ds->dtype != PT_DTYPE_F32)
            ck_assert(b.stored == pt_compact_row(ds, t));
        else if (!widened)
            ck_assert(b.X == ds->X + t * ds->stride);
        for (size_t r = 0; r < b.rows; r++) assert_block_row(ds, read, &b, r, what);
        t += b.rows;
    }
    pt_block end;
    pt_cursor_block(&c, ds->n, max, &end);
    ck_assert_uint_eq(end.rows, 0);
    pt_cursor_close(&c);
}

START_TEST(blocks_are_the_datasets)
{
    for (int f = 0; f < NFORMS; f++) {
        pt_dataset *ds = in_form(f, 2);
        pt_rows src;
        open_rows(&src, ds, table(PT_ISA_AUTO), NULL);
        walk_blocks(ds, &src, PT_READ_FLOAT, 19, 5, form_name[f]);
        walk_blocks(ds, &src, PT_READ_FLOAT, 19, 40, form_name[f]);
        walk_blocks(ds, &src, PT_READ_STORED, 19, 0, form_name[f]);
        pt_block all;
        pt_rows_span(&src, 0, N, &all);
        ck_assert_uint_eq(all.rows, N);
        if (f == F_CSR) ck_assert(all.rowptr == ds->rowptr && all.col == ds->col);
        else if (f == F_F32) ck_assert(all.X == ds->X);
        else ck_assert(all.stored == ds->Xc && !all.X);
        pt_rows_close(&src);
        pt_dataset_free(ds);
    }
}
END_TEST

/* A chunked order over windows of `chunk` rows, as the paths shuffle a streamed dataset. */
static uint32_t *chunked_order(size_t n, size_t chunk, uint64_t s)
{
    uint32_t *order = malloc(n * sizeof *order);
    ck_assert(order);
    for (size_t i = 0; i < n; i++) order[i] = (uint32_t)i;
    pt_rng rng;
    pt_rng_seed(&rng, s);
    pt_rng_shuffle_chunks(&rng, order, n, chunk);
    return order;
}

/* Blocks of a streamed source: each within one window (the windows start at multiples of
 * their rows), or exactly the rows asked (a span); every row the in-memory dataset's. */
static void walk_streamed_blocks(const pt_dataset *mem, const pt_rows *src, pt_read read,
                                 unsigned flags, const char *what)
{
    /* (in memory: one window of every row) */
    const size_t win = pt_rows_window(src) ? pt_rows_window(src) : mem->n, max = 3 * win + 1;
    pt_cursor c;
    open_cursor(&c, src, &(pt_cursor_opts){.read = read, .block_rows = max, .flags = flags});
    for (size_t t = 0; t < mem->n;) {
        pt_block b;
        pt_cursor_block(&c, t, max, &b);
        const size_t whole = mem->n - t < max ? mem->n - t : max;
        const size_t edge = (t / win + 1) * win < mem->n ? (t / win + 1) * win : mem->n;
        const size_t want = flags & PT_CURSOR_SPAN ? whole : edge - t;
        ck_assert_msg(b.r0 == t && b.rows == want, "%s: block at %zu has %zu rows, not %zu", what,
                      t, b.rows, want);
        for (size_t r = 0; r < b.rows; r++) assert_block_row(mem, read, &b, r, what);
        t += b.rows;
    }
    pt_cursor_close(&c);
}

/* A streamed float32 walk whose pages are copied reads the window's copy, not the mapping. */
static void assert_reads_copy(const pt_dataset *str, const pt_rows *src)
{
    pt_cursor c;
    open_cursor(&c, src, NULL);
    size_t outside = 0;
    for (size_t t = 0; t < str->n; t++) {
        pt_row r;
        pt_cursor_row(&c, t, &r);
        outside += r.x < str->X || r.x >= str->X + str->n * str->stride;
    }
    pt_cursor_close(&c);
    ck_assert_uint_gt(outside, 0);
}

/* Streamed rows in every way the pages arrive, in order and shuffled by windows or by chunks
 * of their own, prefetching or not: the rows of the file read into memory. */
START_TEST(streamed_rows_are_the_files)
{
    const char *ways[] = {"copied", "populated", "faults"};
    for (int f = 0; f < NFORMS; f++) {
        pt_dataset *mem = in_form(f, 2), *str = streamed(mem, 9);
        pt_rows src;
        open_rows(&src, str, table(PT_ISA_AUTO), NULL);
        ck_assert_uint_eq(pt_rows_window(&src), pt_dataset_streamed(str));
        ck_assert(!pt_rows_parallel_scoring(&src));
        for (size_t w = 0; w < 3; w++) {
            char what[96];
            snprintf(what, sizeof what, "%s streamed, %s", form_name[f], ways[w]);
            pt_window_force_arrival(str, ways[w]);
            const size_t win = pt_rows_window(&src);
            uint32_t *by_window = chunked_order(N, win, 5 + w), *by_chunk = chunked_order(N, 13, 7);
            for (int read = 0; read < 2; read++) {
                walk_rows(mem, &src, (pt_read)read, NULL, 0, 0, what);
                walk_rows(mem, &src, (pt_read)read, by_window, 0, PT_CURSOR_PREFETCH, what);
                walk_rows(mem, &src, (pt_read)read, by_chunk, 13, 0, what);
                walk_rows(mem, &src, (pt_read)read, by_chunk, 13, PT_CURSOR_PREFETCH, what);
            }
            for (int read = 0; read < 2; read++) {
                walk_streamed_blocks(mem, &src, (pt_read)read, 0, what);
                walk_streamed_blocks(mem, &src, (pt_read)read, PT_CURSOR_SPAN, what);
            }
            if (f == F_F32 && w == 0) assert_reads_copy(str, &src);
            free(by_window);
            free(by_chunk);
        }
        pt_rows_close(&src);
        pt_dataset_free(str);
        pt_dataset_free(mem);
    }
}
END_TEST

/* Class weights (per class), sample weights (per row) and both: each row's weight is its
 * class's times its own, as a row, as pt_rows_weight, and in a one-vs-rest view. */
START_TEST(weights_by_class_and_row)
{
    const float cw[NCLASS] = {0.5f, 2.0f, 1.5f, 3.25f};
    float sw[N];
    for (size_t i = 0; i < N; i++) sw[i] = (float)(1 + i % 7) / 3.0f;
    for (int f = 0; f < NFORMS; f++) {
        pt_dataset *ds = in_form(f, NCLASS);
        for (int kind = 0; kind < 3; kind++) {
            const pt_rows_opts o = {.class_weight = kind != 1 ? cw : NULL,
                                    .sample_weight = kind != 0 ? sw : NULL};
            pt_rows src, view;
            open_rows(&src, ds, table(PT_ISA_AUTO), &o);
            ck_assert(pt_rows_weighted(&src));
            float *y = malloc(N * sizeof *y);
            ck_assert(y);
            pt_rows_binary_view(&src, 2, y, &view);
            ck_assert(pt_rows_weighted(&view));
            pt_cursor c, v;
            open_cursor(&c, &src, NULL);
            open_cursor(&v, &view, NULL);
            for (size_t i = 0; i < N; i++) {
                const float want = (kind != 1 ? cw[ds->cls[i]] : 1.0f) * (kind != 0 ? sw[i] : 1.0f);
                pt_row r, rv;
                pt_cursor_row(&c, i, &r);
                pt_cursor_row(&v, i, &rv);
                ck_assert_msg(r.weight == want && rv.weight == want &&
                                  pt_rows_weight(&src, i) == want,
                              "%s: row %zu weighs %g, not %g", form_name[f], i, (double)r.weight,
                              (double)want);
            }
            pt_cursor_close(&c);
            pt_cursor_close(&v);
            pt_rows_close(&view);
            pt_rows_close(&src);
            free(y);
        }
        pt_rows src;
        open_rows(&src, ds, table(PT_ISA_AUTO), NULL);
        ck_assert(!pt_rows_weighted(&src));
        ck_assert(pt_rows_weight(&src, 5) == 1.0f);
        pt_rows_close(&src);
        pt_dataset_free(ds);
    }
}
END_TEST

/* One class against the rest: +1 for the class, -1 for the others, the rows unchanged (the
 * view's cursor hands its labels), two classes, and the source's rows untouched. */
START_TEST(binary_view_labels)
{
    for (int f = 0; f < NFORMS; f++) {
        pt_dataset *ds = in_form(f, NCLASS);
        pt_rows src, view;
        open_rows(&src, ds, table(PT_ISA_AUTO), NULL);
        ck_assert(src.y == NULL);
        ck_assert_uint_eq(src.nclass, NCLASS);
        for (size_t k = 0; k < NCLASS; k++) {
            float *y = malloc(N * sizeof *y);
            ck_assert(y);
            pt_rows_binary_view(&src, k, y, &view);
            ck_assert(view.y == y && view.nclass == 2 && !view.class_values && view.n == N);
            pt_cursor c;
            open_cursor(&c, &view, NULL);
            size_t pos = 0;
            for (size_t i = 0; i < N; i++) {
                pt_row r;
                pt_cursor_row(&c, i, &r);
                const float want = ds->cls[i] == (int32_t)k ? 1.0f : -1.0f;
                ck_assert_msg(y[i] == want && r.y == want, "%s class %zu row %zu: label %g",
                              form_name[f], k, i, (double)r.y);
                pos += want > 0;
                float x[64];
                direct_row(ds, i, x);
                ck_assert(memcmp(pt_cursor_dense(&c, &r, (float[64]){0}), x,
                                 ds->stride * sizeof(float)) == 0);
            }
            ck_assert_uint_gt(pos, 0);
            ck_assert_uint_lt(pos, N);
            pt_cursor_close(&c);
            pt_rows_close(&view); /* a view owns nothing: the source stays whole */
            free(y);
        }
        ck_assert(src.y == NULL && src.n == N);
        walk_rows(ds, &src, PT_READ_FLOAT, NULL, 0, 0, form_name[f]);
        pt_rows_close(&src);
        pt_dataset_free(ds);
    }
}
END_TEST

/* Shares of a .ptd file (pt_read_options.shard_index, as a distributed read takes them): each
 * share's rows are the whole file's rows [i n / P, (i + 1) n / P), and a share counted as one
 * of P (as pt_dataset_read_shard marks it) has P shares of n_all rows. */
START_TEST(shares_are_the_files_rows)
{
    const size_t P = 3;
    for (int f = 0; f < NFORMS; f++) {
        pt_dataset *whole = in_form(f, 2);
        const char *p = tu_path("share", ".ptd");
        ck_assert_int_eq(pt_dataset_write(whole, p, PT_FORMAT_PTD), PT_OK);
        for (size_t s = 0; s < P; s++) {
            pt_read_options o;
            pt_read_options_init(&o);
            o.shard_index = s;
            o.shard_count = P;
            pt_dataset *share = NULL;
            ck_assert_msg(pt_dataset_read(p, &o, &share) == PT_OK, "%s", pt_last_error());
            const size_t a = N * s / P, b = N * (s + 1) / P;
            ck_assert_uint_eq(share->n, b - a);
            share->shard_count = P; /* what the ranks' agreement records */
            share->n_total = N;
            pt_rows src;
            open_rows(&src, share, table(PT_ISA_AUTO), NULL);
            ck_assert_uint_eq(src.shares, P);
            ck_assert_uint_eq(src.n_all, N);
            ck_assert_uint_eq(src.n, b - a);
            pt_dataset *rows = NULL; /* the whole file's rows [a, b) */
            ck_assert_int_eq(pt_dataset_slice(whole, a, b - a, &rows), PT_OK);
            for (int read = 0; read < 2; read++) {
                walk_rows(rows, &src, (pt_read)read, NULL, 0, 0, form_name[f]);
                walk_streamed_blocks(rows, &src, (pt_read)read, PT_CURSOR_SPAN, form_name[f]);
            }
            pt_rows_close(&src);
            pt_dataset_free(rows);
            pt_dataset_free(share);
        }
        unlink(p);
        pt_dataset_free(whole);
    }
}
END_TEST

/* The stored kernels on compact rows (bf16, u8 of divisors per feature and of one), on every
 * ISA the machine runs: the dot, the axpy and the plain pass's step_rows each equal the
 * float32 kernels on the widened rows, bit for bit. */
static void check_stored_kernels(const pt_dataset *ds, pt_isa isa, const char *what)
{
    const pt_kernels *k = table(isa);
    pt_rows src;
    open_rows(&src, ds, k, NULL);
    const size_t len = src.len;
    float w[64], w2[64], y1[64], y2[64], buf[64], x[64];
    for (size_t j = 0; j < len; j++) w[j] = j < D ? (float)((int)(j % 9) - 4) / 8.0f : 0.0f;
    pt_cursor c, f;
    open_cursor(&c, &src, &(pt_cursor_opts){.read = PT_READ_STORED});
    open_cursor(&f, &src, NULL);
    for (size_t i = 0; i < N; i += 17) {
        pt_row r, rf;
        pt_cursor_row(&c, i, &r);
        pt_cursor_row(&f, i, &rf);
        memcpy(x, rf.x, len * sizeof *x);
        const float a = pt_stored_dot(&src, w, r.stored, buf), b = k->dot(w, x, len);
        ck_assert_msg(memcmp(&a, &b, sizeof a) == 0, "%s: dot of row %zu: %a vs %a", what, i,
                      (double)a, (double)b);
        memcpy(y1, w, sizeof w);
        memcpy(y2, w, sizeof w);
        pt_stored_axpy(&src, -0.75f, r.stored, y1, buf);
        k->axpy(-0.75f, x, y2, len);
        ck_assert_msg(memcmp(y1, y2, len * sizeof *y1) == 0, "%s: axpy of row %zu", what, i);
    }
    pt_cursor_close(&f);
    /* the plain pass over blocks of 50 stored rows against step_rows on the widened rows */
    float *wide = malloc(N * len * sizeof *wide);
    ck_assert(wide);
    for (size_t i = 0; i < N; i++) direct_row(ds, i, wide + i * len);
    memcpy(w2, w, sizeof w);
    float b1 = 0.0f, b2 = 0.0f;
    size_t n1 = 0, n2 = 0;
    for (size_t t = 0; t < N;) {
        pt_block blk;
        pt_cursor_block(&c, t, 50, &blk);
        n1 += pt_stored_step_rows(&src, &blk, w, &b1, 0.1f, 0.5f, 1.0f, buf);
        n2 += k->step_rows(w2, &b2, wide + t * len, len, ds->y + t, blk.rows, len, 0.1f, 0.5f,
                           1.0f);
        t += blk.rows;
    }
    ck_assert_uint_gt(n1, 0);
    ck_assert_msg(n1 == n2 && b1 == b2 && memcmp(w, w2, len * sizeof *w) == 0,
                  "%s: step_rows: %zu updates vs %zu", what, n1, n2);
    free(wide);
    pt_cursor_close(&c);
    pt_rows_close(&src);
}

START_TEST(stored_kernels_are_the_float_kernels)
{
    const pt_isa isas[] = {PT_ISA_SCALAR, PT_ISA_AVX2, PT_ISA_AVX512, PT_ISA_NEON};
    const int forms[] = {F_BF16, F_U8, F_U8_ONE};
    size_t ran = 0;
    for (size_t f = 0; f < 3; f++) {
        pt_dataset *ds = in_form(forms[f], 2);
        for (size_t a = 0; a < 4; a++) {
            const pt_kernels *k;
            if (pt_kernels_get(isas[a], &k) != PT_OK) continue; /* not this machine's */
            char what[64];
            snprintf(what, sizeof what, "%s on %s", form_name[forms[f]], k->name);
            check_stored_kernels(ds, isas[a], what);
            ran++;
        }
        pt_dataset_free(ds);
    }
    ck_assert_uint_ge(ran, 3); /* the scalar table at least, for each form */
}
END_TEST

/* What a consumer may need: dense rows (CSR refused with pt_require_dense's text), a float32
 * copy of compact rows (within its budget: refused over it, naming the reader), every row at
 * once (a streamed source refused). */
START_TEST(needs_refused_or_met)
{
    const pt_kernels *k = table(PT_ISA_AUTO);
    pt_rows src;
    pt_dataset *csr = in_form(F_CSR, 2);
    ck_assert_int_eq(pt_rows_open(&src, csr, k, &(pt_rows_opts){.need = PT_NEED_DENSE,
                                                                .what = "scaling"}),
                     PT_ERR_UNSUPPORTED);
    HAS(pt_last_error(), "scaling reads the dense layout only; this dataset is sparse");
    open_rows(&src, csr, k, &(pt_rows_opts){.need = PT_NEED_FLOAT_COPY | PT_NEED_WHOLE});
    ck_assert(!pt_rows_copied(&src)); /* CSR values are float32 already */
    ck_assert_int_eq(pt_rows_refuse(&src, "a row map"), PT_ERR_UNSUPPORTED);
    HAS(pt_last_error(), "a row map reads the dense layout only");
    pt_rows_close(&src);
    for (int f = F_BF16; f <= F_U8_ONE; f++) {
        pt_dataset *ds = in_form(f, 2);
        ck_assert_int_eq(pt_rows_open(&src, ds, k, &(pt_rows_opts){.need = PT_NEED_FLOAT_COPY,
                                                                   .budget = 4096,
                                                                   .what = "the kernel path"}),
                         PT_ERR_LIMIT);
        HAS(pt_last_error(), "the kernel path reads float32 rows: a float32 copy");
        open_rows(&src, ds, k, &(pt_rows_opts){.need = PT_NEED_FLOAT_COPY, .what = "the kernel path"});
        ck_assert(pt_rows_copied(&src) && pt_rows_elem_bytes(&src) == 4);
        ck_assert(pt_rows_parallel_scoring(&src));
        ck_assert_int_eq(PT_ROWS_PICK(&src, PT_READ_STORED, 1, 2, 3), 1); /* float32 now */
        walk_rows(ds, &src, PT_READ_FLOAT, NULL, 0, 0, "float32 copy");
        pt_cursor c;
        open_cursor(&c, &src, &(pt_cursor_opts){.read = PT_READ_STORED});
        pt_row r;
        pt_cursor_row(&c, 3, &r);
        ck_assert(r.x && !r.stored); /* nothing compact left to read as stored */
        pt_cursor_close(&c);
        pt_block all;
        pt_rows_span(&src, 0, N, &all);
        ck_assert(all.X && !all.stored);
        pt_rows_close(&src);
        ck_assert(!pt_rows_copied(&src)); /* closed: zeroed */
        pt_dataset_free(ds);
    }
    pt_dataset *mem = in_form(F_F32, 2), *str = streamed(mem, 9);
    ck_assert_int_eq(pt_rows_open(&src, str, k, &(pt_rows_opts){.need = PT_NEED_WHOLE,
                                                                .what = "the kernel path"}),
                     PT_ERR_LIMIT);
    HAS(pt_last_error(), "the kernel path needs every row in memory at once");
    open_rows(&src, mem, k, &(pt_rows_opts){.need = PT_NEED_WHOLE | PT_NEED_DENSE});
    pt_rows_close(&src);
    pt_dataset_free(str);
    pt_dataset_free(mem);
    pt_dataset_free(csr);
}
END_TEST

/* The capabilities, form by form, in memory and streamed. */
START_TEST(capabilities_by_form)
{
    const size_t es[NFORMS] = {4, 2, 1, 1, 4};
    for (int f = 0; f < NFORMS; f++) {
        pt_dataset *mem = in_form(f, 2), *str = streamed(mem, 9);
        pt_rows m, s;
        open_rows(&m, mem, table(PT_ISA_AUTO), NULL);
        open_rows(&s, str, table(PT_ISA_AUTO), NULL);
        ck_assert_uint_eq(pt_rows_window(&m), 0);
        ck_assert_uint_eq(pt_rows_window(&s), pt_dataset_streamed(str));
        ck_assert_uint_eq(pt_rows_elem_bytes(&m), es[f]);
        ck_assert(pt_rows_parallel_scoring(&m) == (f == F_F32 || f == F_CSR));
        ck_assert(!pt_rows_parallel_scoring(&s) && !pt_rows_copied(&m));
        const size_t entries = f == F_CSR ? (size_t)mem->rowptr[N] : 0;
        const size_t stored = f == F_CSR ? pt_sparse_bytes(N, entries) : N * mem->stride * es[f];
        ck_assert_uint_eq(pt_rows_stored_bytes(&m), stored);
        ck_assert_uint_eq(pt_rows_stored_bytes(&s), stored);
        ck_assert_uint_eq(pt_rows_held_bytes(&m, 10), f == F_CSR ? 0 : 10 * mem->stride * 4);
        ck_assert_uint_eq(pt_rows_held_bytes(&m, SIZE_MAX / 2), f == F_CSR ? 0 : SIZE_MAX);
        ck_assert_uint_eq(pt_rows_row_bytes(&m), f == F_CSR ? (mem->nnz * 8 + N * 8) / N
                                                           : mem->stride * es[f]);
        pt_rows_close(&s);
        pt_rows_close(&m);
        pt_dataset_free(str);
        pt_dataset_free(mem);
    }
}
END_TEST

/* A cursor's range: rows [from, to) only, blocks clipped to it; dense reads of every form. */
START_TEST(cursor_range_and_dense_rows)
{
    for (int f = 0; f < NFORMS; f++) {
        pt_dataset *ds = in_form(f, 2);
        pt_rows src;
        open_rows(&src, ds, table(PT_ISA_AUTO), NULL);
        for (int read = 0; read < 2; read++) {
            pt_cursor c;
            open_cursor(&c, &src, &(pt_cursor_opts){.read = (pt_read)read, .from = 40, .to = 77,
                                                    .block_rows = 64});
            ck_assert(c.from == 40 && c.to == 77);
            pt_block b;
            pt_cursor_block(&c, 70, 64, &b);
            ck_assert_uint_eq(b.rows, 7);
            for (size_t r = 0; r < b.rows; r++) assert_block_row(ds, (pt_read)read, &b, r, "range");
            for (size_t t = 40; t < 77; t++) {
                pt_row r;
                pt_cursor_row(&c, t, &r);
                float want[64], buf[64];
                direct_row(ds, t, want);
                ck_assert_msg(memcmp(pt_cursor_dense(&c, &r, buf), want,
                                     ds->stride * sizeof(float)) == 0,
                              "%s: dense row %zu", form_name[f], t);
            }
            pt_cursor_drop(&c); /* still open: the next row reads as before */
            pt_row r;
            pt_cursor_row(&c, 41, &r);
            assert_row(ds, &c, &r, 41, "after a drop");
            pt_cursor_close(&c);
        }
        pt_rows_close(&src);
        pt_dataset_free(ds);
    }
}
END_TEST

/* A block of a streamed source (read STORED) as a source of its own: its rows, labels, class
 * and row weights and CSR non-zeros; nothing streamed, nothing shared. */
START_TEST(block_views)
{
    const float cw[2] = {0.25f, 4.0f};
    float sw[N];
    for (size_t i = 0; i < N; i++) sw[i] = (float)(i + 1);
    for (int f = 0; f < NFORMS; f++) {
        pt_dataset *mem = in_form(f, 2), *str = streamed(mem, 9);
        pt_rows src, view;
        open_rows(&src, str, table(PT_ISA_AUTO),
                  &(pt_rows_opts){.class_weight = cw, .sample_weight = sw});
        const size_t win = pt_rows_window(&src);
        for (int read = 0; read < 2; read++) {
            pt_cursor c;
            open_cursor(&c, &src, &(pt_cursor_opts){.read = (pt_read)read, .window_rows = win,
                                                    .block_rows = win});
            for (size_t i0 = 0; i0 < N; i0 += win) {
                pt_block b;
                pt_cursor_block(&c, i0, win, &b);
                ck_assert_uint_eq(b.rows, N - i0 < win ? N - i0 : win);
                pt_rows_block_view(&src, &b, &view);
                ck_assert(view.n == b.rows && view.shares == 1 && pt_rows_window(&view) == 0);
                /* a compact block read FLOAT is viewed as the float32 rows it was widened to */
                const size_t es = f == F_CSR ? 0 : read == PT_READ_FLOAT ? 4
                                                   : pt_elem_bytes(mem->dtype);
                if (f != F_CSR)
                    ck_assert_uint_eq(pt_rows_stored_bytes(&view), b.rows * mem->stride * es);
                pt_dataset *part = NULL;
                ck_assert_int_eq(pt_dataset_slice(mem, i0, b.rows, &part), PT_OK);
                walk_rows_weighed(part, &view, (pt_read)read, NULL, 0, 0, cw, sw + i0,
                                  "block view");
                if (f == F_CSR) ck_assert_uint_eq(view.nnz, part->rowptr[b.rows]);
                pt_rows_close(&view);
                pt_dataset_free(part);
            }
            pt_cursor_close(&c);
        }
        pt_rows_close(&src);
        pt_dataset_free(str);
        pt_dataset_free(mem);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("rows");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, rows_are_the_datasets);
    tcase_add_test(tc, picks_by_form);
    tcase_add_test(tc, blocks_are_the_datasets);
    tcase_add_test(tc, streamed_rows_are_the_files);
    tcase_add_test(tc, weights_by_class_and_row);
    tcase_add_test(tc, binary_view_labels);
    tcase_add_test(tc, shares_are_the_files_rows);
    tcase_add_test(tc, stored_kernels_are_the_float_kernels);
    tcase_add_test(tc, needs_refused_or_met);
    tcase_add_test(tc, capabilities_by_form);
    tcase_add_test(tc, cursor_range_and_dense_rows);
    tcase_add_test(tc, block_views);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tu_run_suite(suite()); }
