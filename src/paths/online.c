/*
 * The online learner's state beyond the step (online.h): the voted perceptron's vectors, the
 * model as it stands, and where the run stands (captured into a run state, restored from one).
 * Shared by the sequential and blocked passes and by one-vs-rest in lockstep.
 */
#include <stdlib.h>
#include <string.h>

#include "online.h"

/* Voted: room for one more vector (false, with o->vote_error set, when the memory budget or
 * an allocation refuses it). The arrays double up to the budget's vectors, or a cap's K. */
static bool vote_room(online *o)
{
    if (o->nv < o->cap) return true;
    const size_t most = o->keep < o->max_vectors ? o->keep + 1 : o->max_vectors;
    if (o->nv >= most) {
        o->vote_error = pt_fail(PT_ERR_LIMIT,
                                "the voted perceptron stores one vector per update: more than "
                                "%zu vectors of %zu floats exceed the memory budget "
                                "(pt_train_params.mem_budget_bytes); cap them "
                                "(pt_train_params.voted_max_vectors) or use PT_VARIANT_AVERAGED, "
                                "which approximates it in O(d) memory",
                                o->max_vectors, o->len);
        snprintf(o->vote_msg, sizeof o->vote_msg, "%s", pt_last_error());
        return false;
    }
    size_t cap = o->cap ? 2 * o->cap : 64;
    if (cap > most || cap < o->cap) cap = most;
    float *V = pt_alloc(cap * o->len * sizeof(float), "voted vectors");
    float *Vb = realloc(o->Vb, cap * sizeof(float)), *Vc = Vb ? realloc(o->Vc, cap * sizeof(float)) : NULL;
    if (Vb) o->Vb = Vb;
    if (Vc) o->Vc = Vc;
    bool ok = V && Vb && Vc;
    if (ok && o->keep != SIZE_MAX) {
        uint64_t *seq = realloc(o->seq, cap * sizeof *seq);
        if (seq) o->seq = seq;
        size_t *heap = seq ? realloc(o->heap, cap * sizeof *heap) : NULL;
        if (heap) o->heap = heap;
        ok = seq && heap;
    }
    if (!ok) {
        pt_free(V);
        o->vote_error = pt_fail(PT_ERR_NOMEM, "cannot grow the voted vectors to %zu", cap);
        snprintf(o->vote_msg, sizeof o->vote_msg, "%s", pt_last_error());
        return false;
    }
    if (o->V) memcpy(V, o->V, o->nv * o->len * sizeof(float));
    pt_free(o->V);
    o->V = V;
    o->cap = cap;
    return true;
}

/* The current vector into slot v. */
static void vote_store(online *o, size_t v)
{
    memcpy(o->V + v * o->len, o->w, o->len * sizeof(float));
    o->Vb[v] = o->b;
    o->Vc[v] = o->survived;
}

/* The cap's order of dropping: the smaller survival count first, of equal counts the one that
 * closed first. */
static bool drops_before(const online *o, size_t a, size_t b)
{
    return o->Vc[a] < o->Vc[b] || (o->Vc[a] == o->Vc[b] && o->seq[a] < o->seq[b]);
}

static void heap_down(online *o, size_t i)
{
    size_t *h = o->heap, n = o->nv;
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < n && drops_before(o, h[l], h[m])) m = l;
        if (l + 1 < n && drops_before(o, h[l + 1], h[m])) m = l + 1;
        if (m == i) return;
        size_t t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

static void heap_up(online *o, size_t i)
{
    size_t *h = o->heap;
    while (i > 0 && drops_before(o, h[i], h[(i - 1) / 2])) {
        size_t up = (i - 1) / 2, t = h[i];
        h[i] = h[up];
        h[up] = t;
        i = up;
    }
}

/* The heap over slots 0..nv-1 as they stand. */
static void heap_build(online *o)
{
    for (size_t i = 0; i < o->nv; i++) o->heap[i] = i;
    for (size_t i = o->nv / 2; i-- > 0;) heap_down(o, i);
}

