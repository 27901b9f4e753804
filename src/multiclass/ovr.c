/*
 * One-vs-rest: K binary problems "class k against the rest", independent, trained in parallel
 * over classes (OpenMP); on the online path each thread runs its group of classes in lockstep
 * from one pass over X per epoch. The model keeps one weight vector per class and predicts the
 * class of highest score. The voted perceptron keeps each class's binary model whole (its
 * vectors and their survival counts, in m->sub) and scores a class by its vote; each class may
 * store vectors within 1/K of the memory budget. With an epoch hook or a progress callback the
 * classes advance in rounds of one epoch (each class resumes from where the last round left
 * it, exactly), so the hook sees every class at the same epoch; the model records where each
 * class stands, so an interrupted run resumes. On the kernel path the classes train in turn on
 * one kernel storage (the Gram is built once).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dist/dist.h"
#include "multiclass.h"

/* Sum per-class reports into one: mistakes per epoch summed, converged if all converged. A
 * resumed run's report starts after the latest epoch any class took over. */
static pt_status merge_reports(pt_train_report *reps, size_t K, pt_train_report *r)
{
    int epochs = 0, before = 0;
    r->converged = 1;
    for (size_t c = 0; c < K; c++) {
        if (reps[c].epochs_run > epochs) epochs = reps[c].epochs_run;
        if (reps[c].epochs_before > before) before = reps[c].epochs_before;
        r->updates += reps[c].updates;
        r->converged &= reps[c].converged;
        r->gram_seconds += reps[c].gram_seconds; /* the kernel path's shared storage: once */
        r->score_seconds += reps[c].score_seconds;
    }
    r->epochs_before = r->epochs_run = before;
    for (int e = before + 1; e <= epochs; e++) {
        size_t mistakes = 0;
        double obj = 0.0; /* batch path: the classes' objectives summed, while all have one */
        for (size_t c = 0; c < K; c++) {
            const pt_train_report *q = &reps[c];
            bool has = e <= q->epochs_run; /* e > q->epochs_before, since before is the latest */
            if (has) mistakes += q->mistakes_per_epoch[e - q->epochs_before - 1];
            int at = e - q->epochs_before - 1;
            obj = q->objective_per_epoch && has ? obj + q->objective_per_epoch[at] : NAN;
        }
        PT_TRY(pt_report_push_epoch(r, mistakes, obj));
    }
    free(r->seconds_per_epoch); /* the classes ran side by side or in turn: no per-epoch time */
    r->seconds_per_epoch = NULL;
    return PT_OK;
}

/* The epochs a problem has done (a finished one: past every limit). */
static int problem_epochs(const pt_train_state *st)
{
    return !st ? 0 : st->finished ? INT32_MAX : st->epochs_done;
}

/* Mistakes of all classes in epoch e (those that ran it in this call). */
static size_t mistakes_in(const pt_train_report *reps, size_t K, int e)
{
    size_t sum = 0;
    for (size_t c = 0; c < K; c++)
        if (e > reps[c].epochs_before && e <= reps[c].epochs_run)
            sum += reps[c].mistakes_per_epoch[e - reps[c].epochs_before - 1];
    return sum;
}

/* Where each class stands: taken from the model to resume (cloned), or NULL for fresh. */
static pt_train_state **states_from(const pt_train_params *p, size_t K)
{
    pt_train_state **st = calloc(K, sizeof *st);
    if (!st) {
        pt_fail(PT_ERR_NOMEM, "cannot allocate %zu training states", K);
        return NULL;
    }
    for (size_t c = 0; p->resume && c < K; c++)
        if (!(st[c] = pt_train_state_clone(p->resume->states[c]))) {
            for (size_t j = 0; j < c; j++) pt_train_state_free(st[j]);
            free(st);
            return NULL;
        }
    return st;
}

static void states_free(pt_train_state **st, size_t K)
{
    for (size_t c = 0; st && c < K; c++) pt_train_state_free(st[c]);
    free(st);
}

