/* layers: reads rows by form until ported to data/rows.h */
/*
 * The kernel (dual) path: the perceptron in dual form on the margin vector.
 *
 * Keep f[j] = sum_i c_i K[i, j] for every sample, c_i = eta y_i alpha_i. Visiting sample i
 * (in order, or shuffled per epoch from the seed): a mistake if y_i f_i <= tau; then
 * alpha_i += 1 and f += eta y_i K[i, :] (the table's axpy). An epoch costs O(n) plus O(n) per
 * mistake; training stops at an epoch without a mistake or after --epochs.
 *
 * Bias: with p->bias the kernel is K + 1, the kernel of the feature map with a constant-1
 * coordinate appended, so it is the online path's bias weight exactly (its b is sum_i c_i).
 *
 * Averaged dual (PT_VARIANT_AVERAGED): the average over the T sample visits of the dual
 * vectors, by the lazy trick of the primal path: an update of sample i after t visits adds
 * t to beta_i; the averaged coefficient is eta y_i (alpha_i - beta_i / T) (in double).
 *
 * Storage of K (p->kernel.gram_storage), all giving the same model, since every kernel value is
 * computed bit for bit the same way wherever it is computed (gram.h):
 *  - FULL: the n x n float32 Gram, built once (features/gram.c, OpenMP over tiles), when it fits under
 *    --cache-mb; forcing it when it does not is an error.
 *  - ROWS: kernel rows computed when mistakes need them, behind an LRU cache of --cache-mb
 *    rows: updates are held back up to 128 at a time (each decision still sees them, see
 *    margin()) and their rows computed as one block by the tile micro-kernel, OpenMP over
 *    column blocks, each applied to f while hot.
 *  - AUTO: if the Gram does not fit under --cache-mb, ROWS with its LRU cache, and a warning
 *    that says what it needs. Otherwise the choice depends on the mistakes to come, which are
 *    unknown: start with rows computed on demand (cached when d >= 300, where a row costs
 *    at least half its first touch; else not: the first touch of fresh memory can cost more
 *    than recomputing a row of small d) and switch to the full Gram once the time spent on
 *    rows reaches the Gram's estimated cost (ski rental: at most twice the better of the two
 *    in hindsight). The estimate: n^2 d / 2 multiply-adds at GRAM_FMA_PER_S_THREAD a thread
 *    plus 4 n^2 bytes of first touch at TOUCH_S_PER_BYTE. So small d stays on rows (a row is
 *    cheap, the Gram's first touch is not), d in the hundreds switches after about one epoch
 *    of mistakes, and many epochs of many mistakes end on the Gram (bench
 *    kernel/train/kernel:rbf/gram:*; the measurements behind the model: docs/design.md).
 *
 * Workers: one-vs-rest's classes are independent problems on the same storage of K, so with
 * two threads or more they train at once, one a thread (a worker: its pending updates, dual
 * state and labels), each flush then on its worker's thread. A row a worker computes is kept
 * for all (shared: the cache keeps rows until it is full and never evicts, so a slot never
 * changes under a reader; the sparse lazy Gram's rows are claimed atomically); one worker
 * alone keeps the LRU. Not where AUTO may switch to the full Gram mid-run (one worker's
 * decision). Each class comes out bit for bit as alone.
 *
 * Where the time goes in a large one-vs-rest run (ten classes, image-like rows, RBF, averaged,
 * the classes at once): first the distinct support vectors' rows, each computed once (flush
 * blocks, gram_tile) and kept in the cache, and that cache's first touch; then the held rows'
 * kernel values visit by visit (gram_row); last the final training accuracy counted from the
 * cached rows (count_correct) and applying rows to the margins (axpy). The profile and its
 * command: docs/design.md, "The kernel path".
 *
 * Sparse (CSR) data: kernel values from sparse dots by columns (features/gram.h's
 * pt_gram_csc: the rows transposed once, a kernel row the sum of the columns of the row's
 * non-zeros; RBF from the squared norms), updates applied at once (no pending block).
 * Storage: when the Gram fits under --cache-mb (and FULL or AUTO asks for it) it is filled
 * lazily, row i computed at the first mistake on sample i and kept (a sample's later mistakes
 * reuse it, and rows no mistake needs are never touched); otherwise (ROWS, or a Gram too
 * large) each mistake computes its row. The values agree with the dense copy's to rounding.
 *
 * Memory: the packed rows (n d floats), f, counters, and the Gram or the cache are checked
 * against p->mem_budget_bytes before anything is allocated. *
 * Distributed (two classes, the whole data on every rank, several ranks): each rank keeps the
 * margins of its own rows and computes kernel values for those columns only; the mistakes
 * are decided by the rows' owners in the global order and broadcast (sweep_dist below).
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "dist/dist.h"
#include "features/gram.h"
#include "kernel_budget.h"
#include "paths.h"

#define MIB (1024.0 * 1024.0)
/* cost model of AUTO (the order of magnitude is what matters; where the values come from:
 * docs/design.md, "The kernel path") */
#define GRAM_FMA_PER_S_THREAD 60e9 /* the tiled build (bench gram/build), counted in FMAs */
#define TOUCH_S_PER_BYTE 2.5e-9     /* the first touch of the Gram's fresh pages */

/* Updates held back on rows storage, then applied in one block. A flush streams the n x d
 * packed rows once for its block: at d = 784 a block of 32 was bound by that stream; 128 cut
 * the user CPU of a ten-class run at d = 784 clearly, 256 no further. A visit's kernel
 * values against up to 128 held rows cost what 16 do (independent chains, latency-bound). */
#define PEND 128
#define FLUSH_COLS 480  /* columns a block of the flush (a multiple of 48) */

static _Atomic double gram_switch_seconds = -1.0;

void pt_gram_set_switch_seconds(double seconds) { gram_switch_seconds = seconds; }

/* The dual state of one problem, allocated once per worker and reset for each problem. */
typedef struct dual {
    float *f;
    uint32_t *alpha, *order;
    double *beta; /* averaged only */
} dual;

static pt_status dual_alloc(dual *dv, size_t n, size_t ld, bool averaged)
{
    dv->f = pt_calloc(ld * sizeof(float), "margins");
    dv->alpha = calloc(n ? n : 1, sizeof *dv->alpha);
    dv->order = malloc((n ? n : 1) * sizeof *dv->order);
    if (averaged) dv->beta = calloc(n ? n : 1, sizeof *dv->beta);
    if (!dv->f || !dv->alpha || !dv->order || (averaged && !dv->beta))
        return dv->f ? pt_fail(PT_ERR_NOMEM, "cannot allocate the dual state of %zu samples", n)
                     : PT_ERR_NOMEM;
    return PT_OK;
}

/* A worker: trains one problem at a time, with its own pending updates and dual state. One
 * worker trains the problems in turn; with several classes and threads, several train
 * classes at once (one a thread), sharing the packed rows and the storage of K (kstate). */
typedef struct kworker {
    int threads; /* OpenMP threads of its kernel-row blocks: the run's, or 1 when shared */
    /* rows storage: updates not yet in f; those whose row is not cached (pslot -1) packed
     * for their kernel values, the u-th at pcomp[u] of npc */
    size_t np, npc;
    uint32_t pidx[PEND];
    int32_t pslot[PEND], pcomp[PEND];
    float pa[PEND], kv[PEND];
    float *pP, *pnorm, *sP, *snorm, *work;
    float *kout; /* sparse rows without G: a kernel row (ld floats) */
    float *y;    /* the labels of its problem's view, when shared (else the view's own) */
    /* flushes on all threads or on one: seconds a computed row, measured (see flush) */
    double rate[2];
    size_t flushes;
    double row_seconds; /* spent computing rows (AUTO's ski rental) */
    size_t computed, hits;
    dual dv;
} kworker;

typedef struct kstate {
    const pt_train_params *p;
    const pt_kernels *k;
    const pt_dataset *ds;
    pt_kfun kf;
    int threads;
    size_t n, ld;        /* samples; floats per kernel row (n rounded up to 16) */
    pt_gram_rows rows;   /* packed training rows */
    float *G;            /* full Gram, n rows of ld, or NULL */
    /* rows storage: a cache of cap rows (cap 0: none); one worker: LRU; several (shared): rows
     * kept once computed until the cache is full, then computed without being kept, so a slot
     * never changes while any worker reads it. slot_of[i]: row i's slot, -1 when none, and
     * when shared -2 - slot while a worker fills it (read and written atomically) */
    size_t cap, used;
    float *cache;
    int32_t *slot_of, *row_of, *prev, *next;
    int32_t head, tail;
    double setup_seconds; /* packing the rows, building the Gram (the report's gram_seconds) */
    double gram_estimate; /* seconds (AUTO with a Gram that fits) */
    pt_gram_storage storage;
    bool gram_fits; /* under --cache-mb and the memory budget */
    /* sparse data: the rows transposed, their squared norms (ld floats, RBF), the rows of G
     * computed so far (lazy full Gram: have[i] 0 none, 1 being computed (shared), 2 done) */
    bool sparse;
    pt_gram_csc csc;
    float *snorm_all;
    uint8_t *have;
    /* a distributed binary run (pt_train_kernel on replicated data, several ranks): this
     * rank's rows [lo, hi), the only margins it keeps current between epochs (else 0, n) */
    bool dist;
    size_t lo, hi;
    /* the workers; shared: several train problems at once (cache_lock guards the cache's
     * slots) */
    kworker *w;
    int nworkers;
    bool shared;
    pthread_mutex_t cache_lock;
} kstate;

