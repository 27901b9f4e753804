/*
 * What the benchmark files share: cached datasets, a temporary directory, the in-run baselines
 * and a few helpers. Benchmark names are "group/what/key:value/...", which
 * scripts/bench-report parses; every figure is a counter (GB/s, GFLOP/s, samples/s) and,
 * where it has one, a ratio to a baseline measured in the same run ("vs_read", "vs_blas", ...).
 */
#ifndef PT_BENCH_H
#define PT_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "ptron.h"
#include "kernels/kernels.h"
#include "shim/bench_shim.h"

/* The datasets of the suite, generated once and kept for the whole run. */
typedef enum bt_data {
    BT_SEP_BIG,   /* separable 200,000 x 256, seed 1: 205 MB, far out of cache */
    BT_SEP_SMALL, /* separable 2,000 x 256, seed 1: 2 MB, in L3 */
    BT_CIRCLE,    /* circle 4,000 x 16, seed 1: the kernel path's RBF case */
    BT_SEP_GRAM,  /* separable 4,000 x 256, seed 1: Gram builds take their first n rows */
    BT_SEP_EXPAND,/* separable 20,000 x 32, seed 1: polynomial expansion input */
    BT_NDATA
} bt_data;

/* The dataset (generated on first use; smaller in smoke mode). NULL after a failure, with the
 * message in *err. */
const pt_dataset *bt_dataset(bt_data which, const char **err);
const char *bt_data_name(bt_data which);
/* bt_dataset for a benchmark: on a failure, the benchmark is drained and skipped with the
 * message, and NULL returned (the caller returns). */
const pt_dataset *bt_dataset_or_skip(bs_state *st, bt_data which);

/* A pt_train call's epochs as its progress callback sees them: bt_on_epoch, with the clock as
 * progress_user, keeps each epoch's end time (seconds from the call's start) and mistakes, for
 * the first BT_MAX_EPOCHS epochs. */
#define BT_MAX_EPOCHS 16
typedef struct bt_epoch_clock {
    double t[BT_MAX_EPOCHS];
    size_t mistakes[BT_MAX_EPOCHS];
} bt_epoch_clock;
int bt_on_epoch(int epoch, size_t mistakes, double seconds, void *clock);
/* The mean epoch past the first of a call that ran `epochs` (the first alone when only one ran:
 * the steady epoch, without the first's allocations and first touch). */
double bt_steady_epoch(const bt_epoch_clock *c, int epochs);
/* Bytes of the padded matrix. */
size_t bt_bytes(const pt_dataset *ds);

/* Scale a size for smoke mode: n itself normally, n / div (at least lo) in smoke mode. */
size_t bt_scale(size_t n, size_t div, size_t lo);

/* A directory for the suite's files, created on first use, removed with its files at exit. */
const char *bt_tmpdir(void);

/* Monotonic seconds. */
double bt_now(void);

/* 64-byte aligned (2 MiB and huge-page advice when large) and touched once, so timed loops
 * never pay first touch. Freed with free(). NULL on failure. */
void *bt_alloc_touched(size_t bytes);

/* The ISAs this machine runs, best last; returns how many. */
int bt_isas(pt_isa out[4]);

/* ------------------------------------------------------------------ baselines */

/* Every repetition of a baseline records its figure under a key ("read/big/t2" in GB/s);
 * bt_baseline returns the median of what was recorded, or 0 when nothing was. */
void bt_baseline_put(const char *key, double value);
double bt_baseline(const char *key);

/* The streaming-read loop: reads bytes at p (a multiple of 256) and returns a value depending on
 * all of it. The widest vector reads the machine has, several independent accumulators, integer
 * OR so no FP latency chain limits it. */
uint64_t bt_read(const void *p, size_t bytes);

/* Read bandwidth (GB/s) of dataset which's matrix on threads threads: the in-run baseline's
 * median when it ran, else measured now (a short loop, for runs filtered to one benchmark). */
double bt_read_gbps(bt_data which, int threads);

/* Seconds of one OpenBLAS sgemv (trans 0: X w, 1: X^T y) on the big matrix on threads threads:
 * the in-run baseline's median, else measured now. */
double bt_sgemv_seconds(int trans, int threads);

/* Set OpenBLAS and OpenMP threads; returns the previous OpenBLAS count for bt_threads_restore. */
int bt_threads_set(int threads);
void bt_threads_restore(int old);

/* End a benchmark that cannot run: bs_skip_with_error with "what: <pt_last_error()>" (a smoke
 * run fails on it). */
void bt_skip(bs_state *st, pt_status s, const char *what);

/* The registration of each file. */
void bt_register_baselines(void);
void bt_register_kernels(void);
void bt_register_online(void);
void bt_register_batch(void);
void bt_register_gram(void);
void bt_register_expansion(void);
void bt_register_loading(void);
void bt_register_sparse_online(void);
void bt_register_compact(void);

#endif /* PT_BENCH_H */
