/*
 * Compact rows with AVX2 + FMA (kernels.h, pt_compact_kernels): 8 elements a vector, widened
 * in registers, the same floats as compact_scalar.c. bf16: zero-extend and shift; u8:
 * zero-extend, convert, then fma(q, rh, q rl).
 *
 * - widen: the tail of 1..7 elements goes through a zeroed 8-element block and masked stores
 *   (vmaskmovps), so nothing past n is read or written.
 * - step_rows: fused, no buffer, as compact_avx512.c: the dot in avx2.c's order (four chains
 *   over 32 elements, up to three more vectors into the first chains, the masked tail into the
 *   fourth, the chains pairwise, the lanes halves then pairs), the update y + (a x) rounded
 *   twice, so w, b and the count equal avx2.c's step_rows on the widened rows bit for bit.
 * - u8 with one divisor for every feature (pt_one_divisor): the reciprocals broadcast once.
 */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "compact_x86.h"
#include "kernels.h"

#define INLINE static inline __attribute__((always_inline))

static const int32_t mask_table[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

INLINE __m256i tail_mask(size_t k)
{
    return _mm256_loadu_si256((const __m256i *)(mask_table + 8 - k));
}

/* Sum of the 8 lanes in avx2.c's order: halves, then pairs. */
INLINE float hsum(__m256 v)
{
    __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
    __m128 s1 = _mm_add_ss(s2, _mm_movehdup_ps(s2));
    return _mm_cvtss_f32(s1);
}

INLINE __m256 bf16_8(__m128i h)
{
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

INLINE __m256 u8_8(__m128i b, __m256 rh, __m256 rl)
{
    __m256 q = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(b));
    return _mm256_fmadd_ps(q, rh, _mm256_mul_ps(q, rl));
}

/* The 8 widened elements at i; the tail's first k (1..7), zeros after. */
INLINE __m256 load_bf16(const uint16_t *x, size_t i)
{
    return bf16_8(_mm_loadu_si128((const __m128i *)(x + i)));
}

INLINE __m256 tail_bf16(const uint16_t *x, size_t i, size_t k)
{
    uint16_t t[8] = {0};
    memcpy(t, x + i, k * sizeof *t);
    return bf16_8(_mm_loadu_si128((const __m128i *)t));
}

INLINE __m256 load_u8(const uint8_t *x, const float *rh, const float *rl, size_t i)
{
    return u8_8(_mm_loadl_epi64((const __m128i *)(x + i)), _mm256_loadu_ps(rh + i),
                _mm256_loadu_ps(rl + i));
}

INLINE __m256 tail_u8(const uint8_t *x, const float *rh, const float *rl, size_t i, size_t k)
{
    uint8_t t[16] = {0};
    memcpy(t, x + i, k);
    /* masked reciprocal loads give 0 past n: those lanes widen to 0 */
    __m256i km = tail_mask(k);
    return u8_8(_mm_loadl_epi64((const __m128i *)t), _mm256_maskload_ps(rh + i, km),
                _mm256_maskload_ps(rl + i, km));
}

/* u8_8 with one divisor: ONE_MUL (its reciprocal exact, rl = 0: a power of two) widens to
 * q rh, ONE_UNIT (divisor 1) to q, which is what fma(q, rh, q rl) gives then (q rl = +0). */
enum { ONE_ANY, ONE_MUL, ONE_UNIT };
INLINE __m256 u8_1(__m256 q, __m256 rh, __m256 rl, int mode)
{
    if (mode == ONE_UNIT) return q;
    if (mode == ONE_MUL) return _mm256_mul_ps(q, rh);
    return _mm256_fmadd_ps(q, rh, _mm256_mul_ps(q, rl));
}

/* u8 with one divisor for every feature (a matrix-wide scale, e.g. pixels / 255): rh and rl
 * broadcast in registers instead of loaded with each vector; the same floats as load_u8. */
INLINE __m256 load_u8_1(const uint8_t *x, __m256 rh, __m256 rl, size_t i, int mode)
{
    __m128i b = _mm_loadl_epi64((const __m128i *)(x + i));
    return u8_1(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(b)), rh, rl, mode);
}

INLINE __m256 tail_u8_1(const uint8_t *x, __m256 rh, __m256 rl, size_t i, size_t k, int mode)
{
    uint8_t t[16] = {0};
    memcpy(t, x + i, k);
    __m128i b = _mm_loadl_epi64((const __m128i *)t);
    return u8_1(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(b)), rh, rl, mode); /* q = 0: 0 */
}

void pt_widen_bf16_avx2(const uint16_t *x, float *out, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, load_bf16(x, i));
    if (i < n) _mm256_maskstore_ps(out + i, tail_mask(n - i), tail_bf16(x, i, n - i));
}

void pt_widen_u8_avx2(const uint8_t *x, const float *rh, const float *rl, float *out, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, load_u8(x, rh, rl, i));
    if (i < n) _mm256_maskstore_ps(out + i, tail_mask(n - i), tail_u8(x, rh, rl, i, n - i));
}

/* avx2.c's dot of w with the widened row. The tail's lanes past n are zeroed (blend) before
 * the FMA: u8's are NaN there. */
