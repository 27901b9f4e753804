/*
 * The kernel checks of test_kernels.c for aarch64, without the check library: built by
 * scripts/test-neon with aarch64-linux-gnu-gcc -static from src/kernels/ (scalar, neon, their
 * Gram and expansion kernels, dispatch) and src/common/error.c only, and run under
 * qemu-aarch64. Prints "N passed, N failed" and exits non-zero on a failure.
 *
 * Tolerances (see test_kernels.c for the argument): dot within 1.01 n 2^-24 sum |a_i b_i| of
 * the exact sum; axpy, axpy2, scale_add bit-exact vs scalar (separate multiply and add, no
 * FMA, under -ffp-contract=off); step bit-exact vs scalar on integer-valued data, and equal
 * to dot + axpy bit for bit within an ISA. Reads and writes past n are caught by canaries and
 * by operands that end at an inaccessible page. The Gram micro-kernels: bit-exact vs scalar
 * (gram_kernel_checks.h, shared with test_kernels.c). The sparse-row kernels: vs scalar as
 * sparse_kernel_checks.h states (shared with test_kernels.c).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/common.h"
#include "kernels/kernels.h"
#include "kernel_test_util.h"

static int passed, failed;
static int case_failed; /* the current case already reported a failure */

/* Report the first failure of a case and leave it. */
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "FAIL %s:%d: ", __func__, __LINE__);                                   \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            case_failed = 1;                                                                       \
            return;                                                                                \
        }                                                                                          \
    } while (0)

static void run_case(const char *name, const pt_kernels *k, void (*fn)(const pt_kernels *))
{
    case_failed = 0;
    fn(k);
    if (case_failed) failed++;
    else passed++;
    printf("%-4s %s%s%s\n", case_failed ? "FAIL" : "ok", name, k ? " " : "", k ? k->name : "");
}

/* ------------------------------------------------------------------ helpers */

/* Static 64-byte aligned buffers; data with offset o starts at [16 + o]. */
static _Alignas(64) float bufs[8][BUFLEN];

static float *at(int b, size_t off) { return bufs[b] + 16 + off; }

/* Canaries everywhere in buffer b, random floats in [off, off + n). */
static float *fill(int b, size_t off, size_t n)
{
    for (size_t i = 0; i < BUFLEN; i++) bufs[b][i] = CANARY;
    float *p = at(b, off);
    for (size_t i = 0; i < n; i++) p[i] = urand();
    return p;
}

static void copy(int to, int from) { memcpy(bufs[to], bufs[from], sizeof bufs[0]); }

/* Index of the first canary outside [p, p + n) that changed, or -1. */
static long canary_broken(int b, const float *p, size_t n)
{
    for (size_t i = 0; i < BUFLEN; i++) {
        const float *q = bufs[b] + i;
        if ((q < p || q >= p + n) && *q != CANARY) return (long)(q - p);
    }
    return -1;
}

static const pt_kernels *scalar(void)
{
    const pt_kernels *k = NULL;
    return pt_kernels_get(PT_ISA_SCALAR, &k) == PT_OK ? k : NULL;
}

/* ------------------------------------------------------------------ kernels */

static void dot_matches_exact(const pt_kernels *k)
{
    const pt_kernels *ref = scalar();
    for (size_t n = 0; n <= MAXN; n++)
        for (size_t off = 0; off < MAXOFF; off++) {
            const float *a = fill(0, off, n), *b = fill(1, other_off(off, 1), n);
            double exact = 0.0, mag = 0.0;
            for (size_t i = 0; i < n; i++) {
                exact += (double)a[i] * b[i];
                mag += fabs((double)a[i] * b[i]);
            }
            const double tol = 1.01 * (double)n * 0x1p-24 * mag;
            float got = k->dot(a, b, n), want = ref->dot(a, b, n);
            CHECK(fabs(got - exact) <= tol, "%s dot n=%zu off=%zu: %.9g vs exact %.9g", k->name, n, off,
                  got, exact);
            CHECK(fabs(want - exact) <= tol, "scalar dot n=%zu: %.9g vs exact %.9g", n, want, exact);
        }
}

