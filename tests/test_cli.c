/* The CLI end to end: gen, info, convert, train, predict; the JSON contract; exit statuses
 * and messages for usage errors and bad input. */
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "common/common.h" /* pt_checksum, to edit a model as a person who knows the format would */
#include "cli_test_util.h"


/* The foundation issue's acceptance check. */
START_TEST(test_separable_20000x64_converges)
{
    const char *data = keep(0, tu_path("sep", ".ptd")), *model = keep(1, tu_path("sep", ".model"));
    char *out, *err;
    ck_assert_int_eq(run(&out, &err, "gen separable --n 20000 --d 64 -o %s", data), 0);
    free(out);
    free(err);
    ck_assert_int_eq(run(&out, &err, "train %s -o %s --epochs 1000 --json", data, model), 0);
    /* one JSON object, nothing else on stdout */
    ck_assert_int_eq(out[0], '{');
    ck_assert_ptr_eq(strchr(out, '\n'), out + strlen(out) - 1);
    const char *keys[] = {"\"path\": \"online\"", "\"isa\": ", "\"threads\": ", "\"n\": 20000", "\"d\": 64",
                          "\"epochs_run\": ", "\"mistakes_per_epoch\": [", "\"updates\": ",
                          "\"converged\": true", "\"load_seconds\": ", "\"train_seconds\": ",
                          "\"evaluate_seconds\": ", "\"write_seconds\": ",
                          "\"train_accuracy\": 1,"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) HAS(out, keys[i]);
    ck_assert_str_eq(err, "");
    free(out);
    free(err);
    ck_assert_int_eq(run(&out, &err, "predict %s %s --json", model, data), 0);
    HAS(out, "\"n\": 20000");
    HAS(out, "\"accuracy\": 1,");
    HAS(out, "\"seconds\": ");
    free(out);
    free(err);
    ck_assert_int_eq(run(&out, &err, "info %s --json", data), 0);
    HAS(out, "\"type\": \"dataset\"");
    HAS(out, "\"truth_gamma\": ");
    free(out);
    free(err);
    ck_assert_int_eq(run(&out, &err, "info %s", model), 0);
    HAS(out, "ptron model, online path");
    free(out);
    free(err);
}
END_TEST

/* A voted model's vote costs one dot per vector per row: train skips the training accuracy
 * where its pass would cost PT_SCORE_COST_WARN multiply-adds or more and more than the training
 * (null in --json, with the reason), computes it under a cap (--voted-max-vectors) or when
 * --train-accuracy asks (with a warning of the cost), and scoring says what the vote costs. The
 * cases are made by their sizes: 20,000 rows of 64 noisy features, 10 epochs, make about 50,000
 * vectors (6e10 multiply-adds to score them); 9,000 rows about 1.3e10. */
START_TEST(test_voted_evaluation_cost)
{
    const char *data = keep(0, tu_path("vn", ".ptd")), *model = keep(1, tu_path("vn", ".model"));
    const char *small = keep(2, tu_path("vs", ".ptd"));
    char *out, *err;
    ck_assert_int_eq(run(&out, &err, "gen noisy --n 20000 --d 64 --seed 3 -o %s", data), 0);
    free(out);
    free(err);
    ck_assert_int_eq(run(&out, &err, "gen noisy --n 9000 --d 64 --seed 4 -o %s", small), 0);
    free(out);
    free(err);
    ck_assert_int_eq(run(&out, &err, "train %s -o %s --voted --epochs 10 --json", data, model), 0);
    HAS(out, "\"train_accuracy\": null, \"train_accuracy_skipped\": \"scoring the 20000 "
             "training rows by the vote of the model's vectors would cost ");
    HAS(out, "times the training's");
    HAS(err, "ptron: warning: train accuracy skipped: scoring the 20000 training rows");
    HAS(err, "--train-accuracy computes it, --voted-max-vectors K caps the vectors");
    free(out);
    free(err);
    ck_assert_int_eq(run(&out, &err, "train %s -o %s --voted --epochs 10", data, model), 0);
    HAS(out, "train accuracy: skipped (scoring the 20000 training rows");
    free(out);
    free(err);
    /* capped, the pass is cheap: computed, and the vote's cost is logged (PTRON_VERBOSE) */
    ck_assert_int_eq(run(&out, &err, "train %s -o %s --voted --epochs 10 --voted-max-vectors 100 "
                         "--json", data, model), 0);
    ck_assert_ptr_null(strstr(out, "train_accuracy_skipped"));
    ck_assert_ptr_null(strstr(out, "\"train_accuracy\": null"));
    HAS(out, "\"train_accuracy\": 0.");
    ck_assert_str_eq(err, "");
    free(out);
    free(err);
    char args[2048];
    snprintf(args, sizeof args, "predict %s %s", model, data);
    ck_assert_int_eq(tu_run_cli_sh("export PTRON_VERBOSE=1", args, &out, &err), 0);
    HAS(err, "ptron: scoring 20000 rows by the vote of 100 vectors costs 1.28e+08 multiply-adds "
             "(100 vectors x 20000 rows x 64 features), 100 times a linear model's; "
             "--voted-max-vectors caps the vectors");
    /* predict scores the rows once: the predictions give the counts too */
    ck_assert_ptr_null(strstr(strstr(err, "by the vote of") + 1, "by the vote of"));
    free(out);
    free(err);
    /* forced: computed, with the cost against the training's; predict warns of its cost */
    ck_assert_int_eq(run(&out, &err, "train %s -o %s --voted --epochs 10 --train-accuracy --json",
                         small, model), 0);
    HAS(out, "\"train_accuracy\": 0.");
    ck_assert_ptr_null(strstr(out, "train_accuracy_skipped"));
    HAS(err, "ptron: warning: the train accuracy (--train-accuracy) costs ");
    HAS(err, "ptron: warning: scoring 9000 rows by the vote of ");
    free(out);
    free(err);
    ck_assert_int_eq(run(&out, &err, "predict %s %s", model, small), 0);
    HAS(err, "ptron: warning: scoring 9000 rows by the vote of ");
    HAS(err, " vectors x 9000 rows x 64 features)");
    free(out);
    free(err);
}
END_TEST

START_TEST(test_human_output_and_bounds)
{
    const char *data = keep(0, tu_path("b", ".ptd")), *model = keep(1, tu_path("b", ".model"));
    char *out, *err;
    ck_assert_int_eq(run(&out, &err, "gen separable --n 500 --d 8 --margin 0.2 -o %s", data), 0);
    free(out);
    free(err);
    ck_assert_int_eq(run(&out, &err, "train %s -o %s --epochs 100 --bounds", data, model), 0);
    HAS(out, "converged");
    HAS(out, "separable (Novikoff): updates made ");
    HAS(out, " <= (R/gamma)^2 = ");
    HAS(out, "train accuracy = 100% (500/500)");
    free(out);
    free(err);
    ck_assert_int_eq(run(&out, &err, "predict %s %s", model, data), 0);
    ck_assert_str_eq(out, "Accuracy = 100% (500/500)\n");
    free(out);
    free(err);
}
END_TEST

/* Every "updates made U <= ... = B" line --bounds prints: U <= B, checked here from the text;
 * returns how many there were. */
static int check_bound_lines(const char *out)
{
    int lines = 0;
    for (const char *at = strstr(out, "updates made "); at; at = strstr(at + 1, "updates made ")) {
        unsigned long long u;
        ck_assert_msg(sscanf(at, "updates made %llu <=", &u) == 1, "no '<=' claim in: %s", at);
        const char *eq = strstr(at, " = ");
        ck_assert_ptr_nonnull(eq);
        double bound = strtod(eq + 3, NULL);
        ck_assert_msg((double)u <= bound, "printed %llu <= %g", u, bound);
        lines++;
    }
    return lines;
}

