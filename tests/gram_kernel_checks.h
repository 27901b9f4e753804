/*
 * The Gram micro-kernel checks (k->gram, src/kernels/gram_*.c), shared by test_kernels.c and
 * neon_harness.c: each compares one micro-kernel of an ISA with gram_scalar.c's, bit for bit
 * (the determinism rule of src/features/gram.h: same FMA chains, same IEEE operations), on feature
 * counts d = 0, 1, 15, 16, 17, 257 and others, operands offset from 64-byte alignment where
 * the signature allows it, and canaries around every output (a write outside it changes the
 * comparison). gram_scalar.c itself is checked against double precision in test_train_kernel.c.
 *
 * Include after kernel_test_util.h and a CHECK(cond, ...) that reports a failure and leaves
 * the check (returns, or aborts the test).
 */
#ifndef PT_GRAM_KERNEL_CHECKS_H
#define PT_GRAM_KERNEL_CHECKS_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "common/common.h"
#include "kernels/kernels.h"
#include "kernel_test_util.h"

static const size_t gram_ds[] = {0, 1, 2, 3, 15, 16, 17, 31, 128, 129, 257};
#define GRAM_NDS (sizeof gram_ds / sizeof gram_ds[0])
#define GRAM_DMAX 257
/* Floats of a test operand: 3 panels of GRAM_DMAX features, slack for strides and offsets
 * (a multiple of 16, so that both output buffers are 64-byte aligned). */
#define GRAM_PBUF (3 * GRAM_DMAX * 16 + 256)

static _Alignas(64) float gram_a[GRAM_PBUF], gram_b[GRAM_PBUF];
static _Alignas(64) float gram_out[2][GRAM_PBUF];

static const pt_gram_kernels *gram_ref(void)
{
    const pt_kernels *k = NULL;
    return pt_kernels_get(PT_ISA_SCALAR, &k) == PT_OK ? k->gram : NULL;
}

static void gram_fill(float *p, size_t n)
{
    for (size_t i = 0; i < n; i++) p[i] = urand();
}

static void gram_canary(float *p, size_t n)
{
    for (size_t i = 0; i < n; i++) p[i] = CANARY;
}

/* The kernel functions checked: every kind, bias or not, odd and even degrees. */
static const pt_kfun gram_kfuns[] = {
    {.kind = PT_KERNEL_LINEAR},
    {.kind = PT_KERNEL_LINEAR, .add = 1.0f},
    {.kind = PT_KERNEL_POLY, .degree = 0, .gamma = 0.5f, .coef0 = 1.0f},
    {.kind = PT_KERNEL_POLY, .degree = 1, .gamma = 0.3f, .coef0 = -0.25f},
    {.kind = PT_KERNEL_POLY, .degree = 2, .gamma = 1.0f, .coef0 = 0.0f, .add = 1.0f},
    {.kind = PT_KERNEL_POLY, .degree = 3, .gamma = 0.7f, .coef0 = 1.5f},
    {.kind = PT_KERNEL_POLY, .degree = 7, .gamma = 0.9f, .coef0 = 0.1f, .add = 1.0f},
    {.kind = PT_KERNEL_RBF, .gamma = 0.01f},
    {.kind = PT_KERNEL_RBF, .gamma = 0.5f, .add = 1.0f},
    {.kind = PT_KERNEL_RBF, .gamma = 4.0f},
};
#define GRAM_NKFUNS (sizeof gram_kfuns / sizeof gram_kfuns[0])

/* Inner products and squared norms as the kernel sees them: |dot| <= (xn + zn) / 2 mostly,
 * sometimes beyond (the float cancellation the RBF clamps), RBF arguments from 0 to -400. */
static void gram_dots(float *dot, float *zn, size_t n, float xn)
{
    for (size_t j = 0; j < n; j++) {
        zn[j] = 50.0f * (urand() + 1.0f);
        dot[j] = 0.5f * (xn + zn[j]) * 1.05f * urand();
    }
}

/* tile: mr rows at every start in the panel, 1..np panels, from 0 or continuing C, with B's
 * panels and C's rows at odd strides and offsets; only the mr x 16 np block is written. */
