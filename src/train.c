/* layers: reads rows by form until ported to data/rows.h */
/* pt_train, the one dispatcher: a run checked against its data (the run it resumes, the model
 * it starts from), the linear model made for the online and batch paths, expansions trained
 * on, the path (or multiclass training) called, the report finished. */
#include <stdlib.h>
#include <string.h>

#include "features/expand.h"
#include "features/kernel_expr.h"
#include "features/kernel_spec.h"
#include "multiclass/multiclass.h"

/* The gamma a run uses: a rule (PT_GAMMA_SCALE, PT_GAMMA_AUTO) resolved from the data on the
 * kernel path, and 1 (unused) elsewhere. */
static float run_gamma(const pt_dataset *ds, const pt_train_params *p)
{
    if (!pt_gamma_is_rule(p->kernel.gamma)) return p->kernel.gamma;
    return p->path == PT_PATH_KERNEL ? pt_gamma_resolve(p->kernel.gamma, ds) : 1.0f;
}

/* The kernel expression a run uses (p->kernel.kind PT_KERNEL_EXPR): its canonical text with the
 * gamma rules resolved from the data, into out (the size of kernel.expr). */
static pt_status run_expr(const pt_dataset *ds, const pt_train_params *p, char *out)
{
    pt_kexpr e;
    PT_TRY(pt_kexpr_parse(p->kernel.expr, &e));
    pt_kexpr_resolve(&e, ds);
    return pt_kexpr_format(&e, out, sizeof p->kernel.expr);
}

/* The run recorded in p->resume must be one of this data with these parameters (its epochs
 * may grow), or the result would not be the uninterrupted run's. */
static pt_status check_resume(const pt_dataset *ds, const pt_train_params *p)
{
    const pt_model *m = p->resume;
    const pt_train_params *q = &m->params;
    if (!m->nstates)
        return pt_fail(PT_ERR_INVALID, "the model to resume records no run in progress: it is "
                       "final (only interrupted runs and checkpoints can be resumed)");
    bool ovr = ds->nclass > 2 && p->multiclass == PT_MULTI_OVR;
    size_t d = p->expand.kind != PT_EXPAND_NONE ? m->expand_d_in : m->d;
    if (m->path != p->path || m->variant != p->variant || m->nclass != ds->nclass ||
        (ds->nclass > 2 && m->multiclass != p->multiclass) || d != ds->d ||
        m->nstates != (ovr ? ds->nclass : 1) || q->expand.kind != p->expand.kind)
        return pt_fail(PT_ERR_FORMAT, "the run to resume (%s path, %s, %zu classes, %zu features) "
                       "is not one of this data (%zu classes, %zu features) on the %s path, %s",
                       pt_path_name(m->path), pt_variant_name(m->variant), m->nclass, d,
                       ds->nclass, ds->d, pt_path_name(p->path), pt_variant_name(p->variant));
    /* a share of a distributed run: its state counts the rows of all shares */
    const size_t rows = ds->shard_count ? ds->n_total : ds->n;
    for (size_t k = 0; k < m->nstates; k++) {
        const pt_train_state *st = m->states[k];
        if (st->n != rows)
            return pt_fail(PT_ERR_FORMAT, "the run to resume was on %zu rows; this data has %zu",
                           st->n, rows);
        if (st->epochs_done > p->epochs)
            return pt_fail(PT_ERR_INVALID, "the run to resume has done %d epochs, more than the "
                           "%d asked for", st->epochs_done, p->epochs);
    }
    /* the parameters every step depends on */
    char expr[sizeof p->kernel.expr] = "";
    if (p->kernel.kind == PT_KERNEL_EXPR) PT_TRY(run_expr(ds, p, expr));
    const char *other = p->bias != m->bias ? "bias"
                        : p->eta != q->eta ? "eta"
                        : p->margin != q->margin ? "margin"
                        : p->shuffle != q->shuffle ? "shuffle"
                        : p->seed != q->seed ? "seed"
                        : p->batch.loss != q->batch.loss ? "loss"
                        : p->batch.lambda != q->batch.lambda ? "lambda"
                        : p->batch.schedule != q->batch.schedule ? "schedule"
                        : p->batch.size != q->batch.size ? "batch size"
                        : p->batch.tol != q->batch.tol ? "tol"
                        : p->batch.average_iterates != q->batch.average_iterates ? "average of iterates"
                        : p->kernel.kind != q->kernel.kind ? "kernel"
                        : p->kernel.degree != q->kernel.degree ? "degree"
                        : run_gamma(ds, p) != q->kernel.gamma ? "gamma"
                        : p->kernel.coef0 != q->kernel.coef0 ? "coef0"
                        : p->kernel.budget != q->kernel.budget ? "budget"
                        : p->online.voted_max_vectors != q->online.voted_max_vectors ? "voted_max_vectors"
                        : strcmp(expr, p->kernel.kind == PT_KERNEL_EXPR ? q->kernel.expr : "") != 0
                            ? "kernel expression"
                        : p->expand.kind != PT_EXPAND_NONE && (p->expand.degree != q->expand.degree ||
                                  p->expand.coef0 != q->expand.coef0 ||
                                  p->expand.rff_dim != q->expand.rff_dim ||
                                  p->expand.gamma != q->expand.gamma ||
                                  p->expand.seed != q->expand.seed ||
                                  p->expand.hash_bits != q->expand.hash_bits) ? "expansion"
                        : NULL;
    if (other)
        return pt_fail(PT_ERR_INVALID, "the run to resume was trained with another %s (take its "
                       "parameters with pt_model_get_params)", other);
    return PT_OK;
}

