/*
 * The sparse-row kernel checks (k->sparse, src/kernels/sparse_*.c), shared by test_kernels.c
 * and neon_harness.c: each compares the kernels of one ISA with sparse_scalar.c's.
 *
 * Rows: every nnz from 0 to 257 (whole vectors and tails of every length for widths 4, 8 and
 * 16), random strictly increasing indices over d = 1 (index 0 only), 17, 1000 and 100,000,
 * the first and last columns included in turn, and the row's idx and val starting at
 * different offsets from 64-byte alignment (a row starts anywhere inside the CSR arrays).
 * Dense operands carry 16 canaries on each side, and every entry of them is compared after
 * each call, so a write to a column the row does not have, or past w, fails.
 *
 * Tolerances (kernels.h states the summation orders):
 *  - dot, dot_many, scatter + dot: every order of the n products of a row is within
 *    gamma_n sum |products| of the exact sum (gamma_n = n u / (1 - n u), u = 2^-24; Higham,
 *    Accuracy and Stability, 3.1; a fused product only lowers the count), so both the ISA and
 *    scalar are checked against the exact sum in double with 1.01 n u sum |products|. On
 *    integer-valued data (|values| <= 100, sums below 2^24) every order gives the exact sum,
 *    so the ISA must equal scalar bit for bit. Rows of fewer than 32 non-zeros are summed in
 *    scalar's order on every ISA, so there too; and dot_many equals dot bit for bit.
 *  - axpy, axpy2, gemv_t, scatter, clear: bit for bit vs scalar (products and adds rounded
 *    separately on every ISA); axpy2 also equals two axpy calls, bit for bit.
 *  - step, step_rows, step_rows_avg, dot_rows: within an ISA, step equals dot, the test, then
 *    axpy, and the row loops equal the per-row calls (step_rows_avg: dot, the test, axpy2),
 *    bit for bit; across ISAs the same decisions, scores and weights on integer-valued data.
 *  - Reads past a row, past rowptr's block or past w are caught by operands that end at an
 *    inaccessible page (masked tails must not touch it).
 *
 * Include after kernel_test_util.h and a CHECK(cond, ...) that reports a failure and leaves
 * the check (returns, or aborts the test).
 */
#ifndef PT_SPARSE_KERNEL_CHECKS_H
#define PT_SPARSE_KERNEL_CHECKS_H

#include <math.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/common.h"
#include "kernels/kernels.h"
#include "kernel_test_util.h"

static const size_t sk_ds[] = {1, 17, 1000, 100000};
#define SK_NDS (sizeof sk_ds / sizeof sk_ds[0])
#define SK_DMAX 100000
/* A dense operand: 16 canaries, d entries, 16 canaries (and room to round up). */
#define SK_WLEN (16 + SK_DMAX + 16 + 16)
/* A row of up to MAXN pairs at an offset up to MAXOFF, canaries after it. */
#define SK_RLEN (MAXOFF + MAXN + 16)
/* A block of CSR rows for the row loops. */
#define SK_ROWS 48
#define SK_CLEN (SK_ROWS * MAXN + 64)

static _Alignas(64) float sk_w0[SK_WLEN], sk_w1[SK_WLEN], sk_w2[SK_WLEN];
static _Alignas(64) float sk_u1[SK_WLEN], sk_u2[SK_WLEN];
static _Alignas(64) float sk_w3[SK_WLEN], sk_u3[SK_WLEN];
static _Alignas(64) uint32_t sk_idx[SK_RLEN], sk_idx2[SK_RLEN];
static _Alignas(64) float sk_val[SK_RLEN], sk_val2[SK_RLEN];
static _Alignas(64) uint32_t sk_cidx[SK_CLEN];
static _Alignas(64) float sk_cval[SK_CLEN];
static uint64_t sk_rowptr[SK_ROWS + 1];

static const pt_sparse_kernels *sk_ref(void)
{
    const pt_kernels *k = NULL;
    return pt_kernels_get(PT_ISA_SCALAR, &k) == PT_OK ? k->sparse : NULL;
}

/* Offsets of a row's idx from alignment: all 16 on the smaller d, a few on the widest. */
static size_t sk_noffs(size_t d) { return d >= SK_DMAX ? 3 : MAXOFF; }
static size_t sk_off(size_t d, size_t i) { return d >= SK_DMAX ? (size_t[]){0, 5, 15}[i] : i; }

/* A value: integer in [-lim, lim] when lim > 0, else uniform in [-1, 1). */
static float sk_value(int lim) { return lim > 0 ? irand(lim) : urand(); }

/* nnz strictly increasing indices below d: nnz sorted draws from [0, d - nnz], the k-th plus
 * k. variant 1 forces the first column in, 2 the last, 3 both (when nnz allows). */
