/*
 * Online epochs through the public API: per ISA, sequential and blocked pass, on data in cache
 * (2,000 x 256, 2 MB) and far out of it (200,000 x 256, 205 MB).
 *
 * pt_train allocates its model per call and its first epoch starts from w = 0 (thousands of
 * mistakes on the big set, so many axpys), so one call trains several epochs and the progress
 * callback's clock splits them: the reported time is the mean of epochs 2.. (the steady
 * epochs: few mistakes, X streamed once each), and the first epoch (with the call's own
 * allocations and first touch) is reported apart as first_epoch_ms.
 * Figures: GB/s = bytes(X) / steady epoch, and vs_read = that over the streaming-read loop on
 * the same matrix and thread count. On big, each call trains 12 epochs and late_epoch_ms is
 * the mean of epochs 7..12 (a few mistakes each: where the blocked pass is meant to pay).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"

#define EPOCHS 12 /* most epochs a call trains */
_Static_assert(EPOCHS <= BT_MAX_EPOCHS, "the epoch clock holds BT_MAX_EPOCHS");
#define LATE 7    /* late epochs: from this one on */

typedef struct online_case {
    pt_isa isa;
    pt_online_pass pass;
    bt_data data;
    int epochs;     /* per pt_train call (the first is reported apart) */
    int iterations; /* calls per repetition */
} online_case;

static online_case cases[4 * 2 * 2];

static void bm_online(bs_state *st, const void *arg)
{
    const online_case *c = arg;
    const pt_dataset *ds = bt_dataset_or_skip(st, c->data);
    if (!ds) return;
    const int threads = c->pass == PT_PASS_BLOCKED ? 2 : 1;
    pt_train_params p;
    pt_train_params_init(&p);
    p.path = PT_PATH_ONLINE;
    p.isa = c->isa;
    p.online.pass = c->pass;
    p.threads = threads;
    p.epochs = bs_smoke() ? 2 : c->epochs;
    bt_epoch_clock clk;
    p.progress = bt_on_epoch;
    p.progress_user = &clk;
    double steady_sum = 0, first_sum = 0, steady_mistakes = 0, late_sum = 0, late_mistakes = 0;
    int steady_epochs = 0, late_calls = 0, late_epochs = 0;
    while (bs_keep_running(st)) {
        pt_model *m = NULL;
        pt_train_report rep = {0};
        pt_status s = pt_train(ds, &p, &m, &rep);
        if (s != PT_OK) {
            bt_skip(st, s, "online path");
            pt_model_free(m);
            pt_train_report_clear(&rep);
            break;
        }
        int e = rep.epochs_run < EPOCHS ? rep.epochs_run : EPOCHS;
        double steady = bt_steady_epoch(&clk, e);
        for (int i = 1; i < e; i++) steady_mistakes += (double)clk.mistakes[i];
        steady_epochs += e >= 2 ? e - 1 : 1;
        steady_sum += steady;
        if (e > LATE) {
            late_sum += (clk.t[e - 1] - clk.t[LATE - 2]) / (e - LATE + 1);
            late_calls++;
            for (int i = LATE - 1; i < e; i++) late_mistakes += (double)clk.mistakes[i];
            late_epochs += e - LATE + 1;
        }
        first_sum += rep.train_seconds - (clk.t[e - 1] - clk.t[0]);
        bs_set_iteration_time(st, steady);
        pt_model_free(m);
        pt_train_report_clear(&rep);
    }
    if (bs_error_occurred(st)) return;
    const double it = (double)bs_iterations(st), bytes = (double)bt_bytes(ds);
    const double gbps = bytes / (steady_sum / it) / 1e9;
    bs_counter(st, "GB/s", bytes * it / 1e9, BS_RATE);
    bs_counter(st, "samples/s", (double)pt_dataset_n(ds) * it, BS_RATE);
    bs_set_bytes_processed(st, (int64_t)(bytes * it));
    bs_counter(st, "vs_read", gbps / bt_read_gbps(c->data, threads), BS_PLAIN);
    bs_counter(st, "first_epoch_ms", 1e3 * first_sum / it, BS_PLAIN);
    bs_counter(st, "first_epoch_GB/s", bytes / (first_sum / it) / 1e9, BS_PLAIN);
    bs_counter(st, "steady_mistakes", steady_epochs ? steady_mistakes / steady_epochs : 0,
               BS_PLAIN);
    if (late_calls) {
        bs_counter(st, "late_epoch_ms", 1e3 * late_sum / late_calls, BS_PLAIN);
        bs_counter(st, "late_mistakes", late_mistakes / late_epochs, BS_PLAIN);
    }
}

void bt_register_online(void)
{
    pt_isa isas[4];
    int nisa = bt_isas(isas), nc = 0;
    static const bt_data datas[] = {BT_SEP_SMALL, BT_SEP_BIG};
    static const pt_online_pass passes[] = {PT_PASS_SEQUENTIAL, PT_PASS_BLOCKED};
    char name[128];
    for (size_t di = 0; di < 2; di++)
        for (size_t pi = 0; pi < 2; pi++)
            for (int i = 0; i < nisa; i++) {
                online_case *c = &cases[nc++];
                c->isa = isas[i];
                c->pass = passes[pi];
                c->data = datas[di];
                /* The blocked pass is slow where mistakes are frequent (small) or the dot is
                 * (scalar), and very slow on a loaded machine. Fewer calls there keep the whole
                 * report within its time. */
                bool blocked = c->pass == PT_PASS_BLOCKED, big = c->data == BT_SEP_BIG;
                c->epochs = big ? EPOCHS : blocked ? 4 : 6;
                c->iterations = big ? (blocked ? (c->isa == PT_ISA_SCALAR ? 1 : 2) : 4)
                                    : (blocked ? 5 : 20);
                snprintf(name, sizeof name, "online/epoch/isa:%s/pass:%s/data:%s/threads:%d",
                         pt_isa_name(c->isa), pt_online_pass_name(c->pass), bt_data_name(c->data),
                         c->pass == PT_PASS_BLOCKED ? 2 : 1);
                bs_bench *b = bs_register(name, bm_online, c);
                bs_use_manual_time(b);
                /* a fixed count: each iteration trains several epochs but reports one */
                bs_iterations_fixed(b, c->iterations);
                bs_time_unit(b, c->data == BT_SEP_BIG ? BS_MS : BS_US);
            }
}
