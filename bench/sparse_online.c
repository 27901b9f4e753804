/*
 * Online epochs on sparse data (CSR) through the public API: a generated rcv1-like set of
 * 200,000 rows x 47,236 features, about 50 non-zeros a row (pt_generate PT_GEN_SPARSE, the
 * defaults of `ptron gen sparse --n 200000`: 10.5 million non-zeros, 80 MB of CSR), per ISA,
 * classic (the plain pass: the whole epoch in the sparse step_rows kernel), averaged (the lazy
 * sum, O(nnz) a step) and classic shuffled (rows visited at random); and full-batch iterations
 * of the batch path on the same set (squared loss: every row's g is non-zero, so each
 * iteration gathers and scatters every non-zero, the work of scipy's X @ w plus X.T @ g that
 * scripts/compare-sparse-batch times beside it).
 *
 * As in online.c, one call trains several epochs and the progress callback's clock splits
 * them; the figure is the mean steady epoch (epochs 2..). Figures: samples/s; GB/s = bytes of
 * the CSR arrays an epoch reads (row offsets, columns, values) / steady epoch; vs_read = that
 * over the streaming-read loop on the same arrays in the same run (baseline/read/data:rcv1like,
 * one thread: the sequential pass runs on one). The weights the rows gather (189 KB) stay in
 * cache and are not counted.
 *
 * And the epoch without its updates: every row's score against a fixed w by the ISA's
 * dot_rows, one pass over the set (online/sparse_scores): what the gathers alone cost, the
 * floor under the classic epoch on data that still has mistakes to make.
 */
#include <immintrin.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"

#define EPOCHS 6 /* per pt_train call: the first is not reported */
_Static_assert(EPOCHS <= BT_MAX_EPOCHS, "the epoch clock holds BT_MAX_EPOCHS");

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pt_dataset *data;
static char data_err[256];

/* The rcv1-like set (2,000 rows in smoke mode), generated on first use. */
static const pt_dataset *sparse_data(bs_state *st)
{
    pthread_mutex_lock(&lock);
    if (!data && !data_err[0]) {
        pt_gen_params gp;
        pt_gen_params_init(&gp);
        gp.kind = PT_GEN_SPARSE;
        gp.n = bs_smoke() ? 2000 : 200000;
        gp.d = 47236;
        gp.nnz = 50;
        gp.margin = 0.001;
        gp.seed = 1;
        if (pt_generate(&gp, &data) != PT_OK)
            snprintf(data_err, sizeof data_err, "generating rcv1like: %s", pt_last_error());
    }
    pthread_mutex_unlock(&lock);
    if (!data) bs_skip_with_error(st, data_err);
    return data;
}

/* Bytes of the CSR arrays an epoch reads. */
static size_t csr_bytes(const pt_dataset *ds)
{
    return (pt_dataset_n(ds) + 1) * sizeof(uint64_t) +
           pt_dataset_nnz(ds) * (sizeof(uint32_t) + sizeof(float));
}

/* The streaming read of the three CSR arrays (each a multiple of 256 bytes of it). */
static uint64_t read_csr(const pt_dataset *ds, size_t *bytes)
{
    const uint64_t *rowptr;
    const uint32_t *col;
    const float *val;
    pt_dataset_csr(ds, &rowptr, &col, &val);
    size_t b0 = (pt_dataset_n(ds) + 1) * sizeof *rowptr / 256 * 256;
    size_t b1 = pt_dataset_nnz(ds) * sizeof *col / 256 * 256;
    *bytes = b0 + 2 * b1;
    return bt_read(rowptr, b0) | bt_read(col, b1) | bt_read(val, b1);
}

static void bm_read_csr(bs_state *st, const void *arg)
{
    (void)arg;
    const pt_dataset *ds = sparse_data(st);
    if (!ds) return;
    uint64_t sink = 0;
    size_t bytes = 0;
    double t0 = bt_now();
    while (bs_keep_running(st)) sink |= read_csr(ds, &bytes);
    double el = bt_now() - t0;
    bs_do_not_optimize(sink);
    double total = (double)bytes * (double)bs_iterations(st);
    bs_set_bytes_processed(st, (int64_t)total);
    bs_counter(st, "GB/s", total / 1e9, BS_RATE);
    bt_baseline_put("read/rcv1like/t1", total / el / 1e9);
}

