/*
 * Widening compact rows to float32, the reference (kernels.h, pt_compact_kernels): bf16 by a
 * shift, u8 by fma(q, rh, q rl) (fmaf: one rounding, whatever the target; every ISA's vector
 * code computes the same two roundings).
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

void pt_widen_u8_scalar(const uint8_t *x, const float *rh, const float *rl, float *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float q = (float)x[i];
        out[i] = fmaf(q, rh[i], q * rl[i]);
    }
}
