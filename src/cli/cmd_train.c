/* ptron train FILE -o MODEL: every path behind one command. A call reads its options
 * (train_args.c), then prepares the run (the data and what the run starts from:
 * train_setup.c), runs it (with the hooks of train_hooks.c) and finishes it: the training
 * accuracy, the model written and the report (train_output.c). */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "train.h"

/* A stage's answer when the next stage follows (exit statuses are >= 0). */
enum { GO_ON = -1 };

/* Everything one call holds, from its options to its report; freed by train_session_free. */
typedef struct train_session {
    train_opts o;
    pt_train_params p;
    bool dist, lead;     /* under mpirun; rank 0 (the one that prints and writes) */
    char *default_model; /* FILE.model, when no model file was named */
    pt_dataset *ds;
    double load_s;
    pt_model *resume, *init, *reference; /* --resume, --init, --reference */
    float *class_weight;
    bool want_bounds;
    heldout held;
    progress prog;
    /* the run */
    pt_model *m;
    pt_train_report rep;
    pt_status trained; /* pt_train's status: PT_OK or PT_ERR_INTERRUPTED */
    bool interrupted, stopped_early, keep_best;
    float gamma_asked; /* p.kernel.gamma as given (p's is then the number the run used) */
    /* its end */
    pt_eval ev;
    char skipped[512]; /* why the training accuracy was skipped (skip) */
    bool skip;
    double eval_s, write_s;
    pt_run_bounds b;
} train_session;

/* A voted model's vote costs one dot per stored vector per row, so after many updates the
 * training accuracy's pass can cost far more than the training did: it is skipped (false,
 * with the reason in why) when it would cost PT_SCORE_COST_WARN multiply-adds or more and more
 * than the training's (a dot and, per update, an axpy and a copy of the vector, of a row's
 * cost each), unless --train-accuracy asks for it (a warning then says what it costs). */
static bool accuracy_worth_it(const train_opts *o, const pt_model *m, const pt_dataset *ds,
                              const pt_train_report *rep, char *why, size_t cap)
{
    pt_model_info mi;
    pt_model_get_info(m, &mi);
    if (mi.variant != PT_VARIANT_VOTED || mi.path != PT_PATH_ONLINE) return true;
    size_t n = pt_dataset_n(ds), d = pt_dataset_d(ds);
    double row = pt_dataset_layout(ds) != PT_LAYOUT_SPARSE ? (double)d
                 : n ? (double)pt_dataset_nnz(ds) / (double)n : 0.0;
    double samples = (double)n * (rep->epochs_run - rep->epochs_before);
    double train = (samples + 3.0 * (double)rep->updates) * row;
    double eval = pt_model_score_cost(m, ds);
    if (eval < PT_SCORE_COST_WARN || eval <= train) return true;
    if (o->train_accuracy) {
        if (pt_dist_rank() == 0)
            fprintf(stderr, "ptron: warning: the train accuracy (--train-accuracy) costs %.3g "
                            "multiply-adds, %.3g times the training's %.3g\n", eval,
                    eval / (train > 0 ? train : 1.0), train);
        return true;
    }
    snprintf(why, cap, "scoring the %zu training rows by the vote of the model's vectors would "
             "cost %.3g multiply-adds, %.3g times the training's %.3g; --train-accuracy computes "
             "it, --voted-max-vectors K caps the vectors", n, eval,
             eval / (train > 0 ? train : 1.0), train);
    return false;
}

/* DATA shrank under the run (another process truncated it): m is the model of the last epoch
 * training read whole, or the final one when it shrank after training (what says which),
 * saved to -o as an interrupted run's is; exit 2 with the reason, the library's message. */
