/* ptron train's command line: the options into train_opts and pt_train_params, then the
 * combinations they exclude and the CLI's own defaults. Each group of options below is one
 * chain of names; an option no group knows is a usage error. */
#include <stdlib.h>
#include <string.h>

#include "train.h"

/* A group's answer for an option that is none of its own (exit statuses are >= 0). */
enum { UNMATCHED = -1 };

#define IS(name) (strcmp(arg, name) == 0)

/* -o, and the options of the call around the run: evaluation, checkpoints, the models it
 * starts from, what it reports. */
static int call_option(cli_args *a, const char *arg, train_opts *o)
{
    if (IS("-o") || IS("--output")) o->model = cli_value(a, arg);
    else if (IS("--train-accuracy")) o->train_accuracy = true;
    else if (IS("--test")) o->test = cli_value(a, arg);
    else if (IS("--early-stop")) cli_int(a, arg, 1, 1000000, &o->early_stop);
    else if (IS("--checkpoint")) o->checkpoint = cli_value(a, arg);
    else if (IS("--checkpoint-every")) cli_int(a, arg, 1, 1000000000, &o->checkpoint_every);
    else if (IS("--resume")) o->resume = cli_value(a, arg);
    else if (IS("--init")) o->init = cli_value(a, arg);
    else if (IS("--class-weight")) o->class_weight = cli_value(a, arg);
    else if (IS("--cv")) cli_size(a, arg, 2, 1000000, &o->cv);
    else if (IS("--search")) o->search = true;
    else if (IS("--proba")) o->proba = true;
    else if (IS("--bounds")) o->bounds = true;
    else if (IS("--reference")) o->reference = cli_value(a, arg);
    else if (IS("--json")) o->json = true;
    else if (IS("--quiet") || IS("-q")) o->quiet = true;
    else return UNMATCHED;
    return EXIT_OK;
}

/* The run's options every path shares, and the online path's. */
static int run_option(cli_args *a, const char *arg, train_opts *o, pt_train_params *p)
{
    long l;
    if (IS("--path")) {
        const char *v = cli_value(a, arg);
        if (v && pt_path_parse(v, &p->path)) return cli_usage_error("train", "%s", pt_last_error());
    } else if (IS("--epochs")) {
        if (cli_int(a, arg, 1, 1000000000, &l)) p->epochs = (int)l;
        o->epochs_given = true;
    } else if (IS("--eta")) {
        cli_float(a, arg, 1e-30, 1e30, &p->eta);
    } else if (IS("--margin")) cli_float(a, arg, 0.0, 1e30, &p->margin);
    else if (IS("--averaged")) p->variant = PT_VARIANT_AVERAGED;
    else if (IS("--voted")) p->variant = PT_VARIANT_VOTED;
    else if (IS("--voted-max-vectors")) cli_size(a, arg, 1, SIZE_MAX, &p->online.voted_max_vectors);
    else if (IS("--shuffle")) p->shuffle = 1;
    else if (IS("--shuffle-chunk")) cli_size(a, arg, 1, SIZE_MAX >> 1, &p->online.shuffle_chunk);
    else if (IS("--multiclass")) {
        const char *v = cli_value(a, arg);
        if (v && pt_multiclass_parse(v, &p->multiclass)) return cli_usage_error("train", "%s", pt_last_error());
    } else if (IS("--scale")) {
        const char *v = cli_value(a, arg);
        if (v && pt_scale_kind_parse(v, &p->scale))
            return cli_usage_error("train", "%s", pt_last_error());
    }
    else if (IS("--pass")) {
        const char *v = cli_value(a, arg);
        if (v && pt_online_pass_parse(v, &p->online.pass)) return cli_usage_error("train", "%s", pt_last_error());
    }
    else if (IS("--seed")) cli_u64(a, arg, &p->seed);
    else if (IS("--mix")) {
        const char *v = cli_value(a, arg);
        if (v && pt_mix_parse(v, &p->online.mix)) return cli_usage_error("train", "%s", pt_last_error());
    }
    else if (IS("--no-bias")) p->bias = 0;
    else return UNMATCHED;
    return EXIT_OK;
}

/* The batch path's options. */
static int batch_option(cli_args *a, const char *arg, train_opts *o, pt_train_params *p)
{
    if (IS("--loss")) {
        const char *v = cli_value(a, arg);
        if (v && pt_loss_parse(v, &p->batch.loss)) return cli_usage_error("train", "%s", pt_last_error());
    } else if (IS("--lambda")) cli_float(a, arg, 0.0, 1e30, &p->batch.lambda);
    else if (IS("--batch-size")) {
        cli_size(a, arg, 0, SIZE_MAX, &p->batch.size);
        o->batch_size_given = true;
    }
    else if (IS("--schedule")) {
        const char *v = cli_value(a, arg);
        if (v && pt_schedule_parse(v, &p->batch.schedule)) return cli_usage_error("train", "%s", pt_last_error());
    } else if (IS("--tol")) cli_double(a, arg, 0.0, 1.0, &p->batch.tol);
    else if (IS("--batch-impl")) {
        const char *v = cli_value(a, arg);
        if (v && pt_batch_impl_parse(v, &p->batch.impl)) return cli_usage_error("train", "%s", pt_last_error());
    } else if (IS("--average-iterates")) p->batch.average_iterates = 1;
    else if (IS("--last-iterate")) o->last_iterate = true;
    else return UNMATCHED;
    return EXIT_OK;
}