/* The epoch hook's model after a round: m, lent where each class stands for the call (NULL
 * states: not resumable), once before_hook (if set) has brought it up to date. */
typedef struct round_hook {
    pt_model *m;
    pt_train_state **states;
    size_t K;
    pt_status (*before_hook)(void *user);
    void *user;
} round_hook;

static pt_status lend_states(void *user, int epoch, bool finished, pt_model **model)
{
    (void)finished;
    const round_hook *h = user;
    if (h->before_hook) PT_TRY(h->before_hook(h->user));
    h->m->epochs_run = epoch;
    h->m->states = h->states;
    h->m->nstates = h->states ? h->K : 0;
    *model = h->m;
    return PT_OK;
}

static void take_back_states(void *user, pt_model *model)
{
    (void)user;
    model->states = NULL;
    model->nstates = 0;
}

/* After a round that brought every class to epoch E: the end of that epoch for the caller
 * (the classes recorded theirs), its progress callback, then its epoch hook on h's model.
 * Returns non-zero to stop, with *s the status. */
static int after_round(const pt_train_params *p, round_hook *h, const pt_train_report *reps,
                       int E, double t0, pt_status *s)
{
    const pt_epoch_ending end = {.p = p, .t0 = t0, .snapshot = lend_states,
                                 .release = take_back_states, .path = h};
    bool done, stop;
    *s = pt_epoch_end(&end, E, mistakes_in(reps, h->K, E), NAN, false, &done, &stop);
    return *s != PT_OK || stop;
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
    mc->params.class_weight = NULL;
    mc->params.class_weight_n = 0;
}

/* One-vs-rest on the linear paths: K binary problems, in rounds (every class up to epoch E,
 * then the callbacks; one round to the last epoch when there are none). */
typedef struct ovr {
    const pt_dataset *ds;
    const pt_kernels *k;
    const pt_train_params *p;
    pt_train_params inner; /* per class: one thread, no callbacks */
    pt_model *m;
    size_t K, len;
    int threads;
    bool lockstep, voted;
    float *ys;              /* the per-class +1/-1 labels (not lockstep) */
    pt_train_state **states;
    pt_model **cls;         /* not lockstep: each class's binary model (voted: m->sub) */
    pt_train_report *reps, *part;
    char first_error[512];
} ovr;

/* Class c's binary problem, from where it stands, up to epoch E (not lockstep). */
static pt_status ovr_class(ovr *o, size_t c, const pt_train_params *inner)
{
    const pt_dataset *ds = o->ds;
    const size_t len = o->len;
    pt_dataset view;
    pt_dataset_binary_view(ds, c, o->ys + c * ds->n, &view);
    /* resume from where the class stands: its state, and (voted) its vectors, from the last
     * round or from the model to resume */
    const pt_model *base = o->cls[c] ? o->cls[c]
                           : o->p->resume && o->p->resume->sub ? o->p->resume->sub[c] : NULL;
    pt_model from = base ? *base : (pt_model){0};
    pt_train_state *at = o->states[c];
    from.states = &at;
    from.nstates = 1;
    pt_train_params pc = *inner;
    pc.resume = at ? &from : NULL;
    pt_model *mc = pt_model_alloc_linear(ds->d);
    if (!mc) return PT_ERR_NOMEM;
    /* the class's start: its row of W (zero, or the warm start) */
    memcpy(mc->w, o->m->W + c * len, len * sizeof(float));
    mc->b = o->m->Bk[c];
    if (o->voted && o->cls[c]) {
        /* its vectors go on in the new model: handed over, not copied (they are many) */
        pt_model *old = o->cls[c];
        mc->votes = old->votes;
        mc->vote_b = old->vote_b;
        mc->vote_c = old->vote_c;
        mc->n_votes = old->n_votes;
        mc->vote_cap = old->vote_cap;
        old->votes = old->vote_b = old->vote_c = NULL;
        old->n_votes = old->vote_cap = 0;
    }
    pt_status s = o->inner.path == PT_PATH_BATCH ? pt_train_batch(&view, &pc, o->k, mc, &o->part[c])
                                                 : pt_train_online(&view, &pc, o->k, mc, &o->part[c]);
    if (s != PT_OK && s != PT_ERR_INTERRUPTED) {
        pt_model_free(mc);
        return s;
    }
    memcpy(o->m->W + c * len, mc->w, len * sizeof(float));
    o->m->Bk[c] = mc->b;
    pt_train_state_free(o->states[c]);
    o->states[c] = mc->states[0];
    mc->states[0] = NULL;
    pt_model_clear_run(mc);
    /* the class's binary model, vectors and all (voted: its vote is its score) */
    class_model_meta(mc, o->p);
    pt_model_free(o->cls[c]);
    o->cls[c] = mc;
    return s;
}