static int save_before_shrink(const train_opts *o, const pt_model *m, const char *what)
{
    const bool resumable = pt_model_resumable(m);
    char why[1024];
    snprintf(why, sizeof why, "%s", cli_message(pt_last_error()));
    pt_status s = pt_dist_rank() == 0 ? pt_model_save(m, o->model) : PT_OK;
    if (s != PT_OK) {
        fprintf(stderr, "ptron: %s\n", why);
        return cli_fail(s);
    }
    if (pt_dist_rank() == 0)
        fprintf(stderr, "ptron: %s; %s saved to %s%s%s%s%s%s\n", why, what, o->model,
                resumable ? " (continue with --resume " : "", resumable ? o->model : "",
                resumable ? " once " : "", resumable ? o->file : "",
                resumable ? " is whole again)" : "");
    return EXIT_INPUT;
}

/* The data, and what the run starts from: --resume's run, --class-weight, --init's weights,
 * --bounds' reference, --test's rows. --search and --cv end the call here. */
static int train_prepare(train_session *t)
{
    train_opts *o = &t->o;
    pt_train_params *p = &t->p;
    int rc;
    t->held = (heldout){.patience = o->early_stop, .checkpoint = o->checkpoint,
                        .every = o->checkpoint_every ? o->checkpoint_every : 1};
    /* the kernel path splits classes, each rank on the whole data; the others split rows */
    int how = !t->dist ? CLI_READ_WHOLE : p->path == PT_PATH_KERNEL ? CLI_READ_REPLICATED
                                                                     : CLI_READ_SHARE;
    pt_status s = cli_read_data(o->file, o->format, o->max_features, how, &t->ds, &t->load_s);
    if (s != PT_OK) /* a share's failure is every rank's, with the same message: rank 0 prints it */
        return t->lead ? cli_fail(s) : cli_exit_status(s);
    if (o->resume && (rc = train_load_resume(o, p, &t->resume)) != EXIT_OK) return rc;
    if (o->class_weight && (rc = train_class_weights(o, t->ds, p, &t->class_weight)) != EXIT_OK)
        return rc;
    if (o->init && !p->init_random && (rc = train_load_init(o, t->ds, p, &t->init)) != EXIT_OK)
        return rc;
    if (o->bounds &&
        (rc = train_bounds_reference(t->ds, p, o, &t->reference, &t->want_bounds)) != EXIT_OK)
        return rc;
    if (o->test &&
        (s = cli_read_dataset(o->test, o->format, o->max_features, &t->held.data, NULL)) != PT_OK)
        return cli_fail(s);
    if (o->proba && pt_dataset_nclass(t->ds) != 2) {
        fprintf(stderr, "ptron: --proba: probabilities by Platt scaling are for two classes; %s "
                        "has %zu (use the scores of each class: predict --scores)\n", o->file,
                pt_dataset_nclass(t->ds));
        return EXIT_INPUT;
    }
    if (o->search) return train_search(o, t->ds, p);
    if (o->cv) return train_cross_validate(o, t->ds, p);
    return GO_ON;
}

/* pt_train failed (s, neither PT_OK nor an interrupt): the exit status, or every rank ended. */
static int train_failed(const train_session *t, pt_status s)
{
    if (t->o.resume && s == PT_ERR_FORMAT) {
        /* the recorded run does not fit this data (checked alike on every rank, before
         * any communication: rank 0 says so) */
        if (t->lead) fprintf(stderr, "ptron: %s: %s\n", t->o.resume, cli_message(pt_last_error()));
        return EXIT_INPUT;
    }
    if (pt_dist_size() > 1 && s == PT_ERR_UNSUPPORTED) {
        /* refused before any communication, alike on every rank: rank 0 says why */
        return t->lead ? cli_fail(s) : cli_exit_status(s);
    }
    if (pt_dist_size() > 1) {
        /* one rank's failure may leave the others waiting in a collective: end them all */
        fprintf(stderr, "ptron: rank %d of %d: %s\n", pt_dist_rank(), pt_dist_size(),
                cli_message(pt_last_error()));
        pt_dist_abort(cli_exit_status(s));
    }
    return cli_fail(s);
}

