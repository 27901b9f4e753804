/* layers: reads rows by form until ported to data/rows.h */
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
#include <inttypes.h>
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
    /* POLY hashed (p.hash_bits): the layout's offsets (no layout is built) */
    struct poly_index *ix;
};

static pt_status hashed_setup(pt_expander *e);
static void poly_index_free(struct poly_index *ix);
static void hashed_row(const pt_expander *e, const float *x, float *out);

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
    p->hash_bits = 0;
}

size_t pt_expand_dim(const pt_expand_params *p, size_t d)
{
    if (p->kind == PT_EXPAND_RFF) return p->rff_dim;
    if (p->kind != PT_EXPAND_POLY) return d;
    if (p->hash_bits > 0 && p->hash_bits < 32) return (size_t)1 << p->hash_bits;
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
    if ((int)p->kind < 0 || p->kind > PT_EXPAND_RFF)
        return pt_fail(PT_ERR_INVALID, "pt_expand_params.kind is not one of none, poly, rff "
                       "(got %d)", (int)p->kind);
    if (p->hash_bits < 0 || p->hash_bits > 31)
        return pt_fail(PT_ERR_INVALID, "expansion hash bits must be in 0..31 (got %d)",
                       p->hash_bits);
    if (p->hash_bits && p->kind != PT_EXPAND_POLY)
        return pt_fail(PT_ERR_INVALID, "feature hashing (hash bits %d) applies to the polynomial "
                       "expansion only", p->hash_bits);
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
    if (p->kind == PT_EXPAND_POLY && p->hash_bits)
        snprintf(buf, len, "degree-%d polynomial expansion of %zu features hashed to 2^%d = ",
                 p->degree, d, p->hash_bits);
    else if (p->kind == PT_EXPAND_POLY)
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
    pt_status s = p->kind == PT_EXPAND_POLY ? (p->hash_bits ? hashed_setup(e) : build_poly(e))
                                            : build_rff(e);
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
    poly_index_free(e->ix);
    pt_free(e->Wt);
    pt_free(e->b);
    free(e);
}

size_t pt_expander_d_in(const pt_expander *e) { return e->d_in; }
size_t pt_expander_d_out(const pt_expander *e) { return e->d_out; }

void pt_expander_row(const pt_expander *e, const float *x, float *out)
{
    if (e->p.kind == PT_EXPAND_POLY && e->ix) hashed_row(e, x, out);
    else if (e->p.kind == PT_EXPAND_POLY) e->k->poly_row(&e->poly, x, out);
    else e->k->rff_row(&e->rff, x, out);
}

