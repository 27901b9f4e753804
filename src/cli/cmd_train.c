/* ptron train FILE -o MODEL: every path behind one command. */
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* SIGINT and SIGTERM request a stop of the run's token: one that comes before training
 * starts stops it at once, one that comes after is seen once the model is saved. */
static volatile sig_atomic_t got_signal;
static pt_stop *stop_token;

static void on_signal(int sig)
{
    got_signal = sig;
    if (stop_token) pt_stop_request(stop_token);
}

typedef struct train_opts {
    const char *file, *model, *format, *reference, *test, *checkpoint, *resume, *init;
    const char *class_weight; /* --class-weight balanced|LABEL:W,... */
    size_t max_features;
    size_t cv; /* --cv K: K-fold cross-validation, no model written */
    long early_stop, checkpoint_every;
    bool epochs_given, batch_size_given, last_iterate, search, proba;
    bool json, quiet, bounds;
    bool train_accuracy; /* --train-accuracy: even where it would cost more than training */
    train_given given; /* the options as typed: --resume checks them against the saved run */
} train_opts;

/* Held-out evaluation after each epoch (--test), and early stopping (--early-stop N): stop
 * when the held-out accuracy has not improved for N epochs, and keep the best model. The same
 * hook writes the checkpoints. */
typedef struct heldout {
    const char *checkpoint; /* --checkpoint FILE, written every `every` epochs */
    long every;
    int checkpoints, failed_checkpoints; /* written, and not written (warned) */
    char checkpoint_error[512];
    pt_dataset *data;
    long patience;
    double *acc;     /* per epoch from first_epoch */
    int first_epoch; /* the first epoch evaluated (a resumed run starts after its earlier ones) */
    int epochs;      /* evaluated */
    double best;
    int best_epoch;
    pt_model *best_model;
    pt_status error;
    bool at_end; /* evaluated once after training, not per epoch */
} heldout;

/* A checkpoint that cannot be written does not stop a long run: a warning names the file and
 * the reason (once, and again when the reason changes), training goes on, and the end of the
 * run says how many were lost. */
static void write_checkpoint(heldout *h, const pt_model *m, int epoch)
{
    if (pt_model_save(m, h->checkpoint) == PT_OK) {
        if (h->failed_checkpoints && h->checkpoint_error[0])
            fprintf(stderr, "ptron: checkpoint of epoch %d written to %s again\n", epoch,
                    h->checkpoint);
        h->checkpoints++;
        h->checkpoint_error[0] = '\0';
        return;
    }
    h->failed_checkpoints++;
    if (strcmp(h->checkpoint_error, cli_message(pt_last_error())) != 0) {
        snprintf(h->checkpoint_error, sizeof h->checkpoint_error, "%s", cli_message(pt_last_error()));
        fprintf(stderr, "ptron: warning: checkpoint of epoch %d not written: %s; training goes "
                        "on (the model is still written to -o at the end)\n",
                epoch, h->checkpoint_error);
    }
}

static int on_epoch(const pt_model *m, int epoch, size_t mistakes, void *user)
{
    (void)mistakes;
    heldout *h = user;
    /* under mpirun every rank holds the same model here: rank 0 writes it */
    if (h->checkpoint && epoch % h->every == 0 && pt_dist_rank() == 0)
        write_checkpoint(h, m, epoch);
    if (!h->data) return 0;
    pt_eval ev;
    pt_status s = pt_model_evaluate(m, h->data, &ev);
    if (!h->epochs) h->first_epoch = epoch;
    double *a = s == PT_OK ? realloc(h->acc, (size_t)(h->epochs + 1) * sizeof *a) : NULL;
    if (s != PT_OK || !a) {
        h->error = s != PT_OK ? s : PT_ERR_NOMEM;
        return 1;
    }
    h->acc = a;
    h->acc[h->epochs++] = ev.accuracy;
    if (h->epochs == 1 || ev.accuracy > h->best) {
        h->best = ev.accuracy;
        h->best_epoch = epoch;
        if (h->patience > 0) {
            pt_model_free(h->best_model);
            if (!(h->best_model = pt_model_clone(m))) {
                h->error = PT_ERR_NOMEM;
                return 1;
            }
            pt_model_clear_run(h->best_model); /* the model kept is final, not a checkpoint */
        }
    }
    return h->patience > 0 && epoch - h->best_epoch >= h->patience;
}

