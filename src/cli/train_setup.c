/* What ptron train starts from, and the calls that train no model: --resume's run, --init's
 * weights, --class-weight, --bounds' reference separator; the checks of a run under mpirun;
 * --search and --cv. */
#include <stdlib.h>
#include <string.h>

#include "train.h"

/* --resume FILE: continue the recorded run with its own parameters (--epochs may extend it;
 * threads, ISA, pass and budgets are this call's; an option that contradicts the run is
 * refused: train_resume.c). Returns EXIT_OK to go on, else the exit status. */
int train_load_resume(const train_opts *o, pt_train_params *p, pt_model **resume)
{
    pt_status s = pt_model_load(o->resume, resume);
    if (s != PT_OK && pt_dist_size() > 1) {
        /* every rank reads the file: one that cannot would leave the others waiting */
        fprintf(stderr, "ptron: rank %d of %d: %s\n", pt_dist_rank(), pt_dist_size(),
                cli_message(pt_last_error()));
        pt_dist_abort(cli_exit_status(s));
    }
    if (s != PT_OK) return cli_fail(s);
    if (!pt_model_resumable(*resume)) {
        fprintf(stderr, "ptron: %s records no run in progress: it is a final model (only the "
                        "model of an interrupted run and --checkpoint files can be resumed)\n",
                o->resume);
        return EXIT_INPUT;
    }
    pt_train_params kept = *p;
    pt_model_get_params(*resume, p);
    int rc = train_resume_agrees(&o->given, &kept, p, o->resume);
    if (rc != EXIT_OK) return rc;
    if (o->epochs_given) p->epochs = kept.epochs;
    p->threads = kept.threads;
    p->isa = kept.isa;
    p->online.pass = kept.online.pass;
    p->mem_budget_bytes = kept.mem_budget_bytes;
    p->kernel.cache_mb = kept.kernel.cache_mb;
    p->stop = kept.stop;
    /* not in the model: given again, as under the run it continues */
    p->online.mix = kept.online.mix;
    p->online.shuffle_chunk = kept.online.shuffle_chunk;
    p->resume = *resume;
    return EXIT_OK;
}

/* --class-weight: the weights of the data's classes, into p (*weights: the caller frees them).
 * Returns EXIT_OK to go on, else the exit status. */
int train_class_weights(const train_opts *o, const pt_dataset *ds, pt_train_params *p,
                        float **weights)
{
    /* after --resume: a model does not keep the weights, so they are given again */
    if (!(*weights = malloc(pt_dataset_nclass(ds) * sizeof **weights)))
        return cli_fail(PT_ERR_NOMEM);
    if (pt_class_weights(ds, o->class_weight, *weights) != PT_OK)
        return cli_usage_error("train", "--class-weight: %s", pt_last_error());
    p->class_weight = *weights;
    p->class_weight_n = pt_dataset_nclass(ds);
    return EXIT_OK;
}

/* --init MODEL: start from its weights, once it is known to fit the data and the run. Returns
 * EXIT_OK to go on, else the exit status. */
int train_load_init(const train_opts *o, const pt_dataset *ds, pt_train_params *p,
                    pt_model **init)
{
    pt_status s = pt_model_load(o->init, init);
    if (s != PT_OK) return cli_fail(s);
    p->init = *init;
    if (pt_train_params_check(p) != PT_OK) return cli_usage_error("train", "%s", pt_last_error());
    if (pt_train_check(ds, p) != PT_OK) { /* the model does not fit the data */
        fprintf(stderr, "ptron: --init %s: %s\n", o->init, cli_message(pt_last_error()));
        return EXIT_INPUT;
    }
    return EXIT_OK;
}

/* --bounds: the reference separator (--reference MODEL, else the generator's w*), checked
 * against the run before training. Returns EXIT_OK to go on (*want false: no bounds, with a
 * warning), else the exit status. */
int train_bounds_reference(const pt_dataset *ds, const pt_train_params *p, const train_opts *o,
                           pt_model **ref, bool *want)
{
    *want = false;
    *ref = NULL;
    pt_status s;
    if (o->reference) {
        if ((s = pt_model_load(o->reference, ref)) != PT_OK) return cli_fail(s);
    } else if (!pt_dataset_truth(ds, NULL, NULL)) {
        fprintf(stderr, "ptron: warning: --bounds needs a reference separator: the data has no "
                        "generator w* (only .ptd files from `ptron gen` keep it); use --reference MODEL\n");
        return EXIT_OK;
    }
    if ((s = pt_bounds_check_reference(ds, p, *ref)) != PT_OK) {
        const char *msg = cli_message(pt_last_error());
        if (o->reference) fprintf(stderr, "ptron: --reference %s: %s\n", o->reference, msg);
        else fprintf(stderr, "ptron: --bounds: %s\n", msg);
        return EXIT_INPUT;
    }
    *want = true;
    return EXIT_OK;
}

/* Under mpirun on several ranks: what a distributed run does not do (the library refuses
 * the paths and parameters it does not cover). Rank 0 says why; every rank exits. */