/* --bounds prints each bound only where it covers the run, with the quantity it bounds: the
 * margin perceptron's (R^2 + 2 tau/eta)/gamma^2 with --margin (never (R/gamma)^2, which
 * --margin 20 exceeds), the hinge bound over the passes made; no claim on the batch path or
 * more than two classes; a --reference of another dimension is an error before training. */
START_TEST(test_bounds_claims)
{
    const char *data = keep(0, tu_path("bc", ".ptd")), *model = keep(1, tu_path("bc", ".model"));
    char *out, *err;
    ck_assert_int_eq(run(&out, &err, "gen separable --n 2000 --d 16 --margin 0.1 --seed 1 -o %s", data), 0);
    free(out);
    free(err);
    for (int seed = 1; seed <= 3; seed++) {
        ck_assert_int_eq(run(&out, &err, "train %s -o %s --epochs 100000 --margin 20 --shuffle "
                             "--seed %d --bounds", data, model, seed), 0);
        HAS(out, "separable, margin perceptron (tau = 20, eta = 1): updates made ");
        HAS(out, "(R^2 + 2 tau/eta)/gamma^2 = ");
        ck_assert_msg(strstr(out, "(R/gamma)^2") == NULL, "a classic bound for --margin 20: %s", out);
        ck_assert_int_eq(check_bound_lines(out), 2);
        free(out);
        free(err);
    }
    ck_assert_int_eq(run(&out, &err, "train %s -o %s --epochs 7 --eta 0.5 --bounds", data, model), 0);
    HAS(out, "hinge, ");
    ck_assert_int_eq(check_bound_lines(out), 2);
    free(out);
    free(err);
    ck_assert_int_eq(run(&out, &err, "train %s -o %s --path batch --bounds", data, model), 0);
    HAS(out, "no mistake bound applies: ");
    HAS(out, "batch");
    ck_assert_int_eq(check_bound_lines(out), 0);
    free(out);
    free(err);
    ck_assert_int_eq(run(&out, &err, "train %s -o %s --path batch --bounds --json", data, model), 0);
    HAS(out, "\"covered\": false");
    ck_assert_msg(strstr(out, "mistake_bound") == NULL, "%s", out);
    free(out);
    free(err);
    ck_assert_int_eq(run(&out, &err, "train %s -o %s --margin 2 --epochs 100000 --bounds --json", data, model), 0);
    HAS(out, "\"covered\": true");
    HAS(out, "\"mistake_bound_holds\": true");
    HAS(out, "\"hinge_mistake_bound_holds\": true");
    free(out);
    free(err);
    /* a reference of another dimension: exit 2 before training, naming both */
    const char *small = keep(2, tu_path("bc3", ".ptd")), *ref = keep(3, tu_path("bc3", ".model"));
    ck_assert_int_eq(run(&out, &err, "gen separable --n 50 --d 3 -o %s", small), 0);
    free(out);
    free(err);
    ck_assert_int_eq(run(&out, &err, "train %s -o %s --quiet", small, ref), 0);
    free(out);
    free(err);
    ck_assert_int_eq(run(&out, &err, "train %s -o %s --bounds --reference %s", data, model, ref), 2);
    HAS(err, ref);
    HAS(err, "has 3 features; the run trains on 16");
    ck_assert_str_eq(out, "");
    free(out);
    free(err);
    /* three classes: no claim, and the model is still written */
    const char *blobs = keep(4, tu_path("bcb", ".ptd"));
    ck_assert_int_eq(run(&out, &err, "gen blobs --n 90 --d 3 -o %s", blobs), 0);
    free(out);
    free(err);
    ck_assert_int_eq(run(&out, &err, "train %s -o %s --bounds --reference %s", blobs, model, ref), 0);
    HAS(out, "no mistake bound applies: the bounds are for two classes");
    HAS(out, "model written to");
    ck_assert_int_eq(check_bound_lines(out), 0);
    free(out);
    free(err);
}
END_TEST

/* The weights of a model file: from its "b" line to the checksum. */
static char *weights_text(const char *path)
{
    char *t = tu_read_file(path, NULL);
    ck_assert_ptr_nonnull(t);
    char *b = strstr(t, "\nb "), *end = strstr(t, "\nchecksum ");
    ck_assert(b && end);
    *end = 0;
    char *w = strdup(b);
    free(t);
    return w;
}

/* --init MODEL continues a run: 3 epochs, then 5 from that model, is the 8-epoch model;
 * --init random starts from seeded weights; a model that does not fit is refused (exit 2),
 * and --init with --resume is a usage error. */
START_TEST(test_init_option)
{
    const char *data = keep(0, tu_path("in", ".svm")), *m3 = keep(1, tu_path("in3", ".model")),
               *m8 = keep(2, tu_path("in8", ".model")), *m35 = keep(3, tu_path("in35", ".model"));
    FILE *f = fopen(data, "w");
    for (int i = 0; i < 400; i++)
        fprintf(f, "%d 1:%d 2:%d 3:%d\n", (i * 7 + i / 3) % 5 < 3 ? 1 : -1, i % 9 - 4, (i * 5) % 7 - 3, (i * 3) % 11 - 5);
    fclose(f);
    char *out, *err;
    ck_assert_int_eq(run(&out, &err, "train %s -o %s --epochs 8 --quiet", data, m8), 0);
    free(out);
    free(err);
    ck_assert_int_eq(run(&out, &err, "train %s -o %s --epochs 3 --quiet", data, m3), 0);
    free(out);
    free(err);
    ck_assert_int_eq(run(&out, &err, "train %s -o %s --epochs 5 --init %s", data, m35, m3), 0);
    HAS(out, "started from the weights of ");
    HAS(out, "5 epochs");
    free(out);
    free(err);
    char *a = weights_text(m8), *b = weights_text(m35);
    ck_assert_str_eq(a, b);
    free(a);
    free(b);
    ck_assert_int_eq(run(&out, &err, "train %s -o %s --epochs 2 --init random --seed 9 --json", data, m35), 0);
    HAS(out, "\"init\": \"random\"");
    free(out);
    free(err);
    a = weights_text(m35);
    ck_assert_int_eq(run(&out, &err, "train %s -o %s --epochs 2 --init random --seed 9 --quiet", data, m35), 0);
    free(out);
    free(err);
    b = weights_text(m35);
    ck_assert_str_eq(a, b);
    free(b);
    ck_assert_int_eq(run(&out, &err, "train %s -o %s --epochs 2 --quiet", data, m35), 0);
    free(out);
    free(err);
    b = weights_text(m35);
    ck_assert_str_ne(a, b);
    free(a);
    free(b);
    ck_assert_int_eq(run(&out, &err, "train %s -o %s --init %s --no-bias", data, m35, m3), 2);
    HAS(err, m3);
    HAS(err, "bias");
    free(out);
    free(err);
    ck_assert_int_eq(run(&out, &err, "train %s -o %s --init %s --resume %s", data, m35, m3, m3), 1);
    HAS(err, "--resume");
    free(out);
    free(err);
    ck_assert_int_eq(run(&out, &err, "train %s -o %s --init random --path kernel", data, m35), 1);
    HAS(err, "kernel path");
    free(out);
    free(err);
}
END_TEST

START_TEST(test_convert_round_trip)
{
    const char *ptd = keep(0, tu_path("c", ".ptd")), *svm = keep(1, tu_path("c", ".svm")),
               *csv = keep(2, tu_path("c", ".csv")), *back = keep(3, tu_path("c2", ".ptd"));
    char *out, *err, *a, *b;
    ck_assert_int_eq(run(&out, &err, "gen noisy --n 300 --d 5 -o %s", ptd), 0);
    free(out);
    free(err);
    ck_assert_int_eq(run(NULL, NULL, "convert %s -o %s", ptd, svm), 0);
    ck_assert_int_eq(run(NULL, NULL, "convert %s -o %s", svm, csv), 0);
    ck_assert_int_eq(run(NULL, NULL, "convert %s -o %s", csv, back), 0);
    ck_assert_int_eq(run(&a, &err, "info %s --json", ptd), 0);
    free(err);
    ck_assert_int_eq(run(&b, &err, "info %s --json", back), 0);
    free(err);
    /* same sizes, labels, non-zeros and R: compare from "n" up to "load_seconds" */
    char *pa = strstr(a, "\"n\""), *pb = strstr(b, "\"n\"");
    *strstr(pa, "\"load_seconds\"") = 0;
    *strstr(pb, "\"load_seconds\"") = 0;
    ck_assert_str_eq(pa, pb);
    free(a);
    free(b);
}
END_TEST