static bool same_expansion(const pt_expand_params *a, const pt_expand_params *b)
{
    if (a->kind != b->kind) return false;
    switch (a->kind) {
    case PT_EXPAND_POLY:
        return a->degree == b->degree && a->coef0 == b->coef0 && a->hash_bits == b->hash_bits &&
               (!a->hash_bits || a->seed == b->seed);
    case PT_EXPAND_RFF: return a->rff_dim == b->rff_dim && a->gamma == b->gamma && a->seed == b->seed;
    default: return true;
    }
}

/* p->init against the data and the run, before anything is trained. */
static pt_status check_init(const pt_dataset *ds, const pt_train_params *p)
{
    const pt_model *m = p->init;
    if (!m) return PT_OK;
    size_t d = ds->d;
    if (p->expand.kind != PT_EXPAND_NONE) d = pt_expand_dim(&p->expand, ds->d);
    if (!pt_model_weights(m, NULL) && !m->W)
        return pt_fail(PT_ERR_INVALID, "the init model is a %s model, with no weight vector to start "
                       "from (a linear model of the online or batch path has one)", pt_path_name(m->path));
    if (!same_expansion(&m->params.expand, &p->expand))
        return pt_fail(PT_ERR_INVALID, "the init model (pt_train_params.init) was trained %s, this run %s",
                       m->params.expand.kind == PT_EXPAND_NONE ? "without an expansion" : "on another expansion",
                       p->expand.kind == PT_EXPAND_NONE ? "has none" : "expands (pt_train_params.expand)");
    if (m->d != d)
        return pt_fail(PT_ERR_INVALID, "the init model has %zu features, the run trains on %zu", m->d, d);
    if (m->nclass != ds->nclass)
        return pt_fail(PT_ERR_INVALID, "the init model has %zu classes, the data %zu", m->nclass,
                       ds->nclass);
    if ((m->label_names != NULL) != (ds->class_names != NULL))
        return pt_fail(PT_ERR_INVALID, "the init model's labels are %s, the data's %s",
                       m->label_names ? "text" : "numbers", ds->class_names ? "text" : "numbers");
    for (size_t c = 0; c < ds->nclass; c++) {
        if (m->label_names && strcmp(m->label_names[c], ds->class_names[c]) != 0)
            return pt_fail(PT_ERR_INVALID, "the init model's class %zu is '%s', the data's '%s'", c,
                           m->label_names[c], ds->class_names[c]);
        if (!m->label_names && pt_model_class_value(m, c) != ds->class_values[c])
            return pt_fail(PT_ERR_INVALID, "the init model's class %zu is %g, the data's %g", c,
                           pt_model_class_value(m, c), ds->class_values[c]);
    }
    if ((m->bias != 0) != (p->bias != 0))
        return pt_fail(PT_ERR_INVALID, "the init model was trained with the bias %s, this run has it %s",
                       m->bias ? "on" : "off", p->bias ? "on" : "off");
    return PT_OK;
}

