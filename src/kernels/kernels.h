/*
 * The SIMD kernel table: one instance per ISA (scalar.c, avx2.c, avx512.c, neon.c, each with
 * its Gram micro-kernels in gram_<isa>.c, its sparse-row kernels in sparse_<isa>.c and its
 * feature-expansion kernels in expand_<isa>.c), all with the same signatures; dispatch.c picks
 * one once. scalar.c, gram_scalar.c, sparse_scalar.c and expand_scalar.c are the reference the
 * others are tested against. Kernels never allocate, never thread, never call BLAS: the layers
 * above (features/gram.c, the paths) do that.
 *
 * Lengths are in floats and may be any value >= 0 (the hot paths pass the padded stride, a
 * multiple of 16, but tests pass 0..257 and misaligned pointers), except where an entry
 * states otherwise (the Gram micro-kernels work on whole panels of 16).
 */
#ifndef PT_KERNELS_H
#define PT_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ptron.h"

/* A kernel function of inner products v = x.z (the kernel path; features/gram.h states the
 * kernels, their accuracy and the rule that makes every ISA agree bit for bit). */
/* A kernel expression (PT_KERNEL_EXPR; parsed, evaluated and printed by
 * features/kernel_expr.c): a tree of nodes in an array, children before their parent, the
 * root last. Every node is a function of x.z, |x|^2 and |z|^2. */
#define PT_KEXPR_NODES 48
typedef enum pt_kexpr_op {
    PT_KX_LINEAR,    /* x.z */
    PT_KX_POLY,      /* (a x.z + b)^degree */
    PT_KX_RBF,       /* exp(-a |x - z|^2) */
    PT_KX_GEOMETRIC, /* sum over k = 0..degree of (a x.z)^k: the geometric series kernel */
    PT_KX_CONST,     /* a */
    PT_KX_ADD,       /* l + r */
    PT_KX_MUL,       /* l r */
    PT_KX_NORMALIZE  /* l(x, z) / sqrt(l(x, x) l(z, z)) */
} pt_kexpr_op;
typedef struct pt_kexpr_node {
    uint8_t op, l, r; /* l, r: children (indices into node) */
    int degree;
    float a, b;       /* gamma (a PT_GAMMA_ rule until resolved), coef0, the constant */
} pt_kexpr_node;
typedef struct pt_kexpr {
    size_t n; /* nodes; the root is node[n - 1] */
    pt_kexpr_node node[PT_KEXPR_NODES];
} pt_kexpr;

typedef struct pt_kfun {
    pt_kernel kind;
    int degree;
    float gamma, coef0;
    float add; /* 1 with the bias (K + 1), else 0 */
    pt_kexpr expr; /* PT_KERNEL_EXPR */
} pt_kfun;

/*
 * The Gram micro-kernels, one signature for every ISA (BLIS's micro-kernel style):
 * features/gram.c packs the rows, tiles, threads and calls these for the arithmetic (the
 * kernel path chooses the storage).
 *
 * Packed rows: panels of 16 rows, k-major, P[(p d + k) 16 + l] is feature k of row 16 p + l.
 * Every inner product is one fused multiply-add chain over the features in ascending order,
 * starting from 0, and the kernel function the same IEEE operations as gram_scalar.c's (its
 * exp included), so every ISA gives scalar's bits: gram_scalar.c is the reference.
 */

/* The tile micro-kernel: C[r][16 q + l] for r < mr, q < np, l < 16, each the chain over
 * k < kc of A[16 k + r] B[q bstep + 16 k + l], continued from C's value (from 0 if first).
 * A: mr rows inside a packed panel; B: np <= the table's np panels, bstep floats apart. */
typedef void pt_gram_tile_ukr(size_t kc, const float *A, const float *B, size_t bstep, size_t np,
                              float *C, size_t ldc, int first);

/* Kernel-row inner products: out[16 p + l] = chain over k < d of x[k] P[(p d + k) 16 + l],
 * for the npan panels at P. */
typedef void pt_gram_row_ukr(const float *P, size_t d, size_t npan, const float *x, float *out);

/* The 16 squared norms of one packed panel: out[l] = chain over k < d of P[16 k + l]^2. */
typedef void pt_gram_norms_ukr(const float *P, size_t d, float *out);