/* The library names the parameters of its API; the CLI shows the flags a user types. */
START_TEST(test_messages_name_flags)
{
    const char *data = keep(2, tu_path("flags", ".svm"));
    char *out, *err;
    ck_assert_int_eq(run(&out, &err, "gen separable --n 5000 --d 64 -o %s", data), 0);
    free(out);
    free(err);
    struct {
        const char *args, *says;
        int rc;
    } cases[] = {
        {"train %s --schedule pegasos", "--schedule pegasos needs --lambda > 0", 1},
        {"gen xor --d 1 -o %s.xor.svm", "xor needs --d >= 2", 1},
        {"info %s --mem-mb 1", "raise --mem-mb", 2},
        {"train %s --path kernel --gram full --cache-mb 1 --quiet",
         "raise --cache-mb or use --gram rows or auto", 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char args[1024];
        snprintf(args, sizeof args, cases[i].args, data);
        ck_assert_msg(tu_run_cli(args, &out, &err) == cases[i].rc, "'%s': exit status; %s", args,
                      err);
        HAS(err, cases[i].says);
        ck_assert_msg(!strstr(err, "pt_") && !strstr(err, "PT_"), "'%s': %s", args, err);
        free(out);
        free(err);
    }
}
END_TEST

START_TEST(test_usage_errors_exit_1)
{
    char *out, *err;
    const char *cases[] = {"train", "train x.svm --frobnicate", "train x.svm --epochs 0",
                           "train x.svm --eta -1", "train x.svm --eta abc", "train x.svm --path dual",
                           "gen", "gen spiral -o x.svm", "predict only-one-arg", "frobnicate",
                           "train x.svm --epochs", "train x.svm --path kernel --kernel poly --coef0 -1"};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ck_assert_msg(run(&out, &err, "%s", cases[i]) == 1, "'%s' should exit 1", cases[i]);
        ck_assert_msg(strstr(err, "usage") != NULL, "'%s': no usage line in: %s", cases[i], err);
        ck_assert_str_eq(out, "");
        free(out);
        free(err);
    }
    ck_assert_int_eq(run(&out, &err, "train x.svm --path kernel --kernel poly --coef0 -1"), 1);
    HAS(err, "--coef0 must be >= 0 for the polynomial kernel (got -1)");
    free(out);
    free(err);
}
END_TEST

START_TEST(test_bad_input_exit_2)
{
    char *out, *err;
    ck_assert_int_eq(run(&out, &err, "train /nonexistent/data.svm"), 2);
    HAS(err, "/nonexistent/data.svm");
    free(out);
    free(err);
    const char *one = keep(0, tu_write_file("one", ".svm", "1 1:0.5\n1 2:0.25\n"));
    ck_assert_int_eq(run(&out, &err, "train %s -o %s", one, tu_path("m", ".model")), 2);
    HAS(err, "training needs two classes");
    free(out);
    free(err);
    const char *three = keep(1, tu_write_file("three", ".svm", "1 1:1\n2 1:2\n3 1:3\n"));
    ck_assert_int_eq(run(&out, &err, "train %s -o %s --path batch --multiclass direct", three,
                         tu_path("m", ".model")), 2);
    HAS(err, "3 classes");
    HAS(err, "online path");
    free(out);
    free(err);
    const char *bad = keep(2, tu_write_file("bad", ".svm", "1 1:1\n-1 0:2\n"));
    ck_assert_int_eq(run(&out, &err, "train %s", bad), 2);
    HAS(err, bad);
    HAS(err, ":2:");
    free(out);
    free(err);
    const char *notmodel = keep(3, tu_write_file("nm", ".model", "hello\n"));
    ck_assert_int_eq(run(&out, &err, "predict %s %s", notmodel, one), 2);
    HAS(err, notmodel);
    free(out);
    free(err);
}
END_TEST

/* A model trained on 3 features predicting data with 5: the extra features are ignored, with
 * a warning on stderr, as LIBLINEAR does. */
START_TEST(test_feature_count_mismatch)
{
    const char *small = keep(0, tu_write_file("f3", ".svm", "1 1:1 3:1\n-1 1:-1 2:1\n1 2:-1 3:2\n-1 1:-2\n"));
    const char *wide = keep(1, tu_write_file("f5", ".svm", "1 1:1 3:1 5:9\n-1 1:-1 2:1 4:7\n"));
    const char *model = keep(2, tu_path("f", ".model"));
    char *out, *err;
    ck_assert_int_eq(run(&out, &err, "train %s -o %s --epochs 50 --quiet", small, model), 0);
    free(out);
    free(err);
    ck_assert_int_eq(run(&out, &err, "predict %s %s", model, wide), 0);
    HAS(err, "warning");
    HAS(err, "ignored");
    HAS(out, "Accuracy = ");
    free(out);
    free(err);
}
END_TEST

START_TEST(test_help_lists_every_option)
{
    char *out, *err;
    ck_assert_int_eq(run(&out, &err, "help train"), 0);
    const char *opts[] = {"--path", "--epochs", "--eta", "--margin", "--averaged", "--shuffle", "--seed",
                          "--loss", "--lambda", "--batch-size", "--schedule", "--kernel", "--degree",
                          "--gamma", "--coef0", "--cache-mb", "--threads", "--isa", "--json", "--quiet",
                          "--no-bias", "--bounds", "--pass", "--mem-mb", "--init", "--reference"};
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) HAS(out, opts[i]);
    free(out);
    free(err);
    ck_assert_int_eq(run(&out, &err, "--version"), 0);
    HAS(out, "ptron ");
    free(out);
    free(err);
}
END_TEST

/* ---------------------------------------------------------------- interrupts */

/* Noise no separator fits, in any feature space (each class's first row repeated with the next
 * class's label): a run of --epochs 1000000000 on it cannot end before a signal. n rows, d
 * features, k classes. */
static const char *noise_file(const char *tag, size_t n, size_t d, size_t k)
{
    size_t cap = (n + k) * (d * 24 + 16) + 16, len = 0;
    char *t = malloc(cap);
    uint64_t s = 12345 + n * 7 + d;
    for (size_t i = 0; i < n + k; i++) {
        size_t row = i < n ? i : i - n;
        size_t label = i < n ? (i < k ? i : (s >> 33) % k) : (row + 1) % k;
        len += (size_t)snprintf(t + len, cap - len, "%zu", label);
        uint64_t r = 99991 * (row + 1);
        for (size_t j = 0; j < d; j++) {
            r = r * 6364136223846793005u + 1442695040888963407u;
            len += (size_t)snprintf(t + len, cap - len, " %zu:%.6f", j + 1,
                                    (double)(r >> 11) / 9007199254740992.0 * 2.0 - 1.0);
        }
        len += (size_t)snprintf(t + len, cap - len, "\n");
        s = s * 6364136223846793005u + 1442695040888963407u;
    }
    const char *p = tu_write_bytes(tag, ".svm", t, len);
    free(t);
    return p;
}

/* The number after "key": in a JSON text (-1 if absent). */
static long long json_number(const char *json, const char *key)
{
    char k[128];
    snprintf(k, sizeof k, "\"%s\": ", key);
    const char *at = strstr(json, k);
    return at ? atoll(at + strlen(k)) : -1;
}