static void sk_indices(uint32_t *idx, size_t nnz, size_t d, int variant)
{
    for (size_t k = 0; k < nnz; k++) {
        uint32_t v = (uint32_t)rand_below(d - nnz + 1), j = (uint32_t)k;
        for (; j > 0 && idx[j - 1] > v; j--) idx[j] = idx[j - 1];
        idx[j] = v;
    }
    for (size_t k = 0; k < nnz; k++) idx[k] += (uint32_t)k;
    /* idx[1] >= 1 and idx[nnz - 2] <= d - 2 already, so these keep the order */
    if (nnz > 0 && (variant & 1)) idx[0] = 0;
    if (nnz > 0 && (variant & 2)) idx[nnz - 1] = (uint32_t)(d - 1);
}

/* A row of nnz pairs over d in (sk_idx, sk_val) at offsets (oi, ov), canaries around it. */
static void sk_row(size_t nnz, size_t d, size_t oi, size_t ov, int lim, int variant, uint32_t **idx,
                   float **val)
{
    for (size_t i = 0; i < SK_RLEN; i++) {
        sk_idx[i] = 0xdeadbeefu;
        sk_val[i] = CANARY;
    }
    *idx = sk_idx + oi;
    *val = sk_val + ov;
    sk_indices(*idx, nnz, d, variant);
    for (size_t k = 0; k < nnz; k++) (*val)[k] = sk_value(lim);
}

/* The dense operands for d: w0 random (or integer), w1, w2, u1, u2 copies of it, 16 canaries
 * before and the rest of the buffer after; entry i of each at [16 + i]. */
static void sk_dense(size_t d, int lim)
{
    for (size_t i = 0; i < SK_WLEN; i++) sk_w0[i] = CANARY;
    for (size_t i = 0; i < d; i++) sk_w0[16 + i] = sk_value(lim);
    memcpy(sk_w1, sk_w0, sizeof sk_w0);
    memcpy(sk_w2, sk_w0, sizeof sk_w0);
    memcpy(sk_u1, sk_w0, sizeof sk_w0);
    memcpy(sk_u2, sk_w0, sizeof sk_w0);
}

/* Put the row's entries of buf back to w0's (after an update both sides compared equal). */
static void sk_restore(float *buf, const uint32_t *idx, size_t nnz)
{
    for (size_t k = 0; k < nnz; k++) buf[16 + idx[k]] = sk_w0[16 + idx[k]];
}

/* The exact dot in double and the tolerance for n products. */
static void sk_exact(const float *w, const uint32_t *idx, const float *val, size_t nnz, double *exact,
                     double *tol)
{
    double e = 0.0, mag = 0.0;
    for (size_t k = 0; k < nnz; k++) {
        e += (double)w[idx[k]] * val[k];
        mag += fabs((double)w[idx[k]] * val[k]);
    }
    *exact = e;
    *tol = 1.01 * (double)nnz * 0x1p-24 * mag;
}

static size_t sk_maxnnz(size_t d) { return d < MAXN ? d : MAXN; }

/* dot: within the bound of the exact sum on random data, scalar's too; bit for bit vs scalar
 * on integers and on rows of fewer than 32 non-zeros; 0 for an empty row. */
static void sparse_dot_matches_scalar(const pt_kernels *k)
{
    const pt_sparse_kernels *s = k->sparse, *ref = sk_ref();
    for (size_t di = 0; di < SK_NDS; di++)
        for (int lim = 0; lim <= 100; lim += 100) {
            const size_t d = sk_ds[di];
            sk_dense(d, lim);
            const float *w = sk_w0 + 16;
            for (size_t nnz = 0; nnz <= sk_maxnnz(d); nnz++)
                for (size_t oi = 0; oi < sk_noffs(d); oi++) {
                    const size_t off = sk_off(d, oi);
                    uint32_t *idx;
                    float *val;
                    sk_row(nnz, d, off, other_off(off, 1), lim, (int)(nnz + off) % 4, &idx, &val);
                    const float got = s->dot(w, idx, val, nnz), want = ref->dot(w, idx, val, nnz);
                    double exact, tol;
                    sk_exact(w, idx, val, nnz, &exact, &tol);
                    if (lim)
                        CHECK(same_float(got, want) && got == (float)exact,
                              "%s sparse dot d=%zu nnz=%zu off=%zu on integers: %.9g vs scalar %.9g", k->name, d,
                              nnz, off, got, want);
                    else
                        CHECK(fabs(got - exact) <= tol && fabs(want - exact) <= tol,
                              "%s sparse dot d=%zu nnz=%zu off=%zu: %.9g (scalar %.9g) vs exact %.9g (tol %.3g)",
                              k->name, d, nnz, off, got, want, exact, tol);
                    if (nnz < 32)
                        CHECK(same_float(got, want), "%s sparse dot nnz=%zu: %.9g, not scalar's %.9g", k->name, nnz,
                              got, want);
                    if (nnz == 0) CHECK(got == 0.0f, "%s sparse dot of an empty row", k->name);
                }
        }
}

