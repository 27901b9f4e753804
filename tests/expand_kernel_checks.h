/*
 * The feature-expansion kernel checks (k->expand, src/kernels/expand_*.c), shared by
 * test_kernels.c and neon_harness.c: each compares one kernel of an ISA with expand_scalar.c's,
 * bit for bit (kernels.h: multiplies and adds rounded as written, each output from its own
 * inputs), with canaries past every output (a write outside it changes the comparison). The
 * expansions' values themselves are checked in test_expand.c (the polynomial kernel identity,
 * the cosine's accuracy on every ISA).
 *
 * Include after kernel_test_util.h and a CHECK(cond, ...) that reports a failure and leaves
 * the check (returns, or aborts the test).
 */
#ifndef PT_EXPAND_KERNEL_CHECKS_H
#define PT_EXPAND_KERNEL_CHECKS_H

#include <stdint.h>
#include <string.h>

#include "common/common.h"
#include "kernels/kernels.h"
#include "kernel_test_util.h"

/* Room for the largest row checked, and canaries after it. */
#define EXPAND_MAXOUT 8192
#define EXPAND_CANARIES 32

static _Alignas(64) float expand_out[2][EXPAND_MAXOUT + EXPAND_CANARIES];
static _Alignas(64) float expand_x[512], expand_coef[EXPAND_MAXOUT];
static pt_poly_seg expand_segs[8 * 64];

static const pt_expand_kernels *expand_ref(void)
{
    const pt_kernels *k = NULL;
    return pt_kernels_get(PT_ISA_SCALAR, &k) == PT_OK ? k->expand : NULL;
}

static size_t expand_round16(size_t n) { return (n + 15) / 16 * 16; }

/* The degree-D polynomial layout of d inputs, as features/expand.c builds it: degree by degree,
 * each degree's monomials grouped by their lowest variable j, the group x_j times the tail of
 * the previous degree's block whose lowest variable is >= j. The coefficients are random (the
 * kernels only multiply by them). Returns false if it does not fit the buffers. */
static bool expand_poly_layout(size_t d, int D, pt_poly_layout *L)
{
    size_t idx[65], nidx[65];
    if (d > 64 || D < 1 || (size_t)D * d > sizeof expand_segs / sizeof expand_segs[0]) return false;
    size_t n = 1; /* C(d + D, D) */
    for (int i = 1; i <= D; i++) n = n * (d + (size_t)i) / (size_t)i;
    const size_t stride = expand_round16(n);
    if (stride > EXPAND_MAXOUT) return false;
    for (size_t j = 0; j < d; j++) idx[j] = 0;
    idx[d] = 1;
    size_t prev = 0, cur = 1, ns = 0, top_first = 0, lower = n;
    for (int k = 1; k <= D; k++) {
        if (k == D) top_first = ns, lower = D == 1 ? n : cur;
        size_t o = 0, prev_size = idx[d];
        for (size_t j = 0; j < d; j++) {
            nidx[j] = o;
            size_t len = prev_size - idx[j], vlen = expand_round16(len);
            if (k > 1)
                expand_segs[ns++] = (pt_poly_seg){.src = prev + idx[j], .dst = cur + o, .len = len,
                                                  .j = j,
                                                  .vlen = cur + o + vlen <= stride ? vlen : 0};
            o += len;
        }
        nidx[d] = o;
        memcpy(idx, nidx, sizeof idx);
        prev = cur;
        cur += o;
    }
    for (size_t i = 0; i < stride; i++) expand_coef[i] = i < n ? urand() + 1.5f : 0.0f;
    *L = (pt_poly_layout){.d_in = d, .d_out = n, .stride_out = stride, .segs = expand_segs,
                          .nseg = ns, .top_first = top_first, .lower = lower, .coef = expand_coef};
    return true;
}

/* Both output rows: the same contents before (the kernels read entries before they write
 * them), canaries after stride floats. */
static void expand_prepare(size_t stride)
{
    for (size_t i = 0; i < stride; i++) expand_out[0][i] = expand_out[1][i] = urand();
    for (size_t i = stride; i < stride + EXPAND_CANARIES; i++)
        expand_out[0][i] = expand_out[1][i] = CANARY;
}

