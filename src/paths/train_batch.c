/* layers: reads rows by form until ported to data/rows.h */
/*
 * The batch subgradient path.
 *
 * Objective: F(w, b) = (1/n) sum_i loss(y_i, m_i) + lambda/2 |w|^2 with m_i = x_i.w + b
 * (b only with p->bias, never regularised). The losses and their subgradient g_i in m_i:
 *     perceptron  max(0, -y m)       g = -y  if y m <= 0
 *     hinge       max(0, 1 - y m)    g = -y  if y m < 1
 *     squared     (m - y)^2 / 2      g = m - y
 * A step on a block of B rows (all n rows: full batch):
 *     w <- (1 - eta_t lambda) w - (eta_t / B) X_B^T g,     b <- b - (eta_t / B) sum(g)
 * with eta_t = eta, eta / sqrt(t), or 1 / (lambda t) (Pegasos, which then projects w onto the
 * ball |w| <= 1/sqrt(lambda) and ignores eta); t counts steps from 1.
 *
 * Two implementations of the pass over a block, giving the same iterates up to rounding:
 *   GEMV   m = X w, then X^T g: two OpenBLAS sgemv calls, so X is read twice.
 *   FUSED  one streaming pass: per row m_i = dot(w, x_i) and, if g_i != 0, acc += g_i x_i
 *          while x_i is still in L1.
 * Both cut the block into chunks whose size depends only on the block and the row length
 * (never on the thread count); each chunk's X^T g goes into its own buffer, and the buffers
 * are summed in chunk order, so w is bit-identical for any number of threads. GEMV runs each
 * chunk's two sgemv calls on one thread (inside the parallel region OpenBLAS does not split
 * them): a threaded sgemv splits its sums by the thread count, so its last bits would depend
 * on it.
 *
 * Compact rows (bf16, u8; dense only) are read as they are stored: FUSED calls the compact
 * dot and axpy on each row (AVX2 and AVX-512 widen it in registers as they load it, the other
 * ISAs into a buffer of len floats per chunk), each the float32 dot and axpy of the widened
 * row; GEMV widens each chunk into a buffer of its rows (one per thread) and runs the same two
 * sgemv calls on it. The widening is exact (the kernel table's, the same floats on every ISA), so
 * both give the iterates of the float32 copy bit for bit while reading 2 or 4 times fewer bytes
 * of X; no float32 copy of the data is made.
 *
 * Sparse (CSR) data has one implementation, whatever impl asks: the fused pass on sparse rows,
 * per row m_i = sparse dot(w, x_i) (a gather) and, if g_i != 0, acc += g_i x_i (a scatter into
 * the chunk's dense buffer), so X is read once and only its non-zeros are touched. Its chunks
 * are cut by non-zeros (a function of the block's rows only), their buffers summed in chunk
 * order as above: the same w for any number of threads.
 *
 * An epoch is one pass over all blocks, in order or in an order shuffled from the seed. The
 * epoch's mistakes (y m <= 0) and objective are counted at the iterate each block saw:
 * (1/n) sum over blocks of (the block's loss + B lambda/2 |w|^2); for full batch that is
 * exactly F(w_t) before step t. Stops: an epoch with no mistake under the perceptron loss
 * (converged; full batch then keeps that w and skips the step), a relative change of the
 * objective below tol, or the epoch limit. With average_iterates the model is the mean of
 * the iterates after each step.
 *
 * A share of a distributed run takes every step with the other ranks: block q of the
 * ceil(n_total / B) blocks is each rank's q-th part of its share (block_rows), the parts'
 * X^T g and counts summed over the ranks (share_block), so every rank takes the same step
 * and holds the same w; np=1 is the plain run.
 */
#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "dist/dist.h"
#include "paths.h"
#include "train_batch.h"

/* Chunks of the fused pass: at least this much of X each, so the fork and the per-chunk
 * buffer are amortised; at most MAX_CHUNKS of them, and their buffers within PART_BUDGET. */
#define CHUNK_MIN_BYTES ((size_t)256 << 10)
#define MAX_CHUNKS 64
#define PART_BUDGET ((size_t)64 << 20)
/* Columns per task when the chunk buffers are summed (a multiple of 16: no tails). */
#define REDUCE_SEG 4096
/* The fused pass prefetches this far ahead of the row it works on, where that pays
 * (fused_prefetch; into all cache levels: the non-temporal hint was much slower on some
 * CPUs). Each row's dot decides a branch, and with the hardware prefetcher alone the pass can
 * fall well short of a plain streaming read of X; prefetching brings it close (bench
 * batch/iteration/impl:fused against baseline/read; any distance from 4 to 32 KiB ahead
 * measured the same within the noise). */
#define PREFETCH_BYTES 8192
/* Rows wider than this (floats) go to gemv under AUTO: w, the chunk's accumulator and the row
 * no longer fit in L2 together, and fused fell below the two sgemv passes at d = 65,536. */
#define FUSED_MAX_LEN 32768