void pt_expander_block(const pt_expander *e, const float *X, size_t ldx, size_t rows, float *out,
                       size_t ldo)
{
    if (e->p.kind == PT_EXPAND_POLY) {
        for (size_t i = 0; i < rows; i++) {
            pt_expander_row(e, X + i * ldx, out + i * ldo);
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

/* ------------------------------------------------------------ sparse (CSR) input
 *
 * RFF: W x over the row's non-zeros only, in increasing column, chunk by chunk as the table's
 * rff_row does (which skips zeros), then the table's cosine: the same bits as rff_row on the
 * dense row. The output is dense.
 *
 * POLY: the output stays sparse, holding only the monomials of the row's non-zeros, computed
 * as poly_row computes them (degree k from degree k - 1: v(j1..jk) = x_j1 v(j2..jk), the top
 * degree (x_j1 v) coef, the lower ones v coef), so every value has poly_row's bits; a value
 * that is 0 (coef0 = 0, underflow) is left out, as the sparse layout leaves out zeros. The
 * position of a monomial j1 <= ... <= jk in the layout: the degree's block start, plus
 * off_k(j1) (the monomials of degree k with a lower lead), plus its tail's position in degree
 * k - 1 minus off_(k-1)(j1); listed lexicographically they come out in increasing position. */

/* C(r + m - 1, m): monomials of degree m in r variables (SIZE_MAX when it overflows). */
static size_t multisets(size_t r, int m)
{
    unsigned __int128 v = 1;
    for (int i = 1; i <= m; i++) {
        v = v * ((unsigned __int128)r + (unsigned)i - 1) / (unsigned)i;
        if (v > SIZE_MAX) return SIZE_MAX;
    }
    return (size_t)v;
}

/* A row's monomials of one degree: positions in the layout, values, and lead columns. */
typedef struct mono_list {
    size_t n, cap;
    size_t *pos;
    float *val;
    uint32_t *lead;
    double *mult;        /* k! / alpha! (hashed: the coefficients computed, not stored) */
    unsigned char *lexp; /* the lead variable's exponent */
} mono_list;

static void mono_free(mono_list *a, size_t count)
{
    for (size_t k = 0; k < count; k++) {
        free(a[k].pos);
        free(a[k].val);
        free(a[k].lead);
        free(a[k].mult);
        free(a[k].lexp);
    }
}

static bool mono_reserve(mono_list *l, size_t cap)
{
    if (cap <= l->cap) return true;
    size_t *p = realloc(l->pos, cap * sizeof *p);
    if (p) l->pos = p;
    float *v = p ? realloc(l->val, cap * sizeof *v) : NULL;
    if (v) l->val = v;
    uint32_t *d = v ? realloc(l->lead, cap * sizeof *d) : NULL;
    if (d) l->lead = d;
    double *mu = d ? realloc(l->mult, cap * sizeof *mu) : NULL;
    if (mu) l->mult = mu;
    unsigned char *le = mu ? realloc(l->lexp, cap) : NULL;
    if (le) l->lexp = le;
    if (!le) return false;
    l->cap = cap;
    return true;
}

/* The poly layout's offsets for sparse rows: start[k] of each degree's block, off[k][j]. */
typedef struct poly_index {
    int D;
    size_t d;
    size_t start[33];
    size_t *off; /* (D + 1) x (d + 1): off[k (d + 1) + j] */
} poly_index;

static pt_status poly_index_init(poly_index *ix, int D, size_t d)
{
    ix->D = D;
    ix->d = d;
    ix->off = malloc((size_t)(D + 1) * (d + 1) * sizeof *ix->off);
    if (!ix->off) return pt_fail(PT_ERR_NOMEM, "cannot allocate the expansion's offsets");
    ix->start[0] = 0;
    ix->start[1] = 1;
    for (int k = 2; k <= D; k++) ix->start[k] = ix->start[k - 1] + multisets(d, k - 1);
    for (int k = 1; k <= D; k++) {
        size_t *o = ix->off + (size_t)k * (d + 1);
        o[0] = 0;
        for (size_t j = 0; j < d; j++) o[j + 1] = o[j] + multisets(d - j, k - 1);
    }
    return PT_OK;
}

static void poly_index_free(struct poly_index *ix)
{
    if (!ix) return;
    free(ix->off);
    free(ix);
}

/* The monomials of a sparse row (cols, vals, m; columns increasing), degree by degree into
 * a[0..D] (a[k]: degree k, positions within the layout), values as poly_row's. Returns the
 * count, or SIZE_MAX when out of memory. */
static size_t poly_sparse_row(const pt_expander *e, const poly_index *ix, const uint32_t *col,
                              const float *val, size_t m, mono_list *a)
{
    const int D = e->p.degree;
    const float *coef = e->coef;
    size_t total = 0;
    if (!mono_reserve(&a[0], 1)) return SIZE_MAX;
    a[0].n = 1;
    a[0].pos[0] = 0;
    a[0].val[0] = 1.0f;
    a[0].lead[0] = 0;
    a[0].mult[0] = 1.0;
    a[0].lexp[0] = 0;
    if (!mono_reserve(&a[1], m ? m : 1)) return SIZE_MAX;
    a[1].n = m;
    for (size_t q = 0; q < m; q++) {
        a[1].pos[q] = 1 + col[q];
        a[1].val[q] = val[q];
        a[1].lead[q] = col[q];
        a[1].mult[q] = 1.0;
        a[1].lexp[q] = 1;
    }
    for (int k = 2; k <= D; k++) {
        const mono_list *p = &a[k - 1];
        mono_list *o = &a[k];
        size_t cnt = multisets(m, k);
        if (cnt == SIZE_MAX || !mono_reserve(o, cnt ? cnt : 1)) return SIZE_MAX;
        const size_t *offk = ix->off + (size_t)k * (ix->d + 1);
        const size_t *offp = ix->off + (size_t)(k - 1) * (ix->d + 1);
        size_t z = 0, t0 = 0;
        for (size_t q = 0; q < m; q++) {
            const uint32_t j = col[q];
            while (t0 < p->n && p->lead[t0] < j) t0++; /* the tail with lead >= j */
            for (size_t t = t0; t < p->n; t++) {
                size_t in_prev = p->pos[t] - ix->start[k - 1];
                o->pos[z] = ix->start[k] + offk[j] + (in_prev - offp[j]);
                o->val[z] = val[q] * p->val[t];
                /* as build_poly counts them: the exponent of x_j, k! / alpha! */
                unsigned ex = p->lead[t] == j ? p->lexp[t] : 0;
                o->lexp[z] = (unsigned char)(ex + 1);
                o->mult[z] = p->mult[t] * k / (ex + 1);
                o->lead[z++] = j;
            }
        }
        o->n = z;
    }
    /* the coefficients: the top degree's as poly_row fuses them, the lower ones after; when
     * hashed (no table), computed as build_poly computes them */
    double binom = 1.0; /* C(D, k) */
    for (int k = 0; k <= D; k++) {
        double c = binom * pow((double)e->p.coef0, D - k);
        for (size_t t = 0; t < a[k].n; t++) {
            float cf = coef ? coef[a[k].pos[t]] : (float)sqrt(c * a[k].mult[t]);
            a[k].val[t] = a[k].val[t] * cf;
        }
        total += a[k].n;
        binom = binom * (D - k) / (k + 1);
    }
    return total;
}

/* ds's labels and class table into x (its rows allocated). */
static pt_status alloc_like(const pt_dataset *ds, pt_dataset *x)
{
    x->class_values = malloc((ds->nclass ? ds->nclass : 1) * sizeof(double));
    if (!x->class_values ||
        (ds->y && !(x->y = pt_alloc((ds->n ? ds->n : 1) * sizeof(float), "labels"))) ||
        (ds->class_names && !(x->class_names = pt_names_dup(ds->class_names, ds->nclass))))
        return pt_fail(PT_ERR_NOMEM, "cannot allocate the labels of %zu rows", ds->n);
    memcpy(x->cls, ds->cls, ds->n * sizeof(int32_t));
    memcpy(x->class_values, ds->class_values, ds->nclass * sizeof(double));
    x->nclass = ds->nclass;
    if (ds->y) memcpy(x->y, ds->y, ds->n * sizeof(float));
    return PT_OK;
}

/* Feature hashing: the column of monomial pos is the low hash_bits bits of a 64-bit mix of pos
 * and the seed (splitmix64's finaliser), its sign the top bit. */
static uint64_t mix64(uint64_t z)
{
    z += 0x9E3779B97F4A7C15u;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

static uint64_t hash_of(const pt_expander *e, size_t pos)
{
    return mix64((uint64_t)pos ^ mix64(e->p.seed));
}

typedef struct hashed_entry {
    uint32_t col;
    float val;
} hashed_entry;

/* h[0..n) sorted by column, stably: a column's entries stay in monomial order, so its sum is
 * formed in the order hashed_row forms it. LSD radix sort, 8 bits of the column a pass (bits
 * of them in all), a pass skipped where every entry has the same digit; short rows by
 * insertion. tmp holds n entries; the result is in h or in tmp. Linear in n where qsort (glibc's
 * merge sort through a comparator) took most of `ptron expand --degree 2 --hash-bits 20`. */
#define HASHED_INSERTION_MAX 32
static hashed_entry *hashed_sort(hashed_entry *h, hashed_entry *tmp, size_t n, int bits)
{
    if (n <= HASHED_INSERTION_MAX) {
        for (size_t i = 1; i < n; i++) {
            hashed_entry x = h[i];
            size_t j = i;
            for (; j > 0 && h[j - 1].col > x.col; j--) h[j] = h[j - 1];
            h[j] = x;
        }
        return h;
    }
    for (int sh = 0; sh < bits; sh += 8) {
        size_t at[256] = {0};
        for (size_t i = 0; i < n; i++) at[(h[i].col >> sh) & 255]++;
        if (at[(h[0].col >> sh) & 255] == n) continue;
        for (size_t b = 0, sum = 0; b < 256; b++) {
            size_t c = at[b];
            at[b] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++) tmp[at[(h[i].col >> sh) & 255]++] = h[i];
        hashed_entry *t = h;
        h = tmp;
        tmp = t;
    }
    return h;
}

static pt_status hashed_setup(pt_expander *e)
{
    pt_expand_params plain = e->p;
    plain.hash_bits = 0;
    if (pt_expand_dim(&plain, e->d_in) == SIZE_MAX)
        return pt_fail(PT_ERR_LIMIT, "degree-%d polynomial expansion of %zu features: more than "
                       "2^64 monomials to hash", e->p.degree, e->d_in);
    if (!(e->ix = malloc(sizeof *e->ix)))
        return pt_fail(PT_ERR_NOMEM, "cannot allocate the expansion's offsets");
    e->ix->off = NULL;
    return poly_index_init(e->ix, e->p.degree, e->d_in);
}

/* A dense row, hashed: its non-zeros' monomials, each added at its column with its sign, in
 * monomial order (so the same sums as the sparse rows' in pt_expand_with). */
static void hashed_row(const pt_expander *e, const float *x, float *out)
{
    const size_t d = e->d_in;
    uint32_t *col = malloc((d ? d : 1) * sizeof *col);
    float *val = malloc((d ? d : 1) * sizeof *val);
    mono_list a[33] = {{0}};
    memset(out, 0, e->stride_out * sizeof *out);
    size_t m = 0;
    for (size_t j = 0; col && val && j < d; j++)
        if (x[j] != 0.0f) {
            col[m] = (uint32_t)j;
            val[m++] = x[j];
        }
    if (col && val && poly_sparse_row(e, e->ix, col, val, m, a) != SIZE_MAX) {
        const uint64_t mask = ((uint64_t)1 << e->p.hash_bits) - 1;
        for (int k = 0; k <= e->p.degree; k++)
            for (size_t t = 0; t < a[k].n; t++) {
                uint64_t hv = hash_of(e, a[k].pos[t]);
                out[hv & mask] += hv >> 63 ? -a[k].val[t] : a[k].val[t];
            }
    } else {
        /* out of memory: a NaN row, which the paths refuse as non-finite */
        for (size_t j = 0; j < e->d_out; j++) out[j] = NAN;
    }
    mono_free(a, (size_t)e->p.degree + 1);
    free(col);
    free(val);
}

/* POLY on sparse rows into a sparse dataset: count, check the budget, fill. */
static pt_status poly_sparse(const pt_dataset *ds, const pt_expander *e, size_t budget,
                             const char *budget_field, pt_dataset **out)
{
    const size_t n = ds->n, D = (size_t)e->p.degree;
    if (e->d_out > (size_t)UINT32_MAX + 1)
        return pt_fail(PT_ERR_LIMIT, "degree-%d polynomial expansion of %zu features: %zu "
                       "features, beyond the sparse layout's 32-bit columns", e->p.degree,
                       ds->d, e->d_out);
    poly_index ix;
    PT_TRY(poly_index_init(&ix, e->p.degree, ds->d));
    uint64_t *cnt = malloc((n + 1) * sizeof *cnt);
    if (!cnt) {
        free(ix.off);
        return pt_fail(PT_ERR_NOMEM, "cannot allocate the expansion's row counts");
    }
    /* an upper bound of each row's entries: C(m + D, D) */
    cnt[0] = 0;
    for (size_t i = 0; i < n; i++) {
        size_t m = (size_t)(ds->rowptr[i + 1] - ds->rowptr[i]), c = multisets(m + 1, (int)D);
        cnt[i + 1] = c == SIZE_MAX || cnt[i] > UINT64_MAX - c ? UINT64_MAX : cnt[i] + c;
    }
    const uint64_t bound = cnt[n];
    size_t bytes = bound == UINT64_MAX ? SIZE_MAX : pt_sparse_bytes(n, (size_t)bound);
    if (bytes > budget) {
        free(cnt);
        free(ix.off);
        return pt_fail(PT_ERR_LIMIT,
                       "degree-%d polynomial expansion of %zu sparse rows: up to %" PRIu64
                       " non-zeros, %zu bytes (%.1f MiB), over the memory budget of %zu bytes "
                       "(%.1f MiB): raise %s", e->p.degree, n, bound, bytes, bytes / 1048576.0,
                       budget, budget / 1048576.0, budget_field);
    }
    pt_dataset *x = pt_dataset_alloc_sparse(n, e->d_out, (size_t)bound);
    pt_status st = x ? alloc_like(ds, x) : PT_ERR_NOMEM;
    int failed = 0;
    size_t bad_row = SIZE_MAX;
    /* each row into its slot of the bound, then the gaps closed in order */
#pragma omp parallel if (st == PT_OK && n > 256) reduction(| : failed) reduction(min : bad_row)
    {
        mono_list a[33] = {{0}};
        hashed_entry *h = NULL;
        size_t hcap = 0;
#pragma omp for schedule(dynamic, 64)
        for (size_t i = 0; i < n; i++) {
            if (st != PT_OK || failed) continue;
            const uint32_t *col;
            const float *val;
            size_t m = pt_csr_row(ds, i, &col, &val);
            if (poly_sparse_row(e, &ix, col, val, m, a) == SIZE_MAX) {
                failed = 1;
                continue;
            }
            uint64_t z = cnt[i];
            if (e->ix) {
                /* hashed: the entries by column, each column's sum in monomial order */
                size_t nh = 0, tot = 0;
                for (size_t k = 0; k <= D; k++) tot += a[k].n;
                if (tot > hcap) {
                    /* the entries, then the sort's second buffer */
                    hashed_entry *g = realloc(h, 2 * tot * sizeof *g);
                    if (!g) {
                        failed = 1;
                        continue;
                    }
                    h = g;
                    hcap = tot;
                }
                for (size_t k = 0; k <= D; k++)
                    for (size_t t = 0; t < a[k].n; t++) {
                        uint64_t hv = hash_of(e, a[k].pos[t]);
                        h[nh] = (hashed_entry){.col = (uint32_t)(hv & ((1u << e->p.hash_bits) - 1)),
                                               .val = hv >> 63 ? -a[k].val[t] : a[k].val[t]};
                        nh++;
                    }
                const hashed_entry *hs = hashed_sort(h, h + nh, nh, e->p.hash_bits);
                for (size_t t = 0; t < nh;) {
                    float v = 0.0f;
                    size_t u = t;
                    for (; u < nh && hs[u].col == hs[t].col; u++) v += hs[u].val;
                    if (!((v - v) == 0.0f) && i < bad_row) bad_row = i;
                    if (v != 0.0f) {
                        x->col[z] = hs[t].col;
                        x->val[z++] = v;
                    }
                    t = u;
                }
                x->rowptr[i + 1] = z;
                continue;
            }
            for (size_t k = 0; k <= D; k++)
                for (size_t t = 0; t < a[k].n; t++) {
                    float v = a[k].val[t];
                    if (v == 0.0f) continue;
                    if (!((v - v) == 0.0f) && i < bad_row) bad_row = i;
                    x->col[z] = (uint32_t)a[k].pos[t];
                    x->val[z++] = v;
                }
            x->rowptr[i + 1] = z; /* the end of row i, within its slot */
        }
        mono_free(a, D + 1);
        free(h);
    }
    if (st == PT_OK && failed)
        st = pt_fail(PT_ERR_NOMEM, "cannot allocate a row's monomials");
    if (st == PT_OK && bad_row != SIZE_MAX)
        st = pt_fail(PT_ERR_NUMERIC,
                     "row %zu: the expansion overflows float (degree %d); rescale the features",
                     bad_row + 1, e->p.degree);
    if (st == PT_OK) {
        /* close the gaps: row i's entries from cnt[i] to rowptr[i + 1] move down */
        uint64_t at = 0;
        for (size_t i = 0; i < n; i++) {
            uint64_t from = cnt[i], len = x->rowptr[i + 1] - from;
            memmove(x->col + at, x->col + from, len * sizeof *x->col);
            memmove(x->val + at, x->val + from, len * sizeof *x->val);
            x->rowptr[i] = at;
            at += len;
        }
        x->rowptr[n] = at;
        x->nnz = (size_t)at;
    }
    free(cnt);
    free(ix.off);
    if (st != PT_OK) {
        pt_dataset_free(x);
        return st;
    }
    *out = x;
    return PT_OK;
}

/* RFF of sparse rows, one row (see above). */
static void rff_sparse_row(const pt_expander *e, const uint32_t *col, const float *val, size_t m,
                           float *out)
{
    const size_t so = e->stride_out, ldw = e->ldw;
    for (size_t k0 = 0; k0 < so; k0 += PT_RFF_CHUNK) {
        float acc[PT_RFF_CHUNK] = {0};
        for (size_t q = 0; q < m; q++) {
            const float xj = val[q], *w = e->Wt + (size_t)col[q] * ldw + k0;
            if (xj == 0.0f) continue;
            for (size_t u = 0; u < PT_RFF_CHUNK; u++) acc[u] += xj * w[u];
        }
        memcpy(out + k0, acc, (so - k0 < PT_RFF_CHUNK ? so - k0 : PT_RFF_CHUNK) * sizeof(float));
    }
    e->k->cos(out, e->b, e->d_out, e->scale);
}

pt_status pt_expand_with(const pt_dataset *ds, const pt_expander *e, size_t budget,
                         const char *budget_field, pt_dataset **out)
{
    *out = NULL;
    if (ds->d != e->d_in)
        return pt_fail(PT_ERR_INVALID, "expander built for %zu features, data has %zu", e->d_in,
                       ds->d);
    const bool sparse = ds->layout == PT_LAYOUT_SPARSE;
    if (sparse && e->p.kind == PT_EXPAND_POLY) {
        PT_TRY(check_dim(&e->p, ds->d, 0, budget, budget_field));
        return poly_sparse(ds, e, budget, budget_field, out);
    }
    PT_TRY(check_dim(&e->p, ds->d, ds->n, budget, budget_field));
    /* compact rows: each block widened into a buffer of its thread first (the rows of the
     * float32 copy, which is never made), by the kernel table's widening */
    const bool compact = !sparse && ds->dtype != PT_DTYPE_F32;
    const pt_kernels *k = NULL;
    if (compact) PT_TRY(pt_kernels_get(PT_ISA_AUTO, &k));
    pt_dataset *x = pt_dataset_alloc(ds->n, e->d_out);
    if (!x) return PT_ERR_NOMEM;
    pt_status ls = alloc_like(ds, x);
    if (ls != PT_OK) {
        pt_dataset_free(x);
        return ls;
    }

    const size_t n = ds->n, B = block_rows(x->stride), nblocks = (n + B - 1) / B;
    size_t nnz = 0, bad_row = SIZE_MAX;
    int failed = 0;
    /* Blocks in parallel (BLAS runs one thread inside a parallel region); the non-zero count
     * and the finiteness check read each block while it is still in cache. */
#pragma omp parallel reduction(+ : nnz) reduction(min : bad_row) reduction(| : failed)
    {
        float *wide = compact ? pt_alloc(B * ds->stride * sizeof(float), "widened rows") : NULL;
        if (compact && !wide) failed = 1;
#pragma omp for schedule(dynamic)
        for (size_t bi = 0; bi < nblocks; bi++) {
            if (failed) continue;
            size_t i0 = bi * B, rows = n - i0 < B ? n - i0 : B;
            float *o = x->X + i0 * x->stride;
            if (sparse) {
                for (size_t i = 0; i < rows; i++) {
                    const uint32_t *col;
                    const float *val;
                    size_t m = pt_csr_row(ds, i0 + i, &col, &val);
                    rff_sparse_row(e, col, val, m, o + i * x->stride);
                }
            } else {
                pt_expander_block(e, pt_rows_f32(k, ds, i0, rows, wide), ds->stride, rows, o,
                                  x->stride);
            }
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
        pt_free(wide);
    }
    if (failed) {
        pt_dataset_free(x);
        return pt_fail(PT_ERR_NOMEM, "cannot allocate the blocks to widen rows in");
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
    PT_TRY(pt_expand_check_params(p));
    /* a sparse POLY expansion checks its own bytes once it has counted them */
    const bool sparse_poly = ds->layout == PT_LAYOUT_SPARSE && p->kind == PT_EXPAND_POLY;
    PT_TRY(check_dim(p, ds->d, sparse_poly ? 0 : ds->n, p->mem_budget_bytes,
                     "pt_expand_params.mem_budget_bytes"));
    const pt_kernels *k;
    PT_TRY(pt_kernels_get(PT_ISA_AUTO, &k));
    pt_expander *e;
    PT_TRY(pt_expander_create(p, ds->d, k, &e));
    pt_status s =
        pt_expand_with(ds, e, p->mem_budget_bytes, "pt_expand_params.mem_budget_bytes", out);
    pt_expander_free(e);
    return s;
}
