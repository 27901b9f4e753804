/*
 * The SIMD kernel table (src/kernels/) and its dispatch.
 *
 * Every ISA this machine runs is checked against scalar.c on lengths 0..257, with each
 * pointer offset 0..15 floats from 64-byte alignment, on random data; ISAs it cannot run
 * are skipped (scripts/test-neon runs the NEON variant under qemu-aarch64).
 *
 * Tolerances:
 *  - dot: any summation order (one accumulator, several, a tree, with or without FMA) of n
 *    products has |computed - exact| <= gamma_n * sum |a_i b_i|, gamma_n = n u / (1 - n u),
 *    u = 2^-24 (Higham, Accuracy and Stability, 3.1; with FMA a product's rounding merges
 *    into its add, which only lowers the count). So both the ISA and scalar are checked
 *    against the exact sum (in double, whose own error is ~n 2^-53 and negligible) with
 *    1.01 n u sum |a_i b_i|. The bound is tight for the worst case, loose for random data.
 *  - axpy, axpy2, scale_add: exact. Every variant multiplies and adds in separate roundings,
 *    as scalar.c does under -ffp-contract=off (no FMA), so results must match bit for bit.
 *    Stores past n would be caught by canaries around the output.
 *  - step: its decision and update vs scalar on integer-valued data, where every product and
 *    sum is exact in float (|values| well under 2^24), so all results must be bit equal,
 *    including ties y s == tau (which update). And within one ISA, step must equal dot, the
 *    same test, then axpy, bit for bit on random data: it runs the same code.
 *  - Reads or writes past n are also caught by buffers that end at an inaccessible page.
 */
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/common.h"
#include "kernels/kernels.h"
#include "kernel_test_util.h"
#include "testutil.h"

/* ------------------------------------------------------------------ helpers */

/* ck_assert reports every passing check to the parent process (a pipe write each), which
 * would dominate these loops of thousands of cases: only call it on a failure. */
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) ck_assert_msg(0, __VA_ARGS__);                                                \
    } while (0)

/* A 64-byte aligned buffer of BUFLEN floats; the data area starts 16 floats in, so data
 * pointers with offset o are base + 16 + o (still 64-byte aligned at o = 0). */
typedef struct buf {
    float *base;
} buf;

static buf buf_new(void)
{
    buf b = {aligned_alloc(64, BUFLEN * sizeof(float))};
    ck_assert(b.base != NULL);
    return b;
}

static float *buf_at(buf b, size_t off) { return b.base + 16 + off; }

/* Fill all of b with the canary, then [off, off + n) with random floats. */
static float *buf_random(buf b, size_t off, size_t n)
{
    for (size_t i = 0; i < BUFLEN; i++) b.base[i] = CANARY;
    float *p = buf_at(b, off);
    for (size_t i = 0; i < n; i++) p[i] = urand();
    return p;
}

static void buf_free(buf b) { free(b.base); }

/* The canaries outside [p, p + n) are intact. */
static void check_canaries(buf b, const float *p, size_t n, const char *what)
{
    for (const float *q = b.base; q < b.base + BUFLEN; q++)
        if (q < p || q >= p + n)
            CHECK(q[0] == CANARY, "%s wrote outside its output: index %td (n = %zu)", what,
                          q - p, n);
}

static const pt_kernels *table(pt_isa isa)
{
    const pt_kernels *k = NULL;
    ck_assert_int_eq(pt_kernels_get(isa, &k), PT_OK);
    ck_assert(k != NULL);
    return k;
}

static const pt_kernels *scalar(void) { return table(PT_ISA_SCALAR); }

/* Loop tests run once per ISA value; this skips those the machine cannot run. */
#define FOR_ISA(isa_var)                                                                           \
    pt_isa isa_var = (pt_isa)_i;                                                                   \
    if (!pt_isa_available(isa_var)) return;                                                       \
    const pt_kernels *k = table(isa_var)

/* ------------------------------------------------------------------ dot */

START_TEST(dot_matches_exact)
{
    FOR_ISA(isa);
    const pt_kernels *ref = scalar();
    buf A = buf_new(), B = buf_new();
    for (size_t n = 0; n <= MAXN; n++)
        for (size_t off = 0; off < MAXOFF; off++) {
            const float *a = buf_random(A, off, n), *b = buf_random(B, other_off(off, 1), n);
            double exact = 0.0, mag = 0.0;
            for (size_t i = 0; i < n; i++) {
                exact += (double)a[i] * b[i];
                mag += fabs((double)a[i] * b[i]);
            }
            const double tol = 1.01 * (double)n * 0x1p-24 * mag;
            float got = k->dot(a, b, n), want = ref->dot(a, b, n);
            CHECK(fabs(got - exact) <= tol, "%s dot n=%zu off=%zu: %.9g vs exact %.9g (tol %.3g)",
                          k->name, n, off, got, exact, tol);
            CHECK(fabs(want - exact) <= tol, "scalar dot n=%zu: %.9g vs exact %.9g", n, want, exact);
            if (n == 0) CHECK(got == 0.0f, "%s dot of length 0 is %g", k->name, got);
        }
    buf_free(A);
    buf_free(B);
}
END_TEST