/* axpy and axpy2: every entry of w (and u), canaries included, bit for bit vs scalar; axpy2
 * also equals axpy(a, w) then axpy(c, u) within the ISA. */
static void sparse_axpy_matches_scalar(const pt_kernels *k)
{
    const pt_sparse_kernels *s = k->sparse, *ref = sk_ref();
    const size_t bytes = sizeof sk_w0;
    for (size_t di = 0; di < SK_NDS; di++)
        for (int lim = 0; lim <= 100; lim += 100) {
            const size_t d = sk_ds[di];
            sk_dense(d, lim);
            for (size_t nnz = 0; nnz <= sk_maxnnz(d); nnz++)
                for (size_t oi = 0; oi < sk_noffs(d); oi++) {
                    const size_t off = sk_off(d, oi);
                    uint32_t *idx;
                    float *val;
                    sk_row(nnz, d, other_off(off, 2), off, lim, (int)(nnz + off) % 4, &idx, &val);
                    const float a = lim ? irand(3) : 3.0f * urand(), c = lim ? irand(50) : 1000.0f * urand();
                    s->axpy(a, idx, val, nnz, sk_w1 + 16);
                    ref->axpy(a, idx, val, nnz, sk_w2 + 16);
                    CHECK(memcmp(sk_w1, sk_w2, bytes) == 0, "%s sparse axpy d=%zu nnz=%zu off=%zu differs from scalar",
                          k->name, d, nnz, off);
                    sk_restore(sk_w1, idx, nnz);
                    sk_restore(sk_w2, idx, nnz);

                    s->axpy2(a, c, idx, val, nnz, sk_w1 + 16, sk_u1 + 16);
                    ref->axpy2(a, c, idx, val, nnz, sk_w2 + 16, sk_u2 + 16);
                    CHECK(memcmp(sk_w1, sk_w2, bytes) == 0 && memcmp(sk_u1, sk_u2, bytes) == 0,
                          "%s sparse axpy2 d=%zu nnz=%zu off=%zu differs from scalar", k->name, d, nnz, off);
                    sk_restore(sk_w2, idx, nnz);
                    sk_restore(sk_u2, idx, nnz);
                    s->axpy(a, idx, val, nnz, sk_w2 + 16);
                    s->axpy(c, idx, val, nnz, sk_u2 + 16);
                    CHECK(memcmp(sk_w1, sk_w2, bytes) == 0 && memcmp(sk_u1, sk_u2, bytes) == 0,
                          "%s sparse axpy2 d=%zu nnz=%zu differs from two axpy", k->name, d, nnz);
                    sk_restore(sk_w1, idx, nnz);
                    sk_restore(sk_w2, idx, nnz);
                    sk_restore(sk_u1, idx, nnz);
                    sk_restore(sk_u2, idx, nnz);
                }
        }
}

/* Fused step == dot, the test, then axpy, bit for bit within each ISA, on random data; both
 * branches taken many times. */
static void sparse_step_equals_dot_then_axpy(const pt_kernels *k)
{
    static const float taus[] = {0.0f, 0.25f, -0.25f, INFINITY, -INFINITY};
    const pt_sparse_kernels *s = k->sparse;
    const size_t bytes = sizeof sk_w0;
    size_t updates = 0, total = 0;
    for (size_t di = 0; di < SK_NDS; di++) {
        const size_t d = sk_ds[di];
        sk_dense(d, 0);
        for (size_t nnz = 0; nnz <= sk_maxnnz(d); nnz++)
            for (size_t oi = 0; oi < sk_noffs(d); oi++) {
                const size_t off = sk_off(d, oi);
                uint32_t *idx;
                float *val;
                sk_row(nnz, d, off, other_off(off, 3), 0, (int)(nnz + off) % 4, &idx, &val);
                const float tau = taus[(nnz + off) % 5], y = urand() < 0.0f ? -1.0f : 1.0f;
                const float eta = 0.1f + (urand() + 1.0f), bias = (off & 1) ? 1.0f : 0.0f;
                float b1 = urand(), b2 = b1, score1 = NAN;
                const int upd1 = s->step(sk_w1 + 16, &b1, idx, val, nnz, y, tau, eta, bias, &score1);
                const float score2 = s->dot(sk_w2 + 16, idx, val, nnz) + b2 * bias;
                int upd2 = 0;
                if (y * score2 <= tau) {
                    const float a = eta * y;
                    s->axpy(a, idx, val, nnz, sk_w2 + 16);
                    b2 += a * bias;
                    upd2 = 1;
                }
                CHECK(upd1 == upd2 && same_float(score1, score2) && same_float(b1, b2) &&
                          memcmp(sk_w1, sk_w2, bytes) == 0,
                      "%s sparse step d=%zu nnz=%zu off=%zu differs from dot + axpy (score %.9g vs %.9g, update %d vs %d)",
                      k->name, d, nnz, off, score1, score2, upd1, upd2);
                sk_restore(sk_w1, idx, nnz);
                sk_restore(sk_w2, idx, nnz);
                updates += (size_t)upd1;
                total++;
            }
    }
    CHECK(updates > total / 5 && updates < total - total / 5, "%s sparse step: %zu updates of %zu", k->name,
          updates, total);
}

