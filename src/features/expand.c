/*
 * Explicit feature expansion: polynomial monomials and random Fourier features.
 *
 * POLY. phi(x) holds every monomial x^alpha of degree |alpha| = k <= D, scaled by
 *   sqrt( D! / (k0! alpha_1! ... alpha_d!) * C^k0 ),  k0 = D - k,
 * so phi(x).phi(z) = sum over the multinomial expansion = (C + x.z)^D. The layout is by degree
 * (1, then the d linear terms, then degree 2, ...), C(d + D, D) entries in all; with C = 0 the
 * lower degrees are kept in the layout with coefficient 0. Within a degree the monomials are
 * grouped by their lowest variable j ("lead"): the degree-k group of lead j is x_j times the
 * degree-(k-1) monomials whose lead is >= j, which is one contiguous tail of the previous
 * degree's block. So a row is built degree by degree, from a copy of x, as (D - 1) d scaled
 * copies of contiguous ranges, and the coefficients are applied by one vector multiply, fused
 * into the copies of the top degree (the largest block, d / (d + D) of all): the kernel table's
 * poly_row (kernels/expand_impl.h) runs that layout.
 *
 * RFF. z(x) = sqrt(2/D) cos(W x + b), W (D x d) with N(0, 2 gamma) entries and b uniform in
 * [0, 2 pi), drawn from the seed: the normals in the order W[0][0..d), W[1][0..d), ..., then
 * b[0..D). E[z(x).z(y)] = exp(-gamma |x - y|^2). Blocks of rows take one sgemm, then the
 * table's cosine; a single row (the streamed path) takes the table's rff_row.
 *
 * The rows are computed by the kernel table an expander is built with (the run's ISA); every
 * ISA gives the same bits (kernels.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "expand.h"

/* Scored / materialised rows per block: about this many bytes of output (stays in L2). */
#define BLOCK_BYTES ((size_t)512 << 10)
#define BLOCK_ROWS_MAX 256

struct pt_expander {
    pt_expand_params p;
    size_t d_in, d_out, stride_out;
    const pt_expand_kernels *k;
    /* POLY: the layout the kernels run (kernels.h), over the arrays owned here */
    pt_poly_layout poly;
    pt_poly_seg *segs;
    size_t nseg, top_first; /* segments of the top degree start at top_first */
    size_t lower;           /* entries of degree < D (all when D = 1): scaled after the copies */
    float *coef;            /* d_out coefficients, zero padded to stride_out */
    /* RFF */
    pt_rff_layout rff;
    float *Wt; /* d_in rows of ldw floats: W transposed */
    size_t ldw;
    float *b; /* ldw floats, zero padded */
    float scale;
};

/* ------------------------------------------------------------------ parameters, sizes */

void pt_expand_params_init(pt_expand_params *p)
{
    memset(p, 0, sizeof *p);
    p->struct_size = sizeof *p;
    p->kind = PT_EXPAND_POLY;
    p->degree = 2;
    p->coef0 = 1.0f;
    p->rff_dim = 1024;
    p->gamma = 1.0f;
    p->seed = 1;
    p->max_features = 10000000;
    p->mem_budget_bytes = pt_default_mem_budget();
}

size_t pt_expand_dim(const pt_expand_params *p, size_t d)
{
    if (p->kind == PT_EXPAND_RFF) return p->rff_dim;
    if (p->kind != PT_EXPAND_POLY) return d;
    if (p->degree < 0) return SIZE_MAX;
    /* C(d + D, D) = prod_{i=1..D} (d + i) / i; each partial product is C(d + i, i), exact. */
    unsigned __int128 r = 1;
    for (int i = 1; i <= p->degree; i++) {
        r = r * ((unsigned __int128)d + (unsigned)i) / (unsigned)i;
        if (r > SIZE_MAX) return SIZE_MAX;
    }
    return (size_t)r;
}