int train_refuse_distributed(const train_opts *o, const pt_train_params *p)
{
    const char *no = o->cv ? "--cv" : o->search ? "--search" : o->proba ? "--proba"
                     : o->test && p->path == PT_PATH_KERNEL ? "--test on the kernel path"
                     : o->bounds ? "--bounds"
                     : o->class_weight && strstr(o->class_weight, "balanced")
                         ? "--class-weight balanced (counted on one rank's rows)"
                         : NULL;
    if (!no) return EXIT_OK;
    if (pt_dist_rank() == 0)
        fprintf(stderr, "ptron train: a distributed run (%d ranks under mpirun) does not support "
                        "%s yet\n", pt_dist_size(), no);
    return EXIT_USAGE;
}

/* Under mpirun on several ranks: every rank must be given the same run, else the ranks'
 * collectives would not match. The text compared: every parameter by name but those a rank
 * may set for itself (its resources, which a resumed run may change too: the model does not
 * depend on them), and the options of reading and of the run that are not parameters. A
 * command line refused on a rank (rc, its message printed there) counts as differing. Returns
 * rc, or EXIT_INPUT on every rank when they differ (rank 0 says how). */
int train_agree_options(const train_opts *o, const pt_train_params *p, int rc)
{
    static const char *const own[] = {"threads", "isa", "pass", "mem_budget_bytes", "cache_mb",
                                      "expand.mem_budget_bytes"};
    char text[16384], v[512];
    size_t at = 0;
#define ADD(...) \
    (at += (size_t)snprintf(text + at, at < sizeof text ? sizeof text - at : 0, __VA_ARGS__))
    if (rc != EXIT_OK) ADD("the command line=refused (that rank's message says why)\n");
    for (size_t i = 0; rc == EXIT_OK && pt_train_params_key(i); i++) {
        const char *key = pt_train_params_key(i);
        bool mine = false;
        for (size_t k = 0; k < sizeof own / sizeof own[0]; k++) mine |= strcmp(key, own[k]) == 0;
        if (!mine && pt_train_params_get(p, key, v, sizeof v) == PT_OK) ADD("%s=%s\n", key, v);
    }
    if (rc == EXIT_OK)
        ADD("mix=%s\nscale=%s\n--format=%s\n--max-features=%zu\n--delimiter=%d\n"
            "--label-column=%d %s\n--layout=%s\n--resume=%s\n--init=%s\n--class-weight=%s\n"
            "--test=%s\n--early-stop=%ld\n--cv=%zu\n--search=%d\n--proba=%d\n--bounds=%d\n",
            pt_mix_name(p->online.mix), pt_scale_kind_name(p->scale), o->format ? o->format : "",
            o->max_features, cli_csv_delimiter, cli_csv_label_column,
            cli_csv_label_name ? cli_csv_label_name : "", pt_layout_name(cli_layout),
            o->resume ? o->resume : "", o->init ? o->init : "",
            o->class_weight ? o->class_weight : "", o->test ? o->test : "", o->early_stop,
            o->cv, o->search, o->proba, o->bounds);
#undef ADD
    if (at >= sizeof text) text[sizeof text - 1] = '\0'; /* (not reached: a few KiB) */
    if (pt_dist_agree_text("options", text) == PT_OK) return rc;
    if (pt_dist_rank() == 0)
        fprintf(stderr, "ptron train: %s (every rank is given the same options; only --threads, "
                        "--isa, --pass, --mem-mb and --cache-mb may differ)\n", pt_last_error());
    return EXIT_INPUT;
}

/* --search's head: the text table's, or in --json an object whose "grid" the points fill. */
static void search_begin(const train_opts *o, const pt_dataset *ds, const pt_train_params *base,
                         json_out *j)
{
    if (o->json) {
        json_begin(j, stdout);
        json_str(j, "path", pt_path_name(base->path));
        json_int(j, "n", (long long)pt_dataset_n(ds));
        json_int(j, "cv_folds", (long long)o->cv);
        json_int(j, "cv_seed", (long long)base->seed);
        json_object_begin(j, "grid");
    } else if (!o->quiet) {
        printf("search on the %s path, %zu-fold cross-validation (stratified, seed %llu):\n",
               pt_path_name(base->path), o->cv, (unsigned long long)base->seed);
        printf("  %-52s %s\n", "options", "CV accuracy (mean +- std)");
    }
}

/* --search --json's end: the best point (best_desc NULL: the search stopped, no best). */
static void search_end_json(json_out *j, const char *best_desc, double best, double best_sd)
{
    json_object_end(j);
    if (best_desc) {
        json_str(j, "best", best_desc);
        json_num(j, "best_cv_mean_accuracy", best);
        json_num(j, "best_cv_std_accuracy", best_sd);
    }
    json_end(j);
}

/* --search: K-fold cross-validation (--cv K, default 5) at each point of the path's grid, a
 * table and the best point; no model. */