/* A block of SK_ROWS CSR rows over d in (sk_rowptr, sk_cidx, sk_cval): every kind of length
 * (0, 1, tails, whole vectors, up to MAXN), rowptr starting at an odd offset, values in
 * [-lim, lim] or random. */
static void sk_block(size_t d, int lim, size_t first)
{
    for (size_t i = 0; i < SK_CLEN; i++) {
        sk_cidx[i] = 0xdeadbeefu;
        sk_cval[i] = CANARY;
    }
    static const size_t lens[] = {0, 1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 48, 49,
                                  63, 64, 65, 75, 127, 128, 129, 200, 255, 256, 257};
    const size_t nlens = sizeof lens / sizeof lens[0];
    sk_rowptr[0] = first;
    for (size_t r = 0; r < SK_ROWS; r++) {
        size_t nnz = r < nlens ? lens[r] : rand_below(MAXN + 1);
        if (nnz > d) nnz = rand_below(d + 1);
        sk_indices(sk_cidx + sk_rowptr[r], nnz, d, (int)r % 4);
        for (size_t j = 0; j < nnz; j++) sk_cval[sk_rowptr[r] + j] = sk_value(lim);
        sk_rowptr[r + 1] = sk_rowptr[r] + nnz;
    }
}

/* step_rows_avg (the averaged variant's loop) equals, within the ISA, dot, the test and axpy2
 * row by row as paths/online.h's visit_sparse takes them (random data), and scalar's
 * step_rows_avg on integer-valued data: the same updates, w, u, b, ub and steps, bit for bit. */
static void sparse_avg_rows_match(const pt_kernels *k)
{
    const pt_sparse_kernels *s = k->sparse, *ref = sk_ref();
    static const float etas[] = {1.0f, 0.5f, 2.0f, 0.25f};
    static const double steps0[] = {0.0, 7.0, 100000.0, 3.0};
    const size_t bytes = sizeof sk_w0;
    float Y[SK_ROWS];
    for (size_t di = 0; di < SK_NDS; di++)
        for (int lim = 0; lim <= 8; lim += 8)
            for (size_t rep = 0; rep < 4; rep++) {
                const size_t d = sk_ds[di], first = 3 * rep + (size_t)lim + 1;
                sk_dense(d, lim);
                memcpy(sk_w3, sk_w0, bytes);
                memcpy(sk_u3, sk_w0, bytes);
                sk_block(d, lim, first);
                for (size_t r = 0; r < SK_ROWS; r++) Y[r] = urand() < 0.0f ? -1.0f : 1.0f;
                const float tau = rep == 3 ? 0.0f : lim ? (float)rep : 0.1f * (float)rep;
                const float eta = etas[rep], bias = (rep & 1) ? 0.0f : 1.0f;
                const size_t rows = SK_ROWS - rep;

                float b1 = lim ? irand(8) : urand(), ub1 = lim ? irand(8) : urand();
                float b2 = b1, ub2 = ub1, b3 = b1, ub3 = ub1;
                double t1 = steps0[rep], t2 = t1, t3 = t1;
                const size_t n1 = s->step_rows_avg(sk_w1 + 16, sk_u1 + 16, &b1, &ub1, &t1, sk_rowptr,
                                                   sk_cidx, sk_cval, Y, rows, tau, eta, bias);
                size_t n2 = 0;
                for (size_t r = 0; r < rows; r++, t2 += 1.0) {
                    const uint64_t o = sk_rowptr[r];
                    const size_t nnz = sk_rowptr[r + 1] - o;
                    const float sc = s->dot(sk_w2 + 16, sk_cidx + o, sk_cval + o, nnz) + b2 * bias;
                    if (!(Y[r] * sc <= tau)) continue;
                    const float a = eta * Y[r], c = (float)t2 * a;
                    s->axpy2(a, c, sk_cidx + o, sk_cval + o, nnz, sk_w2 + 16, sk_u2 + 16);
                    ub2 += c * bias;
                    b2 += a * bias;
                    n2++;
                }
                CHECK(n1 == n2 && same_float(b1, b2) && same_float(ub1, ub2) && t1 == t2 &&
                          memcmp(sk_w1, sk_w2, bytes) == 0 && memcmp(sk_u1, sk_u2, bytes) == 0,
                      "%s sparse step_rows_avg d=%zu rep=%zu differs from the steps row by row "
                      "(%zu vs %zu updates)", k->name, d, rep, n1, n2);
                CHECK(n1 > 0, "%s sparse step_rows_avg d=%zu rep=%zu made no update", k->name, d, rep);
                if (lim) {
                    const size_t n3 = ref->step_rows_avg(sk_w3 + 16, sk_u3 + 16, &b3, &ub3, &t3, sk_rowptr,
                                                         sk_cidx, sk_cval, Y, rows, tau, eta, bias);
                    CHECK(n1 == n3 && same_float(b1, b3) && same_float(ub1, ub3) && t1 == t3 &&
                              memcmp(sk_w1, sk_w3, bytes) == 0 && memcmp(sk_u1, sk_u3, bytes) == 0,
                          "%s sparse step_rows_avg d=%zu rep=%zu on integers differs from scalar (%zu vs "
                          "%zu updates)", k->name, d, rep, n1, n3);
                }
            }
}

