/*
 * Online epochs on compact storage (bf16, u8) against float32 in the same run: the classic
 * sequential pass, 1 thread, the default ISA, on 200,000 x 256 rows (in smoke mode fewer).
 *
 *  - data:sep: the suite's separable set (BT_SEP_BIG), float32 and its bf16 copy.
 *  - data:pixels: 8-bit images, pixels k / 255 (a class's template, 16 x 16, plus noise,
 *    clipped to 0..255), float32 and its u8 copy (one divisor, 255: the same values exactly).
 *  - data:pixels-raw: the same images as the integers k (0..255), float32 and its u8 copy (one
 *    divisor, 1: widened by a conversion alone).
 *
 * Each call trains EPOCHS epochs; the time is the mean of epochs 2.. (as bench/online.c).
 * Figures: GB/s of the stored matrix (2 or 1 bytes an element for the compact types),
 * samples/s, vs_f32 = the float32 epoch of the same data over this one (the mean of the float32
 * case's last repetition in this process; 0 before it has run, which random interleaving can
 * make happen: scripts/bench-report takes the ratio of the two medians), and the held-out
 * accuracy (the last 10% of the rows, the model trained on the first 90%) in accuracy_pct,
 * which must match the float32 one within 0.1 point (u8 holding the values exactly gives the
 * same model).
 *
 * Batch iterations on the same rows (batch/compact/...): full batch, hinge loss (as
 * bench/batch.c), fused on 1 and 2 threads and gemv on 1, each type beside float32 in the same
 * run; the compact rows are widened where the pass reads them (fused: in registers by the
 * compact dot and axpy; gemv: a chunk into a buffer for sgemv), the same model as float32.
 * Each call trains BATCH_EPOCHS iterations, timed as the mean of iterations 2..; GB/s of the
 * stored matrix, samples/s, vs_f32 (the float32 iteration of the same data, impl and threads
 * over this one).
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define EPOCHS 8
_Static_assert(EPOCHS <= BT_MAX_EPOCHS, "the epoch clock holds BT_MAX_EPOCHS");

typedef enum { CD_SEP, CD_PIXELS, CD_PIXELS_RAW } cdata;
#define NDATA 3
#define NCASES 6

typedef struct compact_case {
    cdata data;
    pt_dtype dtype;
} compact_case;

static compact_case cases[NCASES];
/* per data: the training and held-out rows in each type (index dtype) */
static pt_dataset *train_rows[NDATA][3], *test_rows[NDATA][3];
static const char *failed; /* why the data could not be made (points at failed_msg) */
static char failed_msg[512];

static bool fail(const char *why)
{
    snprintf(failed_msg, sizeof failed_msg, "%s", why);
    failed = failed_msg;
    return false;
}

/* 16 x 16 pixel images of two classes: each class a random template of blobs, each image its
 * class's template plus uniform noise of +-64, clipped to 0..255, over 255 (raw: not). */
static pt_dataset *make_pixels(size_t n, bool raw)
{
    const size_t d = 256;
    pt_dataset *ds = pt_dataset_create(n, d);
    double *y = malloc(n * sizeof *y);
    if (!ds || !y) {
        free(y);
        pt_dataset_free(ds);
        return NULL;
    }
    uint64_t s = 0x243f6a8885a308d3ull;
    float tmpl[2][256];
    for (int c = 0; c < 2; c++)
        for (size_t j = 0; j < d; j++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            tmpl[c][j] = (float)(s >> 56); /* 0..255 */
        }
    for (size_t i = 0; i < n; i++) {
        int c = (int)(i % 2);
        float *x = pt_dataset_row(ds, i);
        for (size_t j = 0; j < d; j++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            float v = tmpl[c][j] * 0.25f + 96.0f + (float)((int)(s >> 57) - 64) * 1.5f;
            v = v < 0.0f ? 0.0f : v > 255.0f ? 255.0f : floorf(v);
            x[j] = raw ? v : v / 255.0f;
        }
        y[i] = c ? 1.0 : -1.0;
    }
    if (pt_dataset_set_labels(ds, y) != PT_OK) {
        pt_dataset_free(ds);
        ds = NULL;
    }
    free(y);
    return ds;
}

