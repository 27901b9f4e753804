/*
 * Google Benchmark for C: the benchmark bodies of bench/ are C and see only this header; one
 * C++ file (bench_shim.cc) implements it over benchmark::State and benchmark::Benchmark.
 *
 * A body:
 *
 *     static void bm_dot(bs_state *st, const void *arg)
 *     {
 *         size_t d = (size_t)bs_range(st, 0);
 *         while (bs_keep_running(st)) bs_do_not_optimize(k->dot(a, b, d));
 *         bs_counter(st, "FLOP/s", 2.0 * d * bs_iterations(st), BS_RATE);
 *     }
 *
 * registered from main between bs_init and bs_run:
 *
 *     bs_range_multiplier(bs_range_args(bs_register("kernel/dot", bm_dot, k), 16, 4096), 4);
 *
 * Every registration function returns its benchmark so calls nest; arg is handed to the body
 * unchanged (the same body registered once per ISA, per case).
 *
 * Smoke mode (--bs_smoke on the command line, or PTRON_BENCH_SMOKE=1): every benchmark runs
 * exactly one iteration, once, whatever the per-benchmark minimum times say, and bodies may
 * ask bs_smoke() to shrink their data. The test suite runs that, so the bench cannot rot.
 */
#ifndef PT_BENCH_SHIM_H
#define PT_BENCH_SHIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bs_state bs_state; /* a benchmark::State */
typedef struct bs_bench bs_bench; /* a benchmark::internal::Benchmark */
typedef void (*bs_fn)(bs_state *st, const void *arg);

/* ---------------------------------------------------------------------- main */

/* Parse and remove the benchmark flags (and --bs_smoke) from argv. Call first. */
void bs_init(int *argc, char **argv);
/* 1 in smoke mode (see above). */
int bs_smoke(void);
/* A key/value pair for the "context" of the JSON output (machine facts, settings). */
void bs_add_context(const char *key, const char *value);
/* Run the registered benchmarks that match --benchmark_filter, then shut the library down.
 * Returns 0; 1 if argv still holds arguments nobody recognised, or if a smoke run had an error
 * (see bs_skip_with_error). */
int bs_run(int argc, char **argv);

/* --------------------------------------------------------------------- state */

/* The timing loop: while (bs_keep_running(st)) { one iteration }. */
int bs_keep_running(bs_state *st);
/* The same, n iterations per call (for bodies of a few nanoseconds: the call through the shim
 * is then paid once per n). The body must run n iterations per true return. */
int bs_keep_running_batch(bs_state *st, int64_t n);
/* The i-th argument of this instance (state->range(i)). */
int64_t bs_range(const bs_state *st, size_t i);
/* Iterations run so far (after the loop: all of them, of this thread). */
int64_t bs_iterations(const bs_state *st);
/* Thread index in 0..bs_num_threads() - 1, and the number of threads running this body. */
int bs_thread_index(const bs_state *st);
int bs_num_threads(const bs_state *st);

void bs_pause_timing(bs_state *st);
void bs_resume_timing(bs_state *st);
/* Report the benchmark as failed with msg (it shows in the output and the JSON "error_message"
 * field) and end its timing loop: the body should return after its loop. A smoke run then
 * exits 1. */
void bs_skip_with_error(bs_state *st, const char *msg);
int bs_error_occurred(const bs_state *st);
/* With bs_use_manual_time: the time of the current iteration, in seconds. */
void bs_set_iteration_time(bs_state *st, double seconds);

/* Totals over all iterations of this thread; reported per second as bytes_per_second and
 * items_per_second. */
void bs_set_bytes_processed(bs_state *st, int64_t bytes);
void bs_set_items_processed(bs_state *st, int64_t items);
void bs_set_label(bs_state *st, const char *label);

/* Counter flags: the values of benchmark::Counter::Flags. */
enum {
    BS_PLAIN = 0,                 /* reported as given (summed over threads) */
    BS_RATE = 1,                  /* divided by the benchmark's time: a per-second rate */
    BS_AVG_THREADS = 2,           /* divided by the number of threads */
    BS_ITER_INVARIANT = 4,        /* multiplied by the iterations */
    BS_AVG_ITERATIONS = 8,        /* divided by the iterations */
    BS_INVERT = (int)(1u << 31)   /* inverted, last */
};

/* A user counter. A rate counter takes the total over all iterations of this thread
 * (bs_counter(st, "FLOP/s", flops_per_iter * bs_iterations(st), BS_RATE)); a plain counter is a
 * value such as a ratio to a baseline. */
void bs_counter(bs_state *st, const char *name, double value, int flags);

/* -------------------------------------------------------------- registration */

bs_bench *bs_register(const char *name, bs_fn fn, const void *arg);
bs_bench *bs_arg(bs_bench *b, int64_t x);
/* One instance with n arguments (state->range(0..n-1)). */
bs_bench *bs_args(bs_bench *b, size_t n, const int64_t *v);
/* Instances for lo, lo * mult, ..., hi (mult from bs_range_multiplier, default 8). */
bs_bench *bs_range_args(bs_bench *b, int64_t lo, int64_t hi);
bs_bench *bs_range_multiplier(bs_bench *b, int mult);
bs_bench *bs_dense_range(bs_bench *b, int64_t lo, int64_t hi, int step);
/* Names of the arguments in the benchmark's name ("kernel/dot/d:256"). */
bs_bench *bs_arg_names(bs_bench *b, size_t n, const char *const *names);
/* Run the body on t threads at once (call once per count wanted). */
bs_bench *bs_threads(bs_bench *b, int t);
bs_bench *bs_use_real_time(bs_bench *b);
bs_bench *bs_use_manual_time(bs_bench *b);
/* Seconds of running (and of warm-up before it) per repetition; ignored in smoke mode. */
bs_bench *bs_min_time(bs_bench *b, double seconds);
bs_bench *bs_min_warmup_time(bs_bench *b, double seconds);
bs_bench *bs_iterations_fixed(bs_bench *b, int64_t n);

enum { BS_NS = 0, BS_US = 1, BS_MS = 2, BS_S = 3 };
bs_bench *bs_time_unit(bs_bench *b, int unit);

/* ------------------------------------------------------------ optimisation fences */

/* Keep a value (or what a pointer points to) alive, as benchmark::DoNotOptimize. */
#define bs_do_not_optimize(v) __asm__ volatile("" : : "r,m"(v) : "memory")
/* Make the compiler assume all memory may have been read and written. */
#define bs_clobber_memory() __asm__ volatile("" : : : "memory")

#ifdef __cplusplus
}
#endif
#endif /* PT_BENCH_SHIM_H */