typedef struct batch_run {
    const pt_train_params *p;
    const pt_kernels *k;
    pt_batch_impl impl;
    int threads;
    size_t d, len;
    const float *X, *Y;   /* X: float32 rows (NULL for sparse or compact rows) */
    const pt_dataset *ds; /* the rows when sparse (X is then NULL) */
    const pt_dataset *rows; /* the dataset, either layout: a streamed one's windows follow the
                             * chunks (fetched as a chunk begins, dropped as it ends) */
    const int32_t *C;     /* the rows' classes, for the class weights cw (NULL: none) */
    const float *cw;
    float *w;
    float b;
    float *part;          /* one X^T g accumulator of len floats per chunk */
    pt_batch_eval *cst;   /* per-chunk counts */
    float *mg;            /* gemv: the block's margins, then its g */
    float *wide;          /* compact rows: fused, the compact dot and axpy's buffer (len
                           * floats per chunk); gemv, wide_rows x len floats per thread */
    size_t wide_rows;
    bool u8_one;          /* u8 rows of one divisor (pt_one_divisor, found once) */
    float *avg;           /* average_iterates: mean of the iterates */
    double avg_b;
    pt_crew *crew;        /* fused or sparse, threads > 1: its helper threads (crew.c) */
    /* fused: whether this pass prefetches ahead of its rows (fused_prefetch), and the passes
     * so far */
    bool prefetch;
    size_t passes;
} batch_run;

pt_batch_impl pt_batch_impl_resolve(pt_batch_impl impl, const pt_kernels *k, size_t len)
{
    if (impl != PT_BATCH_AUTO) return impl;
    /* Fused reads X once, near the streaming rate with a SIMD table, where gemv reads it twice
     * (bench batch/iteration: fused against gemv). The scalar dot is one serial accumulator,
     * slower than memory (fused scalar is slower than gemv), and very wide rows spill L2
     * (FUSED_MAX_LEN). */
    return k->isa == PT_ISA_SCALAR || len > FUSED_MAX_LEN ? PT_BATCH_GEMV : PT_BATCH_FUSED;
}

static size_t max_chunks(size_t len)
{
    size_t c = PART_BUDGET / (len * sizeof(float));
    return c < 1 ? 1 : c > MAX_CHUNKS ? MAX_CHUNKS : c;
}

/* Rows per chunk for a block of rows: a function of the block and the row length only. */
static size_t chunk_rows(size_t rows, size_t len)
{
    size_t min_rows = CHUNK_MIN_BYTES / (len * sizeof(float));
    if (min_rows < 1) min_rows = 1;
    size_t nch = (rows + min_rows - 1) / min_rows, cap = max_chunks(len);
    if (nch > cap) nch = cap;
    if (nch < 1) nch = 1;
    return (rows + nch - 1) / nch;
}

/* The most rows a chunk of any block of up to max_rows rows has (chunk_rows is not monotone in
 * the block's rows: below max_chunks chunks, a chunk has at most CHUNK_MIN_BYTES of rows;
 * at max_chunks, at most max_rows / max_chunks rounded up). */
static size_t chunk_rows_max(size_t max_rows, size_t len)
{
    size_t min_rows = CHUNK_MIN_BYTES / (len * sizeof(float)), cap = max_chunks(len);
    size_t most = (max_rows + cap - 1) / cap;
    if (most < min_rows) most = min_rows;
    if (most > max_rows) most = max_rows;
    return most < 1 ? 1 : most;
}

/* Chunks of a sparse block: each at least CHUNK_MIN_BYTES of non-zeros and, since its buffer
 * costs a clear and a reduce of len floats, at least SPARSE_NNZ_PER_COL non-zeros per entry of
 * it; a function of the block's rows only (never of the thread count). */
#define SPARSE_NNZ_PER_COL 8
static size_t sparse_chunks(const batch_run *run, size_t r0, size_t rows)
{
    const uint64_t *rp = run->ds->rowptr;
    size_t nnz = (size_t)(rp[r0 + rows] - rp[r0]);
    size_t min_nnz = CHUNK_MIN_BYTES / (sizeof(float) + sizeof(uint32_t));
    if (min_nnz < SPARSE_NNZ_PER_COL * run->len) min_nnz = SPARSE_NNZ_PER_COL * run->len;
    size_t nch = nnz / min_nnz, cap = max_chunks(run->len);
    if (nch > cap) nch = cap;
    if (nch > rows) nch = rows;
    return nch < 1 ? 1 : nch;
}

/* The loss subgradient at margin m for label y, of a row of weight c (its loss term counts
 * c times); counts into e. */
static inline float subgradient(pt_loss loss, float m, float y, float c, pt_batch_eval *e)
{
    float ym = y * m, g;
    const double before = e->loss;
    e->mistakes += ym <= 0.0f;
    switch (loss) {
    case PT_LOSS_HINGE:
        g = ym < 1.0f ? -y : 0.0f;
        if (g != 0.0f) e->loss += 1.0 - (double)ym;
        break;
    case PT_LOSS_SQUARED:
        g = m - y;
        e->loss += 0.5 * (double)g * (double)g;
        break;
    default:
        g = ym <= 0.0f ? -y : 0.0f;
        if (g != 0.0f) e->loss -= (double)ym;
        break;
    }
    if (c != 1.0f) {
        e->loss += ((double)c - 1.0) * (e->loss - before);
        g *= c;
    }
    e->active += g != 0.0f;
    e->gsum += g;
    return g;
}

static void add_eval(pt_batch_eval *to, const pt_batch_eval *e)
{
    to->mistakes += e->mistakes;
    to->active += e->active;
    to->loss += e->loss;
    to->gsum += e->gsum;
}

/* Fused pass over rows [g0, g0 + rows) of one chunk: acc = sum g_i x_i, in row order. Compact
 * rows are read as stored by the compact dot and axpy (widened in registers on AVX2 and
 * AVX-512, into wide, len floats, elsewhere): the float32 dot and axpy of the widened row. */
