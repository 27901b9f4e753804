/* Datasets: allocation in either layout, labels and class table, accessors, info, slices (the
 * sparse layout's checks, construction and conversion are in dataset_csr.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "data.h"

size_t pt_stride_for(size_t d) { return pt_round_up(d ? d : 1, PT_ALIGN_FLOATS); }

size_t pt_dense_bytes(size_t n, size_t d)
{
    size_t cells, bytes;
    if (!pt_mul_ok(n, pt_stride_for(d), &cells) || !pt_mul_ok(cells, sizeof(float), &bytes))
        return SIZE_MAX;
    return bytes;
}

pt_status pt_check_dense_budget(const char *path, size_t n, size_t d, size_t budget)
{
    size_t bytes = pt_dense_bytes(n, d);
    if (bytes > budget)
        return pt_fail(PT_ERR_LIMIT,
                       "%s: %zu rows x %zu features need %.1f MiB dense (padded to %zu), over the "
                       "memory budget of %.1f MiB; raise pt_read_options.mem_budget_bytes or "
                       "reduce the data",
                       path, n, d, bytes / 1048576.0, pt_stride_for(d), budget / 1048576.0);
    return PT_OK;
}

/* A zeroed dataset struct of n rows and d features (the stride set), owning nothing yet; NULL
 * and the error when it cannot be allocated. The allocators below fill in the matrix. */
static pt_dataset *dataset_header(size_t n, size_t d)
{
    pt_dataset *ds = calloc(1, sizeof *ds);
    if (!ds) {
        pt_fail(PT_ERR_NOMEM, "cannot allocate dataset header");
        return NULL;
    }
    ds->n = n;
    ds->d = d;
    ds->stride = pt_stride_for(d);
    return ds;
}

pt_dataset *pt_dataset_alloc(size_t n, size_t d)
{
    pt_dataset *ds = pt_dataset_alloc_uninit(n, d);
    if (ds) memset(ds->X, 0, pt_dense_bytes(n, d));
    return ds;
}

pt_dataset *pt_dataset_alloc_uninit(size_t n, size_t d)
{
    size_t bytes = pt_dense_bytes(n, d);
    if (bytes == SIZE_MAX) {
        pt_fail(PT_ERR_NOMEM, "dataset of %zu x %zu: size overflows", n, d);
        return NULL;
    }
    pt_dataset *ds = dataset_header(n, d);
    if (!ds) return NULL;
    ds->X = pt_alloc(bytes, "feature matrix");
    ds->X_owned = true;
    ds->cls = pt_calloc(n * sizeof(int32_t), "class indices");
    if (!ds->X || !ds->cls) {
        pt_dataset_free(ds);
        return NULL;
    }
    return ds;
}

size_t pt_sparse_bytes(size_t n, size_t nnz)
{
    size_t offsets, entries;
    if (n == SIZE_MAX || !pt_mul_ok(n + 1, sizeof(uint64_t), &offsets) ||
        !pt_mul_ok(nnz, sizeof(uint32_t) + sizeof(float), &entries) || offsets > SIZE_MAX - entries)
        return SIZE_MAX;
    return offsets + entries;
}

pt_dataset *pt_dataset_alloc_sparse(size_t n, size_t d, size_t nnz)
{
    if (pt_sparse_bytes(n, nnz) == SIZE_MAX) {
        pt_fail(PT_ERR_NOMEM, "sparse dataset of %zu rows and %zu non-zeros: size overflows", n, nnz);
        return NULL;
    }
    pt_dataset *ds = dataset_header(n, d);
    if (!ds) return NULL;
    ds->layout = PT_LAYOUT_SPARSE;
    ds->X_owned = true;
    ds->rowptr = pt_calloc((n + 1) * sizeof(uint64_t), "sparse row offsets");
    ds->col = pt_alloc((nnz ? nnz : 1) * sizeof(uint32_t), "sparse column indices");
    ds->val = pt_alloc((nnz ? nnz : 1) * sizeof(float), "sparse values");
    ds->cls = pt_calloc((n ? n : 1) * sizeof(int32_t), "class indices");
    if (!ds->rowptr || !ds->col || !ds->val || !ds->cls) {
        pt_dataset_free(ds);
        return NULL;
    }
    return ds;
}