/* The kernel function on inner products: out[j] = k(dot[j]) for j < n, n a multiple of 16;
 * xn is the row's squared norm and zn[j] the columns' (read for RBF only). out may be dot. */
typedef void pt_gram_kfun_ukr(const pt_kfun *kf, const float *dot, float xn, const float *zn,
                              float *out, size_t n);

/* exp(x) as the RBF kernel computes it (x <= 0; 0 below -87 and for NaN), n a multiple of 16. */
typedef void pt_gram_exp_ukr(const float *x, float *y, size_t n);

/* One block of a Gram tile: the kernel function on nrow x ncol <= 16 x 16 raw inner products
 * (row r at C + r ldc; xn: the rows' squared norms, zn: the columns', read for RBF only),
 * stored at G (row r at G + r ldg) and, if Gt is not NULL, transposed at Gt (entry (r, c) at
 * Gt[c ldg + r]). C, xn and zn are read as a whole 16 x 16 block (the rest is scratch); only
 * the nrow x ncol entries are written. stream: the block is whole and G, Gt and ldg are
 * multiples of 16 floats from a 64-byte boundary, so non-temporal stores may be used; they
 * are weakly ordered, so the caller runs fence before another thread reads G. */
typedef void pt_gram_store_ukr(const pt_kfun *kf, const float *C, size_t ldc, const float *xn,
                               const float *zn, size_t nrow, size_t ncol, float *G, float *Gt,
                               size_t ldg, int stream);

typedef struct pt_gram_kernels {
    size_t mr; /* rows a tile call: a divisor of 8 */
    size_t np; /* most panels of 16 columns a tile call */
    pt_gram_tile_ukr *tile;
    pt_gram_row_ukr *row;
    pt_gram_norms_ukr *norms;
    pt_gram_kfun_ukr *kfun;
    pt_gram_exp_ukr *exp;
    pt_gram_store_ukr *store;
    void (*fence)(void); /* orders store's non-temporal stores before later ones */
} pt_gram_kernels;

/*
 * The sparse-row kernels (CSR data), one signature for every ISA.
 *
 * A sparse row is nnz pairs (idx[k], val[k]): column indices strictly increasing, and float
 * values. idx and val may start anywhere (a row starts anywhere inside the CSR arrays: no
 * alignment is assumed) and nnz may be 0. A dense operand (w, u, g, buf, the rows of W) has an
 * entry for every index the rows use; only those entries are read or written.
 *
 * A block of CSR rows is (rowptr, idx, val, rows): row r < rows is the nnz = rowptr[r + 1] -
 * rowptr[r] pairs at idx + rowptr[r] and val + rowptr[r]. rowptr holds offsets into the whole
 * CSR arrays, so the rows [r0, r1) of a matrix are (rowptr + r0, idx, val, r1 - r0).
 *
 * Summation order of dot (and of dot_rows, step, step_rows, dot_many, which sum as dot does).
 * sparse_scalar.c sums in ascending k with one accumulator, each product rounded before its
 * add (the textbook order). The SIMD ISAs sum rows of fewer than 32 non-zeros the same way,
 * bit for bit; longer rows in lanes: the first V floor(nnz / V) products (V = 8 on x86, 4 on
 * NEON) fused into lane k mod V of a few accumulators, the accumulators combined pairwise
 * and the lanes in a fixed tree, then the last nnz mod V products added in order. The order
 * depends on nnz only, never on the index values or the alignment, so a result is the same on
 * every run. Every such order is within gamma_nnz sum_k |w[idx[k]] val[k]| of the exact sum
 * (gamma_n = n u / (1 - n u), u = 2^-24), and on integer-valued data whose partial sums stay
 * below 2^24 it is the exact sum, the same on every ISA. Element-wise updates (axpy, axpy2,
 * gemv_t, scatter, clear) round a * val and its add separately on every ISA, so they equal
 * sparse_scalar.c's bit for bit; a row's indices are distinct, so no entry is updated twice by
 * one row.
 *
 * The squared norm of a sparse row (the RBF kernel's) is the dense dot of its values with
 * themselves, pt_kernels.dot(val, val, nnz): no entry of its own.
 */

