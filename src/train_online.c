/*
 * The online single-sample path: for each sample, s = w.x + b; if y s <= tau then
 * w += eta y x, b += eta y (the bias as a constant-1 coordinate). One epoch streams X once.
 *
 * Variants: classic (last iterate), averaged and voted. The average of all iterates uses the
 * lazy sum: with c the number of samples seen before an update of delta, keep u += c delta;
 * the average after T samples is w - u / T. No O(d) work per correct sample. The voted
 * perceptron (Freund and Schapire) keeps every intermediate vector with the number of samples
 * it survived and predicts by their weighted vote; it stores one vector per update, within
 * the memory budget.
 *
 * Passes: sequential, or blocked (online_blocked.c): the other threads score the samples ahead
 * of the walk, and the walk takes its decisions from those scores while w has not changed
 * since. The scores come from the same dot kernel as the sequential pass's, so the decisions,
 * the updates and w are bit-identical.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "online.h"

/* Auto: go blocked when the last epoch had fewer than n / AUTO_RATE mistakes (each mistake
 * costs a hand-over of w and the chunks scored ahead; at this rate most chunks have none) and
 * X is larger than AUTO_MIN_BYTES: below that X sits in cache, an epoch takes well under a
 * millisecond, and handing chunks between threads costs more than the second core gives (and
 * much more when the machine is oversubscribed). */
#define AUTO_RATE 256
#define AUTO_MIN_BYTES ((size_t)64 << 20)
/* A blocked epoch that did not pay with fewer mistakes than this (a few tens of microseconds
 * each) was slowed by the machine, not by its mistakes: auto retries it after one sequential
 * epoch instead of waiting for fewer mistakes. */
#define AUTO_NOISE_MISTAKES 16

/* Auto, after a blocked epoch that did not pay (`last`: the mistakes it expected). */
static void set_aside(size_t *blocked_below, int *blocked_from, int epoch, size_t last)
{
    if (last < AUTO_NOISE_MISTAKES) *blocked_from = epoch + 2;
    else *blocked_below = last / 4;
}

/* Voted: store the current vector with its survival count before it changes. */
bool online_push_vote(online *o)
{
    if (o->survived == 0.0f) return true;
    if (o->nv == o->cap) {
        if (o->nv >= o->max_vectors) {
            o->vote_error = pt_fail(PT_ERR_LIMIT,
                                    "the voted perceptron stores one vector per update: more than "
                                    "%zu vectors of %zu floats exceed the memory budget "
                                    "(pt_train_params.mem_budget_bytes); use PT_VARIANT_AVERAGED, "
                                    "which approximates it in O(d) memory",
                                    o->max_vectors, o->len);
            snprintf(o->vote_msg, sizeof o->vote_msg, "%s", pt_last_error());
            return false;
        }
        size_t cap = o->cap ? 2 * o->cap : 64;
        if (cap > o->max_vectors) cap = o->max_vectors;
        float *V = pt_alloc(cap * o->len * sizeof(float), "voted vectors");
        float *Vb = realloc(o->Vb, cap * sizeof(float)), *Vc = Vb ? realloc(o->Vc, cap * sizeof(float)) : NULL;
        if (Vb) o->Vb = Vb;
        if (Vc) o->Vc = Vc;
        if (!V || !Vb || !Vc) {
            pt_free(V);
            o->vote_error = pt_fail(PT_ERR_NOMEM, "cannot grow the voted vectors to %zu", cap);
            snprintf(o->vote_msg, sizeof o->vote_msg, "%s", pt_last_error());
            return false;
        }
        if (o->V) memcpy(V, o->V, o->nv * o->len * sizeof(float));
        pt_free(o->V);
        o->V = V;
        o->cap = cap;
    }
    memcpy(o->V + o->nv * o->len, o->w, o->len * sizeof(float));
    o->Vb[o->nv] = o->b;
    o->Vc[o->nv] = o->survived;
    o->nv++;
    return true;
}

/* One sequential epoch from sample *t on; *mistakes accumulates, *t ends at n (or where an
 * interrupt stopped it: the samples before *t are done). */