/* The run: its hooks and progress, pt_train, and its failures. */
static int train_run(train_session *t)
{
    train_opts *o = &t->o;
    pt_train_params *p = &t->p;
    if (o->test || o->checkpoint) {
        p->epoch_hook = train_on_epoch;
        p->epoch_user = &t->held;
    }
    progress_init(&t->prog, o->quiet || o->json, p->epochs, pt_dataset_n(t->ds));
    p->progress = progress_epoch;
    p->progress_user = &t->prog;
    train_test_hooks(p);

    if (train_signal()) {
        /* before training began: there is nothing to save */
        fprintf(stderr, "ptron: interrupted before training began; nothing written\n");
        return train_signal_status();
    }
    pt_status s = pt_train(t->ds, p, &t->m, &t->rep);
    progress_done(&t->prog);
    if (s == PT_ERR_IO && t->m) {
        /* (the one failure that hands back a model: DATA shrank under the run) */
        return save_before_shrink(o, t->m, "that model is");
    }
    if (s != PT_OK && s != PT_ERR_INTERRUPTED) return train_failed(t, s);
    if (t->held.error != PT_OK) return cli_fail(t->held.error);
    t->trained = s;
    t->interrupted = s == PT_ERR_INTERRUPTED;
    return GO_ON;
}

/* The gamma the run used (a rule resolved from the data), as the model records it, into p;
 * the one asked kept for the report. */
static void take_gamma_used(train_session *t)
{
    t->gamma_asked = t->p.kernel.gamma;
    pt_train_params used;
    pt_train_params_init(&used);
    pt_model_get_params(t->m, &used);
    t->p.kernel.gamma = used.kernel.gamma;
    memcpy(t->p.kernel.expr, used.kernel.expr, sizeof t->p.kernel.expr);
}

/* --test once more after training when no epoch ran in this call (a resumed run that had
 * finished); then the model kept: the best held-out epoch's when early stopping stopped the
 * run or an interrupt cut it. Returns GO_ON, else the exit status. */
static int keep_heldout_best(train_session *t)
{
    heldout *held = &t->held;
    if (t->o.test && held->epochs == 0 && !t->interrupted) {
        held->patience = 0;
        held->at_end = true;
        held->checkpoint = NULL;
        if (train_on_epoch(t->m, t->rep.epochs_run, 0, held), held->error != PT_OK)
            return cli_fail(held->error);
    }
    int last_evaluated = held->epochs ? held->first_epoch + held->epochs - 1 : 0;
    t->stopped_early = held->best_model && last_evaluated > held->best_epoch;
    t->keep_best = held->best_model && (t->stopped_early || t->interrupted);
    if (t->keep_best) {
        /* keep the model of the best held-out epoch (final: early stopping is not resumed) */
        pt_model_free(t->m);
        t->m = held->best_model;
        held->best_model = NULL;
    }
    return GO_ON;
}

/* An interrupted run: what is saved where, and whether it can be resumed (stop_msg: the
 * library's message of the stop). */
static void say_interrupted(const train_session *t, const char *stop_msg)
{
    const char *model = t->o.model;
    if (pt_dist_size() > 1) {
        /* every rank stopped at the same point: the last mixed (online) or stepped (batch)
         * weights and where the run then stood, the same on every rank, which rank 0 writes */
        if (t->lead && pt_model_resumable(t->m))
            fprintf(stderr, "ptron: %s; saving the last model all %d ranks share to %s "
                            "(continue with mpirun ... --resume %s)\n", stop_msg,
                    pt_dist_size(), model, model);
        else if (t->lead)
            fprintf(stderr, "ptron: %s; saving the last model all %d ranks share to %s (it "
                            "cannot be resumed%s)\n", stop_msg, pt_dist_size(), model,
                    t->keep_best ? ": early stopping keeps the best model" : "");
    } else {
        if (pt_model_resumable(t->m))
            fprintf(stderr, "ptron: %s; saving the model as it stands to %s (continue with "
                            "--resume %s)\n", stop_msg, model, model);
        else
            fprintf(stderr, "ptron: %s; saving %s to %s (it cannot be resumed%s)\n", stop_msg,
                    t->keep_best ? "the best held-out epoch's model" : "the model as it stands",
                    model, t->keep_best ? ": early stopping keeps the best model" : "");
    }
}