/* The baseline's median, or (a run filtered to one benchmark) a short loop now. */
static double read_gbps(const pt_dataset *ds)
{
    double g = bt_baseline("read/rcv1like/t1");
    if (g > 0) return g;
    size_t bytes = 0;
    uint64_t sink = read_csr(ds, &bytes);
    double t0 = bt_now();
    for (int i = 0; i < 10; i++) sink |= read_csr(ds, &bytes);
    double el = bt_now() - t0;
    bs_do_not_optimize(sink);
    return 10.0 * (double)bytes / el / 1e9;
}

typedef struct sparse_case {
    pt_isa isa;
    pt_variant variant;
    int shuffle;
} sparse_case;

static sparse_case cases[4 * 3];

static void bm_sparse_epoch(bs_state *st, const void *arg)
{
    const sparse_case *c = arg;
    const pt_dataset *ds = sparse_data(st);
    if (!ds) return;
    pt_train_params p;
    pt_train_params_init(&p);
    p.isa = c->isa;
    p.variant = c->variant;
    p.shuffle = c->shuffle;
    p.threads = 1;
    p.epochs = bs_smoke() ? 2 : EPOCHS;
    bt_epoch_clock clk;
    p.progress = bt_on_epoch;
    p.progress_user = &clk;
    double steady_sum = 0, mistakes = 0;
    int epochs = 0;
    while (bs_keep_running(st)) {
        pt_model *m = NULL;
        pt_train_report rep = {0};
        pt_status s = pt_train(ds, &p, &m, &rep);
        if (s != PT_OK) {
            bt_skip(st, s, "online path on sparse data");
            pt_model_free(m);
            pt_train_report_clear(&rep);
            break;
        }
        int e = rep.epochs_run < EPOCHS ? rep.epochs_run : EPOCHS;
        double steady = bt_steady_epoch(&clk, e);
        for (int i = 1; i < e; i++) mistakes += (double)clk.mistakes[i];
        epochs += e >= 2 ? e - 1 : 1;
        steady_sum += steady;
        bs_set_iteration_time(st, steady);
        pt_model_free(m);
        pt_train_report_clear(&rep);
    }
    if (bs_error_occurred(st)) return;
    const double it = (double)bs_iterations(st), bytes = (double)csr_bytes(ds);
    bs_counter(st, "samples/s", (double)pt_dataset_n(ds) * it, BS_RATE);
    bs_counter(st, "GB/s", bytes * it / 1e9, BS_RATE);
    bs_set_bytes_processed(st, (int64_t)(bytes * it));
    bs_counter(st, "vs_read", bytes / (steady_sum / it) / 1e9 / read_gbps(ds), BS_PLAIN);
    bs_counter(st, "steady_mistakes", epochs ? mistakes / epochs : 0, BS_PLAIN);
}

/* One pass of the ISA's dot_rows over every row, w fixed (entries in [-0.5, 0.5)). */
static void bm_sparse_scores(bs_state *st, const void *arg)
{
    const sparse_case *c = arg;
    const pt_dataset *ds = sparse_data(st);
    if (!ds) return;
    const pt_kernels *k;
    pt_status s = pt_kernels_get(c->isa, &k);
    const size_t n = pt_dataset_n(ds), d = pt_dataset_d(ds);
    float *w = s == PT_OK ? bt_alloc_touched(d * sizeof *w) : NULL;
    float *out = w ? bt_alloc_touched(n * sizeof *out) : NULL;
    if (!out) {
        while (bs_keep_running(st)) {}
        if (s != PT_OK) bt_skip(st, s, "pt_kernels_get");
        else bs_skip_with_error(st, "out of memory");
        free(w);
        return;
    }
    for (size_t j = 0; j < d; j++) w[j] = (float)((j * 7) % 13) / 13.0f - 0.5f;
    const uint64_t *rowptr;
    const uint32_t *col;
    const float *val;
    pt_dataset_csr(ds, &rowptr, &col, &val);
    double pass_sum = 0;
    while (bs_keep_running(st)) {
        double t0 = bt_now();
        k->sparse->dot_rows(w, rowptr, col, val, n, out);
        bs_clobber_memory();
        double pass = bt_now() - t0;
        pass_sum += pass;
        bs_set_iteration_time(st, pass);
    }
    bs_do_not_optimize(out[n / 2]);
    free(w);
    free(out);
    const double it = (double)bs_iterations(st), bytes = (double)csr_bytes(ds);
    bs_counter(st, "samples/s", (double)n * it, BS_RATE);
    bs_counter(st, "GB/s", bytes * it / 1e9, BS_RATE);
    bs_set_bytes_processed(st, (int64_t)(bytes * it));
    bs_counter(st, "vs_read", bytes / (pass_sum / it) / 1e9 / read_gbps(ds), BS_PLAIN);
}

