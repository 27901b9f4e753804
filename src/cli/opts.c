/* Argument parsing helpers and the usage texts. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
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
             "  --label-column N|last|NAME  CSV label column (default 1; see ptron help train)\n"
             "  --layout auto|dense|sparse  the layout to read into (default auto: see train)\n"},
    {"convert", "usage: ptron convert IN -o OUT [--format F] [--to F] [--layout L]\n"
                "                     [--dtype f32|bf16|u8] [--max-features N] [--mem-mb M]\n"
                "                     [--delimiter C]\n"
                "  between LIBSVM (.svm/.libsvm/.txt), CSV (.csv) and ptron's binary .ptd\n"
                "  --format F  input format (default: by extension); --to F  output format\n"
                "  --layout auto|dense|sparse  the layout IN is read into and a .ptd OUT is\n"
                "              written in (default auto: see ptron help train); LIBSVM output\n"
                "              holds the non-zeros, CSV output every value (refused when its\n"
                "              dense form would not fit half of RAM)\n"
                "  --dtype f32|bf16|u8  how a dense .ptd OUT stores values (default: as IN):\n"
                "              bf16 2 bytes (rounded to nearest), u8 1 byte, values >= 0,\n"
                "              x = q / m: one divisor m when exact (pixels / 255), else per\n"
                "              feature m = 255 / max, q rounded to nearest; every path reads\n"
                "              it as is (the kernel path trains on a float32 copy)\n"
                "  --delimiter C  field separator of a CSV input (default ','; 'tab' for a tab);\n"
                "                 CSV is written with commas (label first)\n"
                "  --label-column N|last|NAME  a CSV input's label column (default 1; see\n"
                "                 ptron help train)\n"
                "  IN may be gzip-compressed (LIBSVM or CSV), or - for standard input; OUT may\n"
                "  be - for standard output in a text format (LIBSVM unless --to csv)\n"},
    {"train",
     "usage: ptron train FILE [MODEL] [options]   (or -o MODEL)\n"
     "  MODEL, -o MODEL          model file (default FILE.model, as liblinear-train)\n"
     "  FILE                     training data: LIBSVM, CSV (.csv), .ptd, gzip of LIBSVM or\n"
     "                           CSV (.gz, or gzip content), - for standard input\n"
     "  --path online|batch|kernel  training path (default online)\n"
     "  --epochs E               maximum epochs (default 10); stops at an epoch with no mistake\n"
     "  --eta X                  learning rate (default 1)\n"
     "  --margin TAU             update when y w.x <= TAU (0: Rosenblatt; > 0: margin perceptron)\n"
     "  --averaged               averaged perceptron (average of all iterates; online, kernel)\n"
     "  --voted                  voted perceptron (Freund and Schapire; online, one-vs-rest\n"
     "                           too: each class votes with its own vectors, within 1/K of\n"
     "                           --mem-mb each)\n"
     "  --voted-max-vectors K    voted: keep at most K vectors (per class), the current one\n"
     "                           and the K - 1 of largest survival counts; the vote costs a\n"
     "                           dot per vector per row scored, and without a cap the vectors\n"
     "                           are the updates (default: no cap)\n"
     "  --train-accuracy         compute the training accuracy even where its pass would cost\n"
     "                           more than the training (voted models: skipped then, and the\n"
     "                           output says why)\n"
     "  --shuffle                shuffle the order each epoch\n"
     "  --shuffle-chunk ROWS     shuffle in chunks of ROWS consecutive rows: the chunks in a\n"
     "                           shuffled order, then the rows of each (online paths); a\n"
     "                           streamed .ptd always shuffles so (by its window's rows unless\n"
     "                           given), and the same ROWS gives an in-memory run its model\n"
     "  --pass auto|sequential|blocked   online: blocked has the other threads score samples\n"
     "                           ahead of the walk (same model, bit for bit; slower than\n"
     "                           sequential while mistakes are dense; default auto: blocked\n"
     "                           once mistakes are rare)\n"
     "  --seed S                 seed for --shuffle, mini-batch order and --cv's folds\n"
     "                           (default 1)\n"
     "  --mix uniform|mistakes   under mpirun, online path: after each epoch the ranks'\n"
     "                           weights are averaged (iterative parameter mixing), uniformly\n"
     "                           (default) or weighted by each rank's mistakes\n"
     "  --no-bias                no constant-1 coordinate (default: bias on)\n"
     "  --multiclass ovr|direct  more than two classes: one-vs-rest (any path, default) or the\n"
     "                           multiclass perceptron (online path)\n"
     "  --class-weight balanced|LABEL:W,...   weigh the classes (any path): a row of a class\n"
     "                           of weight W counts W times (online: its update is W eta y x;\n"
     "                           batch: its loss term; kernel: its dual step). balanced: n / (K\n"
     "                           n_k) for class k of n_k rows; LABEL:W pairs name classes by\n"
     "                           label (the others weigh 1). Not kept in the model: give it\n"
     "                           again with --resume\n"
     "  --scale -1,1|0,1|standardize   scale the features (fitted on FILE, as ptron scale)\n"
     "                           and keep the scaling in the model: predict takes raw data\n"
     "  --cv K                   K-fold cross-validation instead of a model: stratified folds\n"
     "                           from --seed, each trained with these options (any path) on\n"
     "                           the other folds, in parallel (--threads folds at once, one\n"
     "                           thread each); prints each fold's held-out accuracy and their\n"
     "                           mean +- standard deviation (--json: cv_accuracy, ...)\n"
     "  --proba                  two classes: fit probabilities P(+1 | x) = 1 / (1 +\n"
     "                           exp(A f(x) + B)) by Platt scaling on out-of-fold scores (5\n"
     "                           folds from --seed, each trained as this run) and keep A and B\n"
     "                           in the model (predict --proba)\n"
     "  --search                 cross-validate (--cv K, default 5) a small grid of the\n"
     "                           options that matter on the path (online: --margin, --epochs,\n"
     "                           --averaged; batch: --loss, --lambda, --schedule; kernel:\n"
     "                           --kernel, --gamma, --degree, --averaged), the other options as\n"
     "                           given; prints the table and the best (--json: grid, best)\n"
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
     "                           random ones, each uniform in [0, 1) from --seed, as the\n"
     "                           perceptron notebook; default w = 0. From the model of epoch\n"
     "                           k, E - k more epochs without --shuffle give the E-epoch run's\n"
     "                           weights (classic; the batch path's schedules and averages\n"
     "                           start over)\n"
     "  --resume FILE            continue the run recorded in FILE (a checkpoint, or the model an\n"
     "                           interrupted run wrote), with its parameters (--epochs may\n"
     "                           extend it; an option that sets one to another value is\n"
     "                           refused): the model equals the uninterrupted run's, byte for\n"
     "                           byte. Ctrl-C or SIGTERM saves the model as it stands and where\n"
     "                           the run stands, exit 130/143, on any path; a finished model\n"
     "                           cannot be resumed\n"
     "  --loss perceptron|hinge|squared   batch loss (default perceptron)\n"
     "  --lambda L               L2 regularisation (default 0)\n"
     "  --batch-size B           batch: rows per mini-batch (default 256; 0: full batch)\n"
     "  --schedule constant|invsqrt|pegasos   batch step schedule (default constant)\n"
     "  --tol T                  batch: stop when the objective changes by less than T (relative)\n"
     "  --batch-impl auto|gemv|fused   batch implementation (default auto)\n"
     "  --average-iterates       batch: return the average of the iterates (the default)\n"
     "  --last-iterate           batch: return the last iterate instead of the average\n"
     "                           Why averaged mini-batches by default: a full batch takes one\n"
     "                           step an epoch, so 10 epochs are 10 steps. Pegasos' step\n"
     "                           1/(lambda t) is 10^4/t at lambda 1e-4, and the bias, which is\n"
     "                           neither regularised nor projected, swings by about\n"
     "                           1/(2 lambda t) a step: every row lands on one side, then the\n"
     "                           other (mistakes n/2 +- an epoch, 50% to 83% held out) until\n"
     "                           t nears 1/lambda. Mini-batches take n/B steps an epoch and\n"
     "                           the average of the iterates smooths what swing is left\n"
     "  --kernel K               kernel path's kernel: linear, poly, rbf (default linear), or\n"
     "                           an expression by the closure rules of kernels over linear,\n"
     "                           poly(degree=D,gamma=G,coef0=C), rbf(gamma=G) and\n"
     "                           geometric(degree=D,gamma=G) (the sum of (G x.z)^k, k = 0..D)\n"
     "                           with numbers c > 0, E+E, E*E and normalize(E) =\n"
     "                           K(x,z)/sqrt(K(x,x) K(z,z)); e.g. '2*rbf(gamma=0.5)+linear'\n"
     "  --degree K               poly degree (default 2)\n"
     "  --gamma scale|auto|G     poly/rbf gamma (default scale: 1/(d Var(X)), as scikit-learn;\n"
     "                           auto: 1/d); the model records the number used\n"
     "  --coef0 C                poly constant >= 0 (default 1: every lower degree in the span)\n"
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
     "  --cache-mb M             Gram/row cache budget in MiB (default: the memory budget);\n"
     "                           more than --mem-mb leaves is an error\n"
     "  --gram auto|full|rows    kernel storage (default auto)\n"
     "  --budget N               kernel path: at most N support vectors (per class with more\n"
     "                           classes); a mistake with the budget full first removes one\n"
     "                           at random (Cavallanti, Cesa-Bianchi and Gentile)\n"
     "  --threads T              threads (default: all cores)\n"
     "  --isa auto|scalar|avx2|avx512|neon   SIMD kernels (default auto, or $PTRON_ISA)\n"
     "  --bounds                 print R and the margin of a reference separator w* in the\n"
     "                           space the run trains in, and each classic mistake bound on the\n"
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
     "  --label-column N|last|NAME   CSV: the label's column, N counting from 1 (default 1),\n"
     "                           the last one, or the one NAME heads in the header line. A\n"
     "                           label column with more than 100 distinct values and more than\n"
     "                           half as many as rows gets a warning: it is probably a feature\n"
     "  --max-features N         LIBSVM: largest feature index accepted (default 10000000)\n"
     "  --layout auto|dense|sparse   how the data (and --test) is held: dense rows, or sparse\n"
     "                           rows (CSR: 8 bytes a non-zero); auto (default) is sparse when\n"
     "                           fewer than 1/4 of the values are non-zero, or when only the\n"
     "                           sparse form fits --mem-mb (a .ptd file keeps its own layout\n"
     "                           unless only the other fits)\n"
     "  --mem-mb M               memory budget for the data and training buffers (default:\n"
     "                           half of RAM); larger needs are refused before allocating,\n"
     "                           but a .ptd matrix larger than M is streamed from its file in\n"
     "                           windows of M/8 (online and batch paths)\n"
     "  --json                   print one JSON object on stdout and nothing else there\n"
     "  --quiet                  no progress, no summary\n"},
    {"predict", "usage: ptron predict MODEL FILE [-o PREDICTIONS] [--scores SCORES]\n"
                "                     [--proba PROBS] [--format F] [--delimiter C] [--layout L]\n"
                "                     [--json] [--quiet]\n"
                "  prints Accuracy = A% (correct/n); -o writes one predicted label per line\n"
                "  (replacing PREDICTIONS whole or not at all). More than two classes: precision\n"
                "  and recall per class, and the confusion matrix up to 1000 classes\n"
                "  FILE may be gzip-compressed, or - for standard input; -o - (or --scores -,\n"
                "  --proba -) writes the labels (scores, probabilities) to standard output and\n"
                "  the report to stderr\n"
                "  --scores SCORES  write the decision values, one line a row (for ROC curves,\n"
                "                 AUC, thresholds): two classes, one column f(x), the +1 class\n"
                "                 predicted where f(x) >= 0; K classes, K columns, the class of\n"
                "                 highest score predicted. The first line is '#' and the class\n"
                "                 of each column (two classes: the +1 class)\n"
                "  --proba PROBS  a model trained with --proba: each row's probability of the\n"
                "                 +1 class (Platt scaling), one a line, after '#' and that class\n"
                "  --delimiter C  CSV field separator (default ','; 'tab' for a tab)\n"
                "  --label-column N|last|NAME  CSV label column (default 1; see ptron help train)\n"
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
     "  --label-column N|last|NAME  CSV label column (default 1; see ptron help train)\n"
     "  --layout auto|dense|sparse  the layout FILE is read into (default auto: see ptron\n"
     "                    help train)\n"
     "  The output dimension and bytes are printed before any work; a refusal names both and\n"
     "  exits 2. To train without materialising, use ptron train --expand.\n"},
    {"scale",
     "usage: ptron scale DATA -o OUT [--range -1,1|0,1 | --standardize] [--save-params P]\n"
     "                   [--params P] [--to F] [--format F] [--delimiter C] [--layout L]\n"
     "                   [--mem-mb M]\n"
     "  scale every feature, as svm-scale: x' = (x - offset) factor, the output dense\n"
     "  --range -1,1|0,1  min-max to [-1, 1] (default) or [0, 1]\n"
     "  --standardize     mean 0, standard deviation 1 (over the rows)\n"
     "  --save-params P   write the offsets and factors fitted on DATA to P\n"
     "  --params P        apply the parameters in P (fitted on training data) instead of\n"
     "                    fitting: scale held-out data as the training data was\n"
     "  A constant feature scales to 0. To keep the scaling in a model, so that predict takes\n"
     "  raw data, use ptron train --scale.\n"},
    {"bench",
     "usage: ptron bench DATA [--paths online,batch,kernel] [--reps R] [--test FILE]\n"
     "                   [--epochs E] [--threads T] [--isa I] [--kernel K] [--gamma G]\n"
     "                   [--format F] [--delimiter C] [--layout L] [--json]\n"
     "  train each path on DATA with default parameters (the batch path: train's averaged\n"
     "  mini-batches), R times, and print one table: median (min, max) train time, epochs,\n"
     "  mistakes, train accuracy, GB/s of the feature matrix and its ratio to a streaming\n"
     "  read of the same matrix measured in the same run (the matrix summed R times by one\n"
     "  thread and by all, each a share, with the paths' SIMD loads; the faster is the\n"
     "  ceiling); the header names the CPU, ISA, threads and version\n"
     "  --paths LIST      comma-separated paths to run, each one whatever n (default: online\n"
     "                    and batch, and kernel when DATA has at most 20000 rows: its cost\n"
     "                    grows with n^2; a path skipped is named, with the reason)\n"
     "  --reps R          runs of each path and reads of the baseline (default 3; 1 to 100)\n"
     "  --test FILE       held-out rows: each path's accuracy on them (the last run's model)\n"
     "  --epochs E        maximum epochs of each path (default 10)\n"
     "  --kernel K --gamma G   the kernel path's kernel (default linear) and width\n"
     "  --delimiter C     CSV field separator (default ','; 'tab' for a tab)\n"
     "  --label-column N|last|NAME  CSV label column (default 1; see ptron help train)\n"
     "  --layout auto|dense|sparse  the layout DATA is read into (default auto: see ptron\n"
     "                    help train)\n"
     "  --json            one object: cpu, isa, threads, version, n, d, layout, baseline, and\n"
     "                    per path median/min/max seconds, GB/s, ratio, accuracies\n"
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
    {"pt_train_params.shuffle_chunk", "--shuffle-chunk"},
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
    {"pt_train_params.budget", "--budget"},
    {"pt_train_params.kernel_expr", "--kernel"},
    {"PT_PATH_KERNEL", "kernel"},
    {"pt_train_params.multiclass", "--multiclass"},
    {"pt_train_params.expand", "--expand"},
    {"pt_train_params.expand.mem_budget_bytes", "--mem-mb"},
    {"pt_train_params.average_iterates", "--average-iterates"},
    {"pt_train_params.init", "--init MODEL"},
    {"pt_train_params.init_random", "--init random"},
    {"pt_train_params.class_weight", "--class-weight"},
    {"pt_train_params.scale", "--scale"},
    {"pt_train_params.resume", "--resume"},
    {"pt_train_params.voted_max_vectors", "--voted-max-vectors"},
    {"pt_read_options.max_features", "--max-features"},
    {"pt_read_options.csv_delimiter", "--delimiter"},
    {"pt_read_options.csv_label_column", "--label-column"},
    {"pt_read_options.csv_label_name", "--label-column N|last|NAME"},
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

static const char *usage_text(const char *cmd)
{
    for (size_t i = 0; cmd && i < sizeof usages / sizeof usages[0]; i++)
        if (strcmp(cmd, usages[i].cmd) == 0) return usages[i].text;
    return NULL;
}

bool cli_usage(FILE *f, const char *cmd)
{
    const char *text = usage_text(cmd);
    if (!f) return text != NULL || cmd == NULL;
    if (text) {
        fputs(text, f);
        return true;
    }
    fputs("ptron " PT_VERSION_STRING ": perceptron training engine\n"
          "usage: ptron COMMAND [options]\n"
          "  gen KIND -o FILE        generate a dataset (separable, noisy, xor, circle, blobs,\n"
          "                          sparse)\n"
          "  info FILE               describe a dataset or a model\n"
          "  convert IN -o OUT       convert between LIBSVM, CSV and .ptd\n"
          "  train FILE [MODEL]      train a perceptron (online, batch or kernel path)\n"
          "  predict MODEL FILE      predict and report accuracy\n"
          "  expand FILE -o OUT      polynomial or random Fourier feature expansion\n"
          "  scale DATA -o OUT       scale features to [-1, 1], [0, 1] or standardise them\n"
          "  bench DATA              time every training path on DATA, end to end\n"
          "  help [COMMAND]          this text, or every option of COMMAND\n"
          "  --version               print the version\n"
          "Options take their value as --opt VALUE or --opt=VALUE; COMMAND -h (--help) prints\n"
          "the same text as help COMMAND. Data files are LIBSVM, CSV (.csv) or .ptd, chosen by\n"
          "extension or --format; LIBSVM and CSV may be gzip-compressed (.gz, or gzip content),\n"
          "and - reads them from standard input (LIBSVM unless --format csv).\n"
          "Every command that reads data takes --layout auto|dense|sparse: dense rows, or sparse\n"
          "rows (CSR, 8 bytes a non-zero); auto (default) is sparse below density 1/4, or when\n"
          "only the sparse form fits the memory budget (--mem-mb).\n",
          f);
    return cmd == NULL;
}

/* Edit distance of a and b (optimal string alignment: a swap of two neighbours is one edit). */
static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63) return SIZE_MAX;
    size_t d[64][64];
    for (size_t i = 0; i <= la; i++) d[i][0] = i;
    for (size_t j = 0; j <= lb; j++) d[0][j] = j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[la][lb];
}

