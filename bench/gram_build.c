/*
 * The kernel path: Gram builds and kernel-perceptron epochs.
 *
 * Gram builds on the first n rows of a 4,000 x 256 separable set (d = 16: its first 16
 * features), linear and RBF kernels:
 *   ssyrk  the baseline: OpenBLAS ssyrk (upper triangle), then for RBF the transform
 *          exp(-gamma (|x|^2 + |z|^2 - 2 x.z)) over the triangle (norms included);
 *   naive  the table's dot for every pair of the upper triangle, mirrored, one thread;
 *   tiled  src/features/gram.c's pt_gram_full: OpenMP over square tiles, the kernel applied in the
 *          tile, mirrored (rows packed once, outside the timing, as the path does).
 *   sgemm  the ceiling: OpenBLAS sgemm of the whole n x n product X X^T (linear only, no
 *          kernel function), its GFLOP/s of the 2 n^2 d FLOPs it does.
 * Figures: GFLOP/s of n (n + 1) d useful FLOPs (the upper triangle's multiply-adds), and
 * vs_ssyrk, the ratio to the ssyrk build of the same kernel, n, d and threads; vs_sgemm, the
 * ratio to sgemm's GFLOP/s on the same n, d and threads (the kernel function's work included
 * in the build's time, not sgemm's). OPENBLAS_CORETYPE
 * decides which ssyrk kernels run (Haswell's AVX2 ones by default on a Zen 4/5 CPU): the report
 * records it.
 *
 * Kernel-perceptron epochs through pt_train.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "bench.h"
#include "features/gram.h"

#define NMAX 4000

enum { IMPL_SSYRK, IMPL_SGEMM, IMPL_NAIVE, IMPL_TILED, NIMPL };
static const char *const impl_names[NIMPL] = {"ssyrk", "sgemm", "naive", "tiled"};

typedef struct gram_case {
    int impl;
    pt_kernel kernel;
    int threads;
} gram_case;

static gram_case cases[32];

/* One n x n matrix for every build (64 MB at n = 4,000): touched once, not per build. */
static float *gram_buffer(size_t *ld)
{
    static float *G;
    *ld = (NMAX + 15) / 16 * 16;
    if (!G) G = bt_alloc_touched(*ld * *ld * sizeof(float));
    return G;
}

static float gamma_for(size_t d) { return 1.0f / (float)d; }

/* exp(-gamma (xn_i + xn_j - 2 G_ij)) over row i's entries j >= i (from i rounded down to 16,
 * so the vector transform sees whole blocks). */
static void rbf_transform(const pt_kernels *k, float *G, size_t ld, size_t n, const float *norm,
                          float gamma)
{
    pt_kfun kf = {.kind = PT_KERNEL_RBF, .degree = 1, .gamma = gamma, .coef0 = 0.0f, .add = 0.0f};
    for (size_t i = 0; i < n; i++) {
        size_t j0 = i / 16 * 16, len = (n - j0 + 15) / 16 * 16;
        float *row = G + i * ld + j0;
        k->gram->kfun(&kf, row, norm[i], norm + j0, row, len); /* the table's vector code */
    }
}

static void build_ssyrk(const pt_dataset *ds, const pt_kernels *k, size_t n, size_t d,
                        pt_kernel kern, float *G, size_t ld, float *norm)
{
    const size_t stride = pt_dataset_stride(ds);
    const float *X = pt_dataset_row_const(ds, 0);
    cblas_ssyrk(CblasRowMajor, CblasUpper, CblasNoTrans, (blasint)n, (blasint)d, 1.0f, X,
                (blasint)stride, 0.0f, G, (blasint)ld);
    if (kern == PT_KERNEL_RBF) {
        for (size_t i = 0; i < n; i++) norm[i] = k->dot(X + i * stride, X + i * stride, d);
        rbf_transform(k, G, ld, n, norm, gamma_for(d));
    }
}

static void build_naive(const pt_dataset *ds, const pt_kernels *k, size_t n, size_t d, float *G,
                        size_t ld)
{
    const size_t stride = pt_dataset_stride(ds);
    const float *X = pt_dataset_row_const(ds, 0);
    for (size_t i = 0; i < n; i++)
        for (size_t j = i; j < n; j++) {
            float v = k->dot(X + i * stride, X + j * stride, d);
            G[i * ld + j] = v;
            G[j * ld + i] = v;
        }
}