/* --kernel NAME|EXPR: a name (linear, poly, rbf), else an expression (checked with the
 * parameters). */
static int kernel_arg(cli_args *a, const char *arg, pt_train_params *p)
{
    const char *v = cli_value(a, arg);
    if (v && pt_kernel_parse(v, &p->kernel.kind) != PT_OK) {
        if (strlen(v) >= sizeof p->kernel.expr)
            return cli_usage_error("train", "--kernel: the expression is longer than "
                                   "%zu bytes", sizeof p->kernel.expr - 1);
        p->kernel.kind = PT_KERNEL_EXPR;
        memcpy(p->kernel.expr, v, strlen(v) + 1);
    }
    return EXIT_OK;
}

/* --expand D or poly:D (polynomial), rff:D (random Fourier features). */
static int expand_arg(cli_args *a, const char *arg, pt_train_params *p)
{
    const char *v = cli_value(a, arg), *num = v;
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
    return EXIT_OK;
}

/* The kernel path's options, and the expansion's. */
static int kernel_option(cli_args *a, const char *arg, pt_train_params *p)
{
    long l;
    if (IS("--kernel")) return kernel_arg(a, arg, p);
    else if (IS("--degree")) {
        if (cli_int(a, arg, 1, 32, &l)) p->kernel.degree = (int)l;
    } else if (IS("--gamma")) {
        /* scale | auto | G */
        const char *v = a->i < a->argc ? a->argv[a->i] : NULL;
        if (v && (strcmp(v, "scale") == 0 || strcmp(v, "auto") == 0)) {
            cli_value(a, arg);
            p->kernel.gamma = v[0] == 's' ? PT_GAMMA_SCALE : PT_GAMMA_AUTO;
        } else {
            cli_float(a, arg, 1e-30, 1e30, &p->kernel.gamma);
        }
    }
    else if (IS("--coef0")) cli_float(a, arg, -1e30, 1e30, &p->kernel.coef0);
    else if (IS("--hash-bits")) {
        long hb = 0;
        if (cli_int(a, arg, 1, 31, &hb)) p->expand.hash_bits = (int)hb;
    }
    else if (IS("--expand")) return expand_arg(a, arg, p);
    else if (IS("--cache-mb")) cli_size(a, arg, 1, SIZE_MAX / 2 >> 20, &p->kernel.cache_mb);
    else if (IS("--budget")) cli_size(a, arg, 1, SIZE_MAX, &p->kernel.budget);
    else if (IS("--gram")) {
        const char *v = cli_value(a, arg);
        if (v && pt_gram_storage_parse(v, &p->kernel.gram_storage)) return cli_usage_error("train", "%s", pt_last_error());
    } else return UNMATCHED;
    return EXIT_OK;
}

/* The options of reading the data, and of the machine the run uses. */
static int data_option(cli_args *a, const char *arg, train_opts *o, pt_train_params *p)
{
    long l;
    if (IS("--threads")) {
        if (cli_int(a, arg, 1, 4096, &l)) p->threads = (int)l;
    } else if (IS("--isa")) {
        const char *v = cli_value(a, arg);
        if (v && pt_isa_parse(v, &p->isa)) return cli_usage_error("train", "%s", pt_last_error());
    } else if (IS("--format")) o->format = cli_value(a, arg);
    else if (IS("--delimiter")) cli_delimiter(a, arg);
    else if (IS("--label-column")) cli_label_column(a, arg);
    else if (IS("--layout")) cli_layout_opt(a, arg);
    else if (IS("--max-features")) cli_size(a, arg, 1, SIZE_MAX, &o->max_features);
    else if (IS("--mem-mb")) {
        if (cli_size(a, arg, 1, SIZE_MAX >> 21, &cli_mem_mb)) p->mem_budget_bytes = cli_mem_mb << 20;
    } else return UNMATCHED;
    return EXIT_OK;
}

#undef IS

/* FILE, then MODEL (train DATA MODEL, LIBLINEAR's order: *model_arg). */
static int positional(const char *arg, train_opts *o, const char **model_arg)
{
    if (arg[0] == '-' && arg[1]) return cli_usage_error("train", "unknown option %s", arg);
    else if (!o->file) o->file = arg;
    else if (!*model_arg) *model_arg = arg;
    else return cli_usage_error("train", "unexpected argument '%s'", arg);
    return EXIT_OK;
}