static void gram_tile_matches_scalar(const pt_kernels *k)
{
    const pt_gram_kernels *g = k->gram, *ref = gram_ref();
    CHECK(ref && g->mr >= 1 && 8 % g->mr == 0 && g->np >= 1 && g->np <= 3, "%s: tile shape %zu x %zu",
          k->name, g->mr, g->np);
    for (size_t di = 0; di < GRAM_NDS; di++)
        for (size_t np = 1; np <= g->np; np++)
            for (size_t r0 = 0; r0 + g->mr <= 16; r0 += (g->mr < 4 ? 1 : g->mr / 2)) {
                const size_t kc = gram_ds[di], v = (r0 + np + di) % 4;
                const size_t bstep = kc * 16 + (v & 1 ? 3 : 16 * (v & 2)), boff = v;
                const size_t ldc = 16 * np + (v & 2 ? 5 : 0), coff = (r0 + di) % 7;
                gram_fill(gram_a, GRAM_PBUF);
                gram_fill(gram_b, GRAM_PBUF);
                const float *A = gram_a + 16 * (di % 2) + r0, *B = gram_b + boff;
                for (int first = 0; first <= 1; first++) {
                    /* C: canaries around and between the rows; for first = 0 a start value */
                    float *C = gram_out[0] + 8 + coff, *R = gram_out[1] + 8 + coff;
                    gram_canary(gram_out[0], GRAM_PBUF);
                    for (size_t r = 0; r < g->mr; r++)
                        for (size_t j = 0; j < 16 * np; j++) C[r * ldc + j] = first ? NAN : 10.0f * urand();
                    memcpy(gram_out[1], gram_out[0], sizeof gram_out[0]);
                    g->tile(kc, A, B, bstep, np, C, ldc, first);
                    /* the reference computes its 8 rows (A has slack after its panel): its rows
                     * past mr go back to the canaries the ISA must have left there */
                    ref->tile(kc, A, B, bstep, np, R, ldc, first);
                    for (size_t r = g->mr; r < ref->mr; r++) gram_canary(R + r * ldc, 16 * np);
                    CHECK(same_bits(gram_out[0], gram_out[1], GRAM_PBUF),
                          "%s gram tile kc=%zu np=%zu rows %zu.. first=%d bstep=%zu ldc=%zu differs from scalar",
                          k->name, kc, np, r0, first, bstep, ldc);
                }
            }
}

/* row: 1..17 panels (the unrolled groups and their tails), x and out misaligned. */
static void gram_row_matches_scalar(const pt_kernels *k)
{
    static const size_t npans[] = {1, 2, 3, 4, 5, 7, 8, 9, 11, 17};
    const pt_gram_kernels *g = k->gram, *ref = gram_ref();
    for (size_t di = 0; di < GRAM_NDS; di++)
        for (size_t pi = 0; pi < sizeof npans / sizeof npans[0]; pi++) {
            const size_t d = gram_ds[di], npan = npans[pi];
            if (npan * d * 16 + 64 > GRAM_PBUF) continue;
            const size_t poff = pi % 3, xoff = (di + pi) % 5, ooff = (di * 3 + pi) % 16;
            gram_fill(gram_a, GRAM_PBUF);
            gram_fill(gram_b, GRAM_PBUF);
            gram_canary(gram_out[0], GRAM_PBUF);
            gram_canary(gram_out[1], GRAM_PBUF);
            g->row(gram_a + poff, d, npan, gram_b + xoff, gram_out[0] + ooff);
            ref->row(gram_a + poff, d, npan, gram_b + xoff, gram_out[1] + ooff);
            CHECK(same_bits(gram_out[0], gram_out[1], GRAM_PBUF), "%s gram row d=%zu npan=%zu differs from scalar",
                  k->name, d, npan);
        }
}

/* norms: one panel, misaligned. */
static void gram_norms_match_scalar(const pt_kernels *k)
{
    const pt_gram_kernels *g = k->gram, *ref = gram_ref();
    for (size_t di = 0; di < GRAM_NDS; di++)
        for (size_t off = 0; off < 16; off += 5) {
            const size_t d = gram_ds[di];
            gram_fill(gram_a, GRAM_PBUF);
            gram_canary(gram_out[0], 64);
            gram_canary(gram_out[1], 64);
            g->norms(gram_a + off, d, gram_out[0] + 16 + off);
            ref->norms(gram_a + off, d, gram_out[1] + 16 + off);
            CHECK(same_bits(gram_out[0], gram_out[1], 64), "%s gram norms d=%zu off=%zu differs from scalar", k->name,
                  d, off);
        }
}

/* kfun: every kernel function, n = 16..256, operands misaligned, and in place. */
static void gram_kfun_matches_scalar(const pt_kernels *k)
{
    static const size_t ns[] = {16, 32, 48, 256};
    const pt_gram_kernels *g = k->gram, *ref = gram_ref();
    for (size_t f = 0; f < GRAM_NKFUNS; f++)
        for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++) {
            const pt_kfun *kf = &gram_kfuns[f];
            const size_t n = ns[ni], off = (f + ni) % 16;
            const float xn = 50.0f * (urand() + 1.0f);
            float *dot = gram_a + off, *zn = gram_b + (off * 3) % 16;
            gram_dots(dot, zn, n, xn);
            if (kf->kind == PT_KERNEL_POLY)
                for (size_t j = 0; j < n; j++) dot[j] *= 0.05f; /* keep the powers finite */
            dot[0] = 0.0f;
            dot[1] = -0.0f;
            dot[2] = 0.5f * (xn + zn[2]); /* the RBF's argument rounds to about 0 */
            if (kf->kind == PT_KERNEL_RBF) { /* clamped to 0 (NaN too), or exp(-inf) */
                dot[3] = NAN;
                dot[4] = INFINITY;
                dot[5] = -INFINITY;
            }
            gram_canary(gram_out[0], GRAM_PBUF);
            gram_canary(gram_out[1], GRAM_PBUF);
            g->kfun(kf, dot, xn, zn, gram_out[0] + 16 + off, n);
            ref->kfun(kf, dot, xn, zn, gram_out[1] + 16 + off, n);
            CHECK(same_bits(gram_out[0], gram_out[1], GRAM_PBUF), "%s gram kfun %zu n=%zu differs from scalar",
                  k->name, f, n);
            /* in place (out == dot), as the kernel rows use it */
            memcpy(gram_out[0] + 16 + off, dot, n * sizeof(float));
            g->kfun(kf, gram_out[0] + 16 + off, xn, zn, gram_out[0] + 16 + off, n);
            CHECK(same_bits(gram_out[0], gram_out[1], GRAM_PBUF), "%s gram kfun %zu n=%zu in place differs",
                  k->name, f, n);
        }
}

