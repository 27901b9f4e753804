/*
 * More than two classes.
 *  - One-vs-rest: K binary problems "class k against the rest", independent, trained in
 *    parallel over classes (OpenMP); on the online path each thread runs its group of classes
 *    in lockstep from one pass over X per epoch. The model keeps one weight vector per class
 *    and predicts the class of highest score. The voted perceptron keeps each class's binary
 *    model whole (its vectors and their survival counts, in m->sub) and scores a class by its
 *    vote; each class may store vectors within 1/K of the memory budget.
 *  - The multiclass perceptron (online): scores s_c = W_c.x + B_c for every class in one visit
 *    of x; with r the best wrong class, a margin violation s_y - s_r <= tau adds eta x to W_y
 *    and subtracts it from W_r. Averaged with the same lazy sum as the binary path.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* ------------------------------------------------------------------ one-vs-rest */

/* Sum per-class reports into one: mistakes per epoch summed, converged if all converged. */
static pt_status merge_reports(pt_train_report *reps, size_t K, pt_train_report *r)
{
    int epochs = 0;
    r->converged = 1;
    for (size_t c = 0; c < K; c++) {
        if (reps[c].epochs_run > epochs) epochs = reps[c].epochs_run;
        r->updates += reps[c].updates;
        r->converged &= reps[c].converged;
    }
    for (int e = 0; e < epochs; e++) {
        size_t mistakes = 0;
        double obj = 0.0; /* batch path: the classes' objectives summed, while all have one */
        for (size_t c = 0; c < K; c++) {
            if (e < reps[c].epochs_run) mistakes += reps[c].mistakes_per_epoch[e];
            obj = reps[c].objective_per_epoch && e < reps[c].epochs_run
                      ? obj + reps[c].objective_per_epoch[e] : NAN;
        }
        PT_TRY(pt_report_push_epoch(r, mistakes, obj));
    }
    free(r->seconds_per_epoch); /* the classes ran one after another: no per-epoch time */
    r->seconds_per_epoch = NULL;
    return PT_OK;
}


/* A class's binary model inside a one-vs-rest model: labels 0 (the rest) and 1 (the class). */
static void class_model_meta(pt_model *mc, const pt_train_params *p)
{
    mc->path = p->path;
    mc->variant = p->variant;
    mc->bias = p->bias;
    mc->multiclass = p->multiclass;
    mc->nclass = 2;
    mc->class_values[0] = 0.0;
    mc->class_values[1] = 1.0;
    mc->params = *p;
    mc->params.progress = NULL;
    mc->params.progress_user = NULL;
    mc->params.epoch_hook = NULL;
    mc->params.epoch_user = NULL;
    mc->params.stop = NULL;
    mc->params.resume = NULL;
    mc->params.init = NULL;
}

