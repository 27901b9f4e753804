/* ptron train's report of a run that trained: one JSON object (--json) or the text summary,
 * and the mistake bounds of --bounds. */
#include <math.h>
#include <string.h>

#include "train.h"

/* How gamma was chosen: "scale", "auto" or "given". */
static const char *gamma_rule(float asked)
{
    return asked == PT_GAMMA_SCALE ? "scale" : asked == PT_GAMMA_AUTO ? "auto" : "given";
}

/* "<=" when the run kept within the bound; a violated bound is said as such, never claimed. */
static void print_bound(const char *what, const char *formula, double bound, size_t updates)
{
    if ((double)updates <= bound)
        printf("  %s: updates made %zu <= %s = %.6g\n", what, updates, formula, bound);
    else
        printf("  %s: updates made %zu EXCEED %s = %.6g (the theorem assumes exact arithmetic; "
               "please report this run)\n", what, updates, formula, bound);
}

static void print_bounds(const pt_run_bounds *b, const train_opts *o, int bias, size_t updates)
{
    printf("bounds (w*: %s%s; ", o->reference ? "--reference " : "the generator's w*",
           o->reference ? o->reference : "");
    if (strcmp(b->space, "input") == 0) printf("input space%s):\n", bias ? " with the bias coordinate" : "");
    else printf("%s feature space phi):\n", b->space);
    if (isfinite(b->R)) printf("  R = %.6g, margin of w* gamma = %.6g\n", b->R, b->gamma);
    if (!b->covered) {
        printf("  no mistake bound applies: %s\n", b->reason);
        return;
    }
    char what[96], formula[96];
    if (b->separable) {
        if (b->tau == 0.0) {
            snprintf(what, sizeof what, "separable (Novikoff)");
            snprintf(formula, sizeof formula, "(R/gamma)^2");
        } else {
            snprintf(what, sizeof what, "separable, margin perceptron (tau = %g, eta = %g)", b->tau, b->eta);
            snprintf(formula, sizeof formula, "(R^2 + 2 tau/eta)/gamma^2");
        }
        print_bound(what, formula, b->separable_bound, updates);
    } else {
        printf("  separable: w* does not separate the data (gamma <= 0): no separable bound\n");
    }
    snprintf(what, sizeof what, "hinge, %d pass%s", b->passes, b->passes == 1 ? "" : "es");
    snprintf(formula, sizeof formula, "min_c %sc^2 + 2 E L_hinge(c w*/|w*|)",
             b->tau == 0.0 ? "R^2 " : "(R^2 + 2 tau/eta) ");
    print_bound(what, formula, b->hinge_bound, updates);
    printf("    (E = %d, c = %.4g, L_hinge per pass %.4g)\n", b->passes, b->hinge_scale, b->hinge_loss);
}

/* --json's keys of the run: what trained, where, on how many rows. */
static void json_run(json_out *j, const train_result *t)
{
    const pt_train_params *p = t->p;
    const pt_train_report *rep = t->rep;
    json_str(j, "path", pt_path_name(p->path));
    json_str(j, "variant", pt_variant_name(p->variant));
    json_str(j, "isa", pt_isa_name(rep->isa));
    json_int(j, "threads", rep->threads);
    if (pt_dist_launched()) { /* under mpirun */
        json_int(j, "ranks", pt_dist_size());
        json_num(j, "comm_seconds", pt_dist_comm_seconds());
    }
    json_int(j, "n", (long long)t->n);
    json_int(j, "d", (long long)t->d);
}