int train_search(const train_opts *o, const pt_dataset *ds, const pt_train_params *base)
{
    pt_cv_fold *folds = calloc(o->cv, sizeof *folds);
    if (!folds) return cli_fail(PT_ERR_NOMEM);
    char desc[256], best_desc[256] = "";
    double best = -1.0, best_sd = 0.0;
    json_out j;
    search_begin(o, ds, base, &j);
    int rc = EXIT_OK;
    pt_train_params p = *base;
    for (size_t i = 0; pt_search_point(&p, i, desc, sizeof desc); i++, p = *base) {
        double mean = 0.0, sd = 0.0;
        pt_status s = pt_train_params_check(&p);
        if (s == PT_OK) s = pt_cross_validate(ds, &p, o->cv, p.seed, folds, &mean, &sd);
        if (s == PT_ERR_INTERRUPTED || train_signal()) {
            fprintf(stderr, "ptron: search interrupted; nothing written\n");
            rc = train_signal_status();
            break;
        }
        if (s != PT_OK) {
            fprintf(stderr, "ptron: %s: %s\n", desc, cli_message(pt_last_error()));
            rc = cli_exit_status(s);
            break;
        }
        if (mean > best) {
            best = mean;
            best_sd = sd;
            snprintf(best_desc, sizeof best_desc, "%s", desc);
        }
        if (o->json) {
            double v[2] = {mean, sd};
            json_double_array(&j, desc, v, 2);
        } else if (!o->quiet) {
            printf("  %-52s %.4g%% +- %.2g%%\n", desc, 100.0 * mean, 100.0 * sd);
        }
    }
    if (o->json) search_end_json(&j, rc == EXIT_OK ? best_desc : NULL, best, best_sd);
    else if (!o->quiet && rc == EXIT_OK)
        printf("best: %s (CV accuracy %.4g%% +- %.2g%%)\n", best_desc, 100.0 * best,
               100.0 * best_sd);
    free(folds);
    return rc;
}

/* --cv K: each fold's held-out accuracy, their mean and standard deviation; no model. */
int train_cross_validate(const train_opts *o, const pt_dataset *ds, const pt_train_params *p)
{
    pt_cv_fold *folds = calloc(o->cv, sizeof *folds);
    if (!folds) return cli_fail(PT_ERR_NOMEM);
    double mean = 0.0, sd = 0.0;
    pt_status s = pt_cross_validate(ds, p, o->cv, p->seed, folds, &mean, &sd);
    int rc = EXIT_OK;
    if (s == PT_ERR_INTERRUPTED || train_signal()) {
        fprintf(stderr, "ptron: cross-validation interrupted; nothing written\n");
        rc = train_signal_status();
    } else if (s != PT_OK) {
        rc = cli_fail(s);
    } else if (o->json) {
        double *acc = malloc(o->cv * sizeof *acc);
        size_t *counts = malloc(2 * o->cv * sizeof *counts);
        if (!acc || !counts) {
            free(acc);
            free(counts);
            free(folds);
            return cli_fail(PT_ERR_NOMEM);
        }
        for (size_t f = 0; f < o->cv; f++) {
            acc[f] = folds[f].accuracy;
            counts[f] = folds[f].n_test;
            counts[o->cv + f] = folds[f].correct;
        }
        json_out j;
        json_begin(&j, stdout);
        json_str(&j, "path", pt_path_name(p->path));
        json_str(&j, "variant", pt_variant_name(p->variant));
        json_int(&j, "n", (long long)pt_dataset_n(ds));
        json_int(&j, "d", (long long)pt_dataset_d(ds));
        json_int(&j, "cv_folds", (long long)o->cv);
        json_int(&j, "cv_seed", (long long)p->seed);
        json_double_array(&j, "cv_accuracy", acc, o->cv);
        json_size_array(&j, "cv_test_rows", counts, o->cv);
        json_size_array(&j, "cv_correct", counts + o->cv, o->cv);
        json_num(&j, "cv_mean_accuracy", mean);
        json_num(&j, "cv_std_accuracy", sd);
        json_end(&j);
        free(acc);
        free(counts);
    } else if (!o->quiet) {
        printf("%zu-fold cross-validation (stratified, seed %llu), %s path (%s):\n", o->cv,
               (unsigned long long)p->seed, pt_path_name(p->path), pt_variant_name(p->variant));
        for (size_t f = 0; f < o->cv; f++)
            printf("  fold %zu: held-out accuracy %.4g%% (%zu/%zu), trained on %zu rows, %d "
                   "epoch%s\n", f + 1, 100.0 * folds[f].accuracy, folds[f].correct,
                   folds[f].n_test, folds[f].n_train, folds[f].epochs_run,
                   folds[f].epochs_run == 1 ? "" : "s");
        printf("Cross Validation Accuracy = %.4g%% +- %.2g%% (mean +- standard deviation over "
               "%zu folds)\n", 100.0 * mean, 100.0 * sd, o->cv);
    }
    free(folds);
    return rc;
}