/* dot_many: every class's score within the dot's error bound of the exact value, for K across
 * the group sizes (8, 4, 1), any n and offsets, rows ldw apart; the scalar table equals dot. */
START_TEST(dot_many_matches_exact)
{
    FOR_ISA(isa);
    enum { KMAX = 13, LDW = 272 };
    float *W = malloc((size_t)KMAX * LDW * sizeof *W + 64), out[KMAX];
    buf X = buf_new();
    for (size_t i = 0; i < (size_t)KMAX * LDW + 16; i++) W[i] = urand();
    for (size_t K = 1; K <= KMAX; K += 3)
        for (size_t n = 0; n <= MAXN; n += 7)
            for (size_t off = 0; off < 4; off++) {
                const float *x = buf_random(X, off, n), *Wo = W + off;
                k->dot_many(Wo, LDW, K, x, n, out);
                for (size_t c = 0; c < K; c++) {
                    double exact = 0.0, mag = 0.0;
                    for (size_t i = 0; i < n; i++) {
                        exact += (double)Wo[c * LDW + i] * x[i];
                        mag += fabs((double)Wo[c * LDW + i] * x[i]);
                    }
                    const double tol = 1.01 * (double)n * 0x1p-24 * mag;
                    CHECK(fabs(out[c] - exact) <= tol, "%s dot_many K=%zu c=%zu n=%zu: %.9g vs %.9g",
                          k->name, K, c, n, out[c], exact);
                    if (isa == PT_ISA_SCALAR)
                        CHECK(same_float(out[c], k->dot(Wo + c * LDW, x, n)), "scalar dot_many != dot");
                }
            }
    buf_free(X);
    free(W);
}
END_TEST

/* Larger values: the dot of integer vectors is exact in every order, so all ISAs agree. */
START_TEST(dot_exact_on_integers)
{
    FOR_ISA(isa);
    buf A = buf_new(), B = buf_new();
    for (size_t n = 0; n <= MAXN; n++) {
        float *a = buf_random(A, n % MAXOFF, n), *b = buf_random(B, (n * 7) % MAXOFF, n);
        double exact = 0.0;
        for (size_t i = 0; i < n; i++) {
            a[i] = irand(100);
            b[i] = irand(100);
            exact += (double)a[i] * b[i];
        }
        CHECK(k->dot(a, b, n) == (float)exact, "%s dot n=%zu: %.9g vs %.9g", k->name, n,
                      k->dot(a, b, n), exact);
    }
    buf_free(A);
    buf_free(B);
}
END_TEST

/* ------------------------------------------------------------------ element-wise kernels */

START_TEST(axpy_bit_exact)
{
    FOR_ISA(isa);
    const pt_kernels *ref = scalar();
    buf X = buf_new(), Y = buf_new(), R = buf_new();
    for (size_t n = 0; n <= MAXN; n++)
        for (size_t off = 0; off < MAXOFF; off++) {
            const float alpha = urand() * 3.0f;
            const float *x = buf_random(X, other_off(off, 2), n);
            float *y = buf_random(Y, off, n), *r = buf_at(R, off);
            memcpy(R.base, Y.base, BUFLEN * sizeof(float));
            k->axpy(alpha, x, y, n);
            ref->axpy(alpha, x, r, n);
            CHECK(same_bits(y, r, n), "%s axpy n=%zu off=%zu differs from scalar", k->name, n, off);
            check_canaries(Y, y, n, "axpy");
        }
    buf_free(X);
    buf_free(Y);
    buf_free(R);
}
END_TEST

START_TEST(axpy2_bit_exact)
{
    FOR_ISA(isa);
    const pt_kernels *ref = scalar();
    buf X = buf_new(), W = buf_new(), U = buf_new(), RW = buf_new(), RU = buf_new();
    for (size_t n = 0; n <= MAXN; n++)
        for (size_t off = 0; off < MAXOFF; off++) {
            const float a = urand(), c = urand() * 1000.0f;
            const float *x = buf_random(X, other_off(off, 3), n);
            float *w = buf_random(W, off, n), *u = buf_random(U, other_off(off, 4), n);
            memcpy(RW.base, W.base, BUFLEN * sizeof(float));
            memcpy(RU.base, U.base, BUFLEN * sizeof(float));
            float *rw = buf_at(RW, off), *ru = buf_at(RU, other_off(off, 4));
            k->axpy2(a, c, x, w, u, n);
            ref->axpy2(a, c, x, rw, ru, n);
            CHECK(same_bits(w, rw, n) && same_bits(u, ru, n),
                          "%s axpy2 n=%zu off=%zu differs from scalar", k->name, n, off);
            check_canaries(W, w, n, "axpy2 (w)");
            check_canaries(U, u, n, "axpy2 (u)");
        }
    buf_free(X);
    buf_free(W);
    buf_free(U);
    buf_free(RW);
    buf_free(RU);
}
END_TEST