/* --json's keys of the training data: its form, how it was read, what the run made of it. */
static void json_data(json_out *j, const train_result *t)
{
    const train_opts *o = t->o;
    const pt_train_params *p = t->p;
    json_str(j, "layout", pt_layout_name(t->data.layout));
    json_int(j, "nnz", (long long)t->data.nnz);
    json_num(j, "density", t->data.density);
    json_int(j, "data_bytes", (long long)t->data.bytes);
    json_str(j, "dtype", pt_dtype_name(t->data.dtype));
    /* in memory, or streamed from the file a window at a time; what an epoch reads (the GEMV
     * batch pass reads the rows twice) */
    json_str(j, "data_mode", t->data.streamed ? "streamed" : "in memory");
    json_int(j, "bytes_per_epoch", (long long)t->data.bytes *
             (p->path == PT_PATH_BATCH && p->batch.impl == PT_BATCH_GEMV ? 2 : 1));
    if (t->data.streamed) json_int(j, "stream_rows", (long long)t->data.stream_rows);
    if (t->data.stream_pages) json_str(j, "stream_pages", t->data.stream_pages);
    if (p->shuffle && (p->online.shuffle_chunk || t->data.streamed))
        json_int(j, "shuffle_chunk",
                 (long long)(p->online.shuffle_chunk ? p->online.shuffle_chunk : t->data.stream_rows));
    if (p->expand.kind != PT_EXPAND_NONE)
        json_int(j, "expanded_d", (long long)pt_expand_dim(&p->expand, t->d));
    if (o->init) json_str(j, "init", p->init_random ? "random" : o->init);
}

/* --json's keys of the model: its kernel, scaling, class weights and probabilities. */
static void json_model(json_out *j, const train_result *t)
{
    const train_opts *o = t->o;
    const pt_train_params *p = t->p;
    if (p->path == PT_PATH_KERNEL) {
        json_str(j, "kernel", pt_kernel_name(p->kernel.kind));
        if (p->kernel.kind == PT_KERNEL_EXPR) json_str(j, "kernel_expr", p->kernel.expr);
        if (p->kernel.kind == PT_KERNEL_POLY) json_int(j, "degree", p->kernel.degree);
        if (p->kernel.kind == PT_KERNEL_POLY || p->kernel.kind == PT_KERNEL_RBF) {
            json_num(j, "gamma", p->kernel.gamma);
            json_str(j, "gamma_rule", gamma_rule(t->gamma_asked));
        }
        if (p->kernel.kind == PT_KERNEL_POLY) json_num(j, "coef0", p->kernel.coef0);
        if (p->kernel.budget) json_int(j, "budget", (long long)p->kernel.budget);
        json_int(j, "support_vectors", (long long)t->n_support);
    }
    if (p->scale != PT_SCALE_NONE) json_str(j, "scale", pt_scale_kind_name(p->scale));
    if (o->class_weight) json_str(j, "class_weight", o->class_weight);
    double pa, pb;
    if (o->proba && pt_model_platt(t->m, &pa, &pb)) {
        json_num(j, "platt_a", pa);
        json_num(j, "platt_b", pb);
    }
}

/* --json's keys of the epochs, the held-out accuracy, the stages' times and the training
 * accuracy. */
static void json_eval(json_out *j, const train_result *t)
{
    const pt_train_report *rep = t->rep;
    const heldout *held = t->held;
    int ran = rep->epochs_run - rep->epochs_before; /* the epochs this call trained */
    double samples = (double)t->n * ran;
    json_int(j, "epochs_run", rep->epochs_run);
    if (rep->epochs_before) json_int(j, "epochs_before", rep->epochs_before);
    json_size_array(j, "mistakes_per_epoch", rep->mistakes_per_epoch, (size_t)ran);
    if (rep->objective_per_epoch)
        json_double_array(j, "objective_per_epoch", rep->objective_per_epoch, (size_t)ran);
    if (rep->comm_seconds_per_epoch)
        json_double_array(j, "comm_seconds_per_epoch", rep->comm_seconds_per_epoch, (size_t)ran);
    if (rep->seconds_per_epoch)
        json_double_array(j, "seconds_per_epoch", rep->seconds_per_epoch, (size_t)ran);
    json_int(j, "updates", (long long)rep->updates);
    json_bool(j, "converged", rep->converged);
    json_bool(j, "interrupted", t->interrupted);
    if (held->at_end) {
        json_num(j, "test_accuracy", held->best);
    } else if (held->epochs) {
        json_double_array(j, "test_accuracy_per_epoch", held->acc, (size_t)held->epochs);
        json_num(j, "best_test_accuracy", held->best);
        json_int(j, "best_epoch", held->best_epoch);
        json_bool(j, "stopped_early", t->stopped_early);
    }
    json_num(j, "load_seconds", t->load_s);
    json_num(j, "train_seconds", rep->train_seconds);
    /* the stages one after another: load, train (of which gram: kernel values), the training
     * accuracy's evaluation, the model's write */
    if (t->p->path == PT_PATH_KERNEL) json_num(j, "gram_seconds", rep->gram_seconds);
    json_num(j, "evaluate_seconds", t->eval_s);
    json_num(j, "write_seconds", t->write_s);
    json_num(j, "samples_per_second",
             rep->train_seconds > 0 ? samples / rep->train_seconds : 0.0);
    json_num(j, "train_accuracy", t->ev_skipped ? NAN : t->ev->accuracy); /* NAN: null */
    if (t->ev_skipped) json_str(j, "train_accuracy_skipped", t->ev_skipped);
}

