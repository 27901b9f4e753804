/*
 * The SIMD kernel table: one instance per ISA (scalar.c, avx2.c, avx512.c, neon.c), all with
 * the same signatures; dispatch.c picks one once. scalar.c is the reference the others are
 * tested against. Kernels never allocate, never thread, never call BLAS: the paths do that.
 *
 * Lengths are in floats and may be any value >= 0 (the hot paths pass the padded stride, a
 * multiple of 16, but tests pass 0..257 and misaligned pointers).
 */
#ifndef PT_KERNELS_H
#define PT_KERNELS_H

#include <stddef.h>

#include "ptron.h"

typedef struct pt_kernels {
    const char *name;
    pt_isa isa;

    /* sum_i a[i] b[i] */
    float (*dot)(const float *a, const float *b, size_t n);

    /* y += alpha x */
    void (*axpy)(float alpha, const float *x, float *y, size_t n);

    /* The online perceptron step, fused: s = w.x + b * bias; if y s <= tau then
     * w += eta y x and b += eta y bias. Returns 1 if it updated, else 0; *score gets s. */
    int (*step)(float *w, float *b, const float *x, size_t n, float y, float tau, float eta,
                float bias, float *score);

    /* The classic online epoch over rows 0..rows-1 in order (row r at X + r * ldx, label Y[r]):
     * step on each, with w and b carried from row to row. Same results as calling step row by
     * row; returns the number of updates. Exists so that the hot loop has no call and no
     * memory traffic of its own per row: driven one step call a row from train_online.c (a
     * counter kept in memory, a score stored each row), the AVX-512 epoch ran 20-25% slower
     * than AVX2 on this Zen 5; in here both run at 0.91-0.98 of the streaming read (bench
     * online/epoch, issue 3). */
    size_t (*step_rows)(float *w, float *b, const float *X, size_t ldx, const float *Y, size_t rows,
                        size_t n, float tau, float eta, float bias);

    /* out[r] = w . (X + r * ldx) for r < rows, each exactly as dot computes it (the blocked
     * pass scores a block of rows ahead of its walk with this, on every thread). */
    void (*dot_rows)(const float *w, const float *X, size_t ldx, size_t rows, size_t n, float *out);

    /* Averaged perceptron's lazy sum: w += a x and u += c x in one pass over x. */
    void (*axpy2)(float a, float c, const float *x, float *w, float *u, size_t n);

    /* out[i] = a * x[i] + c * y[i] (used to form the average w - u / count) */
    void (*scale_add)(float a, const float *x, float c, const float *y, float *out, size_t n);

    /* out[c] = W_c . x for the K rows W_c = W + c * ldw: every class of one sample scored in one
     * pass over x (the multiclass perceptron). Summation order may differ from dot's. */
    void (*dot_many)(const float *W, size_t ldw, size_t K, const float *x, size_t n, float *out);
} pt_kernels;

/* The tables each ISA file defines; NULL-free only for those compiled in (see dispatch.c). */
extern const pt_kernels pt_kernels_scalar;
#if defined(PT_HAVE_AVX2)
extern const pt_kernels pt_kernels_avx2;
#endif
#if defined(PT_HAVE_AVX512)
extern const pt_kernels pt_kernels_avx512;
#endif
#if defined(PT_HAVE_NEON)
extern const pt_kernels pt_kernels_neon;
#endif

/* The table for an ISA: PT_ISA_AUTO means pt_isa_default(). Fails with PT_ERR_UNSUPPORTED
 * (and a message) when the build or the CPU lacks it. */
pt_status pt_kernels_get(pt_isa isa, const pt_kernels **out);

/* The choice pt_isa_default() makes once from PTRON_ISA, as a function the tests can call with
 * any value: forced is the variable's value (NULL when unset). "auto", NULL or "" give the best
 * available ISA; an unknown or unavailable name gives the best too, with a PT_LOG_WARN. */
pt_isa pt_isa_choose(const char *forced);

#endif /* PT_KERNELS_H */
