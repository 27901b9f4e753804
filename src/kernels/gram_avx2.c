/*
 * Gram micro-kernels for AVX2 + FMA: 8 floats a vector. Compiled with avx2.c's flags into the
 * same library (src/meson.build). Bit for bit gram_scalar.c's results: the same FMA chains and
 * the same IEEE operations in the kernel function.
 *
 * - tile: 8 rows (half a panel) x 16 columns (one panel) as two passes of 4 rows (broadcast) x
 *   16 columns (two vectors): 8 accumulators, per feature 2 vector loads and 4 broadcasts for
 *   8 FMAs.
 * - row: 4 panels at once against the broadcast row (4 independent pairs of chains).
 * - store: the kernel function on 8 x 8 sub-blocks, stored in place and, transposed in
 *   registers, in the mirror place. A whole block is written line by line (each 64-byte line
 *   in two consecutive stores), with streaming stores when allowed: every line is written
 *   whole, so reading it first (the write-allocate) is wasted bandwidth. Against 8 x 8
 *   sub-blocks stored one after the other with plain stores this speeds up the linear Gram
 *   build at small d (bound by its stores) and matches it for RBF (bound by the exp) and at
 *   d = 256 (bench gram/build/impl:tiled).
 */
#include <immintrin.h>

#include "gram_exp.h"
#include "kernels.h"

#define INLINE static inline __attribute__((always_inline))

INLINE __m256 exp8(__m256 x)
{
    __m256 ok = _mm256_cmp_ps(x, _mm256_set1_ps(EXP_LO), _CMP_GE_OQ);
    __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(LOG2E)),
                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fmadd_ps(n, _mm256_set1_ps(-EXP_C1), x);
    r = _mm256_fmadd_ps(n, _mm256_set1_ps(-EXP_C2), r);
    __m256 p = _mm256_fmadd_ps(_mm256_set1_ps(EXP_P0), r, _mm256_set1_ps(EXP_P1));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(EXP_P2));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(EXP_P3));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(EXP_P4));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(EXP_P5));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    /* 2^n built in the exponent field; lanes below EXP_LO (any garbage there) masked to 0 */
    __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_and_ps(ok, _mm256_mul_ps(p, _mm256_castsi256_ps(e)));
}

/* The kernel function on 8 inner products (xs, zs: squared norms, RBF). */
INLINE __m256 kval8(const pt_kfun *kf, __m256 v, __m256 xs, __m256 zs)
{
    if (kf->kind == PT_KERNEL_POLY) {
        __m256 b = _mm256_fmadd_ps(v, _mm256_set1_ps(kf->gamma), _mm256_set1_ps(kf->coef0));
        __m256 r = _mm256_set1_ps(1.0f);
        for (int e = kf->degree;;) {
            if (e & 1) r = _mm256_mul_ps(r, b);
            e >>= 1;
            if (!e) break;
            b = _mm256_mul_ps(b, b);
        }
        v = r;
    } else if (kf->kind == PT_KERNEL_RBF) {
        __m256 a = _mm256_fmadd_ps(v, _mm256_set1_ps(2.0f * kf->gamma),
                                   _mm256_mul_ps(_mm256_add_ps(xs, zs), _mm256_set1_ps(-kf->gamma)));
        /* min returns its second operand when a is NaN: a < 0 ? a : 0, as the reference */
        v = exp8(_mm256_min_ps(a, _mm256_setzero_ps()));
    }
    if (kf->add != 0.0f) v = _mm256_add_ps(v, _mm256_set1_ps(kf->add));
    return v;
}