/* The training accuracy (t->ev, or skipped: t->skip). Returns GO_ON, else the exit status. */
static int evaluate_training(train_session *t)
{
    const pt_dataset *ds = t->ds;
    pt_train_report *rep = &t->rep;
    pt_status s = t->trained;
    t->skip = !accuracy_worth_it(&t->o, t->m, ds, rep, t->skipped, sizeof t->skipped);
    if (t->skip && t->lead) fprintf(stderr, "ptron: warning: train accuracy skipped: %s\n", t->skipped);
    double eval_t0 = cli_now();
    /* the kernel path counted the final model's right predictions on these rows from the
     * kernel rows it kept (as evaluating the model would, without computing them again) */
    if (rep->train_scored && !t->interrupted && !t->keep_best && t->p.scale == PT_SCALE_NONE &&
        pt_dataset_dtype(ds) == PT_DTYPE_F32 && pt_dist_size() == 1) {
        size_t n = pt_dataset_n(ds);
        t->ev = (pt_eval){.n = n, .correct = rep->train_correct,
                          .accuracy = n ? (double)rep->train_correct / (double)n : 0.0};
        s = PT_OK;
        rep->train_seconds -= rep->score_seconds; /* reported as the evaluation's */
        eval_t0 -= rep->score_seconds;
    } else if (!t->skip) {
        s = pt_model_evaluate(t->m, ds, &t->ev);
    }
    t->eval_s = cli_now() - eval_t0;
    if (s == PT_ERR_IO && pt_dist_size() == 1 && !t->interrupted && pt_dataset_intact(ds) != PT_OK) {
        /* DATA shrank after training: the model is whole, its training accuracy unknown */
        return save_before_shrink(&t->o, t->m, "the model, trained before, is");
    }
    if (s != PT_OK) return cli_fail(s);
    return GO_ON;
}

/* --bounds for the run, --proba's sigmoid, and the model written (by rank 0). Returns GO_ON,
 * else the exit status. */
static int bound_fit_save(train_session *t)
{
    const train_opts *o = &t->o;
    pt_status s;
    /* the passes the run made: an epoch an interrupt cut short counts as one */
    if (t->want_bounds &&
        (s = pt_bounds_for_run(t->ds, &t->p, t->reference,
                               t->rep.epochs_run + (t->interrupted ? 1 : 0), &t->b)) != PT_OK)
        return cli_fail(s);
    if (o->proba && !t->interrupted) {
        /* Platt's sigmoid on out-of-fold scores: 5 folds from --seed, each trained as this run */
        double A, B;
        if ((s = pt_platt_fit(t->ds, &t->p, 5, t->p.seed, &A, &B)) != PT_OK ||
            (s = pt_model_set_platt(t->m, A, B)) != PT_OK)
            return cli_fail(s);
    }
    double write_t0 = cli_now();
    s = t->lead ? pt_model_save(t->m, o->model) : PT_OK; /* one rank writes the model */
    t->write_s = cli_now() - write_t0;
    if (s != PT_OK) return cli_fail(s);
    const heldout *held = &t->held;
    if (held->failed_checkpoints)
        fprintf(stderr, "ptron: warning: %d of %d checkpoints could not be written to %s (last "
                        "reason: %s)\n", held->failed_checkpoints,
                held->checkpoints + held->failed_checkpoints, o->checkpoint,
                held->checkpoint_error[0] ? held->checkpoint_error : "see above");
    /* a signal during the evaluation or the save: the model is written whole (atomically), and
     * the exit status still says the run was stopped */
    if (train_signal() && !t->interrupted)
        fprintf(stderr, "ptron: %s after training finished; the final model was written to %s\n",
                train_signal() == SIGTERM ? "SIGTERM" : "SIGINT", o->model);
    return GO_ON;
}