pt_dataset *pt_dataset_create(size_t n, size_t d)
{
    pt_clear_error();
    return pt_dataset_alloc(n, d);
}

void pt_dataset_free(pt_dataset *ds)
{
    if (!ds) return;
    if (ds->X_owned) {
        pt_free(ds->X);
        pt_free(ds->rowptr);
        pt_free(ds->col);
        pt_free(ds->val);
        pt_free(ds->Xc);
    }
    pt_free(ds->u8_m);
    pt_free(ds->u8_rh);
    pt_free(ds->u8_rl);
    pt_window_free(ds->win); /* (its reader thread may be working on the mapping) */
    if (ds->map) pt_guard_release(ds->guard);
    if (ds->map) munmap(ds->map, ds->map_len);
    pt_free(ds->shard_rowptr);
    pt_free(ds->cls);
    pt_free(ds->y);
    pt_names_free(ds->class_names, ds->nclass);
    free(ds->class_values);
    free(ds->wstar);
    free(ds);
}

pt_status pt_dataset_intact(const pt_dataset *ds) { return pt_guard_check(ds->guard); }

size_t pt_dataset_n(const pt_dataset *ds) { return ds->n; }
size_t pt_dataset_n_total(const pt_dataset *ds) { return ds->shard_count ? ds->n_total : ds->n; }
size_t pt_dataset_d(const pt_dataset *ds) { return ds->d; }
size_t pt_dataset_stride(const pt_dataset *ds) { return ds->stride; }
/* NULL, saying why, for a sparse dataset: its rows are pt_dataset_csr's. */
static bool dense_rows(const pt_dataset *ds, const char *fn)
{
    if (ds->layout == PT_LAYOUT_DENSE && ds->dtype == PT_DTYPE_F32) return true;
    if (ds->layout == PT_LAYOUT_DENSE) {
        pt_fail(PT_ERR_INVALID, "%s: the dataset is stored as %s, not float32: make a float32 "
                "copy with pt_dataset_to_dtype", fn, pt_dtype_name(ds->dtype));
        return false;
    }
    pt_fail(PT_ERR_INVALID, "%s: the dataset is sparse (CSR): read its rows with pt_dataset_csr", fn);
    return false;
}

float *pt_dataset_row(pt_dataset *ds, size_t i)
{
    return dense_rows(ds, "pt_dataset_row") && ds->X_owned ? ds->X + i * ds->stride : NULL;
}

const float *pt_dataset_row_const(const pt_dataset *ds, size_t i)
{
    return dense_rows(ds, "pt_dataset_row_const") ? ds->X + i * ds->stride : NULL;
}
int32_t pt_dataset_class(const pt_dataset *ds, size_t i) { return ds->cls[i]; }
const int32_t *pt_dataset_classes(const pt_dataset *ds) { return ds->cls; }
size_t pt_dataset_nclass(const pt_dataset *ds) { return ds->nclass; }
double pt_dataset_class_value(const pt_dataset *ds, size_t k) { return ds->class_values[k]; }
double pt_dataset_label(const pt_dataset *ds, size_t i) { return ds->class_values[ds->cls[i]]; }
const float *pt_dataset_y(const pt_dataset *ds) { return ds->y; }

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Index of v in the sorted table (binary search); the value is known to be there. */
static int32_t class_index(const double *table, size_t k, double v)
{
    size_t lo = 0, hi = k;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (table[mid] <= v) lo = mid;
        else hi = mid;
    }
    return (int32_t)lo;
}

/* The +1/-1 labels of a two-class dataset (class 1 is +1); NULL for any other class count. */
static pt_status set_binary_y(pt_dataset *ds)
{
    pt_free(ds->y);
    ds->y = NULL;
    if (ds->nclass != 2) return PT_OK;
    if (!(ds->y = pt_alloc((ds->n ? ds->n : 1) * sizeof(float), "labels"))) return PT_ERR_NOMEM;
    for (size_t i = 0; i < ds->n; i++) ds->y[i] = ds->cls[i] == 1 ? 1.0f : -1.0f;
    return PT_OK;
}

