/*
 * What compact_avx2.c and compact_avx512.c share: the choice, by a row's type and divisors,
 * among the inline kernels each file defines for its vector width (dot_bf16, dot_u8, dot_u8_1,
 * axpy_bf16, axpy_u8, axpy_u8_1, step_rows_bf16, step_rows_u8, step_rows_u8_1, and the
 * widenings ONE_ANY, ONE_MUL, ONE_UNIT of one divisor), and the table that offers them.
 * PT_COMPACT_X86_KERNELS(isa, VEC, SET1) expands to pt_compact_kernels_<isa>, VEC being the
 * file's float vector type and SET1 its broadcast.
 */
#ifndef PT_KERNELS_COMPACT_X86_H
#define PT_KERNELS_COMPACT_X86_H

#define PT_COMPACT_X86_KERNELS(isa, VEC, SET1)                                                     \
    /* step_rows: the divisors compared once a call of many rows; each widening of one divisor     \
     * its own loop */                                                                             \
    static size_t isa##_compact_step_rows(float *w, float *b, const void *X, size_t ldx,           \
                                          pt_dtype t, const float *rh, const float *rl,            \
                                          const float *Y, size_t rows, size_t n, float tau,        \
                                          float eta, float bias, float *buf)                       \
    {                                                                                              \
        (void)buf; /* fused: no buffer */                                                          \
        if (t == PT_DTYPE_BF16) return step_rows_bf16(w, b, X, ldx, Y, rows, n, tau, eta, bias);   \
        if (!pt_one_divisor(rh, rl, n))                                                            \
            return step_rows_u8(w, b, X, ldx, rh, rl, Y, rows, n, tau, eta, bias);                 \
        if (rl[0] != 0.0f)                                                                         \
            return step_rows_u8_1(w, b, X, ldx, rh[0], rl[0], Y, rows, n, tau, eta, bias,          \
                                  ONE_ANY);                                                        \
        if (rh[0] != 1.0f)                                                                         \
            return step_rows_u8_1(w, b, X, ldx, rh[0], 0.0f, Y, rows, n, tau, eta, bias, ONE_MUL); \
        return step_rows_u8_1(w, b, X, ldx, 1.0f, 0.0f, Y, rows, n, tau, eta, bias, ONE_UNIT);     \
    }                                                                                              \
                                                                                                   \
    /* The batch path's dot and axpy on one row: the type and divisors chosen a call (a few        \
     * compares; the row's vectors are widened as they load). */                                   \
    static float isa##_compact_dot(const float *w, const void *x, pt_dtype t, const float *rh,     \
                                   const float *rl, bool one, size_t n, float *buf)                \
    {                                                                                              \
        (void)buf; /* fused: no buffer */                                                          \
        if (t == PT_DTYPE_BF16) return dot_bf16(w, x, n);                                          \
        if (!one) return dot_u8(w, x, rh, rl, n);                                                  \
        const VEC h = SET1(rh[0]), l = SET1(rl[0]);                                                \
        if (rl[0] != 0.0f) return dot_u8_1(w, x, h, l, n, ONE_ANY);                                \
        if (rh[0] != 1.0f) return dot_u8_1(w, x, h, l, n, ONE_MUL);                                \
        return dot_u8_1(w, x, h, l, n, ONE_UNIT);                                                  \
    }                                                                                              \
                                                                                                   \
    static void isa##_compact_axpy(float a, const void *x, pt_dtype t, const float *rh,            \
                                   const float *rl, bool one, float *y, size_t n, float *buf)      \
    {                                                                                              \
        (void)buf;                                                                                 \
        if (t == PT_DTYPE_BF16) {                                                                  \
            axpy_bf16(a, x, y, n);                                                                 \
        } else if (!one) {                                                                         \
            axpy_u8(a, x, rh, rl, y, n);                                                           \
        } else {                                                                                   \
            const VEC h = SET1(rh[0]), l = SET1(rl[0]);                                            \
            if (rl[0] != 0.0f) axpy_u8_1(a, x, h, l, y, n, ONE_ANY);                               \
            else if (rh[0] != 1.0f) axpy_u8_1(a, x, h, l, y, n, ONE_MUL);                          \
            else axpy_u8_1(a, x, h, l, y, n, ONE_UNIT);                                            \
        }                                                                                          \
    }                                                                                              \
                                                                                                   \
    const pt_compact_kernels pt_compact_kernels_##isa = {                                          \
        .widen_bf16 = pt_widen_bf16_##isa,                                                         \
        .widen_u8 = pt_widen_u8_##isa,                                                             \
        .step_rows = isa##_compact_step_rows,                                                      \
        .dot = isa##_compact_dot,                                                                  \
        .axpy = isa##_compact_axpy,                                                                \
    };

#endif /* PT_KERNELS_COMPACT_X86_H */
