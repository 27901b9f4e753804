/*
 * The SIMD table's kernels in L1: dot, axpy and the fused online step, for every ISA this
 * machine runs, d = 16 .. 4096. Figures: GFLOP/s, GB/s of operand traffic, and the speedup
 * over the scalar table at the same d (measured earlier in the same run). Then the sparse-row
 * kernels (below).
 */
#include <float.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "bench.h"

enum { OP_DOT, OP_AXPY, OP_STEP, NOPS };
static const char *const op_names[NOPS] = {"dot", "axpy", "step"};
/* FLOPs and bytes per element: dot reads a, b; axpy reads x, y and writes y; the step (always
 * updating here) is a dot and an axpy over the same x and w. */
static const double op_flops[NOPS] = {2, 2, 4};
static const double op_bytes[NOPS] = {8, 12, 12};

typedef struct kern_case {
    int op;
    pt_isa isa;
} kern_case;

static kern_case cases[NOPS * 4];

static void register_sparse(const pt_isa *isas, int nisa);

/* Calls per pass through the shim's loop: the short kernels take a few nanoseconds. */
#define BATCH 64

static void bm_kernel(bs_state *st, const void *arg)
{
    const kern_case *c = arg;
    const size_t d = (size_t)bs_range(st, 0);
    const pt_kernels *k;
    pt_status s = pt_kernels_get(c->isa, &k);
    if (s != PT_OK) {
        while (bs_keep_running(st)) {}
        bt_skip(st, s, "pt_kernels_get");
        return;
    }
    float *a = bt_alloc_touched(d * sizeof(float)), *b = bt_alloc_touched(d * sizeof(float));
    if (!a || !b) {
        while (bs_keep_running(st)) {}
        bs_skip_with_error(st, "out of memory");
        free(a);
        free(b);
        return;
    }
    for (size_t i = 0; i < d; i++) {
        a[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
        b[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;
    }
    float bias = 0.0f, score;
    double t0 = bt_now();
    switch (c->op) {
    case OP_DOT:
        while (bs_keep_running_batch(st, BATCH))
            for (int r = 0; r < BATCH; r++) {
                float s = k->dot(a, b, d);
                bs_do_not_optimize(s);
            }
        break;
    case OP_AXPY:
        /* alternating signs keep b bounded */
        while (bs_keep_running_batch(st, BATCH))
            for (int r = 0; r < BATCH; r++) {
                k->axpy(r & 1 ? 1e-3f : -1e-3f, a, b, d);
                bs_clobber_memory();
            }
        break;
    case OP_STEP:
        /* tau = FLT_MAX: every call updates; alternating labels keep w bounded */
        while (bs_keep_running_batch(st, BATCH))
            for (int r = 0; r < BATCH; r++) {
                k->step(b, &bias, a, d, r & 1 ? 1.0f : -1.0f, FLT_MAX, 1e-3f, 1.0f, &score);
                bs_clobber_memory();
            }
        break;
    }
    double el = bt_now() - t0;
    double it = (double)bs_iterations(st);
    double gflops = op_flops[c->op] * (double)d * it / el / 1e9;
    bs_counter(st, "GFLOP/s", op_flops[c->op] * (double)d * it / 1e9, BS_RATE);
    bs_counter(st, "GB/s", op_bytes[c->op] * (double)d * it / 1e9, BS_RATE);
    bs_set_items_processed(st, (int64_t)((double)d * it));
    char key[64];
    snprintf(key, sizeof key, "kern/%s/%zu", op_names[c->op], d);
    if (c->isa == PT_ISA_SCALAR) bt_baseline_put(key, gflops);
    double base = bt_baseline(key);
    if (base > 0) bs_counter(st, "vs_scalar", gflops / base, BS_PLAIN);
    free(a);
    free(b);
}

void bt_register_kernels(void)
{
    pt_isa isas[4];
    int nisa = bt_isas(isas);
    int nc = 0;
    char name[128];
    static const char *const arg_names[] = {"d"};
    /* scalar first in each op: the others' vs_scalar needs its figure */
    for (int op = 0; op < NOPS; op++)
        for (int i = 0; i < nisa; i++) {
            kern_case *c = &cases[nc++];
            c->op = op;
            c->isa = isas[i];
            snprintf(name, sizeof name, "kernel/%s/isa:%s", op_names[op], pt_isa_name(isas[i]));
            bs_bench *b = bs_register(name, bm_kernel, c);
            bs_range_args(bs_range_multiplier(b, 4), 16, 4096);
            bs_arg_names(b, 1, arg_names);
            bs_min_time(b, 0.05);
        }
    register_sparse(isas, nisa);
}

/* ------------------------------------------------------------------ sparse rows */

/*
 * The sparse-row kernels (k->sparse) on rcv1-like rows: d = 47,236 columns, 50..75 non-zeros a
 * row, columns drawn by a power law of popularity (the r-th most popular with weight 1 / (r + 1),
 * the ranks spread over the columns by a fixed permutation), positive values. A block of 1,024
 * rows (about 0.5 MB of CSR) and w (189 KB) stay in L2, so the figures are the kernels', not the
 * memory's. Figures: non-zeros a second, and bytes a second of what a row moves: 8 bytes of CSR
 * a non-zero plus the 64-byte lines of w it gathers (read; read and written back by axpy), and
 * the speedup over the scalar table measured in the same run. Every figure here is per second of
 * the thread's CPU time (Google Benchmark's rates are; the ratios too), so that other work on a
 * shared machine, which stretches the wall clock of one benchmark and not another's, does not
 * enter the ratios.
 *
 * sparse/pair measures the ways to the dot of two sparse rows over d = 50,000 (nnz 8, 50, 250
 * each): a merge of the sorted indices (plain C here, the baseline), the table's scatter + dot
 * + clear for one pair, and dot against a row scattered once (a kernel row: the scatter paid
 * once for many pairs). Figure: pairs a second, and the ratio to the merge in the same run.
 */
#define SP_D 47236
#define SP_ROWS 1024

typedef struct sp_block {
    size_t d, rows, nnz, lines;
    uint64_t *rowptr;
    uint32_t *idx;
    float *val;
} sp_block;

static uint64_t sp_rng;

/* Seconds of CPU time of the calling thread. */
static double sp_cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static uint64_t sp_next(void)
{
    sp_rng ^= sp_rng >> 12;
    sp_rng ^= sp_rng << 25;
    sp_rng ^= sp_rng >> 27;
    return sp_rng * 0x2545f4914f6cdd1dull;
}

static double sp_unit(void) { return (double)(sp_next() >> 11) * 0x1p-53; }

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* rows CSR rows over d, nnz uniform in [lo, hi] a row, power-law columns (see above); the
 * same rows whatever was made before. */
static int sp_make(sp_block *b, size_t d, size_t rows, size_t lo, size_t hi)
{
    sp_rng = 0x853c49e6748fea9bull ^ (d * 1000003u + lo * 1009u + hi);
    double *cdf = malloc(d * sizeof *cdf);
    uint32_t *perm = malloc(d * sizeof *perm), *seen = calloc(d, sizeof *seen);
    b->rowptr = malloc((rows + 1) * sizeof *b->rowptr);
    b->idx = bt_alloc_touched(rows * hi * sizeof *b->idx);
    b->val = bt_alloc_touched(rows * hi * sizeof *b->val);
    int ok = cdf && perm && seen && b->rowptr && b->idx && b->val;
    if (ok) {
        double c = 0.0;
        for (size_t r = 0; r < d; r++) cdf[r] = c += 1.0 / (double)(r + 1);
        for (size_t r = 0; r < d; r++) perm[r] = (uint32_t)r;
        for (size_t r = d - 1; r > 0; r--) {
            size_t j = (size_t)(sp_next() % (r + 1));
            uint32_t t = perm[r];
            perm[r] = perm[j];
            perm[j] = t;
        }
        b->d = d;
        b->rows = rows;
        b->lines = 0;
        b->rowptr[0] = 0;
        for (size_t i = 0; i < rows; i++) {
            const size_t n = lo + (size_t)(sp_next() % (hi - lo + 1));
            uint32_t *row = b->idx + b->rowptr[i];
            for (size_t k = 0; k < n;) {
                /* the rank whose cumulative weight first reaches u */
                const double u = sp_unit() * c;
                size_t l = 0, h = d - 1;
                while (l < h) {
                    size_t m = (l + h) / 2;
                    if (cdf[m] < u) l = m + 1;
                    else h = m;
                }
                const uint32_t col = perm[l];
                if (seen[col] == i + 1) continue;
                seen[col] = (uint32_t)(i + 1);
                row[k++] = col;
            }
            qsort(row, n, sizeof *row, cmp_u32);
            for (size_t k = 0; k < n; k++) {
                b->val[b->rowptr[i] + k] = (float)(0.05 + 0.95 * sp_unit());
                b->lines += k == 0 || row[k] / 16 != row[k - 1] / 16;
            }
            b->rowptr[i + 1] = b->rowptr[i] + n;
        }
        b->nnz = b->rowptr[rows];
    }
    free(cdf);
    free(perm);
    free(seen);
    if (!ok) {
        free(b->rowptr);
        free(b->idx);
        free(b->val);
    }
    return ok;
}

/* The rcv1-like block, made once (smaller in smoke mode). */
static const sp_block *sp_rcv1(void)
{
    static sp_block b;
    static int state; /* 0 not made, 1 made, -1 failed */
    if (!state) state = sp_make(&b, SP_D, bt_scale(SP_ROWS, 16, 16), 50, 75) ? 1 : -1;
    return state > 0 ? &b : NULL;
}

enum { SP_DOT, SP_AXPY, SP_STEP_ROWS, SP_GEMV_T, SP_NOPS };
static const char *const sp_names[SP_NOPS] = {"dot", "axpy", "step_rows", "gemv_t"};
/* 64-byte lines of w per line a row gathers: read; read and written back. */
static const double sp_wlines[SP_NOPS] = {1, 2, 2, 2};

/*
 * The forms the x86 tables do not use, measured beside them (src/kernels/sparse_x86.h says why
 * they lost on the machine the tables were tuned on; another CPU may rank them otherwise):
 * the hardware gather (vgatherdps) of 8 and of 16 lanes for dot, 16 lanes gathered and
 * scattered (vscatterdps) for axpy, masked tails, four and one accumulators as avx512.c's dense
 * dot. Only run where the CPU has the ISA.
 */
enum { ALT_NONE, ALT_GATHER8, ALT_GATHER16, ALT_SCATTER16, ALT_N };
static const char *const alt_names[ALT_N] = {"", "vgatherdps-ymm", "vgatherdps-zmm", "vscatterdps-zmm"};

#if defined(__x86_64__)
__attribute__((target("avx2,fma"))) static float gather8_dot(const float *w, const uint32_t *idx,
                                                              const float *val, size_t nnz)
{
    static const int32_t mask_table[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
    __m256 s[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    size_t k = 0;
    for (; k + 8 <= nnz; k += 8) {
        __m256i vi = _mm256_loadu_si256((const __m256i *)(idx + k));
        s[(k / 8) % 4] = _mm256_fmadd_ps(_mm256_i32gather_ps(w, vi, 4), _mm256_loadu_ps(val + k), s[(k / 8) % 4]);
    }
    if (k < nnz) {
        __m256i m = _mm256_loadu_si256((const __m256i *)(mask_table + 8 - (nnz - k)));
        __m256i vi = _mm256_maskload_epi32((const int *)(idx + k), m);
        __m256 g = _mm256_mask_i32gather_ps(_mm256_setzero_ps(), w, vi, _mm256_castsi256_ps(m), 4);
        s[3] = _mm256_fmadd_ps(g, _mm256_maskload_ps(val + k, m), s[3]);
    }
    __m256 t = _mm256_add_ps(_mm256_add_ps(s[0], s[1]), _mm256_add_ps(s[2], s[3]));
    __m128 q = _mm_add_ps(_mm256_castps256_ps128(t), _mm256_extractf128_ps(t, 1));
    q = _mm_add_ps(q, _mm_movehl_ps(q, q));
    return _mm_cvtss_f32(_mm_add_ss(q, _mm_movehdup_ps(q)));
}

__attribute__((target("avx512f"))) static float gather16_dot(const float *w, const uint32_t *idx,
                                                              const float *val, size_t nnz)
{
    __m512 s[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
    size_t k = 0;
    for (; k + 16 <= nnz; k += 16) {
        __m512i vi = _mm512_loadu_si512((const void *)(idx + k));
        s[(k / 16) % 4] = _mm512_fmadd_ps(_mm512_i32gather_ps(vi, w, 4), _mm512_loadu_ps(val + k), s[(k / 16) % 4]);
    }
    if (k < nnz) {
        __mmask16 m = (__mmask16)((1u << (nnz - k)) - 1u);
        __m512i vi = _mm512_maskz_loadu_epi32(m, idx + k);
        __m512 g = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, vi, w, 4);
        s[3] = _mm512_mask3_fmadd_ps(g, _mm512_maskz_loadu_ps(m, val + k), s[3], m);
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s[0], s[1]), _mm512_add_ps(s[2], s[3])));
}

__attribute__((target("avx512f"))) static void scatter16_axpy(float a, const uint32_t *idx, const float *val,
                                                               size_t nnz, float *w)
{
    const __m512 va = _mm512_set1_ps(a);
    size_t k = 0;
    for (; k + 16 <= nnz; k += 16) {
        __m512i vi = _mm512_loadu_si512((const void *)(idx + k));
        __m512 g = _mm512_add_ps(_mm512_i32gather_ps(vi, w, 4), _mm512_mul_ps(va, _mm512_loadu_ps(val + k)));
        _mm512_i32scatter_ps(w, vi, g, 4);
    }
    if (k < nnz) {
        __mmask16 m = (__mmask16)((1u << (nnz - k)) - 1u);
        __m512i vi = _mm512_maskz_loadu_epi32(m, idx + k);
        __m512 g = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, vi, w, 4);
        g = _mm512_add_ps(g, _mm512_mul_ps(va, _mm512_maskz_loadu_ps(m, val + k)));
        _mm512_mask_i32scatter_ps(w, m, vi, g, 4);
    }
}
#endif

typedef struct sp_case {
    int op;
    pt_isa isa;
    int alt; /* ALT_*: a form of the benchmark's own instead of the table's */
} sp_case;

static sp_case sp_cases[SP_NOPS * 4 + ALT_N];

static void bm_sparse(bs_state *st, const void *arg)
{
    const sp_case *c = arg;
    const pt_kernels *k;
    pt_status s = pt_kernels_get(c->isa, &k);
    const sp_block *b = sp_rcv1();
    float *w = bt_alloc_touched(SP_D * sizeof(float));
    float *coef = bt_alloc_touched(SP_ROWS * sizeof(float)), *Y = bt_alloc_touched(SP_ROWS * sizeof(float));
    if (s != PT_OK || !b || !w || !coef || !Y) {
        while (bs_keep_running(st)) {}
        if (s != PT_OK) bt_skip(st, s, "pt_kernels_get");
        else bs_skip_with_error(st, "out of memory");
        free(w);
        free(coef);
        free(Y);
        return;
    }
    for (size_t j = 0; j < SP_D; j++) w[j] = (float)((j * 7) % 13) / 13.0f - 0.5f;
    for (size_t r = 0; r < b->rows; r++) {
        coef[r] = r & 1 ? 1e-3f : -1e-3f;
        Y[r] = r & 1 ? 1.0f : -1.0f;
    }
    const pt_sparse_kernels *sk = k->sparse;
    pt_sparse_dot_ukr *dot = sk->dot;
    pt_sparse_axpy_ukr *axpy = sk->axpy;
#if defined(__x86_64__)
    if (c->alt == ALT_GATHER8) dot = gather8_dot;
    if (c->alt == ALT_GATHER16) dot = gather16_dot;
    if (c->alt == ALT_SCATTER16) axpy = scatter16_axpy;
#endif
    float bias = 0.0f;
    size_t updates = 0;
    double t0 = sp_cpu_now();
    switch (c->op) {
    case SP_DOT:
        /* one call a row, as the online paths call it */
        while (bs_keep_running(st))
            for (size_t r = 0; r < b->rows; r++) {
                const uint64_t o = b->rowptr[r];
                float v = dot(w, b->idx + o, b->val + o, (size_t)(b->rowptr[r + 1] - o));
                bs_do_not_optimize(v);
            }
        break;
    case SP_AXPY:
        /* alternating signs keep w bounded */
        while (bs_keep_running(st)) {
            for (size_t r = 0; r < b->rows; r++) {
                const uint64_t o = b->rowptr[r];
                axpy(coef[r], b->idx + o, b->val + o, (size_t)(b->rowptr[r + 1] - o), w);
            }
            bs_clobber_memory();
        }
        break;
    case SP_STEP_ROWS:
        /* tau = FLT_MAX: every row updates (a dot and an axpy); alternating labels */
        while (bs_keep_running(st)) {
            updates += sk->step_rows(w, &bias, b->rowptr, b->idx, b->val, Y, b->rows, FLT_MAX, 1e-3f, 1.0f);
            bs_clobber_memory();
        }
        break;
    case SP_GEMV_T:
        while (bs_keep_running(st)) {
            sk->gemv_t(coef, b->rowptr, b->idx, b->val, b->rows, w);
            bs_clobber_memory();
        }
        break;
    }
    bs_do_not_optimize(updates);
    double el = sp_cpu_now() - t0;
    double it = (double)bs_iterations(st);
    double nnz_rate = (double)b->nnz * it / el;
    bs_counter(st, "nnz/s", (double)b->nnz * it, BS_RATE);
    bs_set_bytes_processed(st, (int64_t)(it * (8.0 * (double)b->nnz + 64.0 * sp_wlines[c->op] * (double)b->lines)));
    char key[64];
    snprintf(key, sizeof key, "sparse/%s", sp_names[c->op]);
    if (c->isa == PT_ISA_SCALAR) bt_baseline_put(key, nnz_rate);
    double base = bt_baseline(key);
    if (base > 0) bs_counter(st, "vs_scalar", nnz_rate / base, BS_PLAIN);
    free(w);
    free(coef);
    free(Y);
}

/* ------------------------------------------------------------------ sparse pairs */

enum { PAIR_MERGE, PAIR_SCATTER, PAIR_SCATTERED, PAIR_NMODES };
static const char *const pair_names[PAIR_NMODES] = {"merge", "scatter_dot_clear", "dot_scattered"};
#define PAIR_D 50000
#define PAIR_ROWS 512

typedef struct pair_case {
    int mode;
    pt_isa isa;
} pair_case;

static pair_case pair_cases[PAIR_NMODES * 4];

/* A block of rows of exactly nnz non-zeros over PAIR_D columns, one per nnz asked (made once). */
static const sp_block *sp_pairs(size_t nnz)
{
    static sp_block b[3];
    static size_t made[3];
    static int state[3];
    for (int i = 0; i < 3; i++)
        if (made[i] == nnz || !made[i]) {
            if (!made[i]) {
                made[i] = nnz;
                state[i] = sp_make(&b[i], PAIR_D, bt_scale(PAIR_ROWS, 16, 8), nnz, nnz) ? 1 : -1;
            }
            return state[i] > 0 ? &b[i] : NULL;
        }
    return NULL;
}

/* The dot of two sorted sparse rows by a merge: each step compares one index of each row and
 * advances the smaller (both when equal) without a branch on the comparison; matches add. */
static float merge_dot(const uint32_t *ia, const float *va, size_t na, const uint32_t *ib, const float *vb,
                       size_t nb)
{
    float s = 0.0f;
    size_t i = 0, j = 0;
    while (i < na && j < nb) {
        const uint32_t a = ia[i], b = ib[j];
        if (a == b) s += va[i] * vb[j];
        i += a <= b;
        j += b <= a;
    }
    return s;
}

static void bm_sparse_pair(bs_state *st, const void *arg)
{
    const pair_case *c = arg;
    const pt_kernels *k;
    pt_status s = pt_kernels_get(c->isa, &k);
    const sp_block *b = sp_pairs((size_t)bs_range(st, 0));
    float *buf = bt_alloc_touched(PAIR_D * sizeof(float));
    if (s != PT_OK || !b || !buf) {
        while (bs_keep_running(st)) {}
        if (s != PT_OK) bt_skip(st, s, "pt_kernels_get");
        else bs_skip_with_error(st, "out of memory");
        free(buf);
        return;
    }
    const pt_sparse_kernels *sk = k->sparse;
    const uint64_t *rp = b->rowptr;
    const size_t rows = b->rows;
    double t0 = sp_cpu_now();
    switch (c->mode) {
    case PAIR_MERGE:
        /* row r against row r + 1 */
        while (bs_keep_running(st))
            for (size_t r = 0; r + 1 < rows; r++) {
                float v = merge_dot(b->idx + rp[r], b->val + rp[r], rp[r + 1] - rp[r], b->idx + rp[r + 1],
                                    b->val + rp[r + 1], rp[r + 2] - rp[r + 1]);
                bs_do_not_optimize(v);
            }
        break;
    case PAIR_SCATTER:
        /* the same pairs, row r scattered, dotted with row r + 1, cleared */
        while (bs_keep_running(st))
            for (size_t r = 0; r + 1 < rows; r++) {
                sk->scatter(b->idx + rp[r], b->val + rp[r], rp[r + 1] - rp[r], buf);
                float v = sk->dot(buf, b->idx + rp[r + 1], b->val + rp[r + 1], rp[r + 2] - rp[r + 1]);
                bs_do_not_optimize(v);
                sk->clear(b->idx + rp[r], rp[r + 1] - rp[r], buf);
            }
        break;
    case PAIR_SCATTERED:
        /* row 0 scattered once, every other row dotted with it (rows - 1 pairs) */
        sk->scatter(b->idx, b->val, rp[1], buf);
        while (bs_keep_running(st))
            for (size_t r = 1; r < rows; r++) {
                float v = sk->dot(buf, b->idx + rp[r], b->val + rp[r], rp[r + 1] - rp[r]);
                bs_do_not_optimize(v);
            }
        break;
    }
    double el = sp_cpu_now() - t0;
    double pairs = (double)(rows - 1) * (double)bs_iterations(st);
    bs_counter(st, "pairs/s", pairs, BS_RATE);
    char key[64];
    snprintf(key, sizeof key, "sparse/pair/%lld", (long long)bs_range(st, 0));
    if (c->mode == PAIR_MERGE) bt_baseline_put(key, pairs / el);
    double base = bt_baseline(key);
    if (base > 0) bs_counter(st, "vs_merge", pairs / el / base, BS_PLAIN);
    free(buf);
}

static void register_sparse(const pt_isa *isas, int nisa)
{
    char name[128];
    int nc = 0;
    for (int op = 0; op < SP_NOPS; op++)
        for (int i = 0; i < nisa; i++) {
            sp_case *c = &sp_cases[nc++];
            c->op = op;
            c->isa = isas[i];
            snprintf(name, sizeof name, "sparse/%s/isa:%s", sp_names[op], pt_isa_name(isas[i]));
            bs_min_time(bs_register(name, bm_sparse, c), 0.1);
        }
    for (int a = ALT_GATHER8; a < ALT_N; a++) {
        const pt_isa isa = a == ALT_GATHER8 ? PT_ISA_AVX2 : PT_ISA_AVX512;
        if (!pt_isa_available(isa)) continue;
        sp_case *c = &sp_cases[nc++];
        c->op = a == ALT_SCATTER16 ? SP_AXPY : SP_DOT;
        c->isa = isa;
        c->alt = a;
        snprintf(name, sizeof name, "sparse/%s/form:%s", sp_names[c->op], alt_names[a]);
        bs_min_time(bs_register(name, bm_sparse, c), 0.1);
    }
    static const char *const arg_names[] = {"nnz"};
    nc = 0;
    for (int m = 0; m < PAIR_NMODES; m++)
        for (int i = 0; i < (m == PAIR_MERGE ? 1 : nisa); i++) { /* the merge is no table's */
            pair_case *c = &pair_cases[nc++];
            c->mode = m;
            c->isa = isas[i];
            if (m == PAIR_MERGE) snprintf(name, sizeof name, "sparse/pair/merge");
            else snprintf(name, sizeof name, "sparse/pair/%s/isa:%s", pair_names[m], pt_isa_name(isas[i]));
            bs_bench *b = bs_register(name, bm_sparse_pair, c);
            bs_arg(bs_arg(bs_arg(b, 8), 50), 250);
            bs_arg_names(b, 1, arg_names);
            bs_min_time(b, 0.1);
        }
}
