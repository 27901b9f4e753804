/*
 * Datasets: the dense and sparse layouts (struct pt_dataset), their allocation and labels, and
 * the readers, writers and generators that fill them. Not installed.
 *
 * The layers above data/ read rows through data/rows.h only: the window walk (pt_window_*),
 * pt_csr_row, pt_compact_row, pt_elem_bytes, pt_row_f32, pt_rows_f32, pt_dataset_as_f32 and
 * pt_require_dense below are data/'s own (scripts/check-layers fails a file above that names
 * them, or PT_LAYOUT_* or PT_DTYPE_*).
 */
#ifndef PT_DATA_H
#define PT_DATA_H

#include <math.h>

#include "common/common.h"
#include "kernels/kernels.h"

/* The window of a streamed dataset (window.c). */
typedef struct pt_window pt_window;

struct pt_dataset {
    size_t n, d, stride;  /* stride: floats of a dense row (and of a weight vector), both layouts */
    pt_layout layout;
    float *X;            /* dense: n * stride floats, 64-byte aligned, zero padding past d; NULL
                          * for sparse */
    /* sparse (CSR, see pt_layout in ptron.h): n + 1 offsets, then nnz columns and values */
    uint64_t *rowptr;
    uint32_t *col;
    float *val;
    int32_t *cls;        /* n class indices */
    float *y;            /* n floats +1/-1 when nclass == 2, else NULL */
    size_t nclass;
    double *class_values; /* nclass, ascending */
    char **class_names;   /* text labels (nclass, strcmp order; class_values are 0..K-1) or NULL */
    size_t nnz;
    /* generator truth (kind[0] != 0 when present) */
    char kind[16];
    double *wstar;       /* d doubles, unit norm, or NULL */
    double truth_R, truth_gamma;
    /* storage: the matrix (X, or rowptr/col/val) either owned (pt_alloc), inside a read-only
     * mapping, or the caller's (pt_dataset_wrap, pt_dataset_wrap_csr) */
    bool X_owned;
    void *map;
    size_t map_len;
    uint64_t *shard_rowptr; /* a mapped sparse share's row offsets (owned), or NULL */
    /* a share of a distributed run (pt_dataset_read_shard): shard_count ranks (0: not a
     * share), n_total rows in all */
    size_t shard_count, n_total;
    /* every rank of a distributed run holds it whole (pt_dataset_read_replicated) */
    bool replicated;
    /* compact storage (see pt_dtype in ptron.h; dense only): X is NULL and Xc holds n rows of
     * stride elements of pt_dtype_size(dtype) bytes, zero past d, owned or mapped as X would
     * be; for u8, the divisors m_j and their reciprocals r_j (stride floats each, 1 past d,
     * always owned; rh + rl is 1 / m_j to about 48 bits, see pt_u8_decode), and whether m_j is one
 * value for every feature */
    pt_dtype dtype;
    void *Xc;
    float *u8_m, *u8_rh, *u8_rl;
    bool u8_single;
    pt_window *win; /* streamed (the matrix inside map, read window by window), else NULL */
    pt_guard *guard; /* map's guard against the file shrinking (guard.c), or NULL; views share
                      * it (only the dataset that owns map releases it) */
};

/* --------------------------------------------- streamed datasets (window.c) */

/* A window of `rows` rows of about row_bytes each over the file open as fd (taken: closed by
 * pt_window_free; -1: none, the pages then come in by advice only), mapped at map (map_len
 * bytes, the dataset's mapping, which the window outlives never); NULL + error on failure. */
pt_window *pt_window_new(const void *map, size_t map_len, size_t rows, size_t row_bytes, int fd);
void pt_window_free(pt_window *w);
size_t pt_window_rows(const pt_window *w);
/* Tests: the way ds's pages arrive from now on, whatever the probe found ("copied" where no
 * copy can be made means "populated"). */
void pt_window_force_arrival(const pt_dataset *ds, const char *how);
/* Tests: returns once the reader thread has done every job queued (the drops included). */
void pt_window_settle(const pt_dataset *ds);
/* Advice on the pages of [p, p + bytes) inside ds's mapping (nothing when ds is not streamed):
 * fetch reads them in ahead of use, drop releases them (rounded outward to whole pages: a
 * dropped page is read back from the file on its next use, so this is always safe). */