pt_status pt_dataset_set_class_table(pt_dataset *ds, const double *raw)
{
    size_t n = ds->n;
    double *sorted = malloc((n ? n : 1) * sizeof *sorted);
    if (!sorted) return pt_fail(PT_ERR_NOMEM, "cannot allocate %zu labels", n);
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(raw[i])) {
            free(sorted);
            return pt_fail(PT_ERR_PARSE, "row %zu: label is not a finite number", i + 1);
        }
        sorted[i] = raw[i] == 0.0 ? 0.0 : raw[i]; /* -0 and +0 are one class */
    }
    qsort(sorted, n, sizeof *sorted, cmp_double);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (k == 0 || sorted[i] != sorted[k - 1]) sorted[k++] = sorted[i];
    double *table = realloc(sorted, (k ? k : 1) * sizeof *table);
    if (!table) table = sorted;
    pt_names_free(ds->class_names, ds->nclass);
    ds->class_names = NULL;
    free(ds->class_values);
    ds->class_values = table;
    ds->nclass = k;
    for (size_t i = 0; i < n; i++) ds->cls[i] = class_index(table, k, raw[i] == 0.0 ? 0.0 : raw[i]);
    return set_binary_y(ds);
}

pt_status pt_dataset_set_labels(pt_dataset *ds, const double *labels)
{
    pt_clear_error();
    return pt_dataset_set_class_table(ds, labels);
}

pt_status pt_dataset_set_classes(pt_dataset *ds, size_t nclass, const double *values,
                                 const char *const *names, const int32_t *cls)
{
    pt_clear_error();
    if (nclass == 0 || (values == NULL) == (names == NULL))
        return pt_fail(PT_ERR_INVALID, "a class table needs at least one class and either "
                       "values or names (got %zu classes, %s)", nclass,
                       values ? "values and names" : "neither values nor names");
    for (size_t k = 0; k < nclass; k++) {
        if (values && !isfinite(values[k]))
            return pt_fail(PT_ERR_INVALID, "class %zu: the label value is not finite", k);
        if (values && k && !(values[k - 1] < values[k]))
            return pt_fail(PT_ERR_INVALID, "class %zu: label values must be ascending and distinct "
                           "(%.17g after %.17g)", k, values[k], values[k - 1]);
        if (names && !names[k]) return pt_fail(PT_ERR_INVALID, "class %zu: no name", k);
        if (names && k && strcmp(names[k - 1], names[k]) >= 0)
            return pt_fail(PT_ERR_INVALID, "class %zu: names must be distinct and in strcmp "
                           "order ('%s' after '%s')", k, names[k], names[k - 1]);
    }
    for (size_t i = 0; i < ds->n; i++)
        if (cls[i] < 0 || (size_t)cls[i] >= nclass)
            return pt_fail(PT_ERR_INVALID, "row %zu: class %d is not in 0..%zu", i + 1, (int)cls[i],
                           nclass - 1);
    double *table = malloc(nclass * sizeof *table);
    char **copy = names ? pt_names_dup((char *const *)names, nclass) : NULL;
    if (!table || (names && !copy)) {
        free(table);
        pt_names_free(copy, nclass);
        return pt_fail(PT_ERR_NOMEM, "cannot allocate a table of %zu classes", nclass);
    }
    for (size_t k = 0; k < nclass; k++)
        table[k] = values ? (values[k] == 0.0 ? 0.0 : values[k]) : (double)k;
    pt_names_free(ds->class_names, ds->nclass);
    free(ds->class_values);
    ds->class_values = table;
    ds->class_names = copy;
    ds->nclass = nclass;
    memcpy(ds->cls, cls, ds->n * sizeof *cls);
    return set_binary_y(ds);
}

/* Non-zeros of one row's d features, and whether any is NaN or infinite (all exponent bits
 * set). 32-bit integer operations only, in blocks whose counts fit 32 bits, so the compiler
 * vectorises both sums at the baseline ISA. */
static size_t row_nnz(const float *x, size_t d, bool *nonfinite)
{
    const uint32_t *u = (const uint32_t *)(const void *)x;
    size_t nnz = 0;
    uint32_t bad = 0;
    for (size_t j0 = 0; j0 < d; j0 += (size_t)1 << 30) {
        size_t end = d - j0 < ((size_t)1 << 30) ? d : j0 + ((size_t)1 << 30);
        uint32_t count = 0;
        for (size_t j = j0; j < end; j++) {
            count += (u[j] << 1) != 0; /* +0 and -0 are zeros */
            bad |= (u[j] & 0x7f800000u) == 0x7f800000u;
        }
        nnz += count;
    }
    *nonfinite = bad != 0;
    return nnz;
}