/* Returns EXIT_OK to go on, else the exit status. */
static int parse(int argc, char **argv, train_opts *o, pt_train_params *p)
{
    cli_args a;
    cli_args_init(&a, argc, argv);
    const char *arg, *model_arg = NULL; /* train DATA MODEL, LIBLINEAR's order */
    long l;
    while ((arg = cli_next(&a)) && !a.error) {
        const int at = a.i; /* past the option: its value, when it takes the next argument */
        const char *inline_value = a.inline_value;
#define IS(name) (strcmp(arg, name) == 0)
        if (IS("-o") || IS("--output")) o->model = cli_value(&a, arg);
        else if (IS("--path")) {
            const char *v = cli_value(&a, arg);
            if (v && pt_path_parse(v, &p->path)) return cli_usage_error("train", "%s", pt_last_error());
        } else if (IS("--epochs")) {
            if (cli_int(&a, arg, 1, 1000000000, &l)) p->epochs = (int)l;
            o->epochs_given = true;
        } else if (IS("--eta")) {
            cli_float(&a, arg, 1e-30, 1e30, &p->eta);
        } else if (IS("--margin")) cli_float(&a, arg, 0.0, 1e30, &p->margin);
        else if (IS("--averaged")) p->variant = PT_VARIANT_AVERAGED;
        else if (IS("--voted")) p->variant = PT_VARIANT_VOTED;
        else if (IS("--voted-max-vectors")) cli_size(&a, arg, 1, SIZE_MAX, &p->online.voted_max_vectors);
        else if (IS("--train-accuracy")) o->train_accuracy = true;
        else if (IS("--shuffle")) p->shuffle = 1;
        else if (IS("--shuffle-chunk")) cli_size(&a, arg, 1, SIZE_MAX >> 1, &p->online.shuffle_chunk);
        else if (IS("--multiclass")) {
            const char *v = cli_value(&a, arg);
            if (v && pt_multiclass_parse(v, &p->multiclass)) return cli_usage_error("train", "%s", pt_last_error());
        } else if (IS("--test")) o->test = cli_value(&a, arg);
        else if (IS("--early-stop")) cli_int(&a, arg, 1, 1000000, &o->early_stop);
        else if (IS("--checkpoint")) o->checkpoint = cli_value(&a, arg);
        else if (IS("--checkpoint-every")) cli_int(&a, arg, 1, 1000000000, &o->checkpoint_every);
        else if (IS("--resume")) o->resume = cli_value(&a, arg);
        else if (IS("--init")) o->init = cli_value(&a, arg);
        else if (IS("--class-weight")) o->class_weight = cli_value(&a, arg);
        else if (IS("--cv")) cli_size(&a, arg, 2, 1000000, &o->cv);
        else if (IS("--search")) o->search = true;
        else if (IS("--proba")) o->proba = true;
        else if (IS("--scale")) {
            const char *v = cli_value(&a, arg);
            if (v && pt_scale_kind_parse(v, &p->scale))
                return cli_usage_error("train", "%s", pt_last_error());
        }
        else if (IS("--pass")) {
            const char *v = cli_value(&a, arg);
            if (v && pt_online_pass_parse(v, &p->online.pass)) return cli_usage_error("train", "%s", pt_last_error());
        }
        else if (IS("--seed")) cli_u64(&a, arg, &p->seed);
        else if (IS("--mix")) {
            const char *v = cli_value(&a, arg);
            if (v && pt_mix_parse(v, &p->online.mix)) return cli_usage_error("train", "%s", pt_last_error());
        }
        else if (IS("--no-bias")) p->bias = 0;
        else if (IS("--loss")) {
            const char *v = cli_value(&a, arg);
            if (v && pt_loss_parse(v, &p->batch.loss)) return cli_usage_error("train", "%s", pt_last_error());
        } else if (IS("--lambda")) cli_float(&a, arg, 0.0, 1e30, &p->batch.lambda);
        else if (IS("--batch-size")) {
            cli_size(&a, arg, 0, SIZE_MAX, &p->batch.size);
            o->batch_size_given = true;
        }
        else if (IS("--schedule")) {
            const char *v = cli_value(&a, arg);
            if (v && pt_schedule_parse(v, &p->batch.schedule)) return cli_usage_error("train", "%s", pt_last_error());
        } else if (IS("--tol")) cli_double(&a, arg, 0.0, 1.0, &p->batch.tol);
        else if (IS("--batch-impl")) {
            const char *v = cli_value(&a, arg);
            if (v && pt_batch_impl_parse(v, &p->batch.impl)) return cli_usage_error("train", "%s", pt_last_error());
        } else if (IS("--average-iterates")) p->batch.average_iterates = 1;
        else if (IS("--last-iterate")) o->last_iterate = true;
        else if (IS("--kernel")) {
            /* a name (linear, poly, rbf), else an expression (checked with the parameters) */
            const char *v = cli_value(&a, arg);
            if (v && pt_kernel_parse(v, &p->kernel.kind) != PT_OK) {
                if (strlen(v) >= sizeof p->kernel.expr)
                    return cli_usage_error("train", "--kernel: the expression is longer than "
                                           "%zu bytes", sizeof p->kernel.expr - 1);
                p->kernel.kind = PT_KERNEL_EXPR;
                memcpy(p->kernel.expr, v, strlen(v) + 1);
            }
        } else if (IS("--degree")) {
            if (cli_int(&a, arg, 1, 32, &l)) p->kernel.degree = (int)l;
        } else if (IS("--gamma")) {
            /* scale | auto | G */
            const char *v = a.i < a.argc ? a.argv[a.i] : NULL;
            if (v && (strcmp(v, "scale") == 0 || strcmp(v, "auto") == 0)) {
                cli_value(&a, arg);
                p->kernel.gamma = v[0] == 's' ? PT_GAMMA_SCALE : PT_GAMMA_AUTO;
            } else {
                cli_float(&a, arg, 1e-30, 1e30, &p->kernel.gamma);
            }
        }
        else if (IS("--coef0")) cli_float(&a, arg, -1e30, 1e30, &p->kernel.coef0);
        else if (IS("--hash-bits")) {
            long hb = 0;
            if (cli_int(&a, arg, 1, 31, &hb)) p->expand.hash_bits = (int)hb;
        }
        else if (IS("--expand")) {
            /* D or poly:D (polynomial), rff:D (random Fourier features) */
            const char *v = cli_value(&a, arg), *num = v;
            if (v && strncmp(v, "poly:", 5) == 0) num = v + 5;
            else if (v && strncmp(v, "rff:", 4) == 0) num = v + 4;
            char *end = NULL;
            long long k = num ? strtoll(num, &end, 10) : 0;
            if (v && (end == num || *end || k < 1 || (num == v + 4 ? k > (1LL << 40) : k > 32)))
                return cli_usage_error("train", "--expand: '%s' is not D, poly:D (D in 1..32) or "
                                       "rff:D", v);
            if (v) {
                p->expand.kind = num == v + 4 ? PT_EXPAND_RFF : PT_EXPAND_POLY;
                if (p->expand.kind == PT_EXPAND_RFF) p->expand.rff_dim = (size_t)k;
                else p->expand.degree = (int)k;
            }
        }
        else if (IS("--cache-mb")) cli_size(&a, arg, 1, SIZE_MAX / 2 >> 20, &p->kernel.cache_mb);
        else if (IS("--budget")) cli_size(&a, arg, 1, SIZE_MAX, &p->kernel.budget);
        else if (IS("--gram")) {
            const char *v = cli_value(&a, arg);
            if (v && pt_gram_storage_parse(v, &p->kernel.gram_storage)) return cli_usage_error("train", "%s", pt_last_error());
        } else if (IS("--threads")) {
            if (cli_int(&a, arg, 1, 4096, &l)) p->threads = (int)l;
        } else if (IS("--isa")) {
            const char *v = cli_value(&a, arg);
            if (v && pt_isa_parse(v, &p->isa)) return cli_usage_error("train", "%s", pt_last_error());
        } else if (IS("--bounds")) o->bounds = true;
        else if (IS("--reference")) o->reference = cli_value(&a, arg);
        else if (IS("--format")) o->format = cli_value(&a, arg);
        else if (IS("--delimiter")) cli_delimiter(&a, arg);
        else if (IS("--label-column")) cli_label_column(&a, arg);
        else if (IS("--layout")) cli_layout_opt(&a, arg);
        else if (IS("--max-features")) cli_size(&a, arg, 1, SIZE_MAX, &o->max_features);
        else if (IS("--mem-mb")) {
            if (cli_size(&a, arg, 1, SIZE_MAX >> 21, &cli_mem_mb)) p->mem_budget_bytes = cli_mem_mb << 20;
        } else if (IS("--json")) o->json = true;
        else if (IS("--quiet") || IS("-q")) o->quiet = true;
        else if (arg[0] == '-' && arg[1]) return cli_usage_error("train", "unknown option %s", arg);
        else if (!o->file) o->file = arg;
        else if (!model_arg) model_arg = arg;
        else return cli_usage_error("train", "unexpected argument '%s'", arg);
#undef IS
        if (arg[0] == '-' && arg[1])
            train_given_note(&o->given, arg, inline_value ? inline_value
                                             : a.i > at   ? a.argv[at]
                                                          : NULL);
    }
    if (a.error) return EXIT_USAGE;
    if (!o->file) return cli_usage_error("train", "missing FILE");
    if (model_arg && o->model)
        return cli_usage_error("train", "two model files: '%s' and -o %s (give one)", model_arg,
                               o->model);
    if (model_arg) o->model = model_arg;
    if (o->model && strcmp(o->model, "-") == 0)
        return cli_usage_error("train", "the model cannot go to standard output (-): the "
                               "summary is printed there; give the model's path");
    if (cli_is_std(o->checkpoint))
        return cli_usage_error("train", "--checkpoint -: a checkpoint is a file to resume from; "
                               "give its path");
    if (cli_is_std(o->file) && cli_is_std(o->test))
        return cli_usage_error("train", "DATA and --test both -: standard input can be read once");
    if (!o->model && strcmp(o->file, "-") == 0)
        return cli_usage_error("train", "data from standard input (-) has no default model "
                               "name: give one (train - MODEL, or -o MODEL)");
    if (o->last_iterate && p->batch.average_iterates)
        return cli_usage_error("train", "--average-iterates and --last-iterate exclude each other");
    /* The batch path's defaults: averaged mini-batches (ptron help train says why) */
    if (p->path == PT_PATH_BATCH) {
        if (!o->batch_size_given) p->batch.size = CLI_BATCH_SIZE;
        if (!o->last_iterate) p->batch.average_iterates = 1;
    }
    if (p->expand.hash_bits && p->expand.kind != PT_EXPAND_POLY)
        return cli_usage_error("train", "--hash-bits goes with --expand D or poly:D");
    /* --expand reuses --coef0 (poly), --gamma and --seed (rff, --hash-bits) */
    p->expand.coef0 = p->kernel.coef0;
    if (p->kernel.gamma > 0.0f) p->expand.gamma = p->kernel.gamma; /* a rule: the expansion's own default */
    p->expand.seed = p->seed;
    if (o->early_stop && !o->test) return cli_usage_error("train", "--early-stop needs --test FILE");
    if ((o->cv || o->search) &&
        (o->model || o->test || o->checkpoint || o->resume || o->init || o->bounds))
        return cli_usage_error("train", "%s trains models on the folds and writes none: -o, "
                               "--test, --checkpoint, --resume, --init and --bounds do not apply",
                               o->search ? "--search" : "--cv K");
    if (o->proba && (o->cv || o->search))
        return cli_usage_error("train", "--proba fits probabilities for the model written: "
                               "--cv and --search write none");
    if (o->search && !o->cv) o->cv = 5;
    if (o->checkpoint_every && !o->checkpoint)
        return cli_usage_error("train", "--checkpoint-every needs --checkpoint FILE");
    /* --init random (a model file named "random": ./random) */
    p->init_random = o->init && strcmp(o->init, "random") == 0;
    if (o->init && o->resume)
        return cli_usage_error("train", "--init and --resume: a resumed run continues its own weights");
    if (o->early_stop && o->resume)
        return cli_usage_error("train", "--early-stop cannot continue a run (--resume): the "
                               "held-out record it stops on is not kept in the model");
    if (pt_train_params_check(p) != PT_OK) return cli_usage_error("train", "%s", pt_last_error());
    /* (a model written over --resume's or --init's is fine: it is read before training) */
    return cli_refuse_same_file(
        "train", (const cli_file[]){{model_arg ? "MODEL" : "-o", o->model}, {"--checkpoint", o->checkpoint}, {NULL, NULL}},
        (const cli_file[]){{"DATA", o->file}, {"--test", o->test}, {NULL, NULL}});
}