const char *cli_suggest(const char *word, const char *const *names)
{
    const char *bare = word + strspn(word, "-");
    size_t len = strlen(bare), limit = len / 3 > 1 ? len / 3 : 1, best = SIZE_MAX;
    const char *found = NULL, *prefixed = NULL;
    int prefixes = 0;
    for (const char *const *n = names; *n; n++) {
        size_t dist = edit_distance(word, *n);
        if (dist < best) {
            best = dist;
            found = *n;
        }
        /* a word of three letters or more that begins exactly one name */
        const char *nb = *n + strspn(*n, "-");
        if (len >= 3 && strncmp(nb, bare, len) == 0) {
            prefixed = *n;
            prefixes++;
        }
    }
    if (found && best <= limit) return found;
    return prefixes == 1 ? prefixed : NULL;
}

const char *cli_suggest_option(const char *cmd, const char *opt)
{
    /* every "--word" the usage text lists, where it starts a token */
    static char names[256][40];
    const char *list[257];
    size_t k = 0;
    const char *text = usage_text(cmd);
    for (const char *p = text ? strstr(text, "--") : NULL; p && k < 256; p = strstr(p + 2, "--")) {
        if (p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '-')) continue;
        size_t len = 2 + strspn(p + 2, "abcdefghijklmnopqrstuvwxyz0123456789-");
        if (len == 2 || len >= sizeof names[0]) continue;
        bool seen = false;
        for (size_t i = 0; i < k && !seen; i++)
            seen = strlen(names[i]) == len && strncmp(names[i], p, len) == 0;
        if (seen) continue;
        memcpy(names[k], p, len);
        names[k][len] = '\0';
        list[k] = names[k];
        k++;
    }
    list[k] = NULL;
    return cli_suggest(opt, list);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (cmd && strcmp(fmt, "unknown option %s") == 0) {
        /* "did you mean --epochs?" from the options the usage text lists */
        va_start(ap, fmt);
        const char *opt = va_arg(ap, const char *);
        va_end(ap);
        const char *near = cli_suggest_option(cmd, opt);
        size_t len = strlen(msg);
        if (near && strcmp(near, opt) != 0)
            snprintf(msg + len, sizeof msg - len, " (did you mean %s?)", near);
    }
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
    a->inline_value = a->inline_opt = NULL;
}