bool online_close_vote(online *o)
{
    if (o->survived == 0.0f) return true;
    if (o->keep == SIZE_MAX) { /* no cap: every vector */
        if (!vote_room(o)) return false;
        vote_store(o, o->nv++);
        return true;
    }
    const uint64_t seq = o->next_seq++;
    if (o->nv < o->keep) {
        if (!vote_room(o)) return false;
        vote_store(o, o->nv);
        o->seq[o->nv] = seq;
        o->heap[o->nv] = o->nv;
        o->nv++;
        heap_up(o, o->nv - 1);
        return true;
    }
    /* full: the new vector closed last, so it drops first of equal counts */
    if (o->keep == 0 || o->survived < o->Vc[o->heap[0]]) return true;
    size_t v = o->heap[0];
    vote_store(o, v);
    o->seq[v] = seq;
    heap_down(o, 0);
    return true;
}

/* The lesser of two slots' closing order, for qsort over (seq, slot) pairs. */
static int by_seq(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* Under a cap: the closed vectors back in the order they closed (slot t the t-th), each moved
 * once along the cycles of the permutation; the heap built again over the new slots. */
static bool votes_in_order(online *o)
{
    const size_t n = o->nv, len = o->len;
    uint64_t *pair = malloc((n ? n : 1) * 2 * sizeof *pair);
    float *row = malloc(len * sizeof *row);
    if (!pair || !row) {
        free(pair);
        free(row);
        o->vote_error = pt_fail(PT_ERR_NOMEM, "cannot order %zu voted vectors", n);
        snprintf(o->vote_msg, sizeof o->vote_msg, "%s", pt_last_error());
        return false;
    }
    for (size_t v = 0; v < n; v++) pair[2 * v] = o->seq[v], pair[2 * v + 1] = v;
    qsort(pair, n, 2 * sizeof *pair, by_seq);
    /* slot t takes slot src(t) = pair[2t + 1]; follow each cycle from its first slot */
    for (size_t t = 0; t < n; t++) {
        if (pair[2 * t + 1] == t || pair[2 * t + 1] == UINT64_MAX) continue;
        memcpy(row, o->V + t * len, len * sizeof *row);
        float b = o->Vb[t], c = o->Vc[t];
        uint64_t sq = o->seq[t];
        size_t at = t;
        for (;;) {
            size_t from = (size_t)pair[2 * at + 1];
            pair[2 * at + 1] = UINT64_MAX; /* done */
            if (from == t) {
                memcpy(o->V + at * len, row, len * sizeof *row);
                o->Vb[at] = b, o->Vc[at] = c, o->seq[at] = sq;
                break;
            }
            memcpy(o->V + at * len, o->V + from * len, len * sizeof *row);
            o->Vb[at] = o->Vb[from], o->Vc[at] = o->Vc[from], o->seq[at] = o->seq[from];
            at = from;
        }
    }
    free(pair);
    free(row);
    heap_build(o);
    return true;
}

bool online_push_live(online *o)
{
    if (o->survived == 0.0f) return true;
    if (o->keep != SIZE_MAX && !votes_in_order(o)) return false;
    if (!vote_room(o)) return false;
    vote_store(o, o->nv++);
    return true;
}

/* The model as it stands into w, b: the last iterate, or for the averaged variant the
 * average w - u / T (w may be o->w itself, at the end). */
void online_snapshot(const online *o, float *w, float *b)
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

/* Record where the run stands into st (made by online_state_new): the live iterate, the
 * counters, the last epochs' mistakes (from, the state the run started from, keeps the older
 * ones) and the sample order. */
pt_status online_state_capture(const online *o, const pt_train_report *r,
                               const pt_train_state *from, int epochs_done, size_t pos,
                               size_t epoch_mistakes, bool finished, const uint32_t *order,
                               size_t norder, int shuffles, const pt_rng *rng,
                               pt_train_state *st)
{
    st->epochs_done = epochs_done;
    st->pos = pos;
    st->epoch_mistakes = epoch_mistakes;
    st->updates = r->updates;
    st->steps = o->steps;
    st->finished = finished;
    st->survived = o->survived;
    memcpy(st->w, o->w, o->len * sizeof(float));
    st->b[0] = o->b;
    if (st->u) {
        memcpy(st->u, o->u, o->len * sizeof(float));
        st->ub[0] = o->ub;
    }
    pt_train_state_history(st, from, r);
    return order ? pt_train_state_keep_order(st, order, norder, shuffles, rng) : PT_OK;
}

pt_train_state *online_state_new(const online *o, size_t n)
{
    return pt_train_state_new(n, o->len, 1, PT_STATE_LINEAR | (o->averaged ? PT_STATE_SUMS : 0));
}

/* Continue from a recorded state: the live iterate and the counters (the report takes over
 * its epochs in pt_report_resume). */
void online_state_restore(online *o, const pt_train_state *st)
{
    memcpy(o->w, st->w, o->len * sizeof(float));
    o->b = st->b[0];
    if (o->u) {
        memcpy(o->u, st->u, o->len * sizeof(float));
        o->ub = st->ub[0];
    }
    o->steps = st->steps;
    o->survived = st->survived;
}

/* Under a cap, the closed vectors of a run to resume (in the order they closed, as a model
 * lists them): numbered in that order, and their heap. */
static pt_status votes_index(online *o)
{
    if (o->keep == SIZE_MAX) return PT_OK;
    o->seq = malloc((o->cap ? o->cap : 1) * sizeof *o->seq);
    o->heap = malloc((o->cap ? o->cap : 1) * sizeof *o->heap);
    if (!o->seq || !o->heap)
        return pt_fail(PT_ERR_NOMEM, "cannot allocate the order of %zu voted vectors", o->cap);
    for (size_t v = 0; v < o->nv; v++) o->seq[v] = v;
    o->next_seq = o->nv;
    heap_build(o);
    return PT_OK;
}

/* Voted: the vectors of the run to resume. Its model lists the current vector last when it
 * had survived a sample (as every snapshot and interrupted model does): that one is live again.
 * The vectors are copied from `from`, or taken from m when m holds them already (one-vs-rest
 * hands a class's vectors from one round to the next without a copy). */
pt_status online_votes_restore(online *o, pt_model *m, const pt_model *from,
                               const pt_train_state *st)
{
    const bool adopt = m->n_votes > 0;
    const pt_model *src = adopt ? m : from;
    size_t nv = src->n_votes;
    if (st->survived > 0.0f) {
        if (nv == 0) return pt_fail(PT_ERR_FORMAT, "the voted run to resume lists no vectors");
        nv--;
    }
    if (nv > o->max_vectors)
        return pt_fail(PT_ERR_LIMIT, "the voted run to resume has %zu vectors, more than the "
                       "memory budget holds (%zu)", nv, o->max_vectors);
    if (o->keep != SIZE_MAX && nv > o->keep)
        return pt_fail(PT_ERR_FORMAT, "the voted run to resume has %zu vectors beside the "
                       "current one, more than its cap keeps (pt_train_params.voted_max_vectors "
                       "%zu)", nv, o->keep + 1);
    if (adopt) {
        o->V = m->votes;
        o->Vb = m->vote_b;
        o->Vc = m->vote_c;
        o->nv = nv;
        o->cap = m->vote_cap > m->n_votes ? m->vote_cap : m->n_votes;
        m->votes = m->vote_b = m->vote_c = NULL;
        m->n_votes = m->vote_cap = 0;
        return votes_index(o);
    }
    size_t cap = nv > 64 ? nv : 64;
    if (cap > o->max_vectors) cap = o->max_vectors;
    if (o->keep != SIZE_MAX && cap > o->keep + 1) cap = o->keep + 1;
    o->V = pt_alloc((cap ? cap : 1) * o->len * sizeof(float), "voted vectors");
    o->Vb = malloc((cap ? cap : 1) * sizeof(float));
    o->Vc = malloc((cap ? cap : 1) * sizeof(float));
    if (!o->V || !o->Vb || !o->Vc)
        return pt_fail(PT_ERR_NOMEM, "cannot allocate %zu voted vectors", cap);
    if (nv) {
        memcpy(o->V, from->votes, nv * o->len * sizeof(float));
        memcpy(o->Vb, from->vote_b, nv * sizeof(float));
        memcpy(o->Vc, from->vote_c, nv * sizeof(float));
    }
    o->nv = nv;
    o->cap = cap;
    return votes_index(o);
}
