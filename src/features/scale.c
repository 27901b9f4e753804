/* layers: reads rows by form until ported to data/rows.h */
/*
 * Feature scaling, as svm-scale and scikit-learn's scalers: per feature j,
 * x'_j = (x_j - offset_j) factor_j, fitted on a dataset:
 *   -1,1          offset (max + min) / 2, factor 2 / (max - min): the range to [-1, 1]
 *   0,1           offset min, factor 1 / (max - min): to [0, 1]
 *   standardize   offset the mean, factor 1 / the standard deviation (over n)
 * A constant feature gets factor 0 (it carries nothing; scaled, it is 0). Features past the
 * scaling's d (data wider than what it was fitted on) are left as they are. The scaled data is
 * dense: a range scaling moves zeros, so sparse rows would not stay sparse.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "scale.h"

static const struct {
    const char *name;
    pt_scale_kind k;
} kinds[] = {{"none", PT_SCALE_NONE},
             {"-1,1", PT_SCALE_RANGE},
             {"0,1", PT_SCALE_RANGE01},
             {"standardize", PT_SCALE_STANDARDIZE}};

const char *pt_scale_kind_name(pt_scale_kind k)
{
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (kinds[i].k == k) return kinds[i].name;
    return "unknown";
}

pt_status pt_scale_kind_parse(const char *name, pt_scale_kind *out)
{
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(kinds[i].name, name) == 0) {
            *out = kinds[i].k;
            return PT_OK;
        }
    return pt_fail(PT_ERR_INVALID, "unknown scaling '%s' (none, -1,1, 0,1, standardize)", name);
}

void pt_scaling_free(pt_scaling *s)
{
    if (!s) return;
    free(s->offset);
    free(s->factor);
    free(s);
}

pt_status pt_scaling_make(pt_scale_kind kind, size_t d, const double *offset,
                          const double *factor, pt_scaling **out)
{
    *out = NULL;
    for (size_t j = 0; j < d; j++)
        if (!isfinite(offset[j]) || !isfinite(factor[j]))
            return pt_fail(PT_ERR_INVALID, "scaling of feature %zu is not finite", j + 1);
    pt_scaling *s = calloc(1, sizeof *s);
    if (s) {
        s->offset = malloc((d ? d : 1) * sizeof(double));
        s->factor = malloc((d ? d : 1) * sizeof(double));
    }
    if (!s || !s->offset || !s->factor) {
        pt_scaling_free(s);
        return pt_fail(PT_ERR_NOMEM, "cannot allocate the scaling of %zu features", d);
    }
    s->kind = kind;
    s->d = d;
    memcpy(s->offset, offset, d * sizeof(double));
    memcpy(s->factor, factor, d * sizeof(double));
    *out = s;
    return PT_OK;
}

pt_scale_kind pt_scaling_get(const pt_scaling *s, size_t *d, const double **offset,
                            const double **factor)
{
    if (d) *d = s->d;
    if (offset) *offset = s->offset;
    if (factor) *factor = s->factor;
    return s->kind;
}

pt_scaling *pt_scaling_clone(const pt_scaling *s)
{
    pt_scaling *c;
    return pt_scaling_make(s->kind, s->d, s->offset, s->factor, &c) == PT_OK ? c : NULL;
}

/* Row i's values in either layout and any element type: the non-zeros of a sparse row (*col
 * their columns), or the d values of a dense row (*col NULL; a compact row widened into wide,
 * a streamed dataset's read through the window at). Returns their count. */
static size_t row_view(const pt_dataset *ds, pt_window_pos *at, size_t i, float *wide,
                       const uint32_t **col, const float **val)
{
    pt_window_at(ds, at, i);
    if (ds->layout == PT_LAYOUT_SPARSE) return pt_csr_row(ds, i, col, val);
    *col = NULL;
    *val = wide ? pt_compact_widen_row(ds, i, wide) : pt_window_row(ds, at, i);
    return ds->d;
}