START_TEST(scale_add_bit_exact)
{
    FOR_ISA(isa);
    const pt_kernels *ref = scalar();
    buf X = buf_new(), Y = buf_new(), O = buf_new(), R = buf_new();
    for (size_t n = 0; n <= MAXN; n++)
        for (size_t off = 0; off < MAXOFF; off++) {
            const float a = urand(), c = urand() / 7.0f;
            const float *x = buf_random(X, other_off(off, 5), n), *y = buf_random(Y, other_off(off, 6), n);
            float *o = buf_random(O, off, n), *r = buf_random(R, off, n);
            k->scale_add(a, x, c, y, o, n);
            ref->scale_add(a, x, c, y, r, n);
            CHECK(same_bits(o, r, n), "%s scale_add n=%zu off=%zu differs from scalar", k->name, n, off);
            check_canaries(O, o, n, "scale_add");
        }
    buf_free(X);
    buf_free(Y);
    buf_free(O);
    buf_free(R);
}
END_TEST

/* The averaging call passes out == x: w = 1 w + c u, in place. */
START_TEST(scale_add_in_place)
{
    FOR_ISA(isa);
    const pt_kernels *ref = scalar();
    buf W = buf_new(), U = buf_new(), R = buf_new();
    for (size_t n = 0; n <= MAXN; n++) {
        const size_t off = n % MAXOFF;
        float *w = buf_random(W, off, n);
        const float *u = buf_random(U, (off + 5) % MAXOFF, n);
        memcpy(R.base, W.base, BUFLEN * sizeof(float));
        float *r = buf_at(R, off);
        const float c = -1.0f / (float)(n + 3);
        k->scale_add(1.0f, w, c, u, w, n);
        ref->scale_add(1.0f, r, c, u, r, n);
        CHECK(same_bits(w, r, n), "%s scale_add in place n=%zu differs from scalar", k->name, n);
        check_canaries(W, w, n, "scale_add in place");
    }
    buf_free(W);
    buf_free(U);
    buf_free(R);
}
END_TEST

/* ------------------------------------------------------------------ step */

/* Fused step == dot, the test, then axpy, bit for bit, within each ISA. */
START_TEST(step_equals_dot_then_axpy)
{
    FOR_ISA(isa);
    static const float taus[] = {0.0f, 0.25f, -0.25f, INFINITY, -INFINITY};
    buf X = buf_new(), W1 = buf_new(), W2 = buf_new();
    size_t updates = 0, total = 0;
    for (size_t n = 0; n <= MAXN; n++)
        for (size_t off = 0; off < MAXOFF; off++) {
            const float tau = taus[(n + off) % 5], y = urand() < 0.0f ? -1.0f : 1.0f;
            const float eta = 0.1f + (urand() + 1.0f), bias = (off & 1) ? 1.0f : 0.0f;
            const float *x = buf_random(X, other_off(off, 7), n);
            float *w1 = buf_random(W1, off, n), b1 = urand();
            memcpy(W2.base, W1.base, BUFLEN * sizeof(float));
            float *w2 = buf_at(W2, off), b2 = b1;

            float score1 = NAN;
            int upd1 = k->step(w1, &b1, x, n, y, tau, eta, bias, &score1);

            float score2 = k->dot(w2, x, n) + b2 * bias;
            int upd2 = 0;
            if (y * score2 <= tau) {
                float a = eta * y;
                k->axpy(a, x, w2, n);
                b2 += a * bias;
                upd2 = 1;
            }
            CHECK(upd1 == upd2 && same_float(score1, score2) && same_float(b1, b2) &&
                              same_bits(w1, w2, n),
                          "%s step n=%zu off=%zu differs from dot + axpy (score %.9g vs %.9g, update %d vs %d)",
                          k->name, n, off, score1, score2, upd1, upd2);
            check_canaries(W1, w1, n, "step");
            updates += (size_t)upd1;
            total++;
        }
    /* Both branches were taken many times. */
    ck_assert(updates > total / 5 && updates < total - total / 5);
    buf_free(X);
    buf_free(W1);
    buf_free(W2);
}
END_TEST

/* On integer-valued data every sum is exact, so decisions, scores and updates match scalar
 * bit for bit, over a sequence of steps (a small training run) that includes ties. */
START_TEST(step_matches_scalar_on_integers)
{
    FOR_ISA(isa);
    const pt_kernels *ref = scalar();
    static const float etas[] = {1.0f, 0.5f, 2.0f, 0.25f};
    static const float taus[] = {0.0f, 1.0f, -2.0f, 8.0f};
    buf X = buf_new(), W1 = buf_new(), W2 = buf_new();
    size_t updates = 0, ties = 0, total = 0;
    for (size_t n = 0; n <= MAXN; n++) {
        const size_t off = (n * 3) % MAXOFF, xoff = other_off(off, 8);
        const float eta = etas[n % 4], tau = taus[(n / 4) % 4], bias = (n % 3) ? 1.0f : 0.0f;
        float *w1 = buf_random(W1, off, n), *w2 = buf_at(W2, off);
        for (size_t i = 0; i < n; i++) w1[i] = irand(2);
        memcpy(W2.base, W1.base, BUFLEN * sizeof(float));
        float b1 = irand(3), b2 = b1;
        /* 40 rows: |w| stays under 2 + 40 * 2 * 8, |w.x| under 2^24. */
        for (int t = 0; t < 40; t++) {
            float *x = buf_random(X, xoff, n);
            for (size_t i = 0; i < n; i++) x[i] = irand(8);
            const float y = (t % 3) ? 1.0f : -1.0f;
            float s1, s2;
            int u1 = k->step(w1, &b1, x, n, y, tau, eta, bias, &s1);
            int u2 = ref->step(w2, &b2, x, n, y, tau, eta, bias, &s2);
            CHECK(u1 == u2 && same_float(s1, s2) && same_float(b1, b2) && same_bits(w1, w2, n),
                          "%s step n=%zu t=%d differs from scalar (score %.9g vs %.9g, update %d vs %d)",
                          k->name, n, t, s1, s2, u1, u2);
            updates += (size_t)u1;
            ties += y * s1 == tau;
            total++;
        }
    }
    ck_assert(updates > 0 && updates < total);
    CHECK(ties > 0, "no tie y s == tau was exercised");
    buf_free(X);
    buf_free(W1);
    buf_free(W2);
}
END_TEST