/* Row i's slot in the cache, -1 when it holds none ready. */
static int32_t cached_slot(const kstate *s, size_t i)
{
    if (!s->cap) return -1;
    int32_t sl = s->shared ? __atomic_load_n(&s->slot_of[i], __ATOMIC_ACQUIRE) : s->slot_of[i];
    return sl >= 0 ? sl : -1;
}

static size_t mul_or_max(size_t a, size_t b)
{
    size_t r;
    return pt_mul_ok(a, b, &r) ? r : SIZE_MAX;
}

static size_t add_or_max(size_t a, size_t b) { return a > SIZE_MAX - b ? SIZE_MAX : a + b; }

/* ------------------------------------------------------------------------- LRU row cache */

static void lru_unlink(kstate *s, int32_t slot)
{
    int32_t pv = s->prev[slot], nx = s->next[slot];
    if (pv >= 0) s->next[pv] = nx;
    else s->head = nx;
    if (nx >= 0) s->prev[nx] = pv;
    else s->tail = pv;
}

static void lru_push_front(kstate *s, int32_t slot)
{
    s->prev[slot] = -1;
    s->next[slot] = s->head;
    if (s->head >= 0) s->prev[s->head] = slot;
    s->head = slot;
    if (s->tail < 0) s->tail = slot;
}

/* ------------------------------------------------------- rows storage: pending updates
 *
 * On rows storage a mistake's update is held back (up to PEND of them) and f_j is read as
 * f_j + a_1 K[u_1, j] + a_2 K[u_2, j] + ..., added one by one in mistake order exactly as the
 * axpys would (multiply, then add: the table's element-wise contract), with the kernel values
 * computed as everywhere else. So every decision sees the same float as with eager updates,
 * while a block of PEND rows is computed in one pass over the data (the tile micro-kernel)
 * instead of PEND passes: for small d a kernel row is bound by reading the n x d data. */

static float margin(kstate *s, kworker *w, size_t j, const float *f)
{
    float v = f[j];
    if (w->np == 0) return v;
    if (w->npc) {
        pt_gram_rows pend = {.n = w->npc, .d = s->rows.d, .npad = pt_round_up(w->npc, 16),
                             .P = w->pP, .norm = s->rows.norm ? w->pnorm : NULL};
        pt_gram_kvec(&pend, &s->kf, s->k, s->ds->X + j * s->ds->stride,
                     s->rows.norm ? s->rows.norm[j] : 0.0f, w->kv);
    }
    /* a cached row's value is the one computed here would be (gram.h), read instead */
    for (size_t u = 0; u < w->np; u++) {
        float kij = w->pslot[u] >= 0 ? s->cache[(size_t)w->pslot[u] * s->ld + j]
                                     : w->kv[w->pcomp[u]];
        v = v + w->pa[u] * kij;
    }
    return v;
}

static void copy_panel_row(const float *src, size_t us, float *dst, size_t ud, size_t d)
{
    const float *a = src + (us / 16) * d * 16 + us % 16;
    float *b = dst + (ud / 16) * d * 16 + ud % 16;
    for (size_t k = 0; k < d; k++) b[k * 16] = a[k * 16];
}

/* Slots for the new rows of a flush (comp[u] >= 0), one worker: the LRU's tail makes room. The
 * cache holds at least 2 PEND rows, so the tail never reaches the hits just moved to the
 * front. */
static void lru_slots(kstate *s, kworker *w, const int *comp, int32_t *slot)
{
    for (size_t u = 0; s->cap && u < w->np; u++) {
        if (comp[u] < 0) continue;
        int32_t sl;
        if (s->used < s->cap) {
            sl = (int32_t)s->used++;
        } else {
            sl = s->tail;
            lru_unlink(s, sl);
            s->slot_of[s->row_of[sl]] = -1;
        }
        s->slot_of[w->pidx[u]] = sl;
        s->row_of[sl] = (int32_t)w->pidx[u];
        lru_push_front(s, sl);
        slot[u] = sl;
    }
}

/* The pending updates' rows: a cache hit keeps its slot (moved to the front of the LRU when
 * one worker); each other row is copied into the block to compute (comp[u]: its row in sP,
 * else -1) and, with a cache, given a slot to be filled (slot[u], else -1): one worker, by
 * the LRU; shared, while the cache has room and no other worker fills that row's slot.
 * Returns the rows to compute. */
static size_t plan_rows(kstate *s, kworker *w, int *comp, int32_t *slot)
{
    const size_t np = w->np, d = s->rows.d;
    size_t nu = 0;
    if (s->shared && s->cap) pthread_mutex_lock(&s->cache_lock);
    for (size_t u = 0; u < np; u++) {
        int32_t sl = !s->cap      ? -1
                     : s->shared ? __atomic_load_n(&s->slot_of[w->pidx[u]], __ATOMIC_ACQUIRE)
                                 : s->slot_of[w->pidx[u]];
        slot[u] = sl >= 0 ? sl : -1;
        comp[u] = -1;
        if (sl >= 0) {
            w->hits++;
            if (!s->shared) {
                lru_unlink(s, sl);
                lru_push_front(s, sl);
            }
            continue;
        }
        comp[u] = (int)nu;
        copy_panel_row(w->pP, (size_t)w->pcomp[u], w->sP, nu, d);
        if (s->rows.norm) w->snorm[nu] = w->pnorm[w->pcomp[u]];
        nu++;
        /* shared: a free slot is claimed for the row (filled by this flush, then published) */
        if (s->shared && sl == -1 && s->used < s->cap) {
            slot[u] = (int32_t)s->used++;
            __atomic_store_n(&s->slot_of[w->pidx[u]], -2 - slot[u], __ATOMIC_RELAXED);
        }
    }
    if (s->shared && s->cap) pthread_mutex_unlock(&s->cache_lock);
    else lru_slots(s, w, comp, slot);
    return nu;
}

/* All threads, or one? A flush is short work, and its join waits for the slowest
 * thread: on a loaded machine a thread that lost its core costs a scheduler slice, more than
 * the flush. So both are timed (the first flushes, then one in 16 the other way) and the
 * faster per row is used. nu rows to compute, nc column blocks. */
static int flush_in_parallel(kstate *s, kworker *w, size_t nu, ptrdiff_t nc)
{
    int par = w->threads > 1 && nc > 1 && nu * s->n * (s->rows.d + 8) >= 65536;
    if (par) {
        size_t q = w->flushes++;
        if (q < 4) par = (int)(q & 1);
        else par = w->rate[1] <= w->rate[0];
        if (q >= 4 && q % 16 == 0) par = !par;
    }
    return par;
}

/* Apply the pending updates to f, in order: the rows not cached computed as one block, block
 * of columns by block of columns, each applied while hot (and stored in its cache slot). */
static void flush(kstate *s, kworker *w, float *f)
{
    if (w->np == 0) return;
    double t0 = pt_now();
    const size_t np = w->np, d = s->rows.d, lo = s->lo, hi = s->hi, ld = s->ld;
    int comp[PEND];
    int32_t slot[PEND];
    const size_t nu = plan_rows(s, w, comp, slot);
    pt_gram_rows sub = {.n = nu, .d = d, .npad = pt_round_up(nu, 16), .P = w->sP,
                        .norm = s->rows.norm ? w->snorm : NULL};
    const ptrdiff_t nc = (ptrdiff_t)((hi - lo + FLUSH_COLS - 1) / FLUSH_COLS);
    const int par = flush_in_parallel(s, w, nu, nc);
#pragma omp parallel num_threads(par ? w->threads : 1)
    {
#ifdef _OPENMP
        float *C = w->work + (size_t)omp_get_thread_num() * PEND * FLUSH_COLS;
#else
        float *C = w->work;
#endif
#pragma omp for schedule(static)
        for (ptrdiff_t c = 0; c < nc; c++) {
            size_t j0 = lo + (size_t)c * FLUSH_COLS;
            size_t nj = hi - j0 < FLUSH_COLS ? hi - j0 : FLUSH_COLS;
            if (nu) pt_gram_block(&sub, 0, nu, &s->rows, j0, nj, &s->kf, s->k, C, FLUSH_COLS);
            for (size_t u = 0; u < np; u++) {
                const float *row;
                if (comp[u] >= 0) {
                    row = C + (size_t)comp[u] * FLUSH_COLS;
                    if (slot[u] >= 0)
                        memcpy(s->cache + (size_t)slot[u] * ld + j0, row, nj * sizeof(float));
                } else {
                    row = s->cache + (size_t)slot[u] * ld + j0;
                }
                s->k->axpy(w->pa[u], row, f + j0, nj);
            }
        }
    }
    /* shared: the rows this flush filled are ready for every worker from now on */
    for (size_t u = 0; s->shared && u < np; u++)
        if (comp[u] >= 0 && slot[u] >= 0)
            __atomic_store_n(&s->slot_of[w->pidx[u]], slot[u], __ATOMIC_RELEASE);
    w->computed += nu;
    w->np = w->npc = 0;
    double dt = pt_now() - t0;
    w->row_seconds += dt;
    if (nu) {
        double r = dt / (double)nu, *e = &w->rate[par ? 1 : 0];
        *e = *e > 0.0 ? 0.75 * *e + 0.25 * r : r;
    }
}

