/* ptron bench DATA: every training path on the user's own data, end to end, in one table. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"

#define MAX_PATHS 3

typedef struct bench_opts {
    const char *file, *format;
    pt_path paths[MAX_PATHS];
    int npaths;
    int epochs, threads;
    pt_isa isa;
    pt_kernel kernel;
    float gamma;
    bool json;
} bench_opts;

/* One path's outcome: status PT_OK, or why it failed. */
typedef struct bench_row {
    pt_path path;
    pt_status status;
    char message[256];
    pt_train_report rep;
    double predict_seconds, accuracy;
} bench_row;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* "online,batch,kernel" -> paths; false (after a usage message) on a bad name. */
static bool parse_paths(const char *list, bench_opts *o)
{
    o->npaths = 0;
    char buf[128];
    snprintf(buf, sizeof buf, "%s", list);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        pt_path p;
        if (pt_path_parse(tok, &p) != PT_OK) {
            cli_usage_error("bench", "%s", pt_last_error());
            return false;
        }
        if (o->npaths == MAX_PATHS) {
            cli_usage_error("bench", "--paths: at most %d paths", MAX_PATHS);
            return false;
        }
        o->paths[o->npaths++] = p;
    }
    if (o->npaths == 0) {
        cli_usage_error("bench", "--paths needs at least one path");
        return false;
    }
    return true;
}

static int parse(int argc, char **argv, bench_opts *o)
{
    cli_args a;
    cli_args_init(&a, argc, argv);
    const char *arg;
    long l;
    while ((arg = cli_next(&a)) && !a.error) {
#define IS(name) (strcmp(arg, name) == 0)
        if (IS("--paths")) {
            const char *v = cli_value(&a, arg);
            if (v && !parse_paths(v, o)) return EXIT_USAGE;
        } else if (IS("--epochs")) {
            if (cli_int(&a, arg, 1, 1000000000, &l)) o->epochs = (int)l;
        } else if (IS("--threads")) {
            if (cli_int(&a, arg, 1, 4096, &l)) o->threads = (int)l;
        } else if (IS("--isa")) {
            const char *v = cli_value(&a, arg);
            if (v && pt_isa_parse(v, &o->isa))
                return cli_usage_error("bench", "%s", pt_last_error());
        } else if (IS("--kernel")) {
            const char *v = cli_value(&a, arg);
            if (v && pt_kernel_parse(v, &o->kernel))
                return cli_usage_error("bench", "%s", pt_last_error());
        } else if (IS("--gamma")) cli_float(&a, arg, 1e-30, 1e30, &o->gamma);
        else if (IS("--format")) o->format = cli_value(&a, arg);
        else if (IS("--delimiter")) cli_delimiter(&a, arg);
        else if (IS("--label-column")) cli_label_column(&a, arg);
        else if (IS("--layout")) cli_layout_opt(&a, arg);
        else if (IS("--json")) o->json = true;
        else if (arg[0] == '-' && arg[1]) return cli_usage_error("bench", "unknown option %s", arg);
        else if (!o->file) o->file = arg;
        else return cli_usage_error("bench", "unexpected argument '%s'", arg);
#undef IS
    }
    if (a.error) return EXIT_USAGE;
    if (!o->file) return cli_usage_error("bench", "missing DATA");
    return EXIT_OK;
}

static void run_path(const pt_dataset *ds, const bench_opts *o, bench_row *r)
{
    pt_train_params p;
    pt_train_params_init(&p);
    p.path = r->path;
    p.epochs = o->epochs;
    p.threads = o->threads;
    p.isa = o->isa;
    p.kernel = o->kernel;
    if (o->gamma > 0) p.gamma = o->gamma;
    if (p.path == PT_PATH_BATCH) { /* train's defaults */
        p.batch_size = CLI_BATCH_SIZE;
        p.average_iterates = 1;
    }
    pt_model *m = NULL;
    r->status = pt_train(ds, &p, &m, &r->rep);
    if (r->status == PT_OK) {
        pt_eval ev;
        double t0 = now();
        r->status = pt_model_evaluate(m, ds, &ev);
        r->predict_seconds = now() - t0;
        r->accuracy = ev.accuracy;
    }
    if (r->status != PT_OK) {
        const char *msg = pt_last_error();
        snprintf(r->message, sizeof r->message, "%s",
                 msg && *msg ? cli_message(msg) : pt_strerror(r->status));
    }
    pt_model_free(m);
}

static double rate(double x, double seconds) { return seconds > 0 ? x / seconds : 0.0; }