void pt_window_fetch(const pt_dataset *ds, const void *p, size_t bytes);
void pt_window_drop(const pt_dataset *ds, const void *p, size_t bytes);
/* The same for rows [r0, r0 + rows) of ds, in either layout; thread-safe. */
void pt_window_enter(const pt_dataset *ds, size_t r0, size_t rows);
void pt_window_leave(const pt_dataset *ds, size_t r0, size_t rows);
/* A walk over a streamed dataset's rows in windows (one per walker, zeroed at the start, or
 * with rows set: windows of that many rows instead of the dataset's; with from, to set: rows
 * [from, to) only, the windows clipped to them, so walkers of neighbouring ranges in other
 * threads do not drop each other's rows): pt_window_at before
 * reading row i moves the window to i's when i is outside it (dropping the last one, fetching
 * the new one); pt_window_end drops the last one. The walker visits the rows of a window
 * together (in order, or in an order from pt_rng_shuffle_chunks by the window's rows). */
typedef struct pt_window_pos {
    size_t lo, hi, rows, from, to;
    int buf;           /* the window's copy (window.c): its buffer + 1, or 0 */
    const float *copy; /* dense rows [lo, hi) copied, or NULL (they are read in the mapping) */
    int next_buf;      /* the next window's, being read ahead: its buffer + 1, or 0 */
    size_t next_lo, next_hi;
    bool in_place;     /* in file order: pieces read in place, not windows read ahead */
    bool ahead;        /* rows [next_lo, next_hi) are being brought in on the mapping */
} pt_window_pos;
/* Move to row i's window; next: a row of the window the walker takes after it (SIZE_MAX:
 * none), which is read ahead meanwhile. pt_window_move reads ahead the rows after i's. */
void pt_window_move_to(const pt_dataset *ds, pt_window_pos *at, size_t i, size_t next);
void pt_window_move(const pt_dataset *ds, pt_window_pos *at, size_t i);
static inline void pt_window_at(const pt_dataset *ds, pt_window_pos *at, size_t i)
{
    if (ds->win && (i < at->lo || i >= at->hi)) pt_window_move(ds, at, i);
}
/* pt_window_at for the walk of a chunked order (pt_rng_shuffle_chunks, by the windows' rows):
 * sample t (row order[t]) of n; on entering a window, the next chunk's is read ahead. */
static inline void pt_window_at_order(const pt_dataset *ds, pt_window_pos *at,
                                      const uint32_t *order, size_t t, size_t n)
{
    size_t i = order[t];
    if (!ds->win || (i >= at->lo && i < at->hi)) return;
    /* a chunk's rows fill the positions from t on; the next chunk starts after them */
    const size_t rows = at->rows ? at->rows : pt_dataset_streamed(ds);
    size_t lo = i - i % rows, end = ds->n - lo < rows ? ds->n : lo + rows;
    size_t after = t + (end - lo);
    pt_window_move_to(ds, at, i, after < n ? order[after] : SIZE_MAX);
}
void pt_window_end(const pt_dataset *ds, pt_window_pos *at);
/* Dense row i, after pt_window_at(ds, at, i): in the window's copy, or in the matrix. The rows
 * of a window are contiguous there too, a stride apart. */
static inline const float *pt_window_row(const pt_dataset *ds, const pt_window_pos *at, size_t i)
{
    return at->copy ? at->copy + (i - at->lo) * ds->stride : ds->X + i * ds->stride;
}

/* Allocate an n x d dataset with zeroed matrix and labels; NULL + error on failure. */
pt_dataset *pt_dataset_alloc(size_t n, size_t d);
/* The same with the matrix left unwritten, for readers that write every row (padding too)
 * themselves, in parallel: first touch of fresh pages is slow and better spread over threads. */
pt_dataset *pt_dataset_alloc_uninit(size_t n, size_t d);
/* An n x d sparse dataset with room for nnz non-zeros (rowptr zeroed, col and val unwritten,
 * owned) and zeroed labels; NULL + error on failure. */
pt_dataset *pt_dataset_alloc_sparse(size_t n, size_t d, size_t nnz);
/* Bytes of the CSR arrays of n rows and nnz non-zeros, or SIZE_MAX on overflow. */
size_t pt_sparse_bytes(size_t n, size_t nnz);
/* Check CSR arrays (see pt_layout): the first offset out of order, column not increasing or
 * >= d, or non-finite value is a PT_ERR_INVALID naming row and entry, prefixed by what. */
pt_status pt_csr_check(size_t n, size_t d, const uint64_t *rowptr, const uint32_t *col,
                       const float *val, const char *what);
/* pt_csr_check's checks of rows [r0, r1) only (offsets not decreasing, columns, values). */
pt_status pt_csr_check_rows(size_t r0, size_t r1, size_t d, const uint64_t *rowptr,
                            const uint32_t *col, const float *val, const char *what);
/* Row i of a sparse dataset: its columns and values, and the count. */
static inline size_t pt_csr_row(const pt_dataset *ds, size_t i, const uint32_t **col,
                                const float **val)
{
    uint64_t a = ds->rowptr[i];
    *col = ds->col + a;
    *val = ds->val + a;
    return (size_t)(ds->rowptr[i + 1] - a);
}
/* PT_OK for a dense dataset; for a sparse one PT_ERR_UNSUPPORTED saying that `what` reads
 * dense data only (the entry points whose code has no sparse form yet call it). */
