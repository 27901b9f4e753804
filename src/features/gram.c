/*
 * Kernel matrices: packing, the tiled Gram build, kernel rows on demand and prediction blocks.
 * See gram.h for the layout, the determinism rule and the accuracy stated.
 *
 * The arithmetic is done by the Gram micro-kernels of the table each call is given (k->gram,
 * src/kernels/gram_<isa>.c); this file decides what they compute where, and threads (the
 * kernels never do).
 *
 * Gram build: features in blocks of KC = 128, so that a micro-kernel's B operand (up to
 * 3 panels of 16 columns: 24 KiB) stays in L1 and the 240-row block in L2. A tile's inner
 * products land in a per-thread 240 x 240 buffer; its kernel function and stores (in place,
 * and transposed into the mirror place) are then done 16 x 16 block by block between the
 * micro-kernel calls of the next tile (streaming stores where the ISA has them), so the
 * writes of the fresh Gram lines overlap the FMAs. Diagonal tiles compute their upper half
 * only. Work: n (n + 1) d / 2 multiply-adds, as ssyrk's, plus T / n of that on the diagonal
 * tiles.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "gram.h"
#include "kernel_expr.h"

#define KC 128 /* features per block of the Gram micro-kernel */

static size_t round_up(size_t x, size_t to) { return (x + to - 1) / to * to; }
static size_t min_sz(size_t a, size_t b) { return a < b ? a : b; }

void pt_kfun_from_params(pt_kfun *kf, const pt_train_params *p)
{
    kf->kind = p->kernel.kind;
    kf->degree = p->kernel.degree;
    kf->gamma = p->kernel.gamma;
    kf->coef0 = p->kernel.coef0;
    kf->add = p->bias ? 1.0f : 0.0f;
    /* an expression the parameters' check let through parses (else it evaluates to 0) */
    if (p->kernel.kind == PT_KERNEL_EXPR && pt_kexpr_parse(p->kernel.expr, &kf->expr) != PT_OK)
        kf->expr.n = 0;
}

/* Kernel expressions are evaluated by features/kernel_expr.c, the named kernels by the
 * table's micro-kernels. */
static void apply_kfun(const pt_gram_kernels *g, const pt_kfun *kf, const float *dot, float xn,
                       const float *zn, float *out, size_t n)
{
    if (kf->kind == PT_KERNEL_EXPR) pt_kexpr_kfun(kf, dot, xn, zn, out, n);
    else g->kfun(kf, dot, xn, zn, out, n);
}

static int needs_norms(pt_kernel kind) { return kind == PT_KERNEL_RBF || kind == PT_KERNEL_EXPR; }

/* ================================================================================ tiles */

/* A computed tile (raw inner products in C) waiting for its kernel function and its stores
 * into the Gram, done 16 x 16 block by block (column blocks outer, row blocks inner). */
typedef struct pending {
    const pt_gram_kernels *g;
    const pt_kfun *kf;
    const float *norm;
    float *G;
    size_t ldg;
    const float *C;
    size_t ldc, i0, ni, j0, nj;
    int diag;      /* a tile on the diagonal: only blocks ib <= jb were computed */
    int stream;    /* G 64-byte aligned with ldg a multiple of 16: streaming stores */
    size_t jb, ib; /* next block */
    int active;
} pending;

static void pending_next(pending *p)
{
    p->ib += 16;
    if (p->ib >= p->ni || (p->diag && p->ib > p->jb)) {
        p->ib = 0;
        p->jb += 16;
        if (p->jb >= p->nj) p->active = 0;
    }
}

/* Up to count blocks of a pending tile: stored at G[i][j] and, off the diagonal block, at
 * G[j][i]. C holds whole 16 x 16 blocks (the tile buffer is T x T, T a multiple of 16) and
 * the norms npad entries, so the store may read them whole. */
static void pending_store(pending *p, size_t count)
{
    const float *norm = p->norm;
    const size_t ldg = p->ldg;
    for (; count > 0 && p->active; count--, pending_next(p)) {
        const size_t ib = p->ib, jb = p->jb, gi = p->i0 + ib, gj = p->j0 + jb;
        const size_t nrow = min_sz(16, p->ni - ib), ncol = min_sz(16, p->nj - jb);
        float *Gt = p->diag && ib == jb ? NULL : p->G + gj * ldg + gi;
        if (p->kf->kind == PT_KERNEL_EXPR)
            pt_kexpr_store(p->kf, p->C + ib * p->ldc + jb, p->ldc, norm ? norm + gi : NULL,
                           norm ? norm + gj : NULL, nrow, ncol, p->G + gi * ldg + gj, Gt, ldg);
        else
            p->g->store(p->kf, p->C + ib * p->ldc + jb, p->ldc, norm ? norm + gi : NULL,
                        norm ? norm + gj : NULL, nrow, ncol, p->G + gi * ldg + gj, Gt, ldg,
                        p->stream && nrow == 16 && ncol == 16);
    }
}

