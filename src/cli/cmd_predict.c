/* ptron predict MODEL FILE: labels, accuracy. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

/* Above this many classes the confusion matrix (nclass^2 counts, 8 MB at the limit) is not
 * built: it could not be read, and a crafted model of many classes would make it gigabytes.
 * Accuracy and the per-class figures come from O(nclass) counts at any size. */
#define MAX_CONFUSION_CLASSES 1000

/* What predict reports per class (rows: true class; predicted; correct), and the confusion
 * matrix when it is built (else NULL). */
typedef struct class_report {
    size_t K, *rows, *predicted, *correct, *conf, unknown;
} class_report;

static void class_report_free(class_report *c)
{
    free(c->rows);
    free(c->conf);
}

/* The model's class of the data's class c (by value, or by name for text labels), or -1 if
 * the model never saw it: as the library's counts match them. */
static long model_class_of(const pt_model *m, const pt_dataset *ds, size_t c)
{
    const char *name = pt_dataset_class_name(ds, c);
    if ((pt_model_class_name(m, 0) != NULL) != (name != NULL)) return -1;
    for (size_t k = 0; k < pt_model_nclass(m); k++)
        if (name ? strcmp(pt_model_class_name(m, k), name) == 0
                 : pt_model_class_value(m, k) == pt_dataset_class_value(ds, c))
            return (long)k;
    return -1;
}

/* The counts of c->K classes from the predicted classes (cls, a row's class index in the
 * model), as pt_model_confusion and pt_model_class_counts count them, without scoring the
 * rows again (a voted model's vote costs a dot per vector per row); an exit status (a failure
 * reported on stderr). */
static int class_report_build(const pt_model *m, const pt_dataset *ds, const int32_t *cls,
                              class_report *c)
{
    size_t K = c->K, nc = pt_dataset_nclass(ds);
    c->rows = calloc(3 * K, sizeof *c->rows);
    long *map = malloc((nc ? nc : 1) * sizeof *map);
    if (!c->rows || !map ||
        (K <= MAX_CONFUSION_CLASSES && !(c->conf = calloc(K * K, sizeof *c->conf)))) {
        free(map);
        fprintf(stderr, "ptron: cannot allocate the counts of %zu classes\n", K);
        return EXIT_INPUT;
    }
    c->predicted = c->rows + K;
    c->correct = c->rows + 2 * K;
    for (size_t k = 0; k < nc; k++) map[k] = model_class_of(m, ds, k);
    for (size_t i = 0, n = pt_dataset_n(ds); i < n; i++) {
        long t = map[pt_dataset_class(ds, i)];
        size_t p = (size_t)cls[i];
        if (t < 0) {
            c->unknown++;
            if (!c->conf) c->predicted[p]++; /* the confusion matrix has no row for it */
            continue;
        }
        if (c->conf) c->conf[(size_t)t * K + p]++;
        c->rows[t]++;
        c->predicted[p]++;
        c->correct[t] += (size_t)t == p;
    }
    free(map);
    return EXIT_OK;
}

/* Precision and recall of class k. */
static void prec_rec(const class_report *c, size_t k, double *prec, double *rec)
{
    *prec = c->predicted[k] ? (double)c->correct[k] / (double)c->predicted[k] : 0.0;
    *rec = c->rows[k] ? (double)c->correct[k] / (double)c->rows[k] : 0.0;
}

/* A class's label as text: its name, or its value. */
static const char *label_of(const pt_model *m, size_t c, char *buf, size_t len)
{
    const char *name = pt_model_class_name(m, c);
    if (name) return name;
    snprintf(buf, len, "%g", pt_model_class_value(m, c));
    return buf;
}