/* 4 rows x 16 columns: 8 accumulators. */
INLINE void tile4(size_t kc, const float *A, const float *B, float *C, size_t ldc, int first)
{
    __m256 c[4][2];
#pragma GCC unroll 4
    for (int r = 0; r < 4; r++)
#pragma GCC unroll 2
        for (int q = 0; q < 2; q++)
            c[r][q] = first ? _mm256_setzero_ps() : _mm256_loadu_ps(C + r * ldc + 8 * q);
    for (size_t k = 0; k < kc; k++) {
        __m256 b0 = _mm256_loadu_ps(B + k * 16), b1 = _mm256_loadu_ps(B + k * 16 + 8);
#pragma GCC unroll 4
        for (int r = 0; r < 4; r++) {
            __m256 av = _mm256_broadcast_ss(A + k * 16 + r);
            c[r][0] = _mm256_fmadd_ps(av, b0, c[r][0]);
            c[r][1] = _mm256_fmadd_ps(av, b1, c[r][1]);
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < 4; r++)
#pragma GCC unroll 2
        for (int q = 0; q < 2; q++) _mm256_storeu_ps(C + r * ldc + 8 * q, c[r][q]);
}

/* 8 rows as two passes of 4 (the second reads B again, from L1): half the calls. */
static void avx2_gram_tile(size_t kc, const float *A, const float *B, size_t bstep, size_t np,
                           float *C, size_t ldc, int first)
{
    (void)bstep;
    (void)np; /* always 1 (the table's np) */
    tile4(kc, A, B, C, ldc, first);
    tile4(kc, A + 4, B, C + 4 * ldc, ldc, first);
}

/* Q panels against the broadcast row x: Q independent pairs of chains in flight. */
INLINE void rowq(const float *P, size_t d, const float *x, int Q, float *out)
{
    __m256 c[4][2];
    for (int q = 0; q < Q; q++) c[q][0] = c[q][1] = _mm256_setzero_ps();
    for (size_t k = 0; k < d; k++) {
        __m256 av = _mm256_broadcast_ss(x + k);
        for (int q = 0; q < Q; q++) {
            const float *B = P + (q * d + k) * 16;
            c[q][0] = _mm256_fmadd_ps(av, _mm256_loadu_ps(B), c[q][0]);
            c[q][1] = _mm256_fmadd_ps(av, _mm256_loadu_ps(B + 8), c[q][1]);
        }
    }
    for (int q = 0; q < Q; q++) {
        _mm256_storeu_ps(out + q * 16, c[q][0]);
        _mm256_storeu_ps(out + q * 16 + 8, c[q][1]);
    }
}

static void avx2_gram_row(const float *P, size_t d, size_t npan, const float *x, float *out)
{
    size_t p = 0;
    for (; p + 4 <= npan; p += 4) rowq(P + p * d * 16, d, x, 4, out + p * 16);
    for (; p < npan; p++) rowq(P + p * d * 16, d, x, 1, out + p * 16);
}

static void avx2_gram_norms(const float *P, size_t d, float *out)
{
    __m256 c0 = _mm256_setzero_ps(), c1 = _mm256_setzero_ps();
    for (size_t k = 0; k < d; k++) {
        __m256 v0 = _mm256_loadu_ps(P + k * 16), v1 = _mm256_loadu_ps(P + k * 16 + 8);
        c0 = _mm256_fmadd_ps(v0, v0, c0);
        c1 = _mm256_fmadd_ps(v1, v1, c1);
    }
    _mm256_storeu_ps(out, c0);
    _mm256_storeu_ps(out + 8, c1);
}

static void avx2_gram_kfun(const pt_kfun *kf, const float *dot, float xn, const float *zn,
                           float *out, size_t n)
{
    const int rbf = kf->kind == PT_KERNEL_RBF;
    const __m256 vx = _mm256_set1_ps(xn);
    for (size_t j = 0; j < n; j += 8) {
        __m256 z = rbf ? _mm256_loadu_ps(zn + j) : _mm256_setzero_ps();
        _mm256_storeu_ps(out + j, kval8(kf, _mm256_loadu_ps(dot + j), vx, z));
    }
}

static void avx2_gram_exp(const float *x, float *y, size_t n)
{
    for (size_t j = 0; j < n; j += 8) _mm256_storeu_ps(y + j, exp8(_mm256_loadu_ps(x + j)));
}

/* 8 x 8 transpose in registers: w[c] lane i = v[i] lane c. */
INLINE void transpose8(const __m256 *v, __m256 *w)
{
    __m256 t[8], u[8];
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_ps(v[i], v[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(v[i], v[i + 1]);
    }
    for (int g = 0; g < 8; g += 4) {
        u[g + 0] = _mm256_shuffle_ps(t[g], t[g + 2], 0x44);
        u[g + 1] = _mm256_shuffle_ps(t[g], t[g + 2], 0xEE);
        u[g + 2] = _mm256_shuffle_ps(t[g + 1], t[g + 3], 0x44);
        u[g + 3] = _mm256_shuffle_ps(t[g + 1], t[g + 3], 0xEE);
    }
    for (int c = 0; c < 4; c++) {
        w[c] = _mm256_permute2f128_ps(u[c], u[c + 4], 0x20);
        w[c + 4] = _mm256_permute2f128_ps(u[c], u[c + 4], 0x31);
    }
}

/* The first k lanes of v at p. */
INLINE void store_first(float *p, __m256 v, size_t k)
{
    if (k == 8) {
        _mm256_storeu_ps(p, v);
    } else {
        __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)k), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        _mm256_maskstore_ps(p, m, v);
    }
}

