/* layers: reads rows by form until ported to data/rows.h */
/*
 * The multiclass perceptron (online): scores s_c = W_c.x + B_c for every class in one visit of
 * x; with r the best wrong class, a margin violation s_y - s_r <= tau adds eta x to W_y and
 * subtracts it from W_r. Averaged with the same lazy sum as the binary path. On sparse data
 * (CSR) the same, on each row's non-zeros (O(K nnz) a sample).
 *
 * On a share of a distributed run, iterative parameter mixing (paths/online_mix.c) of the
 * weight matrix as a whole (and of its average) after each epoch; each rank shuffles with its
 * own stream from the seed; the state is the mixed one, the same on every rank.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dist/dist.h"
#include "multiclass.h"

typedef struct direct {
    const pt_kernels *k;
    size_t K, len;
    float tau, eta, bias;
    bool averaged;
    float *W, *B;  /* K x len, K */
    float *U, *UB; /* lazy sums for the average */
    float *s;      /* K scores */
    double steps;
} direct;

/* One sample of class y, a dense row x or (x NULL) the sparse row of nnz pairs idx, val (every
 * score a gather, every update a scatter: O(nnz) a class): returns 1 if it updated. */
static int direct_visit(direct *o, const float *x, const uint32_t *idx, const float *val,
                        size_t nnz, size_t y)
{
    const size_t K = o->K, len = o->len;
    const pt_sparse_kernels *sk = o->k->sparse;
    /* one pass over the row for every class */
    if (x) o->k->dot_many(o->W, len, K, x, len, o->s);
    else sk->dot_many(o->W, len, K, idx, val, nnz, o->s);
    for (size_t c = 0; c < K; c++) o->s[c] += o->B[c] * o->bias;
    size_t rival = y == 0 ? 1 : 0;
    for (size_t c = 0; c < K; c++)
        if (c != y && o->s[c] > o->s[rival]) rival = c;
    int upd = o->s[y] - o->s[rival] <= o->tau;
    if (upd) {
        float a = o->eta;
        float *Wy = o->W + y * len, *Wr = o->W + rival * len;
        if (o->averaged) {
            float cc = (float)o->steps * a;
            float *Uy = o->U + y * len, *Ur = o->U + rival * len;
            if (x) {
                o->k->axpy2(a, cc, x, Wy, Uy, len);
                o->k->axpy2(-a, -cc, x, Wr, Ur, len);
            } else {
                sk->axpy2(a, cc, idx, val, nnz, Wy, Uy);
                sk->axpy2(-a, -cc, idx, val, nnz, Wr, Ur);
            }
            o->UB[y] += cc * o->bias;
            o->UB[rival] -= cc * o->bias;
        } else if (x) {
            o->k->axpy(a, x, Wy, len);
            o->k->axpy(-a, x, Wr, len);
        } else {
            sk->axpy(a, idx, val, nnz, Wy);
            sk->axpy(-a, idx, val, nnz, Wr);
        }
        o->B[y] += a * o->bias;
        o->B[rival] -= a * o->bias;
    }
    o->steps += 1.0;
    return upd;
}

/* Write the model as it stands into W, B (the average for the averaged variant). */
static void direct_snapshot(const direct *o, float *W, float *B)
{
    if (!o->averaged || o->steps == 0) {
        if (W != o->W) memcpy(W, o->W, o->K * o->len * sizeof(float));
        if (B != o->B) memcpy(B, o->B, o->K * sizeof(float));
        return;
    }
    float inv = (float)(1.0 / o->steps);
    o->k->scale_add(1.0f, o->W, -inv, o->U, W, o->K * o->len);
    for (size_t c = 0; c < o->K; c++) B[c] = o->B[c] - o->UB[c] * inv;
}

/* Where the multiclass perceptron stands into st (every class's weights in turn). */
static pt_status direct_capture(const direct *o, const pt_train_report *r, const pt_train_state *from,
                                int done, size_t pos, size_t pos_mistakes, bool finished,
                                const uint32_t *order, size_t norder, int shuffles,
                                const pt_rng *rng, pt_train_state *st)
{
    st->epochs_done = done;
    st->pos = pos;
    st->epoch_mistakes = pos_mistakes;
    st->updates = r->updates;
    st->steps = o->steps;
    st->finished = finished;
    memcpy(st->w, o->W, o->K * o->len * sizeof(float));
    memcpy(st->b, o->B, o->K * sizeof(float));
    if (o->averaged) {
        memcpy(st->u, o->U, o->K * o->len * sizeof(float));
        memcpy(st->ub, o->UB, o->K * sizeof(float));
    }
    pt_train_state_history(st, from, r);
    return order ? pt_train_state_keep_order(st, order, norder, shuffles, rng) : PT_OK;
}