static void fused_chunk(const batch_run *run, size_t g0, size_t rows, float *wide, float *acc,
                        pt_batch_eval *ev)
{
    /* streamed: the chunk's rows window by window */
    pt_window_pos at = {.from = g0, .to = g0 + rows};
    const pt_kernels *k = run->k;
    const pt_dataset *ds = run->rows;
    const size_t len = run->len;
    const float bb = run->p->bias ? run->b : 0.0f;
    const pt_loss loss = run->p->batch.loss;
    const float *Y = run->Y + g0;
    const int32_t *C = run->C + g0;
    /* the stored row's bytes: the prefetch runs as far ahead in bytes whatever the type */
    const size_t row_bytes = len * pt_dtype_size(ds->dtype);
    size_t ahead = PREFETCH_BYTES / row_bytes;
    if (ahead < 1) ahead = 1;
    pt_batch_eval e = {0};
    memset(acc, 0, len * sizeof *acc);
    const pt_compact_kernels *ck = k->compact;
    const pt_dtype t = ds->dtype;
    for (size_t i = 0; i < rows; i++) {
        pt_window_at(ds, &at, g0 + i);
        /* (a streamed window's copy is in cache) */
        if (run->prefetch && i + ahead < rows && !at.copy) {
            const char *next = wide ? (const char *)pt_compact_row(ds, g0 + i + ahead)
                                    : (const char *)pt_window_row(ds, &at, g0 + i + ahead);
            for (size_t j = 0; j < row_bytes; j += 64) __builtin_prefetch(next + j, 0, 3);
        }
        const float cw = run->cw ? run->cw[C[i]] : 1.0f;
        if (wide) {
            const void *x = pt_compact_row(ds, g0 + i);
            const float s = ck->dot(run->w, x, t, ds->u8_rh, ds->u8_rl, run->u8_one, len, wide);
            const float g = subgradient(loss, s + bb, Y[i], cw, &e);
            if (g != 0.0f) ck->axpy(g, x, t, ds->u8_rh, ds->u8_rl, run->u8_one, acc, len, wide);
        } else {
            const float *x = pt_window_row(ds, &at, g0 + i);
            const float g = subgradient(loss, k->dot(run->w, x, len) + bb, Y[i], cw, &e);
            if (g != 0.0f) k->axpy(g, x, acc, len);
        }
    }
    pt_window_end(ds, &at);
    *ev = e;
}

/* The fused pass on sparse rows [r0, r0 + rows) of one chunk: acc = sum g_i x_i, in row
 * order. */
static void sparse_chunk(const batch_run *run, size_t r0, size_t rows, float *acc,
                         pt_batch_eval *ev)
{
    const pt_sparse_kernels *sk = run->k->sparse;
    const pt_dataset *ds = run->ds;
    const float bb = run->p->bias ? run->b : 0.0f;
    const pt_loss loss = run->p->batch.loss;
    const uint64_t *rp = ds->rowptr;
    const uint32_t *col = ds->col;
    const float *val = ds->val, *Y = run->Y;
    pt_batch_eval e = {0};
    pt_window_pos at = {.from = r0, .to = r0 + rows}; /* streamed: window by window */
    memset(acc, 0, run->len * sizeof *acc);
    for (size_t i = r0; i < r0 + rows; i++) {
        pt_window_at(ds, &at, i);
        size_t a = (size_t)rp[i], nz = (size_t)(rp[i + 1] - a);
        float g = subgradient(loss, sk->dot(run->w, col + a, val + a, nz) + bb, Y[i],
                              run->cw ? run->cw[run->C[i]] : 1.0f, &e);
        if (g != 0.0f) sk->axpy(g, col + a, val + a, nz, acc);
    }
    pt_window_end(ds, &at);
    *ev = e;
}

/* Sum the chunk buffers into part[0..len), each column in chunk order (thread-independent). */
static void reduce_parts(const batch_run *run, size_t nch)
{
    const size_t len = run->len;
    float *part = run->part;
    if (nch < 2) return;
    const long nseg = (long)((len + REDUCE_SEG - 1) / REDUCE_SEG);
#pragma omp parallel for num_threads(run->threads) schedule(static) \
    if (run->threads > 1 && nseg > 1 && nch * len >= ((size_t)1 << 20))
    for (long s = 0; s < nseg; s++) {
        size_t j = (size_t)s * REDUCE_SEG, m = len - j < REDUCE_SEG ? len - j : REDUCE_SEG;
        for (size_t c = 1; c < nch; c++) run->k->axpy(1.0f, part + c * len + j, part + j, m);
    }
}

static void fused_chunk_at(const batch_run *run, size_t r0, size_t rows, size_t cr, size_t c)
{
    const size_t len = run->len, i0 = c * cr, m = rows - i0 < cr ? rows - i0 : cr;
    fused_chunk(run, r0 + i0, m, run->wide ? run->wide + c * len : NULL, run->part + c * len,
                &run->cst[c]);
}

/* One chunk of the fused pass: the task k of a crew's job (pt_crew_run). */
typedef struct fused_job {
    const batch_run *run;
    size_t r0, rows, cr;
} fused_job;

static void fused_task(void *arg, size_t k)
{
    const fused_job *j = arg;
    fused_chunk_at(j->run, j->r0, j->rows, j->cr, k);
}