/* step_rows is step over consecutive rows, and dot_rows is dot over them: the same updates, w
 * and b bit for bit (random data, within an ISA), for any row length and row spacing, with and
 * without updates; on integer data step_rows equals scalar's step, so every ISA's epoch is the
 * reference epoch. */
START_TEST(step_rows_equals_steps)
{
    FOR_ISA(isa);
    const pt_kernels *ref = scalar();
    enum { ROWS = 37 };
    static const float taus[] = {0.0f, 0.5f, -1e30f, 2.0f};
    for (int integer = 0; integer <= 1; integer++)
        for (size_t n = 0; n <= MAXN; n += (n < 40 ? 1 : 13)) {
            const size_t ldx = n + (n % 5), off = n % MAXOFF;
            float *X = aligned_alloc(64, ((ROWS * ldx + off + 16) / 16 + 1) * 16 * sizeof(float));
            float *Y = malloc(ROWS * sizeof(float));
            float *w1 = aligned_alloc(64, (n / 16 + 2) * 16 * sizeof(float));
            float *w2 = aligned_alloc(64, (n / 16 + 2) * 16 * sizeof(float));
            ck_assert(X && Y && w1 && w2);
            float *Xo = X + off;
            for (size_t i = 0; i < ROWS * ldx; i++) Xo[i] = integer ? irand(4) : urand();
            for (size_t r = 0; r < ROWS; r++) Y[r] = (r * 7 + n) % 3 ? 1.0f : -1.0f;
            const float tau = taus[n % 4], eta = integer ? 1.0f : 0.3f, bias = n % 2 ? 1.0f : 0.0f;
            for (size_t i = 0; i < n; i++) w1[i] = w2[i] = integer ? irand(2) : urand();
            float b1 = integer ? 1.0f : 0.25f, b2 = b1;
            size_t u1 = k->step_rows(w1, &b1, Xo, ldx, Y, ROWS, n, tau, eta, bias), u2 = 0;
            const pt_kernels *other = integer ? ref : k; /* the one-row-at-a-time side */
            for (size_t r = 0; r < ROWS; r++) {
                float sc;
                u2 += (size_t)other->step(w2, &b2, Xo + r * ldx, n, Y[r], tau, eta, bias, &sc);
            }
            CHECK(u1 == u2 && same_float(b1, b2) && same_bits(w1, w2, n),
                  "%s step_rows n=%zu ldx=%zu %s: %zu updates vs %zu of %s step, b %.9g vs %.9g",
                  k->name, n, ldx, integer ? "integers" : "random", u1, u2, other->name, b1, b2);
            /* dot_rows: each row's dot, bit for bit */
            float outs[ROWS];
            k->dot_rows(w1, Xo, ldx, ROWS, n, outs);
            for (size_t r = 0; r < ROWS; r++) {
                float want = k->dot(w1, Xo + r * ldx, n);
                CHECK(same_float(outs[r], want), "%s dot_rows n=%zu row %zu: %.9g vs dot %.9g", k->name, n, r,
                      outs[r], want);
            }
            free(X);
            free(Y);
            free(w1);
            free(w2);
        }
}
END_TEST

/* ------------------------------------------------------------------ bounds */

/* Each operand ends exactly at an inaccessible page, so any read or write past n faults
 * (masked tails must not touch it). */
typedef struct guarded {
    char *map;
    size_t len;
    float *end; /* first float of the PROT_NONE page */
} guarded;

static guarded guarded_new(void)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    guarded g = {.len = 3 * page};
    g.map = mmap(NULL, g.len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert(g.map != MAP_FAILED);
    ck_assert(mprotect(g.map + 2 * page, page, PROT_NONE) == 0);
    g.end = (float *)(g.map + 2 * page);
    return g;
}

static float *guarded_fill(guarded g, size_t n)
{
    float *p = g.end - n;
    for (size_t i = 0; i < n; i++) p[i] = urand();
    return p;
}

START_TEST(no_access_past_n)
{
    FOR_ISA(isa);
    guarded GA = guarded_new(), GB = guarded_new(), GC = guarded_new();
    for (size_t n = 0; n <= MAXN; n++) {
        float *a = guarded_fill(GA, n), *b = guarded_fill(GB, n), *c = guarded_fill(GC, n), s, bb = 0.0f;
        volatile float sink = k->dot(a, b, n);
        (void)sink;
        k->axpy(0.5f, a, b, n);
        k->axpy2(0.5f, 0.25f, a, b, c, n);
        k->scale_add(0.5f, a, 2.0f, b, c, n);
        k->step(b, &bb, a, n, 1.0f, INFINITY, 1.0f, 1.0f, &s);
    }
    munmap(GA.map, GA.len);
    munmap(GB.map, GB.len);
    munmap(GC.map, GC.len);
}
END_TEST

