/* Argument parsing helpers and the usage texts. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

static const struct {
    const char *cmd, *text;
} usages[] = {
    {"gen", "usage: ptron gen KIND -o FILE [--n N] [--d D] [--margin G] [--noise P] [--seed S]\n"
            "                 [--classes K] [--nnz K] [--test-out FILE2 --test-n M]\n"
            "  KIND: separable | noisy | xor | circle | blobs | sparse\n"
            "  --n N          rows (default 1000)\n"
            "  --d D          features (default 2; sparse: 47236)\n"
            "  --margin G     separable/noisy/sparse: margin of w*; xor, circle: gap\n"
            "                 (default 0.1; sparse: 0.001)\n"
            "  --noise P      noisy, sparse: fraction of labels flipped (default 0.1)\n"
            "  --seed S       random seed (default 1); the same seed gives the same file everywhere\n"
            "  --classes K    blobs: number of classes (default 3)\n"
            "  --nnz K        sparse: non-zeros a row on average (default 50)\n"
            "  --test-out FILE2 --test-n M   also write M held-out rows of the same distribution\n"
            "  sparse: text-like rows in the sparse layout: Zipf feature popularity, tf-idf-like\n"
            "  values, rows of unit length, labels from a planted w* on up to 3000 features (rows\n"
            "  with |w*.x| < G drawn again); memory of the non-zeros and d, never n x d.\n"
            "  The output format follows the extension (.ptd, .csv, else LIBSVM); only .ptd keeps\n"
            "  the generator's w*, R and gamma for the bounds (and a sparse set's layout).\n"},
    {"info", "usage: ptron info FILE [--format F] [--delimiter C] [--layout L] [--mem-mb M]\n"
             "                  [--json]\n"
             "  sizes, classes, R, layout, non-zeros, density and bytes of a dataset, or the\n"
             "  contents of a model\n"
             "  --delimiter C  CSV field separator (default ','; 'tab' for a tab)\n"
             "  --layout auto|dense|sparse  the layout to read into (default auto: see train)\n"},
    {"convert", "usage: ptron convert IN -o OUT [--format F] [--to F] [--layout L]\n"
                "                     [--max-features N] [--mem-mb M] [--delimiter C]\n"
                "  between LIBSVM (.svm/.libsvm/.txt), CSV (.csv) and ptron's binary .ptd\n"
                "  --format F  input format (default: by extension); --to F  output format\n"
                "  --layout auto|dense|sparse  the layout IN is read into and a .ptd OUT is\n"
                "              written in (default auto: see ptron help train); LIBSVM output\n"
                "              holds the non-zeros, CSV output every value (refused when its\n"
                "              dense form would not fit half of RAM)\n"
                "  --delimiter C  field separator of a CSV input (default ','; 'tab' for a tab);\n"
                "                 CSV is written with commas\n"},
    {"train",
     "usage: ptron train FILE [-o MODEL] [options]\n"
     "  -o MODEL                 model file (default FILE.model)\n"
     "  --path online|batch|kernel  training path (default online)\n"
     "  --epochs E               maximum epochs (default 10); stops at an epoch with no mistake\n"
     "  --eta X                  learning rate (default 1)\n"
     "  --margin TAU             update when y w.x <= TAU (0: Rosenblatt; > 0: margin perceptron)\n"
     "  --averaged               averaged perceptron (average of all iterates; online, kernel)\n"
     "  --voted                  voted perceptron (Freund and Schapire; online, one-vs-rest\n"
     "                           too: each class votes with its own vectors, within 1/K of\n"
     "                           --mem-mb each)\n"
     "  --shuffle                shuffle the order each epoch\n"
     "  --pass auto|sequential|blocked   online: blocked has the other threads score samples\n"
     "                           ahead of the walk (same model, bit for bit; slower than\n"
     "                           sequential while mistakes are dense; default auto: blocked\n"
     "                           once mistakes are rare)\n"
     "  --seed S                 seed for --shuffle and mini-batch order (default 1)\n"
     "  --no-bias                no constant-1 coordinate (default: bias on)\n"
     "  --multiclass ovr|direct  more than two classes: one-vs-rest (any path, default) or the\n"
     "                           multiclass perceptron (online path)\n"
     "  --test FILE              evaluate held-out data after each epoch\n"
     "  --early-stop N           with --test: stop when held-out accuracy has not improved for\n"
     "                           N epochs and keep the best epoch's model (a final model: it\n"
     "                           cannot be resumed)\n"
     "  --checkpoint FILE        write the model and where the run stands to FILE (any path;\n"
     "                           one-vs-rest: once every class has trained the epoch). A\n"
     "                           checkpoint that cannot be written is a warning naming the file\n"
     "                           and the reason: training goes on, and -o is written at the end\n"
     "  --checkpoint-every N     ... every N epochs (default 1)\n"
     "  --init MODEL|random      start from MODEL's weights (a linear model of the same\n"
     "                           features, classes and bias, online or batch path) or from\n"
     "                           random ones, each uniform in [0, 1) from --seed, as the notes'\n"
     "                           notebook; default w = 0. From the model of epoch k, E - k more\n"
     "                           epochs without --shuffle give the E-epoch run's weights (classic;\n"
     "                           the batch path's schedules and averages start over)\n"
     "  --resume FILE            continue the run recorded in FILE (a checkpoint, or the model an\n"
     "                           interrupted run wrote), with its parameters (--epochs may\n"
     "                           extend it): the model equals the uninterrupted run's, byte for\n"
     "                           byte. Ctrl-C or SIGTERM saves the model as it stands and where\n"
     "                           the run stands, exit 130/143, on any path; a finished model\n"
     "                           cannot be resumed\n"
     "  --loss perceptron|hinge|squared   batch loss (default perceptron)\n"
     "  --lambda L               L2 regularisation (default 0)\n"
     "  --batch-size B           batch: rows per mini-batch (default: full batch)\n"
     "  --schedule constant|invsqrt|pegasos   batch step schedule (default constant)\n"
     "  --tol T                  batch: stop when the objective changes by less than T (relative)\n"
     "  --batch-impl auto|gemv|fused   batch implementation (default auto)\n"
     "  --average-iterates       batch: return the average of the iterates\n"
     "  --kernel linear|poly|rbf kernel path's kernel (default linear)\n"
     "  --degree K               poly degree (default 2)\n"
     "  --gamma G                poly/rbf gamma (default 1)\n"
     "  --coef0 C                poly constant (default 1)\n"
     "  --expand D|poly:D|rff:D  train on an explicit expansion, streamed row by row (online;\n"
     "                           the batch path materialises it within --mem-mb): all monomials\n"
     "                           of degree <= D scaled so phi(x).phi(z) = (C + x.z)^D with\n"
     "                           C = --coef0 (C(d + D, D) features), or D random Fourier features\n"
     "                           for exp(-G |x - z|^2) with G = --gamma, W and b from --seed;\n"
     "                           the model keeps the expansion and predict applies it\n"
     "  --hash-bits B            with --expand poly:D: hash the monomials' index space to 2^B\n"
     "                           columns with a sign hash (as Vowpal Wabbit, seeded by --seed),\n"
     "                           computing only each row's non-zeros' monomials: degree 2-3 of\n"
     "                           wide sparse data in 2^B weights (B in 1..31)\n"
     "  --cache-mb M             Gram/row cache budget in MiB (default: half of RAM)\n"
     "  --gram auto|full|rows    kernel storage (default auto)\n"
     "  --threads T              threads (default: all cores)\n"
     "  --isa auto|scalar|avx2|avx512|neon   SIMD kernels (default auto, or $PTRON_ISA)\n"
     "  --bounds                 print R and the margin of a reference separator w* in the\n"
     "                           space the run trains in, and each of the notes' bounds on the\n"
     "                           updates made that covers the run: (R^2 + 2 tau/eta)/gamma^2\n"
     "                           ((R/gamma)^2 at --margin 0) on separable data, and the hinge\n"
     "                           bound over the passes made (online and kernel paths, two\n"
     "                           classes, from w = 0; otherwise it says why none applies).\n"
     "                           w*: the generator's, stored in a .ptd, or --reference\n"
     "  --reference MODEL        the reference separator for --bounds: a two-class linear model\n"
     "                           of the run's dimension (with --expand: trained on the same\n"
     "                           expansion), or a kernel model with the run's kernel\n"
     "  --format F               input format (libsvm, csv, ptd; default by extension)\n"
     "  --delimiter C            CSV field separator (default ','; 'tab' for a tab). Without it\n"
     "                           a first line that has no comma but ';', tabs, '|' or spaces is\n"
     "                           refused. Empty CSV fields (missing values) are refused\n"
     "  --max-features N         LIBSVM: largest feature index accepted (default 10000000)\n"
     "  --layout auto|dense|sparse   how the data (and --test) is held: dense rows, or sparse\n"
     "                           rows (CSR: 8 bytes a non-zero); auto (default) is sparse when\n"
     "                           fewer than 1/4 of the values are non-zero, or when only the\n"
     "                           sparse form fits --mem-mb (a .ptd file keeps its own layout\n"
     "                           unless only the other fits)\n"
     "  --mem-mb M               memory budget for the data and training buffers (default:\n"
     "                           half of RAM); larger needs are refused before allocating\n"
     "  --json                   print one JSON object on stdout and nothing else there\n"
     "  --quiet                  no progress, no summary\n"},
    {"predict", "usage: ptron predict MODEL FILE [-o PREDICTIONS] [--format F] [--delimiter C]\n"
                "                     [--layout L] [--json] [--quiet]\n"
                "  prints Accuracy = A% (correct/n); -o writes one predicted label per line\n"
                "  (replacing PREDICTIONS whole or not at all). More than two classes: precision\n"
                "  and recall per class, and the confusion matrix up to 1000 classes\n"
                "  --delimiter C  CSV field separator (default ','; 'tab' for a tab)\n"
                "  --layout auto|dense|sparse  the layout FILE is read into (default auto: see\n"
                "                 ptron help train)\n"},
    {"expand",
     "usage: ptron expand FILE (--degree D [--coef0 C] [--hash-bits B] | --rff D [--gamma G])\n"
     "                    [--seed S] -o OUT\n"
     "                    [--max-features N] [--mem-mb M] [--format F] [--delimiter C] [--to F]\n"
     "                    [--layout L] [--json] [--quiet]\n"
     "  materialise an explicit feature expansion of FILE into OUT (labels kept)\n"
     "  --degree D        all monomials of degree <= D with multinomial sqrt coefficients:\n"
     "                    phi(x).phi(z) = (C + x.z)^D; C(d + D, D) features\n"
     "  --coef0 C         the constant C >= 0 (default 1; 0 keeps only degree D non-zero)\n"
     "  --rff D           D random Fourier features sqrt(2/D) cos(W x + b) for the RBF kernel\n"
     "                    exp(-G |x - z|^2)\n"
     "  --gamma G         RBF width (default 1); --seed S  seed of W and b (default 1)\n"
     "  --hash-bits B     hash the monomials' index space to 2^B columns with a sign hash\n"
     "                    (as Vowpal Wabbit, from --seed); only each row's non-zeros'\n"
     "                    monomials are computed (B in 1..31)\n"
     "  --max-features N  refuse more output features than N (default 10000000)\n"
     "  --mem-mb M        refuse a matrix larger than M MiB (default: half of RAM)\n"
     "  --delimiter C     field separator of a CSV input (default ','; 'tab' for a tab)\n"
     "  --layout auto|dense|sparse  the layout FILE is read into (default auto: see ptron\n"
     "                    help train)\n"
     "  The output dimension and bytes are printed before any work; a refusal names both and\n"
     "  exits 2. To train without materialising, use ptron train --expand.\n"},
    {"bench",
     "usage: ptron bench DATA [--paths online,batch,kernel] [--epochs E] [--threads T]\n"
     "                   [--isa I] [--kernel K] [--gamma G] [--format F] [--delimiter C]\n"
     "                   [--layout L] [--json]\n"
     "  train every path on DATA with default parameters and print one table: load time,\n"
     "  train time, epochs, mistakes, train accuracy, samples/s and GB/s of the feature matrix\n"
     "  --paths LIST      comma-separated paths to run (default online,batch,kernel)\n"
     "  --epochs E        maximum epochs of each path (default 10)\n"
     "  --kernel K --gamma G   the kernel path's kernel (default linear) and width\n"
     "  --delimiter C     CSV field separator (default ','; 'tab' for a tab)\n"
     "  --layout auto|dense|sparse  the layout DATA is read into (default auto: see ptron\n"
     "                    help train)\n"
     "  A path that fails is reported in its row (and on stderr) and the command exits 2.\n"
     "  The Google Benchmark suite (build-*/bench/ptron-bench, scripts/bench-report)\n"
     "  measures the parts alone.\n"},
};

