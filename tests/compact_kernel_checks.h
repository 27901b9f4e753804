/*
 * The compact-row kernel checks (k->compact, src/kernels/compact_*.c), shared by
 * test_kernels.c and neon_harness.c: each compares the kernels of one ISA with
 * compact_scalar.c's, bit for bit (widening is exact: a shift for bf16, two fused
 * multiply-adds for u8, the same roundings on every ISA).
 *
 *  - widen_bf16, widen_u8: every n from 0 to 257 (whole vectors and tails of every length for
 *    widths 4, 8 and 16, and n = 1), the input at 16 offsets from 64-byte alignment, random
 *    bf16 of every sign and magnitude, random bytes with random divisors (per feature) and
 *    with 255 (pixels / 255); the output is compared with scalar's and its canaries after n
 *    checked. Inputs ending at an inaccessible page catch a read past n (the tails).
 *  - u8 with divisor 255 widens q to the correctly rounded q / 255 for every q (what makes a
 *    u8 file of pixels / 255 hold the float32 values exactly); with divisor m the kernels take
 *    1 / m as rh + rl (ck_m, ck_r).
 *  - step_rows on compact rows equals the same ISA's float32 step_rows on the widened rows
 *    (w, b and the count, bit for bit), for row lengths 1 to 67 and ldx past the row; u8
 *    with a divisor per feature and with one for every feature (255, 3.5, 4 and 1).
 *  - dot and axpy on one compact row (the batch path's) equal the float32 dot and axpy of the
 *    same ISA on the widened row, bit for bit, for n from 0 to 257 at 16 offsets, bf16 and u8
 *    as above; the axpy leaves the canaries after n.
 *
 * Include after kernel_test_util.h and a CHECK(cond, ...) that reports a failure and leaves
 * the check (returns, or aborts the test).
 */
#ifndef PT_COMPACT_KERNEL_CHECKS_H
#define PT_COMPACT_KERNEL_CHECKS_H

#include <math.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kernels/kernels.h"
#include "kernel_test_util.h"

static _Alignas(64) uint16_t ck_h[MAXOFF + MAXN + 16];
static _Alignas(64) uint8_t ck_q[MAXOFF + MAXN + 16];
static _Alignas(64) float ck_m[MAXN + 16], ck_r[MAXN + 16];
static _Alignas(64) float ck_out[MAXN + 32], ck_ref[MAXN + 32];

/* A random finite bf16: the top half of a random float of any exponent but all ones. */
static inline uint16_t ck_bf16(void)
{
    uint16_t h;
    do h = (uint16_t)(rng_next() >> 48);
    while ((h & 0x7f80u) == 0x7f80u);
    return h;
}

/* Divisors m: random in [0.01, 300) per feature, or one value for all; ck_m and ck_r get their
 * reciprocals rh and rl as the kernels take them (1 / m = rh + rl, data/data.h). */
static inline void ck_divisors(size_t n, float one)
{
    for (size_t i = 0; i < n; i++) {
        float m = one > 0.0f ? one : 0.01f + 150.0f * (urand() + 1.0f);
        ck_m[i] = 1.0f / m;
        ck_r[i] = (float)(1.0 / (double)m - (double)ck_m[i]);
    }
}

/* The n floats widened by k equal scalar's, and the 16 canaries after them are intact (a
 * macro: CHECK leaves the calling check). */
#define CK_SAME_OUT(k, n, what, off)                                                               \
    do {                                                                                           \
        for (size_t i_ = (n); i_ < (n) + 16; i_++)                                                 \
            CHECK(ck_out[i_] == CANARY, "%s %s n=%zu off=%zu wrote past n (index %zu)",            \
                  (k)->name, what, (size_t)(n), (size_t)(off), i_);                                \
        CHECK(same_bits(ck_out, ck_ref, (n)), "%s %s n=%zu off=%zu differs from scalar",           \
              (k)->name, what, (size_t)(n), (size_t)(off));                                        \
    } while (0)

