/* Shared pieces of the suite: dataset cache, temporary directory, baselines, read loop. */
#include <ftw.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cblas.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "bench.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

double bt_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

size_t bt_scale(size_t n, size_t div, size_t lo)
{
    if (!bs_smoke()) return n;
    n /= div;
    return n < lo ? lo : n;
}

void *bt_alloc_touched(size_t bytes)
{
    size_t align = bytes >= ((size_t)4 << 20) ? ((size_t)2 << 20) : 64;
    size_t len = (bytes + align - 1) / align * align;
    void *p = NULL;
    if (posix_memalign(&p, align, len ? len : align) != 0) return NULL;
#ifdef MADV_HUGEPAGE
    if (align > 64) madvise(p, len, MADV_HUGEPAGE);
#endif
    memset(p, 0, len);
    return p;
}

int bt_isas(pt_isa out[4])
{
    static const pt_isa all[] = {PT_ISA_SCALAR, PT_ISA_NEON, PT_ISA_AVX2, PT_ISA_AVX512};
    int n = 0;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (pt_isa_available(all[i])) out[n++] = all[i];
    return n;
}

int bt_threads_set(int threads)
{
    int old = openblas_get_num_threads();
    openblas_set_num_threads(threads);
#ifdef _OPENMP
    omp_set_num_threads(threads);
#endif
    return old;
}

void bt_threads_restore(int old)
{
    openblas_set_num_threads(old);
#ifdef _OPENMP
    omp_set_num_threads(old);
#endif
}

void bt_skip(bs_state *st, pt_status s, const char *what)
{
    char msg[768];
    const char *e = pt_last_error();
    snprintf(msg, sizeof msg, "%s: %s", what, e && *e ? e : pt_strerror(s));
    bs_skip_with_error(st, msg);
}

/* ---------------------------------------------------------------------- datasets */

static const struct {
    const char *name;
    pt_gen_kind kind;
    size_t n, d, smoke_n;
} specs[BT_NDATA] = {
    [BT_SEP_BIG] = {"big", PT_GEN_SEPARABLE, 200000, 256, 2000},
    [BT_SEP_SMALL] = {"small", PT_GEN_SEPARABLE, 2000, 256, 500},
    [BT_CIRCLE] = {"circle", PT_GEN_CIRCLE, 4000, 16, 256},
    [BT_SEP_GRAM] = {"gram", PT_GEN_SEPARABLE, 4000, 256, 256},
    [BT_SEP_EXPAND] = {"expand", PT_GEN_SEPARABLE, 20000, 32, 200},
};

static pt_dataset *cache[BT_NDATA];
static char cache_err[BT_NDATA][256];

const char *bt_data_name(bt_data which) { return specs[which].name; }

size_t bt_bytes(const pt_dataset *ds)
{
    return pt_dataset_n(ds) * pt_dataset_stride(ds) * sizeof(float);
}

const pt_dataset *bt_dataset(bt_data which, const char **err)
{
    pthread_mutex_lock(&lock);
    if (!cache[which] && !cache_err[which][0]) {
        pt_gen_params gp;
        pt_gen_params_init(&gp);
        gp.kind = specs[which].kind;
        gp.n = bs_smoke() ? specs[which].smoke_n : specs[which].n;
        gp.d = specs[which].d;
        gp.seed = 1;
        if (pt_generate(&gp, &cache[which]) != PT_OK)
            snprintf(cache_err[which], sizeof cache_err[which], "generating %s: %s",
                     specs[which].name, pt_last_error());
    }
    const pt_dataset *ds = cache[which];
    if (err) *err = cache_err[which];
    pthread_mutex_unlock(&lock);
    return ds;
}

/* ---------------------------------------------------------------- temporary dir */