/* The parameters library messages name, and the flags (or option values) that set them. */
static const struct {
    const char *field, *flag;
} flag_of[] = {
    {"pt_train_params.path", "--path"},
    {"pt_train_params.epochs", "--epochs"},
    {"pt_train_params.eta", "--eta"},
    {"pt_train_params.margin", "--margin"},
    {"pt_train_params.shuffle", "--shuffle"},
    {"pt_train_params.threads", "--threads"},
    {"pt_train_params.mem_budget_bytes", "--mem-mb"},
    {"pt_train_params.lambda", "--lambda"},
    {"pt_train_params.batch_size", "--batch-size"},
    {"pt_train_params.schedule", "--schedule"},
    {"pt_train_params.tol", "--tol"},
    {"pt_train_params.batch_impl", "--batch-impl"},
    {"pt_train_params.kernel", "--kernel"},
    {"pt_train_params.degree", "--degree"},
    {"pt_train_params.gamma", "--gamma"},
    {"pt_train_params.coef0", "--coef0"},
    {"pt_train_params.cache_mb", "--cache-mb"},
    {"pt_train_params.gram_storage", "--gram"},
    {"pt_train_params.multiclass", "--multiclass"},
    {"pt_train_params.expand", "--expand"},
    {"pt_train_params.expand.mem_budget_bytes", "--mem-mb"},
    {"pt_train_params.average_iterates", "--average-iterates"},
    {"pt_train_params.init", "--init MODEL"},
    {"pt_train_params.init_random", "--init random"},
    {"pt_train_params.resume", "--resume"},
    {"pt_read_options.max_features", "--max-features"},
    {"pt_read_options.csv_delimiter", "--delimiter"},
    {"pt_read_options.format", "--format"},
    {"PT_FORMAT_LIBSVM", "libsvm"},
    {"pt_read_options.mem_budget_bytes", "--mem-mb"},
    {"pt_read_options.layout", "--layout"},
    {"pt_expand_params.max_features", "--max-features"},
    {"pt_expand_params.mem_budget_bytes", "--mem-mb"},
    {"pt_gen_params.n", "--n"},
    {"pt_gen_params.d", "--d"},
    {"pt_gen_params.margin", "--margin"},
    {"pt_gen_params.noise", "--noise"},
    {"pt_gen_params.seed", "--seed"},
    {"pt_gen_params.classes", "--classes"},
    {"pt_gen_params.nnz", "--nnz"},
    {"PT_VARIANT_AVERAGED", "--averaged"},
    {"PT_VARIANT_VOTED", "--voted"},
    {"PT_SCHEDULE_PEGASOS", "pegasos"},
    {"PT_BATCH_GEMV", "gemv"},
    {"PT_KERNEL_POLY", "poly"},
    {"PT_KERNEL_RBF", "rbf"},
    {"PT_GRAM_AUTO", "auto"},
    {"PT_GRAM_ROWS", "rows"},
    {"PT_MULTI_OVR", "ovr"},
};

