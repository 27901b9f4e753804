/*
 * Gram micro-kernels in portable C: the reference every ISA's are tested against, bit for bit.
 * fmaf is correctly rounded, so each chain gives the hardware FMA's bits (slowly where the
 * baseline ISA has no FMA instruction); everything else is one IEEE operation per C operator
 * (no contraction: -ffp-contract=off).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "gram_exp.h"
#include "kernels.h"

/* The tile's rows a call: any divisor of 8 would do. */
#define MR 8

static float exp_ref(float x)
{
    if (!(x >= EXP_LO)) return 0.0f;
    float n = rintf(x * LOG2E);
    float r = fmaf(n, -EXP_C1, x);
    r = fmaf(n, -EXP_C2, r);
    float p = fmaf(EXP_P0, r, EXP_P1);
    p = fmaf(p, r, EXP_P2);
    p = fmaf(p, r, EXP_P3);
    p = fmaf(p, r, EXP_P4);
    p = fmaf(p, r, EXP_P5);
    p = fmaf(p, r, 1.0f);
    p = fmaf(p, r, 1.0f);
    /* 2^n built in the exponent field (n >= -126 here, so it is normal) */
    int32_t e = ((int32_t)n + 127) * (1 << 23);
    float s;
    memcpy(&s, &e, sizeof s);
    return p * s;
}

/* One kernel value from its inner product v and the squared norms xs, zs (RBF). */
static float kval_ref(const pt_kfun *kf, float v, float xs, float zs)
{
    if (kf->kind == PT_KERNEL_POLY) {
        /* one FMA, then binary powering */
        float b = fmaf(v, kf->gamma, kf->coef0), r = 1.0f;
        for (int e = kf->degree;;) {
            if (e & 1) r = r * b;
            e >>= 1;
            if (!e) break;
            b = b * b;
        }
        v = r;
    } else if (kf->kind == PT_KERNEL_RBF) {
        /* -gamma |x - z|^2 in one FMA, its float cancellation clamped at 0 */
        float a = fmaf(v, 2.0f * kf->gamma, (xs + zs) * -kf->gamma);
        v = exp_ref(a < 0.0f ? a : 0.0f);
    }
    if (kf->add != 0.0f) v = v + kf->add;
    return v;
}

static void scalar_gram_tile(size_t kc, const float *A, const float *B, size_t bstep, size_t np,
                             float *C, size_t ldc, int first)
{
    for (size_t r = 0; r < MR; r++)
        for (size_t j = 0; j < 16 * np; j++) {
            const float *b = B + (j / 16) * bstep + j % 16;
            float acc = first ? 0.0f : C[r * ldc + j];
            for (size_t k = 0; k < kc; k++) acc = fmaf(A[16 * k + r], b[16 * k], acc);
            C[r * ldc + j] = acc;
        }
}

static void scalar_gram_row(const float *P, size_t d, size_t npan, const float *x, float *out)
{
    for (size_t j = 0; j < 16 * npan; j++) {
        const float *b = P + (j / 16) * d * 16 + j % 16;
        float acc = 0.0f;
        for (size_t k = 0; k < d; k++) acc = fmaf(x[k], b[16 * k], acc);
        out[j] = acc;
    }
}

static void scalar_gram_norms(const float *P, size_t d, float *out)
{
    for (size_t l = 0; l < 16; l++) {
        float acc = 0.0f;
        for (size_t k = 0; k < d; k++) acc = fmaf(P[16 * k + l], P[16 * k + l], acc);
        out[l] = acc;
    }
}

static void scalar_gram_kfun(const pt_kfun *kf, const float *dot, float xn, const float *zn,
                             float *out, size_t n)
{
    const int rbf = kf->kind == PT_KERNEL_RBF;
    for (size_t j = 0; j < n; j++) out[j] = kval_ref(kf, dot[j], xn, rbf ? zn[j] : 0.0f);
}

static void scalar_gram_exp(const float *x, float *y, size_t n)
{
    for (size_t j = 0; j < n; j++) y[j] = exp_ref(x[j]);
}

/* Plain stores: stream is only a permission. */
static void scalar_gram_store(const pt_kfun *kf, const float *C, size_t ldc, const float *xn,
                              const float *zn, size_t nrow, size_t ncol, float *G, float *Gt,
                              size_t ldg, int stream)
{
    (void)stream;
    const int rbf = kf->kind == PT_KERNEL_RBF;
    for (size_t r = 0; r < nrow; r++)
        for (size_t c = 0; c < ncol; c++) {
            float v = kval_ref(kf, C[r * ldc + c], rbf ? xn[r] : 0.0f, rbf ? zn[c] : 0.0f);
            G[r * ldg + c] = v;
            if (Gt) Gt[c * ldg + r] = v;
        }
}

/* Nothing to order: the stores above are ordinary ones. */
static void scalar_gram_fence(void) {}

const pt_gram_kernels pt_gram_kernels_scalar = {
    .mr = MR,
    .np = 1,
    .tile = scalar_gram_tile,
    .row = scalar_gram_row,
    .norms = scalar_gram_norms,
    .kfun = scalar_gram_kfun,
    .exp = scalar_gram_exp,
    .store = scalar_gram_store,
    .fence = scalar_gram_fence,
};
