/*
 * The in-run baselines: a streaming-read loop (what the memory bus gives one and two cores) and
 * OpenBLAS sgemv in both transposes on the matrix the online and batch paths read. ssyrk, the
 * Gram build's baseline, is in gram_build.c beside the builds it judges.
 */
#include <stdio.h>
#include <stdlib.h>

#include <cblas.h>

#include "bench.h"

/* ------------------------------------------------------------------ read loop */

/* arg: the bt_data whose matrix is read. Each thread reads its own share, every iteration. */
static void bm_read(bs_state *st, const void *arg)
{
    bt_data which = (bt_data)(intptr_t)arg;
    const pt_dataset *ds = bt_dataset_or_skip(st, which);
    if (!ds) return;
    const int T = bs_num_threads(st), t = bs_thread_index(st);
    const size_t part = bt_bytes(ds) / (size_t)T / 256 * 256;
    const char *p = (const char *)pt_dataset_row_const(ds, 0) + (size_t)t * part;
    uint64_t sink = 0;
    double t0 = bt_now();
    while (bs_keep_running(st)) sink |= bt_read(p, part);
    double el = bt_now() - t0;
    bs_do_not_optimize(sink);
    double bytes = (double)part * (double)bs_iterations(st);
    bs_set_bytes_processed(st, (int64_t)bytes);
    bs_counter(st, "GB/s", bytes / 1e9, BS_RATE);
    if (t == 0) {
        char key[64];
        snprintf(key, sizeof key, "read/%s/t%d", bt_data_name(which), T);
        bt_baseline_put(key, bytes * T / el / 1e9);
    }
}

/* ---------------------------------------------------------------------- sgemv */

typedef struct gemv_case {
    int trans;   /* 0: y = X w (margins); 1: w = X^T y (the gradient) */
    int threads; /* OpenBLAS threads */
} gemv_case;

static const gemv_case gemv_cases[] = {{0, 1}, {0, 2}, {1, 1}, {1, 2}};


static void gemv_once(const pt_dataset *ds, int trans, const float *in, float *out)
{
    const size_t n = pt_dataset_n(ds), d = pt_dataset_d(ds), ld = pt_dataset_stride(ds);
    cblas_sgemv(CblasRowMajor, trans ? CblasTrans : CblasNoTrans, (blasint)n, (blasint)d, 1.0f,
                pt_dataset_row_const(ds, 0), (blasint)ld, in, 1, 0.0f, out, 1);
}

static void bm_sgemv(bs_state *st, const void *arg)
{
    const gemv_case *c = arg;
    const char *err;
    const pt_dataset *ds = bt_dataset(BT_SEP_BIG, &err);
    float *in = NULL, *out = NULL;
    if (ds) {
        size_t n = pt_dataset_n(ds), ld = pt_dataset_stride(ds);
        in = bt_alloc_touched((n > ld ? n : ld) * sizeof(float));
        out = bt_alloc_touched((n > ld ? n : ld) * sizeof(float));
        if (in)
            for (size_t i = 0; i < (n > ld ? n : ld); i++) in[i] = (float)(i % 7) * 0.25f - 0.75f;
    }
    if (!ds || !in || !out) {
        while (bs_keep_running(st)) {}
        bs_skip_with_error(st, ds ? "out of memory" : err);
        free(in);
        free(out);
        return;
    }
    int old = bt_threads_set(c->threads);
    double t0 = bt_now();
    while (bs_keep_running(st)) {
        gemv_once(ds, c->trans, in, out);
        bs_clobber_memory();
    }
    double el = bt_now() - t0;
    bt_threads_restore(old);
    double it = (double)bs_iterations(st), bytes = (double)bt_bytes(ds);
    double flops = 2.0 * (double)pt_dataset_n(ds) * (double)pt_dataset_d(ds);
    bs_set_bytes_processed(st, (int64_t)(bytes * it));
    bs_counter(st, "GB/s", bytes * it / 1e9, BS_RATE);
    bs_counter(st, "GFLOP/s", flops * it / 1e9, BS_RATE);
    bs_counter(st, "vs_read", bytes / (el / it) / 1e9 / bt_read_gbps(BT_SEP_BIG, c->threads),
               BS_PLAIN);
    char key[64];
    snprintf(key, sizeof key, "sgemv/%c/t%d", c->trans ? 'T' : 'N', c->threads);
    bt_baseline_put(key, el / it);
    free(in);
    free(out);
}

double bt_sgemv_seconds(int trans, int threads)
{
    char key[64];
    snprintf(key, sizeof key, "sgemv/%c/t%d", trans ? 'T' : 'N', threads);
    double v = bt_baseline(key);
    if (v > 0) return v;
    const pt_dataset *ds = bt_dataset(BT_SEP_BIG, NULL);
    if (!ds) return 0.0;
    size_t n = pt_dataset_n(ds), ld = pt_dataset_stride(ds), len = n > ld ? n : ld;
    float *in = bt_alloc_touched(len * sizeof(float)), *out = bt_alloc_touched(len * sizeof(float));
    if (in && out) {
        int old = bt_threads_set(threads);
        gemv_once(ds, trans, in, out); /* warm up */
        double t0 = bt_now();
        const int reps = 5;
        for (int r = 0; r < reps; r++) gemv_once(ds, trans, in, out);
        v = (bt_now() - t0) / reps;
        bt_threads_restore(old);
        bt_baseline_put(key, v);
    }
    free(in);
    free(out);
    return v;
}

void bt_register_baselines(void)
{
    static const bt_data reads[] = {BT_SEP_BIG, BT_SEP_SMALL};
    char name[128];
    for (size_t i = 0; i < sizeof reads / sizeof reads[0]; i++) {
        snprintf(name, sizeof name, "baseline/read/data:%s", bt_data_name(reads[i]));
        bs_bench *b = bs_register(name, bm_read, (const void *)(intptr_t)reads[i]);
        bs_use_real_time(bs_threads(bs_threads(b, 1), 2));
        bs_min_time(b, reads[i] == BT_SEP_BIG ? 0.3 : 0.1);
        bs_time_unit(b, BS_US);
    }
    for (size_t i = 0; i < sizeof gemv_cases / sizeof gemv_cases[0]; i++) {
        const gemv_case *c = &gemv_cases[i];
        snprintf(name, sizeof name, "baseline/sgemv/trans:%c/data:big/threads:%d",
                 c->trans ? 'T' : 'N', c->threads);
        bs_bench *b = bs_register(name, bm_sgemv, c);
        bs_use_real_time(b);
        bs_min_time(b, 0.3);
        bs_time_unit(b, BS_MS);
    }
}
