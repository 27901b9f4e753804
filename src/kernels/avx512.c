/*
 * AVX-512F kernels: 16 floats a vector. Compiled with -mavx512f -mavx512vl -mavx512dq -mfma
 * (src/meson.build); dispatch.c only hands this table out when CPUID and XGETBV say the CPU
 * and the OS run all of those.
 *
 * - dot: four independent FMA chains over 64 floats an iteration. The loop does two loads a
 *   FMA, so it is load-bound at one FMA a cycle; four chains of a 4-cycle FMA cover that.
 *   Streaming from memory (the online epoch) it is bandwidth-bound long before.
 * - Tails use masked loads and stores (they never touch memory past n), so any n and any
 *   alignment work without a scalar loop; the hot paths pass n = stride (a multiple of 16)
 *   and never reach them.
 * - Element-wise kernels (axpy, axpy2, scale_add) multiply and add separately, as scalar.c
 *   does under -ffp-contract=off, so they agree with the reference bit for bit; they are
 *   bound by memory or L1, never by the extra add.
 * - step runs the same inlined dot and axpy as dot and axpy, so fused and unfused agree bit
 *   for bit.
 */
#include <immintrin.h>

#include "kernels.h"
#include "rows_impl.h"

#define INLINE static inline __attribute__((always_inline))

/* Lanes 0..r-1 of a vector, for 0 < r < 16. */
INLINE __mmask16 tail_mask(size_t r) { return (__mmask16)((1u << r) - 1u); }

/* Sum of the 16 lanes in a fixed order: halves, quarters, then pairs. */
INLINE float hsum(__m512 v)
{
    __m256 lo = _mm512_castps512_ps256(v);
    __m256 hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
    __m256 s8 = _mm256_add_ps(lo, hi);
    __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
    __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
    __m128 s1 = _mm_add_ss(s2, _mm_movehdup_ps(s2));
    return _mm_cvtss_f32(s1);
}

INLINE float dot_impl(const float *a, const float *b, size_t n)
{
    if (n == 0) return 0.0f;
    __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
    __m512 s2 = _mm512_setzero_ps(), s3 = _mm512_setzero_ps();
    size_t i = 0;
    /* Main loop: 64 floats, four independent accumulators. */
    for (; i + 64 <= n; i += 64) {
        s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), s0);
        s1 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16), s1);
        s2 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 32), _mm512_loadu_ps(b + i + 32), s2);
        s3 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 48), _mm512_loadu_ps(b + i + 48), s3);
    }
    /* Up to three whole vectors left: one into each of the first chains, so short rows
     * (d = 16..63) do not wait on one chain's latency. */
    if (i + 16 <= n) {
        s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), s0);
        i += 16;
        if (i + 16 <= n) {
            s1 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), s1);
            i += 16;
            if (i + 16 <= n) {
                s2 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), s2);
                i += 16;
            }
        }
    }
    /* Tail of 1..15 floats: masked loads give zeros past n and read nothing there. */
    if (i < n) {
        __mmask16 m = tail_mask(n - i);
        s3 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a + i), _mm512_maskz_loadu_ps(m, b + i), s3);
    }
    /* Combine the accumulators pairwise, then the lanes. */
    return hsum(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
}

INLINE void axpy_impl(float alpha, const float *x, float *y, size_t n)
{
    if (n == 0) return;
    const __m512 va = _mm512_set1_ps(alpha);
    size_t i = 0;
    /* Main loop: two vectors an iteration; y + (alpha x), rounded twice like scalar.c. */
    for (; i + 32 <= n; i += 32) {
        __m512 y0 = _mm512_add_ps(_mm512_loadu_ps(y + i), _mm512_mul_ps(va, _mm512_loadu_ps(x + i)));
        __m512 y1 = _mm512_add_ps(_mm512_loadu_ps(y + i + 16),
                                  _mm512_mul_ps(va, _mm512_loadu_ps(x + i + 16)));
        _mm512_storeu_ps(y + i, y0);
        _mm512_storeu_ps(y + i + 16, y1);
    }
    /* One whole vector left at most. */
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(y + i, _mm512_add_ps(_mm512_loadu_ps(y + i),
                                              _mm512_mul_ps(va, _mm512_loadu_ps(x + i))));
    /* Tail: masked load and store leave y past n untouched. */
    if (i < n) {
        __mmask16 m = tail_mask(n - i);
        __m512 v = _mm512_add_ps(_mm512_maskz_loadu_ps(m, y + i),
                                 _mm512_mul_ps(va, _mm512_maskz_loadu_ps(m, x + i)));
        _mm512_mask_storeu_ps(y + i, m, v);
    }
}

static float avx512_dot(const float *a, const float *b, size_t n) { return dot_impl(a, b, n); }

static void avx512_axpy(float alpha, const float *x, float *y, size_t n) { axpy_impl(alpha, x, y, n); }