/* Sparse rows: f += a K[i, :] computed now, into out (ld floats). */
static void sparse_row(kstate *s, kworker *w, size_t i, float *out, float a, float *f)
{
    double t0 = pt_now();
    const uint32_t *col;
    const float *val;
    size_t nz = pt_csr_row(s->ds, i, &col, &val);
    pt_gram_csc_kvec(&s->csc, &s->kf, s->k, col, val, nz, s->snorm_all ? s->snorm_all[i] : 0.0f,
                     s->snorm_all, out, a, f);
    w->computed++;
    w->row_seconds += pt_now() - t0;
}

/* Sparse rows with the lazy Gram: row i's state, claiming it for this worker when no one
 * computed it (0: computed by no one, claimed now; 1: another worker computes it; 2: done). */
static int claim_row(kstate *s, size_t i)
{
    if (!s->shared) return s->have[i] ? 2 : 0;
    uint8_t none = 0;
    if (__atomic_compare_exchange_n(&s->have[i], &none, 1, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE))
        return 0;
    return none;
}

/* A mistake at i: f += a K[i, :], now (full Gram) or held back (rows). */
static void update(kstate *s, kworker *w, size_t i, float a, float *f)
{
    if (s->sparse && s->G) {
        int st = claim_row(s, i);
        if (st == 0) { /* the lazy Gram's row, computed, applied while hot and kept */
            sparse_row(s, w, i, s->G + i * s->ld, a, f);
            if (s->shared) __atomic_store_n(&s->have[i], 2, __ATOMIC_RELEASE);
            else s->have[i] = 2;
            return;
        }
        if (st == 1) { /* another worker is filling it: this one's own copy */
            sparse_row(s, w, i, w->kout, a, f);
            return;
        }
        /* done: read from the Gram below */
    }
    if (s->sparse && !s->G) {
        sparse_row(s, w, i, w->kout, a, f);
        return;
    }
    if (s->G) {
        const float *row = s->G + i * s->ld;
        const size_t lo = s->lo, m = s->hi - lo;
        if (w->threads > 1 && m >= 65536) {
            /* element-wise: chunked or not, the same bits */
            const ptrdiff_t nc = (ptrdiff_t)((m + 4095) / 4096);
#pragma omp parallel for num_threads(w->threads) schedule(static)
            for (ptrdiff_t c = 0; c < nc; c++) {
                size_t j0 = lo + (size_t)c * 4096, left = s->hi - j0;
                size_t len = left < 4096 ? left : 4096;
                s->k->axpy(a, row + j0, f + j0, len);
            }
        } else {
            s->k->axpy(a, row + lo, f + lo, m);
        }
        return;
    }
    const size_t u = w->np, d = s->rows.d;
    /* the cache does not change before the flush: a cached row is read from it until then */
    w->pslot[u] = cached_slot(s, i);
    w->pcomp[u] = -1;
    if (w->pslot[u] < 0) {
        const size_t c = w->npc++;
        float *dst = w->pP + (c / 16) * d * 16 + c % 16;
        const float *x = s->ds->X + i * s->ds->stride;
        for (size_t k = 0; k < d; k++) dst[k * 16] = x[k];
        if (s->rows.norm) w->pnorm[c] = s->rows.norm[i];
        w->pcomp[u] = (int32_t)c;
    }
    w->pidx[u] = (uint32_t)i;
    w->pa[u] = a;
    if (++w->np == PEND) flush(s, w, f);
}

static void worker_free(kworker *w)
{
    pt_free(w->pP);
    pt_free(w->pnorm);
    pt_free(w->sP);
    pt_free(w->snorm);
    pt_free(w->work);
    pt_free(w->kout);
    pt_free(w->y);
    pt_free(w->dv.f);
    free(w->dv.alpha);
    free(w->dv.order);
    free(w->dv.beta);
    memset(w, 0, sizeof *w);
}

static void free_rows_state(kstate *s)
{
    pt_free(s->cache);
    free(s->slot_of);
    free(s->row_of);
    free(s->prev);
    free(s->next);
    s->cache = NULL;
    s->slot_of = s->row_of = s->prev = s->next = NULL;
    s->cap = s->used = 0;
}

/* Bytes of a worker's rows storage (its pending rows and blocks; the cache is shared). */
static size_t rows_state_bytes(size_t d, int threads)
{
    return (2 * PEND * d + 2 * PEND + (size_t)threads * PEND * FLUSH_COLS) * sizeof(float);
}

/* A worker's buffers: its dual state, and its pending rows (rows storage) or kernel row
 * (sparse rows). */
static pt_status worker_init(kstate *s, kworker *w, int threads)
{
    const size_t n = s->n, d = s->rows.d;
    w->threads = threads;
    PT_TRY(dual_alloc(&w->dv, n, s->ld, s->p->variant == PT_VARIANT_AVERAGED));
    if (s->shared && !(w->y = pt_alloc((n ? n : 1) * sizeof(float), "one-vs-rest labels")))
        return PT_ERR_NOMEM;
    if (s->sparse)
        return (w->kout = pt_alloc(s->ld * sizeof(float), "a kernel row")) ? PT_OK
                                                                          : PT_ERR_NOMEM;
    if (s->G) return PT_OK;
    w->pP = pt_calloc(PEND * (d ? d : 1) * sizeof(float), "pending rows");
    w->sP = pt_calloc(PEND * (d ? d : 1) * sizeof(float), "pending rows");
    w->pnorm = pt_calloc(PEND * sizeof(float), "pending norms");
    w->snorm = pt_calloc(PEND * sizeof(float), "pending norms");
    w->work = pt_alloc((size_t)threads * PEND * FLUSH_COLS * sizeof(float), "kernel blocks");
    return w->pP && w->sP && w->pnorm && w->snorm && w->work ? PT_OK : PT_ERR_NOMEM;
}

static pt_status setup_rows(kstate *s, size_t cap)
{
    if (cap < 2 * PEND) cap = 0; /* a cache smaller than two blocks would only thrash */
    s->cap = cap;
    s->head = s->tail = -1;
    if (cap == 0) return PT_OK;
    /* One allocation of the whole cache: its pages are touched only as rows fill them. */
    if (!(s->cache = pt_alloc(cap * s->ld * sizeof(float), "kernel row cache"))) return PT_ERR_NOMEM;
    s->slot_of = malloc(s->n * sizeof(int32_t));
    s->row_of = malloc(cap * sizeof(int32_t));
    s->prev = malloc(cap * sizeof(int32_t));
    s->next = malloc(cap * sizeof(int32_t));
    if (!s->slot_of || !s->row_of || !s->prev || !s->next)
        return pt_fail(PT_ERR_NOMEM, "cannot allocate the row cache index (%zu rows)", cap);
    for (size_t i = 0; i < s->n; i++) s->slot_of[i] = -1;
    return PT_OK;
}

static pt_status build_full(kstate *s)
{
    double t0 = pt_now();
    if (!(s->G = pt_alloc(s->n * s->ld * sizeof(float), "Gram matrix"))) return PT_ERR_NOMEM;
    PT_TRY(pt_gram_full(&s->rows, &s->kf, s->k, s->G, s->ld, s->threads));
    double dt = pt_now() - t0;
    s->setup_seconds += dt;
    pt_log(PT_LOG_INFO, "kernel path: Gram matrix %zu x %zu (%.1f MiB) built in %.3f s", s->n, s->n,
           (double)s->n * s->ld * sizeof(float) / MIB, dt);
    return PT_OK;
}

/* ------------------------------------------------------------------------------ model */

/* The coefficient of sample i: eta y_i alpha_i, averaged: eta y_i (alpha_i - beta_i / T). */
static float sv_coef(const pt_dataset *ds, const pt_train_params *p, const uint32_t *alpha,
                     const double *beta, double steps, size_t i)
{
    double c = (double)alpha[i];
    if (beta && steps > 0) c -= beta[i] / steps;
    double eta = p->class_weight ? (double)p->eta * p->class_weight[ds->cls[i]] : p->eta;
    return (float)(eta * ds->y[i] * c);
}