/* Whether the floats of row x past d (to stride) are all +0 or -0. */
static bool padding_zero(const float *x, size_t d, size_t stride)
{
    const uint32_t *u = (const uint32_t *)(const void *)x;
    uint32_t any = 0;
    for (size_t j = d; j < stride; j++) any |= u[j] << 1;
    return any == 0;
}

/* Count the non-zeros of the matrix in one pass (rows split over threads on large data) and
 * find the first row with a non-finite value or, when check_padding, a non-zero padding float.
 * Returns that row, or n when every row is clean. */
static size_t scan_rows(const float *X, size_t n, size_t d, size_t stride, bool check_padding,
                        size_t *nnz_out)
{
    size_t nnz = 0, first_bad = n;
#pragma omp parallel for schedule(static) reduction(+ : nnz) reduction(min : first_bad) \
    if (n * stride > (1u << 20))
    for (size_t i = 0; i < n; i++) {
        bool nonfinite;
        const float *x = X + i * stride;
        nnz += row_nnz(x, d, &nonfinite);
        if ((nonfinite || (check_padding && !padding_zero(x, d, stride))) && i < first_bad)
            first_bad = i;
    }
    *nnz_out = nnz;
    return first_bad;
}

/* The column of the first non-finite value of row x (d if none). */
static size_t first_nonfinite(const float *x, size_t d)
{
    for (size_t j = 0; j < d; j++)
        if (!isfinite(x[j])) return j;
    return d;
}

pt_status pt_dataset_count_nnz(pt_dataset *ds, const char *path)
{
    if (ds->dtype != PT_DTYPE_F32) {
        ds->nnz = pt_compact_nnz(ds);
        return PT_OK;
    }
    if (ds->layout == PT_LAYOUT_SPARSE) {
        size_t all = (size_t)ds->rowptr[ds->n], nnz = 0;
        for (size_t k = 0; k < all; k++) {
            if (!isfinite(ds->val[k]))
                return pt_fail(PT_ERR_PARSE, "%s: column %u: value is not finite", path,
                               ds->col[k] + 1);
            nnz += ds->val[k] != 0.0f;
        }
        ds->nnz = nnz;
        return PT_OK;
    }
    size_t nnz, bad = scan_rows(ds->X, ds->n, ds->d, ds->stride, false, &nnz);
    if (bad < ds->n)
        return pt_fail(PT_ERR_PARSE, "%s: row %zu, feature %zu: value is not finite", path,
                       bad + 1, first_nonfinite(ds->X + bad * ds->stride, ds->d) + 1);
    ds->nnz = nnz;
    return PT_OK;
}

pt_status pt_dataset_wrap(const float *X, size_t n, size_t d, size_t stride, pt_dataset **out)
{
    pt_clear_error();
    *out = NULL;
    size_t cells;
    /* the paths size weight vectors and loops by pt_stride_for(d): no other stride will do */
    if (stride != pt_stride_for(d))
        return pt_fail(PT_ERR_INVALID, "a row stride of %zu floats for %zu features: it must be "
                       "%zu (the features rounded up to a multiple of %d)", stride, d,
                       pt_stride_for(d), PT_ALIGN_FLOATS);
    if (n && !X) return pt_fail(PT_ERR_INVALID, "no matrix for %zu rows", n);
    if ((uintptr_t)X % PT_ALIGN_BYTES != 0)
        return pt_fail(PT_ERR_INVALID, "the matrix at %p is not %d-byte aligned", (const void *)X,
                       PT_ALIGN_BYTES);
    if (!pt_mul_ok(n, stride, &cells) || !pt_mul_ok(cells, sizeof(float), &cells))
        return pt_fail(PT_ERR_INVALID, "%zu rows of %zu floats: size overflows", n, stride);
    size_t nnz, bad = scan_rows(X, n, d, stride, true, &nnz);
    if (bad < n) {
        const float *x = X + bad * stride;
        size_t j = first_nonfinite(x, d);
        if (j < d)
            return pt_fail(PT_ERR_INVALID, "row %zu, feature %zu: NaN or infinity (every value "
                           "must be finite)", bad + 1, j + 1);
        for (j = d; j < stride && x[j] == 0.0f; j++) continue;
        return pt_fail(PT_ERR_INVALID, "row %zu, padding float %zu (past the %zu features): %g "
                       "(the padding must be zero)", bad + 1, j + 1, d, (double)x[j]);
    }
    pt_dataset *ds = calloc(1, sizeof *ds);
    if (!ds) return pt_fail(PT_ERR_NOMEM, "cannot allocate dataset header");
    ds->n = n;
    ds->d = d;
    ds->stride = stride;
    ds->X = (float *)X; /* never written: X_owned is false, so pt_dataset_row gives NULL */
    ds->X_owned = false;
    ds->nnz = nnz;
    ds->cls = pt_calloc((n ? n : 1) * sizeof(int32_t), "class indices");
    if (!ds->cls) {
        pt_dataset_free(ds);
        return PT_ERR_NOMEM;
    }
    *out = ds;
    return PT_OK;
}