static bool name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

const char *cli_message(const char *msg)
{
    static _Thread_local char out[2048];
    size_t o = 0;
    for (const char *p = msg; *p && o + 1 < sizeof out;) {
        if (!name_char(*p) || (p > msg && name_char(p[-1]))) {
            out[o++] = *p++;
            continue;
        }
        /* a whole name: words joined by dots ("pt_train_params.expand.max_features"), the
         * sentence's own full stop left out */
        const char *e = p;
        while (name_char(*e) || (*e == '.' && name_char(e[1]))) e++;
        size_t len = (size_t)(e - p);
        const char *with = NULL;
        for (size_t i = 0; i < sizeof flag_of / sizeof flag_of[0] && !with; i++)
            if (strlen(flag_of[i].field) == len && memcmp(flag_of[i].field, p, len) == 0)
                with = flag_of[i].flag;
        if (!with) with = p;
        else len = strlen(with);
        if (len > sizeof out - 1 - o) len = sizeof out - 1 - o;
        memcpy(out + o, with, len);
        o += len;
        p = e;
    }
    out[o] = '\0';
    return out;
}

void cli_usage(FILE *f, const char *cmd)
{
    if (cmd)
        for (size_t i = 0; i < sizeof usages / sizeof usages[0]; i++)
            if (strcmp(cmd, usages[i].cmd) == 0) {
                fputs(usages[i].text, f);
                return;
            }
    fputs("ptron " PT_VERSION_STRING ": perceptron training engine\n"
          "usage: ptron COMMAND [options]\n"
          "  gen KIND -o FILE        generate a dataset (separable, noisy, xor, circle, blobs,\n"
          "                          sparse)\n"
          "  info FILE               describe a dataset or a model\n"
          "  convert IN -o OUT       convert between LIBSVM, CSV and .ptd\n"
          "  train FILE -o MODEL     train a perceptron (online, batch or kernel path)\n"
          "  predict MODEL FILE      predict and report accuracy\n"
          "  expand FILE -o OUT      polynomial or random Fourier feature expansion\n"
          "  bench DATA              time every training path on DATA, end to end\n"
          "  help [COMMAND]          this text, or every option of COMMAND\n"
          "  --version               print the version\n"
          "Every command that reads data takes --layout auto|dense|sparse: dense rows, or sparse\n"
          "rows (CSR, 8 bytes a non-zero); auto (default) is sparse below density 1/4, or when\n"
          "only the sparse form fits the memory budget (--mem-mb).\n",
          f);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "ptron%s%s: %s\n", cmd ? " " : "", cmd ? cmd : "", cli_message(msg));
    /* the first line of the usage text */
    if (cmd)
        for (size_t i = 0; i < sizeof usages / sizeof usages[0]; i++)
            if (strcmp(cmd, usages[i].cmd) == 0) {
                const char *nl = strchr(usages[i].text, '\n');
                fprintf(stderr, "%.*s\n", (int)(nl - usages[i].text), usages[i].text);
            }
    if (cmd) fprintf(stderr, "(ptron help %s lists every option)\n", cmd);
    return EXIT_USAGE;
}

