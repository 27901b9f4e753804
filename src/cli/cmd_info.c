/* ptron info FILE: a dataset's sizes, classes, R, density and bytes, or a model's contents. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static bool is_model_file(const char *path)
{
    char head[16] = {0};
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    size_t got = fread(head, 1, 11, f);
    fclose(f);
    return got == 11 && memcmp(head, "ptron-model", 11) == 0;
}

/* Features whose ranges (max - min) differ by this factor or more get a warning: a perceptron
 * takes steps of the same size in every coordinate, so the wide features dominate. */
#define RANGE_RATIO_WARN 1000.0

/* Warn on stderr when the features' ranges differ by orders of magnitude. */
static void warn_ranges(const pt_dataset *ds)
{
    pt_scaling *sc;
    if (pt_dataset_n(ds) < 2 || pt_scaling_fit(ds, PT_SCALE_RANGE01, &sc) != PT_OK) return;
    size_t d, lo = SIZE_MAX, hi = SIZE_MAX;
    const double *off, *fac;
    pt_scaling_get(sc, &d, &off, &fac);
    /* factor 1 / (max - min); 0 for a constant feature */
    for (size_t j = 0; j < d; j++) {
        if (fac[j] <= 0.0f) continue;
        if (lo == SIZE_MAX || fac[j] > fac[lo]) lo = j; /* the narrowest range */
        if (hi == SIZE_MAX || fac[j] < fac[hi]) hi = j; /* the widest */
    }
    if (lo != SIZE_MAX && fac[lo] / fac[hi] >= RANGE_RATIO_WARN)
        fprintf(stderr, "ptron: warning: feature ranges differ by %.3g times: feature %zu spans "
                        "[%g, %g], feature %zu [%g, %g]; scale them (ptron scale, or ptron train "
                        "--scale -1,1) or the wide features dominate\n",
                fac[lo] / fac[hi], hi + 1, off[hi], off[hi] + 1.0 / fac[hi], lo + 1, off[lo],
                off[lo] + 1.0 / fac[lo]);
    pt_scaling_free(sc);
}