/* `ptron train DATA OPTS --epochs 1000000000` stopped by signal sig once its first checkpoint
 * (after `every` epochs, so thousands of epochs by construction) exists: it exits 130 or 143,
 * says it was interrupted, and its model loads, predicts and says where the run stands.
 * Returns the epochs it had done. */
static long long interrupt_run(const char *data, const char *opts, const char *model, int sig,
                               int every, bool resumable)
{
    const char *ck = keep(14, tu_path("ck", ".model")), *err = keep(15, tu_path("int", ".err"));
    char args[2048];
    snprintf(args, sizeof args, "train %s -o %s %s --epochs 1000000000 --checkpoint %s "
             "--checkpoint-every %d", data, model, opts, ck, every);
    unlink(ck);
    unlink(model);
    int pid = tu_spawn_cli(args, NULL, err);
    tu_wait_for_file(ck, pid);
    kill(pid, sig);
    int rc = tu_wait_cli(pid);
    char *e = tu_read_file(err, NULL);
    ck_assert_msg(rc == 128 + sig, "%s: exit %d, expected %d: %s", opts, rc, 128 + sig, e);
    HAS(e, "interrupted in epoch");
    if (resumable) HAS(e, "continue with --resume");
    else HAS(e, "cannot be resumed");
    free(e);
    char *out, *er;
    ck_assert_int_eq(run(&out, &er, "info %s --json", model), 0);
    long long done = json_number(out, "epochs_done");
    if (resumable) {
        HAS(out, "\"resumable\": true");
        ck_assert_msg(done >= every, "%s: %lld epochs done", opts, done);
    }
    free(out);
    free(er);
    ck_assert_int_eq(run(&out, &er, "predict %s %s", model, data), 0);
    HAS(out, "Accuracy = ");
    free(out);
    free(er);
    unlink(ck);
    unlink(err);
    return done;
}

/* The interrupted run resumed to `epochs` gives the model file of an uninterrupted run of
 * that many epochs, byte for byte. */
static void resume_matches(const char *data, const char *opts, const char *part, long long epochs)
{
    const char *ref = keep(12, tu_path("ref", ".model")), *rest = keep(13, tu_path("rest", ".model"));
    char *out, *err;
    int rc = run(&out, &err, "train %s -o %s %s --epochs %lld --quiet", data, ref, opts, epochs);
    ck_assert_msg(rc == 0, "%s: %s", opts, err);
    free(out);
    free(err);
    rc = run(&out, &err, "train %s -o %s --resume %s --epochs %lld --json", data, rest, part, epochs);
    ck_assert_msg(rc == 0, "%s: resume: %s", opts, err);
    HAS(out, "\"epochs_before\": ");
    free(out);
    free(err);
    size_t la, lb;
    char *a = tu_read_file(ref, &la), *b = tu_read_file(rest, &lb);
    ck_assert_msg(a && b && la == lb && memcmp(a, b, la) == 0,
                  "%s: the resumed model is not the uninterrupted run's", opts);
    free(a);
    free(b);
    unlink(ref);
    unlink(rest);
}

/* SIGINT and SIGTERM on every path, each run long enough by construction: exit 130 / 143, a
 * model that loads and predicts, and --resume gives the uninterrupted run's model file. */
START_TEST(test_interrupt_every_path)
{
    const char *two = keep(0, noise_file("two", 40, 2, 2)), *four = keep(1, noise_file("four", 48, 2, 4));
    const char *part = keep(2, tu_path("part", ".model"));
    const struct {
        const char *data, *opts;
    } runs[] = {
        {two, "--shuffle"},
        {two, "--pass blocked --threads 2 --shuffle"},
        {two, "--voted --shuffle"},
        {two, "--averaged --shuffle"},
        {two, "--expand 2 --averaged"},
        {two, "--path batch --batch-size 8 --shuffle --average-iterates"},
        {two, "--path batch --expand 2"},
        {two, "--path kernel --kernel rbf --averaged --shuffle"},
        {two, "--path kernel --gram full"},
        {four, "--multiclass direct --averaged --shuffle"},
        {four, "--averaged --shuffle --threads 2"},
        {four, "--voted --shuffle --threads 2"},
        {four, "--path batch --batch-size 8 --threads 2"},
        {four, "--path kernel --gram full --kernel rbf --shuffle"},
    };
    for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
        int sig = k % 4 == 3 ? SIGTERM : SIGINT;
        long long done = interrupt_run(runs[k].data, runs[k].opts, part, sig, 1000, true);
        resume_matches(runs[k].data, runs[k].opts, part, done + 3);
    }
    /* --early-stop keeps the best epoch's model, a final one: the message does not suggest
     * --resume */
    char opts[1024];
    snprintf(opts, sizeof opts, "--test %s --early-stop 1000000", two);
    interrupt_run(two, opts, part, SIGINT, 100, false);
    char *out, *err;
    ck_assert_int_eq(run(&out, &err, "info %s --json", part), 0);
    HAS(out, "\"resumable\": false");
    free(out);
    free(err);
}
END_TEST

/* A run stopped part-way through an epoch (SIGINT lands wherever the run is), resumed; a
 * finished model and a bad resume file are refused with the reason. */
START_TEST(test_interrupt_and_resume)
{
    const char *data = keep(0, noise_file("int", 3000, 20, 2)), *part = keep(1, tu_path("part", ".model"));
    const char *opts = "--averaged --shuffle --seed 5";
    long long done = interrupt_run(data, opts, part, SIGINT, 10, true);
    char *out, *err;
    ck_assert_int_eq(run(&out, &err, "info %s", part), 0);
    HAS(out, "run in progress: ");
    HAS(out, "continue it with ptron train --resume");
    free(out);
    free(err);
    resume_matches(data, opts, part, done + 2);

    /* a finished model cannot be resumed */
    const char *full = keep(2, tu_path("full", ".model")), *rest = keep(3, tu_path("rest", ".model"));
    ck_assert_int_eq(run(NULL, NULL, "train %s -o %s --epochs 3 --quiet", data, full), 0);
    ck_assert_int_eq(run(&out, &err, "info %s --json", full), 0);
    HAS(out, "\"resumable\": false");
    free(out);
    free(err);
    ck_assert_int_eq(run(&out, &err, "train %s -o %s --resume %s", data, rest, full), 2);
    HAS(err, "records no run in progress");
    HAS(err, "final model");
    free(out);
    free(err);
    /* nor a run on other data */
    const char *other = keep(4, noise_file("other", 2999, 20, 2));
    ck_assert_int_eq(run(&out, &err, "train %s -o %s --resume %s", other, rest, part), 2);
    HAS(err, part);
    HAS(err, "rows");
    free(out);
    free(err);
    /* a run state edited into nonsense: exit 2, file and line */
    size_t len;
    char *t = tu_read_file(part, &len);
    char *r = strstr(t, "\nresume ") + 8;
    *r = *r == '9' ? '8' : '9'; /* another row count */
    char *body_end = strstr(t, "\nchecksum ") + 1;
    snprintf(body_end, 27, "checksum %016llx\n", (unsigned long long)pt_checksum(t, (size_t)(body_end - t)));
    const char *bad = keep(5, tu_write_file("bad", ".model", t));
    free(t);
    ck_assert_int_eq(run(&out, &err, "train %s -o %s --resume %s", data, rest, bad), 2);
    HAS(err, bad);
    free(out);
    free(err);
}
END_TEST

/* A signal that arrives after training, during the final evaluation and save, still ends
 * with 130 or 143, and the model written is the whole final model. */