static void bm_gram(bs_state *st, const void *arg)
{
    const gram_case *c = arg;
    const char *err;
    const pt_dataset *ds = bt_dataset(BT_SEP_GRAM, &err);
    size_t ld;
    float *G = gram_buffer(&ld);
    const pt_kernels *k = NULL;
    if (!ds || !G || pt_kernels_get(PT_ISA_AUTO, &k) != PT_OK) {
        while (bs_keep_running(st)) {}
        bs_skip_with_error(st, !ds ? err : !G ? "out of memory" : pt_last_error());
        return;
    }
    size_t n = (size_t)bs_range(st, 0), d = (size_t)bs_range(st, 1);
    if (n > pt_dataset_n(ds)) n = pt_dataset_n(ds); /* smoke mode */
    float *norm = bt_alloc_touched(ld * sizeof(float));
    int old = bt_threads_set(c->threads);
    pt_gram_rows rows;
    memset(&rows, 0, sizeof rows);
    pt_kfun kf = {
        .kind = c->kernel, .degree = 1, .gamma = gamma_for(d), .coef0 = 0.0f, .add = 0.0f};
    pt_status s = PT_OK;
    if (c->impl == IMPL_TILED &&
        (s = pt_gram_rows_init(&rows, pt_dataset_row_const(ds, 0), n, d, pt_dataset_stride(ds), d,
                               c->kernel, k, c->threads)) != PT_OK) {
        while (bs_keep_running(st)) {}
        bt_skip(st, s, "pt_gram_rows_init");
        bt_threads_restore(old);
        free(norm);
        return;
    }
    double t0 = bt_now();
    while (bs_keep_running(st)) {
        switch (c->impl) {
        case IMPL_SSYRK: build_ssyrk(ds, k, n, d, c->kernel, G, ld, norm); break;
        case IMPL_SGEMM:
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (blasint)n, (blasint)n,
                        (blasint)d, 1.0f, pt_dataset_row_const(ds, 0),
                        (blasint)pt_dataset_stride(ds), pt_dataset_row_const(ds, 0),
                        (blasint)pt_dataset_stride(ds), 0.0f, G, (blasint)ld);
            break;
        case IMPL_NAIVE: build_naive(ds, k, n, d, G, ld); break;
        case IMPL_TILED:
            if ((s = pt_gram_full(&rows, &kf, k, G, ld, c->threads)) != PT_OK)
                bt_skip(st, s, "pt_gram_full");
            break;
        }
        bs_clobber_memory();
    }
    double el = bt_now() - t0;
    pt_gram_rows_free(&rows);
    bt_threads_restore(old);
    free(norm);
    if (bs_error_occurred(st)) return;
    const double it = (double)bs_iterations(st);
    const double flops = (double)n * (double)(c->impl == IMPL_SGEMM ? 2 * n : n + 1) * (double)d;
    bs_counter(st, "GFLOP/s", flops * it / 1e9, BS_RATE);
    bs_set_items_processed(st, (int64_t)((double)n * (double)n * it)); /* kernel entries */
    char key[96];
    snprintf(key, sizeof key, "ssyrk/%s/%zu/%zu/t%d", pt_kernel_name(c->kernel), n, d, c->threads);
    if (c->impl == IMPL_SSYRK) bt_baseline_put(key, flops * it / el / 1e9);
    double base = bt_baseline(key);
    if (base > 0) bs_counter(st, "vs_ssyrk", flops * it / el / 1e9 / base, BS_PLAIN);
    snprintf(key, sizeof key, "sgemm/%zu/%zu/t%d", n, d, c->threads);
    if (c->impl == IMPL_SGEMM) bt_baseline_put(key, flops * it / el / 1e9);
    base = bt_baseline(key);
    if (base > 0) bs_counter(st, "vs_sgemm", flops * it / el / 1e9 / base, BS_PLAIN);
}

/* ------------------------------------------------------- kernel-row blocks (the flush)
 *
 * What the kernel path's rows storage computes when it applies its held-back updates: the
 * kernel rows of a block of 128 rows against all n training rows (pt_gram_block over column
 * blocks of 480, as train_kernel.c's flush: the rows packed outside the timing), against
 * OpenBLAS sgemm of the same 128 x n x d product (no kernel function), on n = 60,000 rows
 * of d = 784 (the ten-class image set's shape; 20,000 and 2,000 in smoke mode) of values in
 * [0, 1). GFLOP/s of the 2 128 n d FLOPs, vs_sgemm the ratio to sgemm's on the same shape and
 * threads. */

#define ROWS_BLOCK 128
#define ROWS_COLS 480

typedef struct rows_case {
    int sgemm;
    pt_kernel kernel;
    int threads;
} rows_case;

static rows_case rcases[8];

/* The n x d matrix (values in [0, 1), a fixed sequence), made once for every case. */
static const float *rows_matrix(size_t n, size_t d)
{
    static float *X;
    static size_t have;
    if (X && have == n * d) return X;
    free(X);
    if (!(X = bt_alloc_touched(n * d * sizeof(float)))) return NULL;
    uint32_t v = 12345;
    for (size_t i = 0; i < n * d; i++) {
        v = v * 1664525u + 1013904223u;
        X[i] = (float)(v >> 8) / 16777216.0f;
    }
    have = n * d;
    return X;
}