static void print_per_class(const pt_model *m, const class_report *c)
{
    char buf[64];
    size_t K = c->K;
    printf("%10s %9s %9s %8s\n", "class", "precision", "recall", "rows");
    for (size_t k = 0; k < K; k++) {
        double p, r;
        prec_rec(c, k, &p, &r);
        printf("%10s %8.2f%% %8.2f%% %8zu\n", label_of(m, k, buf, sizeof buf), 100 * p, 100 * r,
               c->rows[k]);
    }
    if (!c->conf) return;
    printf("confusion matrix (rows: true class, columns: predicted)\n%10s", "");
    for (size_t k = 0; k < K; k++) printf(" %6.6s", label_of(m, k, buf, sizeof buf));
    printf("\n");
    for (size_t t = 0; t < K; t++) {
        printf("%10s", label_of(m, t, buf, sizeof buf));
        for (size_t k = 0; k < K; k++) printf(" %6zu", c->conf[t * K + k]);
        printf("\n");
    }
}

static void json_per_class(json_out *j, const pt_model *m, const class_report *c)
{
    size_t K = c->K;
    double *v = malloc(K * sizeof *v), *prec = malloc(K * sizeof *prec), *rec = malloc(K * sizeof *rec);
    if (v && prec && rec) {
        for (size_t k = 0; k < K; k++) {
            v[k] = pt_model_class_value(m, k);
            prec_rec(c, k, &prec[k], &rec[k]);
        }
        json_double_array(j, "classes", v, K);
        json_double_array(j, "precision", prec, K);
        json_double_array(j, "recall", rec, K);
        json_size_array(j, "rows", c->rows, K);
        if (c->conf) json_size_array(j, "confusion", c->conf, K * K);
    }
    free(v);
    free(prec);
    free(rec);
}