START_TEST(test_signal_after_training)
{
    const char *data = keep(0, noise_file("late", 40, 2, 2)), *model = keep(1, tu_path("late", ".model"));
    const char *err = keep(2, tu_path("late", ".err"));
    const char *sigs[] = {"INT", "TERM"};
    const int want[] = {130, 143};
    for (int k = 0; k < 2; k++) {
        char args[2048];
        snprintf(args, sizeof args, "train %s -o %s --epochs 5", data, model);
        unlink(model);
        setenv("PTRON_TEST_SIGNAL_AFTER_TRAINING", sigs[k], 1);
        int pid = tu_spawn_cli(args, NULL, err);
        unsetenv("PTRON_TEST_SIGNAL_AFTER_TRAINING");
        int rc = tu_wait_cli(pid);
        char *e = tu_read_file(err, NULL);
        ck_assert_msg(rc == want[k], "exit %d, expected %d: %s", rc, want[k], e);
        HAS(e, "after training finished");
        free(e);
        char *out, *er;
        ck_assert_int_eq(run(&out, &er, "info %s --json", model), 0);
        HAS(out, "\"epochs_run\": 5");
        HAS(out, "\"resumable\": false");
        free(out);
        free(er);
    }
}
END_TEST

/* A checkpoint that cannot be written: a warning that names the file and the reason, the run
 * goes on, and the -o model is written. */
START_TEST(test_checkpoint_failure_warns)
{
    const char *data = keep(0, noise_file("ckf", 40, 2, 2)), *model = keep(1, tu_path("ckf", ".model"));
    char *out, *err;
    int rc = run(&out, &err, "train %s -o %s --epochs 30 --checkpoint /nonexistent-dir/ck.model "
                 "--checkpoint-every 10 --quiet", data, model);
    ck_assert_msg(rc == 0, "exit %d: %s", rc, err);
    HAS(err, "warning: checkpoint of epoch 10 not written: /nonexistent-dir/ck.model");
    HAS(err, "3 of 3 checkpoints could not be written");
    free(out);
    free(err);
    ck_assert_int_eq(run(&out, &err, "info %s --json", model), 0);
    HAS(out, "\"epochs_run\": 30");
    free(out);
    free(err);
}
END_TEST

/* --early-stop keeps the best epoch's model: a final model that loads and cannot be resumed;
 * --early-stop with --resume is refused. */
START_TEST(test_early_stop_model_loads)
{
    const char *data = keep(0, noise_file("es", 200, 5, 2)), *test = keep(1, noise_file("est", 100, 5, 2));
    const char *model = keep(2, tu_path("es", ".model")), *ck = keep(3, tu_path("esck", ".model"));
    const char *paths[] = {"", "--path batch", "--path kernel --kernel rbf", "--averaged --shuffle"};
    for (size_t k = 0; k < sizeof paths / sizeof paths[0]; k++) {
        char *out, *err;
        int rc = run(&out, &err, "train %s -o %s %s --epochs 2000 --test %s --early-stop 3 --json "
                     "--checkpoint %s", data, model, paths[k], test, ck);
        ck_assert_msg(rc == 0, "%s: exit %d: %s", paths[k], rc, err);
        HAS(out, "\"stopped_early\": true");
        free(out);
        free(err);
        ck_assert_int_eq(run(&out, &err, "info %s --json", model), 0);
        HAS(out, "\"resumable\": false");
        free(out);
        free(err);
        ck_assert_int_eq(run(&out, &err, "predict %s %s", model, test), 0);
        free(out);
        free(err);
        rc = run(&out, &err, "train %s -o %s --resume %s", data, tu_path("x", ".model"), model);
        ck_assert_int_eq(rc, 2);
        HAS(err, "final model");
        free(out);
        free(err);
        /* its checkpoints can be resumed, without --early-stop */
        rc = run(&out, &err, "train %s -o %s --resume %s --early-stop 3 --test %s", data, model, ck, test);
        ck_assert_int_eq(rc, 1);
        HAS(err, "--early-stop");
        free(out);
        free(err);
        rc = run(&out, &err, "train %s -o %s --resume %s --test %s --quiet", data, model, ck, test);
        ck_assert_msg(rc == 0, "%s: resuming a checkpoint of an early-stopped run: %s", paths[k], err);
        free(out);
        free(err);
    }
}
END_TEST

/* The model at path with its header line "key ..." set to "key value" and the checksum made
 * right again, written to a new file (byte-wise: a kernel model's binary section may hold any
 * byte; the checksum line is the last 26 bytes). */
static const char *edit_model(const char *path, const char *key, const char *value)
{
    size_t len;
    char *t = tu_read_file(path, &len);
    ck_assert_ptr_nonnull(t);
    char from[64];
    snprintf(from, sizeof from, "\n%s ", key);
    char *at = strstr(t, from), *sum = t + len - 26; /* the header has no NUL */
    ck_assert(at && len > 26 && strncmp(sum, "checksum ", 9) == 0);
    size_t cap = len + strlen(value) + 64, k = (size_t)(at - t) + 1;
    char *out = malloc(cap);
    memcpy(out, t, k);
    k += (size_t)snprintf(out + k, cap - k, "%s %s", key, value);
    size_t rest = (size_t)(sum - strchr(at + 1, '\n'));
    memcpy(out + k, strchr(at + 1, '\n'), rest);
    k += rest;
    snprintf(out + k, cap - k, "checksum %016llx\n", (unsigned long long)pt_checksum(out, k));
    const char *p = tu_write_bytes("edited", ".model", out, k + 26);
    free(out);
    free(t);
    return p;
}

/* A model or a resume file whose checksum is right but whose fields are not (edited by hand):
 * exit 2 naming the file and line, for predict, info and train --resume alike. */
START_TEST(test_bad_model_fields_exit_2)
{
    const char *data = keep(0, tu_path("bf", ".svm")), *ck = keep(1, tu_path("bf", ".model"));
    ck_assert_int_eq(run(NULL, NULL, "gen noisy --n 300 --d 3 --seed 2 -o %s", data), 0);
    ck_assert_int_eq(run(NULL, NULL, "train %s -o %s --epochs 3 --checkpoint %s --quiet", data,
                         tu_path("bf", ".model"), ck), 0);
    const char *bad = keep(2, edit_model(ck, "eta", "0"));
    char *out, *err;
    const char *cmds[] = {"predict %s %s", "info %s", "train %s -o %s --resume %s"};
    for (int c = 0; c < 3; c++) {
        int rc = c == 0 ? run(&out, &err, cmds[c], bad, data)
                 : c == 1 ? run(&out, &err, cmds[c], bad)
                          : run(&out, &err, cmds[c], data, tu_path("bf", ".model"), bad);
        ck_assert_msg(rc == 2, "%s: exit %d, expected 2: %s", cmds[c], rc, err);
        char want[600];
        snprintf(want, sizeof want, "%s:9: eta: 0 must be > 0", bad);
        HAS(err, want);
        free(out);
        free(err);
    }
    /* a kernel degree of 0 */
    const char *kmodel = keep(3, tu_path("bf", ".model"));
    ck_assert_int_eq(run(NULL, NULL, "train %s -o %s --path kernel --kernel poly --quiet", data,
                         kmodel), 0);
    bad = keep(2, edit_model(kmodel, "degree", "0"));
    ck_assert_int_eq(run(&out, &err, "predict %s %s", bad, data), 2);
    HAS(err, ":22: degree: 0 is outside 1..32");
    free(out);
    free(err);
}
END_TEST

/* --delimiter C: every command that reads data takes it and lists it in its help; without it
 * a semicolon-separated file is refused with the separator and the option named. */
