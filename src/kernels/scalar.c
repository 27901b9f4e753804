/* Reference kernels in portable C: the oracle every ISA variant is tested against.
 * Written plainly, in order, one accumulator: the compiler keeps the order (no -ffast-math),
 * so results are the textbook sums. */
#include "kernels.h"
#include "rows_impl.h"

static float scalar_dot(const float *a, const float *b, size_t n)
{
    float s = 0.0f;
    for (size_t i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

static void scalar_axpy(float alpha, const float *x, float *y, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] += alpha * x[i];
}

static int scalar_step(float *w, float *b, const float *x, size_t n, float y, float tau, float eta,
                       float bias, float *score)
{
    float s = scalar_dot(w, x, n) + *b * bias;
    *score = s;
    if (y * s > tau) return 0;
    float a = eta * y;
    scalar_axpy(a, x, w, n);
    *b += a * bias;
    return 1;
}

PT_ROW_KERNELS(scalar, scalar_dot, scalar_axpy)
PT_COMPACT_KERNELS(scalar, scalar_dot, scalar_axpy, pt_widen_bf16_scalar, pt_widen_u8_scalar)

static void scalar_axpy2(float a, float c, const float *x, float *w, float *u, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        w[i] += a * x[i];
        u[i] += c * x[i];
    }
}

static void scalar_scale_add(float a, const float *x, float c, const float *y, float *out, size_t n)
{
    for (size_t i = 0; i < n; i++) out[i] = a * x[i] + c * y[i];
}

static void scalar_dot_many(const float *W, size_t ldw, size_t K, const float *x, size_t n, float *out)
{
    for (size_t c = 0; c < K; c++) out[c] = scalar_dot(W + c * ldw, x, n);
}

const pt_kernels pt_kernels_scalar = {
    .name = "scalar",
    .isa = PT_ISA_SCALAR,
    .dot = scalar_dot,
    .axpy = scalar_axpy,
    .step = scalar_step,
    .step_rows = scalar_step_rows,
    .dot_rows = scalar_dot_rows,
    .axpy2 = scalar_axpy2,
    .scale_add = scalar_scale_add,
    .dot_many = scalar_dot_many,
    .gram = &pt_gram_kernels_scalar,
    .sparse = &pt_sparse_kernels_scalar,
    .expand = &pt_expand_kernels_scalar,
    .compact = &scalar_compact,
};