/* sum_k w[idx[k]] val[k] (a gather). */
typedef float pt_sparse_dot_ukr(const float *w, const uint32_t *idx, const float *val, size_t nnz);

/* w[idx[k]] += a val[k] for k < nnz (a scatter). */
typedef void pt_sparse_axpy_ukr(float a, const uint32_t *idx, const float *val, size_t nnz, float *w);

/* The averaged perceptron's lazy sum on a sparse row, in one pass: w[idx[k]] += a val[k] and
 * u[idx[k]] += c val[k]; the same as axpy(a, .., w) then axpy(c, .., u), bit for bit. */
typedef void pt_sparse_axpy2_ukr(float a, float c, const uint32_t *idx, const float *val, size_t nnz,
                                 float *w, float *u);

/* The online step on a sparse row, fused (the contract of pt_kernels.step): s = dot(w, row) +
 * b * bias; if y s <= tau then w += eta y row (axpy with a = eta y) and b += eta y bias.
 * Returns 1 if it updated, else 0; *score gets s. Equals dot, the test, then axpy, bit for bit. */
typedef int pt_sparse_step_ukr(float *w, float *b, const uint32_t *idx, const float *val, size_t nnz,
                               float y, float tau, float eta, float bias, float *score);

/* The classic online epoch over a block of CSR rows in order (label Y[r] for row r): step on
 * each, with w and b carried from row to row; the same results as step row by row. Returns the
 * number of updates. */
typedef size_t pt_sparse_step_rows_ukr(float *w, float *b, const uint64_t *rowptr, const uint32_t *idx,
                                       const float *val, const float *Y, size_t rows, float tau,
                                       float eta, float bias);

/* The averaged online epoch (the lazy sum) over a block of CSR rows in order: for each row,
 * s = dot(w, row) + b bias; if y s <= tau, with a = eta y and c = (float)(*steps) a,
 * axpy2(a, c, row, w, u), *ub += c bias, *b += a bias; *steps += 1 after every row. The same
 * results as those steps row by row (paths/online.h's visit_sparse), bit for bit. Returns the
 * number of updates. */
typedef size_t pt_sparse_step_rows_avg_ukr(float *w, float *u, float *b, float *ub, double *steps,
                                           const uint64_t *rowptr, const uint32_t *idx,
                                           const float *val, const float *Y, size_t rows,
                                           float tau, float eta, float bias);

/* out[r] = dot(w, row r) for a block of CSR rows, each exactly as dot computes it (the batch
 * path's margins X w; the blocked pass's scores; a kernel row against a scattered buffer). */
typedef void pt_sparse_dot_rows_ukr(const float *w, const uint64_t *rowptr, const uint32_t *idx,
                                    const float *val, size_t rows, float *out);

/* g[idx] += coef[r] val for the pairs of every row r of a block of CSR rows, rows in order
 * (X^T coef over the block into one dense buffer): axpy(coef[r], row r, g) for each r, rows
 * whose coef[r] is 0 skipped (they would add only zeros), so bit for bit the same sums as
 * sparse_scalar.c's on every ISA. */
typedef void pt_sparse_gemv_t_ukr(const float *coef, const uint64_t *rowptr, const uint32_t *idx,
                                  const float *val, size_t rows, float *g);

/* out[c] = dot(W + c ldw, row) for c < K, bit for bit: every class of one sample scored in one
 * pass over the row (the multiclass perceptron). */
typedef void pt_sparse_dot_many_ukr(const float *W, size_t ldw, size_t K, const uint32_t *idx,
                                    const float *val, size_t nnz, float *out);

/* buf[idx[k]] = val[k] for k < nnz: a sparse row into a dense buffer that is all zeros, so
 * that other rows can be dotted with it by dot or dot_rows (the dot of two sparse rows: a
 * kernel row, a Gram tile's row); clear sets those entries back to 0, leaving the buffer all
 * zeros again. This is how two sparse rows are dotted: a merge of their sorted indices measured
 * slower for every row length, even for a single pair (bench sparse/pair). */
typedef void pt_sparse_scatter_ukr(const uint32_t *idx, const float *val, size_t nnz, float *buf);
typedef void pt_sparse_clear_ukr(const uint32_t *idx, size_t nnz, float *buf);