/* exp: the edges (0, -0, tiny, the cut at -87, -inf, NaN) and [-100, 0] densely. */
static void gram_exp_matches_scalar(const pt_kernels *k)
{
    const pt_gram_kernels *g = k->gram, *ref = gram_ref();
    const size_t n = 2048, off = 3;
    float *x = gram_a + off;
    for (size_t i = 0; i < n; i++) x[i] = -100.0f * (float)i / (float)n + 1e-3f * urand();
    const float edges[] = {0.0f, -0.0f, -1e-30f, -1e-45f, -87.0f, nextafterf(-87.0f, -INFINITY),
                           nextafterf(-87.0f, 0.0f), -87.5f, -1000.0f, -INFINITY, NAN, -0.5f * logf(2.0f),
                           -1.5f * logf(2.0f), -126.0f * logf(2.0f), -FLT_MIN, -3e38f};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) x[i * 7] = edges[i];
    gram_canary(gram_out[0], GRAM_PBUF);
    gram_canary(gram_out[1], GRAM_PBUF);
    g->exp(x, gram_out[0] + 16 + off, n);
    ref->exp(x, gram_out[1] + 16 + off, n);
    CHECK(same_bits(gram_out[0], gram_out[1], GRAM_PBUF), "%s gram exp differs from scalar", k->name);
}

/* store: every kernel function on blocks of 1..16 rows and columns, with and without the
 * mirror, plain and (whole, aligned blocks) streaming; G and its mirror share one matrix. */
static void gram_store_matches_scalar(const pt_kernels *k)
{
    static const size_t sizes[] = {1, 3, 8, 9, 15, 16};
    enum { LDG = 48, ROWS = 40 }; /* the matrix: 40 x 48 floats, 64-byte aligned rows */
    const pt_gram_kernels *g = k->gram, *ref = gram_ref();
    for (size_t f = 0; f < GRAM_NKFUNS; f++)
        for (size_t ri = 0; ri < sizeof sizes / sizeof sizes[0]; ri++)
            for (size_t ci = 0; ci < sizeof sizes / sizeof sizes[0]; ci++)
                for (int mode = 0; mode < 4; mode++) { /* bit 0: mirror; bit 1: stream */
                    const pt_kfun *kf = &gram_kfuns[f];
                    const size_t nrow = sizes[ri], ncol = sizes[ci];
                    const int mirror = mode & 1, stream = (mode & 2) && nrow == 16 && ncol == 16;
                    if ((mode & 2) && !stream) continue;
                    const size_t ldc = 16 + (f % 2) * 7;
                    float *C = gram_a + (stream ? 0 : f % 5), *xn = gram_b, *zn = gram_b + 32;
                    for (size_t j = 0; j < 16; j++) zn[j] = 50.0f * (urand() + 1.0f);
                    for (size_t r = 0; r < 16; r++) {
                        xn[r] = 50.0f * (urand() + 1.0f);
                        for (size_t j = 0; j < ldc; j++)
                            C[r * ldc + j] = 0.5f * (xn[r] + zn[j % 16]) * 1.05f * urand() *
                                             (kf->kind == PT_KERNEL_POLY ? 0.05f : 1.0f);
                    }
                    /* the block at (16, 0) in rows 16.., its mirror at (0, 16) (plain: moved by
                     * an odd number of floats) */
                    const size_t shift = stream ? 0 : 1 + f % 3;
                    for (int w = 0; w < 2; w++) {
                        float *M = gram_out[w];
                        gram_canary(M, ROWS * LDG);
                        float *G = M + 16 * LDG + shift, *Gt = mirror ? M + 16 + shift : NULL;
                        (w ? ref : g)->store(kf, C, ldc, xn, zn, nrow, ncol, G, Gt, LDG, stream);
                        (w ? ref : g)->fence();
                    }
                    CHECK(same_bits(gram_out[0], gram_out[1], ROWS * LDG),
                          "%s gram store kfun %zu %zu x %zu mirror %d stream %d differs from scalar", k->name, f,
                          nrow, ncol, mirror, stream);
                }
}

#endif /* PT_GRAM_KERNEL_CHECKS_H */