const char *cli_next(cli_args *a)
{
    if (a->inline_value && !a->error) {
        /* --flag=value for an option that takes no value */
        cli_usage_error(a->cmd, "option %s takes no value ('%s=%s' given)", a->inline_opt,
                        a->inline_opt, a->inline_value);
        a->error = true;
        return NULL;
    }
    a->inline_value = a->inline_opt = NULL;
    if (a->i >= a->argc) return NULL;
    char *arg = a->argv[a->i++];
    char *eq = arg[0] == '-' && arg[1] == '-' && arg[2] != '=' ? strchr(arg, '=') : NULL;
    if (eq) {
        /* --opt=value: the option here, its value for cli_value */
        *eq = '\0';
        a->inline_value = eq + 1;
        a->inline_opt = arg;
    }
    return arg;
}

const char *cli_value(cli_args *a, const char *opt)
{
    if (a->inline_value) {
        const char *v = a->inline_value;
        a->inline_value = NULL;
        return v;
    }
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

int cli_csv_label_column;
const char *cli_csv_label_name;

void cli_globals_reset(void)
{
    cli_mem_mb = 0;
    cli_csv_delimiter = 0;
    cli_layout = PT_LAYOUT_AUTO;
    cli_csv_label_column = 0;
    cli_csv_label_name = NULL;
}

bool cli_label_column(cli_args *a, const char *opt)
{
    const char *v = cli_value(a, opt);
    if (!v) return false;
    cli_csv_label_name = NULL;
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (strcmp(v, "last") == 0) {
        cli_csv_label_column = PT_CSV_LABEL_LAST;
    } else if (end != v && !*end) {
        if (n < 1 || n > INT_MAX || errno == ERANGE) {
            cli_usage_error(a->cmd, "option %s: %s is no column number: columns count from 1 "
                            "(the first is 1; 'last' is the last)", opt, v);
            a->error = true;
            return false;
        }
        cli_csv_label_column = (int)(n - 1);
    } else if (*v) {
        cli_csv_label_name = v; /* a name in the header line */
    } else {
        cli_usage_error(a->cmd, "option %s: give N (from 1), 'last' or a header name", opt);
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

double cli_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

pt_status cli_read_dataset(const char *path, const char *format, size_t max_features,
                           pt_dataset **out, double *seconds)
{
    return cli_read_data(path, format, max_features, CLI_READ_WHOLE, out, seconds);
}

pt_status cli_read_data(const char *path, const char *format, size_t max_features, int share,
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
    o.csv_label_column = cli_csv_label_column;
    o.csv_label_name = cli_csv_label_name;
    if (cli_mem_mb) o.mem_budget_bytes = cli_mem_mb << 20;
    o.layout = cli_layout;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    /* a distributed run: this rank's share, or (kernel path) the whole data on every rank */
    pt_status s = share == CLI_READ_SHARE         ? pt_dataset_read_shard(path, &o, out)
                  : share == CLI_READ_REPLICATED ? pt_dataset_read_replicated(path, &o, out)
                                                 : pt_dataset_read(path, &o, out);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (seconds) *seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    return s;
}