typedef struct pt_sparse_kernels {
    pt_sparse_dot_ukr *dot;
    pt_sparse_axpy_ukr *axpy;
    pt_sparse_axpy2_ukr *axpy2;
    pt_sparse_step_ukr *step;
    pt_sparse_step_rows_ukr *step_rows;
    pt_sparse_step_rows_avg_ukr *step_rows_avg;
    pt_sparse_dot_rows_ukr *dot_rows;
    pt_sparse_gemv_t_ukr *gemv_t;
    pt_sparse_dot_many_ukr *dot_many;
    pt_sparse_scatter_ukr *scatter;
    pt_sparse_clear_ukr *clear;
} pt_sparse_kernels;

/*
 * The feature-expansion kernels (features/expand.c builds an expansion's layout once; these fill
 * its rows), one signature for every ISA. They are plain loops of multiplies and adds, each
 * rounded as written (no contraction: -ffp-contract=off), and every output depends on its own
 * inputs only, so every ISA gives expand_scalar.c's bits: the ISAs differ only in the vector
 * width the compiler gives the loops.
 */

/* One segment of a polynomial expansion row: out[dst + t] = x[j] out[src + t] for t < len (the
 * monomials of one degree whose lowest variable is j: x_j times a tail of the previous
 * degree's block). vlen: len rounded up to 16 when that stays inside the row (the segment is
 * then written in whole vectors; what it spills past len lies in later segments or in the
 * padding, all written after it), else 0. */
typedef struct pt_poly_seg {
    size_t src, dst, len;
    size_t j;
    size_t vlen;
} pt_poly_seg;

/* A polynomial expansion's row layout: out[0] = 1, out[1..d_in] = x, then the segments in
 * order, those from top_first on (the top degree) times coef as they are written; then
 * out[0..lower) times coef, and zeros from d_out to stride_out. */
typedef struct pt_poly_layout {
    size_t d_in, d_out, stride_out;
    const pt_poly_seg *segs;
    size_t nseg, top_first;
    size_t lower;
    const float *coef; /* stride_out coefficients */
} pt_poly_layout;

/* Random Fourier features: out[k] = scale cos((W x)_k + b[k]) for k < d_out, zeros to
 * stride_out. Wt is W transposed: d_in rows of ldw floats, ldw at least stride_out rounded up
 * to PT_RFF_CHUNK, zero past d_out (W x is computed PT_RFF_CHUNK outputs at a time, held in
 * registers over the d_in inputs). */
#define PT_RFF_CHUNK 128
typedef struct pt_rff_layout {
    size_t d_in, d_out, stride_out;
    const float *Wt;
    size_t ldw;
    const float *b; /* d_out offsets */
    float scale;
} pt_rff_layout;

/* The cosine below |argument| PT_COS_POLY_LIMIT is a polynomial (Cody-Waite reduction by pi/2
 * in float; absolute error below 1e-7, measured 7.7e-8, against cos of the float argument); a
 * row with a larger argument takes libm's cosf for all its values. */
#define PT_COS_POLY_LIMIT 8192.0f

typedef struct pt_expand_kernels {
    /* One polynomial row of x (d_in floats) into out (stride_out floats). Reads entries of out
     * before it writes them (the whole-vector copies): out must be initialised memory. */
    void (*poly_row)(const pt_poly_layout *L, const float *x, float *out);
    /* One random Fourier row of x (d_in floats) into out (stride_out floats). */
    void (*rff_row)(const pt_rff_layout *L, const float *x, float *out);
    /* v[i] = scale cos(v[i] + add[i]) for i < n. */
    void (*cos)(float *v, const float *add, size_t n, float scale);
} pt_expand_kernels;

/*
 * The compact-row kernels (bf16 and u8 storage, see pt_dtype in ptron.h), one signature for
 * every ISA. A compact row widens to float32 exactly as compact_scalar.c does: bf16 by a
 * 16-bit shift; u8 q with divisor m, from 1 / m split in two floats rh = fl(1 / m) and
 * rl = fl(1 / m - rh), as x = fma(q, rh, q rl) (a multiply, then one fused multiply-add: the
 * correctly rounded q / m for the divisors ptron chooses, see data/data.h's pt_u8_decode), so
 * every ISA gives the same floats. The
 * arithmetic on a widened row is the float32 kernels' of the same ISA (the row is widened into
 * an L1 buffer of n floats, then dot and axpy run on it), so a compact row gives exactly the
 * results its float32 copy gives, on every ISA: a u8 file that holds the float32 values
 * exactly trains the same model, bit for bit.
 */
