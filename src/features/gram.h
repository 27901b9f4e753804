/*
 * Kernel matrices for the kernel (dual) path: the full Gram matrix, single kernel rows and
 * rectangular kernel blocks (prediction), all from one tile code.
 *
 * Layout. Rows are packed once into panels of 16 rows, k-major: P[(p d + k) 16 + l] is
 * feature k of row 16 p + l (rows past n are zero). A panel is then both a contiguous
 * "B" operand (16 lanes per feature) and 16 contiguous broadcasts of an "A" operand.
 *
 * Determinism. Every inner product, wherever it is computed (Gram tile, kernel row,
 * prediction block; by any ISA's micro-kernels, src/kernels/gram_*.c), is one fused
 * multiply-add chain over the features in ascending order starting from 0, and the kernel
 * function is the same sequence of IEEE operations in every ISA (the exp below included). So a
 * kernel value does not depend on where or how it was computed: the full Gram, the rows
 * computed on demand and the scores of the training rows agree bit for bit, which is what lets
 * the kernel path switch storage without changing the model, and K is exactly symmetric.
 *
 * The arithmetic is the micro-kernels' (k->gram of the pt_kernels table each call is given:
 * the path's, from pt_kernels_get); this file packs, tiles and threads.
 *
 * Kernels (x.z over the first d features; the bias adds the constant-1 coordinate, K + 1):
 *   linear  x.z
 *   poly    (gamma x.z + coef0)^degree   (one FMA, then binary powering)
 *   rbf     exp(min(0, 2 gamma x.z + -gamma (|x|^2 + |z|^2)))   (one FMA: the distance form
 *           -gamma |x - z|^2, its float32 cancellation clamped at 0)
 *
 * Accuracy guaranteed against the kernel evaluated exactly (in double, from the same float
 * inputs), eps = 2^-24, first order in eps:
 *   linear  |K - K_ref| <= (d + 1) eps (|x||z| + add)
 *   poly    |K - K_ref| <= degree (d + 4) eps T^degree + eps add,  T = gamma |x||z| + |coef0|
 *   rbf     |K - K_ref| <= (2d + 4) eps gamma (|x|^2 + |z|^2) + 5 eps + eps add
 * (add is 1 with the bias, else 0). For RBF the first term is the float32 cancellation in
 * |x|^2 + |z|^2 - 2 x.z (d eps |x|^2 from each norm, 2 d eps |x||z| from the dot, 4 eps from
 * the roundings), clamped at 0; the second the exp (relative error under 2 ulp for arguments
 * in [-87, 0]; measured 0.89 ulp on 2^24 points; exactly 0 below -87, exactly 1 at 0).
 * pt_gram_tolerance computes the bound; the tests check it against a double-precision Gram.
 */
#ifndef PT_GRAM_H
#define PT_GRAM_H

#include "data/data.h"
#include "kernels/kernels.h"

/* Rows per panel, and the square tile of the Gram build (a multiple of 48 and 16). */
#define PT_GRAM_PANEL 16
#define PT_GRAM_TILE 240

/* Packed rows: a view the tile code reads. */
typedef struct pt_gram_rows {
    size_t n, d;       /* rows, features used in inner products */
    size_t npad;       /* n rounded up to 16 */
    float *P;          /* npad / 16 panels of d x 16 floats (owned) */
    float *norm;       /* npad squared norms (owned; RBF only, else NULL) */
    const float *X;    /* the rows as given (not owned): broadcasts for kernel rows */
    size_t stride;
} pt_gram_rows;

void pt_kfun_from_params(pt_kfun *kf, const pt_train_params *p);

/* Bytes pt_gram_rows_init allocates for n rows of d features. SIZE_MAX on overflow. */
size_t pt_gram_rows_bytes(size_t n, size_t d, pt_kernel kind);

/* Pack n rows of X (stride floats apart) using their first d features. For RBF the squared
 * norms run over the first d_norm >= d features (prediction: a model's support vectors keep
 * their full norm when the data has fewer features). threads: OpenMP threads. */
pt_status pt_gram_rows_init(pt_gram_rows *r, const float *X, size_t n, size_t d, size_t stride,
                            size_t d_norm, pt_kernel kind, const pt_kernels *k, int threads);
void pt_gram_rows_free(pt_gram_rows *r);
/* The same into caller memory (P: round_up(n, 16) d floats; norm: round_up(n, 16) floats,
 * used for RBF only), single-threaded, nothing allocated: r does not own them. */
void pt_gram_rows_pack(pt_gram_rows *r, const float *X, size_t n, size_t d, size_t stride,
                       size_t d_norm, pt_kernel kind, const pt_kernels *k, float *P, float *norm);