/* A kernel model of sparse rows keeps its support vectors sparse (CSR, as the data). */
static pt_status make_sparse_model(const pt_dataset *ds, const pt_train_params *p,
                                   const uint32_t *alpha, const double *beta, double steps,
                                   pt_model *m, pt_model **out)
{
    const size_t n = ds->n, nsv = m->n_sv;
    size_t nnz = 0;
    for (size_t i = 0; i < n; i++)
        if (alpha[i]) nnz += (size_t)(ds->rowptr[i + 1] - ds->rowptr[i]);
    m->sv_ptr = pt_alloc((nsv + 1) * sizeof *m->sv_ptr, "support vector offsets");
    m->sv_col = pt_alloc((nnz ? nnz : 1) * sizeof *m->sv_col, "support vector columns");
    m->sv_val = pt_alloc((nnz ? nnz : 1) * sizeof *m->sv_val, "support vector values");
    m->coef = pt_alloc((nsv ? nsv : 1) * sizeof(float), "dual coefficients");
    if (!m->sv_ptr || !m->sv_col || !m->sv_val || !m->coef) {
        pt_model_free(m);
        return PT_ERR_NOMEM;
    }
    m->sv_ptr[0] = 0;
    for (size_t i = 0, j = 0; i < n; i++) {
        if (!alpha[i]) continue;
        const uint32_t *col;
        const float *val;
        size_t nz = pt_csr_row(ds, i, &col, &val), at = (size_t)m->sv_ptr[j];
        memcpy(m->sv_col + at, col, nz * sizeof *col);
        memcpy(m->sv_val + at, val, nz * sizeof *val);
        m->sv_ptr[j + 1] = at + nz;
        m->coef[j++] = sv_coef(ds, p, alpha, beta, steps, i);
    }
    *out = m;
    return PT_OK;
}

static pt_status make_model(const pt_dataset *ds, const pt_train_params *p, const uint32_t *alpha,
                            const double *beta, double steps, pt_model **out)
{
    const size_t n = ds->n, stride = pt_stride_for(ds->d);
    size_t nsv = 0;
    for (size_t i = 0; i < n; i++) nsv += alpha[i] != 0;
    pt_model *m = calloc(1, sizeof *m);
    if (!m) return pt_fail(PT_ERR_NOMEM, "cannot allocate the model");
    m->d = ds->d;
    m->nclass = 2;
    m->n_sv = nsv;
    if (ds->layout == PT_LAYOUT_SPARSE) return make_sparse_model(ds, p, alpha, beta, steps, m, out);
    m->sv = pt_alloc((nsv ? nsv : 1) * stride * sizeof(float), "support vectors");
    m->coef = pt_alloc((nsv ? nsv : 1) * sizeof(float), "dual coefficients");
    if (!m->sv || !m->coef) {
        pt_model_free(m);
        return PT_ERR_NOMEM;
    }
    for (size_t i = 0, s = 0; i < n; i++) {
        if (!alpha[i]) continue;
        float *row = m->sv + s * stride;
        memcpy(row, ds->X + i * ds->stride, ds->d * sizeof(float));
        memset(row + ds->d, 0, (stride - ds->d) * sizeof(float));
        m->coef[s++] = sv_coef(ds, p, alpha, beta, steps, i);
    }
    *out = m;
    return PT_OK;
}

/* ------------------------------------------------------------------------------ train */


/* The storage of K for sparse rows (the memory plan checked): the lazy full Gram when it fits
 * and FULL or AUTO asks, else a row computed at each mistake. */
static pt_status sparse_setup(kstate *s, const pt_train_params *p, size_t gram_bytes,
                              size_t cache_bytes)
{
    const pt_dataset *ds = s->ds;
    const size_t n = s->n;
    bool lazy = s->storage != PT_GRAM_ROWS && s->gram_fits;
    /* a --cache-mb that holds the Gram the budget cannot: refused, never silently ignored */
    if (s->storage == PT_GRAM_AUTO && !lazy && p->kernel.cache_mb && gram_bytes <= cache_bytes)
        return pt_fail(PT_ERR_LIMIT,
                       "pt_train_params.cache_mb %zu would hold the %zu x %zu Gram matrix "
                       "(%.1f MiB), but the memory budget of %.1f MiB cannot beside the kernel "
                       "path's working memory: raise pt_train_params.mem_budget_bytes, or lower "
                       "pt_train_params.cache_mb below %.0f to compute rows on demand",
                       p->kernel.cache_mb, n, n, gram_bytes / MIB,
                       (p->mem_budget_bytes ? p->mem_budget_bytes : pt_default_mem_budget()) / MIB,
                       floor(gram_bytes / MIB));
    if (s->storage == PT_GRAM_AUTO && !lazy)
        pt_log(PT_LOG_WARN,
               "kernel path: the %zu x %zu Gram matrix needs %.1f MiB, more than "
               "pt_train_params.cache_mb (%.1f MiB) or the memory budget allows: computing each "
               "kernel row from the sparse rows when a mistake needs it",
               n, n, gram_bytes / MIB, cache_bytes / MIB);
    PT_TRY(pt_gram_csc_init(&s->csc, ds->rowptr, ds->col, ds->val, n, ds->d));
    if (p->kernel.kind == PT_KERNEL_RBF || p->kernel.kind == PT_KERNEL_EXPR) { /* norms in the kernel */
        if (!(s->snorm_all = pt_alloc(s->ld * sizeof(float), "squared norms"))) return PT_ERR_NOMEM;
        pt_gram_sparse_norms(ds->rowptr, ds->val, n, s->k, s->snorm_all);
    }
    if (!lazy) {
        s->storage = PT_GRAM_ROWS; /* (each worker a kernel row: worker_init) */
        return PT_OK;
    }
    s->storage = PT_GRAM_FULL;
    /* pages touched only as rows fill them */
    if (!(s->G = pt_alloc(gram_bytes, "Gram matrix"))) return PT_ERR_NOMEM;
    if (!(s->have = calloc(n ? n : 1, 1)))
        return pt_fail(PT_ERR_NOMEM, "cannot allocate the Gram's row flags (%zu rows)", n);
    return PT_OK;
}

/* The workers, each with its buffers (the OpenMP threads of a lone worker's blocks: the run's;
 * of shared ones: 1 each). */
static pt_status workers_setup(kstate *s)
{
    if (!(s->w = calloc((size_t)s->nworkers, sizeof *s->w)))
        return pt_fail(PT_ERR_NOMEM, "cannot allocate %d kernel workers", s->nworkers);
    for (int i = 0; i < s->nworkers; i++)
        PT_TRY(worker_init(s, &s->w[i], s->shared ? 1 : s->threads));
    return PT_OK;
}

/* Workers for `problems` problems on `threads` threads: one a thread (at most one a problem)
 * when the classes can train at once, else one. Not where AUTO may switch to the full Gram
 * in the middle of a run (storage AUTO with a Gram that fits): that switch is one worker's. */
static int workers_for(const kstate *s, size_t problems)
{
    if (problems < 2 || s->threads < 2 || (s->storage == PT_GRAM_AUTO && s->gram_fits))
        return 1;
    return problems < (size_t)s->threads ? (int)problems : s->threads;
}

/* Bytes of one worker's state besides the shared storage. */
static size_t worker_bytes(const kstate *s, size_t d, bool averaged, int threads)
{
    size_t b = mul_or_max(s->ld, sizeof(float));                                /* f */
    b = add_or_max(b, mul_or_max(s->n, sizeof(uint32_t) * 2));                    /* alpha, order */
    if (averaged) b = add_or_max(b, mul_or_max(s->n, sizeof(double)));            /* beta */
    b = add_or_max(b, s->sparse ? mul_or_max(s->ld, sizeof(float)) : rows_state_bytes(d, threads));
    if (s->shared) b = add_or_max(b, mul_or_max(s->n, sizeof(float)));           /* labels */
    return b;
}

/* The memory plan (checked before anything is allocated), then the packed rows, the storage
 * of K and the workers: everything the problems share. */