/* Prefetch ahead of the rows, or leave it to the hardware? It depends on the CPU and on the
 * rows' type, and it does not change a result: on some CPUs it brings the float32 pass close
 * to a streaming read, on others it stalls that pass, and on one CPU it can slow the float32
 * pass while it speeds up the u8 and bf16 passes, which do more work a byte (bench
 * batch/iteration and batch/compact, with PTRON_BATCH_PREFETCH=0 and 1; the figures:
 * docs/design.md, "The batch path"). So both are timed, the first passes of the process
 * alternating, then one pass in 16 the other way, and the faster kept:
 * seconds a stored byte without [0] and with [1], for each type and for one thread or more (a
 * property of the machine, which short runs need not measure again). */
static _Atomic double fused_rate[3][2][2];

static _Atomic double *fused_rates(const batch_run *run)
{
    return fused_rate[run->rows->dtype][run->threads > 1];
}

/* PTRON_BATCH_PREFETCH=1 or 0 in the environment forces the choice (to measure the pass both
 * ways); unset, or anything else, leaves it timed. Read once per process. */
static int prefetch_forced(void)
{
    static _Atomic int forced = -2;
    int f = atomic_load(&forced);
    if (f == -2) {
        const char *e = getenv("PTRON_BATCH_PREFETCH");
        f = e && (e[0] == '0' || e[0] == '1') && !e[1] ? e[0] - '0' : -1;
        atomic_store(&forced, f);
    }
    return f;
}

static bool fused_prefetch(batch_run *run)
{
    const size_t q = run->passes++;
    const int forced = prefetch_forced();
    if (forced >= 0) return forced;
    _Atomic double *rate = fused_rates(run);
    const double r0 = atomic_load(&rate[0]), r1 = atomic_load(&rate[1]);
    if (r0 == 0.0 || r1 == 0.0) return r1 == 0.0;
    const bool pf = r1 <= r0;
    return q % 16 == 15 ? !pf : pf;
}

static void fused_timed(const batch_run *run, double seconds, size_t rows)
{
    _Atomic double *e = &fused_rates(run)[run->prefetch];
    const double a_byte = seconds / ((double)rows * run->len * pt_dtype_size(run->rows->dtype));
    const double old = atomic_load(e);
    atomic_store(e, old > 0.0 ? 0.75 * old + 0.25 * a_byte : a_byte);
}

static const float *pass_fused(batch_run *run, size_t r0, size_t rows, pt_batch_eval *ev)
{
    const size_t cr = chunk_rows(rows, run->len), nch = (rows + cr - 1) / cr;
    fused_job job = {run, r0, rows, cr};
    run->prefetch = fused_prefetch(run);
    const double t0 = pt_now();
    pt_crew_run(run->crew, fused_task, &job, nch);
    if (rows) fused_timed(run, pt_now() - t0, rows);
    reduce_parts(run, nch);
    memset(ev, 0, sizeof *ev);
    for (size_t c = 0; c < nch; c++) add_eval(ev, &run->cst[c]);
    return run->part;
}

/* One chunk of the sparse pass, rows [bound[k], bound[k + 1]): the task k of a crew's job. */
typedef struct sparse_job {
    const batch_run *run;
    const size_t *bound;
} sparse_job;

static void sparse_task(void *arg, size_t k)
{
    const sparse_job *j = arg;
    sparse_chunk(j->run, j->bound[k], j->bound[k + 1] - j->bound[k],
                 j->run->part + k * j->run->len, &j->run->cst[k]);
}

/* The pass on sparse rows [r0, r0 + rows): chunk c starts at the first row whose non-zeros
 * reach c / nch of the block's. */
static const float *pass_sparse(batch_run *run, size_t r0, size_t rows, pt_batch_eval *ev)
{
    const size_t nch = sparse_chunks(run, r0, rows);
    const uint64_t *rp = run->ds->rowptr;
    size_t bound[MAX_CHUNKS + 1];
    const uint64_t z0 = rp[r0], nnz = rp[r0 + rows] - z0;
    bound[0] = r0;
    bound[nch] = r0 + rows;
    for (size_t c = 1, i = r0; c < nch; c++) {
        uint64_t target = z0 + nnz / nch * c + nnz % nch * c / nch;
        while (i < r0 + rows && rp[i] < target) i++;
        bound[c] = i;
    }
    sparse_job job = {run, bound};
    pt_crew_run(run->crew, sparse_task, &job, nch);
    reduce_parts(run, nch);
    memset(ev, 0, sizeof *ev);
    for (size_t c = 0; c < nch; c++) add_eval(ev, &run->cst[c]);
    return run->part;
}

/* GEMV on the rows of one chunk, on the calling thread: m = X w, g in place of m, then
 * acc = X^T g (len floats, zero past d). */
static void gemv_chunk(const batch_run *run, const float *X, const float *Y, const int32_t *C,
                       size_t rows, float *mg, float *acc, pt_batch_eval *ev)
{
    const size_t len = run->len;
    const float bb = run->p->bias ? run->b : 0.0f;
    const pt_loss loss = run->p->batch.loss;
    pt_batch_eval e = {0};
    cblas_sgemv(CblasRowMajor, CblasNoTrans, (blasint)rows, (blasint)run->d, 1.0f, X,
                (blasint)len, run->w, 1, 0.0f, mg, 1);
    for (size_t i = 0; i < rows; i++)
        mg[i] = subgradient(loss, mg[i] + bb, Y[i], run->cw ? run->cw[C[i]] : 1.0f, &e);
    if (e.active == 0)
        memset(acc, 0, run->d * sizeof(float)); /* a zero gradient needs no pass */
    else
        cblas_sgemv(CblasRowMajor, CblasTrans, (blasint)rows, (blasint)run->d, 1.0f, X,
                    (blasint)len, mg, 1, 0.0f, acc, 1);
    memset(acc + run->d, 0, (len - run->d) * sizeof(float));
    *ev = e;
}