/* Raw inner products of a tile: C[i][j] for i < round_up(ni, 8), j < round_up(nj, 16), by the
 * micro-kernel (mr rows x up to np panels a call) over blocks of KC features; with upper, the
 * 16 x 16 blocks below the diagonal may be skipped. After each call, per_call blocks of the
 * pending tile pd (if any) are finished. */
static void tile_dots(const pt_gram_kernels *g, const pt_gram_rows *a, size_t i0, size_t ni,
                      const pt_gram_rows *b, size_t j0, size_t nj, float *C, size_t ldc, int upper,
                      pending *pd, size_t per_call)
{
    const size_t d = a->d, nir = round_up(ni, 8), npan = (nj + 15) / 16, bstep = d * 16;
    size_t kb = 0;
    do { /* once with kc = 0 when d = 0: the products are then 0 */
        size_t kc = min_sz(KC, d - kb);
        for (size_t q = 0; q < npan; q += g->np) {
            size_t np = min_sz(g->np, npan - q);
            const float *B = b->P + ((j0 / 16 + q) * d + kb) * 16;
            for (size_t ir = 0; ir < nir && !(upper && ir >= (q + np) * 16); ir += g->mr) {
                size_t gi = i0 + ir;
                const float *A = a->P + ((gi / 16) * d + kb) * 16 + gi % 16;
                g->tile(kc, A, B, bstep, np, C + ir * ldc + q * 16, ldc, kb == 0);
                if (pd && pd->active) pending_store(pd, per_call);
            }
        }
        kb += kc;
    } while (kb < d);
}

/* One thread's share of the tiles, each tile's stores interleaved with the next's
 * micro-kernel calls. C2: the thread's two tile buffers. */
static void full_tiles(const pt_gram_rows *r, const pt_kfun *kf, const pt_gram_kernels *g,
                       float *G, size_t ldg, const size_t *tl, ptrdiff_t nt, float *C2)
{
    const size_t n = r->n, T = PT_GRAM_TILE, nb = (n + T - 1) / T;
    pending pd = {.g = g, .kf = kf, .norm = r->norm, .G = G, .ldg = ldg, .ldc = T,
                  .stream = (uintptr_t)G % 64 == 0 && ldg % 16 == 0};
    int cur = 0;
#pragma omp for schedule(dynamic, 1) nowait
    for (ptrdiff_t t = 0; t < nt; t++) {
        size_t bi = tl[t] / nb, bj = tl[t] % nb;
        size_t i0 = bi * T, j0 = bj * T, ni = min_sz(T, n - i0), nj = min_sz(T, n - j0);
        float *C = C2 + (size_t)cur * T * T;
        /* spread the pending tile's blocks evenly over this tile's micro-kernel calls */
        size_t calls = (round_up(ni, 8) / g->mr) * (((nj + 15) / 16 + g->np - 1) / g->np) *
                       ((r->d + KC - 1) / KC + (r->d == 0));
        if (bi == bj) calls = calls / 2 + 1;
        size_t blocks = ((pd.ni + 15) / 16) * ((pd.nj + 15) / 16);
        size_t per_call = pd.active ? (blocks + calls - 1) / calls : 1;
        tile_dots(g, r, i0, ni, r, j0, nj, C, T, bi == bj, &pd, per_call);
        if (pd.active) pending_store(&pd, SIZE_MAX);
        pd.C = C;
        pd.i0 = i0;
        pd.ni = ni;
        pd.j0 = j0;
        pd.nj = nj;
        pd.diag = bi == bj;
        pd.ib = pd.jb = 0;
        pd.active = 1;
        cur ^= 1;
    }
    if (pd.active) pending_store(&pd, SIZE_MAX);
    g->fence(); /* the streaming stores are weakly ordered */
}

/* ================================================================================ rows */