/* The per-feature figures a scaling is fitted from, each over the n rows with their zeros
 * (a sparse row's implicit ones included) but computed from the values that are not zero, in
 * row order, so that a sparse dataset and its dense copy give the same numbers bit for bit
 * and the sparse one costs O(nnz + d): nz[j] counts feature j's values that are not zero; for
 * a range, lo and hi are its minimum and maximum (zero counted where nz[j] < n); to
 * standardize, lo is its mean (sum / n) and hi the sum of its squared deviations from it (the
 * non-zeros' sum, then the zeros' (n - nz[j]) mean^2: two passes in double, no running
 * update). */
typedef struct feature_stats {
    double *lo, *hi;
    size_t *nz;
} feature_stats;

static void fit_range(const pt_dataset *ds, float *wide, feature_stats *f)
{
    const size_t n = ds->n, d = ds->d;
    pt_window_pos at = {0};
    for (size_t j = 0; j < d; j++) f->lo[j] = INFINITY, f->hi[j] = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        const uint32_t *col;
        const float *val;
        size_t m = row_view(ds, &at, i, wide, &col, &val);
        for (size_t e = 0; e < m; e++) {
            double x = val[e];
            size_t j = col ? col[e] : e;
            if (x == 0.0) continue;
            f->nz[j]++;
            if (x < f->lo[j]) f->lo[j] = x;
            if (x > f->hi[j]) f->hi[j] = x;
        }
    }
    pt_window_end(ds, &at);
    for (size_t j = 0; j < d; j++) {
        if (f->nz[j] == n) continue;
        if (0.0 < f->lo[j]) f->lo[j] = 0.0;
        if (0.0 > f->hi[j]) f->hi[j] = 0.0;
    }
}

static void fit_moments(const pt_dataset *ds, float *wide, feature_stats *f)
{
    const size_t n = ds->n, d = ds->d;
    for (int pass = 0; pass < 2; pass++) {
        pt_window_pos at = {0};
        for (size_t i = 0; i < n; i++) {
            const uint32_t *col;
            const float *val;
            size_t m = row_view(ds, &at, i, wide, &col, &val);
            for (size_t e = 0; e < m; e++) {
                double x = val[e];
                size_t j = col ? col[e] : e;
                if (x == 0.0) continue;
                if (pass == 0) {
                    f->nz[j]++;
                    f->lo[j] += x;
                } else {
                    f->hi[j] += (x - f->lo[j]) * (x - f->lo[j]);
                }
            }
        }
        pt_window_end(ds, &at);
        for (size_t j = 0; pass == 0 && j < d; j++) f->lo[j] = n ? f->lo[j] / (double)n : 0.0;
    }
    for (size_t j = 0; j < d; j++) f->hi[j] += (double)(n - f->nz[j]) * f->lo[j] * f->lo[j];
}

pt_status pt_scaling_fit(const pt_dataset *ds, pt_scale_kind kind, pt_scaling **out)
{
    pt_clear_error();
    *out = NULL;
    if (kind == PT_SCALE_NONE || (int)kind < 0 || kind > PT_SCALE_STANDARDIZE)
        return pt_fail(PT_ERR_INVALID, "pt_scaling_fit needs a scaling kind (got %s)",
                       pt_scale_kind_name(kind));
    const size_t n = ds->n, d = ds->d;
    feature_stats f = {calloc(d ? d : 1, sizeof(double)), calloc(d ? d : 1, sizeof(double)),
                       calloc(d ? d : 1, sizeof(size_t))};
    double *off = malloc((d ? d : 1) * sizeof *off), *fac = malloc((d ? d : 1) * sizeof *fac);
    /* compact rows: each widened as it is read (the float32 copy's values, no copy) */
    const bool compact = ds->layout == PT_LAYOUT_DENSE && ds->dtype != PT_DTYPE_F32;
    float *wide = compact ? pt_alloc(ds->stride * sizeof *wide, "a widened row") : NULL;
    pt_status s = PT_OK;
    if (!f.lo || !f.hi || !f.nz || !off || !fac || (compact && !wide)) {
        s = pt_fail(PT_ERR_NOMEM, "cannot allocate the scaling of %zu features", d);
        goto out;
    }
    if (kind == PT_SCALE_STANDARDIZE) {
        fit_moments(ds, wide, &f);
        for (size_t j = 0; j < d; j++) {
            double sd = n ? sqrt(f.hi[j] / (double)n) : 0.0;
            off[j] = f.lo[j];
            fac[j] = sd > 0.0 ? 1.0 / sd : 0.0;
        }
    } else {
        fit_range(ds, wide, &f);
        for (size_t j = 0; j < d; j++) {
            double span = n ? f.hi[j] - f.lo[j] : 0.0;
            if (kind == PT_SCALE_RANGE) {
                off[j] = n ? (f.lo[j] + f.hi[j]) / 2.0 : 0.0;
                fac[j] = span > 0.0 ? 2.0 / span : 0.0;
            } else {
                off[j] = n ? f.lo[j] : 0.0;
                fac[j] = span > 0.0 ? 1.0 / span : 0.0;
            }
        }
    }
    s = pt_scaling_make(kind, d, off, fac, out);
out:
    free(f.lo);
    free(f.hi);
    free(f.nz);
    free(off);
    free(fac);
    pt_free(wide);
    return s;
}