static void compact_widen_matches_scalar(const pt_kernels *k)
{
    const pt_compact_kernels *c = k->compact, *s = pt_kernels_scalar.compact;
    for (size_t n = 0; n <= MAXN; n++)
        for (size_t off = 0; off < MAXOFF; off += n < 40 ? 1 : 5) {
            for (size_t i = 0; i < n; i++) {
                ck_h[off + i] = ck_bf16();
                ck_q[off + i] = (uint8_t)(rng_next() >> 56);
            }
            for (size_t i = 0; i < n + 16; i++) ck_out[i] = ck_ref[i] = CANARY;
            s->widen_bf16(ck_h + off, ck_ref, n);
            c->widen_bf16(ck_h + off, ck_out, n);
            CK_SAME_OUT(k, n, "widen_bf16", off);
            for (int pass = 0; pass < 2; pass++) {
                ck_divisors(n, pass ? 255.0f : 0.0f);
                for (size_t i = 0; i < n + 16; i++) ck_out[i] = ck_ref[i] = CANARY;
                s->widen_u8(ck_q + off, ck_m, ck_r, ck_ref, n);
                c->widen_u8(ck_q + off, ck_m, ck_r, ck_out, n);
                CK_SAME_OUT(k, n, pass ? "widen_u8 (255)" : "widen_u8", off);
            }
        }
}

/* Every q in 0..255 with divisor 255 widens to the float nearest q / 255. */
static void compact_u8_exact_255(const pt_kernels *k)
{
    uint8_t q[256];
    for (int i = 0; i < 256; i++) q[i] = (uint8_t)i;
    static float m[256], r[256], out[256]; /* 1 / 255 as rh + rl */
    for (int i = 0; i < 256; i++) {
        m[i] = 1.0f / 255.0f;
        r[i] = (float)(1.0 / 255.0 - (double)m[i]);
    }
    k->compact->widen_u8(q, m, r, out, 256);
    for (int i = 0; i < 256; i++)
        CHECK(out[i] == (float)((double)i / 255.0), "%s: u8 %d / 255 widened to %.9g, not %.9g",
              k->name, i, (double)out[i], (double)i / 255.0);
}

/* Inputs that end at an inaccessible page: a read past n faults. */
static void compact_no_read_past_n(const pt_kernels *k)
{
    long page = sysconf(_SC_PAGESIZE);
    char *map = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                     -1, 0);
    CHECK(map != MAP_FAILED, "mmap failed");
    CHECK(mprotect(map + page, (size_t)page, PROT_NONE) == 0, "mprotect failed");
    memset(map, 0, (size_t)page);
    ck_divisors(MAXN, 0.0f);
    for (size_t n = 0; n <= 40; n++) {
        const uint16_t *h = (const uint16_t *)(const void *)(map + page) - n;
        const uint8_t *q = (const uint8_t *)(map + page) - n;
        k->compact->widen_bf16(h, ck_out, n);
        k->compact->widen_u8(q, ck_m, ck_r, ck_out, n);
    }
    munmap(map, 2 * (size_t)page);
}

/* step_rows on compact rows is the float32 step_rows on their widened copy. */
static void compact_step_rows_match(const pt_kernels *k)
{
    enum { ROWS = 24, LD = 80 };
    static uint16_t H[ROWS * LD];
    static uint8_t Q[ROWS * LD];
    static float X[ROWS * LD], Y[ROWS], w1[LD], w2[LD], buf[LD];
    for (size_t n = 1; n <= 67; n += n < 20 ? 1 : 7)
        for (int t = 0; t < 2; t++) {
            pt_dtype dt = t ? PT_DTYPE_U8 : PT_DTYPE_BF16;
            /* u8: a divisor per feature, or one for all (the kernels' broadcast paths): 255,
             * another, a power of two (an exact reciprocal), 1 */
            static const float one[5] = {0.0f, 255.0f, 3.5f, 4.0f, 1.0f};
            ck_divisors(LD, t ? one[n % 5] : 0.0f);
            for (size_t i = 0; i < ROWS * LD; i++) {
                /* small values, so that margins and updates both happen */
                H[i] = (uint16_t)(0x3c00u + (rng_next() >> 57)) | (rng_next() & 1 ? 0x8000u : 0);
                Q[i] = (uint8_t)(rng_next() >> 56);
            }
            for (size_t r = 0; r < ROWS; r++) {
                if (t) k->compact->widen_u8(Q + r * LD, ck_m, ck_r, X + r * LD, n);
                else k->compact->widen_bf16(H + r * LD, X + r * LD, n);
                Y[r] = rng_next() & 1 ? 1.0f : -1.0f;
            }
            for (size_t j = 0; j < LD; j++) w1[j] = w2[j] = t ? 0.0f : 0.01f * urand();
            float b1 = 0.0f, b2 = 0.0f;
            size_t u1 = 0, u2 = 0;
            for (int rep = 0; rep < 3; rep++) {
                u1 += k->compact->step_rows(w1, &b1, t ? (const void *)Q : (const void *)H, LD, dt,
                                            ck_m, ck_r, Y, ROWS, n, 0.5f, 0.25f, 1.0f, buf);
                u2 += k->step_rows(w2, &b2, X, LD, Y, ROWS, n, 0.5f, 0.25f, 1.0f);
            }
            CHECK(u1 == u2 && u1 > 0, "%s compact step_rows %s n=%zu: %zu updates, float32 %zu",
                  k->name, t ? "u8" : "bf16", n, u1, u2);
            CHECK(same_bits(w1, w2, n) && same_float(b1, b2),
                  "%s compact step_rows %s n=%zu: w differs from float32's", k->name,
                  t ? "u8" : "bf16", n);
        }
}

