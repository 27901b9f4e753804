/* layers: reads rows by form until ported to data/rows.h */
/*
 * The online path's blocked pass: the sequential pass's model, exactly, on more than one core.
 *
 * The epoch's samples are cut into chunks (64 KB to 1 MB of rows). Every thread scores chunks in
 * order, claimed from a shared counter, at most `window` chunks ahead of the walk; thread 0 also
 * walks: it takes the chunks in order and, while w has not changed since a chunk was scored,
 * skips straight to the chunk's first margin violation (found by whoever scored it). Scoring
 * only reads w; the walker is the only writer. From a violation to the end of its chunk, and
 * through any chunk scored before the last update, the walker takes the samples one by one as
 * the sequential pass does (a fresh dot product each; the rows were just read, so from cache),
 * each update under a write lock: the other threads read w under a read lock, a piece of a
 * chunk at a time, and w's version tells the walker which scores are stale. The scores come from
 * the same dot kernel, w and b as the sequential pass's, so every decision, update and w is
 * bit-identical. Sparse data (CSR) the same, its rows scored and taken by the sparse kernels
 * (dot_rows, dot, and the updates), chunks sized by the average row's bytes.
 *
 * What it costs: while w stands still the walk is nearly free, and the epoch runs at the rate
 * the threads together stream X. Each mistake costs the walker a wait of at most one piece for
 * the lock, the rest of its chunk and the next one (at sequential speed); the other threads
 * meanwhile score again the chunks further ahead that they had scored with the old w (a slot
 * changes hands by compare-and-swap, so a chunk is never scored and walked at once). While
 * mistakes come chunk after chunk, the other threads pause (their scores would be stale) and
 * the walker runs alone. No
 * fork/join but one per epoch: threads hand chunks over through C11 atomics (sequentially
 * consistent), each on its own cache line, and wait by spinning, yielding the core after a
 * while (a busy machine must not stall on a descheduled thread).
 */
#include <omp.h>
#include <sched.h>
#include <stdlib.h>
#include <stdatomic.h>

#include "online.h"

/* Chunk sizes: large chunks cost less to hand over (64 KB chunks ran the late epochs of the
 * 200,000 x 256 set clearly slower than 512 KB to 1 MB ones on 2 threads), small ones waste
 * less after a mistake (the chunks scored ahead with the old w are scored again). So a chunk
 * holds about a quarter of the samples expected between two mistakes (from the last epoch),
 * within these bounds (512 KB ran those late epochs a little faster than 1 MB; bench
 * online/epoch/pass:blocked, late_epoch_ms); the smallest is also the piece another thread
 * scores under one hold of the lock. */
#define CHUNK_MIN_BYTES ((size_t)64 << 10)
#define CHUNK_MAX_BYTES ((size_t)512 << 10)
#define CHUNK_MIN_ROWS 16
#define CHUNKS_PER_MISTAKE 4
/* Chunks scored ahead of the walk, per thread. */
#define WINDOW_PER_THREAD 2

/* A slot's state besides "chunk c is scored here" (c >= 0, stored last, with release). */
#define SLOT_FREE (-1L) /* nothing to take: empty, or taken by the walker */
#define SLOT_BUSY (-2L) /* a helper is scoring a chunk it scored before again */

typedef struct slot {
    atomic_long chunk;   /* the chunk whose scores are here, or SLOT_FREE / SLOT_BUSY */
    atomic_uint version; /* w's version they were computed with */
    size_t first;        /* the first sample (from the chunk's start) that violates the margin */
    float *scores;
} slot;

typedef struct pipeline {
    online *o;
    const pt_dataset *ds;
    const uint32_t *order;
    bool sparse; /* ds is sparse: rows are scored and taken through the sparse kernels */
    size_t t0, rows; /* the first sample, and samples a chunk */
    size_t piece;    /* samples another thread scores under one hold of the read lock */
    long nchunks, window;
    slot *slots; /* chunk c lives in slots[c % window] */
    /* one cache line each: a thread spinning on one must not slow the writes to another */
    _Alignas(64) atomic_long next; /* the next chunk to score */
    _Alignas(64) atomic_long walk; /* the chunk the walker is at; chunks < walk + window may be scored */
    _Alignas(64) atomic_int readers;
    _Alignas(64) atomic_int writer;
    _Alignas(64) atomic_int walking; /* the walker takes samples one by one (mistakes): score nothing new */
    _Alignas(64) atomic_int done;
    _Alignas(64) atomic_uint version; /* w's version: changed under the write lock */
} pipeline;

static inline void relax(unsigned *spins)
{
    if (++*spins < 2048) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#elif defined(__aarch64__)
        __asm__ __volatile__("yield");
#endif
    } else {
        sched_yield();
    }
}

