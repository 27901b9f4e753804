/*
 * Compact rows with AVX-512F (kernels.h, pt_compact_kernels): 16 elements a vector, widened
 * in registers, the same floats as compact_scalar.c. bf16: zero-extend to 32 bits and shift;
 * u8: zero-extend, convert, then fma(q, rh, q rl).
 *
 * - widen: the tail of 1..15 elements is copied into a zeroed 16-element block (a masked
 *   byte or word load needs AVX-512BW) and stored masked, so nothing past n is read or
 *   written.
 * - step_rows: fused, no buffer: the dot widens each vector as it loads it, in the order of
 *   avx512.c's dot (four chains over 64 elements, up to three more vectors into the first
 *   chains, the masked tail into the fourth, the chains pairwise, the lanes halves, quarters,
 *   pairs), and the update widens again from L1 (y + (a x), rounded twice), so w, b and the
 *   count equal avx512.c's step_rows on the widened rows bit for bit (tests/
 *   compact_kernel_checks.h checks it). The row is read from memory once, at 2 or 1 bytes an
 *   element.
 * - u8 with one divisor for every feature (pt_one_divisor): the reciprocals broadcast once.
 * - The AVX512_BF16 dot instruction (vdpbf16ps) is not used: it multiplies bf16 by bf16, and
 *   w is float32; rounding w to bf16 would change the model (and the float32 identity above),
 *   and the widening shift is one instruction a vector in a loop bound by memory.
 */
#include <immintrin.h>
#include <stdbool.h>
#include <string.h>

#include "compact_x86.h"
#include "kernels.h"

#define INLINE static inline __attribute__((always_inline))

INLINE __mmask16 tail_mask(size_t r) { return (__mmask16)((1u << r) - 1u); }

/* Sum of the 16 lanes in avx512.c's order: halves, quarters, then pairs. */
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

INLINE __m512 bf16_16(__m256i h)
{
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

INLINE __m512 u8_16(__m128i b, __m512 rh, __m512 rl)
{
    __m512 q = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(b));
    return _mm512_fmadd_ps(q, rh, _mm512_mul_ps(q, rl));
}

/* The 16 widened elements at i; the tail's first k (1..15), zeros after. */
INLINE __m512 load_bf16(const uint16_t *x, size_t i)
{
    return bf16_16(_mm256_loadu_si256((const __m256i *)(x + i)));
}

INLINE __m512 tail_bf16(const uint16_t *x, size_t i, size_t k)
{
    uint16_t t[16] = {0};
    memcpy(t, x + i, k * sizeof *t);
    return bf16_16(_mm256_loadu_si256((const __m256i *)t));
}

INLINE __m512 load_u8(const uint8_t *x, const float *rh, const float *rl, size_t i)
{
    return u8_16(_mm_loadu_si128((const __m128i *)(x + i)), _mm512_loadu_ps(rh + i),
                 _mm512_loadu_ps(rl + i));
}

INLINE __m512 tail_u8(const uint8_t *x, const float *rh, const float *rl, size_t i, size_t k)
{
    uint8_t t[16] = {0};
    memcpy(t, x + i, k);
    /* masked divisor loads: 1 past n, so those lanes widen 0 to 0 */
    __mmask16 km = tail_mask(k);
    __m512 one = _mm512_set1_ps(1.0f);
    return u8_16(_mm_loadu_si128((const __m128i *)t), _mm512_mask_loadu_ps(one, km, rh + i),
                 _mm512_mask_loadu_ps(one, km, rl + i));
}

/* u8_16 with one divisor: ONE_MUL (its reciprocal exact, rl = 0: a power of two) widens to
 * q rh, ONE_UNIT (divisor 1) to q, which is what fma(q, rh, q rl) gives then (q rl = +0). */
enum { ONE_ANY, ONE_MUL, ONE_UNIT };
INLINE __m512 u8_1(__m512 q, __m512 rh, __m512 rl, int mode)
{
    if (mode == ONE_UNIT) return q;
    if (mode == ONE_MUL) return _mm512_mul_ps(q, rh);
    return _mm512_fmadd_ps(q, rh, _mm512_mul_ps(q, rl));
}

/* u8 with one divisor for every feature (a matrix-wide scale, e.g. pixels / 255): rh and rl
 * broadcast in registers instead of loaded with each vector; the same floats as load_u8. */
INLINE __m512 load_u8_1(const uint8_t *x, __m512 rh, __m512 rl, size_t i, int mode)
{
    __m128i b = _mm_loadu_si128((const __m128i *)(x + i));
    return u8_1(_mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(b)), rh, rl, mode);
}

INLINE __m512 tail_u8_1(const uint8_t *x, __m512 rh, __m512 rl, size_t i, size_t k, int mode)
{
    uint8_t t[16] = {0};
    memcpy(t, x + i, k);
    __m128i b = _mm_loadu_si128((const __m128i *)t);
    return u8_1(_mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(b)), rh, rl, mode); /* q = 0: 0 */
}