static pt_train_state *direct_state_new(const direct *o, size_t n)
{
    return pt_train_state_new(n, o->K * o->len, o->K,
                              PT_STATE_LINEAR | (o->averaged ? PT_STATE_SUMS : 0));
}

/* What the epoch hook's model is made from: the learner, and where the epoch loop stands. */
typedef struct direct_hook {
    const direct *o;
    pt_model *snap; /* the hook's model, kept from one epoch to the next */
    const pt_train_report *r;
    const pt_train_state *from;
    const uint32_t *order;
    size_t norder;
    const pt_mixer *mx; /* a distributed run's (NULL: one process) */
    const int *shuffles;
    const pt_rng *rng;
} direct_hook;

/* The model as it stands after the epoch, and where the run stands. */
static pt_status hook_model(void *user, int epoch, bool finished, pt_model **model)
{
    const direct_hook *h = user;
    direct_snapshot(h->o, h->snap->W, h->snap->Bk);
    h->snap->epochs_run = epoch;
    PT_TRY(direct_capture(h->o, h->r, h->from, epoch, 0, 0, finished, h->order, h->norder,
                          *h->shuffles, h->rng, h->snap->states[0]));
    if (h->mx) h->snap->states[0]->steps = h->mx->seen; /* all ranks' samples */
    *model = h->snap;
    return PT_OK;
}

