/*
 * aarch64 Advanced SIMD (NEON) kernels: 4 floats a vector. ASIMD is part of the aarch64
 * baseline, so this file needs no target flags; dispatch.c still checks HWCAP_ASIMD.
 *
 * - dot: eight independent FMA chains over 32 floats an iteration: cores with four 128-bit
 *   FMA pipes of 4-cycle latency (recent Arm server cores) need that many to stay busy from L1.
 * - NEON has no masked loads, so tails of 1..3 floats run a short scalar loop.
 * - Element-wise kernels (axpy, axpy2, scale_add) multiply and add separately, as scalar.c
 *   does. arm_neon.h writes vmulq/vaddq as plain C operators, so this relies on the
 *   project-wide -ffp-contract=off (meson.build; scripts/test-neon passes it too) to keep
 *   gcc from fusing them.
 * - step runs the same inlined dot and axpy as dot and axpy, so fused and unfused agree bit
 *   for bit.
 */
#include <arm_neon.h>

#include "kernels.h"
#include "rows_impl.h"

#define INLINE static inline __attribute__((always_inline))

INLINE float dot_impl(const float *a, const float *b, size_t n)
{
    if (n == 0) return 0.0f;
    float32x4_t s0 = vdupq_n_f32(0.0f), s1 = s0, s2 = s0, s3 = s0;
    float32x4_t s4 = s0, s5 = s0, s6 = s0, s7 = s0;
    size_t i = 0;
    /* Main loop: 32 floats, eight independent accumulators. */
    for (; i + 32 <= n; i += 32) {
        s0 = vfmaq_f32(s0, vld1q_f32(a + i), vld1q_f32(b + i));
        s1 = vfmaq_f32(s1, vld1q_f32(a + i + 4), vld1q_f32(b + i + 4));
        s2 = vfmaq_f32(s2, vld1q_f32(a + i + 8), vld1q_f32(b + i + 8));
        s3 = vfmaq_f32(s3, vld1q_f32(a + i + 12), vld1q_f32(b + i + 12));
        s4 = vfmaq_f32(s4, vld1q_f32(a + i + 16), vld1q_f32(b + i + 16));
        s5 = vfmaq_f32(s5, vld1q_f32(a + i + 20), vld1q_f32(b + i + 20));
        s6 = vfmaq_f32(s6, vld1q_f32(a + i + 24), vld1q_f32(b + i + 24));
        s7 = vfmaq_f32(s7, vld1q_f32(a + i + 28), vld1q_f32(b + i + 28));
    }
    /* Up to seven whole vectors left: four at once, then one into each of three more chains,
     * so short rows do not wait on one chain's latency. */
    if (i + 16 <= n) {
        s0 = vfmaq_f32(s0, vld1q_f32(a + i), vld1q_f32(b + i));
        s1 = vfmaq_f32(s1, vld1q_f32(a + i + 4), vld1q_f32(b + i + 4));
        s2 = vfmaq_f32(s2, vld1q_f32(a + i + 8), vld1q_f32(b + i + 8));
        s3 = vfmaq_f32(s3, vld1q_f32(a + i + 12), vld1q_f32(b + i + 12));
        i += 16;
    }
    if (i + 4 <= n) {
        s4 = vfmaq_f32(s4, vld1q_f32(a + i), vld1q_f32(b + i));
        i += 4;
        if (i + 4 <= n) {
            s5 = vfmaq_f32(s5, vld1q_f32(a + i), vld1q_f32(b + i));
            i += 4;
            if (i + 4 <= n) {
                s6 = vfmaq_f32(s6, vld1q_f32(a + i), vld1q_f32(b + i));
                i += 4;
            }
        }
    }
    /* Combine the accumulators pairwise, then the lanes ((l0 + l1) + (l2 + l3)). */
    float32x4_t t = vaddq_f32(vaddq_f32(vaddq_f32(s0, s1), vaddq_f32(s2, s3)),
                              vaddq_f32(vaddq_f32(s4, s5), vaddq_f32(s6, s7)));
    float s = vaddvq_f32(t);
    /* Tail of 1..3 floats, in order. */
    for (; i < n; i++) s += a[i] * b[i];
    return s;
}