/* The float32 rows [g0, g0 + rows) of a chunk for sgemv: in the matrix, or, compact, widened
 * into the calling thread's buffer (rows x len floats, rows <= run->wide_rows). */
static const float *gemv_rows(const batch_run *run, size_t g0, size_t rows)
{
    if (!run->wide) return run->X + g0 * run->len;
#ifdef _OPENMP
    const size_t t = (size_t)omp_get_thread_num();
#else
    const size_t t = 0;
#endif
    return pt_rows_f32(run->k, run->rows, g0, rows, run->wide + t * run->wide_rows * run->len);
}

static const float *pass_gemv(batch_run *run, size_t r0, size_t rows, pt_batch_eval *ev)
{
    const size_t len = run->len, cr = chunk_rows(rows, len), nch = (rows + cr - 1) / cr;
    const float *Y = run->Y + r0;
    /* With two threads or more, every chunk runs inside the parallel region, even a lone one,
     * so OpenBLAS sees omp_in_parallel() and stays on the calling thread; one thread has set
     * OpenBLAS to one thread (pt_threads_enter). */
#pragma omp parallel for num_threads(run->threads) schedule(dynamic, 1) if (run->threads > 1)
    for (long c = 0; c < (long)nch; c++) {
        size_t i0 = (size_t)c * cr, m = rows - i0 < cr ? rows - i0 : cr;
        pt_window_enter(run->rows, r0 + i0, m);
        gemv_chunk(run, gemv_rows(run, r0 + i0, m), Y + i0, run->C + r0 + i0, m, run->mg + i0,
                   run->part + (size_t)c * len, &run->cst[c]);
        pt_window_leave(run->rows, r0 + i0, m);
    }
    reduce_parts(run, nch);
    memset(ev, 0, sizeof *ev);
    for (size_t c = 0; c < nch; c++) add_eval(ev, &run->cst[c]);
    return run->part;
}

/* X^T g over rows [r0, r0 + rows) at the current (w, b); counts into ev. (A share's part
 * of a block may have no row: a share of fewer rows than there are blocks.) */
static const float *pass(batch_run *run, size_t r0, size_t rows, pt_batch_eval *ev)
{
    if (!rows) {
        memset(run->part, 0, run->len * sizeof *run->part);
        memset(ev, 0, sizeof *ev);
        return run->part;
    }
    if (run->ds) return pass_sparse(run, r0, rows, ev);
    return run->impl == PT_BATCH_GEMV ? pass_gemv(run, r0, rows, ev)
                                      : pass_fused(run, r0, rows, ev);
}

static double norm2(const float *w, size_t d)
{
    double s = 0.0;
    for (size_t j = 0; j < d; j++) s += (double)w[j] * (double)w[j];
    return s;
}

static double step_size(const pt_train_params *p, double t)
{
    switch (p->batch.schedule) {
    case PT_SCHEDULE_INVSQRT: return p->eta / sqrt(t);
    case PT_SCHEDULE_PEGASOS: return 1.0 / ((double)p->batch.lambda * t);
    default: return p->eta;
    }
}

/* Step t (from 1) on a block of rows whose X^T g is G and sum(g) is gsum. */
static void update(batch_run *run, const float *G, double gsum, size_t rows, double t)
{
    const pt_train_params *p = run->p;
    const size_t len = run->len;
    float *w = run->w;
    double eta = step_size(p, t);
    run->k->scale_add((float)(1.0 - eta * (double)p->batch.lambda), w, (float)(-eta / (double)rows), G,
                      w, len);
    if (p->bias) run->b = (float)((double)run->b - eta * gsum / (double)rows);
    if (p->batch.schedule == PT_SCHEDULE_PEGASOS) {
        double nw2 = norm2(w, run->d);
        if (nw2 * (double)p->batch.lambda > 1.0) {
            float s = (float)(1.0 / sqrt((double)p->batch.lambda * nw2));
            for (size_t j = 0; j < len; j++) w[j] *= s;
        }
    }
    if (run->avg) {
        /* running mean of the iterates: avg += (w - avg) / t */
        run->k->scale_add((float)(1.0 - 1.0 / t), run->avg, (float)(1.0 / t), w, run->avg, len);
        run->avg_b += ((double)run->b - run->avg_b) / t;
    }
}