/* pt_train for p->expand.kind != NONE: online streams the expansion through
 * pt_train_online_mapped, batch materialises it when it fits p->mem_budget_bytes. The model
 * has d = the expanded dimension and remembers the expansion (params.expand, expand_d_in). */
static pt_status train_expanded(const pt_dataset *ds, const pt_train_params *p, const pt_kernels *k,
                                pt_model **out, pt_train_report *r)
{
    *out = NULL;
    if (p->path == PT_PATH_KERNEL)
        return pt_fail(PT_ERR_INVALID, "pt_train_params.expand works with the online and batch "
                       "paths; the kernel path computes its kernel itself (pt_train_params.kernel "
                       "PT_KERNEL_POLY or PT_KERNEL_RBF)");
    if (ds->nclass != 2)
        return pt_fail(PT_ERR_UNSUPPORTED, "pt_train_params.expand trains two-class models (the "
                       "data has %zu classes)", ds->nclass);
    pt_expander *e;
    PT_TRY(pt_expander_create(&p->expand, ds->d, k, &e));
    const size_t dim = pt_expander_d_out(e);
    /* weights (and the averaged variant's sum, or the batch path's gradient) */
    size_t wbytes = pt_dense_bytes(2, dim);
    if (wbytes > p->mem_budget_bytes) {
        pt_expander_free(e);
        return pt_fail(PT_ERR_LIMIT, "the expanded model has %zu weights: %zu bytes, over the memory "
                       "budget of %zu bytes; raise pt_train_params.mem_budget_bytes", dim, wbytes,
                       p->mem_budget_bytes);
    }
    pt_model *m = pt_model_alloc_linear(dim);
    pt_status s = m ? PT_OK : PT_ERR_NOMEM;
    if (m) {
        /* before training, so an epoch hook can score with the model as it stands */
        pt_model_set_meta(m, ds, p);
        m->expand_d_in = ds->d;
        s = pt_model_start(m, p);
    }
    /* sparse rows: the expansion materialised, sparse too (its rows hold only the products of
     * each row's non-zeros), then trained as any sparse data */
    const bool stream = p->path == PT_PATH_ONLINE && ds->layout == PT_LAYOUT_DENSE;
    if (s == PT_OK && stream) {
        /* streamed: each row expanded into one reused buffer, never the whole matrix */
        pt_row_map map = pt_expander_row_map(e);
        s = pt_train_online_mapped(ds, &map, p, k, m, r);
    } else if (s == PT_OK) {
        bool own = p->mem_budget_bytes < p->expand.mem_budget_bytes;
        size_t budget = own ? p->mem_budget_bytes : p->expand.mem_budget_bytes;
        pt_dataset *x = NULL;
        s = pt_expand_with(ds, e, budget,
                           own ? "pt_train_params.mem_budget_bytes"
                               : "pt_train_params.expand.mem_budget_bytes", &x);
        if (s == PT_ERR_LIMIT)
            pt_fail_prefix(s, "%s",
                           p->path == PT_PATH_BATCH
                               ? "the batch path needs the expansion materialised (the online "
                                 "path streams dense rows)"
                               : "sparse rows are expanded whole before the online path");
        if (s == PT_OK)
            s = p->path == PT_PATH_BATCH ? pt_train_batch(x, p, k, m, r)
                                         : pt_train_online(x, p, k, m, r);
        pt_dataset_free(x);
    }
    pt_expander_free(e);
    if (s != PT_OK && s != PT_ERR_INTERRUPTED) {
        pt_model_free(m);
        return s;
    }
    *out = m;
    return s;
}