static pt_status epoch_sequential(online *o, const pt_dataset *ds, const uint32_t *order,
                                  const pt_row_map *map, float *mapped, size_t *t_io,
                                  size_t *mistakes, int epoch)
{
    size_t count = *mistakes, t = *t_io;
    const float *Y = ds->y;
    pt_status s = PT_OK;
    if (!order && !map && !o->averaged && !o->voted) {
        /* The plain pass: the whole loop in the kernel, a chunk of rows a call (a chunk is
         * well under a millisecond, so an interrupt is still seen at once). */
        const size_t chunk = 8192;
        while (t < ds->n) {
            size_t rows = ds->n - t < chunk ? ds->n - t : chunk;
            count += o->k->step_rows(o->w, &o->b, ds->X + t * ds->stride, ds->stride, Y + t, rows,
                                     o->len, o->tau, o->eta, o->bias);
            t += rows;
            if (online_stopped(o)) {
                s = pt_fail(PT_ERR_INTERRUPTED, "interrupted in epoch %d after sample %zu", epoch, t);
                break;
            }
        }
        *t_io = t;
        *mistakes = count;
        return s;
    }
    for (; t < ds->n; t++) {
        const float *x = row(ds, order, t);
        float y = Y[order ? order[t] : t];
        if (order && t + PREFETCH_AHEAD < ds->n) prefetch_row(row(ds, order, t + PREFETCH_AHEAD), ds->stride);
        if (map) {
            map->map(map->ctx, x, mapped);
            x = mapped;
        }
        if (!o->averaged && !o->voted) {
            /* the fused kernel: one call, x still in L1 for the update */
            float sc;
            count += (size_t)o->k->step(o->w, &o->b, x, o->len, y, o->tau, o->eta, o->bias, &sc);
        } else {
            count += (size_t)visit(o, x, y, score_of(o, x));
        }
        if (online_stopped(o)) {
            t++;
            s = pt_fail(PT_ERR_INTERRUPTED, "interrupted in epoch %d after sample %zu", epoch, t);
            break;
        }
    }
    *t_io = t;
    *mistakes = count;
    return s;
}

/* The model as it stands into w, b: the last iterate, or for the averaged variant the
 * average w - u / T (w may be o->w itself, at the end). */
static void snapshot(const online *o, float *w, float *b)
{
    if (!o->averaged || o->steps == 0) {
        if (w != o->w) memcpy(w, o->w, o->len * sizeof(float));
        *b = o->b;
        return;
    }
    float inv = (float)(1.0 / o->steps);
    o->k->scale_add(1.0f, o->w, -inv, o->u, w, o->len);
    *b = o->b - o->ub * inv;
}

static pt_status check_finite(const online *o, int epoch)
{
    bool ok = isfinite(o->b);
    for (size_t j = 0; j < o->len && ok; j++) ok = isfinite(o->w[j]);
    if (ok) return PT_OK;
    return pt_fail(PT_ERR_NUMERIC,
                   "weights became non-finite in epoch %d: lower pt_train_params.eta or rescale the "
                   "features",
                   epoch);
}

/* Record where the run stands into st (allocated to o's sizes by state_alloc). */
static void state_capture(const online *o, const pt_train_report *r, size_t n, int epochs_done,
                          size_t sample, size_t epoch_mistakes, pt_train_state *st)
{
    st->n = n;
    st->epochs_done = epochs_done;
    st->sample = sample;
    st->epoch_mistakes = epoch_mistakes;
    st->updates = r->updates;
    st->steps = o->steps;
    st->b = o->b;
    st->ub = o->ub;
    memcpy(st->w, o->w, o->len * sizeof(float));
    if (st->u) memcpy(st->u, o->u, o->len * sizeof(float));
    if (epochs_done > 0) memcpy(st->history, r->mistakes_per_epoch, (size_t)epochs_done * sizeof(size_t));
}

static pt_train_state *state_alloc(const online *o, int max_epochs)
{
    pt_train_state *st = calloc(1, sizeof *st);
    if (!st) return NULL;
    st->len = o->len;
    st->w = pt_alloc(o->len * sizeof(float), "training state");
    st->u = o->averaged ? pt_alloc(o->len * sizeof(float), "training state") : NULL;
    st->history = malloc(((size_t)max_epochs + 1) * sizeof(size_t));
    if (!st->w || (o->averaged && !st->u) || !st->history) {
        pt_train_state_free(st);
        return NULL;
    }
    return st;
}