/* Buffers for blocks of up to max_rows rows, allocated once. */
static pt_status run_init(batch_run *run, const pt_dataset *ds, const pt_train_params *p,
                          const pt_kernels *k, pt_batch_impl impl, float *w, size_t max_rows)
{
    memset(run, 0, sizeof *run);
    run->p = p;
    run->k = k;
    run->impl = pt_batch_impl_resolve(impl, k, ds->stride);
    run->threads = pt_threads_resolve(p->threads);
    run->d = ds->d;
    run->len = ds->stride;
    run->X = ds->X;
    run->rows = ds;
    run->Y = ds->y;
    run->C = ds->cls;
    run->cw = p->class_weight;
    run->w = w;
    const size_t len = run->len;
    size_t nch = (max_rows + chunk_rows(max_rows, len) - 1) / chunk_rows(max_rows, len);
    if (ds->layout == PT_LAYOUT_SPARSE) {
        /* one pass for every impl; chunks by non-zeros (at most max_chunks) */
        run->ds = ds;
        run->impl = PT_BATCH_FUSED;
        nch = max_chunks(len);
        if (nch > max_rows) nch = max_rows ? max_rows : 1;
    }
    if (run->impl == PT_BATCH_GEMV && (max_rows > INT_MAX || len > INT_MAX))
        return pt_fail(PT_ERR_LIMIT, "pt_train_params.batch_impl PT_BATCH_GEMV: %zu rows x %zu "
                       "columns exceed BLAS's int", max_rows, len);
    if (run->impl == PT_BATCH_GEMV &&
        !(run->mg = pt_alloc((max_rows ? max_rows : 1) * sizeof(float), "batch margins")))
        return PT_ERR_NOMEM;
    /* each chunk writes its whole buffer, on the thread that will use it */
    if (!(run->part = pt_alloc(nch * len * sizeof(float), "batch chunk gradients")))
        return PT_ERR_NOMEM;
    if (ds->layout == PT_LAYOUT_DENSE && ds->dtype != PT_DTYPE_F32) {
        /* compact rows, widened where they are read: fused, a row per chunk (the size of the
         * chunk's gradient buffer); gemv, a chunk per thread: CHUNK_MIN_BYTES of rows, or the
         * block over max_chunks (1/64 of it for rows up to 1 MiB), a small part of what a
         * float32 copy of the data would take */
        run->X = NULL;
        run->wide_rows = run->impl == PT_BATCH_GEMV ? chunk_rows_max(max_rows, len) : 1;
        size_t slots = run->impl == PT_BATCH_GEMV ? (size_t)run->threads : nch;
        if (!(run->wide = pt_alloc(slots * run->wide_rows * len * sizeof(float),
                                   "batch widened rows")))
            return PT_ERR_NOMEM;
        run->u8_one = ds->dtype == PT_DTYPE_U8 && pt_one_divisor(ds->u8_rh, ds->u8_rl, len);
    }
    if (!(run->cst = pt_calloc(nch * sizeof *run->cst, "batch chunk counts")))
        return PT_ERR_NOMEM;
    if (p->batch.average_iterates && !(run->avg = pt_calloc(len * sizeof(float), "averaged iterate")))
        return PT_ERR_NOMEM;
    /* the fused and sparse passes run their chunks on a crew; gemv's OpenMP team keeps
     * OpenBLAS on each calling thread (pass_gemv) */
    if ((run->impl == PT_BATCH_FUSED || run->ds) && run->threads > 1)
        run->crew = pt_crew_start(run->threads);
    return PT_OK;
}

static void run_free(batch_run *run)
{
    pt_crew_stop(run->crew);
    pt_free(run->cst);
    pt_free(run->mg);
    pt_free(run->part);
    pt_free(run->wide);
    pt_free(run->avg);
}

pt_status pt_batch_subgradient(const pt_dataset *ds, const pt_train_params *p,
                               const pt_kernels *k, pt_batch_impl impl, const float *w, float b,
                               float *gw, float *gb, pt_batch_eval *ev)
{
    const size_t n = ds->n;
    if (!ds->y) return pt_fail(PT_ERR_LABELS, "the batch path needs two classes");
    batch_run run;
    pt_status s = run_init(&run, ds, p, k, impl, (float *)w, n); /* w is only read */
    if (s == PT_OK) {
        pt_thread_counts ts = pt_threads_enter(run.threads);
        run.b = b;
        pt_batch_eval e;
        const float *G = pass(&run, 0, n, &e);
        pt_threads_leave(ts);
        for (size_t j = 0; j < run.len; j++)
            gw[j] = (float)((double)G[j] / (double)n + (double)p->batch.lambda * (double)w[j]);
        *gb = p->bias ? (float)(e.gsum / (double)n) : 0.0f;
        if (ev) *ev = e;
    }
    run_free(&run);
    return s;
}

/* A share of a distributed run: the block's X^T g, its counts and rows, and whether a rank
 * is asked to stop, summed over the ranks in two allreduces (every rank then takes the same
 * step, and they stop after the same one). The counts travel as doubles (exact below 2^53).
 * The gradient's floats are summed by MPI_Allreduce in an order fixed by the number of ranks,
 * so a rerun on as many ranks gives the same bits; for the full batch, against one process
 * the sum differs only by its order (its bound: docs/theory.md, "Distributed training").
 * Returns whether to stop. */
static bool share_block(const batch_run *run, float *G, pt_batch_eval *e, size_t *rows,
                        bool stopping)
{
    pt_dist_sum_float(G, run->len);
    double v[6] = {e->loss, e->gsum, (double)e->mistakes, (double)e->active, (double)*rows,
                   stopping};
    pt_dist_sum_double(v, 6);
    e->loss = v[0];
    e->gsum = v[1];
    e->mistakes = (size_t)v[2];
    e->active = (size_t)v[3];
    *rows = (size_t)v[4];
    return v[5] > 0.0;
}

