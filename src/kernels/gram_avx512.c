/*
 * Gram micro-kernels for AVX-512F: 16 floats a vector, one panel's row in one register.
 * Compiled with avx512.c's flags into the same library (src/meson.build). Bit for bit
 * gram_scalar.c's results: the same FMA chains and the same IEEE operations in the kernel
 * function (the exp's 2^n by scalef, exact where the result is normal).
 *
 * - tile: 8 rows (half a panel, broadcast) x 48 columns (3 panels, one vector each): 24
 *   accumulators, per feature 3 vector loads and 8 broadcasts for 24 FMAs. features/gram.c
 *   feeds it blocks of 128 features, so the 48-column micro-panel (24 KiB) stays in L1.
 * - row: 8 panels at once against the broadcast row (8 independent chains).
 * - store: a whole 16 x 16 block in registers: kernel function, 16 x 16 register transpose
 *   for the mirror place, streaming stores when allowed (every line is written whole, so
 *   reading it first, the write-allocate, is wasted bandwidth: bench gram/build/impl:tiled).
 */
#include <immintrin.h>

#include "gram_exp.h"
#include "kernels.h"

#define INLINE static inline __attribute__((always_inline))

INLINE __m512 exp16(__m512 x)
{
    __mmask16 ok = _mm512_cmp_ps_mask(x, _mm512_set1_ps(EXP_LO), _CMP_GE_OQ);
    __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(LOG2E)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fmadd_ps(n, _mm512_set1_ps(-EXP_C1), x);
    r = _mm512_fmadd_ps(n, _mm512_set1_ps(-EXP_C2), r);
    __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(EXP_P0), r, _mm512_set1_ps(EXP_P1));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(EXP_P2));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(EXP_P3));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(EXP_P4));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(EXP_P5));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    /* p 2^n in one instruction; exact, as the result is normal wherever ok */
    return _mm512_maskz_scalef_ps(ok, p, n);
}

/* The kernel function on 16 inner products (xs, zs: squared norms, RBF); kind is a constant
 * where the caller is instantiated per kernel. */
INLINE __m512 kval16(const pt_kfun *kf, const pt_kernel kind, __m512 v, __m512 xs, __m512 zs)
{
    if (kind == PT_KERNEL_POLY) {
        __m512 b = _mm512_fmadd_ps(v, _mm512_set1_ps(kf->gamma), _mm512_set1_ps(kf->coef0));
        __m512 r = _mm512_set1_ps(1.0f);
        for (int e = kf->degree;;) {
            if (e & 1) r = _mm512_mul_ps(r, b);
            e >>= 1;
            if (!e) break;
            b = _mm512_mul_ps(b, b);
        }
        v = r;
    } else if (kind == PT_KERNEL_RBF) {
        __m512 a = _mm512_fmadd_ps(v, _mm512_set1_ps(2.0f * kf->gamma),
                                   _mm512_mul_ps(_mm512_add_ps(xs, zs), _mm512_set1_ps(-kf->gamma)));
        /* min returns its second operand when a is NaN: a < 0 ? a : 0, as the reference */
        v = exp16(_mm512_min_ps(a, _mm512_setzero_ps()));
    }
    if (kf->add != 0.0f) v = _mm512_add_ps(v, _mm512_set1_ps(kf->add));
    return v;
}

/* 8 rows x 16 NP columns (NP panels bstep apart, one vector each). */
INLINE void tile_np(const float *A, const float *B, size_t bstep, size_t kc, float *C, size_t ldc,
                    int first, const int NP)
{
    __m512 c[8][3];
#pragma GCC unroll 8
    for (int r = 0; r < 8; r++)
#pragma GCC unroll 3
        for (int q = 0; q < NP; q++)
            c[r][q] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(C + r * ldc + 16 * q);
    for (size_t k = 0; k < kc; k++) {
        __m512 b[3];
#pragma GCC unroll 3
        for (int q = 0; q < NP; q++) b[q] = _mm512_loadu_ps(B + q * bstep + k * 16);
#pragma GCC unroll 8
        for (int r = 0; r < 8; r++) {
            __m512 av = _mm512_set1_ps(A[k * 16 + r]);
#pragma GCC unroll 3
            for (int q = 0; q < NP; q++) c[r][q] = _mm512_fmadd_ps(av, b[q], c[r][q]);
        }
    }
#pragma GCC unroll 8
    for (int r = 0; r < 8; r++)
#pragma GCC unroll 3
        for (int q = 0; q < NP; q++) _mm512_storeu_ps(C + r * ldc + 16 * q, c[r][q]);
}