/* Continue from a recorded state: weights, counters and the report so far. */
static pt_status state_restore(online *o, const pt_train_state *st, const pt_dataset *ds,
                               const pt_train_params *p, pt_train_report *r)
{
    if (st->n != ds->n || st->len != o->len)
        return pt_fail(PT_ERR_INVALID, "the run to resume was on %zu rows of %zu floats; this data "
                       "has %zu rows of %zu", st->n, st->len, ds->n, o->len);
    if ((st->u != NULL) != o->averaged)
        return pt_fail(PT_ERR_INVALID, "the run to resume used another variant");
    if (st->epochs_done > p->epochs)
        return pt_fail(PT_ERR_INVALID, "the run to resume has done %d epochs, more than "
                       "pt_train_params.epochs %d",
                       st->epochs_done, p->epochs);
    memcpy(o->w, st->w, o->len * sizeof(float));
    if (o->u) memcpy(o->u, st->u, o->len * sizeof(float));
    o->b = st->b;
    o->ub = st->ub;
    o->steps = st->steps;
    for (int e = 0; e < st->epochs_done; e++) PT_TRY(pt_report_push_epoch(r, st->history[e], NAN));
    /* restored epochs took no time in this run (pt_train reports them as 0 s) */
    for (int e = 0; e < st->epochs_done && r->seconds_per_epoch; e++) r->seconds_per_epoch[e] = -INFINITY;
    r->updates = st->updates;
    return PT_OK;
}

