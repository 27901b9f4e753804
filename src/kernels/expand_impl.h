/*
 * The feature-expansion kernels, written once: expand_<isa>.c defines PT_EXPAND_TABLE (the
 * table's name) and includes this file, and is compiled with its ISA's flags (src/meson.build),
 * so each ISA's compiler vectorises the same loops at its own vector width. kernels.h states
 * what they compute and why every ISA gives the same bits.
 *
 * POLY: the row is built degree by degree from a copy of x, as scaled copies of contiguous
 * ranges (features/expand.c explains the layout), and the coefficients are applied by one
 * vector multiply, fused into the copies of the top degree (the largest block).
 * RFF: W x in chunks of PT_RFF_CHUNK outputs held in registers over the d inputs, then the
 * cosine as a polynomial in a loop the compiler vectorises, many times faster than libm's
 * cosf (bench/study/expand_throughput.c).
 */
#ifndef PT_EXPAND_TABLE
#error "define PT_EXPAND_TABLE before including expand_impl.h"
#endif

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "kernels.h"

/* n a multiple of 16 (vlen) when v, else any n */
static inline void mul_copy(float *restrict dst, const float *restrict src, float a, size_t n,
                            bool v)
{
    if (v) {
        for (size_t t = 0; t < n; t += 16)
            for (size_t u = 0; u < 16; u++) dst[t + u] = a * src[t + u];
    } else {
        for (size_t t = 0; t < n; t++) dst[t] = a * src[t];
    }
}

static inline void mul_copy_scaled(float *restrict dst, const float *restrict src, float a,
                                   const float *restrict c, size_t n, bool v)
{
    if (v) {
        for (size_t t = 0; t < n; t += 16)
            for (size_t u = 0; u < 16; u++) dst[t + u] = a * src[t + u] * c[t + u];
    } else {
        for (size_t t = 0; t < n; t++) dst[t] = a * src[t] * c[t];
    }
}

static inline void copy_row(float *restrict dst, const float *restrict src, size_t n)
{
    for (size_t t = 0; t < n; t++) dst[t] = src[t];
}

static inline void scale_by(float *restrict v, const float *restrict c, size_t n)
{
    for (size_t t = 0; t < n; t++) v[t] *= c[t];
}

static void poly_row(const pt_poly_layout *e, const float *x, float *out)
{
    out[0] = 1.0f;
    copy_row(out + 1, x, e->d_in); /* degree 1: x_j times the constant 1 */
    const pt_poly_seg *s = e->segs, *top = e->segs + e->top_first, *end = e->segs + e->nseg;
    for (; s < top; s++)
        mul_copy(out + s->dst, out + s->src, x[s->j], s->vlen ? s->vlen : s->len, s->vlen);
    for (; s < end; s++)
        mul_copy_scaled(out + s->dst, out + s->src, x[s->j], e->coef + s->dst,
                        s->vlen ? s->vlen : s->len, s->vlen);
    scale_by(out, e->coef, e->lower);
    for (size_t i = e->d_out; i < e->stride_out; i++) out[i] = 0.0f;
}

/* cos(a) for |a| < PT_COS_POLY_LIMIT: k = nearest integer to a / (pi/2) (by the 1.5 * 2^23
 * trick, exact below 2^22), r = a - k pi/2 by Cody and Waite's three-part pi/2 (Cephes' DP1..3
 * doubled: k * DP1 and k * DP2 are exact for |k| < 2^13), then Cephes' minimax polynomials for
 * sinf and cosf on [-pi/4, pi/4]. All in float, so a vector holds 16 (AVX-512) arguments. */
static inline float cos_reduced(float a)
{
    float kf = (a * 0.636619772367581343f + 0x1.8p23f) - 0x1.8p23f;
    int k = (int)kf;
    float r =
        ((a - kf * 1.5703125f) - kf * 4.837512969970703125e-4f) - kf * 7.54978995489188216e-8f;
    float z = r * r;
    float s = ((-1.9515295891e-4f * z + 8.3321608736e-3f) * z - 1.6666654611e-1f) * z * r + r;
    float c = ((2.443315711809948e-5f * z - 1.388731625493765e-3f) * z + 4.166664568298827e-2f) *
              z * z - 0.5f * z + 1.0f;
    /* cos(r + k pi/2) = c, -s, -c, s for k mod 4 = 0, 1, 2, 3; chosen on the bits, without
     * branches, so the loop vectorises on every ISA */
    uint32_t sb, cb, vb, odd = 0u - (uint32_t)(k & 1);
    memcpy(&sb, &s, sizeof sb);
    memcpy(&cb, &c, sizeof cb);
    vb = ((sb & odd) | (cb & ~odd)) ^ (((uint32_t)(k + 1) & 2u) << 30);
    float v;
    memcpy(&v, &vb, sizeof v);
    return v;
}

static void expand_cos(float *v, const float *add, size_t n, float scale)
{
    int big = 0;
    for (size_t i = 0; i < n; i++) {
        float a = v[i] + add[i];
        v[i] = a;
        big |= !(fabsf(a) < PT_COS_POLY_LIMIT);
    }
    if (big) {
        for (size_t i = 0; i < n; i++) v[i] = scale * cosf(v[i]);
        return;
    }
    for (size_t i = 0; i < n; i++) v[i] = scale * cos_reduced(v[i]);
}

static void rff_row(const pt_rff_layout *e, const float *x, float *out)
{
    const size_t so = e->stride_out, ldw = e->ldw;
    for (size_t k0 = 0; k0 < so; k0 += PT_RFF_CHUNK) {
        float acc[PT_RFF_CHUNK] = {0};
        for (size_t j = 0; j < e->d_in; j++) {
            const float xj = x[j], *w = e->Wt + j * ldw + k0;
            if (xj == 0.0f) continue; /* sparse rows; adding 0 * w would change no result */
            for (size_t u = 0; u < PT_RFF_CHUNK; u++) acc[u] += xj * w[u];
        }
        /* W's padding columns are 0: the row's padding gets zeros */
        memcpy(out + k0, acc, (so - k0 < PT_RFF_CHUNK ? so - k0 : PT_RFF_CHUNK) * sizeof(float));
    }
    expand_cos(out, e->b, e->d_out, e->scale);
}

const pt_expand_kernels PT_EXPAND_TABLE = {
    .poly_row = poly_row,
    .rff_row = rff_row,
    .cos = expand_cos,
};