pt_status pt_train_direct(const pt_dataset *ds, const pt_train_params *p, const pt_kernels *k,
                          pt_model *m, pt_train_report *r)
{
    const size_t n = ds->n, K = ds->nclass;
    const bool sparse = ds->layout == PT_LAYOUT_SPARSE;
    direct o = {
        .k = k, .K = K, .len = ds->stride, .tau = p->margin, .eta = p->eta,
        .bias = p->bias ? 1.0f : 0.0f, .averaged = p->variant == PT_VARIANT_AVERAGED,
        .W = m->W, .B = m->Bk,
    };
    if (p->variant == PT_VARIANT_VOTED)
        return pt_fail(PT_ERR_UNSUPPORTED, "the voted perceptron is binary; use PT_VARIANT_AVERAGED");
    if (p->shuffle && n > UINT32_MAX)
        return pt_fail(PT_ERR_LIMIT, "pt_train_params.shuffle supports up to 2^32 rows (got %zu)", n);
    const pt_train_state *from = p->resume ? p->resume->states[0] : NULL;
    /* a share of a distributed run on several ranks: its state counts all shares' rows */
    const bool dist = ds->shard_count > 1;
    const size_t rows = dist ? ds->n_total : n;
    pt_mixer mx = {0};
    uint32_t *order = NULL;
    float *wide = NULL; /* a compact row widened */
    pt_model *snap = NULL;
    pt_train_state *state = NULL;
    pt_status s = PT_OK;
    o.s = malloc(K * sizeof(float));
    if (!o.s || (o.averaged && (!(o.U = pt_calloc(K * o.len * sizeof(float), "averaging buffers")) ||
                                !(o.UB = pt_calloc(K * sizeof(float), "averaging buffers")))) ||
        (p->shuffle && !(order = pt_alloc((n ? n : 1) * sizeof *order, "sample order"))) ||
        (ds->dtype != PT_DTYPE_F32 &&
         !(wide = pt_alloc(ds->stride * sizeof(float), "widened row"))) ||
        !(state = direct_state_new(&o, rows)) ||
        (p->epoch_hook && (!(snap = pt_model_alloc_multiclass(ds->d, K, ds->class_values)) ||
                           pt_model_keep_run(snap, direct_state_new(&o, rows)) != PT_OK))) {
        s = pt_fail(PT_ERR_NOMEM, "cannot allocate the multiclass perceptron's buffers (%zu "
                    "classes)", K);
        goto out;
    }
    if (snap) pt_model_set_meta(snap, ds, p);
    pt_rng rng;
    int shuffles = 0;
    const size_t chunk = pt_shuffle_chunk(p, ds);
    /* each rank its own order: rank 0 the seed's, rank r a stream derived from it */
    uint64_t seed = p->seed + (uint64_t)pt_dist_rank() * 0x9E3779B97F4A7C15ull * dist;
    if (order) pt_train_state_order_chunks(from, seed, order, n, chunk, &rng, &shuffles);
    /* streamed: the epoch walks the windows (the order's chunks when shuffled) */
    pt_window_pos at = {.rows = order ? chunk : 0};
    int first = 1;
    size_t start = 0, carried = 0;
    bool finished = false;
    if (from) {
        memcpy(o.W, from->w, K * o.len * sizeof(float));
        memcpy(o.B, from->b, K * sizeof(float));
        if (o.averaged) {
            memcpy(o.U, from->u, K * o.len * sizeof(float));
            memcpy(o.UB, from->ub, K * sizeof(float));
        }
        o.steps = from->steps;
        pt_report_resume(r, from);
        first = from->epochs_done + 1;
        start = from->pos;
        carried = from->epoch_mistakes;
        finished = from->finished;
    }
    if (dist) {
        const pt_mix_target t = {.w = o.W, .b = o.B, .nw = K * o.len, .nb = K, .u = o.U,
                                 .ub = o.UB, .steps = &o.steps, .k = k};
        if ((s = pt_mixer_init(&mx, &t, rows, from ? from->steps : 0.0)) != PT_OK) goto out;
    }
    int done = first - 1;
    size_t pos = start, pos_mistakes = carried;
    direct_hook hook = {.o = &o, .snap = snap, .r = r, .from = from, .order = order, .norder = n,
                        .mx = dist ? &mx : NULL, .shuffles = &shuffles, .rng = &rng};
    const pt_epoch_ending end = {
        .p = p, .r = r, .t0 = pt_now(), .w = o.W, .nw = K * o.len, .what = "weights",
        .hint = "lower pt_train_params.eta or rescale the features", .snapshot = hook_model,
        .path = &hook};
    for (int epoch = first; epoch <= p->epochs && !finished; epoch++) {
        for (; order && shuffles < epoch; shuffles++) pt_rng_shuffle_chunks(&rng, order, n, chunk);
        size_t mistakes = epoch == first ? carried : 0, before = mistakes;
        if (dist) pt_mixer_save(&mx);
        for (size_t t = epoch == first ? start : 0; t < n; t++) {
            size_t i = order ? order[t] : t;
            if (order) pt_window_at_order(ds, &at, order, t, n);
            else pt_window_at(ds, &at, i);
            if (p->class_weight) o.eta = p->eta * p->class_weight[ds->cls[i]];
            if (sparse) {
                const uint32_t *idx;
                const float *val;
                size_t nnz = pt_csr_row(ds, i, &idx, &val);
                mistakes += (size_t)direct_visit(&o, NULL, idx, val, nnz, (size_t)ds->cls[i]);
            } else {
                /* a streamed window's copy (float32), or the row (widened if compact) */
                const float *x = at.copy ? pt_window_row(ds, &at, i) : pt_row_f32(k, ds, i, wide);
                mistakes += (size_t)direct_visit(&o, x, NULL, NULL, 0,
                                                 (size_t)ds->cls[i]);
            }
            if (pt_stopping(p->stop)) {
                pos = t + 1;
                pos_mistakes = mistakes;
                s = pt_fail(PT_ERR_INTERRUPTED, "interrupted in epoch %d at sample %zu", epoch, t + 1);
                break;
            }
        }
        pt_window_end(ds, &at);
        if (dist && pt_dist_first_failed(s != PT_OK) >= 0) {
            /* a rank stopped: every rank goes back to the last mixed model and its epoch */
            pt_mixer_restore(&mx);
            pos = pos_mistakes = 0;
            if (s == PT_OK)
                s = pt_fail(PT_ERR_INTERRUPTED, "interrupted in epoch %d: another rank stopped",
                            epoch);
            break;
        }
        if (dist) mistakes = pt_mixer_mix(&mx, mistakes, p->online.mix); /* all ranks' */
        r->updates += mistakes - before;
        if (s != PT_OK) break;
        bool epoch_done, stop;
        s = pt_epoch_end(&end, epoch, mistakes, NAN, mistakes == 0, &epoch_done, &stop);
        if (epoch_done) {
            done = epoch;
            pos = pos_mistakes = 0;
            finished = mistakes == 0;
            if (finished) r->converged = 1;
        }
        if (s != PT_OK || stop) break;
    }
    if (s == PT_OK || s == PT_ERR_INTERRUPTED) {
        /* where the run stands, for --resume (pt_train drops it from a finished run) */
        pt_status cs = direct_capture(&o, r, from, done, pos, pos_mistakes, finished, order, n,
                                      shuffles, &rng, state);
        if (dist) state->steps = mx.seen; /* all ranks' samples */
        if (cs == PT_OK) cs = pt_model_keep_run(m, state);
        state = NULL;
        if (cs != PT_OK) {
            s = cs;
            goto out;
        }
    }
    direct_snapshot(&o, m->W, m->Bk);
out:
    pt_mixer_free(&mx);
    free(o.s);
    pt_free(o.U);
    pt_free(o.UB);
    pt_free(order);
    pt_free(wide);
    pt_model_free(snap);
    pt_train_state_free(state);
    return s;
}