static pt_status train_ovr(const pt_dataset *ds, const pt_train_params *p, const pt_kernels *k,
                           pt_model *m, pt_train_report *r)
{
    const size_t K = ds->nclass, len = pt_stride_for(ds->d);
    int threads = pt_threads_resolve(p->threads);
    pt_train_params inner = *p;
    inner.threads = 1; /* parallel over classes instead */
    inner.pass = PT_PASS_SEQUENTIAL;
    inner.progress = NULL;
    inner.epoch_hook = NULL;
    pt_train_report *reps = calloc(K, sizeof *reps);
    pt_status *status = calloc(K, sizeof *status);
    /* the per-class +1/-1 labels: only the path that trains each class on its own view needs them */
    const bool voted = p->path == PT_PATH_ONLINE && p->variant == PT_VARIANT_VOTED;
    bool lockstep = p->path == PT_PATH_ONLINE && !voted;
    float *ys = lockstep ? NULL : pt_alloc(K * (ds->n ? ds->n : 1) * sizeof(float), "one-vs-rest labels");
    if (voted) {
        /* the classes' vectors live at once: each gets its share of the budget, so the sum
         * stays within it whatever the order the classes run in */
        inner.mem_budget_bytes = p->mem_budget_bytes / K;
        m->sub = calloc(K, sizeof *m->sub);
    }
    if (!reps || !status || (!lockstep && !ys) || (voted && !m->sub)) {
        free(reps);
        free(status);
        pt_free(ys);
        return pt_fail(PT_ERR_NOMEM, "cannot allocate %zu one-vs-rest problems", K);
    }
    char first_error[512] = "";
    if (lockstep) {
        /* the online path in lockstep: each thread streams X once per epoch for its group of
         * classes (contiguous, so the result does not depend on the thread count) */
        size_t groups = (size_t)threads < K ? (size_t)threads : K;
#pragma omp parallel for schedule(static, 1) num_threads((int)groups)
        for (size_t g = 0; g < groups; g++) {
            size_t c0 = K * g / groups, c1 = K * (g + 1) / groups;
            pt_status s = pt_train_online_ovr(ds, &inner, k, c0, c1, m->W + c0 * len, m->Bk + c0,
                                              reps + c0);
            for (size_t c = c0; c < c1; c++) status[c] = s;
            if (s != PT_OK && s != PT_ERR_INTERRUPTED) {
#pragma omp critical /* unnamed: a named one is a symbol the library would export */
                if (!first_error[0]) snprintf(first_error, sizeof first_error, "%s", pt_last_error());
            }
        }
    } else {
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
        for (size_t c = 0; c < K; c++) {
            pt_dataset view;
            pt_dataset_binary_view(ds, c, ys + c * ds->n, &view);
            pt_model *mc = pt_model_alloc_linear(ds->d);
            pt_status s = mc ? PT_OK : PT_ERR_NOMEM;
            if (mc) {
                /* the class's start: its row of W (zero, or the warm start) */
                memcpy(mc->w, m->W + c * len, len * sizeof(float));
                mc->b = m->Bk[c];
            }
            if (s == PT_OK)
                s = p->path == PT_PATH_BATCH ? pt_train_batch(&view, &inner, k, mc, &reps[c])
                                             : pt_train_online(&view, &inner, k, mc, &reps[c]);
            if (mc) {
                memcpy(m->W + c * len, mc->w, len * sizeof(float));
                m->Bk[c] = mc->b;
            }
            if (mc && voted && (s == PT_OK || s == PT_ERR_INTERRUPTED)) {
                /* the class's binary model, vectors and all: its vote is its score */
                class_model_meta(mc, p);
                m->sub[c] = mc;
                mc = NULL;
            }
            status[c] = s;
            if (s != PT_OK && s != PT_ERR_INTERRUPTED) {
#pragma omp critical /* unnamed: a named one is a symbol the library would export */
                if (!first_error[0])
                    snprintf(first_error, sizeof first_error, "class %g: %s%s", ds->class_values[c],
                             pt_last_error(),
                             voted && s == PT_ERR_LIMIT ? " (one-vs-rest: each class gets 1/K of "
                                                          "the budget)" : "");
            }
            pt_model_free(mc);
        }
    }
    /* the report: per epoch, the mistakes summed over classes */
    pt_status s = PT_OK;
    for (size_t c = 0; c < K && s == PT_OK; c++)
        if (status[c] != PT_OK) s = status[c];
    if (s == PT_OK) s = merge_reports(reps, K, r);
    for (size_t c = 0; c < K; c++) pt_train_report_clear(&reps[c]);
    free(reps);
    free(status);
    pt_free(ys);
    if (s != PT_OK && s != PT_ERR_INTERRUPTED && first_error[0]) return pt_fail(s, "%s", first_error);
    if (s == PT_OK && p->progress && r->epochs_run)
        p->progress(r->epochs_run, r->mistakes_per_epoch[r->epochs_run - 1], 0.0, p->progress_user);
    return s;
}

/* --------------------------------------------------------- the multiclass perceptron */

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