/* ------------------------------------------------------------------ compact-row kernels */

#include "compact_kernel_checks.h"

START_TEST(compact_widen)
{
    FOR_ISA(isa);
    compact_widen_matches_scalar(k);
    compact_u8_exact_255(k);
}
END_TEST

START_TEST(compact_no_read_past)
{
    FOR_ISA(isa);
    compact_no_read_past_n(k);
}
END_TEST

START_TEST(compact_step_rows)
{
    FOR_ISA(isa);
    compact_step_rows_match(k);
}
END_TEST

START_TEST(compact_dot_axpy)
{
    FOR_ISA(isa);
    compact_dot_axpy_match(k);
}
END_TEST

/* ------------------------------------------------------------------ expansion kernels */

#include "expand_kernel_checks.h"

START_TEST(expand_poly)
{
    FOR_ISA(isa);
    expand_poly_matches_scalar(k);
}
END_TEST

START_TEST(expand_rff)
{
    FOR_ISA(isa);
    expand_rff_matches_scalar(k);
}
END_TEST

START_TEST(expand_cos)
{
    FOR_ISA(isa);
    expand_cos_matches_scalar(k);
}
END_TEST

/* ------------------------------------------------------------------ Gram micro-kernels */

#include "gram_kernel_checks.h"

START_TEST(gram_tile)
{
    FOR_ISA(isa);
    gram_tile_matches_scalar(k);
}
END_TEST

START_TEST(gram_row)
{
    FOR_ISA(isa);
    gram_row_matches_scalar(k);
}
END_TEST

START_TEST(gram_norms)
{
    FOR_ISA(isa);
    gram_norms_match_scalar(k);
}
END_TEST

START_TEST(gram_kfun)
{
    FOR_ISA(isa);
    gram_kfun_matches_scalar(k);
}
END_TEST

START_TEST(gram_exp)
{
    FOR_ISA(isa);
    gram_exp_matches_scalar(k);
}
END_TEST

START_TEST(gram_store)
{
    FOR_ISA(isa);
    gram_store_matches_scalar(k);
}
END_TEST

/* ------------------------------------------------------------------ sparse-row kernels */

#include "sparse_kernel_checks.h"

START_TEST(sparse_dot)
{
    FOR_ISA(isa);
    sparse_dot_matches_scalar(k);
}
END_TEST

START_TEST(sparse_axpy)
{
    FOR_ISA(isa);
    sparse_axpy_matches_scalar(k);
}
END_TEST

START_TEST(sparse_step)
{
    FOR_ISA(isa);
    sparse_step_equals_dot_then_axpy(k);
}
END_TEST

START_TEST(sparse_row_loops)
{
    FOR_ISA(isa);
    sparse_row_loops_match(k);
}
END_TEST

START_TEST(sparse_gemv_t)
{
    FOR_ISA(isa);
    sparse_gemv_t_matches_scalar(k);
}
END_TEST

START_TEST(sparse_dot_many)
{
    FOR_ISA(isa);
    sparse_dot_many_matches_scalar(k);
}
END_TEST

START_TEST(sparse_scatter_dot)
{
    FOR_ISA(isa);
    sparse_scatter_dot_matches_exact(k);
}
END_TEST

START_TEST(sparse_no_access_past)
{
    FOR_ISA(isa);
    sparse_no_access_past_end(k);
}
END_TEST

/* ------------------------------------------------------------------ dispatch */

START_TEST(isa_names_parse)
{
    for (int i = PT_ISA_AUTO; i <= PT_ISA_NEON; i++) {
        pt_isa got = (pt_isa)-1;
        ck_assert_int_eq(pt_isa_parse(pt_isa_name((pt_isa)i), &got), PT_OK);
        ck_assert_int_eq(got, i);
    }
    ck_assert_str_eq(pt_isa_name(PT_ISA_AVX512), "avx512");
    ck_assert_str_eq(pt_isa_name((pt_isa)99), "unknown");
    static const char *bad[] = {"", "AVX2", "sse2", "avx", "avx512f", "neon ", "unknown"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pt_isa got = PT_ISA_SCALAR;
        ck_assert_int_eq(pt_isa_parse(bad[i], &got), PT_ERR_INVALID);
        ck_assert_int_eq(got, PT_ISA_SCALAR); /* untouched */
        ck_assert_msg(strstr(pt_last_error(), "unknown ISA") != NULL, "message: %s", pt_last_error());
    }
    ck_assert_int_eq(pt_isa_parse("sse2", &(pt_isa){0}), PT_ERR_INVALID);
    ck_assert_str_eq(pt_last_error(), "unknown ISA 'sse2' (auto, scalar, avx2, avx512, neon)");
}
END_TEST