static void dot_exact_on_integers(const pt_kernels *k)
{
    for (size_t n = 0; n <= MAXN; n++) {
        float *a = fill(0, n % MAXOFF, n), *b = fill(1, (n * 7) % MAXOFF, n);
        double exact = 0.0;
        for (size_t i = 0; i < n; i++) {
            a[i] = irand(100);
            b[i] = irand(100);
            exact += (double)a[i] * b[i];
        }
        CHECK(k->dot(a, b, n) == (float)exact, "%s dot n=%zu: %.9g vs %.9g", k->name, n, k->dot(a, b, n),
              exact);
    }
}

static void axpy_bit_exact(const pt_kernels *k)
{
    const pt_kernels *ref = scalar();
    for (size_t n = 0; n <= MAXN; n++)
        for (size_t off = 0; off < MAXOFF; off++) {
            const float alpha = urand() * 3.0f;
            const float *x = fill(0, other_off(off, 2), n);
            float *y = fill(1, off, n), *r = at(2, off);
            copy(2, 1);
            k->axpy(alpha, x, y, n);
            ref->axpy(alpha, x, r, n);
            CHECK(same_bits(y, r, n), "%s axpy n=%zu off=%zu differs from scalar", k->name, n, off);
            CHECK(canary_broken(1, y, n) < 0, "%s axpy n=%zu wrote at %ld", k->name, n, canary_broken(1, y, n));
        }
}

static void axpy2_bit_exact(const pt_kernels *k)
{
    const pt_kernels *ref = scalar();
    for (size_t n = 0; n <= MAXN; n++)
        for (size_t off = 0; off < MAXOFF; off++) {
            const float a = urand(), c = urand() * 1000.0f;
            const size_t uoff = other_off(off, 4);
            const float *x = fill(0, other_off(off, 3), n);
            float *w = fill(1, off, n), *u = fill(2, uoff, n);
            copy(3, 1);
            copy(4, 2);
            float *rw = at(3, off), *ru = at(4, uoff);
            k->axpy2(a, c, x, w, u, n);
            ref->axpy2(a, c, x, rw, ru, n);
            CHECK(same_bits(w, rw, n) && same_bits(u, ru, n), "%s axpy2 n=%zu off=%zu differs", k->name, n, off);
            CHECK(canary_broken(1, w, n) < 0 && canary_broken(2, u, n) < 0, "%s axpy2 n=%zu wrote past n",
                  k->name, n);
        }
}

static void scale_add_bit_exact(const pt_kernels *k)
{
    const pt_kernels *ref = scalar();
    for (size_t n = 0; n <= MAXN; n++)
        for (size_t off = 0; off < MAXOFF; off++) {
            const float a = urand(), c = urand() / 7.0f;
            const float *x = fill(0, other_off(off, 5), n), *y = fill(1, other_off(off, 6), n);
            float *o = fill(2, off, n), *r = fill(3, off, n);
            k->scale_add(a, x, c, y, o, n);
            ref->scale_add(a, x, c, y, r, n);
            CHECK(same_bits(o, r, n), "%s scale_add n=%zu off=%zu differs", k->name, n, off);
            CHECK(canary_broken(2, o, n) < 0, "%s scale_add n=%zu wrote past n", k->name, n);
        }
    /* In place, as the averaging call does (out == x). */
    for (size_t n = 0; n <= MAXN; n++) {
        const size_t off = n % MAXOFF;
        float *w = fill(0, off, n), *r = at(2, off);
        const float *u = fill(1, (off + 5) % MAXOFF, n);
        copy(2, 0);
        const float c = -1.0f / (float)(n + 3);
        k->scale_add(1.0f, w, c, u, w, n);
        ref->scale_add(1.0f, r, c, u, r, n);
        CHECK(same_bits(w, r, n), "%s scale_add in place n=%zu differs", k->name, n);
    }
}