/* A readers-writer spin lock (Dekker's pattern: it needs the sequentially consistent order). */
static void read_lock(pipeline *pl)
{
    unsigned spins = 0;
    for (;;) {
        while (atomic_load(&pl->writer)) relax(&spins);
        atomic_fetch_add(&pl->readers, 1);
        if (!atomic_load(&pl->writer)) return;
        atomic_fetch_sub(&pl->readers, 1);
    }
}

static void read_unlock(pipeline *pl) { atomic_fetch_sub(&pl->readers, 1); }

static void write_lock(pipeline *pl)
{
    unsigned spins = 0;
    atomic_store(&pl->writer, 1);
    while (atomic_load(&pl->readers)) relax(&spins);
}

static void write_unlock(pipeline *pl) { atomic_store(&pl->writer, 0); }

static inline size_t sample_index(const pipeline *pl, size_t t)
{
    return pl->order ? pl->order[t] : t;
}

static inline const float *sample_row(const pipeline *pl, size_t t)
{
    return row(pl->ds, pl->order, t);
}

/* Chunk c's samples [*r0, *r1). */
static inline void chunk_range(const pipeline *pl, long c, size_t *r0, size_t *r1)
{
    *r0 = pl->t0 + (size_t)c * pl->rows;
    *r1 = *r0 + pl->rows < pl->ds->n ? *r0 + pl->rows : pl->ds->n;
}

/* score_rows on sparse data: the sparse dot of each row, as the sequential pass's. */
static void score_sparse_rows(const pipeline *pl, size_t r0, size_t r1, float *out)
{
    const online *o = pl->o;
    const pt_dataset *ds = pl->ds;
    if (!pl->order) {
        o->k->sparse->dot_rows(o->w, ds->rowptr + r0, ds->col, ds->val, r1 - r0, out);
        const float bb = o->b * o->bias;
        for (size_t r = 0; r < r1 - r0; r++) out[r] += bb;
        return;
    }
    for (size_t r = r0; r < r1; r++) {
        prefetch_sparse_ahead(ds, pl->order, r);
        const uint32_t *idx;
        const float *val;
        size_t nnz = sparse_row(ds, pl->order, r, &idx, &val);
        out[r - r0] = score_of_sparse(o, idx, val, nnz);
    }
}

/* Scores of samples [r0, r1) with the current w and b, each as the sequential pass computes it
 * (dot + b * bias). */
static void score_rows(const pipeline *pl, size_t r0, size_t r1, float *out)
{
    const online *o = pl->o;
    if (pl->sparse) {
        score_sparse_rows(pl, r0, r1, out);
        return;
    }
    if (!pl->order) {
        o->k->dot_rows(o->w, pl->ds->X + r0 * pl->ds->stride, pl->ds->stride, r1 - r0, o->len, out);
        const float bb = o->b * o->bias;
        for (size_t r = 0; r < r1 - r0; r++) out[r] += bb;
        return;
    }
    for (size_t r = r0; r < r1; r++) {
        if (r + PREFETCH_AHEAD < r1) prefetch_row(sample_row(pl, r + PREFETCH_AHEAD), pl->ds->stride);
        out[r - r0] = score_of(o, sample_row(pl, r));
    }
}

/* Score chunk c into sl with w's version sl->version and find its first margin violation (the
 * walk skips to it). The walker reads w freely (it is the only writer); another thread
 * (shared) reads it under the read lock, a piece at a time so that an update waits at most one
 * piece, and stops when w changes (the chunk's scores are then stale anyway). */
static void score_chunk(pipeline *pl, long c, slot *sl, bool shared)
{
    size_t r0, r1;
    chunk_range(pl, c, &r0, &r1);
    if (!shared) {
        atomic_store_explicit(&sl->version, atomic_load(&pl->version), memory_order_relaxed);
        score_rows(pl, r0, r1, sl->scores);
    } else {
        unsigned v = 0;
        for (size_t p0 = r0; p0 < r1; p0 += pl->piece) {
            size_t p1 = p0 + pl->piece < r1 ? p0 + pl->piece : r1;
            read_lock(pl);
            if (p0 == r0) {
                v = atomic_load(&pl->version);
                atomic_store_explicit(&sl->version, v, memory_order_relaxed);
            }
            bool same = atomic_load(&pl->version) == v;
            if (same) score_rows(pl, p0, p1, sl->scores + (p0 - r0));
            read_unlock(pl);
            if (!same) return;
        }
    }
    /* visit's test, so that a NaN score counts as correct in both */
    const float *Y = pl->ds->y, *out = sl->scores;
    const float tau = pl->o->tau;
    size_t r = r0;
    if (pl->order)
        while (r < r1 && !(Y[pl->order[r]] * out[r - r0] <= tau)) r++;
    else
        while (r < r1 && !(Y[r] * out[r - r0] <= tau)) r++;
    sl->first = r - r0;
}

