/* ptron predict MODEL FILE: labels, accuracy. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

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
        for (size_t i = 0; i < n; i++) fprintf(f, "%.17g\n", pred[i]);
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
        json_end(&j);
    } else if (!quiet) {
        printf("Accuracy = %.4g%% (%zu/%zu)\n", 100.0 * acc, correct, n);
    }
done:
    free(pred);
    pt_dataset_free(ds);
    pt_model_free(m);
    return rc;
}