START_TEST(tables_complete)
{
    ck_assert(pt_isa_available(PT_ISA_SCALAR));
    ck_assert(pt_isa_available(PT_ISA_AUTO)); /* resolves to the default */
    ck_assert(!pt_isa_available((pt_isa)42));
    int n = 0;
    for (int i = PT_ISA_SCALAR; i <= PT_ISA_NEON; i++) {
        if (!pt_isa_available((pt_isa)i)) continue;
        const pt_kernels *k = table((pt_isa)i);
        ck_assert_int_eq(k->isa, i);
        ck_assert_str_eq(k->name, pt_isa_name((pt_isa)i));
        ck_assert(k->dot && k->axpy && k->step && k->step_rows && k->dot_rows && k->axpy2 && k->scale_add && k->dot_many);
        const pt_gram_kernels *g = k->gram;
        ck_assert(g && g->tile && g->row && g->norms && g->kfun && g->exp && g->store && g->fence);
        ck_assert(g->mr >= 1 && 8 % g->mr == 0 && g->np >= 1);
        sparse_table_complete(k);
        compact_table_complete(k);
        const pt_expand_kernels *x = k->expand;
        ck_assert(x && x->poly_row && x->rff_row && x->cos);
        n++;
    }
    ck_assert_int_ge(n, 1);
    /* auto is the default, and the default is available. */
    pt_isa def = pt_isa_default();
    ck_assert(def != PT_ISA_AUTO && pt_isa_available(def));
    ck_assert_int_eq(table(PT_ISA_AUTO)->isa, def);
    const pt_kernels *k = NULL;
    ck_assert_int_eq(pt_kernels_get((pt_isa)42, &k), PT_ERR_INVALID);
    ck_assert(k == NULL);
}
END_TEST

/* An ISA the CPU or build lacks: PT_ERR_UNSUPPORTED naming it and what there is. */
START_TEST(unavailable_isa_fails)
{
    char have[128] = "";
    for (int i = PT_ISA_SCALAR; i <= PT_ISA_NEON; i++)
        if (pt_isa_available((pt_isa)i))
            snprintf(have + strlen(have), sizeof have - strlen(have), "%s%s", have[0] ? ", " : "",
                     pt_isa_name((pt_isa)i));
    int checked = 0;
    for (int i = PT_ISA_SCALAR; i <= PT_ISA_NEON; i++) {
        if (pt_isa_available((pt_isa)i)) continue;
        const pt_kernels *k = NULL;
        ck_assert_int_eq(pt_kernels_get((pt_isa)i, &k), PT_ERR_UNSUPPORTED);
        ck_assert(k == NULL);
        char want[256];
        snprintf(want, sizeof want, "ISA %s is not available", pt_isa_name((pt_isa)i));
        ck_assert_msg(strncmp(pt_last_error(), want, strlen(want)) == 0, "message: %s", pt_last_error());
        snprintf(want, sizeof want, "(it has: %s)", have);
        ck_assert_msg(strstr(pt_last_error(), want) != NULL, "message: %s", pt_last_error());
        checked++;
    }
#if defined(__x86_64__)
    /* NEON on x86: the CPU lacks it, whatever the build. */
    ck_assert_int_ge(checked, 1);
    const pt_kernels *k = NULL;
    ck_assert_int_eq(pt_kernels_get(PT_ISA_NEON, &k), PT_ERR_UNSUPPORTED);
    char want[256];
    snprintf(want, sizeof want, "ISA neon is not available on this CPU (it has: %s)", have);
    ck_assert_str_eq(pt_last_error(), want);
#endif
}
END_TEST

#if defined(__x86_64__)
/* CPUID + XGETBV agree with gcc's own detection (which also checks OS support). */
START_TEST(detection_matches_builtin)
{
    __builtin_cpu_init();
    const int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    const int avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
                       __builtin_cpu_supports("avx512dq") && avx2;
    /* Available = built and run by the CPU. */
#if defined(PT_HAVE_AVX2)
    const int built2 = 1;
#else
    const int built2 = 0;
#endif
#if defined(PT_HAVE_AVX512)
    const int built512 = 1;
#else
    const int built512 = 0;
#endif
    ck_assert_int_eq(pt_isa_available(PT_ISA_AVX2), built2 && avx2);
    ck_assert_int_eq(pt_isa_available(PT_ISA_AVX512), built512 && avx512);
    ck_assert(!pt_isa_available(PT_ISA_NEON));
    /* The default is the best: AVX-512, then AVX2, then scalar. */
    pt_isa best = pt_isa_available(PT_ISA_AVX512) ? PT_ISA_AVX512
                : pt_isa_available(PT_ISA_AVX2)   ? PT_ISA_AVX2
                                                  : PT_ISA_SCALAR;
    ck_assert_int_eq(pt_isa_choose(NULL), best);
}
END_TEST
#endif

/* Log capture for the forcing tests. */
static char logged[4096];

static void capture_log(pt_log_level level, const char *msg, void *user)
{
    (void)user;
    size_t used = strlen(logged);
    snprintf(logged + used, sizeof logged - used, "[%d] %s\n", (int)level, msg);
}

static pt_isa best_available(void)
{
    static const pt_isa order[] = {PT_ISA_AVX512, PT_ISA_AVX2, PT_ISA_NEON, PT_ISA_SCALAR};
    for (size_t i = 0; i < 4; i++)
        if (pt_isa_available(order[i])) return order[i];
    return PT_ISA_SCALAR;
}