static char tmpdir[4096];

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void tmpdir_cleanup(void)
{
    if (tmpdir[0]) nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

const char *bt_tmpdir(void)
{
    pthread_mutex_lock(&lock);
    if (!tmpdir[0]) {
        const char *base = getenv("TMPDIR");
        snprintf(tmpdir, sizeof tmpdir, "%s/ptron-bench-XXXXXX", base && *base ? base : "/tmp");
        if (mkdtemp(tmpdir)) atexit(tmpdir_cleanup);
        else tmpdir[0] = 0;
    }
    pthread_mutex_unlock(&lock);
    return tmpdir[0] ? tmpdir : NULL;
}

/* ---------------------------------------------------------------------- baselines */

#define MAX_KEYS 128
#define MAX_VALUES 64

static struct {
    char key[64];
    double v[MAX_VALUES];
    int n;
} baselines[MAX_KEYS];
static int nbaselines;

void bt_baseline_put(const char *key, double value)
{
    if (!(value > 0) || !isfinite(value)) return;
    pthread_mutex_lock(&lock);
    int i = 0;
    while (i < nbaselines && strcmp(baselines[i].key, key) != 0) i++;
    if (i == nbaselines && nbaselines < MAX_KEYS) {
        snprintf(baselines[i].key, sizeof baselines[i].key, "%s", key);
        baselines[i].n = 0;
        nbaselines++;
    }
    if (i < nbaselines && baselines[i].n < MAX_VALUES) baselines[i].v[baselines[i].n++] = value;
    pthread_mutex_unlock(&lock);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bt_baseline(const char *key)
{
    double med = 0.0, v[MAX_VALUES];
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nbaselines; i++)
        if (strcmp(baselines[i].key, key) == 0 && baselines[i].n > 0) {
            int n = baselines[i].n;
            memcpy(v, baselines[i].v, (size_t)n * sizeof v[0]);
            qsort(v, (size_t)n, sizeof v[0], cmp_double);
            med = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
        }
    pthread_mutex_unlock(&lock);
    return med;
}

/* ---------------------------------------------------------------- the read loop */

#if defined(__x86_64__)
__attribute__((target("avx512f"))) static uint64_t read_avx512(const char *p, size_t bytes)
{
    __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
    for (size_t i = 0; i < bytes; i += 256) {
        a0 = _mm512_or_si512(a0, _mm512_load_si512((const void *)(p + i)));
        a1 = _mm512_or_si512(a1, _mm512_load_si512((const void *)(p + i + 64)));
        a2 = _mm512_or_si512(a2, _mm512_load_si512((const void *)(p + i + 128)));
        a3 = _mm512_or_si512(a3, _mm512_load_si512((const void *)(p + i + 192)));
    }
    a0 = _mm512_or_si512(_mm512_or_si512(a0, a1), _mm512_or_si512(a2, a3));
    return (uint64_t)_mm512_reduce_or_epi64(a0);
}

__attribute__((target("avx2"))) static uint64_t read_avx2(const char *p, size_t bytes)
{
    __m256i a[8];
    for (int k = 0; k < 8; k++) a[k] = _mm256_setzero_si256();
    for (size_t i = 0; i < bytes; i += 256)
        for (int k = 0; k < 8; k++)
            a[k] = _mm256_or_si256(a[k], _mm256_load_si256((const __m256i *)(p + i + 32 * k)));
    for (int k = 1; k < 8; k++) a[0] = _mm256_or_si256(a[0], a[k]);
    uint64_t r[4];
    _mm256_storeu_si256((__m256i *)r, a[0]);
    return r[0] | r[1] | r[2] | r[3];
}
#endif

static uint64_t read_plain(const char *p, size_t bytes)
{
    const uint64_t *q = (const uint64_t *)(const void *)p;
    uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    for (size_t i = 0; i < bytes / 8; i += 4) {
        a0 |= q[i];
        a1 |= q[i + 1];
        a2 |= q[i + 2];
        a3 |= q[i + 3];
    }
    return a0 | a1 | a2 | a3;
}

uint64_t bt_read(const void *p, size_t bytes)
{
    /* the pointer is 64-byte aligned (dataset rows are); bytes a multiple of 256 */
    static int which = -1;
    if (which < 0)
        which = pt_isa_available(PT_ISA_AVX512) ? 2 : pt_isa_available(PT_ISA_AVX2) ? 1 : 0;
#if defined(__x86_64__)
    if (which == 2) return read_avx512(p, bytes);
    if (which == 1) return read_avx2(p, bytes);
#endif
    return read_plain(p, bytes);
}

double bt_read_gbps(bt_data which, int threads)
{
    char key[64];
    snprintf(key, sizeof key, "read/%s/t%d", bt_data_name(which), threads);
    double v = bt_baseline(key);
    if (v > 0) return v;
    const pt_dataset *ds = bt_dataset(which, NULL);
    if (!ds) return 0.0;
    /* Not measured in this run (a filtered run): a short loop of our own, median of 5. */
    const char *X = (const char *)pt_dataset_row_const(ds, 0);
    size_t bytes = bt_bytes(ds), part = bytes / (size_t)threads / 256 * 256;
    int passes = bytes < ((size_t)64 << 20) ? 20 : 2;
    double g[5];
    for (int r = 0; r < 5; r++) {
        double t0 = bt_now();
        uint64_t sink = 0;
#pragma omp parallel num_threads(threads) reduction(| : sink)
        {
#ifdef _OPENMP
            size_t t = (size_t)omp_get_thread_num();
#else
            size_t t = 0;
#endif
            for (int k = 0; k < passes; k++) sink |= bt_read(X + t * part, part);
        }
        bs_do_not_optimize(sink);
        g[r] = (double)part * threads * passes / (bt_now() - t0) / 1e9;
    }
    qsort(g, 5, sizeof g[0], cmp_double);
    bt_baseline_put(key, g[2]);
    return g[2];
}

const pt_dataset *bt_dataset_or_skip(bs_state *st, bt_data which)
{
    const char *err;
    const pt_dataset *ds = bt_dataset(which, &err);
    if (!ds) {
        while (bs_keep_running(st)) {}
        bs_skip_with_error(st, err);
    }
    return ds;
}

int bt_on_epoch(int epoch, size_t mistakes, double seconds, void *clock)
{
    bt_epoch_clock *c = clock;
    if (epoch >= 1 && epoch <= BT_MAX_EPOCHS) {
        c->t[epoch - 1] = seconds;
        c->mistakes[epoch - 1] = mistakes;
    }
    return 0;
}

double bt_steady_epoch(const bt_epoch_clock *c, int epochs)
{
    int e = epochs < BT_MAX_EPOCHS ? epochs : BT_MAX_EPOCHS;
    return e >= 2 ? (c->t[e - 1] - c->t[0]) / (e - 1) : c->t[0];
}
