/*
 * The SIMD table's kernels in L1: dot, axpy and the fused online step, for every ISA this
 * machine runs, d = 16 .. 4096. Figures: GFLOP/s, GB/s of operand traffic, and the speedup
 * over the scalar table at the same d (measured earlier in the same run).
 */
#include <float.h>
#include <stdio.h>
#include <stdlib.h>

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
}