size_t pt_gram_rows_bytes(size_t n, size_t d, pt_kernel kind)
{
    size_t npad = round_up(n, 16), b;
    if (!pt_mul_ok(npad, d, &b) || !pt_mul_ok(b, sizeof(float), &b)) return SIZE_MAX;
    if (needs_norms(kind)) b += npad * sizeof(float);
    return b;
}

/* Pack rows into r->P (and their squared norms into r->norm when it is set). */
static void pack_rows(pt_gram_rows *r, size_t d_norm, const pt_gram_kernels *g, int threads)
{
    const size_t n = r->n, d = r->d, stride = r->stride;
    const float *X = r->X;
    const ptrdiff_t np = (ptrdiff_t)(r->npad / 16);
#pragma omp parallel for num_threads(threads > 0 ? threads : 1) schedule(static) if (threads > 1 && n * d > 65536)
    for (ptrdiff_t pp = 0; pp < np; pp++) {
        size_t p = (size_t)pp;
        float *dst = r->P + p * d * 16;
        for (size_t l = 0; l < 16; l++) {
            size_t i = p * 16 + l;
            const float *x = X + i * stride;
            for (size_t k = 0; k < d; k++) dst[k * 16 + l] = i < n ? x[k] : 0.0f;
        }
        if (!r->norm) continue;
        float nrm[16];
        g->norms(dst, d, nrm);
        for (size_t l = 0; l < 16; l++) {
            size_t i = p * 16 + l;
            float acc = nrm[l];
            /* the chain continued over features past d (fmaf: correctly rounded, so the same
             * bits as any ISA's FMA) */
            if (i < n)
                for (size_t k = d; k < d_norm; k++) acc = fmaf(X[i * stride + k], X[i * stride + k], acc);
            r->norm[i] = acc;
        }
    }
}

static void rows_setup(pt_gram_rows *r, const float *X, size_t n, size_t d, size_t stride)
{
    memset(r, 0, sizeof *r);
    r->n = n;
    r->d = d;
    r->npad = round_up(n, 16);
    r->X = X;
    r->stride = stride;
}

pt_status pt_gram_rows_init(pt_gram_rows *r, const float *X, size_t n, size_t d, size_t stride,
                            size_t d_norm, pt_kernel kind, const pt_kernels *k, int threads)
{
    rows_setup(r, X, n, d, stride);
    size_t bytes = pt_gram_rows_bytes(n, d, PT_KERNEL_LINEAR);
    if (bytes == SIZE_MAX) return pt_fail(PT_ERR_LIMIT, "packed rows: %zu x %zu overflows", n, d);
    if (!(r->P = pt_alloc(bytes, "packed kernel rows"))) return PT_ERR_NOMEM;
    if (needs_norms(kind) && !(r->norm = pt_alloc(r->npad * sizeof(float), "squared norms"))) {
        pt_gram_rows_free(r);
        return PT_ERR_NOMEM;
    }
    pack_rows(r, d_norm, k->gram, threads);
    return PT_OK;
}

void pt_gram_rows_pack(pt_gram_rows *r, const float *X, size_t n, size_t d, size_t stride,
                       size_t d_norm, pt_kernel kind, const pt_kernels *k, float *P, float *norm)
{
    rows_setup(r, X, n, d, stride);
    r->P = P;
    r->norm = needs_norms(kind) ? norm : NULL;
    pack_rows(r, d_norm, k->gram, 1);
}

void pt_gram_rows_free(pt_gram_rows *r)
{
    if (!r) return;
    pt_free(r->P);
    pt_free(r->norm);
    r->P = r->norm = NULL;
}

/* ================================================================================ Gram */

size_t pt_gram_full_scratch_bytes(int threads)
{
    /* two tile buffers a thread: one being computed, one being stored */
    return (size_t)(threads > 0 ? threads : 1) * 2 * PT_GRAM_TILE * PT_GRAM_TILE * sizeof(float);
}