static int info_model(const char *path, bool json)
{
    pt_model *m;
    pt_status s = pt_model_load(path, &m);
    if (s != PT_OK) return cli_fail(s);
    pt_model_info mi;
    pt_model_get_info(m, &mi);
    pt_train_params mp; /* the kernel's parameters */
    pt_train_params_init(&mp);
    pt_model_get_params(m, &mp);
    if (json) {
        json_out j;
        json_begin(&j, stdout);
        json_str(&j, "file", path);
        json_str(&j, "type", "model");
        json_str(&j, "path", pt_path_name(mi.path));
        json_str(&j, "variant", pt_variant_name(mi.variant));
        if (mi.path == PT_PATH_KERNEL) {
            json_str(&j, "kernel", pt_kernel_name(mi.kernel));
            if (mi.kernel == PT_KERNEL_EXPR) json_str(&j, "kernel_expr", mp.kernel.expr);
            if (mi.kernel == PT_KERNEL_POLY || mi.kernel == PT_KERNEL_RBF)
                json_num(&j, "gamma", mp.kernel.gamma);
            if (mp.kernel.budget) json_int(&j, "budget", (long long)mp.kernel.budget);
            json_int(&j, "support_vectors", (long long)mi.n_support);
        }
        json_int(&j, "d", (long long)mi.d);
        json_bool(&j, "bias", mi.bias);
        double *labels = malloc(mi.nclass * sizeof *labels);
        for (size_t c = 0; labels && c < mi.nclass; c++) labels[c] = pt_model_class_value(m, c);
        if (labels) json_double_array(&j, "labels", labels, mi.nclass);
        free(labels);
        if (mi.nclass > 2) json_str(&j, "multiclass", pt_multiclass_name(mi.multiclass));
        if (pt_model_scaling(m))
            json_str(&j, "scale",
                     pt_scale_kind_name(pt_scaling_get(pt_model_scaling(m), NULL, NULL, NULL)));
        json_int(&j, "epochs_run", mi.epochs_run);
        json_bool(&j, "resumable", mi.resumable);
        if (mi.resumable) {
            json_object_begin(&j, "run");
            json_int(&j, "epochs_done", mi.run_epochs_done);
            json_int(&j, "position", (long long)mi.run_position);
            json_int(&j, "rows", (long long)mi.run_rows);
            json_int(&j, "updates", (long long)mi.run_updates);
            if (mi.run_recent_mistakes)
                json_size_array(&j, "recent_mistakes", mi.run_recent_mistakes,
                                (size_t)mi.run_recent_epochs);
            json_object_end(&j);
        }
        json_end(&j);
    } else {
        printf("%s: ptron model, %s path (%s), %zu features, bias %s\n", path,
               pt_path_name(mi.path), pt_variant_name(mi.variant), mi.d, mi.bias ? "on" : "off");
        if (mi.nclass == 2) {
            printf("  labels: %g -> -1, %g -> +1\n", mi.class_values[0], mi.class_values[1]);
        } else {
            printf("  %zu classes (%s):", mi.nclass, mi.multiclass == PT_MULTI_OVR ? "one-vs-rest" : "multiclass perceptron");
            for (size_t c = 0; c < mi.nclass; c++) printf(" %g", pt_model_class_value(m, c));
            printf("\n");
        }
        if (mi.path == PT_PATH_KERNEL)
            printf("  kernel %s, %zu support vectors\n",
                   mi.kernel == PT_KERNEL_EXPR ? mp.kernel.expr : pt_kernel_name(mi.kernel),
                   mi.n_support);
        if (pt_model_scaling(m))
            printf("  scales the features it scores (%s): predict takes raw data\n",
                   pt_scale_kind_name(pt_scaling_get(pt_model_scaling(m), NULL, NULL, NULL)));
        printf("  trained %d epochs\n", mi.epochs_run);
        if (mi.resumable) {
            /* an interrupted run or a checkpoint */
            printf("  run in progress: %d epochs done", mi.run_epochs_done);
            if (mi.run_position && mi.path == PT_PATH_BATCH)
                printf(" and %zu blocks of rows into the next", mi.run_position);
            else if (mi.run_position)
                printf(" and %zu of the next epoch's %zu samples", mi.run_position, mi.run_rows);
            printf(", %zu updates%s; continue it with ptron train --resume %s\n", mi.run_updates,
                   mi.nclass > 2 && mi.multiclass == PT_MULTI_OVR ? " (all classes; the class "
                   "furthest behind)" : "", path);
            if (mi.run_recent_epochs) {
                int shown = mi.run_recent_epochs < 10 ? mi.run_recent_epochs : 10;
                printf("  mistakes in the last %d epochs:", shown);
                for (int e = mi.run_recent_epochs - shown; e < mi.run_recent_epochs; e++)
                    printf(" %zu", mi.run_recent_mistakes[e]);
                printf("\n");
            }
        }
    }
    pt_model_free(m);
    return EXIT_OK;
}