pt_status pt_expand_check_params(const pt_expand_params *p)
{
    switch (p->kind) {
    case PT_EXPAND_POLY:
        if (p->degree < 1 || p->degree > 32)
            return pt_fail(PT_ERR_INVALID, "expansion degree must be in 1..32 (got %d)", p->degree);
        if (!isfinite(p->coef0) || p->coef0 < 0.0f)
            return pt_fail(PT_ERR_INVALID,
                           "expansion coef0 must be >= 0 (got %g): the coefficients are "
                           "sqrt(C^k0)", (double)p->coef0);
        return PT_OK;
    case PT_EXPAND_RFF:
        if (p->rff_dim < 1) return pt_fail(PT_ERR_INVALID, "random Fourier features need D >= 1");
        if (!(p->gamma > 0.0f) || !isfinite(p->gamma))
            return pt_fail(PT_ERR_INVALID, "RFF gamma must be a positive number (got %g)",
                           (double)p->gamma);
        return PT_OK;
    case PT_EXPAND_NONE: break;
    }
    return pt_fail(PT_ERR_INVALID, "no expansion kind given (poly or rff)");
}

static void describe(const pt_expand_params *p, size_t d, char *buf, size_t len)
{
    if (p->kind == PT_EXPAND_POLY)
        snprintf(buf, len, "degree-%d polynomial expansion of %zu features: C(%zu + %d, %d) = ",
                 p->degree, d, d, p->degree, p->degree);
    else
        snprintf(buf, len, "random Fourier expansion of %zu features: ", d);
}

/* The dimension check shared by streaming and materialising; rows = 0 for one row only (then
 * budget and budget_field go unused). */
static pt_status check_dim(const pt_expand_params *p, size_t d, size_t rows, size_t budget,
                           const char *budget_field)
{
    char what[160];
    describe(p, d, what, sizeof what);
    size_t dim = pt_expand_dim(p, d);
    if (dim == SIZE_MAX)
        return pt_fail(PT_ERR_LIMIT, "%smore than 2^64 features: refused", what);
    size_t row_bytes = pt_dense_bytes(1, dim);
    if (dim > p->max_features)
        return pt_fail(PT_ERR_LIMIT,
                       "%s%zu features, over the limit of %zu (pt_expand_params.max_features); one "
                       "expanded row "
                       "needs %zu bytes (%.1f MiB)%s",
                       what, dim, p->max_features, row_bytes, row_bytes / 1048576.0,
                       rows ? ", the whole matrix more" : "");
    if (rows) {
        size_t bytes = pt_dense_bytes(rows, dim);
        if (bytes > budget) {
            if (bytes == SIZE_MAX)
                return pt_fail(PT_ERR_LIMIT, "%s%zu features: %zu rows overflow the byte count",
                               what, dim, rows);
            return pt_fail(PT_ERR_LIMIT,
                           "%s%zu features; materialising %zu rows needs %zu bytes (%.1f MiB), over "
                           "the memory budget of %zu bytes (%.1f MiB): raise %s, or stream the "
                           "expansion while training on the online path",
                           what, dim, rows, bytes, bytes / 1048576.0, budget, budget / 1048576.0,
                           budget_field);
        }
    }
    return PT_OK;
}

/* --------------------------------------------------------------------------- building */