INLINE void axpy_impl(float alpha, const float *x, float *y, size_t n)
{
    if (n == 0) return;
    const float32x4_t va = vdupq_n_f32(alpha);
    size_t i = 0;
    /* Main loop: two vectors an iteration; y + (alpha x), rounded twice like scalar.c. */
    for (; i + 8 <= n; i += 8) {
        float32x4_t y0 = vaddq_f32(vld1q_f32(y + i), vmulq_f32(va, vld1q_f32(x + i)));
        float32x4_t y1 = vaddq_f32(vld1q_f32(y + i + 4), vmulq_f32(va, vld1q_f32(x + i + 4)));
        vst1q_f32(y + i, y0);
        vst1q_f32(y + i + 4, y1);
    }
    /* One whole vector left at most. */
    for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vaddq_f32(vld1q_f32(y + i), vmulq_f32(va, vld1q_f32(x + i))));
    /* Tail of 1..3 floats. */
    for (; i < n; i++) y[i] += alpha * x[i];
}

static float neon_dot(const float *a, const float *b, size_t n) { return dot_impl(a, b, n); }

static void neon_axpy(float alpha, const float *x, float *y, size_t n) { axpy_impl(alpha, x, y, n); }

static int neon_step(float *w, float *b, const float *x, size_t n, float y, float tau, float eta,
                     float bias, float *score)
{
    /* The score, exactly as dot() + b * bias computes it. */
    float s = dot_impl(w, x, n) + *b * bias;
    *score = s;
    if (y * s > tau) return 0;
    /* A mistake: x was just read, so the update runs from L1. */
    float a = eta * y;
    axpy_impl(a, x, w, n);
    *b += a * bias;
    return 1;
}

PT_ROW_KERNELS(neon, dot_impl, axpy_impl)
PT_COMPACT_KERNELS(neon, dot_impl, axpy_impl, pt_widen_bf16_neon, pt_widen_u8_neon)

static void neon_axpy2(float a, float c, const float *x, float *w, float *u, size_t n)
{
    if (n == 0) return;
    const float32x4_t va = vdupq_n_f32(a), vc = vdupq_n_f32(c);
    size_t i = 0;
    /* Main loop: one load of x feeds both updates. */
    for (; i + 4 <= n; i += 4) {
        float32x4_t vx = vld1q_f32(x + i);
        vst1q_f32(w + i, vaddq_f32(vld1q_f32(w + i), vmulq_f32(va, vx)));
        vst1q_f32(u + i, vaddq_f32(vld1q_f32(u + i), vmulq_f32(vc, vx)));
    }
    /* Tail of 1..3 floats. */
    for (; i < n; i++) {
        w[i] += a * x[i];
        u[i] += c * x[i];
    }
}

static void neon_scale_add(float a, const float *x, float c, const float *y, float *out, size_t n)
{
    if (n == 0) return;
    const float32x4_t va = vdupq_n_f32(a), vc = vdupq_n_f32(c);
    size_t i = 0;
    /* Main loop: (a x) + (c y), each product rounded, as scalar.c. Loads come before the
     * store, so out may alias x or y (the averaging call passes out == x). */
    for (; i + 4 <= n; i += 4)
        vst1q_f32(out + i, vaddq_f32(vmulq_f32(va, vld1q_f32(x + i)), vmulq_f32(vc, vld1q_f32(y + i))));
    /* Tail of 1..3 floats. */
    for (; i < n; i++) out[i] = a * x[i] + c * y[i];
}

static void neon_dot_many(const float *W, size_t ldw, size_t K, const float *x, size_t n, float *out)
{
    for (size_t c = 0; c < K; c++) out[c] = neon_dot(W + c * ldw, x, n);
}

const pt_kernels pt_kernels_neon = {
    .name = "neon",
    .isa = PT_ISA_NEON,
    .dot = neon_dot,
    .axpy = neon_axpy,
    .step = neon_step,
    .step_rows = neon_step_rows,
    .dot_rows = neon_dot_rows,
    .axpy2 = neon_axpy2,
    .scale_add = neon_scale_add,
    .dot_many = neon_dot_many,
    .gram = &pt_gram_kernels_neon,
    .sparse = &pt_sparse_kernels_neon,
    .expand = &pt_expand_kernels_neon,
    .compact = &neon_compact,
};