/* The online and batch paths, one-vs-rest over them and the multiclass perceptron: the linear
 * model is allocated here, its metadata set and its warm start applied, then trained. *out is
 * the model whatever the status (NULL when it could not be allocated). */
static pt_status train_linear(const pt_dataset *ds, const pt_train_params *p, const pt_kernels *k,
                              pt_model **out, pt_train_report *r)
{
    const bool multi = ds->nclass > 2;
    pt_model *m = multi ? pt_model_alloc_multiclass(ds->d, ds->nclass, ds->class_values)
                        : pt_model_alloc_linear(ds->d);
    *out = m;
    if (!m) return PT_ERR_NOMEM;
    pt_model_set_meta(m, ds, p);
    PT_TRY(pt_model_start(m, p));
    if (multi)
        return p->multiclass == PT_MULTI_DIRECT ? pt_train_direct(ds, p, k, m, r)
                                                : pt_train_ovr(ds, p, k, m, r);
    return p->path == PT_PATH_BATCH ? pt_train_batch(ds, p, k, m, r)
                                    : pt_train_online(ds, p, k, m, r);
}

/* Whether a run to resume stopped inside an epoch (any class of it). */
static bool stopped_inside(const pt_model *m)
{
    for (size_t k = 0; k < m->nstates; k++)
        if (m->states[k]->pos) return true;
    return false;
}

/* A share of a distributed run on more than one rank (pt_dataset_read_shard): what the
 * distributed paths cover. Every rank refuses the same run, from the same parameters and the
 * agreed classes, before any communication. */
static pt_status check_share(const pt_dataset *ds, const pt_train_params *p)
{
    if (ds->shard_count < 2) return PT_OK;
    const char *no = p->path == PT_PATH_KERNEL ? "the kernel path on shares (read the data "
                                                 "whole on every rank: one-vs-rest's classes "
                                                 "are then split across the ranks)"
                     : p->variant == PT_VARIANT_VOTED ? "the voted variant"
                     : p->expand.kind != PT_EXPAND_NONE ? "a feature expansion"
                     : p->scale != PT_SCALE_NONE ? "feature scaling (fitted on one rank's rows)"
                     : p->resume && p->path == PT_PATH_ONLINE && stopped_inside(p->resume)
                         ? "resuming a run stopped inside an epoch (its position is one "
                           "process's sample order: resume it in one process)"
                     : p->path == PT_PATH_BATCH && p->batch.size && p->batch.size < ds->shard_count
                         ? "mini-batches of fewer rows than ranks (each step takes its rows "
                           "from every rank: pt_train_params.batch_size at least the ranks)"
                         : NULL;
    if (no)
        return pt_fail(PT_ERR_UNSUPPORTED, "a distributed run (%zu ranks) does not support %s; "
                       "it trains the online path (classic or averaged, by iterative parameter "
                       "mixing; one-vs-rest or the multiclass perceptron) or the batch path "
                       "(full batch or mini-batches, each step's gradient summed over the "
                       "ranks)",
                       ds->shard_count, no);
    return PT_OK;
}