START_TEST(test_csv_delimiter_option)
{
    const char *semi = keep(0, tu_write_file("semi", ".csv",
                                             "y;a;b\n1;0.5;2\n-1;3;4\n1;1;1\n-1;-1;-1\n"));
    const char *tab = keep(1, tu_write_file("tab", ".csv", "1\t0.5\t2\n-1\t3\t4\n"));
    const char *model = keep(2, tu_path("semi", ".model")), *out_path = keep(3, tu_path("c", ".svm"));
    char *out, *err;
    ck_assert_int_eq(run(&out, &err, "info %s", semi), 2);
    HAS(err, semi);
    HAS(err, ":1: the first line has no ',' but has ';' (semicolon)");
    HAS(err, "--delimiter ';'");
    free(out);
    free(err);
    ck_assert_int_eq(run(&out, &err, "info %s --delimiter ';'", semi), 0);
    HAS(out, "4 rows x 2 features");
    free(out);
    free(err);
    ck_assert_int_eq(run(&out, &err, "info %s --delimiter tab", tab), 0);
    HAS(out, "2 rows x 2 features");
    free(out);
    free(err);
    const char *cmds[] = {"train %s -o %s --quiet --delimiter ';'", "predict %s %s --delimiter ';'",
                          "convert %s -o %s --delimiter ';'", "expand %s --degree 2 -o %s --delimiter ';'"};
    for (int c = 0; c < 4; c++) {
        int rc = c == 1 ? run(&out, &err, cmds[c], model, semi)
                        : run(&out, &err, cmds[c], semi, c == 0 ? model : out_path);
        ck_assert_msg(rc == 0, "%s: exit %d: %s", cmds[c], rc, err);
        free(out);
        free(err);
    }
    ck_assert_int_eq(run(&out, &err, "bench %s --paths online --epochs 1 --delimiter ';'", semi), 0);
    free(out);
    free(err);
    /* one character, or "tab"; a character that can be part of a number is refused */
    ck_assert_int_eq(run(&out, &err, "info %s --delimiter ab", semi), 1);
    HAS(err, "--delimiter");
    free(out);
    free(err);
    ck_assert_int_eq(run(&out, &err, "info %s --delimiter .", semi), 1);
    HAS(err, "cannot separate fields");
    free(out);
    free(err);
    const char *cmd[] = {"train", "predict", "info", "convert", "expand", "bench"};
    for (int c = 0; c < 6; c++) {
        ck_assert_int_eq(run(&out, &err, "help %s", cmd[c]), 0);
        ck_assert_msg(strstr(out, "--delimiter C") != NULL, "help %s lacks --delimiter", cmd[c]);
        free(out);
        free(err);
        ck_assert_int_eq(run(&out, &err, "%s --help", cmd[c]), 0);
        ck_assert_msg(strstr(out, "--delimiter C") != NULL, "%s --help lacks --delimiter", cmd[c]);
        free(out);
        free(err);
    }
}
END_TEST

/* --layout L: every command that reads data takes it and lists it in its help; info and train's
 * --json report the layout read (with nnz and density); convert writes a .ptd in the layout it
 * read, and a .ptd file read with auto keeps the layout it was written in. */
START_TEST(test_layout_option)
{
    /* 6 rows of 40 features, 2 non-zeros a row: density 0.05, sparse under auto */
    const char *svm = keep(0, tu_write_file("lay", ".svm",
                                            "1 1:1 40:2\n-1 3:-1 7:0.5\n1 2:1 30:1\n"
                                            "-1 5:-2 6:1\n1 1:0.5 39:1\n-1 3:-1 8:1\n"));
    const char *sp = keep(1, tu_path("lay_s", ".ptd")), *dn = keep(2, tu_path("lay_d", ".ptd")),
               *back_s = keep(3, tu_path("lay_bs", ".svm")),
               *back_d = keep(4, tu_path("lay_bd", ".svm")),
               *csv = keep(5, tu_path("lay", ".csv")), *model = keep(6, tu_path("lay", ".model")),
               *expanded = keep(7, tu_path("lay_x", ".svm"));
    char *out, *err;
    struct {
        const char *file, *opt, *layout;
    } reads[] = {
        {svm, "", "sparse"}, {svm, "--layout dense", "dense"}, {svm, "--layout sparse", "sparse"},
        {svm, "--layout auto", "sparse"}, {sp, "", "sparse"}, {sp, "--layout dense", "dense"},
        {dn, "", "dense"}, {dn, "--layout sparse", "sparse"}, {csv, "", "sparse"},
        {csv, "--layout dense", "dense"},
    };
    ck_assert_int_eq(run(NULL, NULL, "convert %s -o %s", svm, sp), 0);
    ck_assert_int_eq(run(NULL, NULL, "convert %s -o %s --layout dense", svm, dn), 0);
    ck_assert_int_eq(run(NULL, NULL, "convert %s -o %s", sp, csv), 0);
    for (size_t i = 0; i < sizeof reads / sizeof reads[0]; i++) {
        int rc = run(&out, &err, "info %s --json %s", reads[i].file, reads[i].opt);
        ck_assert_msg(rc == 0, "info %s %s: exit %d: %s", reads[i].file, reads[i].opt, rc, err);
        char want[64];
        snprintf(want, sizeof want, "\"layout\": \"%s\"", reads[i].layout);
        ck_assert_msg(strstr(out, want) != NULL, "info %s %s: %s not in %s", reads[i].file,
                      reads[i].opt, want, out);
        HAS(out, "\"n\": 6, \"d\": 40");
        HAS(out, "\"nnz\": 12, \"density\": 0.05,");
        free(out);
        free(err);
    }
    /* the human summary names the layout too */
    ck_assert_int_eq(run(&out, &err, "info %s", svm), 0);
    HAS(out, "sparse layout (CSR)");
    free(out);
    free(err);
    ck_assert_int_eq(run(&out, &err, "info %s --layout dense", svm), 0);
    HAS(out, "dense layout");
    free(out);
    free(err);

    /* LIBSVM written from either layout: the same bytes */
    ck_assert_int_eq(run(NULL, NULL, "convert %s -o %s", sp, back_s), 0);
    ck_assert_int_eq(run(NULL, NULL, "convert %s -o %s", dn, back_d), 0);
    size_t la, lb;
    char *a = tu_read_file(back_s, &la), *b = tu_read_file(back_d, &lb);
    ck_assert(la == lb && memcmp(a, b, la) == 0);
    free(a);
    free(b);

    /* train's --json reports the data as read */
    ck_assert_int_eq(run(&out, &err, "train %s -o %s --layout dense --json", sp, model), 0);
    HAS(out, "\"layout\": \"dense\", \"nnz\": 12, \"density\": 0.05, \"data_bytes\": ");
    free(out);
    free(err);
    /* the other reading commands take it */
    ck_assert_int_eq(run(&out, &err, "predict %s %s --layout dense", model, svm), 0);
    free(out);
    free(err);
    ck_assert_int_eq(run(&out, &err, "expand %s --degree 2 -o %s --layout dense --quiet", svm,
                         expanded), 0);
    free(out);
    free(err);
    ck_assert_int_eq(run(&out, &err, "bench %s --paths online --epochs 1 --layout dense", sp), 0);
    free(out);
    free(err);

    /* a wrong name is a usage error naming the choices; every reading command lists it */
    ck_assert_int_eq(run(&out, &err, "info %s --layout csr", svm), 1);
    HAS(err, "--layout");
    HAS(err, "auto, dense, sparse");
    free(out);
    free(err);
    ck_assert_int_eq(run(&out, &err, "train %s -o %s --layout", svm, model), 1);
    HAS(err, "--layout");
    free(out);
    free(err);
    const char *cmd[] = {"train", "predict", "info", "convert", "expand", "bench"};
    for (int c = 0; c < 6; c++) {
        ck_assert_int_eq(run(&out, &err, "help %s", cmd[c]), 0);
        ck_assert_msg(strstr(out, "--layout auto|dense|sparse") != NULL, "help %s lacks --layout",
                      cmd[c]);
        free(out);
        free(err);
    }
}
END_TEST

/* gen sparse: the same file for the same seed, another for another; its .ptd keeps the layout
 * and the truth; --d beyond 2^30 is for the sparse kind only. */