/* The rows [*r0, *r0 + *rows) of block q of nblk. In one process, blocks of B rows in order
 * (the last one shorter). A share of a distributed run: nblk blocks of the global B rows
 * (ceil(n_total / B) of them), block q made of each rank's part q of its share cut in nblk
 * nearly equal contiguous parts, about B/P rows a rank; every rank so takes part in every
 * step, and a step's gradient is the sum over the ranks' parts. (pt_train refuses B below
 * the ranks P, so no block is empty on every rank: the largest share has at least
 * ceil(n_total / P) >= nblk rows, one or more in each of its parts.) */
static void block_rows(size_t n, size_t B, size_t nblk, bool dist, size_t q, size_t *r0,
                       size_t *rows)
{
    if (!dist) {
        *r0 = q * B;
        *rows = n - *r0 < B ? n - *r0 : B;
        return;
    }
    size_t a = (size_t)((unsigned __int128)n * q / nblk);
    size_t b = (size_t)((unsigned __int128)n * (q + 1) / nblk);
    *r0 = a;
    *rows = b - a;
}

/* Where a batch run stands (see pt_train_state); the counters the epoch loop keeps. */
typedef struct batch_pos {
    int done;         /* complete epochs */
    size_t q;         /* blocks done in the next */
    size_t mistakes;  /* its mistakes so far */
    double obj;       /* its objective sum so far */
    double prev;      /* the last complete epoch's objective */
    double t;         /* steps taken */
    bool finished;
} batch_pos;

static pt_status batch_capture(const batch_run *run, const pt_train_report *r,
                               const pt_train_state *from, const batch_pos *at,
                               const uint32_t *order, size_t nblk, int shuffles, const pt_rng *rng,
                               pt_train_state *st)
{
    st->epochs_done = at->done;
    st->pos = at->q;
    st->epoch_mistakes = at->mistakes;
    st->updates = r->updates;
    st->steps = at->t;
    st->finished = at->finished;
    st->objective = at->done > 0 ? at->prev : 0.0;
    st->epoch_objective = at->obj;
    memcpy(st->w, run->w, run->len * sizeof(float));
    st->b[0] = run->b;
    if (st->u) {
        memcpy(st->u, run->avg, run->len * sizeof(float));
        st->avg_b = run->avg_b;
    }
    pt_train_state_history(st, from, r);
    return order ? pt_train_state_keep_order(st, order, nblk, shuffles, rng) : PT_OK;
}

/* The model as it stands into w, b: the average of the iterates, or the last. */
static void batch_snapshot(const batch_run *run, double t, float *w, float *b)
{
    bool avg = run->avg && t > 0.0;
    const float *src = avg ? run->avg : run->w;
    if (w != src) memcpy(w, src, run->len * sizeof(float));
    *b = run->p->bias ? (avg ? (float)run->avg_b : run->b) : 0.0f;
}

static pt_train_state *batch_state_new(const batch_run *run, size_t n)
{
    return pt_train_state_new(n, run->len, 1, PT_STATE_LINEAR | (run->avg ? PT_STATE_SUMS : 0));
}

/* The epoch is complete: where the run then stands (obj: its objective). */
static void book_epoch(batch_pos *at, int epoch, double obj, bool finished)
{
    at->done = epoch;
    at->q = at->mistakes = 0;
    at->obj = 0.0;
    at->finished = finished;
    at->prev = obj;
}

/* What the epoch hook's model is made from: the run, and where the epoch loop stands. */
typedef struct batch_hook {
    const batch_run *run;
    pt_model *snap; /* the hook's model, kept from one epoch to the next */
    const pt_train_report *r;
    const pt_train_state *from;
    const batch_pos *at; /* before the epoch is booked */
    double obj;          /* the epoch's objective */
    const uint32_t *order;
    size_t nblk;
    const int *shuffles;
    const pt_rng *rng;
} batch_hook;

/* The model as it stands after the epoch, and where the run stands. */
static pt_status hook_model(void *user, int epoch, bool finished, pt_model **model)
{
    const batch_hook *h = user;
    batch_pos now = *h->at;
    book_epoch(&now, epoch, h->obj, finished);
    batch_snapshot(h->run, now.t, h->snap->w, &h->snap->b);
    h->snap->epochs_run = epoch;
    PT_TRY(batch_capture(h->run, h->r, h->from, &now, h->order, h->nblk, *h->shuffles, h->rng,
                         h->snap->states[0]));
    *model = h->snap;
    return PT_OK;
}