/* Rounds of less work than this (floats of X times classes, an epoch each) run their classes
 * on the calling thread: an epoch of a small problem is tiny work, and waking a team of
 * threads for it, once an epoch, costs far more on a busy machine (a 48-row, 3-class run of
 * 3,000 epochs was many times slower on two threads than on one; docs/design.md). The
 * classes are independent: the same models either way. */
#define OVR_PARALLEL_MIN ((size_t)1 << 20)

/* Every class up to epoch E: lockstep groups, or one class a task. */
static pt_status ovr_round(ovr *o, int E)
{
    const size_t K = o->K, len = o->len;
    const pt_dataset *ds = o->ds;
    pt_train_params inner = o->inner;
    inner.epochs = E;
    pt_status status = PT_OK;
    o->first_error[0] = '\0';
    /* a share of a distributed run: one class after another, on the main thread (its
     * collectives run in the same order on every rank) */
    const bool parallel = ds->n * len * K >= OVR_PARALLEL_MIN && ds->shard_count < 2;
    if (o->lockstep) {
        /* the online path in lockstep: each thread streams X once per epoch for its group of
         * classes (contiguous, so the result does not depend on the thread count) */
        size_t groups = (size_t)o->threads < K ? (size_t)o->threads : K;
#pragma omp parallel for schedule(static, 1) num_threads((int)groups) if (parallel)
        for (size_t g = 0; g < groups; g++) {
            size_t c0 = K * g / groups, c1 = K * (g + 1) / groups;
            pt_status s = pt_train_online_ovr(ds, &inner, o->k, c0, c1, o->m->W + c0 * len,
                                              o->m->Bk + c0, o->part + c0, o->states + c0);
#pragma omp critical /* unnamed: a named one is a symbol the library would export */
            {
                if (s != PT_OK && s != PT_ERR_INTERRUPTED && !o->first_error[0])
                    snprintf(o->first_error, sizeof o->first_error, "%s", pt_last_error());
                if (status == PT_OK || (status == PT_ERR_INTERRUPTED && s != PT_OK)) status = s;
            }
        }
    } else {
#pragma omp parallel for schedule(dynamic, 1) num_threads(o->threads) if (parallel)
        for (size_t c = 0; c < K; c++) {
            if (o->cls[c] && problem_epochs(o->states[c]) >= E) continue; /* there already */
            pt_status s = ovr_class(o, c, &inner);
#pragma omp critical /* unnamed: a named one is a symbol the library would export */
            {
                if (s != PT_OK && s != PT_ERR_INTERRUPTED && !o->first_error[0])
                    snprintf(o->first_error, sizeof o->first_error, "class %g: %s%s",
                             ds->class_values[c], pt_last_error(),
                             o->voted && s == PT_ERR_LIMIT ? " (one-vs-rest: each class gets 1/K "
                                                             "of the budget)" : "");
                if (status == PT_OK || (status == PT_ERR_INTERRUPTED && s != PT_OK)) status = s;
            }
        }
    }
    for (size_t c = 0; c < K; c++) {
        pt_status a = o->part[c].epochs_run || o->part[c].mistakes_per_epoch
                          ? pt_report_append(&o->reps[c], &o->part[c]) : PT_OK;
        pt_train_report_clear(&o->part[c]);
        if (a != PT_OK && status == PT_OK) status = a;
    }
    if (status != PT_OK && status != PT_ERR_INTERRUPTED && o->first_error[0])
        return pt_fail(status, "%s", o->first_error);
    if (status == PT_ERR_INTERRUPTED) pt_fail(status, "interrupted in epoch %d", E);
    return status;
}