static pt_status build_poly(pt_expander *e)
{
    const size_t d = e->d_in, n = e->d_out;
    const int D = e->p.degree;
    size_t max_segs = (size_t)D * d;
    e->segs = malloc((max_segs ? max_segs : 1) * sizeof *e->segs);
    e->coef = pt_calloc(e->stride_out * sizeof(float), "expansion coefficients");
    /* per entry while building: k! / alpha! (double) and the exponent of its lead variable */
    double *mult = malloc(n * sizeof *mult);
    unsigned char *lexp = malloc(n);
    size_t *idx = malloc((d + 1) * sizeof *idx), *nidx = malloc((d + 1) * sizeof *nidx);
    pt_status s = PT_OK;
    if (!e->segs || !e->coef || !mult || !lexp || !idx || !nidx) {
        s = pt_fail(PT_ERR_NOMEM, "cannot allocate the layout of %zu monomials", n);
        goto out;
    }
    mult[0] = 1.0;
    lexp[0] = 0;
    /* idx[j]: where the monomials with lead >= j start inside the previous degree's block;
     * idx[d]: that block's size. Degree 0 (the constant) counts as lead "after every j". */
    for (size_t j = 0; j < d; j++) idx[j] = 0;
    idx[d] = 1;
    size_t prev = 0, cur = 1, ns = 0; /* starts of the previous and current degree blocks */
    for (int k = 1; k <= D; k++) {
        if (k == D) e->top_first = ns, e->lower = D == 1 ? n : cur;
        size_t o = 0, prev_size = idx[d];
        for (size_t j = 0; j < d; j++) {
            nidx[j] = o;
            size_t len = prev_size - idx[j];
            /* A segment may write past its end, up to a multiple of 16 floats: what it spills
             * lies in later segments or in the padding, all written after it. So short
             * segments run as whole vectors, without scalar tails. Kept inside the row. */
            size_t vlen = pt_round_up(len, 16);
            if (k > 1) /* degree 1 is a copy of x, done apart */
                e->segs[ns++] = (pt_poly_seg){.src = prev + idx[j], .dst = cur + o, .len = len, .j = j,
                                      .vlen = cur + o + vlen <= e->stride_out ? vlen : 0};
            for (size_t t = 0; t < len; t++) {
                size_t i = idx[j] + t; /* in the previous block */
                /* the exponent of x_j in that monomial: its lead exponent if its lead is j */
                unsigned ex = k > 1 && i < idx[j + 1] ? lexp[prev + i] : 0;
                lexp[cur + o + t] = (unsigned char)(ex + 1);
                mult[cur + o + t] = mult[prev + i] * k / (ex + 1);
            }
            o += len;
        }
        nidx[d] = o;
        e->nseg = ns;
        size_t *tmp = idx;
        idx = nidx;
        nidx = tmp;
        prev = cur;
        cur += o;
    }
    /* coefficient^2 of a degree-k monomial: C(D, k) C^(D-k) k! / alpha! */
    {
        size_t start = 0, size = 1;
        double binom = 1.0; /* C(D, k) */
        for (int k = 0; k <= D; k++) {
            double c = binom * pow((double)e->p.coef0, D - k);
            for (size_t i = start; i < start + size; i++) e->coef[i] = (float)sqrt(c * mult[i]);
            start += size;
            /* next degree's block size: C(d + k, k + 1) */
            size = (size_t)((unsigned __int128)size * (d + (size_t)k) / (size_t)(k + 1));
            binom = binom * (D - k) / (k + 1);
        }
    }
out:
    free(mult);
    free(lexp);
    free(idx);
    free(nidx);
    return s;
}

static pt_status build_rff(pt_expander *e)
{
    const size_t d = e->d_in, D = e->d_out;
    /* one cache line more than the chunks need: row strides of a multiple of 4 KiB would put
     * every row of a chunk's column in the same L1 set */
    e->ldw = pt_round_up(D, PT_RFF_CHUNK) + 16;
    size_t cells;
    if (!pt_mul_ok(d ? d : 1, e->ldw, &cells) || cells > SIZE_MAX / sizeof(float))
        return pt_fail(PT_ERR_LIMIT, "RFF matrix of %zu x %zu overflows", D, d);
    e->Wt = pt_calloc(cells * sizeof(float), "RFF matrix W");
    e->b = pt_calloc(e->ldw * sizeof(float), "RFF offsets b");
    if (!e->Wt || !e->b) return PT_ERR_NOMEM;
    pt_rng r;
    pt_rng_seed(&r, e->p.seed);
    double sd = sqrt(2.0 * (double)e->p.gamma);
    for (size_t k = 0; k < D; k++)
        for (size_t j = 0; j < d; j++) e->Wt[j * e->ldw + k] = (float)(sd * pt_rng_normal(&r));
    for (size_t k = 0; k < D; k++) e->b[k] = (float)(6.283185307179586 * pt_rng_uniform(&r));
    e->scale = (float)sqrt(2.0 / (double)D);
    return PT_OK;
}