/* --bounds: the reference separator (--reference MODEL, else the generator's w*), checked
 * against the run before training. Returns EXIT_OK to go on (*want false: no bounds, with a
 * warning), else the exit status. */
static int bounds_reference(const pt_dataset *ds, const pt_train_params *p, const train_opts *o,
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

/* --resume FILE: continue the recorded run with its own parameters (--epochs may extend it;
 * threads, ISA, pass and budgets are this call's; an option that contradicts the run is
 * refused: train_resume.c). Returns EXIT_OK to go on, else the exit status. */
static int load_resume(const train_opts *o, pt_train_params *p, pt_model **resume)
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

/* --init MODEL: start from its weights, once it is known to fit the data and the run. Returns
 * EXIT_OK to go on, else the exit status. */
static int load_init(const train_opts *o, const pt_dataset *ds, pt_train_params *p,
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

/* What a run that trained reports (--json or the text summary). */
typedef struct train_result {
    const train_opts *o;
    const pt_train_params *p;
    float gamma_asked; /* p->gamma as given: a number or a rule (p->gamma: the number used) */
    size_t n_support;  /* kernel models: support vectors (all classes) */
    const pt_train_report *rep;
    size_t n, d;
    pt_dataset_info data; /* the training data as read: layout, nnz, density, bytes */
    double load_s;
    double eval_s, write_s; /* the training accuracy's pass; the model's save */
    const pt_eval *ev;     /* on the training data */
    const char *ev_skipped; /* why the training accuracy was not computed, or NULL */
    const heldout *held;   /* --test */
    bool interrupted, stopped_early;
    const pt_run_bounds *b; /* --bounds, or NULL */
    const pt_model *m;      /* the model written */
} train_result;

/* How gamma was chosen: "scale", "auto" or "given". */
static const char *gamma_rule(float asked)
{
    return asked == PT_GAMMA_SCALE ? "scale" : asked == PT_GAMMA_AUTO ? "auto" : "given";
}

/* --json: one object on stdout. */
static void print_json(const train_result *t)
{
    const train_opts *o = t->o;
    const pt_train_params *p = t->p;
    const pt_train_report *rep = t->rep;
    const heldout *held = t->held;
    const pt_eval *ev = t->ev;
    const pt_run_bounds *b = t->b;
    int ran = rep->epochs_run - rep->epochs_before; /* the epochs this call trained */
    double samples = (double)t->n * ran;
    json_out j;
    json_begin(&j, stdout);
    json_str(&j, "path", pt_path_name(p->path));
    json_str(&j, "variant", pt_variant_name(p->variant));
    json_str(&j, "isa", pt_isa_name(rep->isa));
    json_int(&j, "threads", rep->threads);
    if (pt_dist_launched()) { /* under mpirun */
        json_int(&j, "ranks", pt_dist_size());
        json_num(&j, "comm_seconds", pt_dist_comm_seconds());
    }
    json_int(&j, "n", (long long)t->n);
    json_int(&j, "d", (long long)t->d);
    json_str(&j, "layout", pt_layout_name(t->data.layout));
    json_int(&j, "nnz", (long long)t->data.nnz);
    json_num(&j, "density", t->data.density);
    json_int(&j, "data_bytes", (long long)t->data.bytes);
    json_str(&j, "dtype", pt_dtype_name(t->data.dtype));
    /* in memory, or streamed from the file a window at a time; what an epoch reads (the GEMV
     * batch pass reads the rows twice) */
    json_str(&j, "data_mode", t->data.streamed ? "streamed" : "in memory");
    json_int(&j, "bytes_per_epoch", (long long)t->data.bytes *
             (p->path == PT_PATH_BATCH && p->batch.impl == PT_BATCH_GEMV ? 2 : 1));
    if (t->data.streamed) json_int(&j, "stream_rows", (long long)t->data.stream_rows);
    if (t->data.stream_pages) json_str(&j, "stream_pages", t->data.stream_pages);
    if (p->shuffle && (p->online.shuffle_chunk || t->data.streamed))
        json_int(&j, "shuffle_chunk",
                 (long long)(p->online.shuffle_chunk ? p->online.shuffle_chunk : t->data.stream_rows));
    if (p->expand.kind != PT_EXPAND_NONE)
        json_int(&j, "expanded_d", (long long)pt_expand_dim(&p->expand, t->d));
    if (o->init) json_str(&j, "init", p->init_random ? "random" : o->init);
    if (p->path == PT_PATH_KERNEL) {
        json_str(&j, "kernel", pt_kernel_name(p->kernel.kind));
        if (p->kernel.kind == PT_KERNEL_EXPR) json_str(&j, "kernel_expr", p->kernel.expr);
        if (p->kernel.kind == PT_KERNEL_POLY) json_int(&j, "degree", p->kernel.degree);
        if (p->kernel.kind == PT_KERNEL_POLY || p->kernel.kind == PT_KERNEL_RBF) {
            json_num(&j, "gamma", p->kernel.gamma);
            json_str(&j, "gamma_rule", gamma_rule(t->gamma_asked));
        }
        if (p->kernel.kind == PT_KERNEL_POLY) json_num(&j, "coef0", p->kernel.coef0);
        if (p->kernel.budget) json_int(&j, "budget", (long long)p->kernel.budget);
        json_int(&j, "support_vectors", (long long)t->n_support);
    }
    if (p->scale != PT_SCALE_NONE) json_str(&j, "scale", pt_scale_kind_name(p->scale));
    if (o->class_weight) json_str(&j, "class_weight", o->class_weight);
    double pa, pb;
    if (o->proba && pt_model_platt(t->m, &pa, &pb)) {
        json_num(&j, "platt_a", pa);
        json_num(&j, "platt_b", pb);
    }
    json_int(&j, "epochs_run", rep->epochs_run);
    if (rep->epochs_before) json_int(&j, "epochs_before", rep->epochs_before);
    json_size_array(&j, "mistakes_per_epoch", rep->mistakes_per_epoch, (size_t)ran);
    if (rep->objective_per_epoch)
        json_double_array(&j, "objective_per_epoch", rep->objective_per_epoch, (size_t)ran);
    if (rep->comm_seconds_per_epoch)
        json_double_array(&j, "comm_seconds_per_epoch", rep->comm_seconds_per_epoch, (size_t)ran);
    if (rep->seconds_per_epoch)
        json_double_array(&j, "seconds_per_epoch", rep->seconds_per_epoch, (size_t)ran);
    json_int(&j, "updates", (long long)rep->updates);
    json_bool(&j, "converged", rep->converged);
    json_bool(&j, "interrupted", t->interrupted);
    if (held->at_end) {
        json_num(&j, "test_accuracy", held->best);
    } else if (held->epochs) {
        json_double_array(&j, "test_accuracy_per_epoch", held->acc, (size_t)held->epochs);
        json_num(&j, "best_test_accuracy", held->best);
        json_int(&j, "best_epoch", held->best_epoch);
        json_bool(&j, "stopped_early", t->stopped_early);
    }
    json_num(&j, "load_seconds", t->load_s);
    json_num(&j, "train_seconds", rep->train_seconds);
    /* the stages one after another: load, train (of which gram: kernel values), the training
     * accuracy's evaluation, the model's write */
    if (p->path == PT_PATH_KERNEL) json_num(&j, "gram_seconds", rep->gram_seconds);
    json_num(&j, "evaluate_seconds", t->eval_s);
    json_num(&j, "write_seconds", t->write_s);
    json_num(&j, "samples_per_second",
             rep->train_seconds > 0 ? samples / rep->train_seconds : 0.0);
    json_num(&j, "train_accuracy", t->ev_skipped ? NAN : ev->accuracy); /* NAN: null */
    if (t->ev_skipped) json_str(&j, "train_accuracy_skipped", t->ev_skipped);
    json_str(&j, "model", o->model);
    if (b) {
        /* a bound's keys only where it covers the run: mistake_bound is the separable one
         * ((R^2 + 2 tau/eta)/gamma^2), hinge_mistake_bound the hinge one over passes */
        json_object_begin(&j, "bounds");
        json_bool(&j, "covered", b->covered);
        if (!b->covered) json_str(&j, "reason", b->reason);
        json_str(&j, "space", b->space);
        if (isfinite(b->R)) {
            json_num(&j, "R", b->R);
            json_num(&j, "gamma", b->gamma);
        }
        if (b->covered) {
            json_num(&j, "margin", b->tau);
            json_num(&j, "eta", b->eta);
            json_int(&j, "passes", b->passes);
            json_int(&j, "updates", (long long)rep->updates);
            if (b->separable) {
                json_num(&j, "mistake_bound", b->separable_bound);
                json_bool(&j, "mistake_bound_holds", (double)rep->updates <= b->separable_bound);
            }
            json_num(&j, "hinge_mistake_bound", b->hinge_bound);
            json_bool(&j, "hinge_mistake_bound_holds", (double)rep->updates <= b->hinge_bound);
            json_num(&j, "hinge_loss", b->hinge_loss);
            json_num(&j, "wstar_norm", b->hinge_scale);
        }
        json_object_end(&j);
    }
    json_end(&j);
}

/* The text summary on stdout. */
static void print_text(const train_result *t)
{
    const train_opts *o = t->o;
    const pt_train_params *p = t->p;
    const pt_train_report *rep = t->rep;
    const heldout *held = t->held;
    const pt_eval *ev = t->ev;
    const pt_run_bounds *b = t->b;
    int ran = rep->epochs_run - rep->epochs_before; /* the epochs this call trained */
    double samples = (double)t->n * ran;
    printf("%s path (%s, %s, %d thread%s): %d epoch%s, %zu updates, %s\n", pt_path_name(p->path),
           pt_variant_name(p->variant), pt_isa_name(rep->isa), rep->threads,
           rep->threads == 1 ? "" : "s", rep->epochs_run, rep->epochs_run == 1 ? "" : "s",
           rep->updates, rep->converged ? "converged (an epoch with no mistake)" : "not converged");
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
    if (rep->epochs_before) printf("mistakes per epoch from epoch %d:", rep->epochs_before + 1);
    else printf("mistakes per epoch:");
    for (int e = 0; e < ran && e < 20; e++) printf(" %zu", rep->mistakes_per_epoch[e]);
    printf(ran > 20 ? " ...\n" : "\n");
    if (t->ev_skipped) printf("train accuracy: skipped (%s)\n", t->ev_skipped);
    else printf("train accuracy = %.4g%% (%zu/%zu)\n", 100.0 * ev->accuracy, ev->correct, ev->n);
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
    printf("load %.3f s, train %.3f s (%.3g samples/s)\n", t->load_s, rep->train_seconds,
           rep->train_seconds > 0 ? samples / rep->train_seconds : 0.0);
    if (b) print_bounds(b, o, p->bias, rep->updates);
    printf("model written to %s\n", o->model);
}

/* The exit status of a run stopped by a signal. */
static int signal_status(void);

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

/* --search: K-fold cross-validation (--cv K, default 5) at each point of the path's grid, a
 * table and the best point; no model. */
static int search(const train_opts *o, const pt_dataset *ds, const pt_train_params *base)
{
    pt_cv_fold *folds = calloc(o->cv, sizeof *folds);
    if (!folds) return cli_fail(PT_ERR_NOMEM);
    char desc[256], best_desc[256] = "";
    double best = -1.0, best_sd = 0.0;
    json_out j;
    if (o->json) {
        json_begin(&j, stdout);
        json_str(&j, "path", pt_path_name(base->path));
        json_int(&j, "n", (long long)pt_dataset_n(ds));
        json_int(&j, "cv_folds", (long long)o->cv);
        json_int(&j, "cv_seed", (long long)base->seed);
        json_object_begin(&j, "grid");
    } else if (!o->quiet) {
        printf("search on the %s path, %zu-fold cross-validation (stratified, seed %llu):\n",
               pt_path_name(base->path), o->cv, (unsigned long long)base->seed);
        printf("  %-52s %s\n", "options", "CV accuracy (mean +- std)");
    }
    int rc = EXIT_OK;
    pt_train_params p = *base;
    for (size_t i = 0; pt_search_point(&p, i, desc, sizeof desc); i++, p = *base) {
        double mean = 0.0, sd = 0.0;
        pt_status s = pt_train_params_check(&p);
        if (s == PT_OK) s = pt_cross_validate(ds, &p, o->cv, p.seed, folds, &mean, &sd);
        if (s == PT_ERR_INTERRUPTED || got_signal) {
            fprintf(stderr, "ptron: search interrupted; nothing written\n");
            rc = signal_status();
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
    if (o->json) {
        json_object_end(&j);
        if (rc == EXIT_OK) {
            json_str(&j, "best", best_desc);
            json_num(&j, "best_cv_mean_accuracy", best);
            json_num(&j, "best_cv_std_accuracy", best_sd);
        }
        json_end(&j);
    } else if (!o->quiet && rc == EXIT_OK) {
        printf("best: %s (CV accuracy %.4g%% +- %.2g%%)\n", best_desc, 100.0 * best,
               100.0 * best_sd);
    }
    free(folds);
    return rc;
}

/* --cv K: each fold's held-out accuracy, their mean and standard deviation; no model. */
static int cross_validate(const train_opts *o, const pt_dataset *ds, const pt_train_params *p)
{
    pt_cv_fold *folds = calloc(o->cv, sizeof *folds);
    if (!folds) return cli_fail(PT_ERR_NOMEM);
    double mean = 0.0, sd = 0.0;
    pt_status s = pt_cross_validate(ds, p, o->cv, p->seed, folds, &mean, &sd);
    int rc = EXIT_OK;
    if (s == PT_ERR_INTERRUPTED || got_signal) {
        fprintf(stderr, "ptron: cross-validation interrupted; nothing written\n");
        rc = signal_status();
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

static int signal_status(void) { return got_signal == SIGTERM ? EXIT_SIGTERM : EXIT_SIGINT; }

/* Test hooks (tests/mpi/mpi.sh), not part of the CLI: PTRON_TEST_KILL_RANK=R:E kills rank R
 * with SIGKILL at the end of its epoch E, while the other ranks go on into the next epoch's
 * collectives: the run must end on every rank, with no model written. PTRON_TEST_STOP_RANK=R:E
 * makes rank R alone act as if SIGINT came at the end of epoch E: every rank must stop and
 * rank 0 write the model of the last mixed epoch. */
static int kill_rank = -1, kill_epoch, stop_rank = -1, stop_epoch;

static int progress_or_kill(int epoch, size_t mistakes, double seconds, void *user)
{
    if (epoch == kill_epoch && pt_dist_rank() == kill_rank) raise(SIGKILL);
    if (epoch == stop_epoch && pt_dist_rank() == stop_rank) on_signal(SIGINT);
    return progress_epoch(epoch, mistakes, seconds, user);
}

/* Under mpirun on several ranks: what a distributed run does not do (the library refuses
 * the paths and parameters it does not cover). Rank 0 says why; every rank exits. */
static int refuse_distributed(const train_opts *o, const pt_train_params *p)
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
static int agree_options(const train_opts *o, const pt_train_params *p, int rc)
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

int cmd_train(int argc, char **argv)
{
    train_opts o = {0};
    pt_train_params p;
    pt_train_params_init(&p);
    int rc = parse(argc, argv, &o, &p);
    if (pt_dist_size() > 1) rc = agree_options(&o, &p, rc);
    if (rc != EXIT_OK) return rc;
    /* under mpirun: each rank trains on its share; only rank 0 prints and writes */
    const bool dist = pt_dist_launched(), lead = pt_dist_rank() == 0;
    if (pt_dist_size() > 1 && (rc = refuse_distributed(&o, &p)) != EXIT_OK) return rc;
    if (!lead) {
        o.quiet = true;
        o.json = false;
    }
    cli_install_log(o.quiet || o.json);
    /* from here on SIGINT and SIGTERM ask training to stop; the run then saves what it has */
    if (!(stop_token = pt_stop_create())) return cli_fail(PT_ERR_NOMEM);
    p.stop = stop_token;
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

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

    if (o.resume && (rc = load_resume(&o, &p, &resume)) != EXIT_OK) goto out;
    if (o.class_weight) {
        /* after --resume: a model does not keep the weights, so they are given again */
        if (!(class_weight = malloc(pt_dataset_nclass(ds) * sizeof *class_weight))) {
            rc = cli_fail(PT_ERR_NOMEM);
            goto out;
        }
        if (pt_class_weights(ds, o.class_weight, class_weight) != PT_OK) {
            rc = cli_usage_error("train", "--class-weight: %s", pt_last_error());
            goto out;
        }
        p.class_weight = class_weight;
        p.class_weight_n = pt_dataset_nclass(ds);
    }
    if (o.init && !p.init_random && (rc = load_init(&o, ds, &p, &init)) != EXIT_OK) goto out;
    if (o.bounds && (rc = bounds_reference(ds, &p, &o, &reference, &want_bounds)) != EXIT_OK)
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
        rc = search(&o, ds, &p);
        goto out;
    }
    if (o.cv) {
        rc = cross_validate(&o, ds, &p);
        goto out;
    }
    if (o.test || o.checkpoint) {
        p.epoch_hook = on_epoch;
        p.epoch_user = &held;
    }

    progress prog;
    progress_init(&prog, o.quiet || o.json, p.epochs, pt_dataset_n(ds));
    p.progress = progress_epoch;
    p.progress_user = &prog;
    const char *kill_at = getenv("PTRON_TEST_KILL_RANK"), *stop_at = getenv("PTRON_TEST_STOP_RANK");
    if ((kill_at && sscanf(kill_at, "%d:%d", &kill_rank, &kill_epoch) == 2) ||
        (stop_at && sscanf(stop_at, "%d:%d", &stop_rank, &stop_epoch) == 2))
        p.progress = progress_or_kill;

    if (got_signal) {
        /* before training began: there is nothing to save */
        fprintf(stderr, "ptron: interrupted before training began; nothing written\n");
        rc = signal_status();
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
        if (on_epoch(m, rep.epochs_run, 0, &held), held.error != PT_OK) {
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

    /* Test hook (tests/test_cli.c), not part of the CLI: a signal that arrives once training
     * is over, during the final evaluation and save. */
    const char *late = getenv("PTRON_TEST_SIGNAL_AFTER_TRAINING");
    if (late) raise(strcmp(late, "TERM") == 0 ? SIGTERM : SIGINT);

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
    if (got_signal && !interrupted)
        fprintf(stderr, "ptron: %s after training finished; the final model was written to %s\n",
                got_signal == SIGTERM ? "SIGTERM" : "SIGINT", o.model);

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
    if (o.json) print_json(&res);
    else if (!o.quiet) print_text(&res);
    rc = interrupted || got_signal ? signal_status() : EXIT_OK;
out:;
    /* the handler (still installed) finds no token once it is gone */
    pt_stop *token = stop_token;
    stop_token = NULL;
    pt_stop_free(token);
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