static void avx512_gram_tile(size_t kc, const float *A, const float *B, size_t bstep, size_t np,
                             float *C, size_t ldc, int first)
{
    if (np == 3) tile_np(A, B, bstep, kc, C, ldc, first, 3);
    else if (np == 2) tile_np(A, B, bstep, kc, C, ldc, first, 2);
    else tile_np(A, B, bstep, kc, C, ldc, first, 1);
}

/* Q panels against the broadcast row x: Q independent chains in flight. */
INLINE void rowq(const float *P, size_t d, const float *x, int Q, float *out)
{
    __m512 c[8];
#pragma GCC unroll 8
    for (int q = 0; q < Q; q++) c[q] = _mm512_setzero_ps();
    for (size_t k = 0; k < d; k++) {
        __m512 av = _mm512_set1_ps(x[k]);
#pragma GCC unroll 8
        for (int q = 0; q < Q; q++) c[q] = _mm512_fmadd_ps(av, _mm512_loadu_ps(P + (q * d + k) * 16), c[q]);
    }
#pragma GCC unroll 8
    for (int q = 0; q < Q; q++) _mm512_storeu_ps(out + q * 16, c[q]);
}

static void avx512_gram_row(const float *P, size_t d, size_t npan, const float *x, float *out)
{
    size_t p = 0;
    for (; p + 8 <= npan; p += 8) rowq(P + p * d * 16, d, x, 8, out + p * 16);
    for (; p + 2 <= npan; p += 2) rowq(P + p * d * 16, d, x, 2, out + p * 16);
    for (; p < npan; p++) rowq(P + p * d * 16, d, x, 1, out + p * 16);
}

static void avx512_gram_norms(const float *P, size_t d, float *out)
{
    __m512 c = _mm512_setzero_ps();
    for (size_t k = 0; k < d; k++) {
        __m512 v = _mm512_loadu_ps(P + k * 16);
        c = _mm512_fmadd_ps(v, v, c);
    }
    _mm512_storeu_ps(out, c);
}

static void avx512_gram_kfun(const pt_kfun *kf, const float *dot, float xn, const float *zn,
                             float *out, size_t n)
{
    const int rbf = kf->kind == PT_KERNEL_RBF;
    const __m512 vx = _mm512_set1_ps(xn);
    for (size_t j = 0; j < n; j += 16) {
        __m512 z = rbf ? _mm512_loadu_ps(zn + j) : _mm512_setzero_ps();
        _mm512_storeu_ps(out + j, kval16(kf, kf->kind, _mm512_loadu_ps(dot + j), vx, z));
    }
}

static void avx512_gram_exp(const float *x, float *y, size_t n)
{
    for (size_t j = 0; j < n; j += 16) _mm512_storeu_ps(y + j, exp16(_mm512_loadu_ps(x + j)));
}