const float *pt_dataset_matrix(const pt_dataset *ds)
{
    return dense_rows(ds, "pt_dataset_matrix") ? ds->X : NULL;
}

void pt_dataset_get_info(const pt_dataset *ds, pt_dataset_info *info)
{
    memset(info, 0, sizeof *info);
    info->n = ds->n;
    info->d = ds->d;
    info->stride = ds->stride;
    info->nclass = ds->nclass;
    info->nnz = ds->nnz;
    info->density = ds->n && ds->d ? (double)ds->nnz / ((double)ds->n * (double)ds->d) : 0.0;
    double r2 = 0.0;
    info->dtype = ds->dtype;
    info->u8_single = ds->dtype == PT_DTYPE_U8 && ds->u8_single;
    info->u8_divisor = info->u8_single ? ds->u8_m[0] : 0.0f;
    float *wide = ds->dtype != PT_DTYPE_F32 ? pt_alloc(ds->stride * sizeof(float), "a row") : NULL;
    pt_window_pos at = {0}; /* streamed: window by window */
    for (size_t i = 0; i < ds->n; i++) {
        pt_window_at(ds, &at, i);
        /* the row's values: all d of a dense row, or the non-zeros of a sparse one */
        const float *x = ds->X ? pt_window_row(ds, &at, i) : NULL;
        if (wide) x = pt_compact_widen_row(ds, i, wide);
        const uint32_t *col;
        size_t m = x ? ds->d : pt_csr_row(ds, i, &col, &x);
        double s = 0.0;
        for (size_t j = 0; j < m; j++) s += (double)x[j] * x[j];
        if (s > r2) r2 = s;
    }
    pt_free(wide);
    pt_window_end(ds, &at);
    info->R = sqrt(r2);
    info->streamed = ds->win != NULL;
    info->stream_rows = pt_dataset_streamed(ds);
    info->stream_pages = pt_dataset_stream_pages(ds);
    info->layout = ds->layout;
    info->bytes = ds->layout == PT_LAYOUT_SPARSE ? pt_sparse_bytes(ds->n, (size_t)ds->rowptr[ds->n])
                                                  : pt_dtype_bytes(ds->n, ds->d, ds->dtype);
    info->has_truth = ds->wstar != NULL;
    info->truth_R = ds->truth_R;
    info->truth_gamma = ds->truth_gamma;
    memcpy(info->kind, ds->kind, sizeof info->kind);
}

const double *pt_dataset_truth(const pt_dataset *ds, double *R, double *gamma)
{
    if (R) *R = ds->truth_R;
    if (gamma) *gamma = ds->truth_gamma;
    return ds->wstar;
}

pt_status pt_dataset_copy_meta(pt_dataset *dst, const pt_dataset *src, size_t start)
{
    size_t count = dst->n;
    memcpy(dst->cls, src->cls + start, count * sizeof(int32_t));
    dst->nclass = src->nclass;
    if (!(dst->class_values = malloc((src->nclass ? src->nclass : 1) * sizeof(double)))) goto nomem;
    memcpy(dst->class_values, src->class_values, src->nclass * sizeof(double));
    if (src->class_names && !(dst->class_names = pt_names_dup(src->class_names, src->nclass)))
        goto nomem;
    if (src->y) {
        if (!(dst->y = pt_alloc((count ? count : 1) * sizeof(float), "labels"))) goto nomem;
        memcpy(dst->y, src->y + start, count * sizeof(float));
    }
    if (src->wstar) {
        if (!(dst->wstar = malloc((src->d ? src->d : 1) * sizeof(double)))) goto nomem;
        memcpy(dst->wstar, src->wstar, src->d * sizeof(double));
    }
    dst->truth_R = src->truth_R;
    dst->truth_gamma = src->truth_gamma;
    memcpy(dst->kind, src->kind, sizeof dst->kind);
    return PT_OK;
nomem:
    return pt_fail(PT_ERR_NOMEM, "cannot allocate the labels of %zu rows", count);
}