pt_status pt_train_ovr(const pt_dataset *ds, const pt_train_params *p, const pt_kernels *k,
                       pt_model *m, pt_train_report *r)
{
    const size_t K = ds->nclass;
    ovr o = {.ds = ds, .k = k, .p = p, .inner = *p, .m = m, .K = K, .len = pt_stride_for(ds->d),
             .threads = pt_threads_resolve(p->threads)};
    o.inner.threads = 1; /* parallel over classes instead */
    o.inner.online.pass = PT_PASS_SEQUENTIAL;
    o.inner.progress = NULL;
    o.inner.epoch_hook = NULL;
    o.inner.resume = NULL;
    o.voted = p->path == PT_PATH_ONLINE && p->variant == PT_VARIANT_VOTED;
    /* a share of a distributed run trains each class on the binary path, which mixes its
     * weights (online: each class's own iterative parameter mixing) or sums its gradient
     * (batch) over the ranks */
    o.lockstep = p->path == PT_PATH_ONLINE && !o.voted && ds->shard_count < 2;
    o.reps = calloc(K, sizeof *o.reps);
    o.part = calloc(K, sizeof *o.part);
    o.states = states_from(p, K);
    if (o.voted) {
        /* the classes' vectors live at once: each gets its share of the budget, so the sum
         * stays within it whatever the order the classes run in; the classes' binary models
         * are the model's */
        o.inner.mem_budget_bytes = p->mem_budget_bytes / K;
        o.cls = m->sub = calloc(K, sizeof *m->sub);
    } else if (!o.lockstep) {
        o.cls = calloc(K, sizeof *o.cls);
    }
    /* the per-class +1/-1 labels: only the path that trains each class on its own view needs them */
    if (!o.lockstep) o.ys = pt_alloc(K * (ds->n ? ds->n : 1) * sizeof(float), "one-vs-rest labels");
    pt_status s = PT_OK;
    if (!o.reps || !o.part || !o.states || (!o.lockstep && (!o.ys || !o.cls))) {
        s = pt_fail(PT_ERR_NOMEM, "cannot allocate %zu one-vs-rest problems", K);
        goto out;
    }
    /* with an epoch hook or a progress callback, one epoch a round; else one round */
    bool rounds = p->epoch_hook || p->progress;
    int E = p->epochs;
    for (size_t c = 0; rounds && c < K; c++)
        if (problem_epochs(o.states[c]) < E) E = problem_epochs(o.states[c]) + 1;
    double t0 = pt_now();
    for (;; E++) {
        if ((s = ovr_round(&o, E)) != PT_OK) break;
        bool all_done = true;
        for (size_t c = 0; c < K; c++) all_done &= problem_epochs(o.states[c]) >= p->epochs;
        round_hook hook = {.m = m, .states = o.states, .K = K};
        if (!rounds || after_round(p, &hook, o.reps, E, t0, &s) || all_done ||
            E >= p->epochs)
            break;
    }
    if (s == PT_OK || s == PT_ERR_INTERRUPTED) {
        pt_status ms = merge_reports(o.reps, K, r);
        if (ms != PT_OK) s = ms;
        /* where each class stands */
        m->states = o.states;
        m->nstates = K;
        o.states = NULL;
    }
out:
    for (size_t c = 0; c < K; c++) {
        if (o.reps) pt_train_report_clear(&o.reps[c]);
        if (o.part) pt_train_report_clear(&o.part[c]);
        if (o.cls && !o.voted) pt_model_free(o.cls[c]);
    }
    free(o.reps);
    free(o.part);
    if (!o.voted) free(o.cls);
    states_free(o.states, K);
    pt_free(o.ys);
    return s;
}