pt_status pt_train_check(const pt_dataset *ds, const pt_train_params *p)
{
    pt_clear_error();
    PT_TRY(pt_train_params_check(p));
    PT_TRY(check_share(ds, p));
    if (ds->nclass < 2)
        return pt_fail(PT_ERR_LABELS, "training needs two classes; the data has %zu (label %g)",
                       ds->nclass, ds->nclass ? ds->class_values[0] : 0.0);
    if (ds->nclass > 2 && p->multiclass == PT_MULTI_DIRECT && p->path != PT_PATH_ONLINE)
        return pt_fail(PT_ERR_LABELS,
                       "the data has %zu classes: the multiclass perceptron runs on the online "
                       "path; the %s path trains one-vs-rest (pt_train_params.multiclass "
                       "PT_MULTI_OVR)",
                       ds->nclass, pt_path_name(p->path));
    if (p->path == PT_PATH_KERNEL && pt_dataset_streamed(ds)) {
        size_t bytes = ds->layout == PT_LAYOUT_SPARSE
                           ? pt_sparse_bytes(ds->n, (size_t)ds->rowptr[ds->n])
                           : pt_dense_bytes(ds->n, ds->d);
        return pt_fail(PT_ERR_LIMIT, "the kernel path needs every row at once (its Gram, or "
                       "kernel rows over all of them), and the %.1f MiB matrix is streamed from "
                       "its file (it exceeded the reader's memory budget): read it with "
                       "pt_read_options.mem_budget_bytes above that, or train on the online or "
                       "batch path, which stream", bytes / 1048576.0);
    }
    if (p->shuffle && p->online.shuffle_chunk && pt_dataset_streamed(ds) &&
        ds->layout != PT_LAYOUT_SPARSE) {
        /* a walker holds its chunk and the next one, read ahead */
        size_t bytes = ds->stride * sizeof(float), held;
        if (!pt_mul_ok(p->online.shuffle_chunk, 2 * bytes, &held) || held > p->mem_budget_bytes)
            return pt_fail(PT_ERR_LIMIT, "pt_train_params.shuffle_chunk of %zu rows: a streamed "
                           "run holds two chunks (%.1f MiB), over the memory budget of %.1f MiB; "
                           "lower pt_train_params.shuffle_chunk or raise "
                           "pt_train_params.mem_budget_bytes", p->online.shuffle_chunk,
                           (double)p->online.shuffle_chunk * 2.0 * (double)bytes / 1048576.0,
                           p->mem_budget_bytes / 1048576.0);
    }
    if (p->class_weight && p->class_weight_n != ds->nclass)
        return pt_fail(PT_ERR_INVALID, "pt_train_params.class_weight has %zu weights; the data "
                       "has %zu classes", p->class_weight_n, ds->nclass);
    if (p->resume) PT_TRY(check_resume(ds, p));
    return check_init(ds, p);
}

/* Training on scaled features: the epoch hook's models carry the run's scaling while the hook
 * sees them, so that what it evaluates or saves scores raw rows as the final model will. */
typedef struct scaled_hook {
    pt_scaling *scale;
    pt_epoch_fn hook;
    void *user;
} scaled_hook;

static int scaled_epoch(const pt_model *m, int epoch, size_t mistakes, void *user)
{
    const scaled_hook *h = user;
    pt_model *mm = (pt_model *)m; /* the path's snapshot, lent for the call */
    mm->scale = h->scale;
    int r = h->hook(m, epoch, mistakes, h->user);
    mm->scale = NULL;
    return r;
}

static pt_status train_dispatch(const pt_dataset *ds, const pt_train_params *p, pt_model **model,
                                pt_train_report *report, const atomic_int *fault);

static pt_status train_scaled(const pt_dataset *ds, const pt_train_params *p, pt_model **model,
                              pt_train_report *report, const atomic_int *fault);

/* Whether a run of p reads the rows of a compact dataset directly: the online path (every
 * variant, one-vs-rest, the multiclass perceptron, over an expansion's rows too), the batch
 * path (fused and gemv; an expansion materialised from the compact rows), and scaling, whose
 * copy is float32 already (pt_scaling_apply widens row by row: one copy, not two). The kernel
 * path trains on a float32 copy (its Gram and kernel rows are compute bound and read rows
 * many times over), made within p->mem_budget_bytes. */