/* step_rows equals step row by row (within the ISA, random data), and scalar's step_rows on
 * integer-valued data; dot_rows equals dot row by row, and writes out[0..rows) only; and
 * step_rows_avg as sparse_avg_rows_match says. */
static void sparse_row_loops_match(const pt_kernels *k)
{
    const pt_sparse_kernels *s = k->sparse, *ref = sk_ref();
    static const float etas[] = {1.0f, 0.5f, 2.0f, 0.25f};
    const size_t bytes = sizeof sk_w0;
    float Y[SK_ROWS], out[SK_ROWS + 16];
    for (size_t di = 0; di < SK_NDS; di++)
        for (int lim = 0; lim <= 8; lim += 8)
            for (size_t rep = 0; rep < 4; rep++) {
                const size_t d = sk_ds[di], first = 3 * rep + (size_t)lim;
                sk_dense(d, lim);
                sk_block(d, lim, first);
                for (size_t r = 0; r < SK_ROWS; r++) Y[r] = urand() < 0.0f ? -1.0f : 1.0f;
                const float tau = rep == 3 ? 0.0f : lim ? (float)rep : 0.1f * (float)rep;
                const float eta = etas[rep], bias = (rep & 1) ? 1.0f : 0.0f;
                const size_t rows = SK_ROWS - rep; /* blocks ending early too */

                /* the loop vs the steps */
                float b1 = lim ? irand(8) : urand(), b2 = b1, b3 = b1;
                const size_t u1 = s->step_rows(sk_w1 + 16, &b1, sk_rowptr, sk_cidx, sk_cval, Y, rows, tau, eta, bias);
                size_t u2 = 0;
                for (size_t r = 0; r < rows; r++) {
                    float sc;
                    const uint64_t o = sk_rowptr[r];
                    u2 += (size_t)s->step(sk_w2 + 16, &b2, sk_cidx + o, sk_cval + o, sk_rowptr[r + 1] - o, Y[r], tau,
                                          eta, bias, &sc);
                }
                CHECK(u1 == u2 && same_float(b1, b2) && memcmp(sk_w1, sk_w2, bytes) == 0,
                      "%s sparse step_rows d=%zu rep=%zu differs from step row by row (%zu vs %zu updates)", k->name,
                      d, rep, u1, u2);
                CHECK(u1 > 0, "%s sparse step_rows d=%zu rep=%zu made no update", k->name, d, rep);
                if (lim) {
                    /* integers: the same run as scalar's, bit for bit */
                    const size_t u3 = ref->step_rows(sk_u1 + 16, &b3, sk_rowptr, sk_cidx, sk_cval, Y, rows, tau, eta,
                                                     bias);
                    CHECK(u1 == u3 && same_float(b1, b3) && memcmp(sk_w1, sk_u1, bytes) == 0,
                          "%s sparse step_rows d=%zu rep=%zu on integers differs from scalar (%zu vs %zu updates)",
                          k->name, d, rep, u1, u3);
                }

                /* dot_rows: each row's dot, bit for bit, nothing written past rows */
                for (size_t r = 0; r < SK_ROWS + 16; r++) out[r] = CANARY;
                s->dot_rows(sk_w1 + 16, sk_rowptr, sk_cidx, sk_cval, rows, out);
                for (size_t r = 0; r < rows; r++) {
                    const uint64_t o = sk_rowptr[r];
                    const float want = s->dot(sk_w1 + 16, sk_cidx + o, sk_cval + o, sk_rowptr[r + 1] - o);
                    CHECK(same_float(out[r], want), "%s sparse dot_rows d=%zu row %zu: %.9g vs dot %.9g", k->name,
                          d, r, out[r], want);
                }
                for (size_t r = rows; r < SK_ROWS + 16; r++)
                    CHECK(out[r] == CANARY, "%s sparse dot_rows wrote out[%zu] of %zu", k->name, r, rows);
            }
    sparse_avg_rows_match(k);
}

