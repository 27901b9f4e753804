/*
 * AVX2 + FMA kernels: 8 floats a vector. Compiled with -mavx2 -mfma (src/meson.build);
 * dispatch.c only hands this table out when CPUID and XGETBV say the CPU and the OS run it.
 *
 * - dot: four independent FMA chains over 32 floats an iteration (load-bound: two loads a
 *   FMA), bandwidth-bound when streaming rows from memory.
 * - Tails use vmaskmovps loads and stores, which never touch memory past n, so any n and any
 *   alignment work; the hot paths pass n = stride (a multiple of 16) and never reach them.
 * - Element-wise kernels (axpy, axpy2, scale_add) multiply and add separately, as scalar.c
 *   does under -ffp-contract=off, so they agree with the reference bit for bit.
 * - step runs the same inlined dot and axpy as dot and axpy, so fused and unfused agree bit
 *   for bit.
 */
#include <immintrin.h>
#include <stdint.h>

#include "kernels.h"
#include "rows_impl.h"

#define INLINE static inline __attribute__((always_inline))

/* Eight ones then eight zeros: loading 8 lanes at (8 - r) gives a mask of the first r lanes. */
static const int32_t mask_table[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

/* Lanes 0..r-1, for 0 < r < 8. */
INLINE __m256i tail_mask(size_t r) { return _mm256_loadu_si256((const __m256i *)(mask_table + 8 - r)); }

/* Sum of the 8 lanes in a fixed order: halves, then pairs. */
INLINE float hsum(__m256 v)
{
    __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
    __m128 s1 = _mm_add_ss(s2, _mm_movehdup_ps(s2));
    return _mm_cvtss_f32(s1);
}

INLINE float dot_impl(const float *a, const float *b, size_t n)
{
    if (n == 0) return 0.0f;
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    __m256 s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
    size_t i = 0;
    /* Main loop: 32 floats, four independent accumulators. */
    for (; i + 32 <= n; i += 32) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
        s2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(b + i + 16), s2);
        s3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(b + i + 24), s3);
    }
    /* Up to three whole vectors left: one into each of the first chains, so short rows
     * (d = 8..31) do not wait on one chain's latency. */
    if (i + 8 <= n) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
        i += 8;
        if (i + 8 <= n) {
            s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s1);
            i += 8;
            if (i + 8 <= n) {
                s2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s2);
                i += 8;
            }
        }
    }
    /* Tail of 1..7 floats: masked loads give zeros past n and read nothing there. */
    if (i < n) {
        __m256i m = tail_mask(n - i);
        s3 = _mm256_fmadd_ps(_mm256_maskload_ps(a + i, m), _mm256_maskload_ps(b + i, m), s3);
    }
    /* Combine the accumulators pairwise, then the lanes. */
    return hsum(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
}

INLINE void axpy_impl(float alpha, const float *x, float *y, size_t n)
{
    if (n == 0) return;
    const __m256 va = _mm256_set1_ps(alpha);
    size_t i = 0;
    /* Main loop: two vectors an iteration; y + (alpha x), rounded twice like scalar.c. */
    for (; i + 16 <= n; i += 16) {
        __m256 y0 = _mm256_add_ps(_mm256_loadu_ps(y + i), _mm256_mul_ps(va, _mm256_loadu_ps(x + i)));
        __m256 y1 = _mm256_add_ps(_mm256_loadu_ps(y + i + 8),
                                  _mm256_mul_ps(va, _mm256_loadu_ps(x + i + 8)));
        _mm256_storeu_ps(y + i, y0);
        _mm256_storeu_ps(y + i + 8, y1);
    }
    /* One whole vector left at most. */
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _mm256_add_ps(_mm256_loadu_ps(y + i),
                                              _mm256_mul_ps(va, _mm256_loadu_ps(x + i))));
    /* Tail: masked load and store leave y past n untouched. */
    if (i < n) {
        __m256i m = tail_mask(n - i);
        __m256 v = _mm256_add_ps(_mm256_maskload_ps(y + i, m),
                                 _mm256_mul_ps(va, _mm256_maskload_ps(x + i, m)));
        _mm256_maskstore_ps(y + i, m, v);
    }
}

