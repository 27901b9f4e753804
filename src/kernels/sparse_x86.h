/*
 * The x86 sparse-row kernels, written once with AVX2 + FMA intrinsics and included by
 * sparse_avx2.c and sparse_avx512.c, each compiled with its ISA's flags (kernels.h states
 * the contracts and summation orders).
 *
 * Why no vgatherdps and no vscatterdps: on the CPUs these were measured on, loading the 8
 * entries of w one by one into the lanes of a vector ran faster than the hardware gather
 * (AVX2 or AVX-512) on rows of 50-300 non-zeros, and the AVX-512 scatter slower than plain
 * stores (bench sparse/dot/form:vgatherdps-ymm and -zmm, sparse/axpy/form:vscatterdps-zmm).
 * What limits these kernels there is the number of loads a non-zero costs (its index, its
 * value, its entry of w): the forms below spend about 1.6 instead of 3. CPUs with faster
 * gathers may rank them otherwise: bench sparse/dot and sparse/axpy measure the table.
 *
 * - dot: rows of at least PT_SPARSE_VEC_MIN non-zeros gather 8 entries at a time (the indices
 *   read two at a time as 64-bit words) into two accumulators of 8 lanes, fused with the
 *   values; the lanes are summed as avx2.c's hsum, then the last nnz mod 8 added in order.
 *   Shorter rows are the scalar loop: there the vector's fixed cost (the lane sum) measured
 *   more than it saves, and the result is sparse_scalar.c's, bit for bit. Nor does the scalar
 *   loop's chain of dependent adds limit the online epoch: one order for every row on every
 *   ISA (16 lanes, k mod 16, zero-padded tail, a fixed lane tree; scalar emulating it) gave
 *   rcv1like's classic epoch (200,000 x 47,236, ~50 non-zeros a row) no speedup in paired
 *   runs (bench online/sparse_epoch; perf: the time is in the loads and lane inserts and the
 *   lane sum before each row's test, not in the adds).
 * - axpy, axpy2: a val, for 8 non-zeros, is one vector multiply; each entry of w is then one
 *   scalar add and store (rounded as scalar: the product, then the sum).
 * - dot_many: 4 classes at a time share each block's indices and values; every class's sum is
 *   formed exactly as dot forms it, so out[c] equals dot's bits.
 */
#ifndef PT_KERNELS_SPARSE_X86_H
#define PT_KERNELS_SPARSE_X86_H

#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "kernels.h"
#include "sparse_impl.h"

#ifndef INLINE
#define INLINE static inline __attribute__((always_inline))
#endif

/* Rows shorter than this are summed by the scalar loop (see above). */
#define PT_SPARSE_VEC_MIN 32

/* The indices idx[0..7] as four 64-bit words (two each; x86 is little-endian: the low half is
 * the first). One load for two indices instead of two. */
typedef struct idx8 {
    uint64_t p0, p1, p2, p3;
} idx8;

INLINE idx8 load_idx8(const uint32_t *idx)
{
    idx8 q;
    memcpy(&q.p0, idx, 8);
    memcpy(&q.p1, idx + 2, 8);
    memcpy(&q.p2, idx + 4, 8);
    memcpy(&q.p3, idx + 6, 8);
    return q;
}

#define LO(p) ((uint32_t)(p))
#define HI(p) ((uint32_t)((p) >> 32))

/* w at the 8 indices, lane j holding w[idx[j]]. */
INLINE __m256 gather8(const float *w, idx8 q)
{
    return _mm256_setr_ps(w[LO(q.p0)], w[HI(q.p0)], w[LO(q.p1)], w[HI(q.p1)], w[LO(q.p2)], w[HI(q.p2)],
                          w[LO(q.p3)], w[HI(q.p3)]);
}

/* Sum of the 8 lanes in a fixed order: halves, then pairs (avx2.c's). */
INLINE float hsum8(__m256 v)
{
    __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
    __m128 s1 = _mm_add_ss(s2, _mm_movehdup_ps(s2));
    return _mm_cvtss_f32(s1);
}

