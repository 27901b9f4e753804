/* ptron train FILE -o MODEL: every path behind one command. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "train.h"

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

int cmd_train(int argc, char **argv)
{
    train_opts o = {0};
    pt_train_params p;
    pt_train_params_init(&p);
    int rc = train_parse(argc, argv, &o, &p);
    if (pt_dist_size() > 1) rc = train_agree_options(&o, &p, rc);
    if (rc != EXIT_OK) return rc;
    /* under mpirun: each rank trains on its share; only rank 0 prints and writes */
    const bool dist = pt_dist_launched(), lead = pt_dist_rank() == 0;
    if (pt_dist_size() > 1 && (rc = train_refuse_distributed(&o, &p)) != EXIT_OK) return rc;
    if (!lead) {
        o.quiet = true;
        o.json = false;
    }
    cli_install_log(o.quiet || o.json);
    /* from here on SIGINT and SIGTERM ask training to stop; the run then saves what it has */
    if (train_signals_install(&p) != PT_OK) return cli_fail(PT_ERR_NOMEM);

    char *default_model = NULL;
    if (!o.model) {
        size_t len = strlen(o.file) + 8;
        default_model = malloc(len);
        snprintf(default_model, len, "%s.model", o.file);
        o.model = default_model;
    }
    cli_set_threads(p.threads);

    pt_dataset *ds = NULL;
    pt_model *m = NULL;
    pt_train_report rep = {0};
    heldout held = {.patience = o.early_stop, .checkpoint = o.checkpoint,
                    .every = o.checkpoint_every ? o.checkpoint_every : 1};
    pt_model *resume = NULL, *reference = NULL, *init = NULL;
    float *class_weight = NULL;
    bool want_bounds = false;
    double load_s = 0.0;
    /* the kernel path splits classes, each rank on the whole data; the others split rows */
    int how = !dist ? CLI_READ_WHOLE : p.path == PT_PATH_KERNEL ? CLI_READ_REPLICATED
                                                                 : CLI_READ_SHARE;
    pt_status s = cli_read_data(o.file, o.format, o.max_features, how, &ds, &load_s);
    if (s != PT_OK) {
        /* a share's failure is every rank's, with the same message: rank 0 prints it */
        rc = lead ? cli_fail(s) : cli_exit_status(s);
        goto out;
    }

    if (o.resume && (rc = train_load_resume(&o, &p, &resume)) != EXIT_OK) goto out;
    if (o.class_weight && (rc = train_class_weights(&o, ds, &p, &class_weight)) != EXIT_OK)
        goto out;
    if (o.init && !p.init_random && (rc = train_load_init(&o, ds, &p, &init)) != EXIT_OK) goto out;
    if (o.bounds && (rc = train_bounds_reference(ds, &p, &o, &reference, &want_bounds)) != EXIT_OK)
        goto out;
    if (o.test) {
        s = cli_read_dataset(o.test, o.format, o.max_features, &held.data, NULL);
        if (s != PT_OK) {
            rc = cli_fail(s);
            goto out;
        }
    }
    if (o.proba && pt_dataset_nclass(ds) != 2) {
        fprintf(stderr, "ptron: --proba: probabilities by Platt scaling are for two classes; %s "
                        "has %zu (use the scores of each class: predict --scores)\n", o.file,
                pt_dataset_nclass(ds));
        rc = EXIT_INPUT;
        goto out;
    }
    if (o.search) {
        rc = train_search(&o, ds, &p);
        goto out;
    }
    if (o.cv) {
        rc = train_cross_validate(&o, ds, &p);
        goto out;
    }
    if (o.test || o.checkpoint) {
        p.epoch_hook = train_on_epoch;
        p.epoch_user = &held;
    }

    progress prog;
    progress_init(&prog, o.quiet || o.json, p.epochs, pt_dataset_n(ds));
    p.progress = progress_epoch;
    p.progress_user = &prog;
    train_test_hooks(&p);

    if (train_signal()) {
        /* before training began: there is nothing to save */
        fprintf(stderr, "ptron: interrupted before training began; nothing written\n");
        rc = train_signal_status();
        goto out;
    }
    s = pt_train(ds, &p, &m, &rep);
    progress_done(&prog);
    if (s == PT_ERR_IO && m) {
        /* (the one failure that hands back a model: DATA shrank under the run) */
        rc = save_before_shrink(&o, m, "that model is");
        goto out;
    }
    if (s != PT_OK && s != PT_ERR_INTERRUPTED) {
        if (o.resume && s == PT_ERR_FORMAT) {
            /* the recorded run does not fit this data (checked alike on every rank, before
             * any communication: rank 0 says so) */
            if (lead) fprintf(stderr, "ptron: %s: %s\n", o.resume, cli_message(pt_last_error()));
            rc = EXIT_INPUT;
        } else if (pt_dist_size() > 1 && s == PT_ERR_UNSUPPORTED) {
            /* refused before any communication, alike on every rank: rank 0 says why */
            rc = lead ? cli_fail(s) : cli_exit_status(s);
        } else if (pt_dist_size() > 1) {
            /* one rank's failure may leave the others waiting in a collective: end them all */
            fprintf(stderr, "ptron: rank %d of %d: %s\n", pt_dist_rank(), pt_dist_size(),
                    cli_message(pt_last_error()));
            pt_dist_abort(cli_exit_status(s));
        } else {
            rc = cli_fail(s);
        }
        goto out;
    }
    if (held.error != PT_OK) {
        rc = cli_fail(held.error);
        goto out;
    }
    /* the gamma the run used (a rule resolved from the data), as the model records it */
    const float gamma_asked = p.kernel.gamma;
    pt_train_params used;
    pt_train_params_init(&used);
    pt_model_get_params(m, &used);
    p.kernel.gamma = used.kernel.gamma;
    memcpy(p.kernel.expr, used.kernel.expr, sizeof p.kernel.expr);
    bool interrupted = s == PT_ERR_INTERRUPTED;
    char stop_msg[512];
    snprintf(stop_msg, sizeof stop_msg, "%s", interrupted ? cli_message(pt_last_error()) : "");
    if (o.test && held.epochs == 0 && !interrupted) {
        /* no epoch ran in this call (a resumed run that had finished): once, at the end */
        held.patience = 0;
        held.at_end = true;
        held.checkpoint = NULL;
        if (train_on_epoch(m, rep.epochs_run, 0, &held), held.error != PT_OK) {
            rc = cli_fail(held.error);
            goto out;
        }
    }
    int last_evaluated = held.epochs ? held.first_epoch + held.epochs - 1 : 0;
    bool stopped_early = held.best_model && last_evaluated > held.best_epoch;
    bool keep_best = held.best_model && (stopped_early || interrupted);
    if (keep_best) {
        /* keep the model of the best held-out epoch (final: early stopping is not resumed) */
        pt_model_free(m);
        m = held.best_model;
        held.best_model = NULL;
    }
    if (interrupted && pt_dist_size() > 1) {
        /* every rank stopped at the same point: the last mixed (online) or stepped (batch)
         * weights and where the run then stood, the same on every rank, which rank 0 writes */
        if (lead && pt_model_resumable(m))
            fprintf(stderr, "ptron: %s; saving the last model all %d ranks share to %s "
                            "(continue with mpirun ... --resume %s)\n", stop_msg,
                    pt_dist_size(), o.model, o.model);
        else if (lead)
            fprintf(stderr, "ptron: %s; saving the last model all %d ranks share to %s (it "
                            "cannot be resumed%s)\n", stop_msg, pt_dist_size(), o.model,
                    keep_best ? ": early stopping keeps the best model" : "");
    } else if (interrupted) {
        if (pt_model_resumable(m))
            fprintf(stderr, "ptron: %s; saving the model as it stands to %s (continue with "
                            "--resume %s)\n", stop_msg, o.model, o.model);
        else
            fprintf(stderr, "ptron: %s; saving %s to %s (it cannot be resumed%s)\n", stop_msg,
                    keep_best ? "the best held-out epoch's model" : "the model as it stands",
                    o.model, keep_best ? ": early stopping keeps the best model" : "");
    }

    train_test_late_signal();

    pt_eval ev = {0};
    char skipped[512];
    const bool skip = !accuracy_worth_it(&o, m, ds, &rep, skipped, sizeof skipped);
    if (skip && lead) fprintf(stderr, "ptron: warning: train accuracy skipped: %s\n", skipped);
    double eval_t0 = cli_now();
    /* the kernel path counted the final model's right predictions on these rows from the
     * kernel rows it kept (as evaluating the model would, without computing them again) */
    if (rep.train_scored && !interrupted && !keep_best && p.scale == PT_SCALE_NONE &&
        pt_dataset_dtype(ds) == PT_DTYPE_F32 && pt_dist_size() == 1) {
        size_t n = pt_dataset_n(ds);
        ev = (pt_eval){.n = n, .correct = rep.train_correct,
                       .accuracy = n ? (double)rep.train_correct / (double)n : 0.0};
        s = PT_OK;
        rep.train_seconds -= rep.score_seconds; /* reported as the evaluation's */
        eval_t0 -= rep.score_seconds;
    } else if (!skip) {
        s = pt_model_evaluate(m, ds, &ev);
    }
    double eval_s = cli_now() - eval_t0;
    if (s == PT_ERR_IO && pt_dist_size() == 1 && !interrupted && pt_dataset_intact(ds) != PT_OK) {
        /* DATA shrank after training: the model is whole, its training accuracy unknown */
        rc = save_before_shrink(&o, m, "the model, trained before, is");
        goto out;
    }
    if (s != PT_OK) {
        rc = cli_fail(s);
        goto out;
    }
    /* the passes the run made: an epoch an interrupt cut short counts as one */
    pt_run_bounds b;
    if (want_bounds &&
        (s = pt_bounds_for_run(ds, &p, reference, rep.epochs_run + (interrupted ? 1 : 0), &b)) != PT_OK) {
        rc = cli_fail(s);
        goto out;
    }
    if (o.proba && !interrupted) {
        /* Platt's sigmoid on out-of-fold scores: 5 folds from --seed, each trained as this run */
        double A, B;
        if ((s = pt_platt_fit(ds, &p, 5, p.seed, &A, &B)) != PT_OK ||
            (s = pt_model_set_platt(m, A, B)) != PT_OK) {
            rc = cli_fail(s);
            goto out;
        }
    }
    double write_t0 = cli_now();
    s = lead ? pt_model_save(m, o.model) : PT_OK; /* one rank writes the model */
    double write_s = cli_now() - write_t0;
    if (s != PT_OK) {
        rc = cli_fail(s);
        goto out;
    }
    if (held.failed_checkpoints)
        fprintf(stderr, "ptron: warning: %d of %d checkpoints could not be written to %s (last "
                        "reason: %s)\n", held.failed_checkpoints,
                held.checkpoints + held.failed_checkpoints, o.checkpoint,
                held.checkpoint_error[0] ? held.checkpoint_error : "see above");
    /* a signal during the evaluation or the save: the model is written whole (atomically), and
     * the exit status still says the run was stopped */
    if (train_signal() && !interrupted)
        fprintf(stderr, "ptron: %s after training finished; the final model was written to %s\n",
                train_signal() == SIGTERM ? "SIGTERM" : "SIGINT", o.model);

    pt_model_info mi;
    pt_model_get_info(m, &mi);
    train_result res = {.o = &o, .p = &p, .gamma_asked = gamma_asked, .n_support = mi.n_support,
                        .rep = &rep,
                        .n = pt_dataset_n_total(ds),
                        .d = pt_dataset_d(ds), .load_s = load_s, .eval_s = eval_s,
                        .write_s = write_s, .ev = &ev, .ev_skipped = skip ? skipped : NULL,
                        .held = &held,
                        .interrupted = interrupted, .stopped_early = stopped_early,
                        .b = want_bounds ? &b : NULL, .m = m};
    if (o.json) pt_dataset_get_info(ds, &res.data); /* a pass over the data (for R) */
    res.data.streamed = pt_dataset_streamed(ds) > 0;
    res.data.stream_rows = pt_dataset_streamed(ds);
    res.data.stream_pages = pt_dataset_stream_pages(ds);
    if (o.json) train_print_json(&res);
    else if (!o.quiet) train_print_text(&res);
    rc = interrupted || train_signal() ? train_signal_status() : EXIT_OK;
out:;
    train_signals_release();
    pt_train_report_clear(&rep);
    pt_model_free(held.best_model);
    pt_model_free(resume);
    pt_model_free(reference);
    pt_model_free(init);
    pt_dataset_free(held.data);
    free(held.acc);
    pt_model_free(m);
    pt_dataset_free(ds);
    free(default_model);
    free(class_weight);
    return rc;
}