static bool reads_compact(const pt_train_params *p)
{
    return p->scale != PT_SCALE_NONE || p->path != PT_PATH_KERNEL;
}

/* pt_train with fault the damage mark of ds's mapping (NULL: none), which stops the run. */
static pt_status train_data(const pt_dataset *ds, const pt_train_params *p, pt_model **model,
                            pt_train_report *report, const atomic_int *fault)
{
    if (ds->dtype == PT_DTYPE_F32 || reads_compact(p) || pt_train_params_check(p) != PT_OK)
        return train_scaled(ds, p, model, report, fault);
    pt_clear_error();
    *model = NULL;
    if (report) memset(report, 0, sizeof *report);
    pt_dataset *wide;
    const pt_dataset *use;
    PT_TRY(pt_dataset_as_f32(ds, p->mem_budget_bytes, "the kernel path", &wide, &use));
    pt_status s = train_scaled(use, p, model, report, fault);
    pt_dataset_free(wide);
    return s;
}

/* The run on a dataset mapped from a file (ds->guard), which may shrink under it (another
 * process truncates it): the part that went reads as zeros, and the run stops at once (its
 * stop token polls the mark). Whatever it computed from the zeros is dropped: the model handed
 * back is the one kept at the last epoch end the data was whole at (epoch_keep.c), with
 * PT_ERR_IO naming the file and that epoch. */
static pt_status train_guarded(const pt_dataset *ds, const pt_train_params *p, pt_model **model,
                               pt_train_report *report)
{
    *model = NULL;
    if (report) memset(report, 0, sizeof *report);
    if (pt_guard_damaged(ds->guard)) return pt_guard_check(ds->guard); /* (shrank before) */
    pt_train_params q = *p;
    pt_epoch_keep keep;
    pt_epoch_keep_start(&keep, ds->guard, &q);
    pt_status s = train_data(ds, &q, model, report, pt_guard_flag(ds->guard));
    if (pt_guard_damaged(ds->guard)) {
        pt_model_free(*model);
        *model = pt_epoch_keep_take(&keep);
        if (*model)
            s = pt_fail(PT_ERR_IO, "%s: file shrank while training read it (truncated or "
                        "rewritten by another process?): the run stopped, and what it computed "
                        "from the rows that went (read as zeros) is dropped; the model handed "
                        "back is that of epoch %d, the last read whole (resumable, as a "
                        "checkpoint of it)", pt_guard_path(ds->guard), (*model)->epochs_run);
        else
            s = pt_fail(PT_ERR_IO, "%s: file shrank while training read it (truncated or "
                        "rewritten by another process?), before any epoch was read whole: no "
                        "model", pt_guard_path(ds->guard));
    }
    pt_epoch_keep_end(&keep);
    return s;
}

pt_status pt_train(const pt_dataset *ds, const pt_train_params *p, pt_model **model,
                   pt_train_report *report)
{
    /* (p is read past its struct_size only once that is checked) */
    if (!ds->guard || pt_train_params_check(p) != PT_OK)
        return train_data(ds, p, model, report, NULL);
    return train_guarded(ds, p, model, report);
}