/* The gathers' floor (online/sparse_gathers): sum_k w[col[k]] val[k] over all the set's
 * non-zeros in one flat loop, four independent chains of 16-lane hardware gathers (AVX-512;
 * eight scalar chains without it), no rows, no decisions, no updates: what reading every
 * non-zero's entry of w costs on this CPU, under any exact online epoch, whose every row's dot
 * needs those entries. */
__attribute__((target("avx512f"))) static float gathers_avx512(const float *w, const uint32_t *col,
                                                                const float *val, size_t nnz)
{
    __m512 a = _mm512_setzero_ps(), b = a, c = a, d = a;
    size_t k = 0;
    for (; k + 64 <= nnz; k += 64) {
        a = _mm512_fmadd_ps(_mm512_i32gather_ps(_mm512_loadu_si512(col + k), w, 4),
                            _mm512_loadu_ps(val + k), a);
        b = _mm512_fmadd_ps(_mm512_i32gather_ps(_mm512_loadu_si512(col + k + 16), w, 4),
                            _mm512_loadu_ps(val + k + 16), b);
        c = _mm512_fmadd_ps(_mm512_i32gather_ps(_mm512_loadu_si512(col + k + 32), w, 4),
                            _mm512_loadu_ps(val + k + 32), c);
        d = _mm512_fmadd_ps(_mm512_i32gather_ps(_mm512_loadu_si512(col + k + 48), w, 4),
                            _mm512_loadu_ps(val + k + 48), d);
    }
    float s = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a, b), _mm512_add_ps(c, d)));
    for (; k < nnz; k++) s += w[col[k]] * val[k];
    return s;
}

