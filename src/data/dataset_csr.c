/* The sparse (CSR) layout of a dataset: checks, construction from the caller's arrays, and
 * conversion between the layouts (dataset.c allocates either layout). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"

const char *pt_layout_name(pt_layout l)
{
    switch (l) {
    case PT_LAYOUT_DENSE: return "dense";
    case PT_LAYOUT_SPARSE: return "sparse";
    case PT_LAYOUT_AUTO: return "auto";
    }
    return "unknown";
}

pt_status pt_layout_parse(const char *name, pt_layout *out)
{
    for (int l = PT_LAYOUT_DENSE; l <= PT_LAYOUT_AUTO; l++)
        if (strcmp(name, pt_layout_name((pt_layout)l)) == 0) {
            *out = (pt_layout)l;
            return PT_OK;
        }
    return pt_fail(PT_ERR_INVALID, "unknown layout '%s' (auto, dense, sparse)", name);
}

pt_layout pt_layout_choose(size_t n, size_t d, size_t nnz, size_t mem_budget_bytes)
{
    size_t budget = mem_budget_bytes ? mem_budget_bytes : pt_default_mem_budget();
    if (n == 0 || d == 0 || d > UINT32_MAX) return PT_LAYOUT_DENSE;
    pt_layout want =
        (double)nnz < 0.25 * (double)n * (double)d ? PT_LAYOUT_SPARSE : PT_LAYOUT_DENSE;
    bool dense_fits = pt_dense_bytes(n, d) <= budget,
         sparse_fits = pt_sparse_bytes(n, nnz) <= budget;
    if (want == PT_LAYOUT_SPARSE) return sparse_fits || !dense_fits ? want : PT_LAYOUT_DENSE;
    return dense_fits || !sparse_fits ? want : PT_LAYOUT_SPARSE;
}

pt_status pt_check_sparse_budget(const char *path, size_t n, size_t d, size_t nnz, size_t budget)
{
    if (d > UINT32_MAX)
        return pt_fail(PT_ERR_LIMIT, "%s: %zu features: the sparse layout's column indices are "
                       "32-bit (at most %u features)", path, d, UINT32_MAX);
    size_t bytes = pt_sparse_bytes(n, nnz);
    if (bytes > budget)
        return pt_fail(PT_ERR_LIMIT,
                       "%s: %zu rows with %zu non-zeros need %.1f MiB sparse (CSR: 8 bytes a "
                       "non-zero and a row), over the memory budget of %.1f MiB; raise "
                       "pt_read_options.mem_budget_bytes or reduce the data",
                       path, n, nnz, bytes == SIZE_MAX ? INFINITY : bytes / 1048576.0,
                       budget / 1048576.0);
    return PT_OK;
}

pt_status pt_layout_resolve(const char *path, pt_layout requested, size_t n, size_t d, size_t nnz,
                            size_t budget, pt_layout *out)
{
    if (!budget) budget = pt_default_mem_budget();
    pt_layout l = requested;
    if (l == PT_LAYOUT_AUTO) {
        l = pt_layout_choose(n, d, nnz, budget);
        size_t dense = pt_dense_bytes(n, d), sparse = pt_sparse_bytes(n, nnz);
        if (dense > budget && sparse > budget && d <= UINT32_MAX)
            return pt_fail(PT_ERR_LIMIT,
                           "%s: %zu rows x %zu features need %.1f MiB dense (padded to %zu) or "
                           "%.1f MiB sparse (%zu non-zeros), over the memory budget of %.1f MiB "
                           "either way; raise pt_read_options.mem_budget_bytes or reduce the data",
                           path, n, d, dense == SIZE_MAX ? INFINITY : dense / 1048576.0,
                           pt_stride_for(d), sparse == SIZE_MAX ? INFINITY : sparse / 1048576.0,
                           nnz, budget / 1048576.0);
    }
    if (l == PT_LAYOUT_SPARSE) PT_TRY(pt_check_sparse_budget(path, n, d, nnz, budget));
    else if (l == PT_LAYOUT_DENSE) PT_TRY(pt_check_dense_budget(path, n, d, budget));
    else return pt_fail(PT_ERR_INVALID, "%s: unknown layout %d (pt_read_options.layout)", path,
                        (int)requested);
    *out = l;
    return PT_OK;
}

pt_layout pt_dataset_layout(const pt_dataset *ds) { return ds->layout; }
size_t pt_dataset_nnz(const pt_dataset *ds) { return ds->nnz; }

pt_status pt_dataset_csr(const pt_dataset *ds, const uint64_t **rowptr, const uint32_t **col,
                         const float **val)
{
    if (ds->layout != PT_LAYOUT_SPARSE)
        return pt_fail(PT_ERR_INVALID, "pt_dataset_csr: the dataset is dense: read its rows with "
                       "pt_dataset_row_const");
    *rowptr = ds->rowptr;
    *col = ds->col;
    *val = ds->val;
    return PT_OK;
}

pt_status pt_require_dense(const pt_dataset *ds, const char *what)
{
    if (ds->layout == PT_LAYOUT_DENSE) return PT_OK;
    return pt_fail(PT_ERR_UNSUPPORTED, "%s reads the dense layout only; this dataset is sparse "
                   "(read it with pt_read_options.layout dense, or convert it with "
                   "pt_dataset_convert)", what);
}

pt_status pt_csr_check(size_t n, size_t d, const uint64_t *rowptr, const uint32_t *col,
                       const float *val, const char *what)
{
    if (!rowptr) return pt_fail(PT_ERR_INVALID, "%s: no row offsets", what);
    if (rowptr[0] != 0)
        return pt_fail(PT_ERR_INVALID, "%s: the first row offset is %llu, not 0", what,
                       (unsigned long long)rowptr[0]);
    if (rowptr[n] && (!col || !val))
        return pt_fail(PT_ERR_INVALID, "%s: %llu non-zeros but no column or value array", what,
                       (unsigned long long)rowptr[n]);
    return pt_csr_check_rows(0, n, d, rowptr, col, val, what);
}

pt_status pt_csr_check_rows(size_t r0, size_t r1, size_t d, const uint64_t *rowptr,
                            const uint32_t *col, const float *val, const char *what)
{
    for (size_t i = r0; i < r1; i++) {
        uint64_t a = rowptr[i], b = rowptr[i + 1];
        if (b < a)
            return pt_fail(PT_ERR_INVALID, "%s: row %zu: offset %llu after %llu (offsets must not "
                           "decrease)", what, i + 1, (unsigned long long)b, (unsigned long long)a);
        for (uint64_t k = a; k < b; k++) {
            if (col[k] >= d)
                return pt_fail(PT_ERR_INVALID, "%s: row %zu, entry %llu: column %u is not below "
                               "d = %zu", what, i + 1, (unsigned long long)(k - a + 1), col[k], d);
            if (k > a && col[k] <= col[k - 1])
                return pt_fail(PT_ERR_INVALID, "%s: row %zu, entry %llu: column %u after %u "
                               "(columns must increase within a row)", what, i + 1,
                               (unsigned long long)(k - a + 1), col[k], col[k - 1]);
            if (!isfinite(val[k]))
                return pt_fail(PT_ERR_INVALID, "%s: row %zu, column %u: the value is not finite",
                               what, i + 1, col[k]);
        }
    }
    return PT_OK;
}

/* Non-zero values among the first nnz (explicit zeros are stored but not counted). */
static size_t count_nonzero(const float *val, size_t nnz)
{
    size_t c = 0;
    for (size_t k = 0; k < nnz; k++) c += val[k] != 0.0f;
    return c;
}