static pt_status train(const pt_dataset *ds, const pt_row_map *map, const pt_train_params *p,
                       const pt_kernels *k, pt_model *m, pt_train_report *r)
{
    const size_t n = ds->n;
    if (p->variant == PT_VARIANT_VOTED && p->resume)
        return pt_fail(PT_ERR_UNSUPPORTED, "a voted perceptron run cannot be resumed");
    online o = {
        .k = k,
        .len = map ? pt_stride_for(map->d_out) : ds->stride,
        .tau = p->margin,
        .eta = p->eta,
        .bias = p->bias ? 1.0f : 0.0f,
        .averaged = p->variant == PT_VARIANT_AVERAGED,
        .voted = p->variant == PT_VARIANT_VOTED,
        .w = m->w,
        .stop = p->stop,
        .b = m->b, /* 0, or a warm start's */
    };
    size_t row_bytes = (map ? pt_stride_for(map->d_out) : ds->stride) * sizeof(float) + 2 * sizeof(float);
    o.max_vectors = p->mem_budget_bytes / row_bytes;
    const int threads = pt_threads_resolve(p->threads);
    uint32_t *order = NULL;
    float *mapped = NULL;
    pt_model *snap = NULL; /* what the epoch hook sees */
    pt_train_state *state = NULL;
    const pt_train_state *resume = p->resume ? p->resume->state : NULL;
    pt_status s = PT_OK;
    if (p->resume && !resume)
        return pt_fail(PT_ERR_INVALID, "the model to resume from records no run in progress");
    if (p->shuffle && n > UINT32_MAX)
        return pt_fail(PT_ERR_LIMIT, "pt_train_params.shuffle supports up to 2^32 rows (got %zu)", n);
    /* every buffer once, before the first epoch */
    if ((o.averaged && !(o.u = pt_calloc(o.len * sizeof(float), "averaging buffer"))) ||
        (p->shuffle && !(order = pt_alloc((n ? n : 1) * sizeof *order, "sample order"))) ||
        (map && !(mapped = pt_calloc(o.len * sizeof(float), "mapped row"))) ||
        (p->epoch_hook && !(snap = pt_model_clone(m))) ||
        !(state = state_alloc(&o, p->epochs)) || (snap && !(snap->state = state_alloc(&o, p->epochs)))) {
        s = pt_fail(PT_ERR_NOMEM, "cannot allocate the online path's buffers (%zu floats a row)", o.len);
        goto out;
    }
    if (order)
        for (size_t i = 0; i < n; i++) order[i] = (uint32_t)i;
    pt_rng rng;
    pt_rng_seed(&rng, p->seed);
    int first = 1;
    size_t start = 0, carried = 0; /* where the first epoch starts, and its mistakes so far */
    if (resume) {
        if ((s = state_restore(&o, resume, ds, p, r)) != PT_OK) goto out;
        first = resume->epochs_done + 1;
        start = resume->sample;
        carried = resume->epoch_mistakes;
        /* replay the shuffles of the epochs done: the order of epoch `first` comes next */
        for (int e = 1; order && e < first; e++) pt_rng_shuffle(&rng, order, n);
        if (resume->epochs_done > 0 && resume->sample == 0 &&
            resume->history[resume->epochs_done - 1] == 0) {
            r->converged = 1; /* it had converged: nothing left to do */
            first = p->epochs + 1;
        }
    }
    double t0 = pt_now();
    size_t last = first > 1 ? r->mistakes_per_epoch[first - 2] : n; /* previous epoch's mistakes */
    /* auto: the last sequential epoch's time. An epoch of the blocked pass that is not faster
     * sets it aside: when its mistakes were many (too dense to pay), until the mistakes per
     * epoch have fallen four times below; when they were few (a busy machine: a thread that
     * lost its core), for one epoch. */
    double seq_seconds = 0.0;
    size_t blocked_below = SIZE_MAX; /* auto tries blocked only under this many mistakes */
    int blocked_from = 0;            /* and from this epoch on */
    if (p->pass == PT_PASS_AUTO && threads >= 2 && !map && n * o.len * sizeof(float) >= AUTO_MIN_BYTES) {
        /* start the thread team now, not in the first blocked epoch (whose time auto judges) */
#pragma omp parallel num_threads(threads)
        {
        }
    }

    for (int epoch = first; epoch <= p->epochs; epoch++) {
        if (order) pt_rng_shuffle(&rng, order, n);
        bool blocked = !map && (p->pass == PT_PASS_BLOCKED ||
                                (p->pass == PT_PASS_AUTO && threads >= 2 && epoch > 1 && last < blocked_below &&
                                 epoch >= blocked_from &&
                                 seq_seconds > 0.0 && last * AUTO_RATE < n &&
                                 n * o.len * sizeof(float) >= AUTO_MIN_BYTES));
        double e0 = pt_now();
        size_t t = epoch == first ? start : 0, mistakes = epoch == first ? carried : 0;
        size_t before = mistakes;
        bool gave_up = false;
        double seq_rate = p->pass == PT_PASS_AUTO && seq_seconds > 0 ? (double)n / seq_seconds : 0.0;
        s = blocked ? online_epoch_blocked(&o, ds, order, threads, last, &t, &mistakes, epoch, seq_rate, &gave_up)
                    : epoch_sequential(&o, ds, order, map, mapped, &t, &mistakes, epoch);
        if (gave_up) {
            set_aside(&blocked_below, &blocked_from, epoch, last);
            pt_log(PT_LOG_INFO,
                   "online path: epoch %d: the blocked pass ran slower than the sequential one "
                   "(%zu mistakes by sample %zu): sequential from there",
                   epoch, mistakes - before, t);
            s = epoch_sequential(&o, ds, order, map, mapped, &t, &mistakes, epoch);
        }
        r->updates += mistakes - before;
        double took = pt_now() - e0;
        if (!blocked) {
            seq_seconds = took;
        } else if (!gave_up && p->pass == PT_PASS_AUTO && took > 0.9 * seq_seconds) {
            set_aside(&blocked_below, &blocked_from, epoch, last);
            pt_log(PT_LOG_INFO, "online path: epoch %d: the blocked pass took %.2f ms, the last sequential epoch %.2f ms",
                   epoch, took * 1e3, seq_seconds * 1e3);
        }
        if (s == PT_ERR_INTERRUPTED && o.vote_error != PT_OK) {
            s = pt_fail(o.vote_error, "%s", o.vote_msg);
        }
        if (s == PT_ERR_INTERRUPTED && !o.voted) {
            /* keep where it stands so that --resume continues exactly from here */
            state_capture(&o, r, n, epoch - 1, t, mistakes, state);
            m->state = state;
            state = NULL;
        }
        if (s != PT_OK) break;
        if ((s = pt_report_push_epoch(r, mistakes, NAN)) != PT_OK) break;
        if ((s = check_finite(&o, epoch)) != PT_OK) break;
        last = mistakes;
        if (p->progress && p->progress(epoch, mistakes, pt_now() - t0, p->progress_user)) {
            s = pt_fail(PT_ERR_INTERRUPTED, "stopped by the progress callback after epoch %d", epoch);
            break;
        }
        if (snap) {
            snapshot(&o, snap->w, &snap->b);
            snap->epochs_run = epoch;
            state_capture(&o, r, n, epoch, 0, 0, snap->state);
            if (p->epoch_hook(snap, epoch, mistakes, p->epoch_user)) break;
        }
        if (mistakes == 0) {
            r->converged = 1;
            break;
        }
    }
    snapshot(&o, o.w, &m->b);
    if (o.voted && (s == PT_OK || s == PT_ERR_INTERRUPTED)) {
        /* the last vector votes too; hand the vectors to the model */
        if (!online_push_vote(&o)) {
            s = pt_fail(o.vote_error, "%s", o.vote_msg);
            goto out;
        }
        m->n_votes = o.nv;
        m->votes = o.V;
        m->vote_b = o.Vb;
        m->vote_c = o.Vc;
        o.V = o.Vb = o.Vc = NULL;
    }
out:
    pt_free(o.V);
    free(o.Vb);
    free(o.Vc);
    pt_free(o.u);
    pt_free(order);
    pt_free(mapped);
    pt_model_free(snap);
    pt_train_state_free(state);
    return s;
}