typedef struct pt_compact_kernels {
    /* out[i] = the bf16 x[i] widened, for i < n (any n, any alignment) */
    void (*widen_bf16)(const uint16_t *x, float *out, size_t n);
    /* out[i] = x[i] / m[i] as above (rh[i] + rl[i] = 1 / m[i]), for i < n */
    void (*widen_u8)(const uint8_t *x, const float *rh, const float *rl, float *out, size_t n);
    /* step_rows (pt_kernels) on compact rows: row r's n elements at X + r ldx elements, of
     * type t (PT_DTYPE_BF16 or PT_DTYPE_U8, m and r its reciprocals rh and rl), each widened
     * (into buf, n floats, where the ISA does not widen in registers) and stepped on as the
     * float32 step_rows does: the same w, b and count as
     * step_rows on the widened rows. */
    size_t (*step_rows)(float *w, float *b, const void *X, size_t ldx, pt_dtype t, const float *m,
                        const float *r, const float *Y, size_t rows, size_t n, float tau,
                        float eta, float bias, float *buf);
    /* The batch path's two reads of one compact row x (n elements of type t; m, r as above, and
     * one = pt_one_divisor(m, r, n), which the caller finds once for the matrix): dot returns
     * w . x and axpy does y += a x, each exactly the float32 dot and axpy (pt_kernels) of the
     * widened row. Where the ISA does not widen in registers, each widens into buf (n floats)
     * first; AVX2 and AVX-512 widen as they load, so the row is read at its stored size and no
     * widened copy is written. */
    float (*dot)(const float *w, const void *x, pt_dtype t, const float *m, const float *r,
                 bool one, size_t n, float *buf);
    void (*axpy)(float a, const void *x, pt_dtype t, const float *m, const float *r, bool one,
                 float *y, size_t n, float *buf);
} pt_compact_kernels;

typedef struct pt_kernels {
    const char *name;
    pt_isa isa;

    /* sum_i a[i] b[i] */
    float (*dot)(const float *a, const float *b, size_t n);

    /* y += alpha x */
    void (*axpy)(float alpha, const float *x, float *y, size_t n);

    /* The online perceptron step, fused: s = w.x + b * bias; if y s <= tau then
     * w += eta y x and b += eta y bias. Returns 1 if it updated, else 0; *score gets s. */
    int (*step)(float *w, float *b, const float *x, size_t n, float y, float tau, float eta,
                float bias, float *score);

    /* The classic online epoch over rows 0..rows-1 in order (row r at X + r * ldx, label Y[r]):
     * step on each, with w and b carried from row to row. Same results as calling step row by
     * row; returns the number of updates. Exists so that the hot loop has no call and no
     * memory traffic of its own per row: driven one step call a row (a counter kept in
     * memory, a score stored each row), the AVX-512 epoch ran slower than AVX2's; in here
     * both run close to the streaming read of the same rows (bench online/epoch, vs_read). */
    size_t (*step_rows)(float *w, float *b, const float *X, size_t ldx, const float *Y, size_t rows,
                        size_t n, float tau, float eta, float bias);

    /* out[r] = w . (X + r * ldx) for r < rows, each exactly as dot computes it (the blocked
     * pass scores a block of rows ahead of its walk with this, on every thread). */
    void (*dot_rows)(const float *w, const float *X, size_t ldx, size_t rows, size_t n, float *out);

    /* Averaged perceptron's lazy sum: w += a x and u += c x in one pass over x. */
    void (*axpy2)(float a, float c, const float *x, float *w, float *u, size_t n);

    /* out[i] = a * x[i] + c * y[i] (used to form the average w - u / count) */
    void (*scale_add)(float a, const float *x, float c, const float *y, float *out, size_t n);

    /* out[c] = W_c . x for the K rows W_c = W + c * ldw: every class of one sample scored in one
     * pass over x (the multiclass perceptron). Summation order may differ from dot's. */
    void (*dot_many)(const float *W, size_t ldw, size_t K, const float *x, size_t n, float *out);

    /* The Gram micro-kernels of the same ISA. */
    const pt_gram_kernels *gram;

    /* The sparse-row (CSR) kernels of the same ISA. */
    const pt_sparse_kernels *sparse;

    /* The feature-expansion kernels of the same ISA. */
    const pt_expand_kernels *expand;

    /* The compact-row kernels of the same ISA. */
    const pt_compact_kernels *compact;
} pt_kernels;