void cli_args_init(cli_args *a, int argc, char **argv)
{
    a->argc = argc;
    a->argv = argv;
    a->i = 1;
    a->cmd = argv[0];
    a->error = false;
}

const char *cli_next(cli_args *a) { return a->i < a->argc ? a->argv[a->i++] : NULL; }

const char *cli_value(cli_args *a, const char *opt)
{
    if (a->i >= a->argc) {
        cli_usage_error(a->cmd, "option %s needs a value", opt);
        a->error = true;
        return NULL;
    }
    return a->argv[a->i++];
}

bool cli_double(cli_args *a, const char *opt, double lo, double hi, double *out)
{
    const char *v = cli_value(a, opt);
    if (!v) return false;
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (end == v || *end || errno == ERANGE || !isfinite(x)) {
        cli_usage_error(a->cmd, "option %s: '%s' is not a number", opt, v);
    } else if (x < lo || x > hi) {
        cli_usage_error(a->cmd, "option %s: %s is out of range [%g, %g]", opt, v, lo, hi);
    } else {
        *out = x;
        return true;
    }
    a->error = true;
    return false;
}

bool cli_float(cli_args *a, const char *opt, double lo, double hi, float *out)
{
    double x;
    if (!cli_double(a, opt, lo, hi, &x)) return false;
    *out = (float)x;
    return true;
}