/* 16 x 16 transpose in registers: w[c] lane i = v[i] lane c. */
INLINE void transpose16(const __m512 *v, __m512 *w)
{
    __m512 t[16], u[16], s[16];
#pragma GCC unroll 8
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_ps(v[i], v[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(v[i], v[i + 1]);
    }
    /* u[4g + c], 128-bit lane L: column 4L + c of rows 4g..4g+3 */
#pragma GCC unroll 4
    for (int g = 0; g < 16; g += 4) {
        u[g + 0] = _mm512_shuffle_ps(t[g], t[g + 2], 0x44);
        u[g + 1] = _mm512_shuffle_ps(t[g], t[g + 2], 0xEE);
        u[g + 2] = _mm512_shuffle_ps(t[g + 1], t[g + 3], 0x44);
        u[g + 3] = _mm512_shuffle_ps(t[g + 1], t[g + 3], 0xEE);
    }
    /* s[c]: columns c, c+8 of rows 0-7 ... then whole columns */
#pragma GCC unroll 4
    for (int c = 0; c < 4; c++) {
        s[c] = _mm512_shuffle_f32x4(u[c], u[c + 4], 0x88);
        s[c + 4] = _mm512_shuffle_f32x4(u[c], u[c + 4], 0xdd);
        s[c + 8] = _mm512_shuffle_f32x4(u[c + 8], u[c + 12], 0x88);
        s[c + 12] = _mm512_shuffle_f32x4(u[c + 8], u[c + 12], 0xdd);
    }
#pragma GCC unroll 4
    for (int c = 0; c < 4; c++) {
        w[c] = _mm512_shuffle_f32x4(s[c], s[c + 8], 0x88);
        w[c + 8] = _mm512_shuffle_f32x4(s[c], s[c + 8], 0xdd);
        w[c + 4] = _mm512_shuffle_f32x4(s[c + 4], s[c + 12], 0x88);
        w[c + 12] = _mm512_shuffle_f32x4(s[c + 4], s[c + 12], 0xdd);
    }
}

INLINE void store_block(const pt_kfun *kf, const pt_kernel kind, const float *C, size_t ldc,
                        const float *xn, const float *zn, size_t nrow, size_t ncol, float *G,
                        float *Gt, size_t ldg, int stream)
{
    const __m512 zs = kind == PT_KERNEL_RBF ? _mm512_loadu_ps(zn) : _mm512_setzero_ps();
    __m512 v[16], w[16];
#pragma GCC unroll 16
    for (int r = 0; r < 16; r++) {
        __m512 xs = kind == PT_KERNEL_RBF ? _mm512_set1_ps(xn[r]) : zs;
        v[r] = kval16(kf, kind, _mm512_loadu_ps(C + r * ldc), xs, zs);
    }
    if (Gt) transpose16(v, w);
    if (stream) {
#pragma GCC unroll 16
        for (int r = 0; r < 16; r++) _mm512_stream_ps(G + r * ldg, v[r]);
        if (Gt) {
#pragma GCC unroll 16
            for (int c = 0; c < 16; c++) _mm512_stream_ps(Gt + c * ldg, w[c]);
        }
    } else if (nrow == 16 && ncol == 16) {
#pragma GCC unroll 16
        for (int r = 0; r < 16; r++) _mm512_storeu_ps(G + r * ldg, v[r]);
        if (Gt) {
#pragma GCC unroll 16
            for (int c = 0; c < 16; c++) _mm512_storeu_ps(Gt + c * ldg, w[c]);
        }
    } else {
        __mmask16 cm = (__mmask16)((1u << ncol) - 1u), rm = (__mmask16)((1u << nrow) - 1u);
        for (size_t r = 0; r < nrow; r++) _mm512_mask_storeu_ps(G + r * ldg, cm, v[r]);
        if (Gt)
            for (size_t c = 0; c < ncol; c++) _mm512_mask_storeu_ps(Gt + c * ldg, rm, w[c]);
    }
}

/* One instance of store_block per kernel, inlined here: the block's 256 values go through
 * the kernel function without a branch. */
static void avx512_gram_store(const pt_kfun *kf, const float *C, size_t ldc, const float *xn,
                              const float *zn, size_t nrow, size_t ncol, float *G, float *Gt,
                              size_t ldg, int stream)
{
    if (kf->kind == PT_KERNEL_RBF)
        store_block(kf, PT_KERNEL_RBF, C, ldc, xn, zn, nrow, ncol, G, Gt, ldg, stream);
    else if (kf->kind == PT_KERNEL_POLY)
        store_block(kf, PT_KERNEL_POLY, C, ldc, xn, zn, nrow, ncol, G, Gt, ldg, stream);
    else
        store_block(kf, PT_KERNEL_LINEAR, C, ldc, xn, zn, nrow, ncol, G, Gt, ldg, stream);
}

static void avx512_gram_fence(void) { _mm_sfence(); }

const pt_gram_kernels pt_gram_kernels_avx512 = {
    .mr = 8,
    .np = 3,
    .tile = avx512_gram_tile,
    .row = avx512_gram_row,
    .norms = avx512_gram_norms,
    .kfun = avx512_gram_kfun,
    .exp = avx512_gram_exp,
    .store = avx512_gram_store,
    .fence = avx512_gram_fence,
};