static pt_status kernel_setup(kstate *s, const pt_dataset *ds, const pt_train_params *p, const pt_kernels *k,
                              size_t problems)
{
    const size_t n = ds->n, d = ds->d;
    const bool averaged = p->variant == PT_VARIANT_AVERAGED;
    *s = (kstate){.p = p, .k = k, .ds = ds, .n = n, .ld = pt_round_up(n ? n : 1, 16), .head = -1, .tail = -1};
    if (n > INT32_MAX) return pt_fail(PT_ERR_LIMIT, "the kernel path supports up to 2^31 rows (got %zu)", n);
    pt_kfun_from_params(&s->kf, p);
    s->threads = pt_threads_resolve(p->threads);

    const size_t budget = p->mem_budget_bytes ? p->mem_budget_bytes : pt_default_mem_budget();
    const size_t cache_bytes = p->kernel.cache_mb ? mul_or_max(p->kernel.cache_mb, (size_t)1 << 20) : pt_default_mem_budget();
    const size_t row_bytes = s->ld * sizeof(float);
    const size_t gram_bytes = mul_or_max(n, row_bytes);
    s->sparse = ds->layout == PT_LAYOUT_SPARSE;
    /* sparse: the transposed rows, norms and a kernel row instead of the packed rows */
    size_t fixed = pt_gram_rows_bytes(n, d, p->kernel.kind);
    if (s->sparse)
        fixed = add_or_max(add_or_max(mul_or_max(2 * s->ld, sizeof(float)), n),
                           pt_gram_csc_bytes(d, (size_t)(ds->rowptr[n] - ds->rowptr[0])));
    fixed = add_or_max(fixed, mul_or_max(s->ld, sizeof(float)));            /* f */
    if (!s->sparse) fixed = add_or_max(fixed, rows_state_bytes(d, s->threads));
    fixed = add_or_max(fixed, mul_or_max(n, sizeof(uint32_t) * 2));       /* alpha, order */
    if (averaged) fixed = add_or_max(fixed, mul_or_max(n, sizeof(double))); /* beta */
    /* where each problem stands (alpha, margins, beta; the order when shuffled), and a
     * snapshot's */
    size_t state_row = 2 * sizeof(float) + (averaged ? sizeof(double) : 0) +
                       (p->shuffle ? sizeof(uint32_t) : 0);
    fixed = add_or_max(fixed, mul_or_max(mul_or_max(problems + 1, n), state_row));
    const size_t tiles = pt_gram_full_scratch_bytes(s->threads);
    if (fixed > budget)
        return pt_fail(PT_ERR_LIMIT,
                       "the kernel path needs %zu bytes (%.1f MiB) for %zu rows of %zu features "
                       "before any kernel value, above the memory budget of %zu bytes (%.1f MiB)",
                       fixed, fixed / MIB, n, d, budget, budget / MIB);
    s->gram_fits = gram_bytes <= cache_bytes && add_or_max(add_or_max(fixed, gram_bytes), tiles) <= budget;
    s->storage = p->kernel.gram_storage;
    if (s->storage == PT_GRAM_FULL && !s->gram_fits) {
        if (gram_bytes > cache_bytes)
            return pt_fail(PT_ERR_LIMIT,
                           "the full Gram matrix of %zu rows needs %zu bytes (%.1f MiB), above "
                           "pt_train_params.cache_mb %.0f: raise pt_train_params.cache_mb or use "
                           "pt_train_params.gram_storage PT_GRAM_ROWS or PT_GRAM_AUTO",
                           n, gram_bytes, gram_bytes / MIB, cache_bytes / MIB);
        return pt_fail(PT_ERR_LIMIT,
                       "the full Gram matrix of %zu rows needs %zu bytes (%.1f MiB) besides %.1f MiB "
                       "of working memory, above the memory budget of %.1f MiB "
                       "(pt_train_params.mem_budget_bytes): use pt_train_params.gram_storage "
                       "PT_GRAM_ROWS",
                       n, gram_bytes, gram_bytes / MIB, fixed / MIB, budget / MIB);
    }
    /* classes at once: each further worker's state (its labels too) within the budget, and
     * a full Gram's still */
    int W = workers_for(s, problems);
    if (W > 1) {
        size_t more = add_or_max(mul_or_max((size_t)(W - 1), worker_bytes(s, d, averaged, 1)),
                                 mul_or_max(n, sizeof(float)));
        size_t with = add_or_max(fixed, more);
        bool gram_too = s->storage == PT_GRAM_FULL || (s->sparse && s->storage != PT_GRAM_ROWS &&
                                                        s->gram_fits);
        if (with > budget ||
            (gram_too && add_or_max(add_or_max(with, gram_bytes), tiles) > budget)) {
            W = 1;
        } else {
            fixed = with;
            s->shared = true;
        }
    }
    s->nworkers = W;
    if (s->shared) pthread_mutex_init(&s->cache_lock, NULL);
    if (s->sparse) {
        PT_TRY(sparse_setup(s, p, gram_bytes, cache_bytes));
        return workers_setup(s);
    }
    size_t cap = 0;
    if (s->storage == PT_GRAM_ROWS || (s->storage == PT_GRAM_AUTO && !s->gram_fits)) {
        size_t room = budget - fixed;
        cap = (cache_bytes < room ? cache_bytes : room) / row_bytes;
        if (cap > n) cap = n;
        /* a --cache-mb the budget cannot honour is refused, never silently shrunk */
        size_t want = cache_bytes / row_bytes < n ? cache_bytes / row_bytes : n;
        if (p->kernel.cache_mb && want > cap)
            return pt_fail(PT_ERR_LIMIT,
                           "pt_train_params.cache_mb %zu asks for a kernel row cache of %zu rows "
                           "(%.1f MiB), but the memory budget of %.1f MiB leaves %.1f MiB beside "
                           "the kernel path's %.1f MiB of working memory: raise "
                           "pt_train_params.mem_budget_bytes to %.0f MiB, or lower "
                           "pt_train_params.cache_mb to %.0f",
                           p->kernel.cache_mb, want, want * (double)row_bytes / MIB, budget / MIB,
                           room / MIB, fixed / MIB, ceil((fixed + want * (double)row_bytes) / MIB),
                           floor(room / MIB));
        if (s->storage == PT_GRAM_AUTO && gram_bytes > cache_bytes)
            pt_log(PT_LOG_WARN,
                   "kernel path: the %zu x %zu Gram matrix needs %.1f MiB, more than the %.1f MiB "
                   "pt_train_params.cache_mb allows: computing kernel rows on demand behind an LRU "
                   "cache of %zu rows (%.1f MiB); raise pt_train_params.cache_mb to %.0f to keep "
                   "the whole matrix",
                   n, n, gram_bytes / MIB, cache_bytes / MIB, cap, cap * (double)row_bytes / MIB,
                   ceil(gram_bytes / MIB));
        else if (s->storage == PT_GRAM_AUTO)
            pt_log(PT_LOG_WARN,
                   "kernel path: the %zu x %zu Gram matrix needs %.1f MiB, more than the memory "
                   "budget of %.1f MiB leaves: computing kernel rows on demand behind an LRU cache "
                   "of %zu rows (%.1f MiB)",
                   n, n, gram_bytes / MIB, budget / MIB, cap, cap * (double)row_bytes / MIB);
    } else if (s->storage == PT_GRAM_AUTO) {
        s->gram_estimate = (double)n * n * (d ? d : 1) / 2.0 / (GRAM_FMA_PER_S_THREAD * s->threads) +
                           (double)gram_bytes * TOUCH_S_PER_BYTE;
        double forced = gram_switch_seconds;
        if (forced >= 0.0) s->gram_estimate = forced;
        /* Rows that cost at least half their first touch to compute are kept, in a cache that
         * can hold them all (pages touched as rows fill it): a support vector's row is then
         * computed once for every later epoch and every class. Ten classes, 20,000 x 784: 14.4
         * CPU-s with the cache against 17.0 switching from uncached rows to the Gram. Cheaper
         * rows (small d) are recomputed. */
        if ((double)d / GRAM_FMA_PER_S_THREAD >= 0.5 * sizeof(float) * TOUCH_S_PER_BYTE) cap = n;
    }

    double t0 = pt_now();
    PT_TRY(pt_gram_rows_init(&s->rows, ds->X, n, d, ds->stride, d, p->kernel.kind, s->k, s->threads));
    s->setup_seconds += pt_now() - t0;
    PT_TRY(s->storage == PT_GRAM_FULL ? build_full(s) : setup_rows(s, cap));
    return workers_setup(s);
}

/* Seconds all workers spent computing rows. */
static double row_seconds(const kstate *s)
{
    double t = 0.0;
    for (int i = 0; s->w && i < s->nworkers; i++) t += s->w[i].row_seconds;
    return t;
}

static void kernel_free(kstate *s)
{
    size_t computed = 0, hits = 0;
    for (int i = 0; s->w && i < s->nworkers; i++) {
        computed += s->w[i].computed;
        hits += s->w[i].hits;
    }
    pt_log(PT_LOG_DEBUG,
           "kernel path: %s storage, %d worker%s, %zu rows computed (%.3f s), %zu cache hits "
           "of %zu rows",
           s->G ? "full" : "rows", s->nworkers, s->nworkers == 1 ? "" : "s", computed,
           row_seconds(s), hits, s->cap);
    for (int i = 0; s->w && i < s->nworkers; i++) worker_free(&s->w[i]);
    free(s->w);
    s->w = NULL;
    if (s->shared) pthread_mutex_destroy(&s->cache_lock);
    free_rows_state(s);
    pt_free(s->G);
    pt_gram_csc_free(&s->csc);
    pt_free(s->snorm_all);
    free(s->have);
    pt_gram_rows_free(&s->rows);
}

/* Where a problem stands into a new *out: the dual coefficients, their lazy sums, the margins
 * (every pending update applied), the counters and the last epochs' mistakes. */