bool cli_int(cli_args *a, const char *opt, long lo, long hi, long *out)
{
    const char *v = cli_value(a, opt);
    if (!v) return false;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (end == v || *end || errno == ERANGE) {
        cli_usage_error(a->cmd, "option %s: '%s' is not an integer", opt, v);
    } else if (x < lo || x > hi) {
        cli_usage_error(a->cmd, "option %s: %ld is out of range [%ld, %ld]", opt, x, lo, hi);
    } else {
        *out = x;
        return true;
    }
    a->error = true;
    return false;
}

bool cli_size(cli_args *a, const char *opt, size_t lo, size_t hi, size_t *out)
{
    const char *v = cli_value(a, opt);
    if (!v) return false;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (end == v || *end || errno == ERANGE || v[0] == '-') {
        cli_usage_error(a->cmd, "option %s: '%s' is not a non-negative integer", opt, v);
    } else if (x < lo || x > hi) {
        cli_usage_error(a->cmd, "option %s: %llu is out of range [%zu, %zu]", opt, x, lo, hi);
    } else {
        *out = (size_t)x;
        return true;
    }
    a->error = true;
    return false;
}

bool cli_u64(cli_args *a, const char *opt, uint64_t *out)
{
    size_t x;
    if (!cli_size(a, opt, 0, SIZE_MAX, &x)) return false;
    *out = x;
    return true;
}