/* The full n x n matrix K(x_i, x_j) into G (row i at G + i ldg, ldg >= n), built by OpenMP
 * over the PT_GRAM_TILE tiles of the upper triangle and mirrored (streaming stores when G is
 * 64-byte aligned and ldg a multiple of 16). Needs two tile buffers of PT_GRAM_TILE^2 floats a
 * thread (pt_gram_full_scratch_bytes); fails only if they cannot be had. */
size_t pt_gram_full_scratch_bytes(int threads);
pt_status pt_gram_full(const pt_gram_rows *r, const pt_kfun *kf, const pt_kernels *k, float *G,
                       size_t ldg, int threads);

/* Kernel row i: out[j] = K(x_i, x_j) for j < n; out needs r->npad floats (entries past n are
 * zeros). If f is not NULL, also f[j] += a out[j] for j < n, by k->axpy on each chunk while it
 * is hot (element-wise, so the result does not depend on the chunking). OpenMP over chunks of
 * 128 columns with up to threads threads, when the row is large enough to pay a fork. */
void pt_gram_row(const pt_gram_rows *r, const pt_kfun *kf, const pt_kernels *k, size_t i,
                 float *out, float a, float *f, int threads);

/* Kernel values of one row x (its squared norm xn, for RBF) against all rows of r:
 * out[j] = K(x, x_j), out needs r->npad floats. Single-threaded (small r: the kernel path's
 * pending updates). */
void pt_gram_kvec(const pt_gram_rows *r, const pt_kfun *kf, const pt_kernels *k, const float *x,
                  float xn, float *out);

/* A block of kernel values between rows [i0, i0 + ni) of a and [j0, j0 + nj) of b (same d),
 * single-threaded: C[i ldc + j]. i0 a multiple of 8, j0 a multiple of 16; C needs
 * round_up(ni, 8) rows of ldc >= round_up(nj, 16) floats (the padding is scratch). */
void pt_gram_block(const pt_gram_rows *a, size_t i0, size_t ni, const pt_gram_rows *b, size_t j0,
                   size_t nj, const pt_kfun *kf, const pt_kernels *k, float *C, size_t ldc);

/* Sparse (CSR) rows: kernel values from sparse inner products (not the dense chain above, so
 * sparse and dense kernel values agree to rounding, not bit for bit), then the same kernel
 * function k->gram->kfun, RBF from the squared norms. */

/* Squared norms of n CSR rows (the RBF kernel's): norm[j] = k->dot(val, val, nnz) of row j,
 * zeros from n to round_up(n, 16). */
void pt_gram_sparse_norms(const uint64_t *rowptr, const float *val, size_t n, const pt_kernels *k,
                          float *norm);


/* CSR rows transposed (CSC), for kernel values by columns: the inner products of a
 * sparse row x with all n rows are sum over x's non-zeros (c, v), in increasing c, of v times
 * column c, added into the n outputs. A row then costs sum over its columns of their non-zeros
 * (on text-like data with Zipf popularity, news20-like: about 1/6 of a pass over all the rows'
 * non-zeros), and each product is summed in the textbook order (increasing column, products
 * rounded, from 0): the kernel value of x and z is the same whichever of the two is the row,
 * bit for bit, and equals sparse_scalar.c's dot. */
typedef struct pt_gram_csc {
    size_t n, d;
    uint64_t *ptr; /* d + 1 offsets */
    uint32_t *row; /* the rows of each column, increasing */
    float *val;
} pt_gram_csc;

/* Bytes pt_gram_csc_init allocates (SIZE_MAX on overflow). */
size_t pt_gram_csc_bytes(size_t d, size_t nnz);
/* Transpose n CSR rows of d columns. */
pt_status pt_gram_csc_init(pt_gram_csc *t, const uint64_t *rowptr, const uint32_t *col,
                           const float *val, size_t n, size_t d);
void pt_gram_csc_free(pt_gram_csc *t);

/* out[j] = K(x, z_j) for the n rows z_j of t, x the sparse row (xcol, xval, xnnz: only its
 * columns below t->d are read); zeros from n to round_up(n, 16). xn and zn (round_up(n, 16)
 * entries) as for pt_gram_sparse_kvec; with f, f[j] += a out[j]. Single-threaded. */
void pt_gram_csc_kvec(const pt_gram_csc *t, const pt_kfun *kf, const pt_kernels *k,
                      const uint32_t *xcol, const float *xval, size_t xnnz, float xn,
                      const float *zn, float *out, float a, float *f);

/* The exact kernel (double) from float inputs, and the bound above on |K - K_ref|. */
double pt_kfun_ref(const pt_kfun *kf, const float *x, const float *z, size_t d);
double pt_gram_tolerance(const pt_kfun *kf, size_t d, double xnorm2, double znorm2);

#endif /* PT_GRAM_H */