/* What PTRON_ISA does, through the function the cached choice calls. */
START_TEST(choose_from_env_value)
{
    const pt_isa best = best_available();
    logged[0] = '\0';
    pt_set_log(capture_log, NULL);
    ck_assert_int_eq(pt_isa_choose(NULL), best);
    ck_assert_int_eq(pt_isa_choose(""), best);
    ck_assert_int_eq(pt_isa_choose("auto"), best);
    ck_assert_str_eq(logged, "");
    /* Every available ISA can be forced, silently. */
    for (int i = PT_ISA_SCALAR; i <= PT_ISA_NEON; i++)
        if (pt_isa_available((pt_isa)i)) ck_assert_int_eq(pt_isa_choose(pt_isa_name((pt_isa)i)), i);
    ck_assert_str_eq(logged, "");
    /* An unavailable one falls back to the best with a warning. */
    for (int i = PT_ISA_SCALAR; i <= PT_ISA_NEON; i++) {
        if (pt_isa_available((pt_isa)i)) continue;
        logged[0] = '\0';
        ck_assert_int_eq(pt_isa_choose(pt_isa_name((pt_isa)i)), best);
        char want[128];
        snprintf(want, sizeof want, "[%d] PTRON_ISA=%s is not available", PT_LOG_WARN, pt_isa_name((pt_isa)i));
        ck_assert_msg(strncmp(logged, want, strlen(want)) == 0, "logged: %s", logged);
    }
    /* Nonsense too. */
    logged[0] = '\0';
    ck_assert_int_eq(pt_isa_choose("fastest"), best);
    ck_assert_msg(strstr(logged, "PTRON_ISA=fastest is not an ISA") != NULL, "logged: %s", logged);
    pt_set_log(NULL, NULL);
}
END_TEST

static void *get_auto(void *arg)
{
    const pt_kernels *k = NULL;
    if (pt_kernels_get(PT_ISA_AUTO, &k) != PT_OK) k = NULL;
    *(const pt_kernels **)arg = k;
    return NULL;
}

/* Run in a fresh child: set the environment before the first use, then check the cached
 * choice, the debug log, and that threads racing to the first use all get the same table. */
static int forced_child(const char *value, pt_isa want, const char *want_log)
{
    setenv("PTRON_ISA", value, 1);
    setenv("PTRON_ISA_DEBUG", "1", 1);
    logged[0] = '\0';
    pt_set_log(capture_log, NULL);
    pthread_t th[4];
    const pt_kernels *got[4];
    for (int i = 0; i < 4; i++)
        if (pthread_create(&th[i], NULL, get_auto, &got[i]) != 0) return 10;
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < 4; i++)
        if (!got[i] || got[i] != got[0]) return 11;
    if (got[0]->isa != want || pt_isa_default() != want) return 12;
    if (!strstr(logged, want_log)) return 13;
    /* Cached: changing the variable now has no effect. */
    setenv("PTRON_ISA", "scalar", 1);
    if (pt_isa_default() != want) return 14;
    return 0;
}

static void run_forced(const char *value, pt_isa want, const char *want_log)
{
    fflush(NULL);
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) _exit(forced_child(value, want, want_log));
    int st = 0;
    ck_assert(waitpid(pid, &st, 0) == pid);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "PTRON_ISA=%s: child failed with %d (log: %s)",
                  value, WIFEXITED(st) ? WEXITSTATUS(st) : -1, want_log);
}

START_TEST(env_forces_default)
{
    /* The forked child inherits this process's cached choice, so the test is meaningful only
     * when check runs each test in a fresh process (the default, CK_FORK unset). */
    const char *fork_mode = getenv("CK_FORK");
    if (fork_mode && strcmp(fork_mode, "no") == 0) return;
    /* Which ISAs there are, asked in a child so this process stays uninitialised. */
    fflush(NULL);
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        int m = 0;
        for (int i = PT_ISA_SCALAR; i <= PT_ISA_NEON; i++) m |= pt_isa_available((pt_isa)i) << i;
        _exit(m);
    }
    int st = 0;
    ck_assert(waitpid(pid, &st, 0) == pid && WIFEXITED(st));
    const int mask = WEXITSTATUS(st);
    const pt_isa best = (mask & (1 << PT_ISA_AVX512)) ? PT_ISA_AVX512
                      : (mask & (1 << PT_ISA_AVX2))   ? PT_ISA_AVX2
                      : (mask & (1 << PT_ISA_NEON))   ? PT_ISA_NEON
                                                      : PT_ISA_SCALAR;
    char want[128];
    run_forced("scalar", PT_ISA_SCALAR, "ISA scalar chosen");
    snprintf(want, sizeof want, "ISA %s chosen", pt_isa_name(best));
    run_forced("auto", best, want);
    for (int i = PT_ISA_SCALAR; i <= PT_ISA_NEON; i++) {
        char log[128];
        if (mask & (1 << i)) {
            snprintf(log, sizeof log, "ISA %s chosen (CPU runs:", pt_isa_name((pt_isa)i));
            run_forced(pt_isa_name((pt_isa)i), (pt_isa)i, log);
        } else {
            snprintf(log, sizeof log, "PTRON_ISA=%s is not available", pt_isa_name((pt_isa)i));
            run_forced(pt_isa_name((pt_isa)i), best, log);
        }
    }
    run_forced("bogus", best, "PTRON_ISA=bogus is not an ISA");
}
END_TEST

