/* ptron bench DATA: every training path on the user's own data, end to end, in one table. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"

#define MAX_PATHS 3
#define MAX_REPS 100
/* The kernel path runs by default only up to this many rows (its Gram rows grow with n^2). */
#define KERNEL_DEFAULT_MAX_N 20000

typedef struct bench_opts {
    const char *file, *format, *test;
    pt_path paths[MAX_PATHS];
    int npaths;
    bool paths_given; /* --paths: every path listed runs, whatever n */
    int epochs, threads, reps;
    pt_isa isa;
    pt_kernel kernel;
    float gamma;
    bool json;
} bench_opts;

/* One path's outcome: status PT_OK, or why it failed; skipped: not run, and why. */
typedef struct bench_row {
    pt_path path;
    pt_status status;
    bool skipped;
    char message[256];
    pt_train_report rep;             /* the last repetition's */
    double seconds[MAX_REPS];        /* train seconds of each repetition */
    double median_s, min_s, max_s;
    double predict_seconds, accuracy;
    double test_accuracy;            /* -1: no --test */
} bench_row;

/* The streaming-read baseline (pt_dataset_read_pass) by 1 thread and by all;
 * the faster (by median) is the ceiling the paths are compared with. */
typedef struct baseline {
    double bytes, median_s, min_s, max_s; /* the ceiling's seconds a read */
    int threads;                          /* the ceiling's */
    double gbs_one, gbs_all;              /* median GB/s of 1 thread and of all */
} baseline;

static volatile double stream_sink; /* the sums, so the reads are not optimized away */

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
            o->paths_given = true;
        } else if (IS("--reps")) {
            if (cli_int(&a, arg, 1, MAX_REPS, &l)) o->reps = (int)l;
        } else if (IS("--test")) {
            o->test = cli_value(&a, arg);
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
    if (cli_is_std(o->file) && o->test && cli_is_std(o->test))
        return cli_usage_error("bench", "DATA and --test both -: standard input can be read once");
    return EXIT_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median, min and max of v[0..k) (k >= 1). */
static void summarize(const double *v, int k, double *median, double *min, double *max)
{
    double s[MAX_REPS];
    memcpy(s, v, (size_t)k * sizeof *s);
    qsort(s, (size_t)k, sizeof *s, cmp_double);
    *median = k % 2 ? s[k / 2] : 0.5 * (s[k / 2 - 1] + s[k / 2]);
    *min = s[0];
    *max = s[k - 1];
}

/* Bytes a training pass reads of the feature matrix: dense rows (to stride), or the CSR arrays. */
static double matrix_bytes(const pt_dataset *ds)
{
    const size_t n = pt_dataset_n(ds);
    if (pt_dataset_layout(ds) == PT_LAYOUT_SPARSE)
        return (double)(n + 1) * sizeof(uint64_t) +
               (double)pt_dataset_nnz(ds) * (sizeof(uint32_t) + sizeof(float));
    return (double)n * (double)pt_dataset_stride(ds) * sizeof(float);
}

/* The baseline's reps timings at threads threads, each of enough passes to read 64 MB or more
 * (one at least): seconds a read in t[0..reps). */
static void time_reads(const pt_dataset *ds, int threads, int reps, double bytes, double *t)
{
    double want = 64e6 / (bytes > 1 ? bytes : 1);
    int passes = want < 1 ? 1 : want > 10000 ? 10000 : (int)want;
    /* once untimed: threads started, pages touched */
    stream_sink = pt_dataset_read_pass(ds, threads, 1);
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        stream_sink = pt_dataset_read_pass(ds, threads, passes);
        t[r] = (now() - t0) / passes;
    }
}