/* A whole 16 x 16 block: its kernel values, then each line of G and of the mirror in two
 * consecutive stores (a streamed line is then written whole at once). */
INLINE void store_whole(const pt_kfun *kf, const float *C, size_t ldc, const float *xn,
                        const float *zn, float *G, float *Gt, size_t ldg, int stream)
{
    const int rbf = kf->kind == PT_KERNEL_RBF;
    __m256 v[2][16], w[2][16]; /* v[h][r]: columns 8 h.. of row r; w[h][c]: rows 8 h.. of column c */
    const __m256 zs0 = rbf ? _mm256_loadu_ps(zn) : _mm256_setzero_ps();
    const __m256 zs1 = rbf ? _mm256_loadu_ps(zn + 8) : _mm256_setzero_ps();
    for (int r = 0; r < 16; r++) {
        __m256 xs = _mm256_set1_ps(rbf ? xn[r] : 0.0f);
        v[0][r] = kval8(kf, _mm256_loadu_ps(C + r * ldc), xs, zs0);
        v[1][r] = kval8(kf, _mm256_loadu_ps(C + r * ldc + 8), xs, zs1);
        if (stream) {
            _mm256_stream_ps(G + r * ldg, v[0][r]);
            _mm256_stream_ps(G + r * ldg + 8, v[1][r]);
        } else {
            _mm256_storeu_ps(G + r * ldg, v[0][r]);
            _mm256_storeu_ps(G + r * ldg + 8, v[1][r]);
        }
    }
    if (!Gt) return;
    /* the sub-block of rows 8 q.. and columns 8 h.., transposed: w[q][8 h..] */
    for (int h = 0; h < 2; h++) {
        transpose8(&v[h][0], &w[0][8 * h]);
        transpose8(&v[h][8], &w[1][8 * h]);
    }
    for (int c = 0; c < 16; c++) {
        if (stream) {
            _mm256_stream_ps(Gt + c * ldg, w[0][c]);
            _mm256_stream_ps(Gt + c * ldg + 8, w[1][c]);
        } else {
            _mm256_storeu_ps(Gt + c * ldg, w[0][c]);
            _mm256_storeu_ps(Gt + c * ldg + 8, w[1][c]);
        }
    }
}

static void avx2_gram_store(const pt_kfun *kf, const float *C, size_t ldc, const float *xn,
                            const float *zn, size_t nrow, size_t ncol, float *G, float *Gt,
                            size_t ldg, int stream)
{
    if (nrow == 16 && ncol == 16) {
        store_whole(kf, C, ldc, xn, zn, G, Gt, ldg, stream);
        return;
    }
    /* a partial block (the matrix's edge): 8 x 8 sub-blocks, masked stores */
    const int rbf = kf->kind == PT_KERNEL_RBF;
    for (size_t cb = 0; cb < ncol; cb += 8) {
        const size_t nc = ncol - cb < 8 ? ncol - cb : 8;
        const __m256 zs = rbf ? _mm256_loadu_ps(zn + cb) : _mm256_setzero_ps();
        for (size_t rb = 0; rb < nrow; rb += 8) {
            const size_t nr = nrow - rb < 8 ? nrow - rb : 8;
            __m256 v[8], w[8];
            for (int r = 0; r < 8; r++) {
                __m256 xs = _mm256_set1_ps(rbf ? xn[rb + r] : 0.0f);
                v[r] = kval8(kf, _mm256_loadu_ps(C + (rb + r) * ldc + cb), xs, zs);
            }
            for (size_t r = 0; r < nr; r++) store_first(G + (rb + r) * ldg + cb, v[r], nc);
            if (!Gt) continue;
            transpose8(v, w);
            for (size_t c = 0; c < nc; c++) store_first(Gt + (cb + c) * ldg + rb, w[c], nr);
        }
    }
}

static void avx2_gram_fence(void) { _mm_sfence(); }

const pt_gram_kernels pt_gram_kernels_avx2 = {
    .mr = 8,
    .np = 1,
    .tile = avx2_gram_tile,
    .row = avx2_gram_row,
    .norms = avx2_gram_norms,
    .kfun = avx2_gram_kfun,
    .exp = avx2_gram_exp,
    .store = avx2_gram_store,
    .fence = avx2_gram_fence,
};
