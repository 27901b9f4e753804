/* layers: reads rows by form until ported to data/rows.h */
/*
 * Run states: where a run stands (position, counters, the live iterate, the last epochs'
 * mistakes), so that an interrupted or checkpointed run continues exactly as if it had never
 * stopped. Every path fills one per problem; model_io.c saves and loads them. A state's size
 * depends on the data (n, d), never on the epochs run or asked for.
 */
#include <stdlib.h>
#include <string.h>

#include "model.h"

pt_train_state *pt_train_state_new(size_t n, size_t len, size_t nb, unsigned parts)
{
    pt_train_state *st = calloc(1, sizeof *st);
    if (!st) {
        pt_fail(PT_ERR_NOMEM, "cannot allocate a training state");
        return NULL;
    }
    st->n = n;
    bool ok = true;
    if (parts & (PT_STATE_LINEAR | PT_STATE_SUMS)) {
        st->len = len;
        st->nb = nb;
    }
    if (parts & PT_STATE_LINEAR)
        ok = (st->w = pt_calloc((len ? len : 1) * sizeof(float), "training state")) &&
             (st->b = calloc(nb ? nb : 1, sizeof(float)));
    if (ok && (parts & PT_STATE_SUMS))
        ok = (st->u = pt_calloc((len ? len : 1) * sizeof(float), "training state")) &&
             (st->ub = calloc(nb ? nb : 1, sizeof(float)));
    if (ok && (parts & PT_STATE_DUAL))
        ok = (st->alpha = calloc(n ? n : 1, sizeof *st->alpha)) &&
             (st->f = pt_calloc((n ? n : 1) * sizeof(float), "training state"));
    if (ok && (parts & PT_STATE_DUAL_AVG))
        ok = (st->beta = calloc(n ? n : 1, sizeof *st->beta)) != NULL;
    if (!ok) {
        pt_train_state_free(st);
        pt_fail(PT_ERR_NOMEM, "cannot allocate a training state (%zu floats, %zu rows)", len, n);
        return NULL;
    }
    return st;
}

void pt_train_state_free(pt_train_state *st)
{
    if (!st) return;
    pt_free(st->w);
    pt_free(st->u);
    free(st->b);
    free(st->ub);
    free(st->alpha);
    free(st->beta);
    pt_free(st->f);
    free(st->order);
    free(st);
}

/* A malloc'd copy of count elements of size sz (NULL stays NULL). */
static bool dup(void **dst, const void *src, size_t count, size_t sz, bool aligned)
{
    *dst = NULL;
    if (!src) return true;
    size_t bytes = (count ? count : 1) * sz;
    if (!(*dst = aligned ? pt_alloc(bytes, "training state") : malloc(bytes))) return false;
    memcpy(*dst, src, count * sz);
    return true;
}

pt_train_state *pt_train_state_clone(const pt_train_state *st)
{
    pt_train_state *c = calloc(1, sizeof *c);
    if (!c) {
        pt_fail(PT_ERR_NOMEM, "cannot copy a training state");
        return NULL;
    }
    *c = *st;
    c->w = c->b = c->u = c->ub = c->f = NULL;
    c->alpha = c->order = NULL;
    c->beta = NULL;
    bool ok = dup((void **)&c->w, st->w, st->len, sizeof(float), true) &&
              dup((void **)&c->u, st->u, st->len, sizeof(float), true) &&
              dup((void **)&c->b, st->b, st->nb, sizeof(float), false) &&
              dup((void **)&c->ub, st->ub, st->nb, sizeof(float), false) &&
              dup((void **)&c->alpha, st->alpha, st->n, sizeof(uint32_t), false) &&
              dup((void **)&c->beta, st->beta, st->n, sizeof(double), false) &&
              dup((void **)&c->f, st->f, st->n, sizeof(float), true) &&
              dup((void **)&c->order, st->order, st->norder, sizeof(uint32_t), false);
    if (!ok) {
        pt_train_state_free(c);
        pt_fail(PT_ERR_NOMEM, "cannot copy a training state");
        return NULL;
    }
    return c;
}

pt_status pt_train_state_keep_order(pt_train_state *st, const uint32_t *order, size_t count,
                                    int shuffles, const pt_rng *rng)
{
    if (!st->order || st->norder != count) {
        free(st->order);
        st->norder = 0;
        if (!(st->order = malloc((count ? count : 1) * sizeof *st->order)))
            return pt_fail(PT_ERR_NOMEM, "cannot keep the sample order (%zu entries)", count);
        st->norder = count;
    }
    memcpy(st->order, order, count * sizeof *order);
    st->shuffles = shuffles;
    st->rng = *rng;
    return PT_OK;
}

void pt_train_state_order(const pt_train_state *from, uint64_t seed, uint32_t *order,
                          size_t count, pt_rng *rng, int *shuffles)
{
    pt_train_state_order_chunks(from, seed, order, count, 0, rng, shuffles);
}

size_t pt_shuffle_chunk(const pt_train_params *p, const pt_dataset *ds)
{
    return p->online.shuffle_chunk ? p->online.shuffle_chunk : pt_dataset_streamed(ds);
}

void pt_train_state_order_chunks(const pt_train_state *from, uint64_t seed, uint32_t *order,
                                 size_t count, size_t chunk, pt_rng *rng, int *shuffles)
{
    if (from && from->order && from->norder == count) {
        memcpy(order, from->order, count * sizeof *order);
        *rng = from->rng;
        *shuffles = from->shuffles;
        return;
    }
    for (size_t i = 0; i < count; i++) order[i] = (uint32_t)i;
    pt_rng_seed(rng, seed);
    *shuffles = 0;
    /* the shuffles of the complete epochs; the epoch in progress was shuffled when it began */
    int want = from ? from->epochs_done + (from->pos > 0) : 0;
    for (; *shuffles < want; ++*shuffles) pt_rng_shuffle_chunks(rng, order, count, chunk);
}

void pt_train_state_history(pt_train_state *st, const pt_train_state *prev,
                            const pt_train_report *r)
{
    const int E = st->epochs_done, before = r->epochs_before;
    int first = E - PT_STATE_HISTORY + 1; /* the oldest epoch kept */
    if (first < 1) first = 1;
    /* epochs up to `before` come from prev, as far back as it kept them */
    int prev_first = prev ? prev->epochs_done - prev->nhist + 1 : before + 1;
    if (first <= before && first < prev_first) first = prev_first;
    st->nhist = 0;
    for (int e = first; e <= E; e++)
        st->hist[st->nhist++] = e > before ? r->mistakes_per_epoch[e - before - 1]
                                           : prev->hist[e - prev_first];
}

size_t pt_train_state_last(const pt_train_state *st)
{
    return st->nhist ? st->hist[st->nhist - 1] : st->n;
}