/* argv into o and p, each option as typed noted in o->given. Returns EXIT_OK to go on, else
 * the exit status. */
static int read_args(int argc, char **argv, train_opts *o, pt_train_params *p,
                     const char **model_arg)
{
    cli_args a;
    cli_args_init(&a, argc, argv);
    const char *arg;
    while ((arg = cli_next(&a)) && !a.error) {
        const int at = a.i; /* past the option: its value, when it takes the next argument */
        const char *inline_value = a.inline_value;
        int rc = call_option(&a, arg, o);
        if (rc == UNMATCHED) rc = run_option(&a, arg, o, p);
        if (rc == UNMATCHED) rc = batch_option(&a, arg, o, p);
        if (rc == UNMATCHED) rc = kernel_option(&a, arg, p);
        if (rc == UNMATCHED) rc = data_option(&a, arg, o, p);
        if (rc == UNMATCHED) rc = positional(arg, o, model_arg);
        if (rc != EXIT_OK) return rc;
        if (arg[0] == '-' && arg[1])
            train_given_note(&o->given, arg, inline_value ? inline_value
                                             : a.i > at   ? a.argv[at]
                                                          : NULL);
    }
    return a.error ? EXIT_USAGE : EXIT_OK;
}

/* The data and model files: given, and not standard input or output where they cannot be. */
static int check_files(train_opts *o, const char *model_arg)
{
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
    return EXIT_OK;
}

/* The options that exclude each other, or need another. */
static int check_combinations(const train_opts *o, const pt_train_params *p)
{
    if (o->last_iterate && p->batch.average_iterates)
        return cli_usage_error("train", "--average-iterates and --last-iterate exclude each other");
    if (p->expand.hash_bits && p->expand.kind != PT_EXPAND_POLY)
        return cli_usage_error("train", "--hash-bits goes with --expand D or poly:D");
    if (o->early_stop && !o->test) return cli_usage_error("train", "--early-stop needs --test FILE");
    if ((o->cv || o->search) &&
        (o->model || o->test || o->checkpoint || o->resume || o->init || o->bounds))
        return cli_usage_error("train", "%s trains models on the folds and writes none: -o, "
                               "--test, --checkpoint, --resume, --init and --bounds do not apply",
                               o->search ? "--search" : "--cv K");
    if (o->proba && (o->cv || o->search))
        return cli_usage_error("train", "--proba fits probabilities for the model written: "
                               "--cv and --search write none");
    if (o->checkpoint_every && !o->checkpoint)
        return cli_usage_error("train", "--checkpoint-every needs --checkpoint FILE");
    if (o->init && o->resume)
        return cli_usage_error("train", "--init and --resume: a resumed run continues its own weights");
    if (o->early_stop && o->resume)
        return cli_usage_error("train", "--early-stop cannot continue a run (--resume): the "
                               "held-out record it stops on is not kept in the model");
    return EXIT_OK;
}

/* The CLI's defaults where the library's differ, and the parameters one option sets twice. */
static void train_cli_defaults(train_opts *o, pt_train_params *p)
{
    /* The batch path's defaults: averaged mini-batches (ptron help train says why) */
    if (p->path == PT_PATH_BATCH) {
        if (!o->batch_size_given) p->batch.size = CLI_BATCH_SIZE;
        if (!o->last_iterate) p->batch.average_iterates = 1;
    }
    /* --expand reuses --coef0 (poly), --gamma and --seed (rff, --hash-bits) */
    p->expand.coef0 = p->kernel.coef0;
    if (p->kernel.gamma > 0.0f) p->expand.gamma = p->kernel.gamma; /* a rule: the expansion's own default */
    p->expand.seed = p->seed;
    if (o->search && !o->cv) o->cv = 5;
    /* --init random (a model file named "random": ./random) */
    p->init_random = o->init && strcmp(o->init, "random") == 0;
}

int train_parse(int argc, char **argv, train_opts *o, pt_train_params *p)
{
    const char *model_arg = NULL; /* train DATA MODEL, LIBLINEAR's order */
    int rc = read_args(argc, argv, o, p, &model_arg);
    if (rc == EXIT_OK) rc = check_files(o, model_arg);
    /* (the defaults below change nothing these checks read) */
    if (rc == EXIT_OK) rc = check_combinations(o, p);
    if (rc != EXIT_OK) return rc;
    train_cli_defaults(o, p);
    if (pt_train_params_check(p) != PT_OK) return cli_usage_error("train", "%s", pt_last_error());
    /* (a model written over --resume's or --init's is fine: it is read before training) */
    return cli_refuse_same_file(
        "train", (const cli_file[]){{model_arg ? "MODEL" : "-o", o->model}, {"--checkpoint", o->checkpoint}, {NULL, NULL}},
        (const cli_file[]){{"DATA", o->file}, {"--test", o->test}, {NULL, NULL}});
}