int cmd_info(int argc, char **argv)
{
    cli_args a;
    cli_args_init(&a, argc, argv);
    const char *file = NULL, *format = NULL, *arg;
    bool json = false;
    while ((arg = cli_next(&a)) && !a.error) {
        if (strcmp(arg, "--json") == 0) json = true;
        else if (strcmp(arg, "--format") == 0) format = cli_value(&a, arg);
        else if (strcmp(arg, "--delimiter") == 0) cli_delimiter(&a, arg);
        else if (strcmp(arg, "--label-column") == 0) cli_label_column(&a, arg);
        else if (strcmp(arg, "--layout") == 0) cli_layout_opt(&a, arg);
        else if (strcmp(arg, "--mem-mb") == 0) cli_size(&a, arg, 1, SIZE_MAX >> 21, &cli_mem_mb);
        else if (arg[0] == '-' && arg[1]) return cli_usage_error("info", "unknown option %s", arg);
        else if (!file) file = arg;
        else return cli_usage_error("info", "unexpected argument '%s'", arg);
    }
    if (a.error) return EXIT_USAGE;
    if (!file) return cli_usage_error("info", "missing FILE");
    cli_install_log(false);
    if (!format && is_model_file(file)) return info_model(file, json);

    pt_dataset *ds;
    double secs;
    pt_status s = cli_read_dataset(file, format, 0, &ds, &secs);
    if (s != PT_OK) return cli_fail(s);
    pt_dataset_info in;
    pt_dataset_get_info(ds, &in);
    size_t k = in.nclass;
    size_t *counts = calloc(k ? k : 1, sizeof *counts);
    double *values = malloc((k ? k : 1) * sizeof *values);
    if (!counts || !values) {
        free(counts);
        free(values);
        pt_dataset_free(ds);
        fprintf(stderr, "ptron: out of memory\n");
        return EXIT_INPUT;
    }
    for (size_t i = 0; i < in.n; i++) counts[pt_dataset_class(ds, i)]++;
    for (size_t c = 0; c < k; c++) values[c] = pt_dataset_class_value(ds, c);
    warn_ranges(ds);
    if ((s = pt_dataset_intact(ds)) != PT_OK) { /* the file shrank: its figures are of zeros */
        free(counts);
        free(values);
        pt_dataset_free(ds);
        return cli_fail(s);
    }
    if (json) {
        json_out j;
        json_begin(&j, stdout);
        json_str(&j, "file", file);
        json_str(&j, "type", "dataset");
        json_int(&j, "n", (long long)in.n);
        json_int(&j, "d", (long long)in.d);
        json_int(&j, "stride", (long long)in.stride);
        json_int(&j, "classes", (long long)k);
        json_double_array(&j, "labels", values, k);
        json_size_array(&j, "class_counts", counts, k);
        json_str(&j, "layout", pt_layout_name(in.layout));
        json_str(&j, "dtype", pt_dtype_name(in.dtype));
        if (in.dtype == PT_DTYPE_U8) {
            json_str(&j, "u8_divisors", in.u8_single ? "one" : "per feature");
            if (in.u8_single) json_num(&j, "u8_divisor", in.u8_divisor);
        }
        json_int(&j, "nnz", (long long)in.nnz);
        json_num(&j, "density", in.density);
        json_num(&j, "R", in.R);
        json_int(&j, "bytes", (long long)in.bytes);
        json_str(&j, "data_mode", in.streamed ? "streamed" : "in memory");
        if (in.streamed) json_int(&j, "stream_rows", (long long)in.stream_rows);
        if (in.stream_pages) json_str(&j, "stream_pages", in.stream_pages);
        json_num(&j, "load_seconds", secs);
        if (in.has_truth) {
            json_str(&j, "generator", in.kind);
            json_num(&j, "truth_R", in.truth_R);
            json_num(&j, "truth_gamma", in.truth_gamma);
        }
        json_end(&j);
    } else {
        printf("%s: %zu rows x %zu features (stride %zu), %zu classes\n", file, in.n, in.d,
               in.stride, k);
        for (size_t c = 0; c < k && c < 20; c++) {
            const char *name = pt_dataset_class_name(ds, c);
            if (name) printf("  label %s: %zu rows\n", name, counts[c]);
            else printf("  label %g: %zu rows\n", values[c], counts[c]);
        }
        if (k > 20) printf("  ... %zu more classes\n", k - 20);
        printf("  non-zeros %zu, density %.4g\n", in.nnz, in.density);
        printf("  R = max |x| = %.6g\n", in.R);
        if (in.layout == PT_LAYOUT_SPARSE)
            printf("  sparse layout (CSR) %.1f MiB (8 bytes a non-zero and a row)\n",
                   in.bytes / 1048576.0);
        else if (in.dtype == PT_DTYPE_F32)
            printf("  dense layout %.1f MiB (float32, rows padded to %zu)\n", in.bytes / 1048576.0,
                   in.stride);
        else if (in.dtype == PT_DTYPE_BF16)
            printf("  dense layout %.1f MiB (bf16, rows padded to %zu)\n", in.bytes / 1048576.0,
                   in.stride);
        else if (in.u8_single)
            printf("  dense layout %.1f MiB (u8, rows padded to %zu; x = q / %g)\n",
                   in.bytes / 1048576.0, in.stride, (double)in.u8_divisor);
        else
            printf("  dense layout %.1f MiB (u8, rows padded to %zu; x = q / m_j, a divisor per "
                   "feature)\n", in.bytes / 1048576.0, in.stride);
        if (in.has_truth)
            printf("  generator %s: w* stored, R = %.6g, margin gamma = %.6g, (R/gamma)^2 = %.6g\n",
                   in.kind, in.truth_R, in.truth_gamma,
                   in.truth_gamma > 0 ? (in.truth_R / in.truth_gamma) * (in.truth_R / in.truth_gamma) : 0.0);
        if (in.streamed)
            printf("  streamed: over the memory budget (--mem-mb), read from the file %zu rows "
                   "at a time (pages %s); the online and batch paths train on it so\n",
                   in.stream_rows, in.stream_pages);
        printf("  read in %.3f s\n", secs);
    }
    free(counts);
    free(values);
    pt_dataset_free(ds);
    return EXIT_OK;
}
