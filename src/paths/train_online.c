/* layers: reads rows by form until ported to data/rows.h */
/*
 * The online single-sample path: for each sample, s = w.x + b; if y s <= tau then
 * w += eta y x, b += eta y (the bias as a constant-1 coordinate). One epoch streams X once.
 *
 * Variants: classic (last iterate), averaged and voted. The average of all iterates uses the
 * lazy sum: with c the number of samples seen before an update of delta, keep u += c delta;
 * the average after T samples is w - u / T. No O(d) work per correct sample. The voted
 * perceptron (Freund and Schapire) keeps every intermediate vector with the number of samples
 * it survived and predicts by their weighted vote; it stores one vector per update, within
 * the memory budget, or under a cap of K the current vector and the K - 1 others of largest
 * survival counts (online.c).
 *
 * Passes: sequential, or blocked (online_blocked.c): the other threads score the samples ahead
 * of the walk, and the walk takes its decisions from those scores while w has not changed
 * since. The scores come from the same dot kernel as the sequential pass's, so the decisions,
 * the updates and w are bit-identical. online_pass.c runs an epoch by the pass it chooses.
 *
 * Sparse data (CSR) takes the same steps on each row's non-zeros through the table's sparse
 * kernels: a step costs O(nnz) (the averaged variant's lazy sum too), and the model equals the
 * one trained on the dense copy (the same decisions; w to float rounding, bit for bit on
 * integer-valued data), by either pass.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dist/dist.h"
#include "online.h"

/* What the epoch hook's model is made from: the learner, and where the epoch loop stands. */
typedef struct online_hook {
    online *o;
    pt_model *snap; /* the hook's model, kept from one epoch to the next */
    const pt_train_report *r;
    const pt_train_state *from;
    const uint32_t *order;
    size_t norder;
    const pt_mixer *mx; /* a distributed run's (NULL: one process) */
    const int *shuffles;
    const pt_rng *rng;
    bool pushed; /* voted: the current vector was pushed for the hook */
} online_hook;

/* The model as it stands after the epoch, with where the run stands (the voted variant lends
 * it its vectors, the current one included, for the call). */
static pt_status hook_model(void *user, int epoch, bool finished, pt_model **model)
{
    online_hook *h = user;
    online *o = h->o;
    pt_model *snap = h->snap;
    PT_TRY(online_state_capture(o, h->r, h->from, epoch, 0, 0, finished, h->order, h->norder,
                                *h->shuffles, h->rng, snap->states[0]));
    if (h->mx) snap->states[0]->steps = h->mx->seen; /* all ranks' samples */
    online_snapshot(o, snap->w, &snap->b);
    snap->epochs_run = epoch;
    h->pushed = false;
    if (o->voted) {
        if (o->survived > 0.0f) {
            if (!online_push_live(o)) return pt_fail(o->vote_error, "%s", o->vote_msg);
            h->pushed = true;
        }
        snap->votes = o->V;
        snap->vote_b = o->Vb;
        snap->vote_c = o->Vc;
        snap->n_votes = o->nv;
    }
    *model = snap;
    return PT_OK;
}

/* After the hook: the voted variant takes its vectors back. */
static void hook_release(void *user, pt_model *snap)
{
    online_hook *h = user;
    if (!h->o->voted) return;
    snap->votes = snap->vote_b = snap->vote_c = NULL;
    snap->n_votes = 0;
    if (h->pushed) h->o->nv--;
}