/* Whether the n >= 1 u8 divisors are one (rh[j], rl[j] all rh[0], rl[0]): the compact
 * step_rows then keep the reciprocals in registers. n compares, once a call of many rows. */
static inline bool pt_one_divisor(const float *rh, const float *rl, size_t n)
{
    for (size_t j = 1; j < n; j++)
        if (rh[j] != rh[0] || rl[j] != rl[0]) return false;
    return n > 0;
}

/* The widening functions each ISA's compact_<isa>.c defines (its table is in <isa>.c, whose
 * dot and axpy the compact step_rows inlines). */
void pt_widen_bf16_scalar(const uint16_t *x, float *out, size_t n);
void pt_widen_u8_scalar(const uint8_t *x, const float *m, const float *r, float *out, size_t n);
#if defined(PT_HAVE_AVX2)
extern const pt_compact_kernels pt_compact_kernels_avx2; /* fused step_rows */
void pt_widen_bf16_avx2(const uint16_t *x, float *out, size_t n);
void pt_widen_u8_avx2(const uint8_t *x, const float *m, const float *r, float *out, size_t n);
#endif
#if defined(PT_HAVE_AVX512)
extern const pt_compact_kernels pt_compact_kernels_avx512; /* fused step_rows */
void pt_widen_bf16_avx512(const uint16_t *x, float *out, size_t n);
void pt_widen_u8_avx512(const uint8_t *x, const float *m, const float *r, float *out, size_t n);
#endif
#if defined(PT_HAVE_NEON)
void pt_widen_bf16_neon(const uint16_t *x, float *out, size_t n);
void pt_widen_u8_neon(const uint8_t *x, const float *m, const float *r, float *out, size_t n);
#endif

/* The tables each ISA file defines; NULL-free only for those compiled in (see dispatch.c).
 * The Gram ones live in gram_<isa>.c, the sparse ones in sparse_<isa>.c and the expansion ones
 * in expand_<isa>.c, built with the same flags into the same library. */
extern const pt_kernels pt_kernels_scalar;
extern const pt_gram_kernels pt_gram_kernels_scalar;
extern const pt_sparse_kernels pt_sparse_kernels_scalar;
extern const pt_expand_kernels pt_expand_kernels_scalar;
#if defined(PT_HAVE_AVX2)
extern const pt_kernels pt_kernels_avx2;
extern const pt_gram_kernels pt_gram_kernels_avx2;
extern const pt_sparse_kernels pt_sparse_kernels_avx2;
extern const pt_expand_kernels pt_expand_kernels_avx2;
#endif
#if defined(PT_HAVE_AVX512)
extern const pt_kernels pt_kernels_avx512;
extern const pt_gram_kernels pt_gram_kernels_avx512;
extern const pt_sparse_kernels pt_sparse_kernels_avx512;
extern const pt_expand_kernels pt_expand_kernels_avx512;
#endif
#if defined(PT_HAVE_NEON)
extern const pt_kernels pt_kernels_neon;
extern const pt_gram_kernels pt_gram_kernels_neon;
extern const pt_sparse_kernels pt_sparse_kernels_neon;
extern const pt_expand_kernels pt_expand_kernels_neon;
#endif

/* The table for an ISA: PT_ISA_AUTO means pt_isa_default(). Fails with PT_ERR_UNSUPPORTED
 * (and a message) when the build or the CPU lacks it. */
pt_status pt_kernels_get(pt_isa isa, const pt_kernels **out);

/* The choice pt_isa_default() makes once from PTRON_ISA, as a function the tests can call with
 * any value: forced is the variable's value (NULL when unset). "auto", NULL or "" give the best
 * available ISA; an unknown or unavailable name gives the best too, with a PT_LOG_WARN. */
pt_isa pt_isa_choose(const char *forced);

#endif /* PT_KERNELS_H */