pt_status pt_expander_create(const pt_expand_params *p, size_t d_in, const pt_kernels *k,
                             pt_expander **out)
{
    *out = NULL;
    PT_TRY(pt_expand_check_params(p));
    PT_TRY(check_dim(p, d_in, 0, 0, NULL));
    pt_expander *e = calloc(1, sizeof *e);
    if (!e) return pt_fail(PT_ERR_NOMEM, "cannot allocate an expander");
    e->p = *p;
    e->d_in = d_in;
    e->d_out = pt_expand_dim(p, d_in);
    e->stride_out = pt_stride_for(e->d_out);
    e->k = k->expand;
    pt_status s = p->kind == PT_EXPAND_POLY ? build_poly(e) : build_rff(e);
    if (s != PT_OK) {
        pt_expander_free(e);
        return s;
    }
    e->poly = (pt_poly_layout){.d_in = e->d_in, .d_out = e->d_out, .stride_out = e->stride_out,
                               .segs = e->segs, .nseg = e->nseg, .top_first = e->top_first,
                               .lower = e->lower, .coef = e->coef};
    e->rff = (pt_rff_layout){.d_in = e->d_in, .d_out = e->d_out, .stride_out = e->stride_out,
                             .Wt = e->Wt, .ldw = e->ldw, .b = e->b, .scale = e->scale};
    *out = e;
    return PT_OK;
}

void pt_expander_free(pt_expander *e)
{
    if (!e) return;
    free(e->segs);
    pt_free(e->coef);
    pt_free(e->Wt);
    pt_free(e->b);
    free(e);
}

size_t pt_expander_d_in(const pt_expander *e) { return e->d_in; }
size_t pt_expander_d_out(const pt_expander *e) { return e->d_out; }

void pt_expander_row(const pt_expander *e, const float *x, float *out)
{
    if (e->p.kind == PT_EXPAND_POLY) e->k->poly_row(&e->poly, x, out);
    else e->k->rff_row(&e->rff, x, out);
}

void pt_expander_block(const pt_expander *e, const float *X, size_t ldx, size_t rows, float *out,
                       size_t ldo)
{
    if (e->p.kind == PT_EXPAND_POLY) {
        for (size_t i = 0; i < rows; i++) {
            e->k->poly_row(&e->poly, X + i * ldx, out + i * ldo);
            for (size_t t = e->stride_out; t < ldo; t++) out[i * ldo + t] = 0.0f;
        }
        return;
    }
    const size_t D = e->d_out;
    if (rows == 0) return;
    if (e->d_in > 0)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows, (int)D, (int)e->d_in,
                    1.0f, X, (int)ldx, e->Wt, (int)e->ldw, 0.0f, out, (int)ldo);
    for (size_t i = 0; i < rows; i++) {
        float *o = out + i * ldo;
        if (e->d_in == 0) memset(o, 0, D * sizeof(float));
        e->k->cos(o, e->b, D, e->scale);
        for (size_t t = D; t < ldo; t++) o[t] = 0.0f;
    }
}

static void row_map_fn(const void *ctx, const float *x, float *out)
{
    pt_expander_row((const pt_expander *)ctx, x, out);
}

pt_row_map pt_expander_row_map(const pt_expander *e)
{
    return (pt_row_map){.d_out = e->d_out, .map = row_map_fn, .ctx = e};
}

/* Rows per block for an output stride. */
static size_t block_rows(size_t stride_out)
{
    size_t r = BLOCK_BYTES / (stride_out * sizeof(float));
    return r < 1 ? 1 : r > BLOCK_ROWS_MAX ? BLOCK_ROWS_MAX : r;
}

