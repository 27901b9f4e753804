/*
 * Widening compact rows to float32, the reference (kernels.h, pt_compact_kernels): bf16 by a
 * shift, u8 by x0 = q r then x0 + r (q - x0 m) in fused multiply-adds (fmaf: exact, whatever
 * the target; every ISA's vector code computes the same two roundings).
 */
#include <math.h>
#include <string.h>

#include "kernels.h"

void pt_widen_bf16_scalar(const uint16_t *x, float *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t u = (uint32_t)x[i] << 16;
        memcpy(out + i, &u, 4);
    }
}

void pt_widen_u8_scalar(const uint8_t *x, const float *m, const float *r, float *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float q = (float)x[i], x0 = q * r[i];
        out[i] = fmaf(fmaf(-x0, m[i], q), r[i], x0);
    }
}