static pt_status dual_capture(const kstate *s, const dual *dv, const pt_train_report *r,
                              const pt_train_state *from, int done, size_t pos, size_t pos_mistakes,
                              double steps, bool finished, int shuffles, const pt_rng *rng,
                              pt_train_state **out)
{
    const size_t n = s->n;
    unsigned parts = PT_STATE_DUAL | (dv->beta ? PT_STATE_DUAL_AVG : 0);
    pt_train_state *st = pt_train_state_new(n, 0, 0, parts);
    if (!st) return PT_ERR_NOMEM;
    st->epochs_done = done;
    st->pos = pos;
    st->epoch_mistakes = pos_mistakes;
    st->updates = r->updates;
    st->steps = steps;
    st->finished = finished;
    memcpy(st->alpha, dv->alpha, n * sizeof *st->alpha);
    if (dv->beta) memcpy(st->beta, dv->beta, n * sizeof *st->beta);
    memcpy(st->f, dv->f, n * sizeof *st->f);
    pt_train_state_history(st, from, r);
    pt_status ps = s->p->shuffle ? pt_train_state_keep_order(st, dv->order, n, shuffles, rng)
                                 : PT_OK;
    if (ps != PT_OK) {
        pt_train_state_free(st);
        return ps;
    }
    *out = st;
    return PT_OK;
}

/* What the epoch hook's model is made from: the shared storage, the problem, and where its
 * epoch loop stands. */
typedef struct kernel_hook {
    kstate *s;
    const pt_dataset *view;
    const dual *dv;
    const pt_train_report *r;
    const pt_train_state *from;
    const double *steps;
    const int *shuffles;
    const pt_rng *rng;
} kernel_hook;

/* The model as it stands after the epoch (the current average for the averaged variant), and
 * where the run stands. */
static pt_status hook_model(void *user, int epoch, bool finished, pt_model **model)
{
    const kernel_hook *h = user;
    const pt_train_params *p = h->s->p;
    pt_model *snap = NULL;
    PT_TRY(make_model(h->view, p, h->dv->alpha, h->dv->beta, *h->steps, &snap));
    pt_model_set_meta(snap, h->view, p);
    snap->epochs_run = epoch;
    pt_train_state *now = NULL;
    pt_status st = dual_capture(h->s, h->dv, h->r, h->from, epoch, 0, 0, *h->steps, finished,
                                *h->shuffles, h->rng, &now);
    if (st == PT_OK) st = pt_model_keep_run(snap, now);
    if (st != PT_OK) {
        pt_model_free(snap);
        return st;
    }
    *model = snap;
    return PT_OK;
}

static void hook_release(void *user, pt_model *model)
{
    (void)user;
    pt_model_free(model);
}

/* A mistake at sample i after `steps` visits: alpha_i += 1, f += c_i K[i, :] (and, with a
 * full budget, a random support vector out first). */
static pt_status mistake(kstate *s, kworker *w, const pt_dataset *view, size_t i, double steps,
                         size_t *nsv)
{
    dual *dv = &w->dv;
    const pt_train_params *p = s->p;
    const float eta = p->eta, *Y = view->y, *cw = p->class_weight;
    uint32_t *alpha = dv->alpha;
    float *f = dv->f;
    if (p->kernel.budget && !alpha[i] && *nsv >= p->kernel.budget) {
        /* the budget is full: a random support vector leaves (kernel_budget.c) */
        size_t j = pt_budget_victim(alpha, s->n, *nsv, p->seed, (uint64_t)steps);
        const float eta_j = cw ? eta * cw[view->cls[j]] : eta;
        update(s, w, j, -(eta_j * Y[j]) * (float)alpha[j], f);
        alpha[j] = 0; /* (classic only: pt_train_params_check) */
        (*nsv)--;
    }
    *nsv += !alpha[i];
    update(s, w, i, (cw ? eta * cw[view->cls[i]] : eta) * Y[i], f);
    alpha[i]++;
    if (p->variant == PT_VARIANT_AVERAGED) dv->beta[i] += steps;
    /* AUTO: the rows have cost as much as the Gram would: build it (same values). Not on a
     * distributed run: each rank's clock would switch at its own time, and the Gram is what
     * the split avoids. */
    if (s->storage == PT_GRAM_AUTO && s->gram_fits && !s->G && !s->dist && !s->shared &&
        w->row_seconds >= s->gram_estimate) {
        pt_log(PT_LOG_INFO,
               "kernel path: %.3f s on %zu kernel rows reached the Gram's estimated "
               "%.3f s: switching to the full Gram",
               w->row_seconds, w->computed, s->gram_estimate);
        flush(s, w, f);
        free_rows_state(s);
        return build_full(s);
    }
    return PT_OK;
}

/* ------------------------------------------------- distributed binary run: rows by rank
 *
 * Every rank holds the whole data; rank r owns rows [start(r), start(r + 1)) (multiples of
 * 48, a flush block's alignment) and keeps their margins. The sweep stays in the global
 * order (no shuffle): the owner of the block decides its samples in turn and broadcasts the
 * position of its first mistake (or the block's end); every rank then makes that update on
 * its own columns, element by element as one process does. So every rank sees one
 * process's mistakes in one process's order, and alpha, beta and the step count, hence the
 * model, are one process's bit for bit. One small broadcast a mistake or a block; the kernel
 * rows cost each rank its share of the columns. */

static size_t block_start(size_t n, size_t P, size_t r)
{
    return r >= P ? n : (r * n / P) / 48 * 48;
}

/* One epoch's sweep, every rank together. */
static void sweep_dist(kstate *s, kworker *w, const pt_dataset *view, double *steps,
                       size_t *nsv, size_t *mistakes)
{
    dual *dv = &w->dv;
    const size_t P = (size_t)pt_dist_size(), me = (size_t)pt_dist_rank(), n = s->n;
    const float tau = s->p->margin, *Y = view->y;
    for (size_t b = 0; b < P; b++) {
        const size_t end = block_start(n, P, b + 1);
        for (size_t t = block_start(n, P, b); t < end;) {
            uint64_t u = t;
            if (b == me)
                while (u < end && !(Y[u] * margin(s, w, u, dv->f) <= tau)) u++;
            pt_dist_bcast(&u, sizeof u, (int)b);
            *steps += (double)(u - t); /* integers below 2^53: as many += 1 */
            if (u >= end) break;
            (*mistakes)++;
            (void)mistake(s, w, view, u, *steps, nsv); /* no Gram switch: cannot fail */
            *steps += 1.0;
            t = u + 1;
        }
    }
}

/* Every rank's margins to every rank (the epoch's end: its checks, hooks and state see all of
 * f, and the next epoch's updates start from it). */
static void share_margins(const kstate *s, float *f)
{
    const size_t P = (size_t)pt_dist_size();
    for (size_t b = 0; b < P; b++) {
        size_t lo = block_start(s->n, P, b), hi = block_start(s->n, P, b + 1);
        if (hi > lo) pt_dist_bcast(f + lo, (hi - lo) * sizeof *f, (int)b);
    }
}

/* One binary problem on the shared storage: view has the rows of the setup's dataset and its
 * own labels. It starts from scratch, with the seed's shuffles, as if alone, or from a recorded
 * state, and runs up to epoch `limit`; *state is where it then stands. */