/* The batch path's compact dot and axpy are the same ISA's float32 dot and axpy on the widened
 * row, bit for bit, for every n from 0 to 257 at 16 offsets of the row; the axpy writes nothing
 * past n. */
static void compact_dot_axpy_match(const pt_kernels *k)
{
    static _Alignas(64) float w[MAXN + 16], y1[MAXN + 16], y2[MAXN + 16], buf[MAXN + 16];
    static const float one[5] = {0.0f, 255.0f, 3.5f, 4.0f, 1.0f};
    const pt_compact_kernels *c = k->compact;
    for (size_t n = 0; n <= MAXN; n++)
        for (size_t off = 0; off < MAXOFF; off += n < 40 ? 1 : 5)
            for (int t = 0; t < 2; t++) {
                const pt_dtype dt = t ? PT_DTYPE_U8 : PT_DTYPE_BF16;
                /* u8: a divisor per feature, or one for all (each broadcast form) */
                const float m1 = t ? one[(n + off) % 5] : 0.0f;
                ck_divisors(n + 1, m1);
                const bool single = t && m1 > 0.0f;
                for (size_t i = 0; i < n; i++) {
                    ck_h[off + i] = (uint16_t)(0x3c00u + (rng_next() >> 57)) |
                                    (rng_next() & 1 ? 0x8000u : 0);
                    ck_q[off + i] = (uint8_t)(rng_next() >> 56);
                    w[i] = urand();
                    y1[i] = y2[i] = urand();
                }
                for (size_t i = n; i < n + 16; i++) y1[i] = y2[i] = CANARY;
                const void *x = t ? (const void *)(ck_q + off) : (const void *)(ck_h + off);
                if (t) c->widen_u8(ck_q + off, ck_m, ck_r, ck_ref, n);
                else c->widen_bf16(ck_h + off, ck_ref, n);
                const float d1 = c->dot(w, x, dt, ck_m, ck_r, single, n, buf);
                const float d2 = k->dot(w, ck_ref, n);
                CHECK(same_float(d1, d2), "%s compact dot %s n=%zu off=%zu: %.9g, float32 %.9g",
                      k->name, t ? "u8" : "bf16", n, off, (double)d1, (double)d2);
                const float a = urand();
                c->axpy(a, x, dt, ck_m, ck_r, single, y1, n, buf);
                k->axpy(a, ck_ref, y2, n);
                CHECK(same_bits(y1, y2, n + 16), "%s compact axpy %s n=%zu off=%zu differs from "
                      "float32's or wrote past n", k->name, t ? "u8" : "bf16", n, off);
            }
}

static void compact_table_complete(const pt_kernels *k)
{
    const pt_compact_kernels *c = k->compact;
    CHECK(c && c->widen_bf16 && c->widen_u8 && c->step_rows && c->dot && c->axpy,
          "%s: NULL compact entry", k->name);
}

#endif /* PT_COMPACT_KERNEL_CHECKS_H */
