/*
 * The online learner's state beyond the step (online.h): the voted perceptron's vectors, the
 * model as it stands, and where the run stands (captured into a run state, restored from one).
 * Shared by the sequential and blocked passes and by one-vs-rest in lockstep.
 */
#include <stdlib.h>
#include <string.h>

#include "online.h"

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
    if (adopt) {
        o->V = m->votes;
        o->Vb = m->vote_b;
        o->Vc = m->vote_c;
        o->nv = nv;
        o->cap = m->vote_cap > m->n_votes ? m->vote_cap : m->n_votes;
        m->votes = m->vote_b = m->vote_c = NULL;
        m->n_votes = m->vote_cap = 0;
        return PT_OK;
    }
    size_t cap = nv > 64 ? nv : 64;
    if (cap > o->max_vectors) cap = o->max_vectors;
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
    return PT_OK;
}