/* gemv_t: every entry of g bit for bit vs scalar; rows with coef 0 skipped (an entry at -0
 * stays -0, which adding 0 val would make +0). */
static void sparse_gemv_t_matches_scalar(const pt_kernels *k)
{
    const pt_sparse_kernels *s = k->sparse, *ref = sk_ref();
    const size_t bytes = sizeof sk_w0;
    float coef[SK_ROWS];
    for (size_t di = 0; di < SK_NDS; di++)
        for (int lim = 0; lim <= 100; lim += 100)
            for (size_t rep = 0; rep < 3; rep++) {
                const size_t d = sk_ds[di], rows = SK_ROWS - 2 * rep;
                sk_dense(d, lim);
                sk_block(d, lim, 5 * rep + 1);
                for (size_t r = 0; r < SK_ROWS; r++)
                    coef[r] = (r + rep) % 3 == 0 ? 0.0f : lim ? irand(4) : 2.0f * urand();
                /* the entries of a skipped row (coef 0, 3 to 5 non-zeros) at -0 */
                const size_t z = 3 + (3 - rep % 3) % 3;
                for (uint64_t j = sk_rowptr[z]; j < sk_rowptr[z + 1]; j++) {
                    sk_w1[16 + sk_cidx[j]] = -0.0f;
                    sk_w2[16 + sk_cidx[j]] = -0.0f;
                }
                s->gemv_t(coef, sk_rowptr, sk_cidx, sk_cval, rows, sk_w1 + 16);
                ref->gemv_t(coef, sk_rowptr, sk_cidx, sk_cval, rows, sk_w2 + 16);
                CHECK(memcmp(sk_w1, sk_w2, bytes) == 0, "%s sparse gemv_t d=%zu rep=%zu differs from scalar",
                      k->name, d, rep);
                /* the scalar reference: the rows' axpy in order, zero rows skipped */
                memcpy(sk_u1, sk_w0, bytes);
                for (uint64_t j = sk_rowptr[z]; j < sk_rowptr[z + 1]; j++) sk_u1[16 + sk_cidx[j]] = -0.0f;
                for (size_t r = 0; r < rows; r++)
                    if (coef[r] != 0.0f)
                        ref->axpy(coef[r], sk_cidx + sk_rowptr[r], sk_cval + sk_rowptr[r],
                                  sk_rowptr[r + 1] - sk_rowptr[r], sk_u1 + 16);
                CHECK(memcmp(sk_w1, sk_u1, bytes) == 0, "%s sparse gemv_t d=%zu rep=%zu differs from axpy by row",
                      k->name, d, rep);
            }
}

/* dot_many: every class's score equals dot's, bit for bit, and is within the bound of the
 * exact value (bit for bit vs scalar on integers), K across the group sizes, rows ldw apart at
 * an odd stride; nothing written past out[K]. */
static void sparse_dot_many_matches_scalar(const pt_kernels *k)
{
    enum { KMAX = 13 };
    const pt_sparse_kernels *s = k->sparse, *ref = sk_ref();
    float out[KMAX + 16], want[KMAX];
    for (size_t di = 0; di < 3; di++)
        for (int lim = 0; lim <= 100; lim += 100) {
            const size_t d = sk_ds[di], ldw = d + 3;
            if (KMAX * ldw + 32 > SK_WLEN) continue;
            for (size_t i = 0; i < SK_WLEN; i++) sk_w0[i] = sk_value(lim);
            const float *W = sk_w0 + 16;
            for (size_t K = 1; K <= KMAX; K += 3)
                for (size_t nnz = 0; nnz <= sk_maxnnz(d); nnz += (d > 17 ? 3 : 1))
                    for (size_t off = 0; off < 4; off++) {
                        uint32_t *idx;
                        float *val;
                        sk_row(nnz, d, off, other_off(off, 4), lim, (int)(nnz + K) % 4, &idx, &val);
                        for (size_t c = 0; c < KMAX + 16; c++) out[c] = CANARY;
                        s->dot_many(W, ldw, K, idx, val, nnz, out);
                        ref->dot_many(W, ldw, K, idx, val, nnz, want);
                        for (size_t c = 0; c < K; c++) {
                            double exact, tol;
                            sk_exact(W + c * ldw, idx, val, nnz, &exact, &tol);
                            if (lim)
                                CHECK(same_float(out[c], want[c]),
                                      "%s sparse dot_many d=%zu K=%zu c=%zu nnz=%zu on integers: %.9g vs %.9g",
                                      k->name, d, K, c, nnz, out[c], want[c]);
                            else
                                CHECK(fabs(out[c] - exact) <= tol && fabs(want[c] - exact) <= tol,
                                      "%s sparse dot_many d=%zu K=%zu c=%zu nnz=%zu: %.9g vs exact %.9g", k->name, d,
                                      K, c, nnz, out[c], exact);
                            CHECK(same_float(want[c], ref->dot(W + c * ldw, idx, val, nnz)),
                                  "scalar sparse dot_many != dot");
                            CHECK(same_float(out[c], s->dot(W + c * ldw, idx, val, nnz)),
                                  "%s sparse dot_many d=%zu K=%zu c=%zu nnz=%zu differs from dot", k->name, d, K, c,
                                  nnz);
                        }
                        for (size_t c = K; c < KMAX + 16; c++)
                            CHECK(out[c] == CANARY, "%s sparse dot_many K=%zu wrote out[%zu]", k->name, K, c);
                    }
        }
}

