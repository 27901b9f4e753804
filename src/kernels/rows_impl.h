/*
 * The row-loop kernels every ISA shares: included by scalar.c, avx2.c, avx512.c and neon.c after
 * they define their dot and axpy, and expanded there with PT_ROW_KERNELS(prefix, dot, axpy), so
 * each ISA's loop inlines its own dot and axpy (the table calls once per block of rows, not once
 * per row). What the loops compute is one thing, written once, here.
 */
#ifndef PT_KERNELS_ROWS_IMPL_H
#define PT_KERNELS_ROWS_IMPL_H

#define PT_ROW_KERNELS(prefix, dot, axpy)                                                          \
    /* step on each row in order, with b in a register and the count kept here */               \
    static size_t prefix##_step_rows(float *w, float *b, const float *X, size_t ldx,             \
                                     const float *Y, size_t rows, size_t n, float tau, float eta, \
                                     float bias)                                                 \
    {                                                                                            \
        float bv = *b;                                                                           \
        size_t updates = 0;                                                                      \
        for (size_t r = 0; r < rows; r++) {                                                      \
            const float *x = X + r * ldx;                                                        \
            const float y = Y[r];                                                                \
            float s = dot(w, x, n) + bv * bias;                                                  \
            if (y * s > tau) continue;                                                           \
            float a = eta * y;                                                                   \
            axpy(a, x, w, n);                                                                    \
            bv += a * bias;                                                                      \
            updates++;                                                                           \
        }                                                                                        \
        *b = bv;                                                                                 \
        return updates;                                                                          \
    }                                                                                            \
                                                                                                 \
    static void prefix##_dot_rows(const float *w, const float *X, size_t ldx, size_t rows,       \
                                  size_t n, float *out)                                          \
    {                                                                                            \
        for (size_t r = 0; r < rows; r++) out[r] = dot(w, X + r * ldx, n);                       \
    }

/* The compact step_rows (kernels.h) and the table of an ISA's compact kernels: each row widened
 * into buf by the ISA's widen, then the same dot and axpy as step_rows. */
#define PT_COMPACT_KERNELS(prefix, dotf, axpyf, wbf16, wu8)                                      \
    /* row x of type t widened into buf (n floats) by the ISA's widen */                         \
    static const float *prefix##_compact_widen(const void *x, pt_dtype t, const float *m,        \
                                               const float *r, size_t n, float *buf)             \
    {                                                                                            \
        if (t == PT_DTYPE_BF16) wbf16((const uint16_t *)x, buf, n);                              \
        else wu8((const uint8_t *)x, m, r, buf, n);                                              \
        return buf;                                                                              \
    }                                                                                            \
                                                                                                 \
    static size_t prefix##_compact_step_rows(float *w, float *b, const void *X, size_t ldx,      \
                                             pt_dtype t, const float *m, const float *r,         \
                                             const float *Y, size_t rows, size_t n, float tau,   \
                                             float eta, float bias, float *buf)                  \
    {                                                                                            \
        const size_t es = t == PT_DTYPE_BF16 ? 2 : 1;                                            \
        float bv = *b;                                                                           \
        size_t updates = 0;                                                                      \
        for (size_t i = 0; i < rows; i++) {                                                      \
            prefix##_compact_widen((const char *)X + i * ldx * es, t, m, r, n, buf);             \
            const float y = Y[i];                                                                \
            float s = dotf(w, buf, n) + bv * bias;                                               \
            if (y * s > tau) continue;                                                           \
            float a = eta * y;                                                                   \
            axpyf(a, buf, w, n);                                                                 \
            bv += a * bias;                                                                      \
            updates++;                                                                           \
        }                                                                                        \
        *b = bv;                                                                                 \
        return updates;                                                                          \
    }                                                                                            \
                                                                                                 \
    static float prefix##_compact_dot(const float *w, const void *x, pt_dtype t, const float *m, \
                                      const float *r, bool one, size_t n, float *buf)            \
    {                                                                                            \
        (void)one;                                                                               \
        return dotf(w, prefix##_compact_widen(x, t, m, r, n, buf), n);                           \
    }                                                                                            \
                                                                                                 \
    static void prefix##_compact_axpy(float a, const void *x, pt_dtype t, const float *m,        \
                                      const float *r, bool one, float *y, size_t n, float *buf)  \
    {                                                                                            \
        (void)one;                                                                               \
        axpyf(a, prefix##_compact_widen(x, t, m, r, n, buf), y, n);                              \
    }                                                                                            \
                                                                                                 \
    static const pt_compact_kernels prefix##_compact = {                                         \
        .widen_bf16 = wbf16,                                                                     \
        .widen_u8 = wu8,                                                                         \
        .step_rows = prefix##_compact_step_rows,                                                 \
        .dot = prefix##_compact_dot,                                                             \
        .axpy = prefix##_compact_axpy,                                                           \
    };

#endif /* PT_KERNELS_ROWS_IMPL_H */