static void measure_baseline(const pt_dataset *ds, int reps, baseline *b)
{
    double one[MAX_REPS], all[MAX_REPS], med_one, med_all, lo, hi;
    const int T = omp_get_max_threads();
    b->bytes = matrix_bytes(ds);
    time_reads(ds, 1, reps, b->bytes, one);
    summarize(one, reps, &med_one, &lo, &hi);
    b->gbs_one = med_one > 0 ? b->bytes / 1e9 / med_one : 0.0;
    b->gbs_all = b->gbs_one;
    b->threads = 1;
    if (T > 1) {
        time_reads(ds, T, reps, b->bytes, all);
        summarize(all, reps, &med_all, &lo, &hi);
        b->gbs_all = med_all > 0 ? b->bytes / 1e9 / med_all : 0.0;
        if (med_all < med_one) b->threads = T;
    }
    summarize(b->threads == 1 ? one : all, reps, &b->median_s, &b->min_s, &b->max_s);
}

/* The CPU's model name from /proc/cpuinfo ("unknown" where there is none). */
static void cpu_model(char *out, size_t size)
{
    snprintf(out, size, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) != 0) continue;
        const char *v = strchr(line, ':');
        if (!v) break;
        v += strspn(v + 1, " \t") + 1;
        snprintf(out, size, "%s", v);
        out[strcspn(out, "\n")] = '\0';
        break;
    }
    fclose(f);
}

static void set_message(bench_row *r)
{
    const char *msg = pt_last_error();
    snprintf(r->message, sizeof r->message, "%s",
             msg && *msg ? cli_message(msg) : pt_strerror(r->status));
}

/* Trains r->path o->reps times; the last model is evaluated on ds (and on test). */
static void run_path(const pt_dataset *ds, const pt_dataset *test, const bench_opts *o,
                     bench_row *r)
{
    pt_train_params p;
    pt_train_params_init(&p);
    p.path = r->path;
    p.epochs = o->epochs;
    p.threads = o->threads;
    p.isa = o->isa;
    p.kernel.kind = o->kernel;
    if (o->gamma > 0) p.kernel.gamma = o->gamma;
    if (p.path == PT_PATH_BATCH) { /* train's defaults */
        p.batch.size = CLI_BATCH_SIZE;
        p.batch.average_iterates = 1;
    }
    r->test_accuracy = -1.0;
    pt_model *m = NULL;
    for (int k = 0; k < o->reps; k++) {
        pt_model_free(m);
        m = NULL;
        pt_train_report_clear(&r->rep);
        r->status = pt_train(ds, &p, &m, &r->rep);
        if (r->status != PT_OK) {
            set_message(r);
            pt_model_free(m);
            return;
        }
        r->seconds[k] = r->rep.train_seconds;
    }
    summarize(r->seconds, o->reps, &r->median_s, &r->min_s, &r->max_s);
    pt_eval ev;
    memset(&ev, 0, sizeof ev);
    double t0 = now();
    r->status = pt_model_evaluate(m, ds, &ev);
    r->predict_seconds = now() - t0;
    r->accuracy = ev.accuracy;
    if (r->status == PT_OK && test) {
        r->status = pt_model_evaluate(m, test, &ev);
        r->test_accuracy = ev.accuracy;
    }
    if (r->status != PT_OK) set_message(r);
    pt_model_free(m);
}

static double rate(double x, double seconds) { return seconds > 0 ? x / seconds : 0.0; }