/* The report on stdout: --json's object, else the text summary unless --quiet. */
static void report(train_session *t)
{
    const pt_dataset *ds = t->ds;
    pt_model_info mi;
    pt_model_get_info(t->m, &mi);
    train_result res = {.o = &t->o, .p = &t->p, .gamma_asked = t->gamma_asked,
                        .n_support = mi.n_support, .rep = &t->rep, .n = pt_dataset_n_total(ds),
                        .d = pt_dataset_d(ds), .load_s = t->load_s, .eval_s = t->eval_s,
                        .write_s = t->write_s, .ev = &t->ev,
                        .ev_skipped = t->skip ? t->skipped : NULL, .held = &t->held,
                        .interrupted = t->interrupted, .stopped_early = t->stopped_early,
                        .b = t->want_bounds ? &t->b : NULL, .m = t->m};
    if (t->o.json) pt_dataset_get_info(ds, &res.data); /* a pass over the data (for R) */
    res.data.streamed = pt_dataset_streamed(ds) > 0;
    res.data.stream_rows = pt_dataset_streamed(ds);
    res.data.stream_pages = pt_dataset_stream_pages(ds);
    if (t->o.json) train_print_json(&res);
    else if (!t->o.quiet) train_print_text(&res);
}

/* After training: the gamma used, the interruption, the training accuracy, --proba, the model
 * written and the report. */
static int train_finish(train_session *t)
{
    int rc;
    take_gamma_used(t);
    char stop_msg[512];
    snprintf(stop_msg, sizeof stop_msg, "%s", t->interrupted ? cli_message(pt_last_error()) : "");
    if ((rc = keep_heldout_best(t)) != GO_ON) return rc;
    if (t->interrupted) say_interrupted(t, stop_msg);
    train_test_late_signal();
    if ((rc = evaluate_training(t)) != GO_ON) return rc;
    if ((rc = bound_fit_save(t)) != GO_ON) return rc;
    report(t);
    return t->interrupted || train_signal() ? train_signal_status() : EXIT_OK;
}

static void train_session_free(train_session *t)
{
    train_signals_release();
    pt_train_report_clear(&t->rep);
    pt_model_free(t->held.best_model);
    pt_model_free(t->resume);
    pt_model_free(t->reference);
    pt_model_free(t->init);
    pt_dataset_free(t->held.data);
    free(t->held.acc);
    pt_model_free(t->m);
    pt_dataset_free(t->ds);
    free(t->default_model);
    free(t->class_weight);
}

int cmd_train(int argc, char **argv)
{
    train_session t = {0};
    pt_train_params_init(&t.p);
    int rc = train_parse(argc, argv, &t.o, &t.p);
    if (pt_dist_size() > 1) rc = train_agree_options(&t.o, &t.p, rc);
    if (rc != EXIT_OK) return rc;
    /* under mpirun: each rank trains on its share; only rank 0 prints and writes */
    t.dist = pt_dist_launched();
    t.lead = pt_dist_rank() == 0;
    if (pt_dist_size() > 1 && (rc = train_refuse_distributed(&t.o, &t.p)) != EXIT_OK) return rc;
    if (!t.lead) {
        t.o.quiet = true;
        t.o.json = false;
    }
    cli_install_log(t.o.quiet || t.o.json);
    /* from here on SIGINT and SIGTERM ask training to stop; the run then saves what it has */
    if (train_signals_install(&t.p) != PT_OK) return cli_fail(PT_ERR_NOMEM);
    if (!t.o.model) {
        size_t len = strlen(t.o.file) + 8;
        t.default_model = malloc(len);
        snprintf(t.default_model, len, "%s.model", t.o.file);
        t.o.model = t.default_model;
    }
    cli_set_threads(t.p.threads);
    rc = train_prepare(&t);
    if (rc == GO_ON) rc = train_run(&t);
    if (rc == GO_ON) rc = train_finish(&t);
    train_session_free(&t);
    return rc;
}
