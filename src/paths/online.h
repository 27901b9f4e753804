/* layers: reads rows by form until ported to data/rows.h */
/*
 * The online path's state and its step on one sample, shared by the sequential pass
 * (online_pass.c), the blocked pass (online_blocked.c), the epoch loops (train_online.c) and
 * the state they keep (online.c). Private to paths/.
 */
#ifndef PT_ONLINE_H
#define PT_ONLINE_H

#include "paths.h"

typedef struct online {
    const pt_kernels *k;
    size_t len; /* floats per row (padded stride) */
    float tau, eta, bias;
    bool averaged;
    float *w, *u; /* u: the averaged variant's lazy sum */
    float b, ub;
    double steps; /* samples seen, for the average (exact in double up to 2^53) */
    /* voted: the vectors so far (nv of them, room for cap), and the current one's survival */
    bool voted;
    float *V, *Vb, *Vc;
    size_t nv, cap, max_vectors;
    float survived;
    /* voted under a cap (pt_train_params.voted_max_vectors K): at most keep = K - 1 closed
     * vectors beside the current one, those of largest survival counts (online.c); seq numbers
     * each in the order it closed, heap holds the slots, the one to drop first (SIZE_MAX: no
     * cap, seq and heap NULL) */
    size_t keep;
    uint64_t *seq, next_seq;
    size_t *heap;
    pt_status vote_error; /* set by online_push_vote: it ends the run, as a stop would */
    char vote_msg[512]; /* its message: the interrupt that stops the epoch overwrites the last error */
    const pt_stop *stop; /* the call's (pt_train_params.stop) */
    /* class weights (pt_train_params.class_weight, NULL: none): sample i steps with eta0 times
     * cw[cls[i]], set into eta before its visit */
    const float *cw;
    float eta0;
    /* a compact dataset's row widened to float32 (len floats; NULL for float32 data) */
    float *wide;
} online;

/* The step size of row i: eta, scaled by its class's weight when there are class weights. */
static inline void online_weigh(online *o, const pt_dataset *ds, size_t i)
{
    if (o->cw) o->eta = o->eta0 * o->cw[ds->cls[i]];
}

/* What to change when the online path's weights become non-finite (pt_epoch_end's message). */
#define ONLINE_NONFINITE_HINT "lower pt_train_params.eta or rescale the features"

/* Voted: the current vector closes (a mistake is about to change it): store it with its
 * survival count, under a cap in place of the closed vector of smallest count, or not at all
 * when its own count is the smallest (false, with o->vote_error set, when the memory budget
 * refuses it). */
bool online_close_vote(online *o);
/* Voted: append the current vector, still open, after the closed ones, which a cap first puts
 * back in the order they closed (the order of a model's vectors, whose last is the current
 * one): the model's vectors as they stand. Undo with o->nv-- (false as online_close_vote). */
bool online_push_live(online *o);

/* The model as it stands into w, b: the last iterate, or for the averaged variant the
 * average w - u / T (w may be o->w itself, at the end). */
void online_snapshot(const online *o, float *w, float *b);

/* A run state for o's weights (the averaged variant's sums too) on n rows (a share of a
 * distributed run: the rows of all shares). */
pt_train_state *online_state_new(const online *o, size_t n);
/* Record where the run stands into st: the live iterate, the counters, the last epochs'
 * mistakes (from, the state the run started from, keeps the older ones) and the sample order
 * of norder rows (NULL: as given). */
pt_status online_state_capture(const online *o, const pt_train_report *r,
                               const pt_train_state *from, int epochs_done, size_t pos,
                               size_t epoch_mistakes, bool finished, const uint32_t *order,
                               size_t norder, int shuffles, const pt_rng *rng,
                               pt_train_state *st);
/* Continue from a recorded state: the live iterate and the counters (the report takes over
 * its epochs in pt_report_resume). */