static void step_equals_dot_then_axpy(const pt_kernels *k)
{
    static const float taus[] = {0.0f, 0.25f, -0.25f, INFINITY, -INFINITY};
    size_t updates = 0, total = 0;
    for (size_t n = 0; n <= MAXN; n++)
        for (size_t off = 0; off < MAXOFF; off++) {
            const float tau = taus[(n + off) % 5], y = urand() < 0.0f ? -1.0f : 1.0f;
            const float eta = 0.1f + (urand() + 1.0f), bias = (off & 1) ? 1.0f : 0.0f;
            const float *x = fill(0, other_off(off, 7), n);
            float *w1 = fill(1, off, n), b1 = urand();
            copy(2, 1);
            float *w2 = at(2, off), b2 = b1, s1 = NAN;
            int u1 = k->step(w1, &b1, x, n, y, tau, eta, bias, &s1);
            float s2 = k->dot(w2, x, n) + b2 * bias;
            int u2 = 0;
            if (y * s2 <= tau) {
                float a = eta * y;
                k->axpy(a, x, w2, n);
                b2 += a * bias;
                u2 = 1;
            }
            CHECK(u1 == u2 && same_float(s1, s2) && same_float(b1, b2) && same_bits(w1, w2, n),
                  "%s step n=%zu off=%zu differs from dot + axpy", k->name, n, off);
            CHECK(canary_broken(1, w1, n) < 0, "%s step n=%zu wrote past n", k->name, n);
            updates += (size_t)u1;
            total++;
        }
    CHECK(updates > total / 5 && updates < total - total / 5, "updates %zu of %zu", updates, total);
}

static void step_matches_scalar_on_integers(const pt_kernels *k)
{
    const pt_kernels *ref = scalar();
    static const float etas[] = {1.0f, 0.5f, 2.0f, 0.25f};
    static const float taus[] = {0.0f, 1.0f, -2.0f, 8.0f};
    size_t updates = 0, ties = 0, total = 0;
    for (size_t n = 0; n <= MAXN; n++) {
        const size_t off = (n * 3) % MAXOFF, xoff = other_off(off, 8);
        const float eta = etas[n % 4], tau = taus[(n / 4) % 4], bias = (n % 3) ? 1.0f : 0.0f;
        float *w1 = fill(1, off, n), *w2 = at(2, off);
        for (size_t i = 0; i < n; i++) w1[i] = irand(2);
        copy(2, 1);
        float b1 = irand(3), b2 = b1;
        for (int t = 0; t < 40; t++) {
            float *x = fill(0, xoff, n);
            for (size_t i = 0; i < n; i++) x[i] = irand(8);
            const float y = (t % 3) ? 1.0f : -1.0f;
            float s1, s2;
            int u1 = k->step(w1, &b1, x, n, y, tau, eta, bias, &s1);
            int u2 = ref->step(w2, &b2, x, n, y, tau, eta, bias, &s2);
            CHECK(u1 == u2 && same_float(s1, s2) && same_float(b1, b2) && same_bits(w1, w2, n),
                  "%s step n=%zu t=%d differs from scalar (score %.9g vs %.9g)", k->name, n, t, s1, s2);
            updates += (size_t)u1;
            ties += y * s1 == tau;
            total++;
        }
    }
    CHECK(updates > 0 && updates < total && ties > 0, "updates %zu ties %zu of %zu", updates, ties, total);
}

/* step_rows is step over consecutive rows (bit for bit within the ISA on random data; equal to
 * scalar's step on integer data), as in tests/test_kernels.c. */