/* Score again the first chunk in [lo, hi) whose scores are stale (scored before the last
 * update) and that the walker has not taken. Returns whether there was one. */
static bool rescore_stale(pipeline *pl, long lo, long hi)
{
    for (long c = lo; c < hi; c++) {
        slot *sl = &pl->slots[c % pl->window];
        long ready = c;
        if (atomic_load_explicit(&sl->chunk, memory_order_acquire) != c ||
            atomic_load_explicit(&sl->version, memory_order_relaxed) == atomic_load(&pl->version) ||
            !atomic_compare_exchange_strong(&sl->chunk, &ready, SLOT_BUSY))
            continue;
        score_chunk(pl, c, sl, true);
        atomic_store_explicit(&sl->chunk, c, memory_order_release);
        return true;
    }
    return false;
}

/* A helper thread: after an update, score again the stale chunks ahead of the walker (all but
 * the next, which the walker takes itself meanwhile), nearest first; otherwise score the next
 * chunk while the window allows; until the walker is done. */
static void helper(pipeline *pl)
{
    unsigned spins = 0;
    for (;;) {
        if (atomic_load(&pl->done)) return;
        if (atomic_load(&pl->walking)) {
            relax(&spins);
            continue;
        }
        long w = atomic_load(&pl->walk), c = atomic_load(&pl->next);
        if (rescore_stale(pl, w + 2, c)) {
            spins = 0;
            continue;
        }
        if (c >= pl->nchunks || c >= w + pl->window) {
            relax(&spins);
            continue;
        }
        if (!atomic_compare_exchange_weak(&pl->next, &c, c + 1)) continue;
        spins = 0;
        slot *sl = &pl->slots[c % pl->window];
        score_chunk(pl, c, sl, true);
        atomic_store_explicit(&sl->chunk, c, memory_order_release);
    }
}

/* Samples [*r_io, r1) one by one, as the sequential pass takes them: a fresh score each (the
 * rows are in cache), each update under the write lock. Returns the updates; *r_io ends at r1,
 * or after the sample an interrupt came at. */
static size_t walk_samples(pipeline *pl, size_t *r_io, size_t r1)
{
    online *o = pl->o;
    const float *Y = pl->ds->y;
    size_t updates = 0, r = *r_io;
    for (; r < r1 && !online_stopped(o); r++) {
        const float *x = NULL, *val = NULL;
        const uint32_t *idx = NULL;
        size_t nnz = 0;
        if (pl->sparse) nnz = sparse_row(pl->ds, pl->order, r, &idx, &val);
        else x = sample_row(pl, r);
        float y = Y[sample_index(pl, r)];
        float s = pl->sparse ? score_of_sparse(o, idx, val, nnz) : score_of(o, x);
        if (y * s <= o->tau) {
            write_lock(pl);
            if (pl->sparse) visit_sparse(o, idx, val, nnz, y, s);
            else visit(o, x, y, s);
            atomic_store(&pl->version, atomic_load(&pl->version) + 1);
            write_unlock(pl);
            updates++;
        } else {
            visit_correct(o, 1);
        }
    }
    *r_io = r;
    return updates;
}