static pt_status train_problem(kstate *s, kworker *w, const pt_dataset *view,
                               const pt_train_state *from, int limit, pt_train_state **state,
                               pt_train_report *r)
{
    dual *dv = &w->dv;
    const pt_train_params *p = s->p;
    const size_t n = s->n;
    const bool averaged = p->variant == PT_VARIANT_AVERAGED;
    float *f = dv->f;
    uint32_t *alpha = dv->alpha, *order = dv->order;
    double *beta = dv->beta;
    memset(f, 0, s->ld * sizeof(float));
    double steps = 0.0;
    int first = 1;
    size_t start = 0, carried = 0;
    bool finished = false;
    if (from) {
        memcpy(f, from->f, n * sizeof(float));
        memcpy(alpha, from->alpha, n * sizeof *alpha);
        if (averaged) memcpy(beta, from->beta, n * sizeof *beta);
        steps = from->steps;
        pt_report_resume(r, from);
        first = from->epochs_done + 1;
        start = from->pos;
        carried = from->epoch_mistakes;
        finished = from->finished;
    } else {
        memset(alpha, 0, (n ? n : 1) * sizeof *alpha);
        if (averaged) memset(beta, 0, (n ? n : 1) * sizeof *beta);
    }
    pt_rng rng;
    int shuffles = 0;
    pt_train_state_order(p->shuffle ? from : NULL, p->seed, order, n, &rng, &shuffles);
    if (!p->shuffle) shuffles = INT32_MAX; /* the order never changes */

    pt_status st = PT_OK;
    const float tau = p->margin, *Y = view->y;
    int done = first - 1;
    size_t pos = start, pos_mistakes = carried;
    kernel_hook hook = {.s = s, .view = view, .dv = dv, .r = r, .from = from, .steps = &steps,
                        .shuffles = &shuffles, .rng = &rng};
    const pt_epoch_ending end = {
        .p = p, .r = r, .t0 = pt_now(), .w = f, .nw = n, .what = "kernel margins",
        .hint = "lower pt_train_params.degree, pt_train_params.gamma or pt_train_params.coef0, "
                "or rescale the features",
        .snapshot = hook_model, .release = hook_release, .path = &hook};
    size_t nsv = 0; /* support vectors (the budget's count) */
    for (size_t i = 0; p->kernel.budget && i < n; i++) nsv += alpha[i] != 0;
    for (int epoch = first; epoch <= limit && !finished; epoch++) {
        for (; shuffles < epoch; shuffles++) pt_rng_shuffle(&rng, order, n);
        size_t mistakes = epoch == first ? carried : 0, before = mistakes;
        if (s->dist) sweep_dist(s, w, view, &steps, &nsv, &mistakes);
        for (size_t t = s->dist ? n : epoch == first ? start : 0; t < n; t++) {
            size_t i = order[t];
            if (Y[i] * margin(s, w, i, f) <= tau) {
                mistakes++;
                if ((st = mistake(s, w, view, i, steps, &nsv)) != PT_OK) goto finish;
            }
            steps += 1.0;
            if (pt_stopping(p->stop)) {
                r->updates += mistakes - before;
                pos = t + 1;
                pos_mistakes = mistakes;
                st = pt_fail(PT_ERR_INTERRUPTED, "interrupted in epoch %d at sample %zu", epoch, t + 1);
                goto finish;
            }
        }
        flush(s, w, f);
        if (s->dist) share_margins(s, f);
        r->updates += mistakes - before;
        bool epoch_done, stop;
        st = pt_epoch_end(&end, epoch, mistakes, NAN, mistakes == 0, &epoch_done, &stop);
        /* distributed: a stop on any rank stops every one, at the same epoch's end */
        if (st == PT_OK && s->dist && pt_dist_first_failed(pt_stopping(p->stop)) >= 0)
            st = pt_fail(PT_ERR_INTERRUPTED, "interrupted after epoch %d", epoch);
        if (epoch_done) {
            done = epoch;
            pos = pos_mistakes = 0;
            finished = mistakes == 0;
            if (finished) r->converged = 1;
        }
        if (st != PT_OK || stop) break;
    }
finish:
    /* the updates still pending (rows storage) go into f: the state holds every one */
    flush(s, w, f);
    if (st == PT_OK || st == PT_ERR_INTERRUPTED) {
        pt_status ms = dual_capture(s, dv, r, from, done, pos, pos_mistakes, steps, finished,
                                    shuffles, &rng, state);
        if (ms != PT_OK) st = ms;
    }
    return st;
}

/* The epochs a problem has done (a finished one: past every limit). */
static int problem_epochs(const pt_train_state *st)
{
    return !st ? 0 : st->finished ? INT32_MAX : st->epochs_done;
}

pt_status pt_kernel_model_from_state(const pt_dataset *view, const pt_train_params *p,
                                     const pt_train_state *st, pt_model **out)
{
    return make_model(view, p, st->alpha, st->beta, st->steps, out);
}

/* ------------------------------------ the training rows' predictions (one-vs-rest, dense)
 *
 * The CLI reports the final model's accuracy on the rows it trained on. Scoring them through
 * the model computes every distinct support vector's kernel row again (n = 60,000, d = 784,
 * 21,000 vectors: 2 TFLOP, as much as training), while the storage of K still holds them. So
 * the scores are summed from the storage exactly as pt_class_scores sums them (scores.c's
 * ovr_kernel_scores: the classes' distinct vectors first seen first, blocks of PT_SV_BLOCK, a
 * float dot a block added in double, the float of the sum), on the same kernel values (gram.h:
 * the same bits wherever computed, K(x, z) as K(z, x)): the same predictions. */

#define SCORE_COLS 64 /* training rows a block */

/* Sample i's row of K in the storage, or NULL. */
static const float *stored_row(const kstate *s, size_t i)
{
    if (s->G) return s->G + i * s->ld;
    return s->cap && s->slot_of[i] >= 0 ? s->cache + (size_t)s->slot_of[i] * s->ld : NULL;
}

/* The distinct support vectors of the K problems (by value, first seen first, as pt_sv_set
 * finds them in the model), each class's coefficients over them (coef, K rows of npad), and
 * each one's row in the storage. Returns false when one is not stored. */
typedef struct score_set {
    size_t N, npad, total;
    const float **row;
    float *coef;
} score_set;

static bool score_set_build(const kstate *s, size_t K, pt_view_fn view_of, void *user,
                            pt_train_state *const *states, score_set *u)
{
    const size_t n = s->n, d = s->rows.d;
    const pt_dataset *ds = s->ds;
    size_t total = 0, cap = 16;
    for (size_t c = 0; c < K; c++)
        for (size_t i = 0; i < n; i++) total += states[c]->alpha[i] != 0;
    while (cap < 2 * total) cap *= 2;
    uint32_t *slot = calloc(cap, sizeof *slot), *entry = malloc((n ? n : 1) * sizeof *entry);
    uint32_t *first = malloc((total ? total : 1) * sizeof *first);
    bool ok = slot && entry && first && total < UINT32_MAX;
    for (size_t i = 0; ok && i < n; i++) entry[i] = UINT32_MAX;
    size_t N = 0;
    /* the set's order: class by class, each class's vectors in the order of their rows */
    for (size_t c = 0; ok && c < K; c++)
        for (size_t i = 0; i < n; i++) {
            if (!states[c]->alpha[i] || entry[i] != UINT32_MAX) continue;
            const float *x = ds->X + i * ds->stride;
            size_t h = (size_t)pt_checksum(x, d * sizeof(float)) & (cap - 1);
            while (slot[h] && memcmp(ds->X + first[slot[h] - 1] * ds->stride, x,
                                     d * sizeof(float)) != 0)
                h = (h + 1) & (cap - 1);
            if (!slot[h]) {
                first[N] = (uint32_t)i;
                slot[h] = (uint32_t)++N;
            }
            entry[i] = slot[h] - 1;
        }
    *u = (score_set){.N = N, .npad = pt_round_up(N ? N : 1, 16), .total = total};
    ok = ok && pt_sv_set_shared(N, total, d, K);
    if (ok) {
        u->row = malloc((N ? N : 1) * sizeof *u->row);
        u->coef = pt_calloc(K * u->npad * sizeof(float), "class coefficients");
        ok = u->row && u->coef;
    }
    for (size_t e = 0; ok && e < N; e++) ok = (u->row[e] = stored_row(s, first[e])) != NULL;
    /* each class's coefficients, as its model has them, added into the set's (duplicates in
     * the class's order) */
    for (size_t c = 0; ok && c < K; c++) {
        pt_dataset view = *ds;
        if (view_of) view_of(user, c, NULL, &view);
        const pt_train_state *st = states[c];
        for (size_t i = 0; i < n; i++)
            if (st->alpha[i])
                u->coef[c * u->npad + entry[i]] +=
                    sv_coef(&view, s->p, st->alpha, st->beta, st->steps, i);
    }
    free(slot);
    free(entry);
    free(first);
    if (!ok) {
        free(u->row);
        pt_free(u->coef);
        u->row = NULL;
        u->coef = NULL;
    }
    return ok;
}

/* The training rows the final models of the K problems predict right (argmax over the
 * classes, ties to the lowest, as pt_model_predict), into *correct; SIZE_MAX when the storage
 * does not hold every support vector's row (or the model would not be scored through its set,
 * or with another table's kernels). */
static pt_status count_correct(const kstate *s, size_t K, pt_view_fn view_of, void *user,
                               pt_train_state *const *states, size_t *correct)
{
    *correct = SIZE_MAX;
    const pt_kernels *ka;
    if (s->sparse || s->dist || K < 2 || pt_kernels_get(PT_ISA_AUTO, &ka) != PT_OK || ka != s->k)
        return PT_OK;
    score_set u;
    if (!score_set_build(s, K, view_of, user, states, &u)) {
        pt_clear_error();
        return PT_OK;
    }
    const size_t n = s->n, N = u.N, npad = u.npad, B = PT_SV_BLOCK;
    const size_t per_thread = (B * SCORE_COLS + B) * sizeof(float) + SCORE_COLS * K * sizeof(double);
    char *work = pt_alloc(per_thread * (size_t)s->threads, "score blocks");
    if (!work) {
        free(u.row);
        pt_free(u.coef);
        return PT_ERR_NOMEM;
    }
    const int32_t *cls = s->ds->cls;
    const ptrdiff_t nb = (ptrdiff_t)((n + SCORE_COLS - 1) / SCORE_COLS);
    size_t right = 0;
#pragma omp parallel num_threads(s->threads) reduction(+ : right)
    {
#ifdef _OPENMP
        char *w = work + (size_t)omp_get_thread_num() * per_thread;
#else
        char *w = work;
#endif
        float *T = (float *)w, *kv = T + B * SCORE_COLS;
        double *acc = (double *)(kv + B);
#pragma omp for schedule(dynamic, 4)
        for (ptrdiff_t b = 0; b < nb; b++) {
            const size_t j0 = (size_t)b * SCORE_COLS, nj = n - j0 < SCORE_COLS ? n - j0 : SCORE_COLS;
            memset(acc, 0, nj * K * sizeof *acc);
            for (size_t e0 = 0; e0 < N; e0 += B) {
                const size_t ne = N - e0 < B ? N - e0 : B;
                for (size_t t = 0; t < ne; t++)
                    memcpy(T + t * SCORE_COLS, u.row[e0 + t] + j0, nj * sizeof(float));
                for (size_t j = 0; j < nj; j++) {
                    for (size_t t = 0; t < ne; t++) kv[t] = T[t * SCORE_COLS + j];
                    for (size_t c = 0; c < K; c++)
                        acc[j * K + c] += s->k->dot(kv, u.coef + c * npad + e0, ne);
                }
            }
            for (size_t j = 0; j < nj; j++) {
                size_t best = 0;
                for (size_t c = 1; c < K; c++)
                    if ((float)acc[j * K + c] > (float)acc[j * K + best]) best = c;
                right += (int32_t)best == cls[j0 + j];
            }
        }
    }
    *correct = right;
    pt_free(work);
    free(u.row);
    pt_free(u.coef);
    return PT_OK;
}

