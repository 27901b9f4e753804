/*
 * Batch iterations (full batch, hinge loss: it never stops early) through the public API on the
 * 200,000 x 256 matrix: two sgemv passes (gemv) against one fused streaming pass, on one and two
 * threads. As for the online path, one call trains several iterations and the progress clock
 * gives the mean of iterations 2.. (the first, with the call's allocations, is apart).
 * Figures: GB/s = bytes(X) / iteration (what the caller sees; gemv reads X twice), vs_read (that
 * over the read loop on as many threads) and vs_sgemv (the time of OpenBLAS sgemv N + T on the
 * same matrix and threads over the iteration's: above 1 is faster than the two BLAS calls).
 */
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"

#define EPOCHS 5

typedef struct batch_case {
    pt_batch_impl impl;
    int threads;
} batch_case;

static const batch_case cases[] = {
    {PT_BATCH_GEMV, 1}, {PT_BATCH_FUSED, 1}, {PT_BATCH_GEMV, 2}, {PT_BATCH_FUSED, 2}};

static void bm_batch(bs_state *st, const void *arg)
{
    const batch_case *c = arg;
    const pt_dataset *ds = bt_dataset_or_skip(st, BT_SEP_BIG);
    if (!ds) return;
    pt_train_params p;
    pt_train_params_init(&p);
    p.path = PT_PATH_BATCH;
    p.batch.loss = PT_LOSS_HINGE;
    p.batch.lambda = 1e-4f;
    p.eta = 0.1f;
    p.batch.impl = c->impl;
    p.threads = c->threads;
    p.epochs = bs_smoke() ? 2 : EPOCHS;
    bt_epoch_clock clk;
    p.progress = bt_on_epoch;
    p.progress_user = &clk;
    double iter_sum = 0, first_sum = 0;
    while (bs_keep_running(st)) {
        pt_model *m = NULL;
        pt_train_report rep = {0};
        pt_status s = pt_train(ds, &p, &m, &rep);
        if (s != PT_OK) {
            bt_skip(st, s, pt_batch_impl_name(c->impl));
            pt_model_free(m);
            pt_train_report_clear(&rep);
            break;
        }
        int e = rep.epochs_run < EPOCHS ? rep.epochs_run : EPOCHS;
        double iter = bt_steady_epoch(&clk, e);
        iter_sum += iter;
        first_sum += rep.train_seconds - (clk.t[e - 1] - clk.t[0]);
        bs_set_iteration_time(st, iter);
        pt_model_free(m);
        pt_train_report_clear(&rep);
    }
    if (bs_error_occurred(st)) return;
    const double it = (double)bs_iterations(st), bytes = (double)bt_bytes(ds);
    const double sec = iter_sum / it;
    bs_counter(st, "GB/s", bytes * it / 1e9, BS_RATE);
    bs_counter(st, "samples/s", (double)pt_dataset_n(ds) * it, BS_RATE);
    bs_set_bytes_processed(st, (int64_t)(bytes * it));
    bs_counter(st, "vs_read", bytes / sec / 1e9 / bt_read_gbps(BT_SEP_BIG, c->threads), BS_PLAIN);
    double blas = bt_sgemv_seconds(0, c->threads) + bt_sgemv_seconds(1, c->threads);
    if (blas > 0) bs_counter(st, "vs_sgemv", blas / sec, BS_PLAIN);
    bs_counter(st, "first_iter_ms", 1e3 * first_sum / it, BS_PLAIN);
}

void bt_register_batch(void)
{
    char name[128];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const batch_case *c = &cases[i];
        snprintf(name, sizeof name, "batch/iteration/impl:%s/data:big/threads:%d",
                 pt_batch_impl_name(c->impl), c->threads);
        bs_bench *b = bs_register(name, bm_batch, c);
        bs_use_manual_time(b);
        bs_iterations_fixed(b, 3);
        bs_time_unit(b, BS_MS);
    }
}