size_t pt_expander_block_rows(const pt_expander *e) { return block_rows(e->stride_out); }

/* ---------------------------------------------------------------------- materialise */

pt_status pt_expand_with(const pt_dataset *ds, const pt_expander *e, size_t budget,
                         const char *budget_field, pt_dataset **out)
{
    *out = NULL;
    if (ds->d != e->d_in)
        return pt_fail(PT_ERR_INVALID, "expander built for %zu features, data has %zu", e->d_in,
                       ds->d);
    PT_TRY(check_dim(&e->p, ds->d, ds->n, budget, budget_field));
    pt_dataset *x = pt_dataset_alloc(ds->n, e->d_out);
    if (!x) return PT_ERR_NOMEM;
    x->class_values = malloc((ds->nclass ? ds->nclass : 1) * sizeof(double));
    if (!x->class_values || (ds->y && !(x->y = pt_alloc((ds->n ? ds->n : 1) * sizeof(float), "labels"))) ||
        (ds->class_names && !(x->class_names = pt_names_dup(ds->class_names, ds->nclass)))) {
        pt_dataset_free(x);
        return pt_fail(PT_ERR_NOMEM, "cannot allocate the labels of %zu rows", ds->n);
    }
    memcpy(x->cls, ds->cls, ds->n * sizeof(int32_t));
    memcpy(x->class_values, ds->class_values, ds->nclass * sizeof(double));
    x->nclass = ds->nclass;
    if (ds->y) memcpy(x->y, ds->y, ds->n * sizeof(float));

    const size_t n = ds->n, B = block_rows(x->stride), nblocks = (n + B - 1) / B;
    size_t nnz = 0, bad_row = SIZE_MAX;
    /* Blocks in parallel (BLAS runs one thread inside a parallel region); the non-zero count
     * and the finiteness check read each block while it is still in cache. */
#pragma omp parallel for schedule(dynamic) reduction(+ : nnz) reduction(min : bad_row)
    for (size_t bi = 0; bi < nblocks; bi++) {
        size_t i0 = bi * B, rows = n - i0 < B ? n - i0 : B;
        float *o = x->X + i0 * x->stride;
        pt_expander_block(e, ds->X + i0 * ds->stride, ds->stride, rows, o, x->stride);
        for (size_t i = 0; i < rows; i++) {
            const float *r = o + i * x->stride;
            size_t c = 0;
            int fin = 1;
            for (size_t j = 0; j < e->d_out; j++) {
                c += r[j] != 0.0f;
                fin &= (r[j] - r[j]) == 0.0f; /* false for Inf and NaN; vectorises */
            }
            nnz += c;
            if (!fin && i0 + i < bad_row) bad_row = i0 + i;
        }
    }
    if (bad_row != SIZE_MAX) {
        pt_dataset_free(x);
        return pt_fail(PT_ERR_NUMERIC,
                       "row %zu: the expansion overflows float (degree %d); rescale the features",
                       bad_row + 1, e->p.degree);
    }
    x->nnz = nnz;
    *out = x;
    return PT_OK;
}

pt_status pt_expand(const pt_dataset *ds, const pt_expand_params *p, pt_dataset **out)
{
    pt_clear_error();
    *out = NULL;
    PT_TRY(PT_CHECK_STRUCT(p, pt_expand_params));
    PT_TRY(pt_require_dense(ds, "the feature expansion"));
    PT_TRY(pt_expand_check_params(p));
    PT_TRY(check_dim(p, ds->d, ds->n, p->mem_budget_bytes, "pt_expand_params.mem_budget_bytes"));
    const pt_kernels *k;
    PT_TRY(pt_kernels_get(PT_ISA_AUTO, &k));
    pt_expander *e;
    PT_TRY(pt_expander_create(p, ds->d, k, &e));
    pt_status s =
        pt_expand_with(ds, e, p->mem_budget_bytes, "pt_expand_params.mem_budget_bytes", out);
    pt_expander_free(e);
    return s;
}