pt_status pt_scaling_apply(const pt_scaling *sc, const pt_dataset *ds, size_t mem_budget_bytes,
                           pt_dataset **out)
{
    pt_clear_error();
    *out = NULL;
    /* the scaled rows are a float32 copy: within the budget (compact rows are widened into it
     * row by row, so they make no other copy) */
    const size_t budget = mem_budget_bytes ? mem_budget_bytes : pt_default_mem_budget();
    const size_t need = pt_dense_bytes(ds->n, ds->d > sc->d ? ds->d : sc->d);
    if (need > budget)
        return pt_fail(PT_ERR_LIMIT, "scaling %zu rows x %zu features makes a float32 copy of "
                       "%.1f MiB, over the memory budget of %.1f MiB (--mem-mb)", ds->n,
                       ds->d > sc->d ? ds->d : sc->d, need / 1048576.0, budget / 1048576.0);
    const pt_kernels *k = NULL;
    if (ds->layout == PT_LAYOUT_DENSE && ds->dtype != PT_DTYPE_F32)
        PT_TRY(pt_kernels_get(PT_ISA_AUTO, &k));
    const pt_dataset *src = ds;
    pt_dataset *dense = NULL;
    if (ds->layout == PT_LAYOUT_SPARSE) {
        /* a range scaling moves zeros: the scaled rows are dense */
        PT_TRY(pt_dataset_convert(ds, PT_LAYOUT_DENSE, mem_budget_bytes, &dense));
        src = dense;
    }
    const size_t n = src->n, d = src->d > sc->d ? src->d : sc->d;
    pt_dataset *s = pt_dataset_alloc(n, d);
    pt_status st = s ? PT_OK : PT_ERR_NOMEM;
    if (st == PT_OK) {
        const size_t m = src->d < sc->d ? src->d : sc->d;
#pragma omp parallel for schedule(static) if (n * d > 65536)
        for (size_t i = 0; i < n; i++) {
            float *y = s->X + i * s->stride;
            /* a compact row widened into its scaled row (src->stride <= s->stride floats),
             * then scaled in place: each y[j] depends on x[j] alone */
            const float *x = k ? pt_row_f32(k, src, i, y) : src->X + i * src->stride;
            for (size_t j = 0; j < m; j++)
                y[j] = (float)(((double)x[j] - sc->offset[j]) * sc->factor[j]);
            /* features the data lacks are 0 before scaling */
            for (size_t j = m; j < sc->d; j++) y[j] = (float)(-sc->offset[j] * sc->factor[j]);
            for (size_t j = sc->d; j < src->d; j++) y[j] = x[j];
        }
        st = pt_dataset_copy_meta(s, src, 0);
    }
    if (st == PT_OK) {
        /* the generator's separator lives in the unscaled space */
        free(s->wstar);
        s->wstar = NULL;
        s->kind[0] = '\0';
        st = pt_dataset_count_nnz(s, "scaled data");
    }
    pt_dataset_free(dense);
    if (st != PT_OK) {
        pt_dataset_free(s);
        return st;
    }
    *out = s;
    return PT_OK;
}

