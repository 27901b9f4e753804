/*
 * Widening compact rows to float32 with NEON (kernels.h, pt_compact_kernels): 8 elements an
 * iteration, the same floats as compact_scalar.c. bf16: a widening shift by 16; u8: widen to
 * 32 bits, convert, then fma(q, rh, q rl) (vfmaq: fused, so the same roundings as fmaf; m and
 * r below are rh and rl). NEON has no masked loads: the tail of 1..7 runs the scalar formula.
 */
#include <arm_neon.h>
#include <math.h>
#include <string.h>

#include "kernels.h"

#define INLINE static inline __attribute__((always_inline))

void pt_widen_bf16_neon(const uint16_t *x, float *out, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint16x8_t h = vld1q_u16(x + i);
        vst1q_f32(out + i, vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(h), 16)));
        vst1q_f32(out + i + 4, vreinterpretq_f32_u32(vshll_n_u16(vget_high_u16(h), 16)));
    }
    for (; i < n; i++) {
        uint32_t u = (uint32_t)x[i] << 16;
        memcpy(out + i, &u, 4);
    }
}

INLINE float32x4_t u8_4(uint16x4_t q16, const float *rh, const float *rl)
{
    float32x4_t q = vcvtq_f32_u32(vmovl_u16(q16));
    return vfmaq_f32(vmulq_f32(q, vld1q_f32(rl)), q, vld1q_f32(rh));
}

void pt_widen_u8_neon(const uint8_t *x, const float *m, const float *r, float *out, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint16x8_t q = vmovl_u8(vld1_u8(x + i));
        vst1q_f32(out + i, u8_4(vget_low_u16(q), m + i, r + i));
        vst1q_f32(out + i + 4, u8_4(vget_high_u16(q), m + i + 4, r + i + 4));
    }
    for (; i < n; i++) {
        float q = (float)x[i];
        out[i] = fmaf(q, m[i], q * r[i]);
    }
}