/* Problem c up to epoch limit: its state and report updated. */
/* Problem c up to epoch limit on worker w: its state and report updated. */
static pt_status run_problem(kstate *s, kworker *w, const pt_dataset *ds, size_t c,
                             pt_view_fn view_of, void *user, int limit, pt_train_state **states,
                             pt_train_report *reps)
{
    pt_dataset view = *ds;
    if (view_of) view_of(user, c, w->y, &view);
    pt_train_state *to = NULL;
    pt_train_report part = {0};
    pt_status st = train_problem(s, w, &view, states[c], limit, &to, &part);
    if (st == PT_OK || st == PT_ERR_INTERRUPTED) {
        pt_train_state_free(states[c]);
        states[c] = to;
        pt_status as = pt_report_append(&reps[c], &part);
        if (as != PT_OK) st = as;
    }
    pt_train_report_clear(&part);
    return st;
}

/* The problems not yet at epoch E up to E: in turn on one worker, or on several at once (one
 * a thread, the next problem in class order to the first worker free). Problems do not share
 * anything a result depends on, so each comes out as it would alone. The first problem (in
 * class order) that failed, or that a stop kept from starting, gives the status, its message
 * and *failed, as in turn. */
static pt_status run_round(kstate *s, const pt_dataset *ds, size_t K, pt_view_fn view_of,
                           void *user, int E, pt_train_state **states, pt_train_report *reps,
                           size_t *failed)
{
    const pt_train_params *p = s->p;
    if (!s->shared) {
        for (size_t c = 0; c < K; c++) {
            if (problem_epochs(states[c]) >= E) continue;
            if (pt_stopping(p->stop))
                return pt_fail(PT_ERR_INTERRUPTED, "interrupted in epoch %d, before class %zu of %zu",
                               E, c + 1, K);
            *failed = c;
            PT_TRY(run_problem(s, &s->w[0], ds, c, view_of, user, E, states, reps));
        }
        return PT_OK;
    }
    enum { NOT_STARTED = -1 };
    int *res = malloc(K * sizeof *res);
    char *msg = malloc(K * 256);
    if (!res || !msg) {
        free(res);
        free(msg);
        return pt_fail(PT_ERR_NOMEM, "cannot allocate the round of %zu classes", K);
    }
    for (size_t c = 0; c < K; c++) res[c] = PT_OK;
    const ptrdiff_t nk = (ptrdiff_t)K;
#pragma omp parallel for num_threads(s->nworkers) schedule(dynamic, 1)
    for (ptrdiff_t c = 0; c < nk; c++) {
        if (problem_epochs(states[c]) >= E) continue;
        if (pt_stopping(p->stop)) {
            res[c] = NOT_STARTED;
            continue;
        }
#ifdef _OPENMP
        kworker *w = &s->w[omp_get_thread_num()];
#else
        kworker *w = &s->w[0];
#endif
        pt_status st = run_problem(s, w, ds, (size_t)c, view_of, user, E, states, reps);
        res[c] = (int)st;
        if (st != PT_OK) snprintf(msg + (size_t)c * 256, 256, "%s", pt_last_error());
    }
    pt_status st = PT_OK;
    for (size_t c = 0; c < K && st == PT_OK; c++) {
        if (res[c] == NOT_STARTED)
            st = pt_fail(PT_ERR_INTERRUPTED, "interrupted in epoch %d, before class %zu of %zu", E,
                         c + 1, K);
        else if (res[c] != PT_OK) {
            *failed = c;
            st = pt_fail((pt_status)res[c], "%s", msg + c * 256);
        }
    }
    free(res);
    free(msg);
    return st;
}

pt_status pt_train_kernel_problems(const pt_dataset *ds, size_t K, pt_view_fn view_of, void *user,
                                   const pt_train_params *p, const pt_kernels *k,
                                   pt_train_state **states, pt_train_report *reps,
                                   pt_round_fn round, void *round_user, size_t *failed,
                                   size_t *train_correct)
{
    *failed = SIZE_MAX;
    if (train_correct) *train_correct = SIZE_MAX;
    if (p->variant == PT_VARIANT_VOTED)
        return pt_fail(PT_ERR_UNSUPPORTED,
                       "the voted perceptron has no kernel path (use PT_VARIANT_AVERAGED)");
    kstate s = {0};
    /* two classes on the whole data on every rank: the rows split across the ranks (the
     * one-vs-rest split gives each rank its own problems, with a view) */
    const bool dist = !view_of && ds->replicated && pt_dist_size() > 1;
    if (dist && p->shuffle)
        return pt_fail(PT_ERR_UNSUPPORTED, "a distributed run (%d ranks) of the kernel path on "
                       "two classes does not support shuffling (pt_train_params.shuffle): it "
                       "sweeps in the file's order", pt_dist_size());
    pt_status st = kernel_setup(&s, ds, p, k, K);
    s.dist = dist;
    s.lo = dist ? block_start(s.n, (size_t)pt_dist_size(), (size_t)pt_dist_rank()) : 0;
    s.hi = dist ? block_start(s.n, (size_t)pt_dist_size(), (size_t)pt_dist_rank() + 1) : s.n;
    /* Rounds: every problem up to epoch E, then round(E), for E from the epoch of the problem
     * furthest behind; without round, one round to the last epoch. */
    int E = p->epochs;
    for (size_t c = 0; round && c < K; c++)
        if (problem_epochs(states[c]) < E) E = problem_epochs(states[c]) + 1;
    for (; st == PT_OK; E++) {
        st = run_round(&s, ds, K, view_of, user, E, states, reps, failed);
        if (st != PT_OK) break;
        *failed = SIZE_MAX;
        bool all_done = true;
        for (size_t c = 0; c < K; c++) all_done &= problem_epochs(states[c]) >= p->epochs;
        if (!round || round(round_user, E) != 0 || all_done || E >= p->epochs) break;
    }
    const unsigned parts = PT_STATE_DUAL | (p->variant == PT_VARIANT_AVERAGED ? PT_STATE_DUAL_AVG : 0);
    for (size_t c = 0; c < K && (st == PT_OK || st == PT_ERR_INTERRUPTED); c++) {
        /* problems never started (an interrupt came first) stand at the start */
        if (!states[c] && !(states[c] = pt_train_state_new(s.n, 0, 0, parts)))
            st = PT_ERR_NOMEM;
        /* and those that had nothing left to do report where they stood */
        else if (!reps[c].epochs_run && !reps[c].mistakes_per_epoch)
            pt_report_resume(&reps[c], states[c]);
    }
    if (K > 0) reps[0].gram_seconds += s.setup_seconds + row_seconds(&s);
    /* the final models only: not a run the round callback stopped (its message stays) */
    bool all_done = true;
    for (size_t c = 0; st == PT_OK && c < K; c++) all_done &= problem_epochs(states[c]) >= p->epochs;
    if (st == PT_OK && all_done && train_correct && s.n && K > 0) {
        double t0 = pt_now();
        st = count_correct(&s, K, view_of, user, states, train_correct);
        reps[0].score_seconds += pt_now() - t0;
    }
    kernel_free(&s);
    return st;
}

pt_status pt_train_kernel(const pt_dataset *ds, const pt_train_params *p, const pt_kernels *k,
                          pt_model **out, pt_train_report *r)
{
    size_t failed;
    *out = NULL;
    pt_train_state *state = p->resume ? pt_train_state_clone(p->resume->states[0]) : NULL;
    if (p->resume && !state) return PT_ERR_NOMEM;
    pt_status s = pt_train_kernel_problems(ds, 1, NULL, NULL, p, k, &state, r, NULL, NULL, &failed,
                                           NULL);
    if (s == PT_OK || s == PT_ERR_INTERRUPTED) {
        pt_status ms = pt_kernel_model_from_state(ds, p, state, out);
        if (ms == PT_OK) {
            ms = pt_model_keep_run(*out, state); /* it takes the state */
            state = NULL;
        }
        if (ms != PT_OK) {
            pt_model_free(*out);
            *out = NULL;
            s = ms;
        }
    }
    pt_train_state_free(state);
    return s;
}