/* An empty compact dataset of count rows of ds's type, with ds's u8 divisors. */
static pt_dataset *compact_like(const pt_dataset *ds, size_t count)
{
    pt_dataset *s = pt_dataset_alloc_compact(count, ds->d, ds->dtype);
    if (s && ds->dtype == PT_DTYPE_U8) pt_u8_set_divisors(s, ds->u8_m, ds->u8_single);
    return s;
}

pt_status pt_dataset_slice(const pt_dataset *ds, size_t start, size_t count, pt_dataset **out)
{
    pt_clear_error();
    *out = NULL;
    if (start > ds->n || count > ds->n - start)
        return pt_fail(PT_ERR_INVALID, "rows %zu..%zu are outside the dataset's %zu rows", start + 1,
                       start + count, ds->n);
    pt_dataset *s;
    if (ds->layout == PT_LAYOUT_SPARSE) {
        uint64_t a = ds->rowptr[start], b = ds->rowptr[start + count];
        if (!(s = pt_dataset_alloc_sparse(count, ds->d, (size_t)(b - a)))) return PT_ERR_NOMEM;
        for (size_t i = 0; i <= count; i++) s->rowptr[i] = ds->rowptr[start + i] - a;
        memcpy(s->col, ds->col + a, (size_t)(b - a) * sizeof(uint32_t));
        memcpy(s->val, ds->val + a, (size_t)(b - a) * sizeof(float));
    } else if (ds->dtype != PT_DTYPE_F32) {
        if (!(s = compact_like(ds, count))) return PT_ERR_NOMEM;
        size_t row = ds->stride * pt_dtype_size(ds->dtype);
        memcpy(s->Xc, pt_compact_row(ds, start), count * row);
    } else {
        if (!(s = pt_dataset_alloc(count, ds->d))) return PT_ERR_NOMEM;
        memcpy(s->X, ds->X + start * ds->stride, count * ds->stride * sizeof(float));
    }
    pt_status st = pt_dataset_copy_meta(s, ds, start);
    if (st == PT_OK) st = pt_dataset_count_nnz(s, "slice");
    if (st != PT_OK) {
        pt_dataset_free(s);
        return st;
    }
    *out = s;
    return PT_OK;
}

pt_status pt_dataset_take(const pt_dataset *ds, const size_t *rows, size_t count,
                          pt_dataset **out)
{
    pt_clear_error();
    *out = NULL;
    for (size_t i = 0; i < count; i++)
        if (rows[i] >= ds->n)
            return pt_fail(PT_ERR_INVALID, "row %zu is outside the dataset's %zu rows",
                           rows[i] + 1, ds->n);
    pt_dataset *s;
    if (ds->layout == PT_LAYOUT_SPARSE) {
        size_t nnz = 0;
        for (size_t i = 0; i < count; i++)
            nnz += (size_t)(ds->rowptr[rows[i] + 1] - ds->rowptr[rows[i]]);
        if (!(s = pt_dataset_alloc_sparse(count, ds->d, nnz))) return PT_ERR_NOMEM;
        s->rowptr[0] = 0;
        for (size_t i = 0; i < count; i++) {
            uint64_t a = ds->rowptr[rows[i]], len = ds->rowptr[rows[i] + 1] - a;
            memcpy(s->col + s->rowptr[i], ds->col + a, (size_t)len * sizeof(uint32_t));
            memcpy(s->val + s->rowptr[i], ds->val + a, (size_t)len * sizeof(float));
            s->rowptr[i + 1] = s->rowptr[i] + len;
        }
    } else if (ds->dtype != PT_DTYPE_F32) {
        if (!(s = compact_like(ds, count))) return PT_ERR_NOMEM;
        size_t row = ds->stride * pt_dtype_size(ds->dtype);
        for (size_t i = 0; i < count; i++)
            memcpy((unsigned char *)s->Xc + i * row, pt_compact_row(ds, rows[i]), row);
    } else {
        if (!(s = pt_dataset_alloc(count, ds->d))) return PT_ERR_NOMEM;
        for (size_t i = 0; i < count; i++)
            memcpy(s->X + i * ds->stride, ds->X + rows[i] * ds->stride,
                   ds->stride * sizeof(float));
    }
    /* the class table, truth and kind as a slice's; then each row's own class and label */
    pt_status st = pt_dataset_copy_meta(s, ds, 0);
    for (size_t i = 0; st == PT_OK && i < count; i++) {
        s->cls[i] = ds->cls[rows[i]];
        if (ds->y) s->y[i] = ds->y[rows[i]];
    }
    if (st == PT_OK) st = pt_dataset_count_nnz(s, "take");
    if (st != PT_OK) {
        pt_dataset_free(s);
        return st;
    }
    *out = s;
    return PT_OK;
}