/* The walker (thread 0): wait for (or score) each chunk in order and take its decisions. */
static pt_status walker(pipeline *pl, size_t *t_io, size_t *mistakes, int epoch, double seq_rate,
                        bool *gave_up)
{
    online *o = pl->o;
    const double start = pt_now();
    size_t count = 0, t = pl->t0;
    bool dense = false; /* the last chunk had a mistake (pl->walking says so to the others) */
    pt_status s = PT_OK;
    for (long c = 0; c < pl->nchunks; c++) {
        slot *sl = &pl->slots[c % pl->window];
        size_t r0, r1;
        chunk_range(pl, c, &r0, &r1);
        size_t r = r0;
        unsigned spins = 0;
        for (;;) {
            /* take chunk c's scores (a helper may be scoring them again: wait for it) */
            long ready = c;
            if (atomic_load_explicit(&sl->chunk, memory_order_relaxed) == c &&
                atomic_compare_exchange_strong_explicit(&sl->chunk, &ready, SLOT_FREE, memory_order_acquire,
                                                        memory_order_relaxed))
                break;
            long nx = atomic_load(&pl->next);
            if (nx == c) {
                if (!atomic_compare_exchange_weak(&pl->next, &nx, c + 1)) continue;
                if (dense) {
                    /* it would most likely be scored for nothing: walk it sample by sample */
                    atomic_store_explicit(&sl->version, atomic_load(&pl->version) - 1, memory_order_relaxed);
                    break;
                }
                score_chunk(pl, c, sl, false);
                break;
            }
            /* chunk c is being scored: score one further ahead meanwhile */
            if (nx < c + pl->window && nx < pl->nchunks && atomic_compare_exchange_weak(&pl->next, &nx, nx + 1)) {
                slot *ahead = &pl->slots[nx % pl->window];
                score_chunk(pl, nx, ahead, false);
                atomic_store_explicit(&ahead->chunk, nx, memory_order_release);
                continue;
            }
            relax(&spins);
        }
        /* while w stands still, correct up to the chunk's first violation; from there (or from
         * the start of a chunk scored before the last update) sample by sample */
        if (atomic_load_explicit(&sl->version, memory_order_relaxed) == atomic_load(&pl->version)) {
            r += sl->first;
            visit_correct(o, sl->first);
        }
        size_t before = count;
        if (r < r1) count += walk_samples(pl, &r, r1);
        /* mistakes here: the other threads pause until a chunk passes without one */
        if (dense != (count > before)) {
            dense = count > before;
            atomic_store(&pl->walking, dense);
        }
        t = r;
        atomic_store_explicit(&pl->walk, c + 1, memory_order_release);
        if (online_stopped(o)) {
            s = pt_fail(PT_ERR_INTERRUPTED, "interrupted in epoch %d after sample %zu", epoch, t);
            break;
        }
        /* auto: give up on a pass that runs at half the sequential rate or less (a thread
         * without a core); a pass merely not faster is judged by the caller at the epoch's
         * end (its first chunks, the pipeline filling, run slower than the rest) */
        double spent = pt_now() - start;
        if (seq_rate > 0.0 && spent > 2e-3 && (double)(t - pl->t0) < 0.5 * seq_rate * spent) {
            *gave_up = true;
            break;
        }
    }
    atomic_store(&pl->done, 1);
    *t_io = t;
    *mistakes += count;
    return s;
}

pt_status online_epoch_blocked(online *o, const pt_dataset *ds, const uint32_t *order, int threads,
                               size_t expected_mistakes, size_t *t_io, size_t *mistakes, int epoch,
                               double seq_rate, bool *gave_up)
{
    /* a row's bytes: the padded row, or the average sparse row (its pairs and offset) */
    const bool sparse = ds->layout == PT_LAYOUT_SPARSE;
    size_t row_bytes = sparse ? (ds->n ? (ds->nnz * 8 + ds->n * 8) / ds->n : 8)
                              : (o->len ? o->len : 1) * sizeof(float);
    size_t lo = CHUNK_MIN_BYTES / row_bytes, hi = CHUNK_MAX_BYTES / row_bytes;
    lo = lo < CHUNK_MIN_ROWS ? CHUNK_MIN_ROWS : lo;
    hi = hi < lo ? lo : hi;
    size_t rows = ds->n / (CHUNKS_PER_MISTAKE * (expected_mistakes + 1));
    rows = rows < lo ? lo : rows > hi ? hi : rows;
    if (*t_io >= ds->n) return PT_OK;
    pipeline pl = {
        .o = o,
        .ds = ds,
        .order = order,
        .sparse = sparse,
        .t0 = *t_io,
        .rows = rows,
        .piece = lo,
        .nchunks = (long)((ds->n - *t_io + rows - 1) / rows),
        .window = WINDOW_PER_THREAD * (long)(threads > 1 ? threads : 1),
    };
    pl.slots = calloc((size_t)pl.window, sizeof *pl.slots);
    float *scores = pt_alloc((size_t)pl.window * rows * sizeof(float), "blocked pass scores");
    if (!pl.slots || !scores) {
        free(pl.slots);
        pt_free(scores);
        return pt_fail(PT_ERR_NOMEM, "cannot allocate the blocked pass's scores (%zu floats)",
                       (size_t)pl.window * rows);
    }
    for (long i = 0; i < pl.window; i++) {
        atomic_init(&pl.slots[i].chunk, SLOT_FREE);
        atomic_init(&pl.slots[i].version, 0);
        pl.slots[i].scores = scores + (size_t)i * rows;
    }
    atomic_init(&pl.next, 0);
    atomic_init(&pl.walk, 0);
    atomic_init(&pl.readers, 0);
    atomic_init(&pl.writer, 0);
    atomic_init(&pl.done, 0);
    atomic_init(&pl.walking, 0);
    atomic_init(&pl.version, 0);
    pt_status s = PT_OK;
#pragma omp parallel num_threads(threads)
    {
        if (omp_get_thread_num() == 0) s = walker(&pl, t_io, mistakes, epoch, seq_rate, gave_up);
        else helper(&pl);
    }
    free(pl.slots);
    pt_free(scores);
    return s;
}
