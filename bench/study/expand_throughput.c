/*
 * Expansion throughput against a memory-bandwidth baseline measured in the same run.
 *
 *   cc -O3 -std=gnu11 -fopenmp -Isrc -Iinclude -I/usr/include/x86_64-linux-gnu/openblas-openmp \
 *      bench/study/expand_throughput.c BUILD/src/libptron.a BUILD/src/libptron_avx2.a \
 *      BUILD/src/libptron_avx512.a -lopenblas -lxxhash -lm -o /tmp/expand_throughput
 *   OMP_NUM_THREADS=1 /tmp/expand_throughput      (then OMP_NUM_THREADS=2)
 *
 * For each case: one output buffer of about 256 MiB, touched once before timing (first touch
 * costs ~1-3.5 s/GB here and is reported apart), then the median of 5 runs of
 *   - memset over the buffer, and a loop of streaming stores (the compiler's vector stores)
 *   - the block expander writing every row into the buffer (materialisation)
 *   - the row expander writing into one L1/L2-resident row (what the streamed path produces)
 * in output GB/s (padded rows, as stored). Threads: OMP_NUM_THREADS over row blocks.
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "features/expand.h"

#define REPS 5

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return v[n / 2];
}

static void store_loop(float *restrict b, size_t n, float v)
{
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) b[i] = v;
}

static void memset_par(float *b, size_t n)
{
#pragma omp parallel
    {
        int t = omp_get_thread_num(), T = omp_get_num_threads();
        size_t lo = n * (size_t)t / (size_t)T, hi = n * (size_t)(t + 1) / (size_t)T;
        memset(b + lo, 0, (hi - lo) * sizeof(float));
    }
}

static void expand_all(const pt_expander *e, const float *X, size_t ldx, size_t n, float *out,
                       size_t ldo, size_t B)
{
#pragma omp parallel for schedule(dynamic)
    for (size_t i0 = 0; i0 < n; i0 += B) {
        size_t rows = n - i0 < B ? n - i0 : B;
        pt_expander_block(e, X + i0 * ldx, ldx, rows, out + i0 * ldo, ldo);
    }
}

/* The kernel table of this run (PTRON_ISA chooses, as for ptron). */
static const pt_kernels *kernels(void)
{
    const pt_kernels *k = NULL;
    if (pt_kernels_get(PT_ISA_AUTO, &k) != PT_OK) {
        fprintf(stderr, "%s\n", pt_last_error());
        exit(1);
    }
    return k;
}

static void run_case(const char *name, pt_expand_params *p, size_t d)
{
    pt_expander *e;
    if (pt_expander_create(p, d, kernels(), &e) != PT_OK) {
        fprintf(stderr, "%s\n", pt_last_error());
        exit(1);
    }
    size_t dim = pt_expander_d_out(e), so = pt_stride_for(dim), si = pt_stride_for(d);
    size_t n = ((size_t)256 << 20) / (so * sizeof(float));
    size_t bytes = n * so * sizeof(float);
    float *X = pt_alloc(n * si * sizeof(float), "x");
    srand(1);
    for (size_t i = 0; i < n * si; i++) X[i] = (i % si) < d ? (float)rand() / RAND_MAX * 2 - 1 : 0;
    float *out = pt_alloc(bytes, "out");
    double t0 = pt_now();
    memset_par(out, n * so);
    double first = pt_now() - t0;

    /* rows per block: about 512 KiB of output, as the library does */
    size_t B = ((size_t)512 << 10) / (so * sizeof(float));
    if (B < 1) B = 1;
    if (B > 256) B = 256;
    double tm[REPS], ts[REPS], te[REPS], tr[REPS];
    float *row = pt_alloc(so * sizeof(float), "row");
    size_t nrow = n < 20000 ? n : 20000;
    for (int r = 0; r < REPS; r++) {
        t0 = pt_now();
        memset_par(out, n * so);
        tm[r] = pt_now() - t0;
        t0 = pt_now();
        store_loop(out, n * so, (float)r);
        ts[r] = pt_now() - t0;
        t0 = pt_now();
        expand_all(e, X, si, n, out, so, B);
        te[r] = pt_now() - t0;
        t0 = pt_now();
        for (size_t i = 0; i < nrow; i++) pt_expander_row(e, X + i * si, row);
        tr[r] = pt_now() - t0;
    }
    double gm = bytes / median(tm, REPS) / 1e9, gs = bytes / median(ts, REPS) / 1e9;
    double ge = bytes / median(te, REPS) / 1e9;
    double gr = (double)nrow * so * sizeof(float) / median(tr, REPS) / 1e9;
    printf("%-22s d=%-3zu dim=%-6zu rows=%-7zu %4.0f MiB  threads=%d  memset %5.1f GB/s  stores "
           "%5.1f GB/s  expand %5.1f GB/s (%.2f of memset)  row-stream %5.1f GB/s  first touch "
           "%.2f s/GB\n",
           name, d, dim, n, bytes / 1048576.0, omp_get_max_threads(), gm, gs, ge, ge / gm, gr,
           first / (bytes / 1e9));
    pt_free(row);
    pt_free(out);
    pt_free(X);
    pt_expander_free(e);
}

/* The RFF cosine: the vectorised polynomial against libm cosf, on one L1-resident row. */
static void cos_case(void)
{
    enum { N = 1024, REP = 20000 };
    static float v[N], add[N], w[N];
    for (int i = 0; i < N; i++) v[i] = (float)(i * 0.37 - 150), add[i] = 0.1f;
    double t0 = pt_now();
    for (int r = 0; r < REP; r++) {
        memcpy(w, v, sizeof w);
        kernels()->expand->cos(w, add, N, 0.5f);
    }
    double tp = pt_now() - t0;
    volatile float sink = 0;
    t0 = pt_now();
    for (int r = 0; r < REP; r++) {
        memcpy(w, v, sizeof w);
        for (int i = 0; i < N; i++) w[i] = 0.5f * cosf(w[i] + add[i]);
        sink += w[r % N];
    }
    double tl = pt_now() - t0;
    printf("cos on 1024 floats: polynomial %.2f ns/value, libm cosf %.2f ns/value (%.1fx)\n",
           tp / REP / N * 1e9, tl / REP / N * 1e9, tl / tp);
}

int main(void)
{
    pt_expand_params p;
    pt_expand_params_init(&p);
    p.degree = 2;
    run_case("poly D=2", &p, 32);
    p.degree = 3;
    run_case("poly D=3", &p, 32);
    p.kind = PT_EXPAND_RFF;
    p.rff_dim = 1024;
    p.gamma = 0.1f;
    run_case("rff D=1024", &p, 16);
    cos_case();
    return 0;
}