pt_status pt_gram_full(const pt_gram_rows *r, const pt_kfun *kf, const pt_kernels *k, float *G,
                       size_t ldg, int threads)
{
    if (threads < 1) threads = 1;
    const size_t n = r->n, T = PT_GRAM_TILE, nb = (n + T - 1) / T, ntiles = nb * (nb + 1) / 2;
    if (n == 0) return PT_OK;
    float *scratch = pt_alloc(pt_gram_full_scratch_bytes(threads), "Gram tile buffers");
    if (!scratch) return PT_ERR_NOMEM;
    /* tiles in row-major order of the upper triangle: (bi, bj), bj >= bi */
    size_t *tl = malloc(ntiles * sizeof *tl);
    if (!tl) {
        pt_free(scratch);
        return pt_fail(PT_ERR_NOMEM, "cannot allocate the Gram tile list (%zu tiles)", ntiles);
    }
    for (size_t bi = 0, t = 0; bi < nb; bi++)
        for (size_t bj = bi; bj < nb; bj++) tl[t++] = bi * nb + bj;

#pragma omp parallel num_threads(threads)
    {
#ifdef _OPENMP
        float *C = scratch + (size_t)omp_get_thread_num() * 2 * T * T;
#else
        float *C = scratch;
#endif
        full_tiles(r, kf, k->gram, G, ldg, tl, (ptrdiff_t)ntiles, C);
    }
    free(tl);
    pt_free(scratch);
    return PT_OK;
}

/* ============================================================================ kernel rows */

void pt_gram_row(const pt_gram_rows *r, const pt_kfun *kf, const pt_kernels *k, size_t i,
                 float *out, float a, float *f, int threads)
{
    const pt_gram_kernels *g = k->gram;
    const float *x = r->X + i * r->stride;
    const float xn = r->norm ? r->norm[i] : 0.0f;
    const size_t npan = r->npad / 16, n = r->n, d = r->d;
    /* chunks of 8 panels (128 columns); threads only when the row is worth a fork */
    const size_t chunk = 8;
    const ptrdiff_t nc = (ptrdiff_t)((npan + chunk - 1) / chunk);
    const int par = threads > 1 && n * (d + 8) >= 65536;
#pragma omp parallel for num_threads(threads > 0 ? threads : 1) schedule(static) if (par)
    for (ptrdiff_t c = 0; c < nc; c++) {
        size_t p0 = (size_t)c * chunk, p1 = min_sz(npan, p0 + chunk);
        float *o = out + p0 * 16;
        g->row(r->P + p0 * d * 16, d, p1 - p0, x, o);
        apply_kfun(g, kf, o, xn, r->norm ? r->norm + p0 * 16 : NULL, o, (p1 - p0) * 16);
        if (p1 * 16 > n)
            for (size_t j = n; j < p1 * 16; j++) out[j] = 0.0f;
        if (f) k->axpy(a, o, f + p0 * 16, min_sz(p1 * 16, n) - p0 * 16);
    }
}

void pt_gram_kvec(const pt_gram_rows *r, const pt_kfun *kf, const pt_kernels *k, const float *x,
                  float xn, float *out)
{
    const size_t npan = r->npad / 16;
    k->gram->row(r->P, r->d, npan, x, out);
    apply_kfun(k->gram, kf, out, xn, r->norm, out, npan * 16);
}

void pt_gram_block(const pt_gram_rows *a, size_t i0, size_t ni, const pt_gram_rows *b, size_t j0,
                   size_t nj, const pt_kfun *kf, const pt_kernels *k, float *C, size_t ldc)
{
    const size_t njc = round_up(nj, 16);
    tile_dots(k->gram, a, i0, ni, b, j0, nj, C, ldc, 0, NULL, 0);
    for (size_t i = 0; i < ni; i++)
        apply_kfun(k->gram, kf, C + i * ldc, a->norm ? a->norm[i0 + i] : 0.0f,
                   b->norm ? b->norm + j0 : NULL, C + i * ldc, njc);
}

/* ========================================================================= sparse rows */

void pt_gram_sparse_norms(const uint64_t *rowptr, const float *val, size_t n, const pt_kernels *k,
                          float *norm)
{
    for (size_t j = 0; j < n; j++) {
        const float *v = val + rowptr[j];
        norm[j] = k->dot(v, v, (size_t)(rowptr[j + 1] - rowptr[j]));
    }
    for (size_t j = n; j < round_up(n, 16); j++) norm[j] = 0.0f;
}

size_t pt_gram_csc_bytes(size_t d, size_t nnz)
{
    size_t a, b;
    if (!pt_mul_ok(d + 1, sizeof(uint64_t), &a) || !pt_mul_ok(nnz, 8, &b) || a > SIZE_MAX - b)
        return SIZE_MAX;
    return a + b;
}