static pt_status check_shape(size_t n, size_t d)
{
    if (n == SIZE_MAX || d > UINT32_MAX)
        return pt_fail(PT_ERR_INVALID, "a sparse dataset of %zu rows and %zu features: columns "
                       "are 32-bit indices (d at most %u)", n, d, UINT32_MAX);
    return PT_OK;
}

pt_status pt_dataset_from_csr(size_t n, size_t d, const uint64_t *rowptr, const uint32_t *col,
                              const float *val, pt_dataset **out)
{
    pt_clear_error();
    *out = NULL;
    PT_TRY(check_shape(n, d));
    PT_TRY(pt_csr_check(n, d, rowptr, col, val, "CSR arrays"));
    size_t nnz = (size_t)rowptr[n];
    pt_dataset *ds = pt_dataset_alloc_sparse(n, d, nnz);
    if (!ds) return PT_ERR_NOMEM;
    memcpy(ds->rowptr, rowptr, (n + 1) * sizeof *rowptr);
    if (nnz) {
        memcpy(ds->col, col, nnz * sizeof *col);
        memcpy(ds->val, val, nnz * sizeof *val);
    }
    ds->nnz = count_nonzero(val, nnz);
    *out = ds;
    return PT_OK;
}

pt_status pt_dataset_wrap_csr(size_t n, size_t d, const uint64_t *rowptr, const uint32_t *col,
                              const float *val, pt_dataset **out)
{
    pt_clear_error();
    *out = NULL;
    PT_TRY(check_shape(n, d));
    PT_TRY(pt_csr_check(n, d, rowptr, col, val, "CSR arrays"));
    pt_dataset *ds = calloc(1, sizeof *ds);
    if (!ds) return pt_fail(PT_ERR_NOMEM, "cannot allocate dataset header");
    ds->n = n;
    ds->d = d;
    ds->stride = pt_stride_for(d);
    ds->layout = PT_LAYOUT_SPARSE;
    /* never written: X_owned false leaves the arrays to the caller */
    ds->rowptr = (uint64_t *)rowptr;
    ds->col = (uint32_t *)col;
    ds->val = (float *)val;
    ds->nnz = count_nonzero(val, (size_t)rowptr[n]);
    ds->cls = pt_calloc((n ? n : 1) * sizeof(int32_t), "class indices");
    if (!ds->cls) {
        pt_dataset_free(ds);
        return PT_ERR_NOMEM;
    }
    *out = ds;
    return PT_OK;
}

