/* ptron predict MODEL FILE: labels, accuracy. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

/* Precision and recall of class c from the confusion matrix (rows: true, columns: predicted). */
static void prec_rec(const size_t *conf, size_t K, size_t c, double *prec, double *rec)
{
    size_t tp = conf[c * K + c], col = 0, row = 0;
    for (size_t k = 0; k < K; k++) {
        col += conf[k * K + c];
        row += conf[c * K + k];
    }
    *prec = col ? (double)tp / (double)col : 0.0;
    *rec = row ? (double)tp / (double)row : 0.0;
}

/* A class's label as text: its name, or its value. */
static const char *label_of(const pt_model *m, size_t c, char *buf, size_t len)
{
    const char *name = pt_model_class_name(m, c);
    if (name) return name;
    snprintf(buf, len, "%g", pt_model_class_value(m, c));
    return buf;
}

static void print_per_class(const pt_model *m, const size_t *conf, size_t K)
{
    char buf[64];
    printf("%10s %9s %9s %8s\n", "class", "precision", "recall", "rows");
    for (size_t c = 0; c < K; c++) {
        double p, r;
        size_t rows = 0;
        for (size_t k = 0; k < K; k++) rows += conf[c * K + k];
        prec_rec(conf, K, c, &p, &r);
        printf("%10s %8.2f%% %8.2f%% %8zu\n", label_of(m, c, buf, sizeof buf), 100 * p, 100 * r, rows);
    }
    printf("confusion matrix (rows: true class, columns: predicted)\n%10s", "");
    for (size_t c = 0; c < K; c++) printf(" %6.6s", label_of(m, c, buf, sizeof buf));
    printf("\n");
    for (size_t t = 0; t < K; t++) {
        printf("%10s", label_of(m, t, buf, sizeof buf));
        for (size_t c = 0; c < K; c++) printf(" %6zu", conf[t * K + c]);
        printf("\n");
    }
}

static void json_per_class(json_out *j, const pt_model *m, const size_t *conf, size_t K)
{
    double *v = malloc(K * sizeof *v), *prec = malloc(K * sizeof *prec), *rec = malloc(K * sizeof *rec);
    if (!v || !prec || !rec) {
        free(v);
        free(prec);
        free(rec);
        return;
    }
    for (size_t c = 0; c < K; c++) {
        v[c] = pt_model_class_value(m, c);
        prec_rec(conf, K, c, &prec[c], &rec[c]);
    }
    json_double_array(j, "classes", v, K);
    json_double_array(j, "precision", prec, K);
    json_double_array(j, "recall", rec, K);
    json_size_array(j, "confusion", conf, K * K);
    free(v);
    free(prec);
    free(rec);
}

int cmd_predict(int argc, char **argv)
{
    cli_args a;
    cli_args_init(&a, argc, argv);
    const char *model = NULL, *file = NULL, *out = NULL, *format = NULL, *arg;
    bool json = false, quiet = false;
    while ((arg = cli_next(&a)) && !a.error) {
        if (strcmp(arg, "-o") == 0 || strcmp(arg, "--output") == 0) out = cli_value(&a, arg);
        else if (strcmp(arg, "--format") == 0) format = cli_value(&a, arg);
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
    cli_install_log(false); /* the feature-count warning goes to stderr even with --json */

    pt_model *m = NULL;
    pt_dataset *ds = NULL;
    double *pred = NULL;
    size_t *conf = NULL;
    int rc = EXIT_OK;
    pt_status s = pt_model_load(model, &m);
    if (s == PT_OK) s = cli_read_dataset(file, format, 0, &ds, NULL);
    if (s != PT_OK) {
        rc = cli_fail(s);
        goto done;
    }
    size_t n = pt_dataset_n(ds);
    pred = malloc((n ? n : 1) * sizeof *pred);
    if (!pred) {
        fprintf(stderr, "ptron: cannot allocate %zu predictions\n", n);
        rc = EXIT_INPUT;
        goto done;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    s = pt_model_predict(m, ds, pred);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (s != PT_OK) {
        rc = cli_fail(s);
        goto done;
    }
    double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    pt_model_info mi;
    pt_model_get_info(m, &mi);
    size_t K = mi.nclass, unknown = 0;
    conf = calloc(K * K, sizeof *conf);
    if (!conf || (s = pt_model_confusion(m, ds, conf, &unknown)) != PT_OK) {
        rc = conf ? cli_fail(s) : EXIT_INPUT;
        goto done;
    }
    if (unknown)
        fprintf(stderr, "ptron: warning: %zu rows have labels the model never saw (counted as errors)\n", unknown);
    size_t correct = 0;
    for (size_t i = 0; i < n; i++) correct += pred[i] == pt_dataset_label(ds, i);
    double acc = n ? (double)correct / (double)n : 0.0;
    if (out) {
        FILE *f = fopen(out, "w");
        if (!f) {
            fprintf(stderr, "ptron: %s: cannot create: %s\n", out, strerror(errno));
            rc = EXIT_INPUT;
            goto done;
        }
        for (size_t i = 0; i < n; i++) {
            /* text-label models predict class indices 0..K-1 */
            const char *name = pt_model_class_name(m, 0) ? pt_model_class_name(m, (size_t)pred[i]) : NULL;
            if (name) fprintf(f, "%s\n", name);
            else fprintf(f, "%.17g\n", pred[i]);
        }
        if (fclose(f) != 0) {
            fprintf(stderr, "ptron: %s: write failed: %s\n", out, strerror(errno));
            rc = EXIT_INPUT;
            goto done;
        }
    }
    if (json) {
        json_out j;
        json_begin(&j, stdout);
        json_int(&j, "n", (long long)n);
        json_int(&j, "correct", (long long)correct);
        json_num(&j, "accuracy", acc);
        json_num(&j, "seconds", secs);
        json_per_class(&j, m, conf, K);
        json_end(&j);
    } else if (!quiet) {
        printf("Accuracy = %.4g%% (%zu/%zu)\n", 100.0 * acc, correct, n);
        if (K > 2 || getenv("PTRON_PREDICT_REPORT")) print_per_class(m, conf, K);
    }
done:
    free(conf);
    free(pred);
    pt_dataset_free(ds);
    pt_model_free(m);
    return rc;
}
