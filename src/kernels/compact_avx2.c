/*
 * Widening compact rows to float32 with AVX2 + FMA (kernels.h, pt_compact_kernels): 8
 * elements a vector, the same floats as compact_scalar.c. bf16: zero-extend and shift; u8:
 * zero-extend, convert, then the divisor's two fused multiply-adds. The tail of 1..7 elements
 * goes through a zeroed 8-element block and masked stores (vmaskmovps), so nothing past n is
 * read or written.
 */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "kernels.h"

#define INLINE static inline __attribute__((always_inline))

static const int32_t mask_table[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

INLINE __m256i tail_mask(size_t k)
{
    return _mm256_loadu_si256((const __m256i *)(mask_table + 8 - k));
}

INLINE __m256 bf16_8(__m128i h)
{
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

INLINE __m256 u8_8(__m128i b, __m256 m, __m256 r)
{
    __m256 q = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(b));
    __m256 x0 = _mm256_mul_ps(q, r);
    return _mm256_fmadd_ps(_mm256_fnmadd_ps(x0, m, q), r, x0);
}

void pt_widen_bf16_avx2(const uint16_t *x, float *out, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(out + i, bf16_8(_mm_loadu_si128((const __m128i *)(x + i))));
    if (i < n) {
        uint16_t t[8] = {0};
        memcpy(t, x + i, (n - i) * sizeof *t);
        _mm256_maskstore_ps(out + i, tail_mask(n - i), bf16_8(_mm_loadu_si128((const __m128i *)t)));
    }
}

void pt_widen_u8_avx2(const uint8_t *x, const float *m, const float *r, float *out, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(out + i, u8_8(_mm_loadl_epi64((const __m128i *)(x + i)),
                                       _mm256_loadu_ps(m + i), _mm256_loadu_ps(r + i)));
    if (i < n) {
        __m256i k = tail_mask(n - i);
        uint8_t t[16] = {0};
        memcpy(t, x + i, n - i);
        /* masked divisor loads give 0 past n: those lanes are NaN, and never stored */
        _mm256_maskstore_ps(out + i, k, u8_8(_mm_loadl_epi64((const __m128i *)t),
                                             _mm256_maskload_ps(m + i, k),
                                             _mm256_maskload_ps(r + i, k)));
    }
}