static void bm_gram_rows(bs_state *st, const void *arg)
{
    const rows_case *c = arg;
    const size_t n = bt_scale((size_t)bs_range(st, 0), 30, 2000), d = (size_t)bs_range(st, 1);
    const float *X = rows_matrix(n, d);
    const pt_kernels *k = NULL;
    float *C = X ? bt_alloc_touched((size_t)c->threads * ROWS_BLOCK * (c->sgemm ? n : ROWS_COLS) *
                                    sizeof(float))
                 : NULL;
    if (!X || !C || pt_kernels_get(PT_ISA_AUTO, &k) != PT_OK) {
        while (bs_keep_running(st)) {}
        bs_skip_with_error(st, !X || !C ? "out of memory" : pt_last_error());
        free(C);
        return;
    }
    int old = bt_threads_set(c->threads);
    pt_kfun kf = {.kind = c->kernel, .degree = 1, .gamma = 1.0f / (float)d, .add = 1.0f};
    pt_gram_rows all, block;
    memset(&all, 0, sizeof all);
    memset(&block, 0, sizeof block);
    pt_status s = pt_gram_rows_init(&all, X, n, d, d, d, c->kernel, k, c->threads);
    if (s == PT_OK) s = pt_gram_rows_init(&block, X + (n / 2) * d, ROWS_BLOCK, d, d, d, c->kernel, k, 1);
    if (s != PT_OK) {
        while (bs_keep_running(st)) {}
        bt_skip(st, s, "pt_gram_rows_init");
    }
    const ptrdiff_t nc = (ptrdiff_t)((n + ROWS_COLS - 1) / ROWS_COLS);
    double t0 = bt_now();
    while (s == PT_OK && bs_keep_running(st)) {
        if (c->sgemm) {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, ROWS_BLOCK, (blasint)n,
                        (blasint)d, 1.0f, X + (n / 2) * d, (blasint)d, X, (blasint)d, 0.0f, C,
                        (blasint)n);
        } else {
#pragma omp parallel num_threads(c->threads)
            {
#ifdef _OPENMP
                float *Ct = C + (size_t)omp_get_thread_num() * ROWS_BLOCK * ROWS_COLS;
#else
                float *Ct = C;
#endif
#pragma omp for schedule(static)
                for (ptrdiff_t q = 0; q < nc; q++) {
                    size_t j0 = (size_t)q * ROWS_COLS;
                    size_t nj = n - j0 < ROWS_COLS ? n - j0 : ROWS_COLS;
                    pt_gram_block(&block, 0, ROWS_BLOCK, &all, j0, nj, &kf, k, Ct, ROWS_COLS);
                }
            }
        }
        bs_clobber_memory();
    }
    double el = bt_now() - t0;
    pt_gram_rows_free(&all);
    pt_gram_rows_free(&block);
    bt_threads_restore(old);
    free(C);
    if (bs_error_occurred(st)) return;
    const double flops = 2.0 * ROWS_BLOCK * (double)n * (double)d * (double)bs_iterations(st);
    bs_counter(st, "GFLOP/s", flops / 1e9, BS_RATE);
    char key[96];
    snprintf(key, sizeof key, "rows-sgemm/%zu/%zu/t%d", n, d, c->threads);
    if (c->sgemm) bt_baseline_put(key, flops / el / 1e9);
    double base = bt_baseline(key);
    if (base > 0) bs_counter(st, "vs_sgemm", flops / el / 1e9 / base, BS_PLAIN);
}

/* ------------------------------------------------------------ kernel-perceptron epoch */

typedef struct kperc_case {
    pt_kernel kernel;
    pt_gram_storage storage;
    bt_data data;
} kperc_case;

static const kperc_case kcases[] = {
    {PT_KERNEL_RBF, PT_GRAM_FULL, BT_CIRCLE},
    {PT_KERNEL_RBF, PT_GRAM_ROWS, BT_CIRCLE},
    {PT_KERNEL_RBF, PT_GRAM_AUTO, BT_CIRCLE},
    {PT_KERNEL_LINEAR, PT_GRAM_AUTO, BT_SEP_GRAM},
};

#define KEPOCHS 5