static void print_json(const bench_opts *o, const pt_dataset *ds, const char *cpu,
                       const baseline *b, const bench_row *rows, double load_s, double file_bytes)
{
    const size_t n = pt_dataset_n(ds);
    const double base_gbs = rate(b->bytes / 1e9, b->median_s);
    json_out j;
    json_begin(&j, stdout);
    json_str(&j, "file", o->file);
    if (o->test) json_str(&j, "test", o->test);
    json_str(&j, "version", PT_VERSION_STRING);
    json_str(&j, "cpu", cpu);
    json_str(&j, "isa", pt_isa_name(o->isa == PT_ISA_AUTO ? pt_isa_default() : o->isa));
    json_int(&j, "threads", omp_get_max_threads());
    json_int(&j, "n", (long long)n);
    json_int(&j, "d", (long long)pt_dataset_d(ds));
    json_str(&j, "layout", pt_layout_name(pt_dataset_layout(ds)));
    json_str(&j, "dtype", pt_dtype_name(pt_dataset_dtype(ds)));
    json_int(&j, "reps", o->reps);
    json_int(&j, "matrix_bytes", (long long)b->bytes);
    json_int(&j, "file_bytes", (long long)file_bytes);
    json_num(&j, "load_seconds", load_s);
    json_num(&j, "load_MB_per_second", rate(file_bytes / 1e6, load_s));
    json_object_begin(&j, "baseline");
    json_str(&j, "what", "streaming read: the feature matrix summed by 1 thread and by all, "
                         "each a share; the faster");
    json_int(&j, "threads", b->threads);
    json_num(&j, "seconds", b->median_s);
    json_num(&j, "seconds_min", b->min_s);
    json_num(&j, "seconds_max", b->max_s);
    json_num(&j, "GB_per_second", base_gbs);
    json_num(&j, "GB_per_second_1_thread", b->gbs_one);
    json_num(&j, "GB_per_second_all_threads", b->gbs_all);
    json_object_end(&j);
    json_object_begin(&j, "paths");
    for (int i = 0; i < o->npaths; i++) {
        const bench_row *r = &rows[i];
        const pt_train_report *t = &r->rep;
        json_object_begin(&j, pt_path_name(r->path));
        json_str(&j, "status", r->skipped ? "skipped" : r->status == PT_OK ? "ok" : "error");
        if (r->skipped || r->status != PT_OK) {
            json_str(&j, r->skipped ? "reason" : "message", r->message);
        } else {
            double samples = (double)n * t->epochs_run;
            double gbs = rate(b->bytes * t->epochs_run / 1e9, r->median_s);
            json_str(&j, "isa", pt_isa_name(t->isa));
            json_int(&j, "threads", t->threads);
            json_int(&j, "reps", o->reps);
            json_int(&j, "epochs_run", t->epochs_run);
            json_int(&j, "mistakes_last_epoch",
                     t->epochs_run ? (long long)t->mistakes_per_epoch[t->epochs_run - 1] : 0);
            json_int(&j, "updates", (long long)t->updates);
            json_bool(&j, "converged", t->converged);
            json_num(&j, "train_seconds", r->median_s);
            json_num(&j, "train_seconds_min", r->min_s);
            json_num(&j, "train_seconds_max", r->max_s);
            json_double_array(&j, "train_seconds_each", r->seconds, (size_t)o->reps);
            json_num(&j, "seconds_per_epoch", rate(r->median_s, t->epochs_run));
            json_num(&j, "samples_per_second", rate(samples, r->median_s));
            json_num(&j, "GB_per_second", gbs);
            json_num(&j, "ratio_to_baseline", rate(gbs, base_gbs));
            json_num(&j, "train_accuracy", r->accuracy);
            if (r->test_accuracy >= 0) json_num(&j, "test_accuracy", r->test_accuracy);
            json_num(&j, "predict_seconds", r->predict_seconds);
        }
        json_object_end(&j);
    }
    json_object_end(&j);
    json_end(&j);
}