/* ------------------------------------------------------------------ suite */

static Suite *kernels_suite(void)
{
    Suite *s = suite_create("kernels");
    TCase *tc = tcase_create("per_isa");
    tcase_set_timeout(tc, 120);
    /* Loop tests: _i runs over the ISA values; unavailable ones return at once. */
    tcase_add_loop_test(tc, dot_matches_exact, PT_ISA_SCALAR, PT_ISA_NEON + 1);
    tcase_add_loop_test(tc, dot_exact_on_integers, PT_ISA_SCALAR, PT_ISA_NEON + 1);
    tcase_add_loop_test(tc, dot_many_matches_exact, PT_ISA_SCALAR, PT_ISA_NEON + 1);
    tcase_add_loop_test(tc, axpy_bit_exact, PT_ISA_SCALAR, PT_ISA_NEON + 1);
    tcase_add_loop_test(tc, axpy2_bit_exact, PT_ISA_SCALAR, PT_ISA_NEON + 1);
    tcase_add_loop_test(tc, scale_add_bit_exact, PT_ISA_SCALAR, PT_ISA_NEON + 1);
    tcase_add_loop_test(tc, scale_add_in_place, PT_ISA_SCALAR, PT_ISA_NEON + 1);
    tcase_add_loop_test(tc, step_rows_equals_steps, PT_ISA_SCALAR, PT_ISA_NEON + 1);
    tcase_add_loop_test(tc, step_equals_dot_then_axpy, PT_ISA_SCALAR, PT_ISA_NEON + 1);
    tcase_add_loop_test(tc, step_matches_scalar_on_integers, PT_ISA_SCALAR, PT_ISA_NEON + 1);
    tcase_add_loop_test(tc, no_access_past_n, PT_ISA_SCALAR, PT_ISA_NEON + 1);
    tcase_add_loop_test(tc, gram_tile, PT_ISA_SCALAR, PT_ISA_NEON + 1);
    tcase_add_loop_test(tc, gram_row, PT_ISA_SCALAR, PT_ISA_NEON + 1);
    tcase_add_loop_test(tc, gram_norms, PT_ISA_SCALAR, PT_ISA_NEON + 1);
    tcase_add_loop_test(tc, gram_kfun, PT_ISA_SCALAR, PT_ISA_NEON + 1);
    tcase_add_loop_test(tc, gram_exp, PT_ISA_SCALAR, PT_ISA_NEON + 1);
    tcase_add_loop_test(tc, gram_store, PT_ISA_SCALAR, PT_ISA_NEON + 1);
    tcase_add_loop_test(tc, sparse_dot, PT_ISA_SCALAR, PT_ISA_NEON + 1);
    tcase_add_loop_test(tc, sparse_axpy, PT_ISA_SCALAR, PT_ISA_NEON + 1);
    tcase_add_loop_test(tc, sparse_step, PT_ISA_SCALAR, PT_ISA_NEON + 1);
    tcase_add_loop_test(tc, sparse_row_loops, PT_ISA_SCALAR, PT_ISA_NEON + 1);
    tcase_add_loop_test(tc, sparse_gemv_t, PT_ISA_SCALAR, PT_ISA_NEON + 1);
    tcase_add_loop_test(tc, sparse_dot_many, PT_ISA_SCALAR, PT_ISA_NEON + 1);
    tcase_add_loop_test(tc, sparse_scatter_dot, PT_ISA_SCALAR, PT_ISA_NEON + 1);
    tcase_add_loop_test(tc, sparse_no_access_past, PT_ISA_SCALAR, PT_ISA_NEON + 1);
    tcase_add_loop_test(tc, compact_widen, PT_ISA_SCALAR, PT_ISA_NEON + 1);
    tcase_add_loop_test(tc, compact_no_read_past, PT_ISA_SCALAR, PT_ISA_NEON + 1);
    tcase_add_loop_test(tc, compact_step_rows, PT_ISA_SCALAR, PT_ISA_NEON + 1);
    tcase_add_loop_test(tc, compact_dot_axpy, PT_ISA_SCALAR, PT_ISA_NEON + 1);
    tcase_add_loop_test(tc, expand_poly, PT_ISA_SCALAR, PT_ISA_NEON + 1);
    tcase_add_loop_test(tc, expand_rff, PT_ISA_SCALAR, PT_ISA_NEON + 1);
    tcase_add_loop_test(tc, expand_cos, PT_ISA_SCALAR, PT_ISA_NEON + 1);
    suite_add_tcase(s, tc);

    TCase *td = tcase_create("dispatch");
    tcase_add_test(td, isa_names_parse);
    tcase_add_test(td, tables_complete);
    tcase_add_test(td, unavailable_isa_fails);
#if defined(__x86_64__)
    tcase_add_test(td, detection_matches_builtin);
#endif
    tcase_add_test(td, choose_from_env_value);
    tcase_add_test(td, env_forces_default);
    suite_add_tcase(s, td);
    return s;
}

int main(void) { return tu_run_suite(kernels_suite()); }