static void bm_kperc(bs_state *st, const void *arg)
{
    const kperc_case *c = arg;
    const pt_dataset *ds = bt_dataset_or_skip(st, c->data);
    if (!ds) return;
    pt_train_params p;
    pt_train_params_init(&p);
    p.path = PT_PATH_KERNEL;
    p.kernel.kind = c->kernel;
    p.kernel.gamma = 1.0f / (float)pt_dataset_d(ds); /* libsvm's default, 1/d */
    p.kernel.gram_storage = c->storage;
    p.epochs = bs_smoke() ? 2 : KEPOCHS;
    bt_epoch_clock clk;
    p.progress = bt_on_epoch;
    p.progress_user = &clk;
    double total = 0, steady_sum = 0, epochs = 0, updates = 0;
    while (bs_keep_running(st)) {
        pt_model *m = NULL;
        pt_train_report rep = {0};
        pt_status s = pt_train(ds, &p, &m, &rep);
        if (s != PT_OK) {
            bt_skip(st, s, "kernel path");
            pt_model_free(m);
            pt_train_report_clear(&rep);
            break;
        }
        total += rep.train_seconds;
        steady_sum += bt_steady_epoch(&clk, rep.epochs_run < KEPOCHS ? rep.epochs_run : KEPOCHS);
        epochs += rep.epochs_run;
        updates += (double)rep.updates;
        bs_set_iteration_time(st, rep.train_seconds);
        pt_model_free(m);
        pt_train_report_clear(&rep);
    }
    if (bs_error_occurred(st)) return;
    const double it = (double)bs_iterations(st), n = (double)pt_dataset_n(ds);
    bs_counter(st, "samples/s", n * epochs, BS_RATE);
    bs_counter(st, "epochs", epochs / it, BS_PLAIN);
    bs_counter(st, "updates", updates / it, BS_PLAIN);
    bs_counter(st, "steady_epoch_ms", 1e3 * steady_sum / it, BS_PLAIN);
    bs_counter(st, "train_ms", 1e3 * total / it, BS_PLAIN);
}

void bt_register_gram(void)
{
    static const char *const arg_names[] = {"n", "d"};
    static const int64_t shapes[][2] = {{1000, 256}, {2000, 256}, {4000, 256}, {4000, 16}};
    char name[160];
    int nc = 0;
    /* ssyrk and sgemm first: the others' vs_ssyrk and vs_sgemm need their figures */
    for (int impl = 0; impl < NIMPL; impl++)
        for (int kern = 0; kern < 2; kern++)
            for (int threads = 1; threads <= 2; threads++) {
                pt_kernel kernel = kern ? PT_KERNEL_RBF : PT_KERNEL_LINEAR;
                if (impl == IMPL_NAIVE && (kernel != PT_KERNEL_LINEAR || threads != 1)) continue;
                if (impl == IMPL_SGEMM && kernel != PT_KERNEL_LINEAR) continue;
                gram_case *c = &cases[nc++];
                c->impl = impl;
                c->kernel = kernel;
                c->threads = threads;
                snprintf(name, sizeof name, "gram/build/impl:%s/kernel:%s/threads:%d",
                         impl_names[impl], pt_kernel_name(kernel), threads);
                bs_bench *b = bs_register(name, bm_gram, c);
                for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
                    if (impl != IMPL_NAIVE || shapes[s][0] <= 2000) /* naive: seconds at 4,000 */
                        bs_args(b, 2, shapes[s]);
                bs_arg_names(b, 2, arg_names);
                bs_use_real_time(b);
                bs_min_time(b, 0.1);
                bs_time_unit(b, BS_MS);
            }
    static const char *const row_args[] = {"n", "d"};
    static const int64_t row_shape[] = {60000, 784};
    int nr = 0;
    for (int impl = 0; impl < 2; impl++) /* sgemm first: the baseline */
        for (int kern = 0; kern < 2; kern++)
            for (int threads = 1; threads <= 2; threads++) {
                if (impl == 0 && kern) continue;
                rows_case *c = &rcases[nr++];
                c->sgemm = impl == 0;
                c->kernel = kern ? PT_KERNEL_RBF : PT_KERNEL_LINEAR;
                c->threads = threads;
                snprintf(name, sizeof name, "gram/rows/impl:%s/kernel:%s/threads:%d",
                         c->sgemm ? "sgemm" : "tiled", pt_kernel_name(c->kernel), threads);
                bs_bench *b = bs_register(name, bm_gram_rows, c);
                bs_args(b, 2, row_shape);
                bs_arg_names(b, 2, row_args);
                bs_use_real_time(b);
                bs_min_time(b, 0.1);
                bs_time_unit(b, BS_MS);
            }
    for (size_t i = 0; i < sizeof kcases / sizeof kcases[0]; i++) {
        const kperc_case *c = &kcases[i];
        snprintf(name, sizeof name, "kernel/train/kernel:%s/gram:%s/data:%s",
                 pt_kernel_name(c->kernel), pt_gram_storage_name(c->storage),
                 bt_data_name(c->data));
        bs_bench *b = bs_register(name, bm_kperc, c);
        bs_use_manual_time(b);
        bs_iterations_fixed(b, 2);
        bs_time_unit(b, BS_MS);
    }
}