/* Two rows over d sharing some columns: (sk_idx, sk_val) and (sk_idx2, sk_val2). */
static void sk_pair(size_t na, size_t nb, size_t d, size_t oa, size_t ob, int lim, uint32_t **ia, float **va,
                    uint32_t **ib, float **vb)
{
    sk_row(na, d, oa, other_off(oa, 5), lim, (int)(na % 4), ia, va);
    for (size_t i = 0; i < SK_RLEN; i++) {
        sk_idx2[i] = 0xdeadbeefu;
        sk_val2[i] = CANARY;
    }
    *ib = sk_idx2 + ob;
    *vb = sk_val2 + other_off(ob, 6);
    sk_indices(*ib, nb, d, (int)(nb % 4));
    /* about half of b's columns taken from a's, kept increasing: merge a's into b's gaps */
    for (size_t j = 0; j < nb && na > 0; j++) {
        if (rand_below(2)) continue;
        const uint32_t c = (*ia)[rand_below(na)];
        const uint32_t lo = j ? (*ib)[j - 1] : 0, hi = j + 1 < nb ? (*ib)[j + 1] : (uint32_t)d;
        if ((j == 0 || c > lo) && c < hi) (*ib)[j] = c;
    }
    for (size_t j = 0; j < nb; j++) (*vb)[j] = sk_value(lim);
}

/* The dot of two sparse rows through the scatter helper: a scattered into a zeroed buffer,
 * b dotted with it, a cleared. Within the bound of the exact sum over the shared columns (the
 * other products are zeros, which add nothing), bit for bit vs scalar on integers; clear leaves
 * the buffer all zeros and scatter writes exactly a's entries (canaries around the buffer). */
static void sparse_scatter_dot_matches_exact(const pt_kernels *k)
{
    const pt_sparse_kernels *s = k->sparse, *ref = sk_ref();
    for (size_t di = 0; di < SK_NDS; di++)
        for (int lim = 0; lim <= 100; lim += 100) {
            const size_t d = sk_ds[di];
            for (size_t i = 0; i < SK_WLEN; i++) sk_w1[i] = CANARY;
            for (size_t i = 0; i < d; i++) sk_w1[16 + i] = 0.0f;
            memcpy(sk_w2, sk_w1, sizeof sk_w1);
            float *buf = sk_w1 + 16, *rbuf = sk_w2 + 16;
            for (size_t na = 0; na <= sk_maxnnz(d); na += (d > 17 ? 5 : 1))
                for (size_t t = 0; t < 4; t++) {
                    const size_t nb = t == 0 ? na : rand_below(sk_maxnnz(d) + 1), oa = (na + t) % MAXOFF;
                    uint32_t *ia, *ib;
                    float *va, *vb;
                    sk_pair(na, nb, d, oa, (oa * 7 + t) % MAXOFF, lim, &ia, &va, &ib, &vb);
                    double exact = 0.0, mag = 0.0;
                    for (size_t i = 0, j = 0; i < na && j < nb;) {
                        if (ia[i] == ib[j]) {
                            exact += (double)va[i] * vb[j];
                            mag += fabs((double)va[i] * vb[j]);
                        }
                        const uint32_t x = ia[i], y = ib[j];
                        i += x <= y;
                        j += y <= x;
                    }
                    s->scatter(ia, va, na, buf);
                    const float got = s->dot(buf, ib, vb, nb);
                    s->clear(ia, na, buf);
                    ref->scatter(ia, va, na, rbuf);
                    const float want = ref->dot(rbuf, ib, vb, nb);
                    ref->clear(ia, na, rbuf);
                    CHECK(memcmp(sk_w1, sk_w2, sizeof sk_w1) == 0, "%s sparse clear d=%zu na=%zu left entries",
                          k->name, d, na);
                    const double tol = 1.01 * (double)nb * 0x1p-24 * mag;
                    if (lim)
                        CHECK(same_float(got, want) && got == (float)exact,
                              "%s sparse scatter + dot d=%zu na=%zu nb=%zu on integers: %.9g vs scalar %.9g", k->name,
                              d, na, nb, got, want);
                    else
                        CHECK(fabs(got - exact) <= tol && fabs(want - exact) <= tol,
                              "%s sparse scatter + dot d=%zu na=%zu nb=%zu: %.9g (scalar %.9g) vs exact %.9g",
                              k->name, d, na, nb, got, want, exact);
                }
            /* scatter writes exactly the row's entries */
            uint32_t *ia;
            float *va;
            const size_t na = sk_maxnnz(d);
            sk_row(na, d, 3, 9, lim, 3, &ia, &va);
            s->scatter(ia, va, na, buf);
            for (size_t j = 0; j < na; j++) sk_w2[16 + ia[j]] = va[j];
            CHECK(memcmp(sk_w1, sk_w2, sizeof sk_w1) == 0, "%s sparse scatter d=%zu differs", k->name, d);
        }
}

