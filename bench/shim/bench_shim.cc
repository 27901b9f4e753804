// The C shim over Google Benchmark (see bench_shim.h). The only C++ in ptron.
#include "bench_shim.h"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

bool smoke = false;
int errors = 0; // benchmarks that ended with bs_skip_with_error

benchmark::State *S(bs_state *st) { return reinterpret_cast<benchmark::State *>(st); }
const benchmark::State *S(const bs_state *st)
{
    return reinterpret_cast<const benchmark::State *>(st);
}
benchmark::internal::Benchmark *B(bs_bench *b)
{
    return reinterpret_cast<benchmark::internal::Benchmark *>(b);
}
bs_bench *C(benchmark::internal::Benchmark *b) { return reinterpret_cast<bs_bench *>(b); }

// The C flags are benchmark::Counter::Flags' values, passed through as they are.
#define SAME_FLAG(c, cc) \
    static_assert(static_cast<unsigned>(c) == static_cast<unsigned>(benchmark::Counter::cc), #c)
SAME_FLAG(BS_RATE, kIsRate);
SAME_FLAG(BS_AVG_THREADS, kAvgThreads);
SAME_FLAG(BS_ITER_INVARIANT, kIsIterationInvariant);
SAME_FLAG(BS_AVG_ITERATIONS, kAvgIterations);
SAME_FLAG(BS_INVERT, kInvert);

} // namespace

extern "C" {

void bs_init(int *argc, char **argv)
{
    const char *env = std::getenv("PTRON_BENCH_SMOKE");
    smoke = env && *env && std::strcmp(env, "0") != 0;
    // Take --bs_smoke out of argv before the library sees it.
    int out = 1;
    for (int i = 1; i < *argc; i++) {
        if (std::strcmp(argv[i], "--bs_smoke") == 0) smoke = true;
        else argv[out++] = argv[i];
    }
    *argc = out;
    argv[out] = nullptr;
    benchmark::Initialize(argc, argv);
}

int bs_smoke(void) { return smoke; }

void bs_add_context(const char *key, const char *value)
{
    benchmark::AddCustomContext(key, value ? value : "");
}

int bs_run(int argc, char **argv)
{
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    // A smoke run is a test: any benchmark that could not run fails it.
    if (smoke && errors > 0) {
        std::fprintf(stderr, "ptron-bench: %d benchmark%s failed\n", errors, errors == 1 ? "" : "s");
        return 1;
    }
    return 0;
}

int bs_keep_running(bs_state *st) { return S(st)->KeepRunning(); }
int bs_keep_running_batch(bs_state *st, int64_t n) { return S(st)->KeepRunningBatch(n); }
int64_t bs_range(const bs_state *st, size_t i) { return S(st)->range(i); }
int64_t bs_iterations(const bs_state *st) { return S(st)->iterations(); }
int bs_thread_index(const bs_state *st) { return S(st)->thread_index(); }
int bs_num_threads(const bs_state *st) { return S(st)->threads(); }
void bs_pause_timing(bs_state *st) { S(st)->PauseTiming(); }
void bs_resume_timing(bs_state *st) { S(st)->ResumeTiming(); }
void bs_skip_with_error(bs_state *st, const char *msg)
{
    errors++;
    S(st)->SkipWithError(msg);
}
int bs_error_occurred(const bs_state *st) { return S(st)->error_occurred(); }
void bs_set_iteration_time(bs_state *st, double seconds) { S(st)->SetIterationTime(seconds); }
void bs_set_bytes_processed(bs_state *st, int64_t bytes) { S(st)->SetBytesProcessed(bytes); }
void bs_set_items_processed(bs_state *st, int64_t items) { S(st)->SetItemsProcessed(items); }
void bs_set_label(bs_state *st, const char *label) { S(st)->SetLabel(label); }

void bs_counter(bs_state *st, const char *name, double value, int flags)
{
    S(st)->counters[name] =
        benchmark::Counter(value, static_cast<benchmark::Counter::Flags>(flags));
}

bs_bench *bs_register(const char *name, bs_fn fn, const void *arg)
{
    auto *b = benchmark::RegisterBenchmark(
        name, [fn, arg](benchmark::State &st) { fn(reinterpret_cast<bs_state *>(&st), arg); });
    // One iteration, once: the smoke run checks that every body runs, not how fast.
    if (smoke) b->Iterations(1)->Repetitions(1);
    return C(b);
}

bs_bench *bs_arg(bs_bench *b, int64_t x) { return C(B(b)->Arg(x)); }

bs_bench *bs_args(bs_bench *b, size_t n, const int64_t *v)
{
    return C(B(b)->Args(std::vector<int64_t>(v, v + n)));
}

bs_bench *bs_range_args(bs_bench *b, int64_t lo, int64_t hi) { return C(B(b)->Range(lo, hi)); }
bs_bench *bs_range_multiplier(bs_bench *b, int mult) { return C(B(b)->RangeMultiplier(mult)); }

bs_bench *bs_dense_range(bs_bench *b, int64_t lo, int64_t hi, int step)
{
    return C(B(b)->DenseRange(lo, hi, step));
}

bs_bench *bs_arg_names(bs_bench *b, size_t n, const char *const *names)
{
    return C(B(b)->ArgNames(std::vector<std::string>(names, names + n)));
}

bs_bench *bs_threads(bs_bench *b, int t) { return C(B(b)->Threads(t)); }
bs_bench *bs_use_real_time(bs_bench *b) { return C(B(b)->UseRealTime()); }
bs_bench *bs_use_manual_time(bs_bench *b) { return C(B(b)->UseManualTime()); }

// MinTime and Iterations exclude each other: smoke mode has set Iterations(1).
bs_bench *bs_min_time(bs_bench *b, double seconds)
{
    return smoke ? b : C(B(b)->MinTime(seconds));
}

bs_bench *bs_min_warmup_time(bs_bench *b, double seconds)
{
    return smoke ? b : C(B(b)->MinWarmUpTime(seconds));
}

bs_bench *bs_iterations_fixed(bs_bench *b, int64_t n)
{
    return smoke ? b : C(B(b)->Iterations(n));
}

bs_bench *bs_time_unit(bs_bench *b, int unit)
{
    static const benchmark::TimeUnit units[] = {benchmark::kNanosecond, benchmark::kMicrosecond,
                                                benchmark::kMillisecond, benchmark::kSecond};
    return C(B(b)->Unit(units[unit >= 0 && unit <= 3 ? unit : 0]));
}

} // extern "C"