void pt_widen_bf16_avx512(const uint16_t *x, float *out, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(out + i, load_bf16(x, i));
    if (i < n) _mm512_mask_storeu_ps(out + i, tail_mask(n - i), tail_bf16(x, i, n - i));
}

void pt_widen_u8_avx512(const uint8_t *x, const float *rh, const float *rl, float *out, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(out + i, load_u8(x, rh, rl, i));
    if (i < n) _mm512_mask_storeu_ps(out + i, tail_mask(n - i), tail_u8(x, rh, rl, i, n - i));
}

/* avx512.c's dot of w with the widened row: LOAD(i) the 16 widened elements at i, TAIL(i, k)
 * the first k. */
#define COMPACT_DOT(LOAD, TAIL)                                                                    \
    if (n == 0) return 0.0f;                                                                       \
    __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();                                     \
    __m512 s2 = _mm512_setzero_ps(), s3 = _mm512_setzero_ps();                                     \
    size_t i = 0;                                                                                  \
    for (; i + 64 <= n; i += 64) {                                                                 \
        s0 = _mm512_fmadd_ps(_mm512_loadu_ps(w + i), LOAD(i), s0);                                 \
        s1 = _mm512_fmadd_ps(_mm512_loadu_ps(w + i + 16), LOAD(i + 16), s1);                       \
        s2 = _mm512_fmadd_ps(_mm512_loadu_ps(w + i + 32), LOAD(i + 32), s2);                       \
        s3 = _mm512_fmadd_ps(_mm512_loadu_ps(w + i + 48), LOAD(i + 48), s3);                       \
    }                                                                                              \
    if (i + 16 <= n) {                                                                             \
        s0 = _mm512_fmadd_ps(_mm512_loadu_ps(w + i), LOAD(i), s0);                                 \
        i += 16;                                                                                   \
        if (i + 16 <= n) {                                                                         \
            s1 = _mm512_fmadd_ps(_mm512_loadu_ps(w + i), LOAD(i), s1);                             \
            i += 16;                                                                               \
            if (i + 16 <= n) {                                                                     \
                s2 = _mm512_fmadd_ps(_mm512_loadu_ps(w + i), LOAD(i), s2);                         \
                i += 16;                                                                           \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
    if (i < n)                                                                                     \
        s3 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(tail_mask(n - i), w + i), TAIL(i, n - i), s3); \
    return hsum(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)))