size_t cli_mem_mb;
char cli_csv_delimiter;
pt_layout cli_layout = PT_LAYOUT_AUTO;

bool cli_layout_opt(cli_args *a, const char *opt)
{
    const char *v = cli_value(a, opt);
    if (!v) return false;
    if (pt_layout_parse(v, &cli_layout) != PT_OK) {
        cli_usage_error(a->cmd, "option %s: %s", opt, pt_last_error());
        a->error = true;
        return false;
    }
    return true;
}

bool cli_delimiter(cli_args *a, const char *opt)
{
    const char *v = cli_value(a, opt);
    if (!v) return false;
    if (strcmp(v, "tab") == 0 || strcmp(v, "\\t") == 0) {
        cli_csv_delimiter = '\t';
    } else if (v[0] && !v[1]) {
        cli_csv_delimiter = v[0];
    } else {
        cli_usage_error(a->cmd, "option %s: '%s' is not one character (or 'tab')", opt, v);
        a->error = true;
        return false;
    }
    return true;
}

pt_status cli_read_dataset(const char *path, const char *format, size_t max_features,
                           pt_dataset **out, double *seconds)
{
    pt_read_options o;
    pt_read_options_init(&o);
    if (format) {
        pt_status s = pt_format_parse(format, &o.format);
        if (s != PT_OK) return s;
    }
    if (max_features) o.max_features = max_features;
    if (cli_csv_delimiter) o.csv_delimiter = cli_csv_delimiter;
    if (cli_mem_mb) o.mem_budget_bytes = cli_mem_mb << 20;
    o.layout = cli_layout;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pt_status s = pt_dataset_read(path, &o, out);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (seconds) *seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    return s;
}