/* The parameters file: a header, then one line a feature, "OFFSET FACTOR" (%.17g). */
static pt_status print_scaling(FILE *f, const void *ctx)
{
    const pt_scaling *s = ctx;
    int ok = fprintf(f, "ptron-scale 1\nkind %s\nd %zu\n", pt_scale_kind_name(s->kind), s->d) > 0;
    for (size_t j = 0; j < s->d && ok; j++)
        ok = fprintf(f, "%.17g %.17g\n", s->offset[j], s->factor[j]) > 0;
    return ok ? PT_OK : pt_fail(PT_ERR_IO, "write failed: %s", strerror(errno));
}

pt_status pt_scaling_save(const pt_scaling *s, const char *path)
{
    pt_clear_error();
    locale_t loc = pt_c_locale_enter();
    pt_status st = pt_write_atomic(path, print_scaling, s);
    pt_c_locale_leave(loc);
    return st;
}

pt_status pt_scaling_load(const char *path, pt_scaling **out)
{
    pt_clear_error();
    *out = NULL;
    FILE *f = fopen(path, "r");
    if (!f) return pt_fail(PT_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    char line[512], kind[32];
    size_t d = 0, ln = 0;
    pt_scale_kind k = PT_SCALE_NONE;
    double *off = NULL, *fac = NULL;
    pt_status s = PT_OK;
    locale_t loc = pt_c_locale_enter();
    if (!fgets(line, sizeof line, f) || strcmp(line, "ptron-scale 1\n") != 0) {
        s = pt_fail(PT_ERR_PARSE, "%s:1: not a ptron scaling file (expected 'ptron-scale 1')",
                    path);
        goto out;
    }
    ln = 2;
    if (!fgets(line, sizeof line, f) || sscanf(line, "kind %31s", kind) != 1 ||
        pt_scale_kind_parse(kind, &k) != PT_OK || k == PT_SCALE_NONE) {
        s = pt_fail(PT_ERR_PARSE, "%s:2: expected 'kind -1,1', 'kind 0,1' or 'kind standardize'",
                    path);
        goto out;
    }
    ln = 3;
    char tail;
    if (!fgets(line, sizeof line, f) || sscanf(line, "d %zu%c", &d, &tail) != 2 || tail != '\n' ||
        d > ((size_t)1 << 32)) {
        s = pt_fail(PT_ERR_PARSE, "%s:3: expected 'd FEATURES' (at most 2^32)", path);
        goto out;
    }
    off = malloc((d ? d : 1) * sizeof *off);
    fac = malloc((d ? d : 1) * sizeof *fac);
    if (!off || !fac) {
        s = pt_fail(PT_ERR_NOMEM, "%s: cannot allocate the scaling of %zu features", path, d);
        goto out;
    }
    for (size_t j = 0; j < d; j++) {
        ln = 4 + j;
        char *end, *end2;
        if (!fgets(line, sizeof line, f)) {
            s = pt_fail(PT_ERR_PARSE, "%s:%zu: expected %zu feature lines, found %zu", path, ln,
                        d, j);
            goto out;
        }
        double o = strtod(line, &end), c = strtod(end, &end2);
        while (*end2 == ' ' || *end2 == '\r') end2++;
        if (end == line || end2 == end || *end2 != '\n' || !isfinite(o) || !isfinite(c) ||
            fabs(o) > 1e300 || fabs(c) > 1e300) {
            s = pt_fail(PT_ERR_PARSE, "%s:%zu: expected 'OFFSET FACTOR' (two finite numbers)",
                        path, ln);
            goto out;
        }
        off[j] = o;
        fac[j] = c;
    }
    if (fgets(line, sizeof line, f)) {
        s = pt_fail(PT_ERR_PARSE, "%s:%zu: unexpected line after the %zu features", path,
                    d + 4, d);
        goto out;
    }
    s = pt_scaling_make(k, d, off, fac, out);
out:
    pt_c_locale_leave(loc);
    fclose(f);
    free(off);
    free(fac);
    return s;
}