static void step_rows_equals_steps(const pt_kernels *k)
{
    enum { ROWS = 37, LD = MAXN + 3 };
    static float X[ROWS * LD], Y[ROWS], w1[MAXN + 1], w2[MAXN + 1];
    static const float taus[] = {0.0f, 0.5f, -1e30f, 2.0f};
    const pt_kernels *ref = scalar();
    for (int integer = 0; integer <= 1; integer++)
        for (size_t n = 0; n <= MAXN; n += (n < 40 ? 1 : 13)) {
            const size_t ldx = n + (n % 5);
            for (size_t i = 0; i < ROWS * ldx; i++) X[i] = integer ? irand(4) : urand();
            for (size_t r = 0; r < ROWS; r++) Y[r] = (r * 7 + n) % 3 ? 1.0f : -1.0f;
            const float tau = taus[n % 4], eta = integer ? 1.0f : 0.3f, bias = n % 2 ? 1.0f : 0.0f;
            for (size_t i = 0; i < n; i++) w1[i] = w2[i] = integer ? irand(2) : urand();
            float b1 = integer ? 1.0f : 0.25f, b2 = b1;
            size_t u1 = k->step_rows(w1, &b1, X, ldx, Y, ROWS, n, tau, eta, bias), u2 = 0;
            const pt_kernels *other = integer ? ref : k;
            for (size_t r = 0; r < ROWS; r++) {
                float sc;
                u2 += (size_t)other->step(w2, &b2, X + r * ldx, n, Y[r], tau, eta, bias, &sc);
            }
            CHECK(u1 == u2 && same_float(b1, b2) && same_bits(w1, w2, n),
                  "%s step_rows n=%zu %s: %zu updates vs %zu", k->name, n, integer ? "integers" : "random", u1, u2);
            /* dot_rows: each row's dot, bit for bit */
            float outs[ROWS];
            k->dot_rows(w1, X, ldx, ROWS, n, outs);
            for (size_t r = 0; r < ROWS; r++) {
                float want = k->dot(w1, X + r * ldx, n);
                CHECK(same_float(outs[r], want), "%s dot_rows n=%zu row %zu: %.9g vs dot %.9g", k->name, n, r,
                      outs[r], want);
            }
        }
}

/* Operands that end at a PROT_NONE page: any access past n faults (and fails the run). */
static float *guarded_end(void)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    char *m = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED || mprotect(m + 2 * page, page, PROT_NONE) != 0) return NULL;
    return (float *)(m + 2 * page);
}

static void no_access_past_n(const pt_kernels *k)
{
    static float *ends[3];
    for (int j = 0; j < 3; j++)
        if (!ends[j]) ends[j] = guarded_end();
    CHECK(ends[0] && ends[1] && ends[2], "mmap failed");
    for (size_t n = 0; n <= MAXN; n++) {
        float *a = ends[0] - n, *b = ends[1] - n, *c = ends[2] - n, s, bb = 0.0f;
        for (size_t i = 0; i < n; i++) a[i] = b[i] = c[i] = urand();
        volatile float sink = k->dot(a, b, n);
        (void)sink;
        k->axpy(0.5f, a, b, n);
        k->axpy2(0.5f, 0.25f, a, b, c, n);
        k->scale_add(0.5f, a, 2.0f, b, c, n);
        k->step(b, &bb, a, n, 1.0f, INFINITY, 1.0f, 1.0f, &s);
    }
}

/* ------------------------------------------------------------------ Gram micro-kernels */

#include "gram_kernel_checks.h"

/* ------------------------------------------------------------------ sparse-row kernels */

#include "sparse_kernel_checks.h"

/* ------------------------------------------------------------------ expansion kernels */

#include "expand_kernel_checks.h"

/* ------------------------------------------------------------------ compact-row kernels */

#include "compact_kernel_checks.h"

static void compact_widen_all(const pt_kernels *k)
{
    compact_widen_matches_scalar(k);
    if (!case_failed) compact_u8_exact_255(k);
}

/* ------------------------------------------------------------------ dispatch */

static char logged[4096];

static void capture_log(pt_log_level level, const char *msg, void *user)
{
    (void)user;
    size_t used = strlen(logged);
    snprintf(logged + used, sizeof logged - used, "[%d] %s\n", (int)level, msg);
}