/* ------------------------------------------------------------------- kernel path */

/* One-vs-rest on the kernel path: one binary kernel model per class, trained in turn on one
 * kernel storage (each class uses every thread for its rows; the Gram is built once). */
typedef struct class_views {
    const pt_dataset *ds;
    float *y;
    double binary[2]; /* a class model's labels: 0 (the rest) and 1 (the class) */
} class_views;

/* Class c's view (its labels into y, or the run's buffer when y is NULL). */
static void class_view(void *user, size_t c, float *y, pt_dataset *view)
{
    class_views *cv = user;
    pt_dataset_binary_view(cv->ds, c, y ? y : cv->y, view);
    view->class_values = cv->binary;
}

/* The kernel one-vs-rest run between rounds: the epoch hook sees the classes' models. */
typedef struct kernel_ovr {
    const pt_train_params *p;
    class_views *cv;
    pt_model *m;
    pt_train_state **states;
    pt_train_report *reps;
    double t0;
    pt_status s;
} kernel_ovr;

/* Every class's model as its state stands (they replace those of m). */
static pt_status class_models(const kernel_ovr *ko)
{
    pt_model *m = ko->m;
    pt_dataset view;
    class_view(ko->cv, 0, NULL, &view); /* a class model's meta does not depend on the class */
    for (size_t c = 0; c < m->nclass; c++) {
        pt_dataset vc;
        class_view(ko->cv, c, NULL, &vc);
        pt_model *mc = NULL;
        PT_TRY(pt_kernel_model_from_state(&vc, ko->p, ko->states[c], &mc));
        pt_model_set_meta(mc, &view, ko->p);
        mc->epochs_run = ko->states[c]->epochs_done;
        pt_model_free(m->sub[c]);
        m->sub[c] = mc;
    }
    return PT_OK;
}

static pt_status kernel_models(void *user) { return class_models(user); }

static int kernel_round(void *user, int epoch)
{
    kernel_ovr *ko = user;
    round_hook hook = {.m = ko->m, .states = ko->states, .K = ko->m->nclass,
                       .before_hook = kernel_models, .user = ko};
    return after_round(ko->p, &hook, ko->reps, epoch, ko->t0, &ko->s);
}

/* A distributed run with the whole data on every rank (pt_dataset_read_replicated): rank r
 * trains the classes c with c mod P = r (one kernel storage for them), then every class's
 * model and report go from its rank to all, so every rank holds what one process trains: the
 * model is the same, byte for byte. */
typedef struct split_views {
    class_views *cv;
    const size_t *mine; /* the classes of this rank */
} split_views;

static void split_view(void *user, size_t i, float *y, pt_dataset *view)
{
    split_views *sv = user;
    class_view(sv->cv, sv->mine[i], y, view);
}