/* A sparse copy of a dense dataset's matrix (explicit zeros dropped). The non-zeros are
 * counted here: ds->nnz is stale after writes through pt_dataset_row. */
static pt_dataset *dense_to_sparse(const pt_dataset *ds)
{
    size_t nnz = 0;
    for (size_t i = 0; i < ds->n; i++)
        nnz += count_nonzero(ds->X + i * ds->stride, ds->d);
    pt_dataset *s = pt_dataset_alloc_sparse(ds->n, ds->d, nnz);
    if (!s) return NULL;
    uint64_t k = 0;
    for (size_t i = 0; i < ds->n; i++) {
        const float *x = ds->X + i * ds->stride;
        for (size_t j = 0; j < ds->d; j++)
            if (x[j] != 0.0f) {
                s->col[k] = (uint32_t)j;
                s->val[k++] = x[j];
            }
        s->rowptr[i + 1] = k;
    }
    s->nnz = (size_t)k;
    return s;
}

/* A dense copy of a sparse dataset's matrix. */
static pt_dataset *sparse_to_dense(const pt_dataset *ds)
{
    pt_dataset *s = pt_dataset_alloc(ds->n, ds->d);
    if (!s) return NULL;
    for (size_t i = 0; i < ds->n; i++) {
        const uint32_t *col;
        const float *val;
        size_t m = pt_csr_row(ds, i, &col, &val);
        float *x = s->X + i * s->stride;
        for (size_t k = 0; k < m; k++) x[col[k]] = val[k];
    }
    s->nnz = ds->nnz;
    return s;
}

pt_status pt_dataset_convert(const pt_dataset *ds, pt_layout to, size_t mem_budget_bytes,
                             pt_dataset **out)
{
    pt_clear_error();
    *out = NULL;
    if (to != PT_LAYOUT_DENSE && to != PT_LAYOUT_SPARSE)
        return pt_fail(PT_ERR_INVALID, "convert to layout %s: dense or sparse only",
                       pt_layout_name(to));
    if (to == PT_LAYOUT_SPARSE) PT_TRY(check_shape(ds->n, ds->d));
    if (to == PT_LAYOUT_DENSE && ds->layout == PT_LAYOUT_SPARSE)
        PT_TRY(pt_check_dense_budget("dense copy", ds->n, ds->d,
                                     mem_budget_bytes ? mem_budget_bytes : pt_default_mem_budget()));
    if (to == ds->layout) return pt_dataset_slice(ds, 0, ds->n, out);
    pt_dataset *s = to == PT_LAYOUT_SPARSE ? dense_to_sparse(ds) : sparse_to_dense(ds);
    if (!s) return PT_ERR_NOMEM;
    pt_status st = pt_dataset_copy_meta(s, ds, 0);
    if (st != PT_OK) {
        pt_dataset_free(s);
        return st;
    }
    *out = s;
    return PT_OK;
}