/* The scalar loop from k: in order, each product rounded before its add. */
INLINE float sdot_from(float s, const float *w, const uint32_t *idx, const float *val, size_t k, size_t nnz)
{
    for (; k < nnz; k++) s += w[idx[k]] * val[k];
    return s;
}

INLINE float x86_sdot(const float *w, const uint32_t *idx, const float *val, size_t nnz)
{
    if (nnz < PT_SPARSE_VEC_MIN) return sdot_from(0.0f, w, idx, val, 0, nnz);
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    size_t k = 0;
    /* Main loop: two blocks of 8, one into each accumulator. */
    for (; k + 16 <= nnz; k += 16) {
        s0 = _mm256_fmadd_ps(gather8(w, load_idx8(idx + k)), _mm256_loadu_ps(val + k), s0);
        s1 = _mm256_fmadd_ps(gather8(w, load_idx8(idx + k + 8)), _mm256_loadu_ps(val + k + 8), s1);
    }
    /* One whole block left at most. */
    if (k + 8 <= nnz) {
        s0 = _mm256_fmadd_ps(gather8(w, load_idx8(idx + k)), _mm256_loadu_ps(val + k), s0);
        k += 8;
    }
    /* The lanes, then the last 0..7 in order. */
    return sdot_from(hsum8(_mm256_add_ps(s0, s1)), w, idx, val, k, nnz);
}

/* Element-wise: the products of 8 non-zeros in one multiply, then each added to its entry. */
INLINE void x86_saxpy(float a, const uint32_t *idx, const float *val, size_t nnz, float *w)
{
    const __m256 va = _mm256_set1_ps(a);
    float t[8];
    size_t k = 0;
    for (; k + 8 <= nnz; k += 8) {
        const idx8 q = load_idx8(idx + k);
        _mm256_storeu_ps(t, _mm256_mul_ps(va, _mm256_loadu_ps(val + k)));
        w[LO(q.p0)] += t[0];
        w[HI(q.p0)] += t[1];
        w[LO(q.p1)] += t[2];
        w[HI(q.p1)] += t[3];
        w[LO(q.p2)] += t[4];
        w[HI(q.p2)] += t[5];
        w[LO(q.p3)] += t[6];
        w[HI(q.p3)] += t[7];
    }
    for (; k < nnz; k++) w[idx[k]] += a * val[k];
}

INLINE void x86_saxpy2(float a, float c, const uint32_t *idx, const float *val, size_t nnz, float *w, float *u)
{
    const __m256 va = _mm256_set1_ps(a), vc = _mm256_set1_ps(c);
    float t[8], r[8];
    size_t k = 0;
    for (; k + 8 <= nnz; k += 8) {
        const idx8 q = load_idx8(idx + k);
        const __m256 v = _mm256_loadu_ps(val + k);
        _mm256_storeu_ps(t, _mm256_mul_ps(va, v));
        _mm256_storeu_ps(r, _mm256_mul_ps(vc, v));
        const uint32_t j[8] = {LO(q.p0), HI(q.p0), LO(q.p1), HI(q.p1), LO(q.p2), HI(q.p2), LO(q.p3), HI(q.p3)};
        for (int l = 0; l < 8; l++) {
            w[j[l]] += t[l];
            u[j[l]] += r[l];
        }
    }
    for (; k < nnz; k++) {
        w[idx[k]] += a * val[k];
        u[idx[k]] += c * val[k];
    }
}

