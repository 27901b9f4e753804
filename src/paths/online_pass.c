/* layers: reads rows by form until ported to data/rows.h */
/*
 * One epoch of the online path by the pass chosen for it: sequential (here), or blocked
 * (online_blocked.c: the other threads score the samples ahead of the walk; the same model, bit
 * for bit). PT_PASS_SEQUENTIAL and PT_PASS_BLOCKED are taken as asked; PT_PASS_AUTO goes
 * blocked only where it pays, judged by the last epoch's mistakes and each epoch's time, and
 * sets the blocked pass aside for a while after an epoch where it did not.
 */
#include <stdint.h>

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

void online_pass_init(online_pass *ps, const pt_train_params *p, int threads,
                      const pt_dataset *ds, size_t len, bool mapped)
{
    *ps = (online_pass){.mode = p->online.pass, .threads = threads, .n = ds->n, .mapped = mapped,
                        .big = (ds->layout == PT_LAYOUT_SPARSE
                                    ? pt_sparse_bytes(ds->n, ds->nnz)
                                    : ds->n * len * pt_dtype_size(ds->dtype)) >= AUTO_MIN_BYTES,
                        .blocked_below = SIZE_MAX};
    /* class weights: one step size a sample, which only the sequential pass takes; compact
     * rows are widened one at a time by the sequential pass (the blocked pass's scoring
     * threads read float32 rows); a streamed dataset is walked window by window, which the
     * sequential pass does */
    if (p->class_weight || ds->dtype != PT_DTYPE_F32 || pt_dataset_streamed(ds))
        ps->mode = PT_PASS_SEQUENTIAL;
    if (ps->mode == PT_PASS_AUTO && threads >= 2 && !mapped && ps->big) {
        /* start the thread team now, not in the first blocked epoch (whose time auto judges) */
#pragma omp parallel num_threads(threads)
        {
        }
    }
}

/* Auto, after a blocked epoch that did not pay (`last`: the mistakes it expected). */
static void set_aside(online_pass *ps, int epoch, size_t last)
{
    if (last < AUTO_NOISE_MISTAKES) ps->blocked_from = epoch + 2;
    else ps->blocked_below = last / 4;
}

/* Whether epoch runs blocked, the last epoch having had `last` mistakes. */
static bool choose_blocked(const online_pass *ps, int epoch, size_t last)
{
    if (ps->mapped) return false;
    if (ps->mode == PT_PASS_BLOCKED) return true;
    return ps->mode == PT_PASS_AUTO && ps->threads >= 2 && epoch > 1 && last < ps->blocked_below &&
           epoch >= ps->blocked_from && ps->seq_seconds > 0.0 && last * AUTO_RATE < ps->n &&
           ps->big;
}

/* epoch_sequential on a sparse dataset: every step O(nnz) (a gather, and on an update a
 * scatter), the plain pass, classic or averaged, a chunk of rows a kernel call as on dense
 * data (the averaged kernel is visit_sparse on each row: the same model, bit for bit). The
 * per-row calls it replaces cost little next to the gathers, which are the epoch (bench
 * online/sparse_epoch against online/sparse_scores, a pass of dot_rows alone). */