/* Class c's model and report, from its rank to every rank. */
static pt_status share_class(kernel_ovr *ko, size_t c, int owner)
{
    pt_model *m = ko->m;
    pt_train_report *q = &ko->reps[c];
    void *buf = NULL;
    size_t len = 0;
    pt_status s = PT_OK;
    if (owner == pt_dist_rank()) s = pt_model_save_buffer(m->sub[c], &buf, &len);
    uint64_t head[5] = {s != PT_OK, len, (uint64_t)q->epochs_run, q->updates,
                        (uint64_t)q->converged};
    pt_dist_bcast(head, sizeof head, owner);
    if (head[0]) {
        pt_buffer_free(buf);
        return s != PT_OK ? s : pt_fail(PT_ERR_NOMEM, "rank %d could not send class %g", owner,
                                        ko->cv->ds->class_values[c]);
    }
    len = (size_t)head[1];
    uint64_t *mist = malloc((head[2] ? head[2] : 1) * sizeof *mist);
    if (!buf && !(buf = malloc(len ? len : 1))) s = PT_ERR_NOMEM;
    if (!mist) s = PT_ERR_NOMEM;
    /* every rank takes part in both broadcasts whatever failed: the exit is agreed after */
    char dummy;
    pt_dist_bcast(s == PT_OK ? buf : &dummy, s == PT_OK ? len : 0, owner);
    for (size_t e = 0; mist && owner == pt_dist_rank() && e < head[2]; e++)
        mist[e] = q->mistakes_per_epoch[e];
    if (mist) pt_dist_bcast(mist, head[2] * sizeof *mist, owner);
    if (s == PT_OK && owner != pt_dist_rank()) {
        pt_model *mc = NULL;
        s = pt_model_load_buffer(buf, len, "a class model", &mc);
        if (s == PT_OK) {
            pt_model_free(m->sub[c]);
            m->sub[c] = mc;
            for (uint64_t e = 0; e < head[2] && s == PT_OK; e++)
                s = pt_report_push_epoch(q, (size_t)mist[e], NAN);
            q->updates = (size_t)head[3];
            q->converged = (int)head[4];
        }
    }
    if (s == PT_ERR_NOMEM && !pt_last_error()[0]) pt_fail(s, "cannot receive class %zu", c);
    free(mist);
    pt_buffer_free(buf);
    return s;
}

/* The split run: this rank's classes trained, then every class shared. */
static pt_status ovr_kernel_split(kernel_ovr *ko, const pt_dataset *ds,
                                  const pt_train_params *inner, const pt_kernels *k)
{
    const size_t K = ds->nclass, P = (size_t)pt_dist_size(), me = (size_t)pt_dist_rank();
    size_t *mine = malloc(K * sizeof *mine), Km = 0;
    pt_train_state **st = calloc(K, sizeof *st);
    pt_train_report *reps = calloc(K, sizeof *reps);
    pt_status s = mine && st && reps ? PT_OK : pt_fail(PT_ERR_NOMEM, "cannot split %zu classes", K);
    for (size_t c = me; s == PT_OK && c < K; c += P) mine[Km++] = c;
    size_t failed = SIZE_MAX;
    split_views sv = {ko->cv, mine};
    if (s == PT_OK && Km)
        s = pt_train_kernel_problems(ds, Km, split_view, &sv, inner, k, st, reps, NULL, NULL,
                                     &failed, NULL);
    if (s != PT_OK && failed < Km) pt_fail_prefix(s, "class %g", ds->class_values[mine[failed]]);
    for (size_t i = 0; s == PT_OK && i < Km; i++) {
        ko->states[mine[i]] = st[i];
        st[i] = NULL;
        ko->reps[mine[i]] = reps[i];
        memset(&reps[i], 0, sizeof reps[i]);
    }
    /* this rank's class models, built as class_models builds each */
    pt_dataset view;
    class_view(ko->cv, 0, NULL, &view);
    for (size_t i = 0; s == PT_OK && i < Km; i++) {
        size_t c = mine[i];
        pt_dataset vc;
        class_view(ko->cv, c, NULL, &vc);
        pt_model *mc = NULL;
        s = pt_kernel_model_from_state(&vc, ko->p, ko->states[c], &mc);
        if (s == PT_OK) {
            pt_model_set_meta(mc, &view, ko->p);
            mc->epochs_run = ko->states[c]->epochs_done;
            ko->m->sub[c] = mc;
        }
    }
    /* a rank that failed (or was stopped) fails every rank before anything is shared */
    int bad = pt_dist_first_failed(s != PT_OK);
    if (bad >= 0 && s == PT_OK)
        s = pt_fail(PT_ERR_INTERRUPTED, "rank %d of %zu did not train its classes", bad, P);
    for (size_t c = 0; bad < 0 && c < K; c++) {
        pt_status cs = share_class(ko, c, (int)(c % P));
        if (s == PT_OK) s = cs;
    }
    if (bad < 0 && pt_dist_first_failed(s != PT_OK) >= 0 && s == PT_OK)
        s = pt_fail(PT_ERR_NOMEM, "another rank could not receive the class models");
    for (size_t i = 0; reps && i < Km; i++) pt_train_report_clear(&reps[i]);
    states_free(st, K);
    free(reps);
    free(mine);
    return s;
}

