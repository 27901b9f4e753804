/*
 * Gram micro-kernels for aarch64 Advanced SIMD (NEON): 4 floats a vector. Built with neon.c
 * into the same library. Bit for bit gram_scalar.c's results: vfmaq_f32 is the fused
 * multiply-add, and the kernel function runs the same IEEE operations (vmulq and vaddq stay
 * separate under the project-wide -ffp-contract=off).
 *
 * - tile: 8 rows x 16 columns as two passes of 4 rows x 16 columns (one panel, four
 *   vectors): 16 accumulators; per feature one load of the 4 rows' values (contiguous in the
 *   panel) and 4 of the columns for 16 FMAs by lane (vfmaq_laneq_f32: the same fused
 *   operation with a broadcast operand).
 * - row: 2 panels at once against the broadcast row (8 independent chains).
 * - store: 4 x 4 sub-blocks through the kernel function in registers, stored in place and,
 *   transposed in registers, in the mirror place (plain stores: stream is only a permission).
 */
#include <arm_neon.h>

#include "gram_exp.h"
#include "kernels.h"

#define INLINE static inline __attribute__((always_inline))

INLINE float32x4_t exp4(float32x4_t x)
{
    uint32x4_t ok = vcgeq_f32(x, vdupq_n_f32(EXP_LO)); /* false for NaN */
    float32x4_t n = vrndnq_f32(vmulq_f32(x, vdupq_n_f32(LOG2E)));
    float32x4_t r = vfmaq_f32(x, n, vdupq_n_f32(-EXP_C1));
    r = vfmaq_f32(r, n, vdupq_n_f32(-EXP_C2));
    float32x4_t p = vfmaq_f32(vdupq_n_f32(EXP_P1), vdupq_n_f32(EXP_P0), r);
    p = vfmaq_f32(vdupq_n_f32(EXP_P2), p, r);
    p = vfmaq_f32(vdupq_n_f32(EXP_P3), p, r);
    p = vfmaq_f32(vdupq_n_f32(EXP_P4), p, r);
    p = vfmaq_f32(vdupq_n_f32(EXP_P5), p, r);
    p = vfmaq_f32(vdupq_n_f32(1.0f), p, r);
    p = vfmaq_f32(vdupq_n_f32(1.0f), p, r);
    /* 2^n built in the exponent field; lanes below EXP_LO (any garbage there) masked to 0 */
    int32x4_t e = vshlq_n_s32(vaddq_s32(vcvtq_s32_f32(n), vdupq_n_s32(127)), 23);
    float32x4_t v = vmulq_f32(p, vreinterpretq_f32_s32(e));
    return vreinterpretq_f32_u32(vandq_u32(ok, vreinterpretq_u32_f32(v)));
}

/* The kernel function on 4 inner products (xs, zs: squared norms, RBF). */
INLINE float32x4_t kval4(const pt_kfun *kf, float32x4_t v, float32x4_t xs, float32x4_t zs)
{
    if (kf->kind == PT_KERNEL_POLY) {
        float32x4_t b = vfmaq_f32(vdupq_n_f32(kf->coef0), v, vdupq_n_f32(kf->gamma));
        float32x4_t r = vdupq_n_f32(1.0f);
        for (int e = kf->degree;;) {
            if (e & 1) r = vmulq_f32(r, b);
            e >>= 1;
            if (!e) break;
            b = vmulq_f32(b, b);
        }
        v = r;
    } else if (kf->kind == PT_KERNEL_RBF) {
        float32x4_t a = vfmaq_f32(vmulq_f32(vaddq_f32(xs, zs), vdupq_n_f32(-kf->gamma)), v,
                                  vdupq_n_f32(2.0f * kf->gamma));
        /* a < 0 ? a : 0 by a select, as the reference (vminq would keep NaN and -0) */
        const float32x4_t zero = vdupq_n_f32(0.0f);
        v = exp4(vbslq_f32(vcltq_f32(a, zero), a, zero));
    }
    if (kf->add != 0.0f) v = vaddq_f32(v, vdupq_n_f32(kf->add));
    return v;
}