/* ------------------------------------------------------------------ bounds */

/* n bytes that end exactly at an inaccessible page (the mapping is kept for the process). */
static void *sk_guarded(size_t n)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE), len = (n + page - 1) / page * page + page;
    char *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED) return NULL;
    if (mprotect(map + len - page, page, PROT_NONE) != 0) return NULL;
    return map + len - page - n;
}

/* Rows, rowptr blocks and dense operands that end at an inaccessible page: every kernel, every
 * nnz, must stay inside them (a tail read as a whole vector, or a block of indices read past
 * nnz, would fault). */
static void sparse_no_access_past_end(const pt_kernels *k)
{
    enum { D = 300, K = 3 };
    const pt_sparse_kernels *s = k->sparse;
    static uint32_t *gidx;
    static float *gval, *gw, *gu, *gW;
    static uint64_t *growptr;
    if (!gidx) {
        gidx = sk_guarded(MAXN * sizeof *gidx);
        gval = sk_guarded(MAXN * sizeof *gval);
        gw = sk_guarded(D * sizeof *gw);
        gu = sk_guarded(D * sizeof *gu);
        gW = sk_guarded(K * D * sizeof *gW);
        growptr = sk_guarded(2 * sizeof *growptr);
    }
    CHECK(gidx && gval && gw && gu && gW && growptr, "mmap failed");
    for (size_t i = 0; i < D; i++) gw[i] = gu[i] = 0.0f;
    for (size_t i = 0; i < K * D; i++) gW[i] = urand();
    for (size_t nnz = 0; nnz <= MAXN; nnz++) {
        /* the row at the end of its pages, the last column D - 1 (w's last entry) */
        uint32_t *idx = gidx + MAXN - nnz;
        float *val = gval + MAXN - nnz, out[K], sc, b = 0.0f;
        sk_indices(idx, nnz, D, 2);
        for (size_t j = 0; j < nnz; j++) val[j] = urand();
        volatile float sink = s->dot(gw, idx, val, nnz);
        (void)sink;
        s->axpy(0.5f, idx, val, nnz, gw);
        s->axpy2(0.5f, 0.25f, idx, val, nnz, gw, gu);
        s->step(gw, &b, idx, val, nnz, 1.0f, INFINITY, 1.0f, 1.0f, &sc);
        s->dot_many(gW, D, K, idx, val, nnz, out);
        s->scatter(idx, val, nnz, gu);
        s->clear(idx, nnz, gu);
        /* a block of one row: rowptr's last entry at the end of its page */
        growptr[0] = (uint64_t)(MAXN - nnz);
        growptr[1] = MAXN;
        const float y = 1.0f, coef = 0.5f;
        s->step_rows(gw, &b, growptr, gidx, gval, &y, 1, INFINITY, 1.0f, 1.0f);
        s->dot_rows(gw, growptr, gidx, gval, 1, out);
        s->gemv_t(&coef, growptr, gidx, gval, 1, gu);
    }
}

/* Every entry is there. */
static void sparse_table_complete(const pt_kernels *k)
{
    const pt_sparse_kernels *s = k->sparse;
    CHECK(s && s->dot && s->axpy && s->axpy2 && s->step && s->step_rows && s->step_rows_avg && s->dot_rows &&
              s->gemv_t && s->dot_many && s->scatter && s->clear,
          "%s: NULL sparse entry", k->name);
}

#endif /* PT_SPARSE_KERNEL_CHECKS_H */