void pt_dataset_binary_view(const pt_dataset *ds, size_t k, float *y, pt_dataset *view)
{
    *view = *ds;
    for (size_t i = 0; i < ds->n; i++) y[i] = ds->cls[i] == (int32_t)k ? 1.0f : -1.0f;
    view->y = y;
    view->nclass = 2;
    /* the view owns nothing: it must never be freed with pt_dataset_free */
    view->X_owned = false;
    view->map = NULL;
    view->class_values = NULL;
    view->class_names = NULL;
    view->wstar = NULL;
}

const char *pt_dataset_class_name(const pt_dataset *ds, size_t k)
{
    return ds->class_names ? ds->class_names[k] : NULL;
}

char **pt_names_dup(char *const *names, size_t K)
{
    if (!names) return NULL;
    char **c = calloc(K ? K : 1, sizeof *c);
    for (size_t k = 0; c && k < K; k++)
        if (!(c[k] = strdup(names[k]))) {
            pt_names_free(c, K);
            return NULL;
        }
    return c;
}

void pt_names_free(char **names, size_t K)
{
    for (size_t k = 0; names && k < K; k++) free(names[k]);
    free(names);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

pt_status pt_dataset_set_class_names(pt_dataset *ds, char *const *text)
{
    size_t n = ds->n;
    char **sorted = malloc((n ? n : 1) * sizeof *sorted);
    if (!sorted) return pt_fail(PT_ERR_NOMEM, "cannot allocate %zu labels", n);
    memcpy(sorted, text, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, cmp_str);
    size_t K = 0;
    for (size_t i = 0; i < n; i++)
        if (K == 0 || strcmp(sorted[i], sorted[K - 1]) != 0) sorted[K++] = sorted[i];
    char **names = pt_names_dup(sorted, K);
    double *values = malloc((K ? K : 1) * sizeof *values);
    free(sorted);
    if (!names || !values) {
        pt_names_free(names, K);
        free(values);
        return pt_fail(PT_ERR_NOMEM, "cannot allocate %zu class names", K);
    }
    for (size_t k = 0; k < K; k++) values[k] = (double)k;
    for (size_t i = 0; i < n; i++) {
        /* binary search in the sorted names */
        size_t lo = 0, hi = K;
        while (hi - lo > 1) {
            size_t mid = (lo + hi) / 2;
            if (strcmp(names[mid], text[i]) <= 0) lo = mid;
            else hi = mid;
        }
        ds->cls[i] = (int32_t)lo;
    }
    pt_names_free(ds->class_names, ds->nclass);
    free(ds->class_values);
    ds->class_names = names;
    ds->class_values = values;
    ds->nclass = K;
    return set_binary_y(ds);
}

/* ---------------------------------------------------------- element types (compact storage) */

const char *pt_dtype_name(pt_dtype t)
{
    switch (t) {
    case PT_DTYPE_F32: return "f32";
    case PT_DTYPE_BF16: return "bf16";
    case PT_DTYPE_U8: return "u8";
    }
    return "?";
}

size_t pt_dtype_size(pt_dtype t) { return pt_elem_bytes(t); }

pt_dtype pt_dataset_dtype(const pt_dataset *ds) { return ds->dtype; }

const float *pt_dataset_u8_divisors(const pt_dataset *ds, int *single)
{
    if (single) *single = ds->dtype == PT_DTYPE_U8 && ds->u8_single;
    return ds->dtype == PT_DTYPE_U8 ? ds->u8_m : NULL;
}

size_t pt_dtype_bytes(size_t n, size_t d, pt_dtype t)
{
    size_t cells, bytes;
    if (!pt_mul_ok(n, pt_stride_for(d), &cells) || !pt_mul_ok(cells, pt_dtype_size(t), &bytes))
        return SIZE_MAX;
    return bytes;
}

pt_dataset *pt_dataset_alloc_compact(size_t n, size_t d, pt_dtype t)
{
    size_t bytes = pt_dtype_bytes(n, d, t);
    if (bytes == SIZE_MAX) {
        pt_fail(PT_ERR_NOMEM, "dataset of %zu x %zu: size overflows", n, d);
        return NULL;
    }
    pt_dataset *ds = dataset_header(n, d);
    if (!ds) return NULL;
    ds->dtype = t;
    ds->X_owned = true;
    ds->Xc = pt_calloc(bytes ? bytes : 1, "compact feature matrix");
    ds->cls = pt_calloc((n ? n : 1) * sizeof(int32_t), "class indices");
    bool ok = ds->Xc && ds->cls;
    if (ok && t == PT_DTYPE_U8) {
        ok = pt_u8_alloc_divisors(ds) == PT_OK;
        for (size_t j = 0; ok && j < ds->stride; j++) ds->u8_m[j] = ds->u8_rh[j] = 1.0f;
        ds->u8_single = true;
    }
    if (!ok) {
        pt_dataset_free(ds);
        return NULL;
    }
    return ds;
}

pt_status pt_u8_alloc_divisors(pt_dataset *ds)
{
    ds->u8_m = pt_alloc(ds->stride * sizeof(float), "u8 divisors");
    ds->u8_rh = pt_calloc(ds->stride * sizeof(float), "u8 divisors");
    ds->u8_rl = pt_calloc(ds->stride * sizeof(float), "u8 divisors");
    return ds->u8_m && ds->u8_rh && ds->u8_rl ? PT_OK : PT_ERR_NOMEM;
}

void pt_u8_set_divisors(pt_dataset *ds, const float *m, bool single)
{
    for (size_t j = 0; j < ds->stride; j++) {
        ds->u8_m[j] = j < ds->d ? m[j] : 1.0f;
        /* 1 / m in two floats: rh rounded, rl the rest (exact in double to 2^-48); past the
         * features (q = 0 there, widened to 0 by any divisor) one divisor's reciprocals too,
         * so the kernels see one divisor across the padded row (pt_one_divisor) */
        double mj = j < ds->d || !single || !ds->d ? ds->u8_m[j] : m[0];
        ds->u8_rh[j] = 1.0f / (float)mj;
        ds->u8_rl[j] = (float)(1.0 / mj - (double)ds->u8_rh[j]);
    }
    ds->u8_single = single;
}

const float *pt_compact_widen_row(const pt_dataset *ds, size_t i, float *out)
{
    size_t s = ds->stride;
    if (ds->dtype == PT_DTYPE_F32) {
        memcpy(out, ds->X + i * s, s * sizeof(float));
        return out;
    }
    /* the kernel table's widening (the same floats on every ISA, scalar's included): the
     * scalar loop here called libm's fmaf once a u8 element */
    const pt_kernels *k;
    if (pt_kernels_get(PT_ISA_AUTO, &k) != PT_OK) k = &pt_kernels_scalar;
    return pt_row_f32(k, ds, i, out);
}

size_t pt_compact_nnz(const pt_dataset *ds)
{
    size_t nnz = 0, es = pt_dtype_size(ds->dtype);
    for (size_t i = 0; i < ds->n; i++) {
        const unsigned char *b = pt_compact_row(ds, i);
        for (size_t j = 0; j < ds->d; j++) {
            /* bf16: both bytes but the sign bit; u8: the byte */
            unsigned v = b[j * es] | (es == 2 ? (unsigned)(b[j * es + 1] & 0x7f) << 8 : 0u);
            nnz += v != 0;
        }
    }
    return nnz;
}