/* Runs first, before anything else touches dispatch: PTRON_ISA=scalar in the environment
 * forces the default, PTRON_ISA_DEBUG logs it, and the choice is cached. */
static void env_forces_default(const pt_kernels *unused)
{
    (void)unused;
    setenv("PTRON_ISA", "scalar", 1);
    setenv("PTRON_ISA_DEBUG", "1", 1);
    logged[0] = '\0';
    pt_set_log(capture_log, NULL);
    pt_isa def = pt_isa_default();
    pt_set_log(NULL, NULL);
    unsetenv("PTRON_ISA");
    unsetenv("PTRON_ISA_DEBUG");
    CHECK(def == PT_ISA_SCALAR, "default %s", pt_isa_name(def));
    CHECK(strstr(logged, "ISA scalar chosen (CPU runs: scalar, neon; built: scalar, neon; PTRON_ISA=scalar)"),
          "logged: %s", logged);
    const pt_kernels *k = NULL;
    CHECK(pt_kernels_get(PT_ISA_AUTO, &k) == PT_OK && k->isa == PT_ISA_SCALAR, "auto table");
}

static void neon_detected(const pt_kernels *unused)
{
    (void)unused;
    CHECK(pt_isa_available(PT_ISA_NEON), "NEON not available");
    CHECK(pt_isa_available(PT_ISA_SCALAR) && pt_isa_available(PT_ISA_AUTO), "scalar/auto");
    CHECK(!pt_isa_available(PT_ISA_AVX2) && !pt_isa_available(PT_ISA_AVX512), "x86 ISA on aarch64");
    CHECK(pt_isa_choose(NULL) == PT_ISA_NEON && pt_isa_choose("auto") == PT_ISA_NEON, "best is not neon");
    CHECK(pt_isa_choose("scalar") == PT_ISA_SCALAR, "choose scalar");
    const pt_kernels *k = NULL;
    CHECK(pt_kernels_get(PT_ISA_NEON, &k) == PT_OK && k->isa == PT_ISA_NEON && !strcmp(k->name, "neon"),
          "neon table");
    CHECK(k->dot && k->axpy && k->step && k->axpy2 && k->scale_add, "NULL entry");
    const pt_gram_kernels *g = k->gram;
    CHECK(g && g->tile && g->row && g->norms && g->kfun && g->exp && g->store && g->fence, "NULL Gram entry");
    sparse_table_complete(k);
    compact_table_complete(k);
    const pt_expand_kernels *x = k->expand;
    CHECK(x && x->poly_row && x->rff_row && x->cos, "NULL expansion entry");
}

static void unavailable_isa_fails(const pt_kernels *unused)
{
    (void)unused;
    const pt_kernels *k = NULL;
    CHECK(pt_kernels_get(PT_ISA_AVX512, &k) == PT_ERR_UNSUPPORTED && k == NULL, "avx512 accepted");
    CHECK(!strcmp(pt_last_error(), "ISA avx512 is not available on this CPU (it has: scalar, neon)"),
          "message: %s", pt_last_error());
    CHECK(pt_kernels_get(PT_ISA_AVX2, &k) == PT_ERR_UNSUPPORTED, "avx2 accepted");
    CHECK(pt_kernels_get((pt_isa)42, &k) == PT_ERR_INVALID, "42 accepted");
    /* Forcing an unavailable or unknown ISA: the best, with a warning. */
    logged[0] = '\0';
    pt_set_log(capture_log, NULL);
    pt_isa got = pt_isa_choose("avx2"), got2 = pt_isa_choose("fastest");
    pt_set_log(NULL, NULL);
    CHECK(got == PT_ISA_NEON && got2 == PT_ISA_NEON, "fallback %s %s", pt_isa_name(got), pt_isa_name(got2));
    CHECK(strstr(logged, "[2] PTRON_ISA=avx2 is not available on this CPU (it has: scalar, neon); using neon"),
          "logged: %s", logged);
    CHECK(strstr(logged, "[2] PTRON_ISA=fastest is not an ISA"), "logged: %s", logged);
}