int cmd_bench(int argc, char **argv)
{
    bench_opts o = {.paths = {PT_PATH_ONLINE, PT_PATH_BATCH, PT_PATH_KERNEL},
                    .npaths = 3, .epochs = 10, .isa = PT_ISA_AUTO, .kernel = PT_KERNEL_LINEAR};
    int rc = parse(argc, argv, &o);
    if (rc != EXIT_OK) return rc;
    cli_install_log(o.json);
    cli_set_threads(o.threads);

    pt_dataset *ds = NULL;
    double load_s = 0.0;
    pt_status s = cli_read_dataset(o.file, o.format, 0, &ds, &load_s);
    if (s != PT_OK) return cli_fail(s);
    struct stat sb;
    double file_bytes = stat(o.file, &sb) == 0 ? (double)sb.st_size : 0.0;
    const size_t n = pt_dataset_n(ds), d = pt_dataset_d(ds);
    const double xbytes = (double)n * (double)pt_dataset_stride(ds) * sizeof(float);

    bench_row rows[MAX_PATHS];
    memset(rows, 0, sizeof rows);
    bool failed = false;
    for (int i = 0; i < o.npaths; i++) {
        rows[i].path = o.paths[i];
        run_path(ds, &o, &rows[i]);
        /* every path is built: one that fails makes the whole run fail (exit 2) */
        if (rows[i].status != PT_OK) {
            failed = true;
            fprintf(stderr, "ptron: bench: %s path: %s\n", pt_path_name(rows[i].path),
                    rows[i].message);
        }
    }

    if (o.json) {
        json_out j;
        json_begin(&j, stdout);
        json_str(&j, "file", o.file);
        json_int(&j, "n", (long long)n);
        json_int(&j, "d", (long long)d);
        json_int(&j, "matrix_bytes", (long long)xbytes);
        json_int(&j, "file_bytes", (long long)file_bytes);
        json_num(&j, "load_seconds", load_s);
        json_num(&j, "load_MB_per_second", rate(file_bytes / 1e6, load_s));
        json_object_begin(&j, "paths");
        for (int i = 0; i < o.npaths; i++) {
            const bench_row *r = &rows[i];
            const pt_train_report *t = &r->rep;
            json_object_begin(&j, pt_path_name(r->path));
            json_str(&j, "status", r->status == PT_OK ? "ok" : "error");
            if (r->status != PT_OK) {
                json_str(&j, "message", r->message);
            } else {
                double samples = (double)n * t->epochs_run;
                json_str(&j, "isa", pt_isa_name(t->isa));
                json_int(&j, "threads", t->threads);
                json_int(&j, "epochs_run", t->epochs_run);
                json_int(&j, "mistakes_last_epoch",
                         t->epochs_run ? (long long)t->mistakes_per_epoch[t->epochs_run - 1] : 0);
                json_int(&j, "updates", (long long)t->updates);
                json_bool(&j, "converged", t->converged);
                json_num(&j, "train_seconds", t->train_seconds);
                json_num(&j, "seconds_per_epoch", rate(t->train_seconds, t->epochs_run));
                json_num(&j, "samples_per_second", rate(samples, t->train_seconds));
                json_num(&j, "GB_per_second", rate(xbytes * t->epochs_run / 1e9, t->train_seconds));
                json_num(&j, "train_accuracy", r->accuracy);
                json_num(&j, "predict_seconds", r->predict_seconds);
            }
            json_object_end(&j);
        }
        json_object_end(&j);
        json_end(&j);
    } else {
        printf("%s: %zu rows x %zu features, matrix %.1f MB; load %.3f s (%.0f MB/s of file)\n",
               o.file, n, d, xbytes / 1e6, load_s, rate(file_bytes / 1e6, load_s));
        printf("%-7s %-7s %3s %6s %9s %9s %9s %10s %7s %9s\n", "path", "isa", "thr", "epochs",
               "mistakes", "updates", "train_s", "samples/s", "GB/s", "accuracy");
        for (int i = 0; i < o.npaths; i++) {
            const bench_row *r = &rows[i];
            const pt_train_report *t = &r->rep;
            if (r->status != PT_OK) {
                printf("%-7s error: %s\n", pt_path_name(r->path), r->message);
                continue;
            }
            double samples = (double)n * t->epochs_run;
            printf("%-7s %-7s %3d %6d %9zu %9zu %9.4f %10.3g %7.2f %8.3f%%\n",
                   pt_path_name(r->path), pt_isa_name(t->isa), t->threads, t->epochs_run,
                   t->epochs_run ? t->mistakes_per_epoch[t->epochs_run - 1] : (size_t)0,
                   t->updates, t->train_seconds, rate(samples, t->train_seconds),
                   rate(xbytes * t->epochs_run / 1e9, t->train_seconds), 100.0 * r->accuracy);
        }
        printf("(mistakes: in the last epoch; GB/s: bytes of the feature matrix x epochs / "
               "train time)\n");
    }
    for (int i = 0; i < o.npaths; i++) pt_train_report_clear(&rows[i].rep);
    pt_dataset_free(ds);
    return failed ? EXIT_INPUT : EXIT_OK;
}