/* The rows of data in every type, made on first use. */
static bool prepare(cdata data)
{
    if (train_rows[data][PT_DTYPE_F32]) return true;
    if (failed) return false;
    pt_dataset *all = NULL;
    if (data == CD_SEP) {
        const char *err;
        const pt_dataset *big = bt_dataset(BT_SEP_BIG, &err);
        if (!big) return fail(err);
        if (pt_dataset_slice(big, 0, pt_dataset_n(big), &all) != PT_OK) all = NULL;
    } else {
        all = make_pixels(bt_scale(200000, 100, 2000), data == CD_PIXELS_RAW);
    }
    if (!all) return fail(pt_last_error());
    size_t n = pt_dataset_n(all), ntr = n - n / 10;
    pt_dataset *tr = NULL, *te = NULL;
    if (pt_dataset_slice(all, 0, ntr, &tr) != PT_OK ||
        pt_dataset_slice(all, ntr, n - ntr, &te) != PT_OK) {
        fail(pt_last_error());
        pt_dataset_free(all);
        pt_dataset_free(tr);
        return false;
    }
    pt_dataset_free(all);
    pt_dtype compact = data == CD_SEP ? PT_DTYPE_BF16 : PT_DTYPE_U8;
    train_rows[data][PT_DTYPE_F32] = tr;
    test_rows[data][PT_DTYPE_F32] = te;
    if (pt_dataset_to_dtype(tr, compact, 0, &train_rows[data][compact]) != PT_OK ||
        pt_dataset_to_dtype(te, compact, 0, &test_rows[data][compact]) != PT_OK)
        return fail(pt_last_error());
    return true;
}

static double f32_epoch[NDATA]; /* the float32 steady epoch of each data, for vs_f32 */

static void bm_compact(bs_state *st, const void *arg)
{
    const compact_case *c = arg;
    if (!prepare(c->data)) {
        while (bs_keep_running(st)) {
        }
        bs_skip_with_error(st, failed ? failed : "no data");
        return;
    }
    const pt_dataset *tr = train_rows[c->data][c->dtype], *te = test_rows[c->data][c->dtype];
    pt_train_params p;
    pt_train_params_init(&p);
    p.path = PT_PATH_ONLINE;
    p.online.pass = PT_PASS_SEQUENTIAL;
    p.threads = 1;
    p.epochs = bs_smoke() ? 2 : EPOCHS;
    bt_epoch_clock clk;
    p.progress = bt_on_epoch;
    p.progress_user = &clk;
    double sum = 0.0, acc = 0.0;
    while (bs_keep_running(st)) {
        pt_model *m = NULL;
        pt_train_report rep = {0};
        pt_status s = pt_train(tr, &p, &m, &rep);
        pt_eval ev;
        if (s == PT_OK) s = pt_model_evaluate(m, te, &ev);
        if (s != PT_OK) {
            bt_skip(st, s, "online path on compact rows");
            pt_model_free(m);
            pt_train_report_clear(&rep);
            break;
        }
        int e = rep.epochs_run < EPOCHS ? rep.epochs_run : EPOCHS;
        double steady = bt_steady_epoch(&clk, e);
        sum += steady;
        acc = 100.0 * ev.accuracy;
        bs_set_iteration_time(st, steady);
        pt_model_free(m);
        pt_train_report_clear(&rep);
    }
    if (bs_error_occurred(st)) return;
    const double it = (double)bs_iterations(st);
    const double bytes = (double)pt_dataset_n(tr) * (double)pt_dataset_stride(tr) *
                         (double)pt_dtype_size(c->dtype);
    if (c->dtype == PT_DTYPE_F32) f32_epoch[c->data] = sum / it;
    bs_counter(st, "GB/s", bytes * it / 1e9, BS_RATE);
    bs_counter(st, "samples/s", (double)pt_dataset_n(tr) * it, BS_RATE);
    bs_set_bytes_processed(st, (int64_t)(bytes * it));
    bs_counter(st, "vs_f32", f32_epoch[c->data] > 0 ? f32_epoch[c->data] / (sum / it) : 0.0,
               BS_PLAIN);
    bs_counter(st, "accuracy_pct", acc, BS_PLAIN);
}

#define BATCH_EPOCHS 5
#define NBATCH 12

typedef struct batch_compact_case {
    cdata data;
    pt_dtype dtype;
    pt_batch_impl impl;
    int threads;
} batch_compact_case;

static batch_compact_case batch_cases[NBATCH];
/* the float32 iteration of each data, impl (gemv, fused) and thread count, for vs_f32 */
static double f32_iter[NDATA][3][3];