/* One sample of class y: returns 1 if it updated. */
static int direct_visit(direct *o, const float *x, size_t y)
{
    const size_t K = o->K, len = o->len;
    o->k->dot_many(o->W, len, K, x, len, o->s); /* one pass over x for every class */
    for (size_t c = 0; c < K; c++) o->s[c] += o->B[c] * o->bias;
    size_t rival = y == 0 ? 1 : 0;
    for (size_t c = 0; c < K; c++)
        if (c != y && o->s[c] > o->s[rival]) rival = c;
    int upd = o->s[y] - o->s[rival] <= o->tau;
    if (upd) {
        float a = o->eta;
        if (o->averaged) {
            float cc = (float)o->steps * a;
            o->k->axpy2(a, cc, x, o->W + y * len, o->U + y * len, len);
            o->k->axpy2(-a, -cc, x, o->W + rival * len, o->U + rival * len, len);
            o->UB[y] += cc * o->bias;
            o->UB[rival] -= cc * o->bias;
        } else {
            o->k->axpy(a, x, o->W + y * len, len);
            o->k->axpy(-a, x, o->W + rival * len, len);
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

static pt_status train_direct(const pt_dataset *ds, const pt_train_params *p, const pt_kernels *k,
                              pt_model *m, pt_train_report *r)
{
    const size_t n = ds->n, K = ds->nclass;
    direct o = {
        .k = k, .K = K, .len = ds->stride, .tau = p->margin, .eta = p->eta,
        .bias = p->bias ? 1.0f : 0.0f, .averaged = p->variant == PT_VARIANT_AVERAGED,
        .W = m->W, .B = m->Bk,
    };
    if (p->variant == PT_VARIANT_VOTED)
        return pt_fail(PT_ERR_UNSUPPORTED, "the voted perceptron is binary; use PT_VARIANT_AVERAGED");
    if (p->shuffle && n > UINT32_MAX)
        return pt_fail(PT_ERR_LIMIT, "pt_train_params.shuffle supports up to 2^32 rows (got %zu)", n);
    uint32_t *order = NULL;
    pt_model *snap = NULL;
    pt_status s = PT_OK;
    o.s = malloc(K * sizeof(float));
    if (!o.s || (o.averaged && (!(o.U = pt_calloc(K * o.len * sizeof(float), "averaging buffers")) ||
                                !(o.UB = pt_calloc(K * sizeof(float), "averaging buffers")))) ||
        (p->shuffle && !(order = pt_alloc((n ? n : 1) * sizeof *order, "sample order"))) ||
        (p->epoch_hook && !(snap = pt_model_alloc_multiclass(ds->d, K, ds->class_values)))) {
        s = o.s ? PT_ERR_NOMEM : pt_fail(PT_ERR_NOMEM, "cannot allocate %zu scores", K);
        goto out;
    }
    if (snap) pt_model_set_meta(snap, ds, p);
    for (size_t i = 0; order && i < n; i++) order[i] = (uint32_t)i;
    pt_rng rng;
    pt_rng_seed(&rng, p->seed);
    double t0 = pt_now();
    for (int epoch = 1; epoch <= p->epochs; epoch++) {
        if (order) pt_rng_shuffle(&rng, order, n);
        size_t mistakes = 0;
        for (size_t t = 0; t < n; t++) {
            size_t i = order ? order[t] : t;
            mistakes += (size_t)direct_visit(&o, ds->X + i * ds->stride, (size_t)ds->cls[i]);
            if (pt_stopping(p->stop)) {
                s = pt_fail(PT_ERR_INTERRUPTED, "interrupted in epoch %d at sample %zu", epoch, t + 1);
                break;
            }
        }
        r->updates += mistakes;
        if (s != PT_OK) break;
        if ((s = pt_report_push_epoch(r, mistakes, NAN)) != PT_OK) break;
        bool finite = true;
        for (size_t j = 0; j < K * o.len && finite; j++) finite = isfinite(o.W[j]);
        if (!finite) {
            s = pt_fail(PT_ERR_NUMERIC, "weights became non-finite in epoch %d: lower pt_train_params.eta or "
                                        "rescale the features", epoch);
            break;
        }
        if (p->progress && p->progress(epoch, mistakes, pt_now() - t0, p->progress_user)) {
            s = pt_fail(PT_ERR_INTERRUPTED, "stopped by the progress callback after epoch %d", epoch);
            break;
        }
        if (snap) {
            direct_snapshot(&o, snap->W, snap->Bk);
            snap->epochs_run = epoch;
            if (p->epoch_hook(snap, epoch, mistakes, p->epoch_user)) break;
        }
        if (mistakes == 0) {
            r->converged = 1;
            break;
        }
    }
    direct_snapshot(&o, m->W, m->Bk);
out:
    free(o.s);
    pt_free(o.U);
    pt_free(o.UB);
    pt_free(order);
    pt_model_free(snap);
    return s;
}

/* One-vs-rest on the kernel path: one binary kernel model per class, trained in turn on one
 * kernel storage (each class uses every thread for its rows; the Gram is built once). */
typedef struct class_views {
    const pt_dataset *ds;
    float *y;
    double binary[2]; /* a class model's labels: 0 (the rest) and 1 (the class) */
} class_views;

static void class_view(void *user, size_t c, pt_dataset *view)
{
    class_views *cv = user;
    pt_dataset_binary_view(cv->ds, c, cv->y, view);
    view->class_values = cv->binary;
}

static pt_status train_kernel_ovr(const pt_dataset *ds, const pt_train_params *p,
                                  const pt_kernels *k, pt_model **out, pt_train_report *r)
{
    const size_t K = ds->nclass;
    pt_model *m = calloc(1, sizeof *m);
    pt_train_report *reps = calloc(K, sizeof *reps);
    float *y = pt_alloc((ds->n ? ds->n : 1) * sizeof(float), "one-vs-rest labels");
    pt_status s = m && reps && y && (m->sub = calloc(K, sizeof *m->sub)) && (m->labels = malloc(K * sizeof(double)))
                      ? PT_OK
                      : pt_fail(PT_ERR_NOMEM, "cannot allocate %zu one-vs-rest problems", K);
    if (s == PT_OK) {
        m->d = ds->d;
        m->nclass = K;
        memcpy(m->labels, ds->class_values, K * sizeof(double));
        pt_train_params inner = *p;
        inner.progress = NULL;
        inner.epoch_hook = NULL;
        class_views cv = {ds, y, {0.0, 1.0}};
        size_t failed;
        s = pt_train_kernel_problems(ds, K, class_view, &cv, &inner, k, m->sub, reps, &failed);
        pt_dataset view;
        class_view(&cv, 0, &view); /* the meta of a class model does not depend on the class */
        for (size_t c = 0; c < K; c++)
            if (m->sub[c]) pt_model_set_meta(m->sub[c], &view, p);
        if (s != PT_OK && failed < K) pt_fail_prefix(s, "class %g", ds->class_values[failed]);
    }
    if (s == PT_OK) s = merge_reports(reps, K, r);
    for (size_t c = 0; reps && c < K; c++) pt_train_report_clear(&reps[c]);
    free(reps);
    pt_free(y);
    if (s != PT_OK) {
        pt_model_free(m);
        return s;
    }
    pt_model_set_meta(m, ds, p);
    *out = m;
    return PT_OK;
}

pt_status pt_train_multiclass(const pt_dataset *ds, const pt_train_params *p, const pt_kernels *k,
                              pt_model **out, pt_train_report *r)
{
    if (p->path == PT_PATH_KERNEL) return train_kernel_ovr(ds, p, k, out, r);
    pt_model *m = pt_model_alloc_multiclass(ds->d, ds->nclass, ds->class_values);
    if (!m) return PT_ERR_NOMEM;
    pt_model_set_meta(m, ds, p);
    pt_status s = pt_model_start(m, p);
    if (s == PT_OK)
        s = p->multiclass == PT_MULTI_DIRECT ? train_direct(ds, p, k, m, r) : train_ovr(ds, p, k, m, r);
    if (s != PT_OK && s != PT_ERR_INTERRUPTED) {
        pt_model_free(m);
        return s;
    }
    *out = m;
    return s;
}