static void isa_names_parse(const pt_kernels *unused)
{
    (void)unused;
    for (int i = PT_ISA_AUTO; i <= PT_ISA_NEON; i++) {
        pt_isa got = (pt_isa)-1;
        CHECK(pt_isa_parse(pt_isa_name((pt_isa)i), &got) == PT_OK && got == (pt_isa)i, "parse %d", i);
    }
    pt_isa got = PT_ISA_SCALAR;
    CHECK(pt_isa_parse("NEON", &got) == PT_ERR_INVALID && got == PT_ISA_SCALAR, "NEON accepted");
    CHECK(!strcmp(pt_last_error(), "unknown ISA 'NEON' (auto, scalar, avx2, avx512, neon)"), "message: %s",
          pt_last_error());
}

int main(void)
{
    /* Dispatch first: the environment is read once, at the first use. */
    run_case("env_forces_default", NULL, env_forces_default);
    run_case("neon_detected", NULL, neon_detected);
    run_case("unavailable_isa_fails", NULL, unavailable_isa_fails);
    run_case("isa_names_parse", NULL, isa_names_parse);

    static const struct {
        const char *name;
        void (*fn)(const pt_kernels *);
    } cases[] = {
        {"dot_matches_exact", dot_matches_exact},
        {"dot_exact_on_integers", dot_exact_on_integers},
        {"axpy_bit_exact", axpy_bit_exact},
        {"axpy2_bit_exact", axpy2_bit_exact},
        {"scale_add_bit_exact", scale_add_bit_exact},
        {"step_equals_dot_then_axpy", step_equals_dot_then_axpy},
        {"step_matches_scalar_on_integers", step_matches_scalar_on_integers},
        {"step_rows_equals_steps", step_rows_equals_steps},
        {"no_access_past_n", no_access_past_n},
        {"compact_widen", compact_widen_all},
        {"compact_no_read_past_n", compact_no_read_past_n},
        {"compact_step_rows", compact_step_rows_match},
        {"compact_dot_axpy", compact_dot_axpy_match},
        {"gram_tile_matches_scalar", gram_tile_matches_scalar},
        {"gram_row_matches_scalar", gram_row_matches_scalar},
        {"gram_norms_match_scalar", gram_norms_match_scalar},
        {"gram_kfun_matches_scalar", gram_kfun_matches_scalar},
        {"gram_exp_matches_scalar", gram_exp_matches_scalar},
        {"gram_store_matches_scalar", gram_store_matches_scalar},
        {"sparse_dot_matches_scalar", sparse_dot_matches_scalar},
        {"sparse_axpy_matches_scalar", sparse_axpy_matches_scalar},
        {"sparse_step_equals_dot_then_axpy", sparse_step_equals_dot_then_axpy},
        {"sparse_row_loops_match", sparse_row_loops_match},
        {"sparse_gemv_t_matches_scalar", sparse_gemv_t_matches_scalar},
        {"sparse_dot_many_matches_scalar", sparse_dot_many_matches_scalar},
        {"sparse_scatter_dot_matches_exact", sparse_scatter_dot_matches_exact},
        {"sparse_no_access_past_end", sparse_no_access_past_end},
        {"expand_poly_matches_scalar", expand_poly_matches_scalar},
        {"expand_rff_matches_scalar", expand_rff_matches_scalar},
        {"expand_cos_matches_scalar", expand_cos_matches_scalar},
    };
    /* Every ISA this build and CPU run (scalar and neon here). */
    for (int isa = PT_ISA_SCALAR; isa <= PT_ISA_NEON; isa++) {
        const pt_kernels *k = NULL;
        if (!pt_isa_available((pt_isa)isa) || pt_kernels_get((pt_isa)isa, &k) != PT_OK) continue;
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) run_case(cases[c].name, k, cases[c].fn);
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