static void print_table(const bench_opts *o, const pt_dataset *ds, const char *cpu,
                        const baseline *b, const bench_row *rows, double load_s,
                        double file_bytes)
{
    const size_t n = pt_dataset_n(ds);
    const double base_gbs = rate(b->bytes / 1e9, b->median_s);
    printf("ptron %s on %s (%s, %d threads)\n", PT_VERSION_STRING, cpu,
           pt_isa_name(o->isa == PT_ISA_AUTO ? pt_isa_default() : o->isa), omp_get_max_threads());
    printf("%s: %zu rows x %zu features, %s, matrix %.1f MB; load %.3f s (%.0f MB/s of file)\n",
           o->file, n, pt_dataset_d(ds), pt_layout_name(pt_dataset_layout(ds)), b->bytes / 1e6,
           load_s, rate(file_bytes / 1e6, load_s));
    printf("baseline (streaming read of the matrix): %.2f GB/s, median of %d", base_gbs, o->reps);
    if (omp_get_max_threads() > 1)
        printf(" (1 thread %.2f, %d threads %.2f)", b->gbs_one, omp_get_max_threads(), b->gbs_all);
    printf("\n");
    printf("%-7s %-7s %3s %6s %9s %9s %9s %9s %9s %7s %6s %9s", "path", "isa", "thr", "epochs",
           "mistakes", "updates", "train_s", "min_s", "max_s", "GB/s", "ratio", "accuracy");
    printf(o->test ? " %9s\n" : "\n", "held-out");
    for (int i = 0; i < o->npaths; i++) {
        const bench_row *r = &rows[i];
        const pt_train_report *t = &r->rep;
        if (r->skipped || r->status != PT_OK) {
            printf("%-7s %s: %s\n", pt_path_name(r->path), r->skipped ? "skipped" : "error",
                   r->message);
            continue;
        }
        double gbs = rate(b->bytes * t->epochs_run / 1e9, r->median_s);
        printf("%-7s %-7s %3d %6d %9zu %9zu %9.4f %9.4f %9.4f %7.2f %6.3f %8.3f%%",
               pt_path_name(r->path), pt_isa_name(t->isa), t->threads, t->epochs_run,
               t->epochs_run ? t->mistakes_per_epoch[t->epochs_run - 1] : (size_t)0, t->updates,
               r->median_s, r->min_s, r->max_s, gbs, rate(gbs, base_gbs), 100.0 * r->accuracy);
        if (o->test) printf(" %8.3f%%", 100.0 * r->test_accuracy);
        printf("\n");
    }
    printf("(train_s: median of %d runs; mistakes: in the last epoch; GB/s: bytes of the feature\n"
           " matrix x epochs / median train time; ratio: GB/s / the baseline's)\n",
           o->reps);
}

int cmd_bench(int argc, char **argv)
{
    bench_opts o = {.paths = {PT_PATH_ONLINE, PT_PATH_BATCH, PT_PATH_KERNEL},
                    .npaths = 3, .epochs = 10, .reps = 3, .isa = PT_ISA_AUTO,
                    .kernel = PT_KERNEL_LINEAR};
    int rc = parse(argc, argv, &o);
    if (rc != EXIT_OK) return rc;
    cli_install_log(o.json);
    cli_set_threads(o.threads);

    pt_dataset *ds = NULL, *test = NULL;
    double load_s = 0.0;
    pt_status s = cli_read_dataset(o.file, o.format, 0, &ds, &load_s);
    if (s != PT_OK) return cli_fail(s);
    if (o.test && (s = cli_read_dataset(o.test, o.format, 0, &test, NULL)) != PT_OK) {
        pt_dataset_free(ds);
        return cli_fail(s);
    }
    struct stat sb;
    double file_bytes = stat(o.file, &sb) == 0 ? (double)sb.st_size : 0.0;
    const size_t n = pt_dataset_n(ds);
    char cpu[256];
    cpu_model(cpu, sizeof cpu);
    baseline b;
    measure_baseline(ds, o.reps, &b);

    bench_row rows[MAX_PATHS];
    memset(rows, 0, sizeof rows);
    bool failed = false;
    for (int i = 0; i < o.npaths; i++) {
        bench_row *r = &rows[i];
        r->path = o.paths[i];
        r->test_accuracy = -1.0;
        if (r->path == PT_PATH_KERNEL && !o.paths_given && n > KERNEL_DEFAULT_MAX_N) {
            r->skipped = true;
            snprintf(r->message, sizeof r->message,
                     "n = %zu > %d rows (its cost grows with n^2); --paths kernel runs it", n,
                     KERNEL_DEFAULT_MAX_N);
            continue;
        }
        run_path(ds, test, &o, r);
        /* every path is built: one that fails makes the whole run fail (exit 2) */
        if (r->status != PT_OK) {
            failed = true;
            fprintf(stderr, "ptron: bench: %s path: %s\n", pt_path_name(r->path), r->message);
        }
    }

    if (o.json)
        print_json(&o, ds, cpu, &b, rows, load_s, file_bytes);
    else
        print_table(&o, ds, cpu, &b, rows, load_s, file_bytes);
    for (int i = 0; i < o.npaths; i++) pt_train_report_clear(&rows[i].rep);
    pt_dataset_free(test);
    pt_dataset_free(ds);
    return failed ? EXIT_INPUT : EXIT_OK;
}