int cmd_predict(int argc, char **argv)
{
    cli_args a;
    cli_args_init(&a, argc, argv);
    const char *model = NULL, *file = NULL, *out = NULL, *format = NULL, *scores = NULL, *arg;
    const char *proba = NULL;
    bool json = false, quiet = false;
    while ((arg = cli_next(&a)) && !a.error) {
        if (strcmp(arg, "-o") == 0 || strcmp(arg, "--output") == 0) out = cli_value(&a, arg);
        else if (strcmp(arg, "--format") == 0) format = cli_value(&a, arg);
        else if (strcmp(arg, "--scores") == 0) scores = cli_value(&a, arg);
        else if (strcmp(arg, "--proba") == 0) proba = cli_value(&a, arg);
        else if (strcmp(arg, "--delimiter") == 0) cli_delimiter(&a, arg);
        else if (strcmp(arg, "--label-column") == 0) cli_label_column(&a, arg);
        else if (strcmp(arg, "--layout") == 0) cli_layout_opt(&a, arg);
        else if (strcmp(arg, "--json") == 0) json = true;
        else if (strcmp(arg, "--quiet") == 0 || strcmp(arg, "-q") == 0) quiet = true;
        else if (strcmp(arg, "--mem-mb") == 0) cli_size(&a, arg, 1, SIZE_MAX >> 21, &cli_mem_mb);
        else if (arg[0] == '-' && arg[1]) return cli_usage_error("predict", "unknown option %s", arg);
        else if (!model) model = arg;
        else if (!file) file = arg;
        else return cli_usage_error("predict", "unexpected argument '%s'", arg);
    }
    if (a.error) return EXIT_USAGE;
    if (!model || !file) return cli_usage_error("predict", "needs MODEL and FILE");
    /* -o - (or --scores -): the predictions (scores) on stdout, the report on stderr (no
     * --json: it needs stdout) */
    bool to_stdout = cli_is_std(out) || cli_is_std(scores) || cli_is_std(proba);
    if (cli_is_std(out) + cli_is_std(scores) + cli_is_std(proba) > 1)
        return cli_usage_error("predict", "-o -, --scores - and --proba -: only one can take "
                               "standard output");
    if (to_stdout && json)
        return cli_usage_error("predict", "%s - writes to standard output, where --json would "
                               "print its object: give a file name",
                               cli_is_std(out) ? "-o" : cli_is_std(scores) ? "--scores"
                                                                           : "--proba");
    if (cli_is_std(model))
        return cli_usage_error("predict", "the model is read from a file: give its path (FILE "
                               "may be - for standard input)");
    int refused = cli_refuse_same_file(
        "predict", (const cli_file[]){{"-o", out}, {"--scores", scores}, {"--proba", proba}, {NULL, NULL}},
        (const cli_file[]){{"MODEL", model}, {"FILE", file}, {NULL, NULL}});
    if (refused != EXIT_OK) return refused;
    cli_install_log(false); /* the feature-count warning goes to stderr even with --json */

    pt_model *m = NULL;
    pt_dataset *ds = NULL;
    double *pred = NULL;
    int32_t *cls = NULL; /* each row's predicted class index */
    class_report cr = {0};
    int rc = EXIT_OK;
    pt_status s = pt_model_load(model, &m);
    if (s == PT_OK) s = cli_read_dataset(file, format, 0, &ds, NULL);
    if (s != PT_OK) {
        rc = cli_fail(s);
        goto done;
    }
    size_t n = pt_dataset_n(ds);
    pred = malloc((n ? n : 1) * sizeof *pred);
    cls = malloc((n ? n : 1) * sizeof *cls);
    if (!pred || !cls) {
        fprintf(stderr, "ptron: cannot allocate %zu predictions\n", n);
        rc = EXIT_INPUT;
        goto done;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    s = pt_model_predict_class(m, ds, cls);
    for (size_t i = 0; s == PT_OK && i < n; i++) pred[i] = pt_model_class_value(m, (size_t)cls[i]);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (s != PT_OK) {
        rc = cli_fail(s);
        goto done;
    }
    double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    pt_model_info mi;
    pt_model_get_info(m, &mi);
    cr.K = mi.nclass;
    if ((rc = class_report_build(m, ds, cls, &cr)) != EXIT_OK) goto done;
    if (cr.unknown)
        fprintf(stderr, "ptron: warning: %zu rows have labels the model never saw (counted as errors)\n", cr.unknown);
    if (!cr.conf && !quiet)
        fprintf(stderr, "ptron: note: %zu classes: no confusion matrix above %d classes (it would "
                "hold %zu x %zu counts); accuracy and the per-class figures are complete\n", cr.K,
                MAX_CONFUSION_CLASSES, cr.K, cr.K);
    /* correct: rows whose label is the model's class predicted for them (by value or name) */
    size_t correct = 0;
    for (size_t k = 0; k < cr.K; k++) correct += cr.correct[k];
    double acc = n ? (double)correct / (double)n : 0.0;
    if (out && (s = pt_predictions_write(m, pred, n, out)) != PT_OK) {
        rc = cli_fail(s);
        goto done;
    }
    if (scores && (s = pt_scores_write(m, ds, scores)) != PT_OK) {
        rc = cli_fail(s);
        goto done;
    }
    if (proba && !pt_model_platt(m, NULL, NULL)) {
        fprintf(stderr, "ptron: %s has no probabilities: train it with --proba (two classes)\n",
                model);
        rc = EXIT_INPUT;
        goto done;
    }
    if (proba && (s = pt_proba_write(m, ds, proba)) != PT_OK) {
        rc = cli_fail(s);
        goto done;
    }
    if (to_stdout && (rc = cli_report_to_stderr()) != EXIT_OK) goto done;
    if (json) {
        json_out j;
        json_begin(&j, stdout);
        json_int(&j, "n", (long long)n);
        json_int(&j, "correct", (long long)correct);
        json_num(&j, "accuracy", acc);
        json_num(&j, "seconds", secs);
        json_per_class(&j, m, &cr);
        json_end(&j);
    } else if (!quiet) {
        printf("Accuracy = %.4g%% (%zu/%zu)\n", 100.0 * acc, correct, n);
        if (cr.K > 2 || getenv("PTRON_PREDICT_REPORT")) print_per_class(m, &cr);
    }
done:
    class_report_free(&cr);
    free(pred);
    free(cls);
    pt_dataset_free(ds);
    pt_model_free(m);
    return rc;
}