static pt_status train(const pt_dataset *ds, const pt_row_map *map, const pt_train_params *p,
                       const pt_kernels *k, pt_model *m, pt_train_report *r)
{
    const size_t n = ds->n;
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
        .cw = p->class_weight,
        .eta0 = p->eta,
        /* a cap of K: K - 1 closed vectors beside the current one */
        .keep = p->online.voted_max_vectors ? p->online.voted_max_vectors - 1 : SIZE_MAX,
    };
    size_t row_bytes = (map ? pt_stride_for(map->d_out) : ds->stride) * sizeof(float) + 2 * sizeof(float);
    o.max_vectors = p->mem_budget_bytes / row_bytes;
    const int threads = pt_threads_resolve(p->threads);
    uint32_t *order = NULL;
    float *mapped = NULL;
    pt_model *snap = NULL; /* what the epoch hook sees */
    pt_train_state *state = NULL;
    const pt_train_state *from = p->resume ? p->resume->states[0] : NULL;
    /* a share of a distributed run on several ranks: iterative parameter mixing. Its state
     * is the mixed model's, the same on every rank, and counts the rows of all shares; each
     * rank's order is its own, kept in memory only (a state read from a file replays each
     * rank's shuffles from the seed), so any rank's state resumes the run on every rank. */
    const bool dist = ds->shard_count > 1;
    const size_t rows = dist ? ds->n_total : n;
    pt_mixer mx = {0};
    pt_status s = PT_OK;
    if (p->shuffle && n > UINT32_MAX)
        return pt_fail(PT_ERR_LIMIT, "pt_train_params.shuffle supports up to 2^32 rows (got %zu)", n);
    if (map && ds->layout == PT_LAYOUT_SPARSE)
        return pt_require_dense(ds, "the online path over an expansion");
    /* every buffer once, before the first epoch; a compact row widens to its stride floats
     * (mapped, into o.len: an expansion may be narrower than its input) */
    const size_t wide_len = o.len > ds->stride ? o.len : ds->stride;
    if ((ds->dtype != PT_DTYPE_F32 &&
         !(o.wide = pt_alloc(wide_len * sizeof(float), "widened row"))) ||
        (o.averaged && !(o.u = pt_calloc(o.len * sizeof(float), "averaging buffer"))) ||
        (p->shuffle && !(order = pt_alloc((n ? n : 1) * sizeof *order, "sample order"))) ||
        (map && !(mapped = pt_calloc(o.len * sizeof(float), "mapped row"))) ||
        (p->epoch_hook && (!(snap = pt_model_clone(m)) ||
                           pt_model_keep_run(snap, online_state_new(&o, rows)) != PT_OK)) ||
        !(state = online_state_new(&o, rows))) {
        s = pt_fail(PT_ERR_NOMEM, "cannot allocate the online path's buffers (%zu floats a row)", o.len);
        goto out;
    }
    pt_rng rng;
    int shuffles = 0; /* the order has had one per epoch begun */
    /* each rank its own order: rank 0 the seed's (one rank is the plain run), rank r a
     * stream derived from it */
    uint64_t seed = p->seed + (uint64_t)pt_dist_rank() * 0x9E3779B97F4A7C15ull * dist;
    const size_t chunk = pt_shuffle_chunk(p, ds);
    if (order) pt_train_state_order_chunks(from, seed, order, n, chunk, &rng, &shuffles);
    int first = 1;
    size_t start = 0, carried = 0; /* where the first epoch starts, and its mistakes so far */
    bool finished = false;
    if (from) {
        online_state_restore(&o, from);
        if (o.voted && (s = online_votes_restore(&o, m, p->resume, from)) != PT_OK) goto out;
        pt_report_resume(r, from);
        first = from->epochs_done + 1;
        start = from->pos;
        carried = from->epoch_mistakes;
        finished = from->finished; /* converged: nothing left to do */
    }
    if (dist) {
        /* the average counts the samples of all ranks: the state's steps over the ranks */
        const pt_mix_target t = {.w = o.w, .b = &o.b, .nw = o.len, .nb = 1,
                                 .u = o.averaged ? o.u : NULL, .ub = &o.ub, .steps = &o.steps,
                                 .k = k};
        if ((s = pt_mixer_init(&mx, &t, rows, from ? from->steps : 0.0)) != PT_OK) goto out;
    }
    /* where the run stands when the loop ends: complete epochs, then samples and mistakes */
    int done = first - 1;
    size_t pos = start, pos_mistakes = carried;
    online_hook hook = {.o = &o, .snap = snap, .r = r, .from = from, .order = order, .norder = n,
                        .mx = dist ? &mx : NULL, .shuffles = &shuffles, .rng = &rng};
    const pt_epoch_ending end = {
        .p = p, .r = r, .t0 = pt_now(), .w = o.w, .nw = o.len, .b = &o.b, .nb = 1,
        .what = "weights", .hint = ONLINE_NONFINITE_HINT, .snapshot = hook_model,
        .release = hook_release, .path = &hook};
    size_t last = from ? pt_train_state_last(from) : n; /* previous epoch's mistakes */
    online_pass pass;
    online_pass_init(&pass, p, threads, ds, o.len, map != NULL);
    pass.window_rows = order ? chunk : 0;

    for (int epoch = first; epoch <= p->epochs && !finished; epoch++) {
        for (; order && shuffles < epoch; shuffles++) pt_rng_shuffle_chunks(&rng, order, n, chunk);
        size_t t = epoch == first ? start : 0, mistakes = epoch == first ? carried : 0;
        size_t before = mistakes;
        if (dist) pt_mixer_save(&mx);
        s = online_pass_epoch(&pass, &o, ds, order, map, mapped, epoch, last, &t, &mistakes);
        if (dist && pt_dist_first_failed(s != PT_OK) >= 0) {
            /* a rank stopped (or failed): every rank keeps the last mixed model */
            pt_mixer_restore(&mx);
            if (s == PT_OK)
                s = pt_fail(PT_ERR_INTERRUPTED, "interrupted in epoch %d: another rank stopped",
                            epoch);
            break;
        }
        if (dist) mistakes = pt_mixer_mix(&mx, mistakes, p->online.mix); /* all ranks' */
        r->updates += mistakes - before;
        if (s == PT_ERR_INTERRUPTED && o.vote_error != PT_OK) s = pt_fail(o.vote_error, "%s", o.vote_msg);
        if (s == PT_ERR_INTERRUPTED) {
            pos = t; /* --resume continues from this sample */
            pos_mistakes = mistakes;
        }
        if (s != PT_OK) break;
        bool epoch_done, stop;
        s = pt_epoch_end(&end, epoch, mistakes, NAN, mistakes == 0, &epoch_done, &stop);
        if (epoch_done) {
            done = epoch;
            pos = pos_mistakes = 0;
            last = mistakes;
            finished = mistakes == 0;
        }
        if (s != PT_OK || stop) break;
    }
    r->converged = finished && last == 0;
    if (s == PT_OK || s == PT_ERR_INTERRUPTED) {
        /* where the run stands, for --resume (pt_train drops it from a finished run) */
        pt_status cs = online_state_capture(&o, r, from, done, pos, pos_mistakes, finished,
                                            order, n, shuffles, &rng, state);
        if (dist) state->steps = mx.seen; /* all ranks' samples */
        if (cs == PT_OK) cs = pt_model_keep_run(m, state);
        state = NULL;
        if (cs != PT_OK) {
            s = cs;
            goto out;
        }
    }
    online_snapshot(&o, o.w, &m->b);
    if (o.voted && (s == PT_OK || s == PT_ERR_INTERRUPTED)) {
        /* the last vector votes too; hand the vectors to the model */
        if (!online_push_live(&o)) {
            s = pt_fail(o.vote_error, "%s", o.vote_msg);
            goto out;
        }
        m->n_votes = o.nv;
        m->vote_cap = o.cap;
        m->votes = o.V;
        m->vote_b = o.Vb;
        m->vote_c = o.Vc;
        o.V = o.Vb = o.Vc = NULL;
    }