static pt_status epoch_sparse(online *o, const pt_dataset *ds, const uint32_t *order,
                              pt_window_pos *at, size_t *t_io, size_t *mistakes, int epoch)
{
    size_t count = *mistakes, t = *t_io;
    const float *Y = ds->y;
    const pt_sparse_kernels *sk = o->k->sparse;
    pt_status s = PT_OK;
    if (!order && !o->voted && !o->cw) {
        const size_t chunk = 8192;
        while (t < ds->n) {
            size_t rows = ds->n - t < chunk ? ds->n - t : chunk;
            pt_window_at(ds, at, t);
            if (ds->win && rows > at->hi - t) rows = at->hi - t;
            if (o->averaged)
                count += sk->step_rows_avg(o->w, o->u, &o->b, &o->ub, &o->steps, ds->rowptr + t,
                                           ds->col, ds->val, Y + t, rows, o->tau, o->eta,
                                           o->bias);
            else
                count += sk->step_rows(o->w, &o->b, ds->rowptr + t, ds->col, ds->val, Y + t,
                                       rows, o->tau, o->eta, o->bias);
            t += rows;
            if (online_stopped(o)) {
                s = pt_fail(PT_ERR_INTERRUPTED, "interrupted in epoch %d after sample %zu", epoch,
                            t);
                break;
            }
        }
        *t_io = t;
        *mistakes = count;
        return s;
    }
    for (; t < ds->n; t++) {
        const uint32_t *idx;
        const float *val;
        if (order) pt_window_at_order(ds, at, order, t, ds->n);
        else pt_window_at(ds, at, t);
        size_t nnz = sparse_row(ds, order, t, &idx, &val);
        float y = Y[order ? order[t] : t];
        online_weigh(o, ds, order ? order[t] : t);
        if (order) prefetch_sparse_ahead(ds, order, t);
        if (!o->averaged && !o->voted) {
            float sc;
            count += (size_t)sk->step(o->w, &o->b, idx, val, nnz, y, o->tau, o->eta, o->bias, &sc);
        } else {
            count += (size_t)visit_sparse(o, idx, val, nnz, y, score_of_sparse(o, idx, val, nnz));
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

/* epoch_sequential on compact rows (bf16, u8): the plain pass by the compact step_rows, a chunk
 * of rows a call; otherwise each row widened into o->wide (then mapped, over an expansion),
 * then the float32 step, so the decisions and w are those of the float32 copy of the rows.
 * Streamed, the rows are read in the mapping window by window, as float32 rows are. */
static pt_status epoch_compact(online *o, const pt_dataset *ds, const uint32_t *order,
                               const pt_row_map *map, float *mapped, pt_window_pos *at,
                               size_t *t_io, size_t *mistakes, int epoch)
{
    size_t count = *mistakes, t = *t_io;
    const float *Y = ds->y;
    const size_t es = pt_dtype_size(ds->dtype), row_bytes = ds->stride * es;
    pt_status s = PT_OK;
    if (!order && !map && !o->averaged && !o->voted && !o->cw) {
        const size_t chunk = 8192;
        while (t < ds->n) {
            size_t rows = ds->n - t < chunk ? ds->n - t : chunk;
            pt_window_at(ds, at, t);
            if (ds->win && rows > at->hi - t) rows = at->hi - t;
            count += o->k->compact->step_rows(o->w, &o->b, pt_compact_row(ds, t), ds->stride,
                                              ds->dtype, ds->u8_rh, ds->u8_rl, Y + t, rows, o->len,
                                              o->tau, o->eta, o->bias, o->wide);
            t += rows;
            if (online_stopped(o)) {
                s = pt_fail(PT_ERR_INTERRUPTED, "interrupted in epoch %d after sample %zu", epoch,
                            t);
                break;
            }
        }
        *t_io = t;
        *mistakes = count;
        return s;
    }
    for (; t < ds->n; t++) {
        size_t i = order ? order[t] : t;
        if (order) pt_window_at_order(ds, at, order, t, ds->n);
        else pt_window_at(ds, at, t);
        if (order && t + PREFETCH_AHEAD < ds->n) {
            const char *ahead = pt_compact_row(ds, order[t + PREFETCH_AHEAD]);
            for (size_t j = 0; j < row_bytes; j += 64) __builtin_prefetch(ahead + j, 0, 3);
        }
        const float *x = pt_row_f32(o->k, ds, i, o->wide);
        float y = Y[i];
        online_weigh(o, ds, i);
        if (map) {
            map->map(map->ctx, x, mapped);
            x = mapped;
        }
        if (!o->averaged && !o->voted) {
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

/* One sequential epoch from sample *t on; *mistakes accumulates, *t ends at n (or where an
 * interrupt stopped it: the samples before *t are done). */
static pt_status epoch_sequential(online *o, const pt_dataset *ds, const uint32_t *order,
                                  const pt_row_map *map, float *mapped, pt_window_pos *at,
                                  size_t *t_io, size_t *mistakes, int epoch)
{
    if (ds->layout == PT_LAYOUT_SPARSE)
        return epoch_sparse(o, ds, order, at, t_io, mistakes, epoch);
    if (ds->dtype != PT_DTYPE_F32)
        return epoch_compact(o, ds, order, map, mapped, at, t_io, mistakes, epoch);
    size_t count = *mistakes, t = *t_io;
    const float *Y = ds->y;
    pt_status s = PT_OK;
    if (!order && !map && !o->averaged && !o->voted && !o->cw) {
        /* The plain pass: the whole loop in the kernel, a chunk of rows a call (a chunk is
         * well under a millisecond, so an interrupt is still seen at once). */
        const size_t chunk = 8192;
        while (t < ds->n) {
            size_t rows = ds->n - t < chunk ? ds->n - t : chunk;
            pt_window_at(ds, at, t);
            if (ds->win && rows > at->hi - t) rows = at->hi - t;
            count += o->k->step_rows(o->w, &o->b, pt_window_row(ds, at, t), ds->stride, Y + t,
                                     rows, o->len, o->tau, o->eta, o->bias);
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
        if (order) pt_window_at_order(ds, at, order, t, ds->n);
        else pt_window_at(ds, at, t);
        const float *x = pt_window_row(ds, at, order ? order[t] : t);
        float y = Y[order ? order[t] : t];
        online_weigh(o, ds, order ? order[t] : t);
        /* (a streamed window's copy is in cache) */
        if (order && !at->copy && t + PREFETCH_AHEAD < ds->n)
            prefetch_row(row(ds, order, t + PREFETCH_AHEAD), ds->stride);
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

pt_status online_pass_epoch(online_pass *ps, online *o, const pt_dataset *ds,
                            const uint32_t *order, const pt_row_map *map, float *mapped,
                            int epoch, size_t last, size_t *t, size_t *mistakes)
{
    const bool blocked = choose_blocked(ps, epoch, last);
    const size_t before = *mistakes;
    double e0 = pt_now();
    bool gave_up = false;
    double seq_rate = ps->mode == PT_PASS_AUTO && ps->seq_seconds > 0
                          ? (double)ps->n / ps->seq_seconds : 0.0;
    pt_window_pos at = {.rows = ps->window_rows};
    pt_status s = blocked ? online_epoch_blocked(o, ds, order, ps->threads, last, t, mistakes,
                                                 epoch, seq_rate, &gave_up)
                          : epoch_sequential(o, ds, order, map, mapped, &at, t, mistakes, epoch);
    if (gave_up) {
        set_aside(ps, epoch, last);
        pt_log(PT_LOG_INFO,
               "online path: epoch %d: the blocked pass ran slower than the sequential one "
               "(%zu mistakes by sample %zu): sequential from there",
               epoch, *mistakes - before, *t);
        s = epoch_sequential(o, ds, order, map, mapped, &at, t, mistakes, epoch);
    }
    pt_window_end(ds, &at);
    double took = pt_now() - e0;
    if (!blocked) {
        ps->seq_seconds = took;
    } else if (!gave_up && ps->mode == PT_PASS_AUTO && took > 0.9 * ps->seq_seconds) {
        set_aside(ps, epoch, last);
        pt_log(PT_LOG_INFO,
               "online path: epoch %d: the blocked pass took %.2f ms, the last sequential epoch "
               "%.2f ms", epoch, took * 1e3, ps->seq_seconds * 1e3);
    }
    return s;
}