/* --json's "bounds" object. A bound's keys only where it covers the run: mistake_bound is the
 * separable one ((R^2 + 2 tau/eta)/gamma^2), hinge_mistake_bound the hinge one over passes. */
static void json_bounds(json_out *j, const pt_run_bounds *b, size_t updates)
{
    json_object_begin(j, "bounds");
    json_bool(j, "covered", b->covered);
    if (!b->covered) json_str(j, "reason", b->reason);
    json_str(j, "space", b->space);
    if (isfinite(b->R)) {
        json_num(j, "R", b->R);
        json_num(j, "gamma", b->gamma);
    }
    if (b->covered) {
        json_num(j, "margin", b->tau);
        json_num(j, "eta", b->eta);
        json_int(j, "passes", b->passes);
        json_int(j, "updates", (long long)updates);
        if (b->separable) {
            json_num(j, "mistake_bound", b->separable_bound);
            json_bool(j, "mistake_bound_holds", (double)updates <= b->separable_bound);
        }
        json_num(j, "hinge_mistake_bound", b->hinge_bound);
        json_bool(j, "hinge_mistake_bound_holds", (double)updates <= b->hinge_bound);
        json_num(j, "hinge_loss", b->hinge_loss);
        json_num(j, "wstar_norm", b->hinge_scale);
    }
    json_object_end(j);
}

/* --json: one object on stdout. */
void train_print_json(const train_result *t)
{
    json_out j;
    json_begin(&j, stdout);
    json_run(&j, t);
    json_data(&j, t);
    json_model(&j, t);
    json_eval(&j, t);
    json_str(&j, "model", t->o->model);
    if (t->b) json_bounds(&j, t->b, t->rep->updates);
    json_end(&j);
}

/* The text summary's lines of the run's setup: the expansion, kernel, scaling, class
 * weights, streaming and start. */