static int avx512_step(float *w, float *b, const float *x, size_t n, float y, float tau, float eta,
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

PT_ROW_KERNELS(avx512, dot_impl, axpy_impl)

static void avx512_axpy2(float a, float c, const float *x, float *w, float *u, size_t n)
{
    if (n == 0) return;
    const __m512 va = _mm512_set1_ps(a), vc = _mm512_set1_ps(c);
    size_t i = 0;
    /* Main loop: one load of x feeds both updates. */
    for (; i + 16 <= n; i += 16) {
        __m512 vx = _mm512_loadu_ps(x + i);
        _mm512_storeu_ps(w + i, _mm512_add_ps(_mm512_loadu_ps(w + i), _mm512_mul_ps(va, vx)));
        _mm512_storeu_ps(u + i, _mm512_add_ps(_mm512_loadu_ps(u + i), _mm512_mul_ps(vc, vx)));
    }
    /* Tail: masked. */
    if (i < n) {
        __mmask16 m = tail_mask(n - i);
        __m512 vx = _mm512_maskz_loadu_ps(m, x + i);
        _mm512_mask_storeu_ps(w + i, m, _mm512_add_ps(_mm512_maskz_loadu_ps(m, w + i), _mm512_mul_ps(va, vx)));
        _mm512_mask_storeu_ps(u + i, m, _mm512_add_ps(_mm512_maskz_loadu_ps(m, u + i), _mm512_mul_ps(vc, vx)));
    }
}

static void avx512_scale_add(float a, const float *x, float c, const float *y, float *out, size_t n)
{
    if (n == 0) return;
    const __m512 va = _mm512_set1_ps(a), vc = _mm512_set1_ps(c);
    size_t i = 0;
    /* Main loop: (a x) + (c y), each product rounded, as scalar.c. Loads come before the
     * store, so out may alias x or y (the averaging call passes out == x). */
    for (; i + 16 <= n; i += 16) {
        __m512 v = _mm512_add_ps(_mm512_mul_ps(va, _mm512_loadu_ps(x + i)),
                                 _mm512_mul_ps(vc, _mm512_loadu_ps(y + i)));
        _mm512_storeu_ps(out + i, v);
    }
    /* Tail: masked. */
    if (i < n) {
        __mmask16 m = tail_mask(n - i);
        __m512 v = _mm512_add_ps(_mm512_mul_ps(va, _mm512_maskz_loadu_ps(m, x + i)),
                                 _mm512_mul_ps(vc, _mm512_maskz_loadu_ps(m, y + i)));
        _mm512_mask_storeu_ps(out + i, m, v);
    }
}

/* Classes in groups of G: each 16-float chunk of x is loaded once and multiplied into G
 * accumulators (G independent FMA chains: 8 keep both FMA ports busy). The tail is masked. */
#define DOT_GROUP(G)                                                                               \
    static void dot_group##G(const float *W, size_t ldw, const float *x, size_t n, float *out)    \
    {                                                                                              \
        __m512 acc[G];                                                                             \
        for (int g = 0; g < G; g++) acc[g] = _mm512_setzero_ps();                                 \
        size_t j = 0;                                                                              \
        for (; j + 16 <= n; j += 16) {                                                             \
            __m512 xv = _mm512_loadu_ps(x + j);                                                    \
            for (int g = 0; g < G; g++)                                                            \
                acc[g] = _mm512_fmadd_ps(_mm512_loadu_ps(W + g * ldw + j), xv, acc[g]);           \
        }                                                                                          \
        if (j < n) {                                                                               \
            __mmask16 m = tail_mask(n - j);                                                        \
            __m512 xv = _mm512_maskz_loadu_ps(m, x + j);                                           \
            for (int g = 0; g < G; g++)                                                            \
                acc[g] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, W + g * ldw + j), xv, acc[g]);  \
        }                                                                                          \
        for (int g = 0; g < G; g++) out[g] = hsum(acc[g]);                                        \
    }
DOT_GROUP(8)
DOT_GROUP(4)
DOT_GROUP(2)
DOT_GROUP(1)

static void avx512_dot_many(const float *W, size_t ldw, size_t K, const float *x, size_t n, float *out)
{
    size_t c = 0;
    for (; c + 8 <= K; c += 8) dot_group8(W + c * ldw, ldw, x, n, out + c);
    for (; c + 4 <= K; c += 4) dot_group4(W + c * ldw, ldw, x, n, out + c);
    for (; c + 2 <= K; c += 2) dot_group2(W + c * ldw, ldw, x, n, out + c);
    for (; c < K; c++) dot_group1(W + c * ldw, ldw, x, n, out + c);
}

const pt_kernels pt_kernels_avx512 = {
    .name = "avx512",
    .isa = PT_ISA_AVX512,
    .dot = avx512_dot,
    .axpy = avx512_axpy,
    .step = avx512_step,
    .step_rows = avx512_step_rows,
    .dot_rows = avx512_dot_rows,
    .axpy2 = avx512_axpy2,
    .scale_add = avx512_scale_add,
    .dot_many = avx512_dot_many,
    .gram = &pt_gram_kernels_avx512,
    .sparse = &pt_sparse_kernels_avx512,
    .expand = &pt_expand_kernels_avx512,
    .compact = &pt_compact_kernels_avx512,
};