static pt_status train_scaled(const pt_dataset *ds, const pt_train_params *p, pt_model **model,
                              pt_train_report *report, const atomic_int *fault)
{
    if (p->scale == PT_SCALE_NONE || pt_train_params_check(p) != PT_OK || ds->shard_count > 1)
        return train_dispatch(ds, p, model, report, fault);
    /* fit the scaling on the training rows, train on the scaled copy, keep it in the model */
    pt_clear_error();
    *model = NULL;
    if (report) memset(report, 0, sizeof *report);
    pt_scaling *sc = NULL;
    pt_dataset *scaled = NULL;
    PT_TRY(pt_require_dense(ds, "training with pt_train_params.scale (scaling moves zeros)"));
    pt_status s = pt_scaling_fit(ds, p->scale, &sc);
    if (s == PT_OK) s = pt_scaling_apply(sc, ds, p->mem_budget_bytes, &scaled);
    if (s != PT_OK) {
        pt_scaling_free(sc);
        return s;
    }
    pt_train_params q = *p;
    scaled_hook h = {sc, p->epoch_hook, p->epoch_user};
    if (p->epoch_hook) {
        q.epoch_hook = scaled_epoch;
        q.epoch_user = &h;
    }
    s = train_dispatch(scaled, &q, model, report, fault);
    if (*model) {
        (*model)->params.epoch_hook = NULL;
        (*model)->params.epoch_user = NULL;
        (*model)->scale = sc;
        sc = NULL;
    }
    pt_scaling_free(sc);
    pt_dataset_free(scaled);
    return s;
}

static pt_status train_dispatch(const pt_dataset *ds, const pt_train_params *p, pt_model **model,
                                pt_train_report *report, const atomic_int *fault)
{
    pt_clear_error();
    *model = NULL;
    pt_train_report local;
    pt_train_report *r = report ? report : &local;
    memset(r, 0, sizeof *r);
    PT_TRY(pt_train_check(ds, p));
    const pt_kernels *k;
    PT_TRY(pt_kernels_get(p->isa, &k));
    r->isa = k->isa;
    r->threads = pt_threads_resolve(p->threads);

    /* the paths see this call's own stop token, and run with its thread count */
    pt_stop stop;
    pt_stop_arm(&stop, p->stop);
    stop.fault = fault;
    pt_train_params call = *p;
    call.stop = &stop;
    call.kernel.gamma = run_gamma(ds, p); /* the model records the number used */
    /* the expression with the numbers used */
    if (p->kernel.kind == PT_KERNEL_EXPR) PT_TRY(run_expr(ds, p, call.kernel.expr));
    pt_thread_counts saved = pt_threads_enter(r->threads);

    pt_status s;
    pt_model *m = NULL;
    double t0 = pt_now(), c0 = pt_dist_comm_seconds();
    if (p->expand.kind != PT_EXPAND_NONE)
        s = train_expanded(ds, &call, k, &m, r);
    else if (p->path == PT_PATH_KERNEL)
        s = ds->nclass > 2 ? pt_train_ovr_kernel(ds, &call, k, &m, r)
                           : pt_train_kernel(ds, &call, k, &m, r);
    else
        s = train_linear(ds, &call, k, &m, r);
    pt_threads_leave(saved);
    r->train_seconds = pt_now() - t0;
    /* Epoch end times into durations, last to first. An epoch begins where the one before it
     * ended, or at t0. */
    double *sec = r->seconds_per_epoch;
    for (int e = sec ? r->epochs_run - r->epochs_before - 1 : -1; e >= 0; e--) {
        double begin = e > 0 ? sec[e - 1] : t0;
        sec[e] = sec[e] > begin ? sec[e] - begin : 0.0;
    }
    double *comm = r->comm_seconds_per_epoch; /* the same for the communication seconds */
    for (int e = comm ? r->epochs_run - r->epochs_before - 1 : -1; e >= 0; e--)
        comm[e] -= e > 0 ? comm[e - 1] : c0;
    if (m) {
        pt_model_set_meta(m, ds, &call);
        m->epochs_run = r->epochs_run;
        /* a finished run's model is final: where the run stood is of no more use */
        if (s == PT_OK) pt_model_clear_run(m);
    }
    /* An interrupted run still hands back the model as it stands, so the caller can save it. */
    if (s != PT_OK && s != PT_ERR_INTERRUPTED) {
        pt_model_free(m);
        if (!report) pt_train_report_clear(&local);
        return s;
    }
    *model = m;
    if (!report) pt_train_report_clear(&local);
    return s;
}
