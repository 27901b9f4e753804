/*
 * Sparse-row kernels in portable C: the oracle every ISA's are tested against (kernels.h states
 * the contracts). Written plainly, in order, one accumulator, each product rounded before its
 * add (no contraction: -ffp-contract=off), so results are the textbook sums.
 */
#include "kernels.h"
#include "sparse_impl.h"

static float scalar_sparse_dot(const float *w, const uint32_t *idx, const float *val, size_t nnz)
{
    float s = 0.0f;
    for (size_t k = 0; k < nnz; k++) s += w[idx[k]] * val[k];
    return s;
}

static void scalar_sparse_axpy(float a, const uint32_t *idx, const float *val, size_t nnz, float *w)
{
    for (size_t k = 0; k < nnz; k++) w[idx[k]] += a * val[k];
}

static void scalar_sparse_axpy2(float a, float c, const uint32_t *idx, const float *val, size_t nnz,
                                float *w, float *u)
{
    for (size_t k = 0; k < nnz; k++) {
        w[idx[k]] += a * val[k];
        u[idx[k]] += c * val[k];
    }
}

PT_SPARSE_ROW_KERNELS(scalar, scalar_sparse_dot, scalar_sparse_axpy, scalar_sparse_axpy2)

static void scalar_sparse_dot_many(const float *W, size_t ldw, size_t K, const uint32_t *idx,
                                   const float *val, size_t nnz, float *out)
{
    for (size_t c = 0; c < K; c++) out[c] = scalar_sparse_dot(W + c * ldw, idx, val, nnz);
}

const pt_sparse_kernels pt_sparse_kernels_scalar = {
    .dot = scalar_sparse_dot,
    .axpy = scalar_sparse_axpy,
    .axpy2 = scalar_sparse_axpy2,
    .step = scalar_sparse_step,
    .step_rows = scalar_sparse_step_rows,
    .step_rows_avg = scalar_sparse_step_rows_avg,
    .dot_rows = scalar_sparse_dot_rows,
    .gemv_t = scalar_sparse_gemv_t,
    .dot_many = scalar_sparse_dot_many,
    .scatter = pt_sparse_scatter_plain,
    .clear = pt_sparse_clear_plain,
};
