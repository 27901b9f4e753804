/*
 * aarch64 Advanced SIMD (NEON) sparse-row kernels: 4 non-zeros a vector. NEON has no gather
 * and no scatter (SVE has them; this table is for ASIMD):
 *
 * - dot: four entries of w loaded one by one into the lanes of a vector, multiplied by four
 *   values with one FMA, into four accumulators over 16 non-zeros an iteration (the loads are
 *   independent, so they overlap; the FMA chains do not wait on each other). The tail of 1..3
 *   runs in order after the lanes are combined, as neon.c's dense dot. Rows of fewer than 32
 *   non-zeros take the scalar loop, as on x86, so that every SIMD ISA sums them as
 *   sparse_scalar.c does.
 * - axpy, axpy2: the plain loop, as sparse_scalar.c's.
 * - dot_many: dot for each class, so out[c] is dot's.
 * Checked under qemu (scripts/test-neon); never timed (no aarch64 machine measured these).
 */
#include <arm_neon.h>

#include "kernels.h"
#include "sparse_impl.h"

#define INLINE static inline __attribute__((always_inline))

/* w[idx[0..3]] in the four lanes. */
INLINE float32x4_t gather4(const float *w, const uint32_t *idx)
{
    float32x4_t g = vdupq_n_f32(0.0f);
    g = vld1q_lane_f32(w + idx[0], g, 0);
    g = vld1q_lane_f32(w + idx[1], g, 1);
    g = vld1q_lane_f32(w + idx[2], g, 2);
    g = vld1q_lane_f32(w + idx[3], g, 3);
    return g;
}

/* Rows shorter than this are summed by the scalar loop, as on x86 (sparse_x86.h). */
#define SPARSE_VEC_MIN 32

INLINE float sdot_impl(const float *w, const uint32_t *idx, const float *val, size_t nnz)
{
    if (nnz < SPARSE_VEC_MIN) {
        float s = 0.0f;
        for (size_t k = 0; k < nnz; k++) s += w[idx[k]] * val[k];
        return s;
    }
    float32x4_t s0 = vdupq_n_f32(0.0f), s1 = s0, s2 = s0, s3 = s0;
    size_t k = 0;
    /* Main loop: 16 non-zeros, four accumulators. */
    for (; k + 16 <= nnz; k += 16) {
        s0 = vfmaq_f32(s0, gather4(w, idx + k), vld1q_f32(val + k));
        s1 = vfmaq_f32(s1, gather4(w, idx + k + 4), vld1q_f32(val + k + 4));
        s2 = vfmaq_f32(s2, gather4(w, idx + k + 8), vld1q_f32(val + k + 8));
        s3 = vfmaq_f32(s3, gather4(w, idx + k + 12), vld1q_f32(val + k + 12));
    }
    /* Up to three whole vectors left: one into each of the first accumulators. */
    if (k + 4 <= nnz) {
        s0 = vfmaq_f32(s0, gather4(w, idx + k), vld1q_f32(val + k));
        k += 4;
        if (k + 4 <= nnz) {
            s1 = vfmaq_f32(s1, gather4(w, idx + k), vld1q_f32(val + k));
            k += 4;
            if (k + 4 <= nnz) {
                s2 = vfmaq_f32(s2, gather4(w, idx + k), vld1q_f32(val + k));
                k += 4;
            }
        }
    }
    /* Combine the accumulators pairwise, then the lanes ((l0 + l1) + (l2 + l3)). */
    float s = vaddvq_f32(vaddq_f32(vaddq_f32(s0, s1), vaddq_f32(s2, s3)));
    /* Tail of 1..3, in order. */
    for (; k < nnz; k++) s += w[idx[k]] * val[k];
    return s;
}

INLINE void saxpy_impl(float a, const uint32_t *idx, const float *val, size_t nnz, float *w)
{
    for (size_t k = 0; k < nnz; k++) w[idx[k]] += a * val[k];
}

static float neon_sparse_dot(const float *w, const uint32_t *idx, const float *val, size_t nnz)
{
    return sdot_impl(w, idx, val, nnz);
}

static void neon_sparse_axpy(float a, const uint32_t *idx, const float *val, size_t nnz, float *w)
{
    saxpy_impl(a, idx, val, nnz, w);
}

INLINE void saxpy2_impl(float a, float c, const uint32_t *idx, const float *val, size_t nnz,
                        float *w, float *u)
{
    for (size_t k = 0; k < nnz; k++) {
        w[idx[k]] += a * val[k];
        u[idx[k]] += c * val[k];
    }
}

static void neon_sparse_axpy2(float a, float c, const uint32_t *idx, const float *val, size_t nnz,
                              float *w, float *u)
{
    saxpy2_impl(a, c, idx, val, nnz, w, u);
}

PT_SPARSE_ROW_KERNELS(neon, sdot_impl, saxpy_impl, saxpy2_impl)

static void neon_sparse_dot_many(const float *W, size_t ldw, size_t K, const uint32_t *idx,
                                 const float *val, size_t nnz, float *out)
{
    for (size_t c = 0; c < K; c++) out[c] = sdot_impl(W + c * ldw, idx, val, nnz);
}

const pt_sparse_kernels pt_sparse_kernels_neon = {
    .dot = neon_sparse_dot,
    .axpy = neon_sparse_axpy,
    .axpy2 = neon_sparse_axpy2,
    .step = neon_sparse_step,
    .step_rows = neon_sparse_step_rows,
    .step_rows_avg = neon_sparse_step_rows_avg,
    .dot_rows = neon_sparse_dot_rows,
    .gemv_t = neon_sparse_gemv_t,
    .dot_many = neon_sparse_dot_many,
    .scatter = pt_sparse_scatter_plain,
    .clear = pt_sparse_clear_plain,
};