out:
    pt_mixer_free(&mx);
    pt_free(o.V);
    free(o.Vb);
    free(o.Vc);
    free(o.seq);
    free(o.heap);
    pt_free(o.u);
    pt_free(o.wide);
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
 *
 * A problem may start from a recorded state (states[c]); the pass starts where the one furthest
 * behind stands and each of the others joins it at its own sample (a resumed run whose classes
 * were trained by threads that stopped at different samples).
 */

/* (epoch, sample) positions in pass order. */
static bool before_pos(int e1, size_t t1, int e2, size_t t2)
{
    return e1 < e2 || (e1 == e2 && t1 < t2);
}

pt_status pt_train_online_ovr(const pt_dataset *ds, const pt_train_params *p, const pt_kernels *k,
                              size_t c0, size_t c1, float *W, float *B, pt_train_report *reps,
                              pt_train_state **states)
{
    const size_t n = ds->n, len = ds->stride, K = c1 - c0;
    const bool sparse = ds->layout == PT_LAYOUT_SPARSE;
    if (p->shuffle && n > UINT32_MAX)
        return pt_fail(PT_ERR_LIMIT, "pt_train_params.shuffle supports up to 2^32 rows (got %zu)", n);
    /* per problem: where it starts (epoch, sample, mistakes so far), where it stands */
    typedef struct problem {
        int epoch, done;
        size_t t, carried, pos, pos_mistakes, mistakes;
        bool finished, running;
    } problem;
    online *o = calloc(K, sizeof *o);
    problem *pr = calloc(K, sizeof *pr);
    size_t *active = malloc(K * sizeof *active), *waiting = malloc(K * sizeof *waiting);
    pt_train_state **out = calloc(K, sizeof *out);
    uint32_t *order = p->shuffle ? pt_alloc((n ? n : 1) * sizeof *order, "sample order") : NULL;
    /* a compact row is widened once for every class's step */
    float *wide = ds->dtype != PT_DTYPE_F32 ? pt_alloc(len * sizeof(float), "widened row") : NULL;
    pt_status s = PT_OK;
    if (!o || !pr || !active || !waiting || !out || (p->shuffle && !order) ||
        (ds->dtype != PT_DTYPE_F32 && !wide)) {
        s = pt_fail(PT_ERR_NOMEM, "cannot allocate %zu one-vs-rest problems", K);
        goto out;
    }
    int e0 = 0;
    size_t t0 = 0, first = SIZE_MAX; /* the pass starts where problem `first` stands */
    for (size_t c = 0; c < K; c++) {
        o[c] = (online){.k = k, .len = len, .tau = p->margin, .eta = p->eta,
                        .bias = p->bias ? 1.0f : 0.0f,
                        .averaged = p->variant == PT_VARIANT_AVERAGED, .w = W + c * len,
                        .b = B[c], /* 0, or a warm start's */
                        .stop = p->stop};
        if ((o[c].averaged && !(o[c].u = pt_calloc(len * sizeof(float), "averaging buffer"))) ||
            !(out[c] = online_state_new(&o[c], n))) {
            s = pt_fail(PT_ERR_NOMEM, "cannot allocate %zu one-vs-rest problems", K);
            goto out;
        }
        const pt_train_state *st = states[c];
        pr[c] = (problem){.epoch = 1};
        if (st) {
            online_state_restore(&o[c], st);
            pt_report_resume(&reps[c], st);
            pr[c] = (problem){.epoch = st->epochs_done + 1,
                              .t = st->pos,
                              .carried = st->epoch_mistakes,
                              .finished = st->finished};
        }
        pr[c].done = pr[c].epoch - 1;
        pr[c].pos = pr[c].t;
        pr[c].pos_mistakes = pr[c].carried;
        pr[c].running = !pr[c].finished && pr[c].epoch <= p->epochs;
        if (pr[c].running && (first == SIZE_MAX || before_pos(pr[c].epoch, pr[c].t, e0, t0))) {
            first = c;
            e0 = pr[c].epoch;
            t0 = pr[c].t;
        }
    }
    pt_rng rng;
    int shuffles = 0;
    const size_t chunk = pt_shuffle_chunk(p, ds);
    if (order)
        pt_train_state_order_chunks(first < K ? states[first] : NULL, p->seed, order, n, chunk,
                                    &rng, &shuffles);
    /* streamed: the pass walks the windows (the order's chunks when shuffled) */
    pt_window_pos at = {.rows = order ? chunk : 0};
    size_t nactive = 0, nwaiting = 0;
    for (size_t c = 0; c < K; c++)
        if (pr[c].running) waiting[nwaiting++] = c;
    for (int epoch = e0; first < K && epoch <= p->epochs && nactive + nwaiting > 0; epoch++) {
        for (; order && shuffles < epoch; shuffles++) pt_rng_shuffle_chunks(&rng, order, n, chunk);
        for (size_t a = 0; a < nactive; a++) pr[active[a]].mistakes = 0;
        for (size_t t = epoch == e0 ? t0 : 0; t <= n; t++) {
            /* problems whose run stands here join the pass */
            for (size_t w = 0; w < nwaiting;) {
                size_t c = waiting[w];
                if (pr[c].epoch != epoch || pr[c].t != t) {
                    w++;
                    continue;
                }
                pr[c].mistakes = pr[c].carried;
                active[nactive++] = c;
                waiting[w] = waiting[--nwaiting];
            }
            if (t == n) break;
            size_t i = order ? order[t] : t;
            int32_t cls = ds->cls[i];
            if (order) pt_window_at_order(ds, &at, order, t, n);
            else pt_window_at(ds, &at, i);
            if (sparse) {
                /* the row's pairs once, every class's step on them (O(nnz) each) */
                const uint32_t *idx;
                const float *val;
                size_t nnz = pt_csr_row(ds, i, &idx, &val);
                if (order) prefetch_sparse_ahead(ds, order, t);
                for (size_t a = 0; a < nactive; a++) {
                    online *oc = &o[active[a]];
                    if (p->class_weight) oc->eta = p->eta * p->class_weight[cls];
                    float y = cls == (int32_t)(c0 + active[a]) ? 1.0f : -1.0f, sc;
                    pr[active[a]].mistakes +=
                        !oc->averaged ? (size_t)k->sparse->step(oc->w, &oc->b, idx, val, nnz, y,
                                                                oc->tau, oc->eta, oc->bias, &sc)
                                      : (size_t)visit_sparse(oc, idx, val, nnz, y,
                                                             score_of_sparse(oc, idx, val, nnz));
                }
            }
            /* a streamed window's copy (float32), or the row (widened if compact) */
            const float *x = sparse ? NULL
                             : at.copy ? pt_window_row(ds, &at, i)
                                       : pt_row_f32(k, ds, i, wide);
            for (size_t a = 0; !sparse && a < nactive; a++) {
                size_t c = active[a];
                float y = cls == (int32_t)(c0 + c) ? 1.0f : -1.0f, sc;
                if (p->class_weight) o[c].eta = p->eta * p->class_weight[cls];
                if (!o[c].averaged)
                    pr[c].mistakes += (size_t)k->step(o[c].w, &o[c].b, x, len, y, o[c].tau, o[c].eta,
                                                      o[c].bias, &sc);
                else
                    pr[c].mistakes += (size_t)visit(&o[c], x, y, score_of(&o[c], x));
            }
            if (pt_stopping(p->stop)) {
                for (size_t a = 0; a < nactive; a++) {
                    problem *q = &pr[active[a]];
                    q->pos = t + 1;
                    q->pos_mistakes = q->mistakes;
                    reps[active[a]].updates += q->mistakes - (q->epoch == epoch ? q->carried : 0);
                }
                s = pt_fail(PT_ERR_INTERRUPTED, "interrupted in epoch %d after sample %zu", epoch, t + 1);
                goto finish;
            }
        }
        pt_window_end(ds, &at);
        /* book the epoch; problems with no mistake are done */
        size_t keep = 0;
        for (size_t a = 0; a < nactive; a++) {
            size_t c = active[a];
            problem *q = &pr[c];
            reps[c].updates += q->mistakes - (q->epoch == epoch ? q->carried : 0);
            const pt_epoch_ending end = {.r = &reps[c], .w = o[c].w, .nw = len, .b = &o[c].b,
                                         .nb = 1, .what = "weights",
                                         .hint = ONLINE_NONFINITE_HINT};
            bool epoch_done, stop;
            s = pt_epoch_end(&end, epoch, q->mistakes, NAN, q->mistakes == 0, &epoch_done, &stop);
            if (s != PT_OK) goto finish;
            q->done = epoch;
            q->pos = q->pos_mistakes = 0;
            if (q->mistakes == 0) {
                q->finished = true;
                reps[c].converged = 1;
            } else {
                active[keep++] = c;
            }
        }
        nactive = keep;
    }
finish:
    pt_window_end(ds, &at);
    if (s == PT_OK || s == PT_ERR_INTERRUPTED) {
        /* where each problem stands, then the models as they stand */
        for (size_t c = 0; c < K; c++) {
            problem *q = &pr[c];
            pt_status cs = online_state_capture(&o[c], &reps[c], states[c], q->done, q->pos,
                                                q->pos_mistakes, q->finished,
                                                q->finished ? NULL : order, n, shuffles, &rng,
                                                out[c]);
            if (cs != PT_OK) {
                s = cs;
                goto out;
            }
        }
        for (size_t c = 0; c < K; c++) {
            pt_train_state_free(states[c]);
            states[c] = out[c];
            out[c] = NULL;
        }
    }
    for (size_t c = 0; c < K; c++) online_snapshot(&o[c], o[c].w, &B[c]);
out:
    for (size_t c = 0; o && c < K; c++) pt_free(o[c].u);
    for (size_t c = 0; out && c < K; c++) pt_train_state_free(out[c]);
    free(o);
    free(pr);
    free(active);
    free(waiting);
    free(out);
    pt_free(order);
    pt_free(wide);
    return s;
}