void online_state_restore(online *o, const pt_train_state *st);
/* Voted: the vectors of the run to resume, from the model `from` or, when m already holds
 * them (one-vs-rest hands a class's vectors from one round to the next), taken from m. */
pt_status online_votes_restore(online *o, pt_model *m, const pt_model *from,
                               const pt_train_state *st);

/* Whether a sample whose score is known violates the margin; the voted variant's vote is
 * closed or its survival counted here, for dense and sparse rows alike. */
static inline int visit_decide(online *o, float y, float score)
{
    int upd = y * score <= o->tau;
    if (o->voted) {
        if (upd) online_close_vote(o); /* a failure is in vote_error, which stops the pass */
        o->survived = upd ? 1.0f : o->survived + 1.0f;
    }
    return upd;
}

/* The step on a sample whose score is known: update on a margin violation. Returns 1 if it
 * updated. Every sample counts towards the average, mistake or not. */
static inline int visit(online *o, const float *x, float y, float score)
{
    int upd = visit_decide(o, y, score);
    if (upd) {
        float a = o->eta * y;
        if (o->averaged) {
            float c = (float)o->steps * a;
            o->k->axpy2(a, c, x, o->w, o->u, o->len);
            o->ub += c * o->bias;
        } else {
            o->k->axpy(a, x, o->w, o->len);
        }
        o->b += a * o->bias;
    }
    o->steps += 1.0;
    return upd;
}

/* visit on a sparse row (nnz pairs idx, val): the same decision and counters, the update by
 * the sparse kernels (O(nnz), the averaged variant's lazy sum included), so on the dense copy
 * of the row it gives the same w. */
static inline int visit_sparse(online *o, const uint32_t *idx, const float *val, size_t nnz,
                               float y, float score)
{
    int upd = visit_decide(o, y, score);
    if (upd) {
        float a = o->eta * y;
        if (o->averaged) {
            float c = (float)o->steps * a;
            o->k->sparse->axpy2(a, c, idx, val, nnz, o->w, o->u);
            o->ub += c * o->bias;
        } else {
            o->k->sparse->axpy(a, idx, val, nnz, o->w);
        }
        o->b += a * o->bias;
    }
    o->steps += 1.0;
    return upd;
}

static inline float score_of_sparse(const online *o, const uint32_t *idx, const float *val,
                                    size_t nnz)
{
    return o->k->sparse->dot(o->w, idx, val, nnz) + o->b * o->bias;
}

/* Whether the pass must stop after this sample: the call is stopped, or the run failed. */
static inline bool online_stopped(const online *o)
{
    return o->vote_error != PT_OK || pt_stopping(o->stop);
}

static inline float score_of(const online *o, const float *x)
{
    return o->k->dot(o->w, x, o->len) + o->b * o->bias;
}

/* Sample t's row: the t-th of the epoch's order (NULL: the dataset's). */
static inline const float *row(const pt_dataset *ds, const uint32_t *order, size_t t)
{
    return ds->X + (order ? order[t] : t) * ds->stride;
}

/* Sample t's row of a sparse dataset: its pairs in *idx, *val, and their count. */
static inline size_t sparse_row(const pt_dataset *ds, const uint32_t *order, size_t t,
                                const uint32_t **idx, const float **val)
{
    return pt_csr_row(ds, order ? order[t] : t, idx, val);
}

/* Shuffled order visits rows at random, which the hardware prefetcher cannot follow: ask for
 * a row a few samples ahead, one cache line at a time. */
#define PREFETCH_AHEAD 4
static inline void prefetch_row(const float *x, size_t floats)
{
    for (size_t j = 0; j < floats; j += 16) __builtin_prefetch(x + j, 0, 3);
}

/* The same for row i of a sparse dataset: its columns and values (the weights it gathers are
 * fetched by the step itself). */
static inline void prefetch_sparse_row(const pt_dataset *ds, size_t i)
{
    uint64_t a = ds->rowptr[i], e = ds->rowptr[i + 1];
    for (uint64_t j = a; j < e; j += 16) {
        __builtin_prefetch(ds->col + j, 0, 3);
        __builtin_prefetch(ds->val + j, 0, 3);
    }
}