/* 4 rows x 16 columns: 16 accumulators. */
INLINE void tile4(size_t kc, const float *A, const float *B, float *C, size_t ldc, int first)
{
    float32x4_t c[4][4];
#pragma GCC unroll 4
    for (int r = 0; r < 4; r++)
#pragma GCC unroll 4
        for (int q = 0; q < 4; q++) c[r][q] = first ? vdupq_n_f32(0.0f) : vld1q_f32(C + r * ldc + 4 * q);
    for (size_t k = 0; k < kc; k++) {
        const float32x4_t a = vld1q_f32(A + k * 16);
        float32x4_t b[4];
#pragma GCC unroll 4
        for (int q = 0; q < 4; q++) b[q] = vld1q_f32(B + k * 16 + 4 * q);
#pragma GCC unroll 4
        for (int q = 0; q < 4; q++) {
            c[0][q] = vfmaq_laneq_f32(c[0][q], b[q], a, 0);
            c[1][q] = vfmaq_laneq_f32(c[1][q], b[q], a, 1);
            c[2][q] = vfmaq_laneq_f32(c[2][q], b[q], a, 2);
            c[3][q] = vfmaq_laneq_f32(c[3][q], b[q], a, 3);
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < 4; r++)
#pragma GCC unroll 4
        for (int q = 0; q < 4; q++) vst1q_f32(C + r * ldc + 4 * q, c[r][q]);
}

/* 8 rows as two passes of 4 (the second reads B again, from L1): half the calls. */
static void neon_gram_tile(size_t kc, const float *A, const float *B, size_t bstep, size_t np,
                           float *C, size_t ldc, int first)
{
    (void)bstep;
    (void)np; /* always 1 (the table's np) */
    tile4(kc, A, B, C, ldc, first);
    tile4(kc, A + 4, B, C + 4 * ldc, ldc, first);
}

/* Q panels against the broadcast row x: 4 Q independent chains in flight. */
INLINE void rowq(const float *P, size_t d, const float *x, int Q, float *out)
{
    float32x4_t c[2][4];
#pragma GCC unroll 2
    for (int q = 0; q < Q; q++)
#pragma GCC unroll 4
        for (int v = 0; v < 4; v++) c[q][v] = vdupq_n_f32(0.0f);
    for (size_t k = 0; k < d; k++) {
        const float32x4_t xv = vdupq_n_f32(x[k]);
#pragma GCC unroll 2
        for (int q = 0; q < Q; q++)
#pragma GCC unroll 4
            for (int v = 0; v < 4; v++)
                c[q][v] = vfmaq_f32(c[q][v], xv, vld1q_f32(P + (q * d + k) * 16 + 4 * v));
    }
#pragma GCC unroll 2
    for (int q = 0; q < Q; q++)
#pragma GCC unroll 4
        for (int v = 0; v < 4; v++) vst1q_f32(out + q * 16 + 4 * v, c[q][v]);
}

static void neon_gram_row(const float *P, size_t d, size_t npan, const float *x, float *out)
{
    size_t p = 0;
    for (; p + 2 <= npan; p += 2) rowq(P + p * d * 16, d, x, 2, out + p * 16);
    for (; p < npan; p++) rowq(P + p * d * 16, d, x, 1, out + p * 16);
}

static void neon_gram_norms(const float *P, size_t d, float *out)
{
    float32x4_t c[4];
#pragma GCC unroll 4
    for (int v = 0; v < 4; v++) c[v] = vdupq_n_f32(0.0f);
    for (size_t k = 0; k < d; k++)
#pragma GCC unroll 4
        for (int v = 0; v < 4; v++) {
            float32x4_t p = vld1q_f32(P + k * 16 + 4 * v);
            c[v] = vfmaq_f32(c[v], p, p);
        }
#pragma GCC unroll 4
    for (int v = 0; v < 4; v++) vst1q_f32(out + 4 * v, c[v]);
}

static void neon_gram_kfun(const pt_kfun *kf, const float *dot, float xn, const float *zn,
                           float *out, size_t n)
{
    const int rbf = kf->kind == PT_KERNEL_RBF;
    const float32x4_t vx = vdupq_n_f32(xn);
    for (size_t j = 0; j < n; j += 4) {
        float32x4_t z = rbf ? vld1q_f32(zn + j) : vdupq_n_f32(0.0f);
        vst1q_f32(out + j, kval4(kf, vld1q_f32(dot + j), vx, z));
    }
}

static void neon_gram_exp(const float *x, float *y, size_t n)
{
    for (size_t j = 0; j < n; j += 4) vst1q_f32(y + j, exp4(vld1q_f32(x + j)));
}

/* 4 x 4 transpose in registers: w[c] lane i = v[i] lane c. */
INLINE void transpose4(const float32x4_t *v, float32x4_t *w)
{
    float32x4_t t0 = vtrn1q_f32(v[0], v[1]), t1 = vtrn2q_f32(v[0], v[1]);
    float32x4_t t2 = vtrn1q_f32(v[2], v[3]), t3 = vtrn2q_f32(v[2], v[3]);
    w[0] = vreinterpretq_f32_f64(vtrn1q_f64(vreinterpretq_f64_f32(t0), vreinterpretq_f64_f32(t2)));
    w[1] = vreinterpretq_f32_f64(vtrn1q_f64(vreinterpretq_f64_f32(t1), vreinterpretq_f64_f32(t3)));
    w[2] = vreinterpretq_f32_f64(vtrn2q_f64(vreinterpretq_f64_f32(t0), vreinterpretq_f64_f32(t2)));
    w[3] = vreinterpretq_f32_f64(vtrn2q_f64(vreinterpretq_f64_f32(t1), vreinterpretq_f64_f32(t3)));
}

/* The first k lanes of v at p (NEON has no masked store). */
INLINE void store_first(float *p, float32x4_t v, size_t k)
{
    if (k == 4) {
        vst1q_f32(p, v);
        return;
    }
    float t[4];
    vst1q_f32(t, v);
    for (size_t i = 0; i < k; i++) p[i] = t[i];
}

static void neon_gram_store(const pt_kfun *kf, const float *C, size_t ldc, const float *xn,
                            const float *zn, size_t nrow, size_t ncol, float *G, float *Gt,
                            size_t ldg, int stream)
{
    (void)stream;
    const int rbf = kf->kind == PT_KERNEL_RBF;
    for (size_t cb = 0; cb < ncol; cb += 4) {
        const size_t nc = ncol - cb < 4 ? ncol - cb : 4;
        const float32x4_t zs = rbf ? vld1q_f32(zn + cb) : vdupq_n_f32(0.0f);
        for (size_t rb = 0; rb < nrow; rb += 4) {
            const size_t nr = nrow - rb < 4 ? nrow - rb : 4;
            float32x4_t v[4], w[4];
#pragma GCC unroll 4
            for (int r = 0; r < 4; r++)
                v[r] = kval4(kf, vld1q_f32(C + (rb + r) * ldc + cb), vdupq_n_f32(rbf ? xn[rb + r] : 0.0f), zs);
            for (size_t r = 0; r < nr; r++) store_first(G + (rb + r) * ldg + cb, v[r], nc);
            if (!Gt) continue;
            transpose4(v, w);
            for (size_t c = 0; c < nc; c++) store_first(Gt + (cb + c) * ldg + rb, w[c], nr);
        }
    }
}

/* Nothing to order: the stores above are ordinary ones. */
static void neon_gram_fence(void) {}

const pt_gram_kernels pt_gram_kernels_neon = {
    .mr = 8,
    .np = 1,
    .tile = neon_gram_tile,
    .row = neon_gram_row,
    .norms = neon_gram_norms,
    .kfun = neon_gram_kfun,
    .exp = neon_gram_exp,
    .store = neon_gram_store,
    .fence = neon_gram_fence,
};