static void print_setup(const train_result *t)
{
    const train_opts *o = t->o;
    const pt_train_params *p = t->p;
    if (p->expand.kind == PT_EXPAND_POLY)
        printf("expansion: degree-%d polynomial, coef0 %g: %zu -> %zu features (%s)\n",
               p->expand.degree, (double)p->expand.coef0, t->d,
               pt_expand_dim(&p->expand, t->d),
               p->path == PT_PATH_ONLINE ? "streamed" : "materialised");
    else if (p->expand.kind == PT_EXPAND_RFF)
        printf("expansion: %zu random Fourier features, gamma %g, seed %llu (%s)\n",
               p->expand.rff_dim, (double)p->expand.gamma, (unsigned long long)p->expand.seed,
               p->path == PT_PATH_ONLINE ? "streamed" : "materialised");
    if (p->path == PT_PATH_KERNEL && p->kernel.kind == PT_KERNEL_POLY)
        printf("kernel: (gamma x.z + coef0)^%d, gamma %.6g (%s), coef0 %g\n", p->kernel.degree,
               (double)p->kernel.gamma, gamma_rule(t->gamma_asked), (double)p->kernel.coef0);
    else if (p->path == PT_PATH_KERNEL && p->kernel.kind == PT_KERNEL_RBF)
        printf("kernel: exp(-gamma |x - z|^2), gamma %.6g (%s)\n", (double)p->kernel.gamma,
               gamma_rule(t->gamma_asked));
    else if (p->path == PT_PATH_KERNEL && p->kernel.kind == PT_KERNEL_EXPR)
        printf("kernel: %s\n", p->kernel.expr);
    if (p->path == PT_PATH_KERNEL && p->kernel.budget)
        printf("support vectors: %zu (budget %zu, random removal)\n", t->n_support, p->kernel.budget);
    if (p->scale != PT_SCALE_NONE)
        printf("features scaled (%s), the scaling kept in the model\n",
               pt_scale_kind_name(p->scale));
    if (o->class_weight) printf("class weights %s\n", o->class_weight);
    if (t->data.streamed)
        printf("data streamed from %s (over --mem-mb), %zu rows a window (pages %s)%s\n", o->file,
               t->data.stream_rows, t->data.stream_pages,
               p->shuffle && !p->online.shuffle_chunk ? ", shuffled in chunks of that many rows" : "");
    if (p->init_random)
        printf("started from random weights (uniform in [0, 1), seed %llu)\n",
               (unsigned long long)p->seed);
    else if (o->init)
        printf("started from the weights of %s\n", o->init);
}

/* The text summary's lines of the held-out accuracy (--test). */
static void print_heldout(const train_result *t)
{
    const heldout *held = t->held;
    if (held->at_end) {
        printf("held-out accuracy = %.4g%% (after training)\n", 100.0 * held->best);
    } else if (held->epochs) {
        if (held->first_epoch > 1)
            printf("held-out accuracy per epoch from epoch %d:", held->first_epoch);
        else printf("held-out accuracy per epoch:");
        for (int e = 0; e < held->epochs && e < 20; e++) printf(" %.4g%%", 100.0 * held->acc[e]);
        printf(held->epochs > 20 ? " ...\n" : "\n");
        printf("best held-out accuracy %.4g%% at epoch %d%s\n", 100.0 * held->best,
               held->best_epoch, t->stopped_early ? " (stopped early; that epoch's model is saved)" : "");
    }
}

/* The text summary on stdout. */
void train_print_text(const train_result *t)
{
    const train_opts *o = t->o;
    const pt_train_params *p = t->p;
    const pt_train_report *rep = t->rep;
    const pt_eval *ev = t->ev;
    int ran = rep->epochs_run - rep->epochs_before; /* the epochs this call trained */
    double samples = (double)t->n * ran;
    printf("%s path (%s, %s, %d thread%s): %d epoch%s, %zu updates, %s\n", pt_path_name(p->path),
           pt_variant_name(p->variant), pt_isa_name(rep->isa), rep->threads,
           rep->threads == 1 ? "" : "s", rep->epochs_run, rep->epochs_run == 1 ? "" : "s",
           rep->updates, rep->converged ? "converged (an epoch with no mistake)" : "not converged");
    print_setup(t);
    if (rep->epochs_before) printf("mistakes per epoch from epoch %d:", rep->epochs_before + 1);
    else printf("mistakes per epoch:");
    for (int e = 0; e < ran && e < 20; e++) printf(" %zu", rep->mistakes_per_epoch[e]);
    printf(ran > 20 ? " ...\n" : "\n");
    if (t->ev_skipped) printf("train accuracy: skipped (%s)\n", t->ev_skipped);
    else printf("train accuracy = %.4g%% (%zu/%zu)\n", 100.0 * ev->accuracy, ev->correct, ev->n);
    print_heldout(t);
    printf("load %.3f s, train %.3f s (%.3g samples/s)\n", t->load_s, rep->train_seconds,
           rep->train_seconds > 0 ? samples / rep->train_seconds : 0.0);
    if (t->b) print_bounds(t->b, o, p->bias, rep->updates);
    printf("model written to %s\n", o->model);
}