pt_status pt_train_batch(const pt_dataset *ds, const pt_train_params *p, const pt_kernels *k,
                         pt_model *m, pt_train_report *r)
{
    const size_t n = ds->n;
    /* a share of a distributed run on several ranks: each block's gradient summed over the
     * ranks' parts of it (block_rows); the state is the same on every rank, and counts the
     * rows of all shares */
    const bool dist = ds->shard_count > 1;
    const size_t n_all = dist ? ds->n_total : n;
    const size_t B = p->batch.size == 0 || p->batch.size >= n_all ? n_all : p->batch.size;
    const size_t nblk = (n_all + B - 1) / B;
    /* the most rows of a block on this rank */
    const size_t B_here = dist ? (n + nblk - 1) / nblk : B;
    if (!ds->y) return pt_fail(PT_ERR_LABELS, "the batch path needs two classes");
    if (p->shuffle && nblk > UINT32_MAX)
        return pt_fail(PT_ERR_LIMIT, "pt_train_params.shuffle supports up to 2^32 blocks (got %zu)",
                       nblk);
    const pt_train_state *from = p->resume ? p->resume->states[0] : NULL;

    batch_run run;
    uint32_t *order = NULL;
    pt_model *snap = NULL; /* what the epoch hook sees */
    pt_train_state *state = NULL;
    pt_status s = run_init(&run, ds, p, k, p->batch.impl, m->w, B_here);
    if (s != PT_OK) goto out;
    if ((p->shuffle && nblk > 1 && !(order = pt_alloc(nblk * sizeof *order, "block order"))) ||
        !(state = batch_state_new(&run, n_all)) ||
        (p->epoch_hook && (!(snap = pt_model_clone(m)) ||
                           pt_model_keep_run(snap, batch_state_new(&run, n_all)) != PT_OK))) {
        s = pt_fail(PT_ERR_NOMEM, "cannot allocate the batch path's buffers");
        goto out;
    }
    pt_rng rng;
    int shuffles = 0; /* the block order has had one per epoch begun */
    if (order) pt_train_state_order(from, p->seed, order, nblk, &rng, &shuffles);
    const bool perceptron = p->batch.loss == PT_LOSS_PERCEPTRON;
    batch_pos at = {.prev = NAN};
    run.b = m->b;
    if (from) {
        memcpy(run.w, from->w, run.len * sizeof(float));
        run.b = from->b[0];
        if (run.avg) {
            memcpy(run.avg, from->u, run.len * sizeof(float));
            run.avg_b = from->avg_b;
        }
        pt_report_resume(r, from);
        at = (batch_pos){.done = from->epochs_done,
                         .q = from->pos,
                         .mistakes = from->epoch_mistakes,
                         .obj = from->epoch_objective,
                         .prev = from->epochs_done ? from->objective : NAN,
                         .t = from->steps,
                         .finished = from->finished};
    }
    const batch_pos start = at;
    pt_thread_counts ts = pt_threads_enter(run.threads);
    batch_hook hook = {.run = &run, .snap = snap, .r = r, .from = from, .at = &at, .order = order,
                       .nblk = nblk, .shuffles = &shuffles, .rng = &rng};
    const pt_epoch_ending end = {
        .p = p, .r = r, .t0 = pt_now(), .w = run.w, .nw = run.len, .b = &run.b, .nb = 1,
        .check_objective = true, .what = "weights",
        .hint = "lower pt_train_params.eta, raise pt_train_params.lambda or rescale the features",
        .snapshot = hook_model, .path = &hook};

    for (int epoch = at.done + 1; epoch <= p->epochs && !at.finished; epoch++) {
        for (; order && shuffles < epoch; shuffles++) pt_rng_shuffle(&rng, order, nblk);
        bool resumed = epoch == start.done + 1;
        size_t mistakes = resumed ? start.mistakes : 0;
        double obj = resumed ? start.obj : 0.0;
        for (size_t q = resumed ? start.q : 0; q < nblk; q++) {
            size_t r0, rows;
            block_rows(n, B, nblk, dist, order ? order[q] : q, &r0, &rows);
            double reg = 0.5 * (double)p->batch.lambda * norm2(run.w, run.d);
            pt_batch_eval e;
            const float *G = pass(&run, r0, rows, &e);
            bool stop_any = false; /* a share: whether any rank is asked to stop */
            if (dist) stop_any = share_block(&run, (float *)G, &e, &rows, pt_stopping(p->stop));
            mistakes += e.mistakes;
            obj += e.loss + (double)rows * reg;
            /* full batch with no mistake: w separates the data and is the answer */
            if (nblk == 1 && perceptron && e.mistakes == 0) break;
            at.t += 1.0;
            update(&run, G, e.gsum, rows, at.t);
            /* ranks stop together, after the same step */
            if (dist ? stop_any : pt_stopping(p->stop)) {
                r->updates = (size_t)at.t;
                at.q = q + 1;
                at.mistakes = mistakes;
                at.obj = obj;
                s = pt_fail(PT_ERR_INTERRUPTED, "interrupted in epoch %d at block %zu of %zu",
                            epoch, q + 1, nblk);
                goto finish;
            }
        }
        obj /= (double)n_all;
        r->updates = (size_t)at.t;
        bool finished = (perceptron && mistakes == 0) ||
                        (p->batch.tol > 0.0 && epoch > 1 && fabs(obj - at.prev) <= p->batch.tol * fabs(at.prev));
        bool done, stop;
        hook.obj = obj;
        s = pt_epoch_end(&end, epoch, mistakes, obj, finished, &done, &stop);
        if (done) {
            book_epoch(&at, epoch, obj, finished);
            if (perceptron && mistakes == 0) r->converged = 1;
        }
        if (s != PT_OK || stop) break;
    }
finish:
    pt_threads_leave(ts);
    if (s == PT_OK || s == PT_ERR_INTERRUPTED) {
        /* where the run stands, for --resume (pt_train drops it from a finished run) */
        pt_status cs = batch_capture(&run, r, from, &at, order, nblk, shuffles, &rng, state);
        if (cs == PT_OK) cs = pt_model_keep_run(m, state);
        state = NULL;
        if (cs != PT_OK) {
            s = cs;
            goto out;
        }
    }
    batch_snapshot(&run, at.t, run.w, &m->b);
out:
    run_free(&run);
    pt_free(order);
    pt_model_free(snap);
    pt_train_state_free(state);
    return s;
}