pt_status pt_require_dense(const pt_dataset *ds, const char *what);
size_t pt_stride_for(size_t d);
/* Bytes of the padded matrix for n x d, or SIZE_MAX on overflow. */
size_t pt_dense_bytes(size_t n, size_t d);
/* Refuse a dense n x d load above budget with the bytes it needs. */
pt_status pt_check_dense_budget(const char *path, size_t n, size_t d, size_t budget);
/* Refuse a sparse load of n rows, d features and nnz non-zeros above budget (or with d beyond
 * 32-bit columns) with the bytes it needs. */
pt_status pt_check_sparse_budget(const char *path, size_t n, size_t d, size_t nnz, size_t budget);
/* The layout to read n x d with nnz non-zeros into: requested, or pt_layout_choose's for
 * PT_LAYOUT_AUTO; refused (naming path, the bytes needed and the option) when it does not fit
 * budget (0: the default). */
pt_status pt_layout_resolve(const char *path, pt_layout requested, size_t n, size_t d, size_t nnz,
                            size_t budget, pt_layout *out);
/* Build cls, class_values and y from raw per-row label values. */
pt_status pt_dataset_set_class_table(pt_dataset *ds, const double *raw);
/* Text labels: build cls, class_values (0..K-1), class_names (sorted by strcmp) and y from
 * each row's label text (n strings). */
pt_status pt_dataset_set_class_names(pt_dataset *ds, char *const *text);
/* Copy K names (NULL in, NULL out). */
char **pt_names_dup(char *const *names, size_t K);
void pt_names_free(char **names, size_t K);
/* Copy into dst (n rows, matrix filled) the class table, the classes and +1/-1 labels of
 * src's rows [start, start + dst->n) and src's generator truth. */
pt_status pt_dataset_copy_meta(pt_dataset *dst, const pt_dataset *src, size_t start);
/* Scan the matrix for non-zeros (and non-finite values: an error naming row and column). */
pt_status pt_dataset_count_nnz(pt_dataset *ds, const char *path);

/* Compact storage (compact.c). An n x d dense dataset of type t with its matrix zeroed, u8's
 * divisors all 1; NULL + error on failure. */
pt_dataset *pt_dataset_alloc_compact(size_t n, size_t d, pt_dtype t);
/* Bytes of an n x d dense matrix of type t, or SIZE_MAX on overflow. */
size_t pt_dtype_bytes(size_t n, size_t d, pt_dtype t);
/* Allocate a u8 dataset's divisor arrays (stride floats each). */
pt_status pt_u8_alloc_divisors(pt_dataset *ds);
/* Set a u8 dataset's divisors from m (d values, each finite and > 0; the padding gets 1) and
 * compute their reciprocals. */
void pt_u8_set_divisors(pt_dataset *ds, const float *m, bool single);
/* The float32 x = q / m of a u8 q as every kernel computes it (kernels.h): with 1 / m split in
 * rh = fl(1 / m) and rl = fl(1 / m - rh), x = fma(q, rh, q rl), one rounding of a value within
 * about 2^-48 of q / m: the correctly rounded quotient wherever q / m is not that close to a
 * rounding boundary, which for an integer m < 2^14 it never is (checked: every q < 256 and m <
 * 4096, and 25.6 million q and real m). */
static inline float pt_u8_decode(uint8_t q, float rh, float rl)
{
    float qf = (float)q;
    return fmaf(qf, rh, qf * rl);
}
/* Bytes of one element of type t (pt_dtype_size, inline for the files that dataset.c calls:
 * window.c calling dataset.c would make a cycle). */
static inline size_t pt_elem_bytes(pt_dtype t)
{
    return t == PT_DTYPE_U8 ? 1 : t == PT_DTYPE_BF16 ? 2 : 4;
}
/* Row i of a compact dataset (its first byte). */
static inline const void *pt_compact_row(const pt_dataset *ds, size_t i)
{
    return (const unsigned char *)ds->Xc + i * ds->stride * pt_elem_bytes(ds->dtype);
}
/* Row i of a dense dataset of any type as float32 into out (stride floats); returns out. */
const float *pt_compact_widen_row(const pt_dataset *ds, size_t i, float *out);
/* The non-zero elements of a compact matrix (bf16's -0 is a zero). */
size_t pt_compact_nnz(const pt_dataset *ds);
/* Row i of a dense dataset as float32: the row itself, or for compact storage the row widened
 * into buf (stride floats) by the kernel table's widening (the same floats on every ISA). */
