/*
 * What the sparse-row kernels of every ISA share (kernels.h states the contracts): included by
 * sparse_scalar.c, sparse_neon.c and sparse_x86.h (for sparse_avx2.c and sparse_avx512.c),
 * which define their dot, axpy and axpy2 and expand PT_SPARSE_ROW_KERNELS(prefix, dot, axpy,
 * axpy2), so each ISA's step and row loops inline its own dot and axpy (one table call per
 * block of rows, not one per row); and scatter and clear, plain stores every ISA shares: one
 * store a non-zero, which no vector form can do with fewer.
 */
#ifndef PT_KERNELS_SPARSE_IMPL_H
#define PT_KERNELS_SPARSE_IMPL_H

#include <stddef.h>
#include <stdint.h>

#define PT_SPARSE_ROW_KERNELS(prefix, dot, axpy, axpy2)                                            \
    static int prefix##_sparse_step(float *w, float *b, const uint32_t *idx, const float *val,    \
                                    size_t nnz, float y, float tau, float eta, float bias,        \
                                    float *score)                                                 \
    {                                                                                             \
        float s = dot(w, idx, val, nnz) + *b * bias;                                              \
        *score = s;                                                                               \
        if (y * s > tau) return 0;                                                                \
        float a = eta * y;                                                                        \
        axpy(a, idx, val, nnz, w);                                                                \
        *b += a * bias;                                                                           \
        return 1;                                                                                 \
    }                                                                                             \
                                                                                                  \
    /* step on each row in order, with b in a register and the count kept here */               \
    static size_t prefix##_sparse_step_rows(float *w, float *b, const uint64_t *rowptr,           \
                                            const uint32_t *idx, const float *val,                \
                                            const float *Y, size_t rows, float tau, float eta,    \
                                            float bias)                                           \
    {                                                                                             \
        float bv = *b;                                                                            \
        size_t updates = 0;                                                                       \
        for (size_t r = 0; r < rows; r++) {                                                       \
            const uint64_t o = rowptr[r];                                                         \
            const size_t nnz = (size_t)(rowptr[r + 1] - o);                                       \
            const float y = Y[r];                                                                 \
            float s = dot(w, idx + o, val + o, nnz) + bv * bias;                                  \
            if (y * s > tau) continue;                                                            \
            float a = eta * y;                                                                    \
            axpy(a, idx + o, val + o, nnz, w);                                                    \
            bv += a * bias;                                                                       \
            updates++;                                                                            \
        }                                                                                         \
        *b = bv;                                                                                  \
        return updates;                                                                           \
    }                                                                                             \
                                                                                                  \
    /* the averaged variant's loop: visit_sparse (paths/online.h) on each row, in registers */  \
    static size_t prefix##_sparse_step_rows_avg(float *w, float *u, float *b, float *ub,          \
                                                double *steps, const uint64_t *rowptr,            \
                                                const uint32_t *idx, const float *val,            \
                                                const float *Y, size_t rows, float tau,           \
                                                float eta, float bias)                            \
    {                                                                                             \
        float bv = *b, ubv = *ub;                                                                 \
        double t = *steps;                                                                        \
        size_t updates = 0;                                                                       \
        for (size_t r = 0; r < rows; r++, t += 1.0) {                                             \
            const uint64_t o = rowptr[r];                                                         \
            const size_t nnz = (size_t)(rowptr[r + 1] - o);                                       \
            const float y = Y[r];                                                                 \
            float s = dot(w, idx + o, val + o, nnz) + bv * bias;                                  \
            if (!(y * s <= tau)) continue;                                                        \
            float a = eta * y, c = (float)t * a;                                                  \
            axpy2(a, c, idx + o, val + o, nnz, w, u);                                             \
            ubv += c * bias;                                                                      \
            bv += a * bias;                                                                       \
            updates++;                                                                            \
        }                                                                                         \
        *b = bv;                                                                                  \
        *ub = ubv;                                                                                \
        *steps = t;                                                                               \
        return updates;                                                                           \
    }                                                                                             \
                                                                                                  \
    static void prefix##_sparse_dot_rows(const float *w, const uint64_t *rowptr,                  \
                                         const uint32_t *idx, const float *val, size_t rows,      \
                                         float *out)                                              \
    {                                                                                             \
        for (size_t r = 0; r < rows; r++) {                                                       \
            const uint64_t o = rowptr[r];                                                         \
            out[r] = dot(w, idx + o, val + o, (size_t)(rowptr[r + 1] - o));                       \
        }                                                                                         \
    }                                                                                             \
                                                                                                  \
    static void prefix##_sparse_gemv_t(const float *coef, const uint64_t *rowptr,                 \
                                       const uint32_t *idx, const float *val, size_t rows,        \
                                       float *g)                                                  \
    {                                                                                             \
        for (size_t r = 0; r < rows; r++) {                                                       \
            if (coef[r] == 0.0f) continue;                                                        \
            const uint64_t o = rowptr[r];                                                         \
            axpy(coef[r], idx + o, val + o, (size_t)(rowptr[r + 1] - o), g);                      \
        }                                                                                         \
    }

static inline void pt_sparse_scatter_plain(const uint32_t *idx, const float *val, size_t nnz, float *buf)
{
    for (size_t k = 0; k < nnz; k++) buf[idx[k]] = val[k];
}

static inline void pt_sparse_clear_plain(const uint32_t *idx, size_t nnz, float *buf)
{
    for (size_t k = 0; k < nnz; k++) buf[idx[k]] = 0.0f;
}

#endif /* PT_KERNELS_SPARSE_IMPL_H */