/* Shuffled sparse rows, at sample t: the pairs of sample t + PREFETCH_AHEAD, and the offsets
 * and labels of sample t + 2 PREFETCH_AHEAD, whose loads the pairs' addresses wait on (without
 * them, a shuffled epoch of the rcv1-like set took much more CPU time: bench
 * online/sparse_epoch/variant:classic_shuffled). */
static inline void prefetch_sparse_ahead(const pt_dataset *ds, const uint32_t *order, size_t t)
{
    if (t + PREFETCH_AHEAD < ds->n) prefetch_sparse_row(ds, order[t + PREFETCH_AHEAD]);
    if (t + 2 * PREFETCH_AHEAD < ds->n) {
        size_t i = order[t + 2 * PREFETCH_AHEAD];
        __builtin_prefetch(ds->rowptr + i, 0, 3);
        __builtin_prefetch(ds->cls + i, 0, 3);
        if (ds->y) __builtin_prefetch(ds->y + i, 0, 3);
    }
}

/* Samples found correct without visiting them one by one: only the counters move, as visit
 * would move them (the voted count one at a time, as float addition does). */
static inline void visit_correct(online *o, size_t rows)
{
    if (o->voted)
        for (size_t r = 0; r < rows; r++) o->survived += 1.0f;
    o->steps += (double)rows;
}

/* The choice of pass for each epoch (online_pass.c). */
typedef struct online_pass {
    pt_online_pass mode; /* as asked: auto, sequential or blocked */
    int threads;
    size_t n;
    bool mapped;         /* the rows are mapped one by one (an expansion): sequential only */
    bool big;            /* X (or the CSR arrays) large enough for auto to try the blocked pass */
    /* auto: the last sequential epoch's time. An epoch of the blocked pass that is not faster
     * sets it aside: when its mistakes were many (too dense to pay), until the mistakes per
     * epoch have fallen four times below; when they were few (a busy machine: a thread that
     * lost its core), for one epoch. */
    double seq_seconds;
    size_t blocked_below; /* auto tries blocked only under this many mistakes */
    int blocked_from;     /* and from this epoch on */
    size_t window_rows;   /* streamed: rows of the windows the pass walks (0: the dataset's;
                           * a shuffled order's chunk otherwise), sequential only */
} online_pass;

/* Set up the choice for a run of p (its pass) with `threads` threads on ds, rows of len floats
 * (mapped: each row is mapped before its step). */
void online_pass_init(online_pass *ps, const pt_train_params *p, int threads,
                      const pt_dataset *ds, size_t len, bool mapped);
/* One epoch from sample *t on by the pass chosen for it, `last` being the previous epoch's
 * mistakes: *mistakes accumulates, *t ends at n or where an interrupt stopped it (the samples
 * before *t are done). map (or NULL) maps each row into mapped before its step. */
pt_status online_pass_epoch(online_pass *ps, online *o, const pt_dataset *ds,
                            const uint32_t *order, const pt_row_map *map, float *mapped,
                            int epoch, size_t last, size_t *t, size_t *mistakes);

/* One blocked epoch from sample *t_io on, with `threads` threads (see online_blocked.c): the
 * same decisions, updates and w as the sequential pass. expected_mistakes (the last epoch's)
 * sizes its chunks. *mistakes accumulates; *t_io ends at
 * n, or where an interrupt stopped it, or (seq_rate > 0, auto) where the pass gave up because
 * it ran at half seq_rate samples/s or less (*gave_up set: the caller finishes sequentially). */
pt_status online_epoch_blocked(online *o, const pt_dataset *ds, const uint32_t *order, int threads,
                               size_t expected_mistakes, size_t *t_io, size_t *mistakes, int epoch,
                               double seq_rate, bool *gave_up);

#endif /* PT_ONLINE_H */