#define COMPACT_DOT(LOAD, TAIL)                                                                    \
    if (n == 0) return 0.0f;                                                                       \
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();                                     \
    __m256 s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();                                     \
    size_t i = 0;                                                                                  \
    for (; i + 32 <= n; i += 32) {                                                                 \
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(w + i), LOAD(i), s0);                                 \
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(w + i + 8), LOAD(i + 8), s1);                         \
        s2 = _mm256_fmadd_ps(_mm256_loadu_ps(w + i + 16), LOAD(i + 16), s2);                       \
        s3 = _mm256_fmadd_ps(_mm256_loadu_ps(w + i + 24), LOAD(i + 24), s3);                       \
    }                                                                                              \
    if (i + 8 <= n) {                                                                              \
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(w + i), LOAD(i), s0);                                 \
        i += 8;                                                                                    \
        if (i + 8 <= n) {                                                                          \
            s1 = _mm256_fmadd_ps(_mm256_loadu_ps(w + i), LOAD(i), s1);                             \
            i += 8;                                                                                \
            if (i + 8 <= n) {                                                                      \
                s2 = _mm256_fmadd_ps(_mm256_loadu_ps(w + i), LOAD(i), s2);                         \
                i += 8;                                                                            \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
    if (i < n) {                                                                                   \
        __m256i k = tail_mask(n - i);                                                              \
        __m256 xt = _mm256_and_ps(TAIL(i, n - i), _mm256_castsi256_ps(k));                         \
        s3 = _mm256_fmadd_ps(_mm256_maskload_ps(w + i, k), xt, s3);                                \
    }                                                                                              \
    return hsum(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)))

/* w += a x, x widened: (a x) then the add, rounded twice, as avx2.c's axpy. */
#define COMPACT_AXPY(LOAD, TAIL)                                                                   \
    const __m256 va = _mm256_set1_ps(a);                                                           \
    size_t i = 0;                                                                                  \
    for (; i + 8 <= n; i += 8)                                                                     \
        _mm256_storeu_ps(w + i,                                                                    \
                         _mm256_add_ps(_mm256_loadu_ps(w + i), _mm256_mul_ps(va, LOAD(i))));      \
    if (i < n) {                                                                                   \
        __m256i k = tail_mask(n - i);                                                              \
        _mm256_maskstore_ps(w + i, k, _mm256_add_ps(_mm256_maskload_ps(w + i, k),                  \
                                                    _mm256_mul_ps(va, TAIL(i, n - i))));           \
    }

#define LB(i) load_bf16(x, i)
#define TB(i, k) tail_bf16(x, i, k)
#define LU(i) load_u8(x, rh, rl, i)
#define TU(i, k) tail_u8(x, rh, rl, i, k)
#define LU1(i) load_u8_1(x, rh, rl, i, mode)
#define TU1(i, k) tail_u8_1(x, rh, rl, i, k, mode)

INLINE float dot_bf16(const float *w, const uint16_t *x, size_t n) { COMPACT_DOT(LB, TB); }
INLINE float dot_u8(const float *w, const uint8_t *x, const float *rh, const float *rl, size_t n)
{
    COMPACT_DOT(LU, TU);
}
INLINE float dot_u8_1(const float *w, const uint8_t *x, __m256 rh, __m256 rl, size_t n, int mode)
{
    COMPACT_DOT(LU1, TU1);
}
INLINE void axpy_bf16(float a, const uint16_t *x, float *w, size_t n) { COMPACT_AXPY(LB, TB) }
INLINE void axpy_u8(float a, const uint8_t *x, const float *rh, const float *rl, float *w, size_t n)
{
    COMPACT_AXPY(LU, TU)
}

INLINE void axpy_u8_1(float a, const uint8_t *x, __m256 rh, __m256 rl, float *w, size_t n,
                      int mode)
{
    COMPACT_AXPY(LU1, TU1)
}

/* The loop of step_rows for one type: DOT(x) and AXPY(a, x) on row x. */
#define STEP_ROWS(T, DOT, AXPY)                                                                    \
    float bv = *b;                                                                                 \
    size_t updates = 0;                                                                            \
    for (size_t row = 0; row < rows; row++) {                                                      \
        const T *x = (const T *)X + row * ldx;                                                     \
        const float y = Y[row];                                                                    \
        float s = DOT + bv * bias;                                                                 \
        if (y * s > tau) continue;                                                                 \
        float a = eta * y;                                                                         \
        AXPY;                                                                                      \
        bv += a * bias;                                                                            \
        updates++;                                                                                 \
    }                                                                                              \
    *b = bv;                                                                                       \
    return updates

static size_t step_rows_bf16(float *w, float *b, const void *X, size_t ldx, const float *Y,
                             size_t rows, size_t n, float tau, float eta, float bias)
{
    STEP_ROWS(uint16_t, dot_bf16(w, x, n), axpy_bf16(a, x, w, n));
}

static size_t step_rows_u8(float *w, float *b, const void *X, size_t ldx, const float *rh,
                           const float *rl, const float *Y, size_t rows, size_t n, float tau,
                           float eta, float bias)
{
    STEP_ROWS(uint8_t, dot_u8(w, x, rh, rl, n), axpy_u8(a, x, rh, rl, w, n));
}

/* step_rows_u8 when every feature has the divisor of the first: 2 loads a vector, not 4. */
INLINE size_t step_rows_u8_1(float *w, float *b, const void *X, size_t ldx, float rh1, float rl1,
                            const float *Y, size_t rows, size_t n, float tau, float eta,
                            float bias, int mode)
{
    const __m256 rh = _mm256_set1_ps(rh1), rl = _mm256_set1_ps(rl1);
    STEP_ROWS(uint8_t, dot_u8_1(w, x, rh, rl, n, mode), axpy_u8_1(a, x, rh, rl, w, n, mode));
}

PT_COMPACT_X86_KERNELS(avx2, __m256, _mm256_set1_ps)