START_TEST(test_gen_sparse)
{
    const char *a = keep(0, tu_path("gs_a", ".ptd")), *b = keep(1, tu_path("gs_b", ".ptd")),
               *c = keep(2, tu_path("gs_c", ".ptd")), *svm = keep(3, tu_path("gs", ".svm"));
    char *out, *err;
    const char *args = "gen sparse --n 400 --d 5000 --nnz 20 --seed 3 -o";
    ck_assert_int_eq(run(NULL, NULL, "%s %s", args, a), 0);
    ck_assert_int_eq(run(NULL, NULL, "%s %s", args, b), 0);
    ck_assert_int_eq(run(NULL, NULL, "gen sparse --n 400 --d 5000 --nnz 20 --seed 4 -o %s", c), 0);
    size_t la, lb, lc;
    char *fa = tu_read_file(a, &la), *fb = tu_read_file(b, &lb), *fc = tu_read_file(c, &lc);
    ck_assert(la == lb && memcmp(fa, fb, la) == 0);
    ck_assert(la != lc || memcmp(fa, fc, la) != 0);
    free(fa);
    free(fb);
    free(fc);
    ck_assert_int_eq(run(&out, &err, "info %s --json", a), 0);
    HAS(out, "\"n\": 400, \"d\": 5000");
    HAS(out, "\"layout\": \"sparse\"");
    HAS(out, "\"generator\": \"sparse\"");
    free(out);
    free(err);
    /* the defaults: 47,236 features, about 50 non-zeros a row; LIBSVM output */
    ck_assert_int_eq(run(NULL, NULL, "gen sparse --n 100 -o %s", svm), 0);
    ck_assert_int_eq(run(&out, &err, "info %s --json", svm), 0);
    HAS(out, "\"n\": 100");
    HAS(out, "\"layout\": \"sparse\"");
    const char *nnz = strstr(out, "\"nnz\": ");
    ck_assert_ptr_nonnull(nnz);
    long total = atol(nnz + 7);
    ck_assert_msg(total >= 100 * 40 && total <= 100 * 60, "%ld non-zeros in 100 rows", total);
    free(out);
    free(err);
    /* wide d: sparse only */
    ck_assert_int_eq(run(&out, &err, "gen separable --n 10 --d 3000000000 -o %s", svm), 1);
    HAS(err, "--d");
    HAS(err, "out of range");
    free(out);
    free(err);
}
END_TEST

/* Generated sparse data trains and predicts with the default options (layout auto: sparse):
 * the online path, --test and --bounds (R and gamma as on the dense copy), one-vs-rest and the
 * multiclass perceptron; --expand on the online path (sparse rows expanded whole). */
START_TEST(test_sparse_train_predict)
{
    const char *svm = keep(0, tu_path("st", ".svm")), *ptd = keep(1, tu_path("st", ".ptd")),
               *model = keep(2, tu_path("st", ".model")), *mc = keep(3, tu_path("st_mc", ".svm")),
               *dmodel = keep(4, tu_path("st_d", ".model"));
    char *out, *err, *dout, *derr;
    ck_assert_int_eq(run(NULL, NULL, "gen sparse --n 3000 --seed 2 -o %s", svm), 0);
    ck_assert_int_eq(run(NULL, NULL, "gen sparse --n 3000 --seed 2 -o %s", ptd), 0);
    ck_assert_int_eq(run(&out, &err, "train %s -o %s --json", svm, model), 0);
    HAS(out, "\"path\": \"online\"");
    HAS(out, "\"layout\": \"sparse\"");
    HAS(out, "\"n\": 3000, \"d\": 47236");
    free(out);
    free(err);
    ck_assert_int_eq(run(&out, &err, "predict %s %s", model, svm), 0);
    HAS(out, "Accuracy = ");
    /* the same predictions from the dense layout */
    ck_assert_int_eq(run(&dout, &derr, "predict %s %s --layout dense", model, svm), 0);
    ck_assert_str_eq(out, dout);
    free(out);
    free(err);
    free(dout);
    free(derr);
    /* averaged, shuffled, held-out accuracy and the bounds of the generator's w* */
    const char *opts = "--averaged --shuffle --epochs 3 --bounds";
    ck_assert_int_eq(run(&out, &err, "train %s -o %s %s --test %s", ptd, model, opts, svm), 0);
    ck_assert_int_eq(run(&dout, &derr, "train %s -o %s %s --test %s --layout dense", ptd, dmodel,
                         opts, svm), 0);
    HAS(out, "held-out accuracy per epoch");
    HAS(out, "R = 1.41421, margin of w* gamma = ");
    const char *g1 = strstr(out, "gamma = "), *g2 = strstr(dout, "gamma = ");
    ck_assert_ptr_nonnull(g2);
    ck_assert_int_eq(strcspn(g1, "\n"), strcspn(g2, "\n"));
    ck_assert(strncmp(g1, g2, strcspn(g1, "\n")) == 0);
    free(out);
    free(err);
    free(dout);
    free(derr);
    /* more than two classes: the labels of the first 600 rows made 0, 1, 2 */
    size_t len;
    char *text = tu_read_file(svm, &len), *p = text;
    FILE *f = fopen(mc, "w");
    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < 600; i++) {
        char *eol = strchr(p, '\n'), *sp = strchr(p, ' ');
        fprintf(f, "%d%.*s\n", i % 3, (int)(eol - sp), sp);
        p = eol + 1;
    }
    fclose(f);
    free(text);
    const char *multi[] = {"--multiclass ovr", "--multiclass direct"};
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(run(&out, &err, "train %s -o %s %s --json", mc, model, multi[i]), 0);
        HAS(out, "\"layout\": \"sparse\"");
        free(out);
        free(err);
        ck_assert_int_eq(run(&out, &err, "predict %s %s", model, mc), 0);
        HAS(out, "Accuracy = ");
        free(out);
        free(err);
    }
    /* the batch and kernel paths train on sparse rows too (sparse-batch-kernel) */
    const char *sparse_paths[] = {"--path batch", "--path kernel"};
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(run(&out, &err, "train %s -o %s %s --epochs 2 --json", svm, model,
                             sparse_paths[i]), 0);
        HAS(out, "\"layout\": \"sparse\"");
        free(out);
        free(err);
    }
    /* --expand on the online path: sparse rows expanded whole (sparse), dense rows streamed;
     * the same mistakes, and the models predict alike */
    ck_assert_int_eq(run(NULL, NULL, "gen sparse --n 400 --d 300 --nnz 8 --seed 3 -o %s", ptd),
                     0);
    char *dout2;
    const char *ex = "train %s -o %s --expand 2 --epochs 3 --layout %s --json";
    ck_assert_int_eq(run(&out, &err, ex, ptd, model, "sparse"), 0);
    ck_assert_int_eq(run(&dout, &derr, ex, ptd, dmodel, "dense"), 0);
    HAS(out, "\"layout\": \"sparse\"");
    const char *a = strstr(out, "\"mistakes_per_epoch\""),
               *b = strstr(dout, "\"mistakes_per_epoch\"");
    ck_assert(a && b && strncmp(a, b, strcspn(a, "]")) == 0);
    free(out);
    free(err);
    free(dout);
    free(derr);
    ck_assert_int_eq(run(&out, NULL, "predict %s %s --layout dense", model, ptd), 0);
    ck_assert_int_eq(run(&dout2, NULL, "predict %s %s --layout sparse", dmodel, ptd), 0);
    ck_assert_str_eq(out, dout2);
    free(out);
    free(dout2);
}
END_TEST

/* The kernel path on sparse data from the command line: trained in the sparse layout, the same
 * mistakes as in the dense one, a model file of sparse support vectors (version 3), predicted
 * alike on either layout; ptron expand keeps a polynomial expansion of sparse rows sparse. */