pt_status pt_train_online(const pt_dataset *ds, const pt_train_params *p, const pt_kernels *k,
                          pt_model *m, pt_train_report *r)
{
    return train(ds, NULL, p, k, m, r);
}

pt_status pt_train_online_mapped(const pt_dataset *ds, const pt_row_map *map,
                                 const pt_train_params *p, const pt_kernels *k, pt_model *m,
                                 pt_train_report *r)
{
    return train(ds, map, p, k, m, r);
}

/*
 * One-vs-rest in lockstep: the binary problems "class c against the rest" for c in [c0, c1),
 * all fed from one pass over X per epoch (so X streams once per epoch, not once per class).
 * Each problem sees exactly what a run of its own would see (same order, same updates) and
 * stops at its own first epoch with no mistake, so the weights equal K separate runs.
 */
pt_status pt_train_online_ovr(const pt_dataset *ds, const pt_train_params *p, const pt_kernels *k,
                              size_t c0, size_t c1, float *W, float *B, pt_train_report *reps)
{
    const size_t n = ds->n, len = ds->stride, K = c1 - c0;
    if (p->shuffle && n > UINT32_MAX)
        return pt_fail(PT_ERR_LIMIT, "pt_train_params.shuffle supports up to 2^32 rows (got %zu)", n);
    online *o = calloc(K, sizeof *o);
    size_t *active = malloc(K * sizeof *active), *mistakes = calloc(K, sizeof *mistakes);
    uint32_t *order = p->shuffle ? pt_alloc((n ? n : 1) * sizeof *order, "sample order") : NULL;
    pt_status s = PT_OK;
    if (!o || !active || !mistakes || (p->shuffle && !order)) {
        s = pt_fail(PT_ERR_NOMEM, "cannot allocate %zu one-vs-rest problems", K);
        goto out;
    }
    for (size_t c = 0; c < K; c++) {
        o[c] = (online){.k = k, .len = len, .tau = p->margin, .eta = p->eta,
                        .bias = p->bias ? 1.0f : 0.0f,
                        .averaged = p->variant == PT_VARIANT_AVERAGED, .w = W + c * len,
                        .b = B[c]};
        if (o[c].averaged && !(o[c].u = pt_calloc(len * sizeof(float), "averaging buffer"))) {
            s = PT_ERR_NOMEM;
            goto out;
        }
        active[c] = c;
    }
    for (size_t i = 0; order && i < n; i++) order[i] = (uint32_t)i;
    pt_rng rng;
    pt_rng_seed(&rng, p->seed);
    size_t nactive = K;
    for (int epoch = 1; epoch <= p->epochs && nactive > 0; epoch++) {
        if (order) pt_rng_shuffle(&rng, order, n);
        for (size_t a = 0; a < nactive; a++) mistakes[active[a]] = 0;
        for (size_t t = 0; t < n; t++) {
            size_t i = order ? order[t] : t;
            const float *x = ds->X + i * len;
            int32_t cls = ds->cls[i];
            for (size_t a = 0; a < nactive; a++) {
                size_t c = active[a];
                float y = cls == (int32_t)(c0 + c) ? 1.0f : -1.0f, sc;
                if (!o[c].averaged)
                    mistakes[c] += (size_t)k->step(o[c].w, &o[c].b, x, len, y, o[c].tau, o[c].eta,
                                                   o[c].bias, &sc);
                else
                    mistakes[c] += (size_t)visit(&o[c], x, y, score_of(&o[c], x));
            }
            if (pt_stopping(p->stop)) {
                s = pt_fail(PT_ERR_INTERRUPTED, "interrupted in epoch %d after sample %zu", epoch, t + 1);
                goto finish;
            }
        }
        /* book the epoch; problems with no mistake are done */
        size_t keep = 0;
        for (size_t a = 0; a < nactive; a++) {
            size_t c = active[a];
            reps[c].updates += mistakes[c];
            if ((s = pt_report_push_epoch(&reps[c], mistakes[c], NAN)) != PT_OK) goto finish;
            if ((s = check_finite(&o[c], epoch)) != PT_OK) goto finish;
            if (mistakes[c] == 0) reps[c].converged = 1;
            else active[keep++] = c;
        }
        nactive = keep;
    }
finish:
    for (size_t c = 0; c < K; c++) snapshot(&o[c], o[c].w, &B[c]);
out:
    for (size_t c = 0; o && c < K; c++) pt_free(o[c].u);
    free(o);
    free(active);
    free(mistakes);
    pt_free(order);
    return s;
}