/* poly_row: degrees 1 to 5 on 0 to 40 inputs (every layout that fits), x with zeros. */
static void expand_poly_matches_scalar(const pt_kernels *k)
{
    const pt_expand_kernels *e = k->expand, *ref = expand_ref();
    CHECK(ref && e && e->poly_row, "%s: no poly_row", k->name);
    static const size_t ds[] = {0, 1, 2, 3, 7, 15, 16, 17, 31, 40};
    int checked = 0;
    for (int D = 1; D <= 5; D++) {
        for (size_t di = 0; di < sizeof ds / sizeof ds[0]; di++) {
            pt_poly_layout L;
            if (!expand_poly_layout(ds[di], D, &L)) continue;
            for (int rep = 0; rep < 3; rep++) {
                for (size_t j = 0; j < L.d_in; j++)
                    expand_x[j] = rep == 2 && j % 3 == 0 ? 0.0f : urand();
                expand_prepare(L.stride_out);
                ref->poly_row(&L, expand_x, expand_out[0]);
                e->poly_row(&L, expand_x, expand_out[1]);
                CHECK(same_bits(expand_out[0], expand_out[1], L.stride_out + EXPAND_CANARIES),
                      "%s poly_row d=%zu D=%d: differs from scalar", k->name, L.d_in, D);
                checked++;
            }
        }
    }
    CHECK(checked > 50, "%s: only %d layouts", k->name, checked);
}

/* rff_row: d_out across the chunk of PT_RFF_CHUNK and the padding, 0 to 17 inputs (some x
 * zero), arguments small (the polynomial) and large (libm). */
static void expand_rff_matches_scalar(const pt_kernels *k)
{
    const pt_expand_kernels *e = k->expand, *ref = expand_ref();
    CHECK(ref && e && e->rff_row, "%s: no rff_row", k->name);
    static const size_t douts[] = {1, 15, 16, 17, 127, 128, 129, 300};
    static const size_t dins[] = {0, 1, 3, 16, 17};
    static float Wt[17 * (384 + 16)], b[384 + 16];
    for (size_t oi = 0; oi < sizeof douts / sizeof douts[0]; oi++) {
        for (size_t ii = 0; ii < sizeof dins / sizeof dins[0]; ii++) {
            for (int big = 0; big < 2; big++) {
                const size_t dout = douts[oi], din = dins[ii], stride = expand_round16(dout);
                const size_t ldw = (stride + PT_RFF_CHUNK - 1) / PT_RFF_CHUNK * PT_RFF_CHUNK + 16;
                for (size_t j = 0; j < din; j++)
                    for (size_t c = 0; c < ldw; c++)
                        Wt[j * ldw + c] = c < dout ? (big ? 1e4f : 3.0f) * urand() : 0.0f;
                for (size_t c = 0; c < ldw; c++)
                    b[c] = c < dout ? 3.14159265f * (urand() + 1.0f) : 0.0f;
                for (size_t j = 0; j < din; j++) expand_x[j] = j % 4 == 1 ? 0.0f : urand();
                pt_rff_layout L = {.d_in = din, .d_out = dout, .stride_out = stride, .Wt = Wt,
                                   .ldw = ldw, .b = b, .scale = 0.125f};
                expand_prepare(stride);
                ref->rff_row(&L, expand_x, expand_out[0]);
                e->rff_row(&L, expand_x, expand_out[1]);
                CHECK(same_bits(expand_out[0], expand_out[1], stride + EXPAND_CANARIES),
                      "%s rff_row d_in=%zu d_out=%zu big=%d: differs from scalar", k->name, din,
                      dout, big);
            }
        }
    }
}

/* cos: every length 0..MAXN at every offset, arguments within the polynomial's range and
 * past it (then libm for the whole call). */
static void expand_cos_matches_scalar(const pt_kernels *k)
{
    const pt_expand_kernels *e = k->expand, *ref = expand_ref();
    CHECK(ref && e && e->cos, "%s: no cos", k->name);
    static _Alignas(64) float add[BUFLEN];
    for (size_t n = 0; n <= MAXN; n++) {
        for (size_t off = 0; off < MAXOFF; off += 5) {
            const double range = n % 7 == 3 ? 2e4 : n % 2 ? 8000.0 : 10.0;
            for (size_t i = 0; i < BUFLEN; i++) add[i] = (float)(range * urand());
            float *v0 = expand_out[0] + off, *v1 = expand_out[1] + off;
            for (size_t i = 0; i < n; i++) v0[i] = v1[i] = (float)(range * urand());
            for (size_t i = n; i < n + EXPAND_CANARIES; i++) v0[i] = v1[i] = CANARY;
            ref->cos(v0, add + other_off(off, 1), n, 0.75f);
            e->cos(v1, add + other_off(off, 1), n, 0.75f);
            CHECK(same_bits(v0, v1, n + EXPAND_CANARIES), "%s cos n=%zu off=%zu: differs", k->name,
                  n, off);
        }
    }
}

#endif /* PT_EXPAND_KERNEL_CHECKS_H */