pt_status pt_gram_csc_init(pt_gram_csc *t, const uint64_t *rowptr, const uint32_t *col,
                           const float *val, size_t n, size_t d)
{
    memset(t, 0, sizeof *t);
    const size_t nnz = (size_t)(rowptr[n] - rowptr[0]);
    t->n = n;
    t->d = d;
    t->ptr = pt_calloc((d + 1) * sizeof *t->ptr, "transposed rows' offsets");
    t->row = pt_alloc((nnz ? nnz : 1) * sizeof *t->row, "transposed rows' indices");
    t->val = pt_alloc((nnz ? nnz : 1) * sizeof *t->val, "transposed rows' values");
    if (!t->ptr || !t->row || !t->val) {
        pt_gram_csc_free(t);
        return PT_ERR_NOMEM;
    }
    for (uint64_t z = rowptr[0]; z < rowptr[n]; z++) t->ptr[col[z] + 1]++;
    for (size_t c = 0; c < d; c++) t->ptr[c + 1] += t->ptr[c];
    /* rows in order: each column's entries come out increasing; ptr[c] is column c's next slot
     * until the end, then shifted back */
    for (size_t j = 0; j < n; j++)
        for (uint64_t z = rowptr[j]; z < rowptr[j + 1]; z++) {
            uint64_t at = t->ptr[col[z]]++;
            t->row[at] = (uint32_t)j;
            t->val[at] = val[z];
        }
    for (size_t c = d; c > 0; c--) t->ptr[c] = t->ptr[c - 1];
    t->ptr[0] = 0;
    return PT_OK;
}

void pt_gram_csc_free(pt_gram_csc *t)
{
    if (!t) return;
    pt_free(t->ptr);
    pt_free(t->row);
    pt_free(t->val);
    t->ptr = NULL;
    t->row = NULL;
    t->val = NULL;
}

void pt_gram_csc_kvec(const pt_gram_csc *t, const pt_kfun *kf, const pt_kernels *k,
                      const uint32_t *xcol, const float *xval, size_t xnnz, float xn,
                      const float *zn, float *out, float a, float *f)
{
    const size_t n = t->n, n16 = round_up(n, 16);
    memset(out, 0, n16 * sizeof *out);
    for (size_t q = 0; q < xnnz && xcol[q] < t->d; q++) {
        const float v = xval[q];
        const uint64_t z1 = t->ptr[xcol[q] + 1];
        for (uint64_t z = t->ptr[xcol[q]]; z < z1; z++) {
            float p = v * t->val[z]; /* rounded, then added: the textbook order */
            out[t->row[z]] += p;
        }
    }
    apply_kfun(k->gram, kf, out, xn, zn, out, n16);
    for (size_t j = n; j < n16; j++) out[j] = 0.0f;
    if (f) k->axpy(a, out, f, n);
}

/* ========================================================================= reference */

double pt_kfun_ref(const pt_kfun *kf, const float *x, const float *z, size_t d)
{
    double dot = 0.0, dist = 0.0, v;
    for (size_t k = 0; k < d; k++) {
        dot += (double)x[k] * z[k];
        dist += ((double)x[k] - z[k]) * ((double)x[k] - z[k]);
    }
    double xn = 0.0, zn = 0.0;
    for (size_t k = 0; kf->kind == PT_KERNEL_EXPR && k < d; k++) {
        xn += (double)x[k] * x[k];
        zn += (double)z[k] * z[k];
    }
    switch (kf->kind) {
    case PT_KERNEL_EXPR: v = pt_kexpr_eval(&kf->expr, dot, xn, zn); break;
    case PT_KERNEL_POLY: v = pow((double)kf->gamma * dot + kf->coef0, kf->degree); break;
    case PT_KERNEL_RBF: v = exp(-(double)kf->gamma * dist); break;
    default: v = dot;
    }
    return v + kf->add;
}

double pt_gram_tolerance(const pt_kfun *kf, size_t d, double xnorm2, double znorm2)
{
    const double eps = 0x1p-24, nxz = sqrt(xnorm2 * znorm2);
    switch (kf->kind) {
    case PT_KERNEL_POLY: {
        double T = kf->gamma * nxz + fabs((double)kf->coef0);
        return kf->degree * (d + 4.0) * eps * pow(T, kf->degree) + eps * kf->add;
    }
    case PT_KERNEL_RBF:
        return (2.0 * d + 4.0) * eps * kf->gamma * (xnorm2 + znorm2) + 5.0 * eps + eps * kf->add;
    default: return (d + 1.0) * eps * (nxz + kf->add);
    }
}