pt_status pt_train_ovr_kernel(const pt_dataset *ds, const pt_train_params *p,
                              const pt_kernels *k, pt_model **out, pt_train_report *r)
{
    const size_t K = ds->nclass;
    pt_model *m = calloc(1, sizeof *m);
    pt_train_report *reps = calloc(K, sizeof *reps);
    pt_train_state **states = states_from(p, K);
    float *y = pt_alloc((ds->n ? ds->n : 1) * sizeof(float), "one-vs-rest labels");
    pt_status s = m && reps && states && y && (m->sub = calloc(K, sizeof *m->sub)) &&
                          (m->labels = malloc(K * sizeof(double)))
                      ? PT_OK
                      : pt_fail(PT_ERR_NOMEM, "cannot allocate %zu one-vs-rest problems", K);
    if (s == PT_OK) {
        m->d = ds->d;
        m->nclass = K;
        memcpy(m->labels, ds->class_values, K * sizeof(double));
        pt_model_set_meta(m, ds, p);
        pt_train_params inner = *p;
        inner.progress = NULL;
        inner.epoch_hook = NULL;
        inner.resume = NULL;
        class_views cv = {ds, y, {0.0, 1.0}};
        kernel_ovr ko = {.p = p, .cv = &cv, .m = m, .states = states, .reps = reps,
                         .t0 = pt_now(), .s = PT_OK};
        size_t failed = SIZE_MAX, correct = SIZE_MAX;
        bool rounds = p->epoch_hook || p->progress;
        const bool split = ds->replicated && pt_dist_size() > 1;
        if (split) {
            /* the classes split across the ranks: no rounds (each rank runs its own) */
            s = ovr_kernel_split(&ko, ds, &inner, k);
            if (s == PT_OK) s = merge_reports(reps, K, r);
            if (s != PT_OK) s = s == PT_ERR_INTERRUPTED ? PT_ERR_IO : s; /* no partial model */
        } else {
            s = pt_train_kernel_problems(ds, K, class_view, &cv, &inner, k, states, reps,
                                         rounds ? kernel_round : NULL, &ko, &failed,
                                         &correct);
        }
        if (s == PT_OK) s = ko.s; /* the progress callback stopped it, or a model failed */
        if (s != PT_OK && s != PT_ERR_INTERRUPTED && failed < K)
            pt_fail_prefix(s, "class %g", ds->class_values[failed]);
        if ((s == PT_OK || s == PT_ERR_INTERRUPTED) && !split) {
            pt_status ms = class_models(&ko);
            if (ms == PT_OK) ms = merge_reports(reps, K, r);
            if (ms != PT_OK) s = ms;
        }
        /* the training rows' predictions, from the kernel rows training kept */
        if (s == PT_OK && correct != SIZE_MAX) {
            r->train_scored = 1;
            r->train_correct = correct;
        }
    }
    for (size_t c = 0; reps && c < K; c++) pt_train_report_clear(&reps[c]);
    free(reps);
    pt_free(y);
    if (s != PT_OK && s != PT_ERR_INTERRUPTED) {
        states_free(states, K);
        pt_model_free(m);
        return s;
    }
    /* an interrupted run keeps every class's model and where it stands */
    m->states = states;
    m->nstates = K;
    *out = m;
    return s;
}