static void bm_batch_compact(bs_state *st, const void *arg)
{
    const batch_compact_case *c = arg;
    if (!prepare(c->data)) {
        while (bs_keep_running(st)) {
        }
        bs_skip_with_error(st, failed ? failed : "no data");
        return;
    }
    const pt_dataset *tr = train_rows[c->data][c->dtype];
    pt_train_params p;
    pt_train_params_init(&p);
    p.path = PT_PATH_BATCH;
    p.batch.loss = PT_LOSS_HINGE;
    p.batch.lambda = 1e-4f;
    p.eta = 0.1f;
    p.batch.impl = c->impl;
    p.threads = c->threads;
    p.epochs = bs_smoke() ? 2 : BATCH_EPOCHS;
    bt_epoch_clock clk;
    p.progress = bt_on_epoch;
    p.progress_user = &clk;
    double sum = 0.0;
    while (bs_keep_running(st)) {
        pt_model *m = NULL;
        pt_train_report rep = {0};
        pt_status s = pt_train(tr, &p, &m, &rep);
        if (s != PT_OK) {
            bt_skip(st, s, "batch path on compact rows");
            pt_model_free(m);
            pt_train_report_clear(&rep);
            break;
        }
        int e = rep.epochs_run < BATCH_EPOCHS ? rep.epochs_run : BATCH_EPOCHS;
        double steady = bt_steady_epoch(&clk, e);
        sum += steady;
        bs_set_iteration_time(st, steady);
        pt_model_free(m);
        pt_train_report_clear(&rep);
    }
    if (bs_error_occurred(st)) return;
    const double it = (double)bs_iterations(st);
    const double bytes = (double)pt_dataset_n(tr) * (double)pt_dataset_stride(tr) *
                         (double)pt_dtype_size(c->dtype);
    double *base = &f32_iter[c->data][c->impl][c->threads];
    if (c->dtype == PT_DTYPE_F32) *base = sum / it;
    bs_counter(st, "GB/s", bytes * it / 1e9, BS_RATE);
    bs_counter(st, "samples/s", (double)pt_dataset_n(tr) * it, BS_RATE);
    bs_set_bytes_processed(st, (int64_t)(bytes * it));
    bs_counter(st, "vs_f32", *base > 0 ? *base / (sum / it) : 0.0, BS_PLAIN);
}

static void register_batch_compact(const char *const *data_name)
{
    static const struct {
        pt_batch_impl impl;
        int threads;
    } runs[3] = {{PT_BATCH_FUSED, 1}, {PT_BATCH_FUSED, 2}, {PT_BATCH_GEMV, 1}};
    static const struct {
        cdata data;
        pt_dtype dtype;
    } types[4] = {{CD_SEP, PT_DTYPE_F32},
                  {CD_SEP, PT_DTYPE_BF16},
                  {CD_PIXELS, PT_DTYPE_F32},
                  {CD_PIXELS, PT_DTYPE_U8}};
    _Static_assert(NBATCH == 3 * 4, "one case per run and type");
    char name[160];
    for (int r = 0, i = 0; r < 3; r++)
        for (int t = 0; t < 4; t++, i++) {
            batch_cases[i] = (batch_compact_case){types[t].data, types[t].dtype, runs[r].impl,
                                                  runs[r].threads};
            snprintf(name, sizeof name, "batch/compact/dtype:%s/data:%s/impl:%s/threads:%d",
                     pt_dtype_name(types[t].dtype), data_name[types[t].data],
                     pt_batch_impl_name(runs[r].impl), runs[r].threads);
            bs_bench *b = bs_register(name, bm_batch_compact, &batch_cases[i]);
            bs_use_manual_time(b);
            bs_iterations_fixed(b, 3);
            bs_time_unit(b, BS_MS);
        }
}

void bt_register_compact(void)
{
    static const compact_case all[NCASES] = {
        {CD_SEP, PT_DTYPE_F32},        {CD_SEP, PT_DTYPE_BF16},
        {CD_PIXELS, PT_DTYPE_F32},     {CD_PIXELS, PT_DTYPE_U8},
        {CD_PIXELS_RAW, PT_DTYPE_F32}, {CD_PIXELS_RAW, PT_DTYPE_U8}};
    static const char *const data_name[NDATA] = {"sep", "pixels", "pixels-raw"};
    char name[128];
    for (int i = 0; i < NCASES; i++) {
        cases[i] = all[i];
        snprintf(name, sizeof name, "online/compact/dtype:%s/data:%s/threads:1",
                 pt_dtype_name(all[i].dtype), data_name[all[i].data]);
        bs_bench *b = bs_register(name, bm_compact, &cases[i]);
        bs_use_manual_time(b);
        bs_iterations_fixed(b, 5);
        bs_time_unit(b, BS_MS);
    }
    register_batch_compact(data_name);
}