static float gathers_scalar(const float *w, const uint32_t *col, const float *val, size_t nnz)
{
    float s[8] = {0};
    size_t k = 0;
    for (; k + 8 <= nnz; k += 8)
        for (int j = 0; j < 8; j++) s[j] += w[col[k + j]] * val[k + j];
    for (; k < nnz; k++) s[0] += w[col[k]] * val[k];
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

static void bm_sparse_gathers(bs_state *st, const void *arg)
{
    (void)arg;
    const pt_dataset *ds = sparse_data(st);
    if (!ds) return;
    const size_t d = pt_dataset_d(ds), nnz = pt_dataset_nnz(ds);
    float *w = bt_alloc_touched(d * sizeof *w);
    if (!w) {
        while (bs_keep_running(st)) {}
        bs_skip_with_error(st, "out of memory");
        return;
    }
    for (size_t j = 0; j < d; j++) w[j] = (float)((j * 7) % 13) / 13.0f - 0.5f;
    const uint64_t *rowptr;
    const uint32_t *col;
    const float *val;
    pt_dataset_csr(ds, &rowptr, &col, &val);
    __builtin_cpu_init();
    const bool avx512 = __builtin_cpu_supports("avx512f");
    float sink = 0.0f;
    while (bs_keep_running(st)) {
        double t0 = bt_now();
        sink += avx512 ? gathers_avx512(w, col, val, nnz) : gathers_scalar(w, col, val, nnz);
        bs_clobber_memory();
        bs_set_iteration_time(st, bt_now() - t0);
    }
    bs_do_not_optimize(sink);
    free(w);
    const double it = (double)bs_iterations(st);
    bs_counter(st, "Gnnz/s", (double)nnz * it / 1e9, BS_RATE);
    bs_counter(st, "avx512", avx512 ? 1.0 : 0.0, BS_PLAIN);
}

/* Full-batch iterations (batch path, squared loss, last iterate, no early stop), 1 thread:
 * the mean of iterations 2.. as for the epochs above. */
static void bm_sparse_batch(bs_state *st, const void *arg)
{
    const sparse_case *c = arg;
    const pt_dataset *ds = sparse_data(st);
    if (!ds) return;
    pt_train_params p;
    pt_train_params_init(&p);
    p.path = PT_PATH_BATCH;
    p.batch.loss = PT_LOSS_SQUARED;
    p.eta = 0.1f;
    p.batch.size = 0;
    p.batch.average_iterates = 0;
    p.batch.tol = 0.0;
    p.isa = c->isa;
    p.threads = 1;
    p.epochs = bs_smoke() ? 2 : EPOCHS;
    bt_epoch_clock clk;
    p.progress = bt_on_epoch;
    p.progress_user = &clk;
    double iter_sum = 0;
    while (bs_keep_running(st)) {
        pt_model *m = NULL;
        pt_train_report rep = {0};
        pt_status s = pt_train(ds, &p, &m, &rep);
        if (s != PT_OK) {
            bt_skip(st, s, "batch path on sparse data");
            pt_model_free(m);
            pt_train_report_clear(&rep);
            break;
        }
        int e = rep.epochs_run < EPOCHS ? rep.epochs_run : EPOCHS;
        double iter = bt_steady_epoch(&clk, e);
        iter_sum += iter;
        bs_set_iteration_time(st, iter);
        pt_model_free(m);
        pt_train_report_clear(&rep);
    }
    if (bs_error_occurred(st)) return;
    const double it = (double)bs_iterations(st), bytes = (double)csr_bytes(ds);
    bs_counter(st, "samples/s", (double)pt_dataset_n(ds) * it, BS_RATE);
    bs_counter(st, "GB/s", bytes * it / 1e9, BS_RATE);
    bs_set_bytes_processed(st, (int64_t)(bytes * it));
    bs_counter(st, "vs_read", bytes / (iter_sum / it) / 1e9 / read_gbps(ds), BS_PLAIN);
}

static sparse_case batch_cases[4], score_cases[4];

void bt_register_sparse_online(void)
{
    bs_bench *b = bs_register("baseline/read/data:rcv1like", bm_read_csr, NULL);
    bs_use_real_time(bs_threads(b, 1));
    bs_min_time(b, 0.3);
    pt_isa isas[4];
    int nisa = bt_isas(isas), nc = 0;
    static const struct {
        pt_variant variant;
        int shuffle;
        const char *name;
    } kinds[] = {{PT_VARIANT_CLASSIC, 0, "classic"},
                 {PT_VARIANT_AVERAGED, 0, "averaged"},
                 {PT_VARIANT_CLASSIC, 1, "classic_shuffled"}};
    char name[128];
    for (int i = 0; i < nisa; i++)
        for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
            sparse_case *c = &cases[nc++];
            c->isa = isas[i];
            c->variant = kinds[k].variant;
            c->shuffle = kinds[k].shuffle;
            snprintf(name, sizeof name,
                     "online/sparse_epoch/isa:%s/variant:%s/data:rcv1like/threads:1",
                     pt_isa_name(c->isa), kinds[k].name);
            b = bs_register(name, bm_sparse_epoch, c);
            bs_use_manual_time(b);
            /* a fixed count: each iteration trains several epochs but reports one */
            bs_iterations_fixed(b, 3);
            bs_time_unit(b, BS_MS);
        }
    for (int i = 0; i < nisa; i++) {
        sparse_case *c = &score_cases[i];
        c->isa = isas[i];
        snprintf(name, sizeof name, "online/sparse_scores/isa:%s/data:rcv1like/threads:1",
                 pt_isa_name(c->isa));
        b = bs_register(name, bm_sparse_scores, c);
        bs_use_manual_time(b);
        bs_time_unit(b, BS_MS);
    }
    b = bs_register("online/sparse_gathers/data:rcv1like/threads:1", bm_sparse_gathers, NULL);
    bs_use_manual_time(b);
    bs_time_unit(b, BS_MS);
    for (int i = 0; i < nisa; i++) {
        sparse_case *c = &batch_cases[i];
        c->isa = isas[i];
        snprintf(name, sizeof name,
                 "batch/sparse_iteration/isa:%s/loss:squared/data:rcv1like/threads:1",
                 pt_isa_name(c->isa));
        b = bs_register(name, bm_sparse_batch, c);
        bs_use_manual_time(b);
        bs_iterations_fixed(b, 3);
        bs_time_unit(b, BS_MS);
    }
}