START_TEST(test_sparse_kernel_and_expand)
{
    const char *svm = keep(0, tu_path("sk", ".svm")), *ms = keep(1, tu_path("sk_s", ".model")),
               *md = keep(2, tu_path("sk_d", ".model")), *ex = keep(3, tu_path("sk_x", ".ptd"));
    char *out, *err, *out2;
    ck_assert_int_eq(run(NULL, NULL, "gen sparse --n 300 --d 2000 --nnz 20 --seed 5 -o %s", svm),
                     0);
    const char *train = "train %s -o %s --layout %s --path kernel --kernel rbf --gamma 1 "
                        "--epochs 4 --json";
    ck_assert_int_eq(run(&out, &err, train, svm, ms, "sparse"), 0);
    HAS(out, "\"layout\": \"sparse\"");
    ck_assert_int_eq(run(&out2, NULL, train, svm, md, "dense"), 0);
    const char *a = strstr(out, "\"mistakes_per_epoch\""),
               *b = strstr(out2, "\"mistakes_per_epoch\"");
    ck_assert(a && b && strncmp(a, b, strcspn(a, "]")) == 0);
    free(out);
    free(out2);
    free(err);
    size_t len;
    char *text = tu_read_file(ms, &len);
    ck_assert(strncmp(text, "ptron-model 3\n", 14) == 0);
    ck_assert_ptr_nonnull(strstr(text, " sparse\n"));
    free(text);
    ck_assert_int_eq(run(&out, NULL, "predict %s %s --layout sparse --json", ms, svm), 0);
    ck_assert_int_eq(run(&out2, NULL, "predict %s %s --layout dense --json", md, svm), 0);
    a = strstr(out, "\"correct\"");
    b = strstr(out2, "\"correct\"");
    ck_assert(a && b && strncmp(a, b, strcspn(a, ",")) == 0);
    free(out);
    free(out2);
    ck_assert_int_eq(run(&out, &err, "expand %s --degree 2 -o %s --layout sparse", svm, ex), 0);
    HAS(out, "2003001 features, sparse rows");
    free(out);
    free(err);
    ck_assert_int_eq(run(&out, &err, "info %s --json", ex), 0);
    HAS(out, "\"layout\": \"sparse\"");
    free(out);
    free(err);
}
END_TEST

/* Every value after "key": in a JSON text lies in [lo, hi]; returns how many there are. */
static int json_all_within(const char *json, const char *key, double lo, double hi)
{
    char k[128];
    snprintf(k, sizeof k, "\"%s\": ", key);
    int count = 0;
    for (const char *at = strstr(json, k); at; at = strstr(at + 1, k), count++) {
        double v = strtod(at + strlen(k), NULL);
        ck_assert_msg(v >= lo && v <= hi, "%s = %g not in [%g, %g]: %s", key, v, lo, hi, json);
    }
    return count;
}

/* ptron bench: the JSON's keys, --reps, --test, and the kernel path's n rule. */
START_TEST(test_bench_reps_test_kernel_rule)
{
    const char *data = keep(0, tu_path("bench", ".svm")), *test = keep(1, tu_path("bt", ".svm"));
    const char *big = keep(2, tu_path("bbig", ".ptd"));
    char *out, *err;
    ck_assert_int_eq(run(&out, &err, "gen separable --n 300 --d 8 --seed 1 -o %s", data), 0);
    free(out);
    free(err);
    ck_assert_int_eq(run(&out, &err, "gen separable --n 100 --d 8 --seed 2 -o %s", test), 0);
    free(out);
    free(err);
    ck_assert_int_eq(run(&out, &err, "bench %s --reps 2 --epochs 2 --test %s --json", data, test),
                     0);
    ck_assert_int_eq(out[0], '{');
    ck_assert_ptr_eq(strchr(out, '\n'), out + strlen(out) - 1);
    const char *keys[] = {"\"cpu\": \"", "\"isa\": \"", "\"threads\": ", "\"version\": \"",
                          "\"n\": 300,", "\"d\": 8,", "\"layout\": \"dense\"", "\"baseline\": {",
                          "\"online\": {", "\"batch\": {", "\"kernel\": {", "\"status\": \"ok\"",
                          "\"train_seconds_min\": ", "\"train_seconds_max\": ",
                          "\"ratio_to_baseline\": ", "\"GB_per_second_1_thread\": "};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) HAS(out, keys[i]);
    ck_assert_ptr_null(strstr(out, "skipped"));
    /* every path (and the top level) ran 2 reps; each path has a held-out accuracy */
    ck_assert_int_eq(json_all_within(out, "reps", 2, 2), 4);
    ck_assert_int_eq(json_all_within(out, "test_accuracy", 0, 1), 3);
    ck_assert_int_eq(json_all_within(out, "train_accuracy", 0, 1), 3);
    ck_assert_int_eq(json_all_within(out, "GB_per_second", 0, 1e6), 4);
    free(out);
    free(err);
    /* without --test, no held-out accuracy; the table has a held-out column only with it */
    ck_assert_int_eq(run(&out, &err, "bench %s --reps 1 --epochs 1 --json", data), 0);
    ck_assert_ptr_null(strstr(out, "test_accuracy"));
    ck_assert_int_eq(json_all_within(out, "reps", 1, 1), 4);
    free(out);
    free(err);
    ck_assert_int_eq(run(&out, &err, "bench %s --reps 0", data), 1);
    HAS(err, "--reps");
    free(out);
    free(err);

    /* above 20000 rows the kernel path is skipped by default, named with the reason */
    ck_assert_int_eq(run(&out, &err, "gen separable --n 20001 --d 2 -o %s", big), 0);
    free(out);
    free(err);
    ck_assert_int_eq(run(&out, &err, "bench %s --reps 1 --epochs 1 --json", big), 0);
    HAS(out, "\"kernel\": {\"status\": \"skipped\", \"reason\": \"n = 20001 > 20000 rows");
    ck_assert_int_eq(json_all_within(out, "test_accuracy", 0, 1), 0);
    free(out);
    free(err);
    ck_assert_int_eq(run(&out, &err, "bench %s --reps 1 --epochs 1", big), 0);
    HAS(out, "kernel  skipped: n = 20001 > 20000 rows");
    HAS(out, "baseline (streaming read of the matrix): ");
    free(out);
    free(err);
    /* ... and runs when --paths names it */
    ck_assert_int_eq(run(&out, &err, "bench %s --reps 1 --epochs 1 --paths kernel --json", big), 0);
    HAS(out, "\"kernel\": {\"status\": \"ok\"");
    ck_assert_ptr_null(strstr(out, "skipped"));
    free(out);
    free(err);
}
END_TEST


int main(void)
{
    Suite *s = suite_create("cli");
    TCase *tc = tcase_create("cli");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_separable_20000x64_converges);
    tcase_add_test(tc, test_human_output_and_bounds);
    tcase_add_test(tc, test_bounds_claims);
    tcase_add_test(tc, test_init_option);
    tcase_add_test(tc, test_convert_round_trip);
    tcase_add_test(tc, test_usage_errors_exit_1);
    tcase_add_test(tc, test_messages_name_flags);
    tcase_add_test(tc, test_bad_input_exit_2);
    tcase_add_test(tc, test_feature_count_mismatch);
    tcase_add_test(tc, test_help_lists_every_option);
    tcase_add_test(tc, test_interrupt_and_resume);
    tcase_add_test(tc, test_bad_model_fields_exit_2);
    tcase_add_test(tc, test_csv_delimiter_option);
    tcase_add_test(tc, test_interrupt_every_path);
    tcase_add_test(tc, test_signal_after_training);
    tcase_add_test(tc, test_checkpoint_failure_warns);
    tcase_add_test(tc, test_early_stop_model_loads);
    tcase_add_test(tc, test_layout_option);
    tcase_add_test(tc, test_gen_sparse);
    tcase_add_test(tc, test_sparse_train_predict);
    tcase_add_test(tc, test_sparse_kernel_and_expand);
    tcase_add_test(tc, test_bench_reps_test_kernel_rule);
    tcase_add_test(tc, test_voted_evaluation_cost);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
