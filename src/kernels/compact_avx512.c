/*
 * Widening compact rows to float32 with AVX-512F (kernels.h, pt_compact_kernels): 16
 * elements a vector, the same floats as compact_scalar.c. bf16: zero-extend to 32 bits and
 * shift; u8: zero-extend, convert, then the divisor's two fused multiply-adds. The tail of
 * 1..15 elements is copied into a zeroed 16-element block (the loads need AVX-512BW to be
 * masked) and stored masked, so nothing past n is read or written.
 *
 * The AVX512_BF16 dot instruction (vdpbf16ps) is not used: it multiplies bf16 by bf16, and w
 * is float32; rounding w to bf16 would change the model, and the widening shift costs less
 * than the memory it saves (the online epoch is bound by the bus).
 */
#include <immintrin.h>
#include <string.h>

#include "kernels.h"

#define INLINE static inline __attribute__((always_inline))

INLINE __m512 bf16_16(__m256i h)
{
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

INLINE __m512 u8_16(__m128i b, __m512 m, __m512 r)
{
    __m512 q = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(b));
    __m512 x0 = _mm512_mul_ps(q, r);
    return _mm512_fmadd_ps(_mm512_fnmadd_ps(x0, m, q), r, x0);
}

void pt_widen_bf16_avx512(const uint16_t *x, float *out, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(out + i, bf16_16(_mm256_loadu_si256((const __m256i *)(x + i))));
    if (i < n) {
        uint16_t t[16] = {0};
        memcpy(t, x + i, (n - i) * sizeof *t);
        _mm512_mask_storeu_ps(out + i, (__mmask16)((1u << (n - i)) - 1u),
                              bf16_16(_mm256_loadu_si256((const __m256i *)t)));
    }
}

void pt_widen_u8_avx512(const uint8_t *x, const float *m, const float *r, float *out, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(out + i, u8_16(_mm_loadu_si128((const __m128i *)(x + i)),
                                        _mm512_loadu_ps(m + i), _mm512_loadu_ps(r + i)));
    if (i < n) {
        __mmask16 k = (__mmask16)((1u << (n - i)) - 1u);
        uint8_t t[16] = {0};
        memcpy(t, x + i, n - i);
        /* masked divisor loads: 1 past n (any non-zero keeps the lanes finite) */
        __m512 one = _mm512_set1_ps(1.0f);
        _mm512_mask_storeu_ps(out + i, k, u8_16(_mm_loadu_si128((const __m128i *)t),
                                                _mm512_mask_loadu_ps(one, k, m + i),
                                                _mm512_mask_loadu_ps(one, k, r + i)));
    }
}