/* w += a x, x widened: (a x) then the add, rounded twice, as avx512.c's axpy. */
#define COMPACT_AXPY(LOAD, TAIL)                                                                   \
    const __m512 va = _mm512_set1_ps(a);                                                           \
    size_t i = 0;                                                                                  \
    for (; i + 16 <= n; i += 16)                                                                   \
        _mm512_storeu_ps(w + i,                                                                    \
                         _mm512_add_ps(_mm512_loadu_ps(w + i), _mm512_mul_ps(va, LOAD(i))));      \
    if (i < n) {                                                                                   \
        __mmask16 k = tail_mask(n - i);                                                            \
        _mm512_mask_storeu_ps(w + i, k, _mm512_add_ps(_mm512_maskz_loadu_ps(k, w + i),             \
                                                      _mm512_mul_ps(va, TAIL(i, n - i))));         \
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
INLINE float dot_u8_1(const float *w, const uint8_t *x, __m512 rh, __m512 rl, size_t n, int mode)
{
    COMPACT_DOT(LU1, TU1);
}
INLINE void axpy_bf16(float a, const uint16_t *x, float *w, size_t n) { COMPACT_AXPY(LB, TB) }
INLINE void axpy_u8(float a, const uint8_t *x, const float *rh, const float *rl, float *w, size_t n)
{
    COMPACT_AXPY(LU, TU)
}

INLINE void axpy_u8_1(float a, const uint8_t *x, __m512 rh, __m512 rl, float *w, size_t n,
                      int mode)
{
    COMPACT_AXPY(LU1, TU1)
}

/* COMPACT_DOT on two rows at once, x and z (the same n), their chains interleaved so that
 * one row's lane sums overlap the other's loads: each row's sum formed exactly as
 * COMPACT_DOT forms it (LOAD(r, i): row r's 16 widened elements at i, TAIL(r, i, k)). */
#define COMPACT_DOT2(LOAD, TAIL, SX, SZ)                                                           \
    if (n == 0) {                                                                                  \
        SX = SZ = 0.0f;                                                                            \
    } else {                                                                                       \
        __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;                                \
        __m512 b0 = a0, b1 = a0, b2 = a0, b3 = a0;                                                 \
        size_t i = 0;                                                                              \
        for (; i + 64 <= n; i += 64) {                                                             \
            const __m512 w0 = _mm512_loadu_ps(w + i), w1 = _mm512_loadu_ps(w + i + 16);           \
            const __m512 w2 = _mm512_loadu_ps(w + i + 32), w3 = _mm512_loadu_ps(w + i + 48);      \
            a0 = _mm512_fmadd_ps(w0, LOAD(x, i), a0);                                              \
            b0 = _mm512_fmadd_ps(w0, LOAD(z, i), b0);                                              \
            a1 = _mm512_fmadd_ps(w1, LOAD(x, i + 16), a1);                                         \
            b1 = _mm512_fmadd_ps(w1, LOAD(z, i + 16), b1);                                         \
            a2 = _mm512_fmadd_ps(w2, LOAD(x, i + 32), a2);                                         \
            b2 = _mm512_fmadd_ps(w2, LOAD(z, i + 32), b2);                                         \
            a3 = _mm512_fmadd_ps(w3, LOAD(x, i + 48), a3);                                         \
            b3 = _mm512_fmadd_ps(w3, LOAD(z, i + 48), b3);                                         \
        }                                                                                          \
        if (i + 16 <= n) {                                                                         \
            __m512 wv = _mm512_loadu_ps(w + i);                                                    \
            a0 = _mm512_fmadd_ps(wv, LOAD(x, i), a0);                                              \
            b0 = _mm512_fmadd_ps(wv, LOAD(z, i), b0);                                              \
            i += 16;                                                                               \
            if (i + 16 <= n) {                                                                     \
                wv = _mm512_loadu_ps(w + i);                                                       \
                a1 = _mm512_fmadd_ps(wv, LOAD(x, i), a1);                                          \
                b1 = _mm512_fmadd_ps(wv, LOAD(z, i), b1);                                          \
                i += 16;                                                                           \
                if (i + 16 <= n) {                                                                 \
                    wv = _mm512_loadu_ps(w + i);                                                   \
                    a2 = _mm512_fmadd_ps(wv, LOAD(x, i), a2);                                      \
                    b2 = _mm512_fmadd_ps(wv, LOAD(z, i), b2);                                      \
                    i += 16;                                                                       \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
        if (i < n) {                                                                               \
            const __m512 wv = _mm512_maskz_loadu_ps(tail_mask(n - i), w + i);                      \
            a3 = _mm512_fmadd_ps(wv, TAIL(x, i, n - i), a3);                                       \
            b3 = _mm512_fmadd_ps(wv, TAIL(z, i, n - i), b3);                                       \
        }                                                                                          \
        SX = hsum(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));                    \
        SZ = hsum(_mm512_add_ps(_mm512_add_ps(b0, b1), _mm512_add_ps(b2, b3)));                    \
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

/* step_rows_u8 when every feature has the divisor of the first: 2 loads a vector, not 4
 * (fewer cycles a row from L2). The rows are scored two at a time (COMPACT_DOT2) against the
 * same w, the second's score kept only if the first made no update (else it is scored again,
 * after the update): so every decision sees the w the rows in turn would, bit for bit, while
 * the lane sums at each row's end, on whose result its decision waits, overlap the next row's
 * loads (the sums and the test took a large share of an epoch of 8-bit pixels, which makes
 * few mistakes: bench online/compact/dtype:u8/data:pixels-raw). */
#define LU1R(r, i) load_u8_1(r, rh, rl, i, mode)
#define TU1R(r, i, k) tail_u8_1(r, rh, rl, i, k, mode)
INLINE size_t step_rows_u8_1(float *w, float *b, const void *X, size_t ldx, float rh1, float rl1,
                            const float *Y, size_t rows, size_t n, float tau, float eta,
                            float bias, int mode)
{
    const __m512 rh = _mm512_set1_ps(rh1), rl = _mm512_set1_ps(rl1);
    float bv = *b;
    size_t updates = 0;
    for (size_t row = 0; row < rows;) {
        const uint8_t *x = (const uint8_t *)X + row * ldx;
        const bool two = row + 1 < rows;
        float sx, sz = 0.0f;
        if (two) {
            const uint8_t *z = x + ldx;
            COMPACT_DOT2(LU1R, TU1R, sx, sz);
        } else {
            sx = dot_u8_1(w, x, rh, rl, n, mode);
        }
        float y = Y[row], s = sx + bv * bias;
        row++;
        if (!(y * s > tau)) { /* an update: the next row is scored again after it */
            const float a = eta * y;
            axpy_u8_1(a, x, rh, rl, w, n, mode);
            bv += a * bias;
            updates++;
            continue;
        }
        if (!two) continue;
        y = Y[row];
        s = sz + bv * bias;
        row++;
        if (y * s > tau) continue;
        const float a = eta * y;
        axpy_u8_1(a, x + ldx, rh, rl, w, n, mode);
        bv += a * bias;
        updates++;
    }
    *b = bv;
    return updates;
}

PT_COMPACT_X86_KERNELS(avx512, __m512, _mm512_set1_ps)