/* dot for G classes at once (rows W + g ldw), each summed exactly as x86_sdot sums. */
#define X86_SDOT_GROUP(G)                                                                          \
    INLINE void x86_sdot_group##G(const float *W, size_t ldw, const uint32_t *idx, const float *val, \
                                  size_t nnz, float *out)                                        \
    {                                                                                            \
        if (nnz < PT_SPARSE_VEC_MIN) {                                                           \
            for (int g = 0; g < G; g++) out[g] = sdot_from(0.0f, W + g * ldw, idx, val, 0, nnz); \
            return;                                                                              \
        }                                                                                        \
        __m256 s0[G], s1[G];                                                                     \
        for (int g = 0; g < G; g++) s0[g] = s1[g] = _mm256_setzero_ps();                         \
        size_t k = 0;                                                                            \
        for (; k + 16 <= nnz; k += 16) {                                                         \
            const idx8 q0 = load_idx8(idx + k), q1 = load_idx8(idx + k + 8);                     \
            const __m256 v0 = _mm256_loadu_ps(val + k), v1 = _mm256_loadu_ps(val + k + 8);       \
            for (int g = 0; g < G; g++) {                                                        \
                s0[g] = _mm256_fmadd_ps(gather8(W + g * ldw, q0), v0, s0[g]);                    \
                s1[g] = _mm256_fmadd_ps(gather8(W + g * ldw, q1), v1, s1[g]);                    \
            }                                                                                    \
        }                                                                                        \
        if (k + 8 <= nnz) {                                                                      \
            const idx8 q0 = load_idx8(idx + k);                                                  \
            const __m256 v0 = _mm256_loadu_ps(val + k);                                          \
            for (int g = 0; g < G; g++) s0[g] = _mm256_fmadd_ps(gather8(W + g * ldw, q0), v0, s0[g]); \
            k += 8;                                                                              \
        }                                                                                        \
        for (int g = 0; g < G; g++)                                                              \
            out[g] = sdot_from(hsum8(_mm256_add_ps(s0[g], s1[g])), W + g * ldw, idx, val, k, nnz); \
    }
X86_SDOT_GROUP(4)
X86_SDOT_GROUP(1)

INLINE void x86_sdot_many(const float *W, size_t ldw, size_t K, const uint32_t *idx, const float *val,
                          size_t nnz, float *out)
{
    size_t c = 0;
    for (; c + 4 <= K; c += 4) x86_sdot_group4(W + c * ldw, ldw, idx, val, nnz, out + c);
    for (; c < K; c++) x86_sdot_group1(W + c * ldw, ldw, idx, val, nnz, out + c);
}

#undef LO
#undef HI

/* The table pt_sparse_kernels_<isa> from these forms, with sparse_impl.h's row loops inlining
 * them (expanded once, by the ISA's file). */
#define PT_SPARSE_X86_KERNELS(isa)                                                                 \
    static float isa##_sparse_dot(const float *w, const uint32_t *idx, const float *val, size_t nnz) \
    {                                                                                              \
        return x86_sdot(w, idx, val, nnz);                                                         \
    }                                                                                              \
    static void isa##_sparse_axpy(float a, const uint32_t *idx, const float *val, size_t nnz,      \
                                  float *w)                                                        \
    {                                                                                              \
        x86_saxpy(a, idx, val, nnz, w);                                                            \
    }                                                                                              \
    static void isa##_sparse_axpy2(float a, float c, const uint32_t *idx, const float *val,        \
                                   size_t nnz, float *w, float *u)                                 \
    {                                                                                              \
        x86_saxpy2(a, c, idx, val, nnz, w, u);                                                     \
    }                                                                                              \
    static void isa##_sparse_dot_many(const float *W, size_t ldw, size_t K, const uint32_t *idx,   \
                                      const float *val, size_t nnz, float *out)                    \
    {                                                                                              \
        x86_sdot_many(W, ldw, K, idx, val, nnz, out);                                              \
    }                                                                                              \
    PT_SPARSE_ROW_KERNELS(isa, x86_sdot, x86_saxpy, x86_saxpy2)                                    \
    const pt_sparse_kernels pt_sparse_kernels_##isa = {                                            \
        .dot = isa##_sparse_dot,                                                                   \
        .axpy = isa##_sparse_axpy,                                                                 \
        .axpy2 = isa##_sparse_axpy2,                                                               \
        .step = isa##_sparse_step,                                                                 \
        .step_rows = isa##_sparse_step_rows,                                                       \
        .step_rows_avg = isa##_sparse_step_rows_avg,                                               \
        .dot_rows = isa##_sparse_dot_rows,                                                         \
        .gemv_t = isa##_sparse_gemv_t,                                                             \
        .dot_many = isa##_sparse_dot_many,                                                         \
        .scatter = pt_sparse_scatter_plain,                                                        \
        .clear = pt_sparse_clear_plain,                                                            \
    };

#endif /* PT_KERNELS_SPARSE_X86_H */