static float avx2_dot(const float *a, const float *b, size_t n) { return dot_impl(a, b, n); }

static void avx2_axpy(float alpha, const float *x, float *y, size_t n) { axpy_impl(alpha, x, y, n); }

static int avx2_step(float *w, float *b, const float *x, size_t n, float y, float tau, float eta,
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

PT_ROW_KERNELS(avx2, dot_impl, axpy_impl)

static void avx2_axpy2(float a, float c, const float *x, float *w, float *u, size_t n)
{
    if (n == 0) return;
    const __m256 va = _mm256_set1_ps(a), vc = _mm256_set1_ps(c);
    size_t i = 0;
    /* Main loop: one load of x feeds both updates. */
    for (; i + 8 <= n; i += 8) {
        __m256 vx = _mm256_loadu_ps(x + i);
        _mm256_storeu_ps(w + i, _mm256_add_ps(_mm256_loadu_ps(w + i), _mm256_mul_ps(va, vx)));
        _mm256_storeu_ps(u + i, _mm256_add_ps(_mm256_loadu_ps(u + i), _mm256_mul_ps(vc, vx)));
    }
    /* Tail: masked. */
    if (i < n) {
        __m256i m = tail_mask(n - i);
        __m256 vx = _mm256_maskload_ps(x + i, m);
        _mm256_maskstore_ps(w + i, m, _mm256_add_ps(_mm256_maskload_ps(w + i, m), _mm256_mul_ps(va, vx)));
        _mm256_maskstore_ps(u + i, m, _mm256_add_ps(_mm256_maskload_ps(u + i, m), _mm256_mul_ps(vc, vx)));
    }
}

static void avx2_scale_add(float a, const float *x, float c, const float *y, float *out, size_t n)
{
    if (n == 0) return;
    const __m256 va = _mm256_set1_ps(a), vc = _mm256_set1_ps(c);
    size_t i = 0;
    /* Main loop: (a x) + (c y), each product rounded, as scalar.c. Loads come before the
     * store, so out may alias x or y (the averaging call passes out == x). */
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_add_ps(_mm256_mul_ps(va, _mm256_loadu_ps(x + i)),
                                 _mm256_mul_ps(vc, _mm256_loadu_ps(y + i)));
        _mm256_storeu_ps(out + i, v);
    }
    /* Tail: masked. */
    if (i < n) {
        __m256i m = tail_mask(n - i);
        __m256 v = _mm256_add_ps(_mm256_mul_ps(va, _mm256_maskload_ps(x + i, m)),
                                 _mm256_mul_ps(vc, _mm256_maskload_ps(y + i, m)));
        _mm256_maskstore_ps(out + i, m, v);
    }
}

static void avx2_dot_many(const float *W, size_t ldw, size_t K, const float *x, size_t n, float *out)
{
    for (size_t c = 0; c < K; c++) out[c] = avx2_dot(W + c * ldw, x, n);
}

const pt_kernels pt_kernels_avx2 = {
    .name = "avx2",
    .isa = PT_ISA_AVX2,
    .dot = avx2_dot,
    .axpy = avx2_axpy,
    .step = avx2_step,
    .step_rows = avx2_step_rows,
    .dot_rows = avx2_dot_rows,
    .axpy2 = avx2_axpy2,
    .scale_add = avx2_scale_add,
    .dot_many = avx2_dot_many,
    .gram = &pt_gram_kernels_avx2,
    .sparse = &pt_sparse_kernels_avx2,
    .expand = &pt_expand_kernels_avx2,
    .compact = &pt_compact_kernels_avx2,
};