static inline const float *pt_row_f32(const pt_kernels *k, const pt_dataset *ds, size_t i,
                                      float *buf)
{
    if (ds->dtype == PT_DTYPE_F32) return ds->X + i * ds->stride;
    if (ds->dtype == PT_DTYPE_BF16)
        k->compact->widen_bf16((const uint16_t *)pt_compact_row(ds, i), buf, ds->stride);
    else
        k->compact->widen_u8((const uint8_t *)pt_compact_row(ds, i), ds->u8_rh, ds->u8_rl, buf,
                             ds->stride);
    return buf;
}
/* Rows [i0, i0 + rows) of a dense dataset as float32 rows a stride apart: in the matrix, or
 * for compact storage widened into buf (rows x stride floats) as pt_row_f32 widens them. */
static inline const float *pt_rows_f32(const pt_kernels *k, const pt_dataset *ds, size_t i0,
                                       size_t rows, float *buf)
{
    if (ds->dtype == PT_DTYPE_F32) return ds->X + i0 * ds->stride;
    for (size_t i = 0; i < rows; i++) pt_row_f32(k, ds, i0 + i, buf + i * ds->stride);
    return buf;
}
/* A float32 dataset to read in place of ds: ds itself when it is float32 (or sparse), else a
 * widened copy in *tmp (to be freed by the caller, NULL when none was made), budgeted against
 * budget (0: the default) with a message naming `what` and --mem-mb. */
pt_status pt_dataset_as_f32(const pt_dataset *ds, size_t budget, const char *what,
                            pt_dataset **tmp, const pt_dataset **use);

/* The sparse generator (gen_sparse.c): PT_GEN_SPARSE of pt_generate, parameters checked
 * except its own (d, nnz). */
pt_status pt_gen_sparse(const pt_gen_params *p, pt_dataset **out);

/* The name the readers are given for standard input (pt_dataset_read's path "-"): compared
 * by address in pt_text_open, and shown in messages ("standard input:3: ..."). */
extern const char pt_stdin_path[];

/* Readers and writers (io_libsvm.c, io_csv.c, io_ptd.c). Writers write to an open FILE. */
pt_status pt_read_libsvm(const char *path, const pt_read_options *o, pt_dataset **out);
pt_status pt_read_csv(const char *path, const pt_read_options *o, pt_dataset **out);
pt_status pt_read_ptd(const char *path, const pt_read_options *o, pt_dataset **out);
/* Writers: fill an open stream (ctx is the const pt_dataset *); pt_dataset_write wraps them
 * in pt_write_atomic. Numbers as %.9g under the C locale, so floats round-trip exactly. */
pt_status pt_write_libsvm(FILE *f, const void *ds);
pt_status pt_write_csv(FILE *f, const void *ds);
pt_status pt_write_ptd(FILE *f, const void *ds);
/* A .ptd file written row by row (io_ptd.c) for the bounded convert: begin with the sizes
 * (sparse: the exact entries), hand the rows in order (dense: n rows of the stride, padding
 * zero; sparse: each row's end offset, counted from the file's first entry, and its entries),
 * then end with the class table, the class indices and the non-zeros. f must be seekable. */
typedef struct pt_ptd_writer pt_ptd_writer;
pt_status pt_ptd_writer_begin(FILE *f, size_t n, size_t d, bool sparse, size_t entries,
                              size_t nclass, pt_ptd_writer **out);
pt_status pt_ptd_writer_dense(pt_ptd_writer *w, const float *X, size_t rows);
pt_status pt_ptd_writer_sparse(pt_ptd_writer *w, const uint64_t *ends, size_t rows,
                               const uint32_t *col, const float *val, size_t ents);
pt_status pt_ptd_writer_end(pt_ptd_writer *w, const double *classes, const int32_t *cls,
                            size_t nnz);
void pt_ptd_writer_free(pt_ptd_writer *w);
/* LIBSVM text to a .ptd file (io_libsvm.c): in memory when the dataset fits
 * o->mem_budget_bytes, else in windows of rows written straight to the file. */
pt_status pt_convert_libsvm_ptd(const char *path, const pt_read_options *o, const char *out);
/* CSV text to a .ptd file (io_csv.c): a mapped file whose dataset exceeds o->mem_budget_bytes
 * is written to out in windows of rows (two more passes over the text, the mapped pages
 * released behind them); otherwise the rows are read into *whole (dense, as pt_read_csv reads
 * them) for the caller to write, and out is not touched. */
pt_status pt_convert_csv_ptd(const char *path, const pt_read_options *o, const char *out,
                             pt_dataset **whole);
/* A view of a multiclass dataset as the binary problem "class k against the rest": shares X,
 * owns nothing; y must hold n floats (+1 for class k). */
void pt_dataset_binary_view(const pt_dataset *ds, size_t k, float *y, pt_dataset *view);

#endif /* PT_DATA_H */
