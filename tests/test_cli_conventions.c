/* The CLI's conventions end to end (src/cli/opts.c, main.c and the readers' input opening):
 * --opt=value, train DATA [MODEL], -h/--help on every command and the golden help texts,
 * "did you mean", gzip input, - for standard input and output, messages that name the user's
 * path, and the CSV label column. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "cli_test_util.h"

#define LACKS(s, sub) ck_assert_msg(strstr((s), (sub)) == NULL, "'%s' in: %s", (sub), (s))

static const char *const commands[] = {"gen", "info", "convert", "train", "predict", "expand",
                                       "bench"};
#define NCMD (sizeof commands / sizeof commands[0])

/* A shell command line in which $P is the ptron binary (pipes and redirections of stdin are
 * the test's own); its exit status, stdout and stderr. */
static int sh(char **out, char **err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int sh(char **out, char **err, const char *fmt, ...)
{
    char line[4096], cmd[6000], ofile[512], efile[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    setenv("P", getenv("PTRON_BIN"), 1);
    snprintf(ofile, sizeof ofile, "%s", tu_path("sh", ".out"));
    snprintf(efile, sizeof efile, "%s", tu_path("sh", ".err"));
    snprintf(cmd, sizeof cmd, "(%s) >%s 2>%s", line, ofile, efile);
    int st = system(cmd);
    ck_assert(st != -1 && WIFEXITED(st));
    *out = tu_read_file(ofile, NULL);
    *err = tu_read_file(efile, NULL);
    ck_assert_ptr_nonnull(*out);
    ck_assert_ptr_nonnull(*err);
    remove(ofile);
    remove(efile);
    return WEXITSTATUS(st);
}

static void drop(char **out, char **err)
{
    free(*out);
    free(*err);
    *out = *err = NULL;
}

/* Whether two files hold the same bytes. */
static bool same_file(const char *a, const char *b)
{
    size_t la, lb;
    char *x = tu_read_file(a, &la), *y = tu_read_file(b, &lb);
    bool same = x && y && la == lb && memcmp(x, y, la) == 0;
    free(x);
    free(y);
    return same;
}

/* A small LIBSVM training set at path. */
static void gen_data(const char *path)
{
    char *out, *err;
    ck_assert_int_eq(run(&out, &err, "gen separable --n 300 --d 6 --seed 3 -o %s", path), 0);
    drop(&out, &err);
}

/* --opt=value is --opt value on every command; a value given to a flag, or an empty one, is
 * a usage error naming the option. */
START_TEST(test_opt_equals_value)
{
    const char *data = keep(0, tu_path("eq", ".svm")), *m1 = keep(1, tu_path("eq", ".model")),
               *m2 = keep(2, tu_path("eq", ".model")), *csv = keep(3, tu_path("eq", ".csv"));
    char *out, *err;
    ck_assert_int_eq(run(&out, &err, "gen separable --n=300 --d=6 --seed=3 -o %s", data), 0);
    drop(&out, &err);
    ck_assert_int_eq(run(&out, &err, "train %s -o %s --epochs 3 --eta 0.5 --quiet", data, m1), 0);
    drop(&out, &err);
    ck_assert_int_eq(run(&out, &err, "train %s --output=%s --epochs=3 --eta=0.5 --quiet", data, m2),
                     0);
    drop(&out, &err);
    ck_assert_msg(same_file(m1, m2), "--epochs=3 --eta=0.5 trained another model");
    ck_assert_int_eq(run(&out, &err, "predict %s %s --format=libsvm", m1, data), 0);
    HAS(out, "Accuracy = ");
    drop(&out, &err);
    ck_assert_int_eq(run(&out, &err, "convert %s --output=%s --to=csv", data, csv), 0);
    drop(&out, &err);
    ck_assert_int_eq(run(&out, &err, "info %s --delimiter=, --layout=dense --json", csv), 0);
    HAS(out, "\"n\": 300");
    drop(&out, &err);
    ck_assert_int_eq(run(&out, &err, "bench %s --paths=online --epochs=2", data), 0);
    drop(&out, &err);
    /* a flag takes no value; an empty value is no number */
    ck_assert_int_eq(run(&out, &err, "train %s --shuffle=1", data), 1);
    HAS(err, "option --shuffle takes no value ('--shuffle=1' given)");
    drop(&out, &err);
    ck_assert_int_eq(run(&out, &err, "train %s --epochs=", data), 1);
    HAS(err, "--epochs: '' is not an integer");
    drop(&out, &err);
    ck_assert_int_eq(run(&out, &err, "info %s --json=yes", data), 1);
    HAS(err, "--json takes no value");
    drop(&out, &err);
}
END_TEST

/* train DATA MODEL (LIBLINEAR's order); DATA alone writes DATA.model; -o stays; both is an
 * error, as is a third file. */
START_TEST(test_train_data_model_order)
{
    const char *data = keep(0, tu_path("pos", ".svm")), *m1 = keep(1, tu_path("pos", ".model")),
               *m2 = keep(2, tu_path("pos", ".model"));
    char dflt[600];
    snprintf(dflt, sizeof dflt, "%s.model", data);
    gen_data(data);
    char *out, *err;
    ck_assert_int_eq(run(&out, &err, "train %s %s --epochs 4", data, m1), 0);
    HAS(out, m1);
    drop(&out, &err);
    ck_assert_int_eq(run(&out, &err, "train %s --epochs 4 -o %s --quiet", data, m2), 0);
    drop(&out, &err);
    ck_assert(same_file(m1, m2));
    remove(dflt);
    ck_assert_int_eq(run(&out, &err, "train %s --epochs 4 --quiet", data), 0);
    drop(&out, &err);
    ck_assert_msg(same_file(m1, dflt), "train DATA did not write DATA.model");
    remove(dflt);
    ck_assert_int_eq(run(&out, &err, "train %s %s -o %s", data, m1, m2), 1);
    HAS(err, "two model files");
    drop(&out, &err);
    ck_assert_int_eq(run(&out, &err, "train %s %s extra", data, m1), 1);
    HAS(err, "unexpected argument 'extra'");
    drop(&out, &err);
    ck_assert_int_eq(run(&out, &err, "train %s -o -", data), 1);
    HAS(err, "standard output");
    drop(&out, &err);
}
END_TEST

/* CMD -h and CMD --help (anywhere) print help CMD's text on stdout, exit 0; help NAME that is
 * no command exits 1 and says so; unknown commands and options get "did you mean". */
START_TEST(test_help_and_suggestions)
{
    char *out, *err, *want, *e2;
    for (size_t c = 0; c < NCMD; c++) {
        ck_assert_int_eq(run(&want, &e2, "help %s", commands[c]), 0);
        ck_assert_msg(strncmp(want, "usage: ptron ", 13) == 0, "help %s: %s", commands[c], want);
        const char *forms[] = {"%s --help", "%s -h", "%s x --help", "%s --quiet -h"};
        for (size_t f = 0; f < 4; f++) {
            char fmt[64];
            snprintf(fmt, sizeof fmt, forms[f], commands[c]);
            ck_assert_int_eq(run(&out, &err, "%s", fmt), 0);
            ck_assert_msg(strcmp(out, want) == 0, "'%s' is not help %s", fmt, commands[c]);
            ck_assert_str_eq(err, "");
            drop(&out, &err);
        }
        drop(&want, &e2);
    }
    ck_assert_int_eq(run(&out, &err, "help nosuch"), 1);
    HAS(err, "no command 'nosuch'");
    ck_assert_str_eq(out, "");
    drop(&out, &err);
    ck_assert_int_eq(run(&out, &err, "help trian"), 1);
    HAS(err, "no command 'trian' (did you mean train?)");
    drop(&out, &err);
    ck_assert_int_eq(run(&out, &err, "predcit m x"), 1);
    HAS(err, "unknown command 'predcit' (did you mean predict?)");
    drop(&out, &err);
    ck_assert_int_eq(run(&out, &err, "train x.svm --epohcs 3"), 1);
    HAS(err, "unknown option --epohcs (did you mean --epochs?)");
    drop(&out, &err);
    ck_assert_int_eq(run(&out, &err, "train x.svm --lamda=0.1"), 1);
    HAS(err, "unknown option --lamda (did you mean --lambda?)");
    drop(&out, &err);
    ck_assert_int_eq(run(&out, &err, "predict m x --fromat csv"), 1);
    HAS(err, "(did you mean --format?)");
    drop(&out, &err);
    ck_assert_int_eq(run(&out, &err, "info x --zzzzzz"), 1);
    HAS(err, "unknown option --zzzzzz\n");
    drop(&out, &err);
}
END_TEST

/* Each command's help text is the one under tests/cli/help/ (regenerate them with
 * scripts/update-help-golden after a deliberate change), and so is the overview. */
START_TEST(test_golden_help_texts)
{
    const char *src = getenv("PTRON_SRC");
    ck_assert_ptr_nonnull(src);
    /* every command the overview lists ("  NAME ..." lines), and the overview itself */
    char *overview, *e0;
    ck_assert_int_eq(run(&overview, &e0, "help"), 0);
    char names[64][32];
    size_t k = 0;
    for (const char *l = overview; l && *l && k < 63; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
        if (l[0] == ' ' && l[1] == ' ' && l[2] >= 'a' && l[2] <= 'z' &&
            sscanf(l + 2, "%31[a-z-]", names[k]) == 1 && strcmp(names[k], "help") != 0)
            k++;
    ck_assert_uint_ge(k, NCMD);
    snprintf(names[k++], sizeof names[0], "overview");
    for (size_t c = 0; c < k; c++) {
        bool ov = strcmp(names[c], "overview") == 0;
        char golden[4200];
        snprintf(golden, sizeof golden, "%s/tests/cli/help/%s.txt", src, names[c]);
        char *want = tu_read_file(golden, NULL), *out, *err;
        ck_assert_msg(want != NULL, "%s is missing (scripts/update-help-golden writes it)", golden);
        ck_assert_int_eq(run(&out, &err, "help %s", ov ? "" : names[c]), 0);
        /* the overview names the version: compare past its first line */
        const char *got = ov ? strchr(out, '\n') : out, *exp = ov ? strchr(want, '\n') : want;
        ck_assert_ptr_nonnull(got);
        ck_assert_ptr_nonnull(exp);
        ck_assert_msg(strcmp(got, exp) == 0,
                      "ptron help %s differs from %s: if the change is meant, run "
                      "scripts/update-help-golden BUILD_DIR", names[c], golden);
        free(want);
        drop(&out, &err);
    }
    drop(&overview, &e0);
}
END_TEST

/* gzip input: LIBSVM and CSV, by extension and by content, train the same model as the plain
 * files; messages give the same line; a truncated stream is an error naming the file. */
START_TEST(test_gzip_input)
{
    const char *data = keep(0, tu_path("gz", ".svm")), *csv = keep(1, tu_path("gz", ".csv")),
               *m1 = keep(2, tu_path("gz", ".model")), *m2 = keep(3, tu_path("gz", ".model")),
               *noext = keep(4, tu_path("gz", ".data"));
    gen_data(data);
    char *out, *err;
    ck_assert_int_eq(run(&out, &err, "convert %s -o %s", data, csv), 0);
    drop(&out, &err);
    ck_assert_int_eq(sh(&out, &err, "gzip -c %s >%s.gz && gzip -c %s >%s.gz && gzip -c %s >%s",
                        data, data, csv, csv, data, noext), 0);
    drop(&out, &err);
    ck_assert_int_eq(run(&out, &err, "train %s %s --epochs 5 --quiet", data, m1), 0);
    drop(&out, &err);
    const char *inputs[] = {"%s.gz", "%s.gz", "%s"};
    const char *bases[] = {data, csv, noext};
    for (int i = 0; i < 3; i++) {
        char in[600];
        snprintf(in, sizeof in, inputs[i], bases[i]);
        ck_assert_int_eq(run(&out, &err, "train %s %s --epochs 5 --quiet", in, m2), 0);
        drop(&out, &err);
        ck_assert_msg(same_file(m1, m2), "training on %s gave another model", in);
    }
    /* the same message, line included, as the plain file's */
    const char *bad = keep(5, tu_write_file("gzbad", ".svm", "1 1:0.5\n-1 1:x\n"));
    ck_assert_int_eq(run(&out, &err, "info %s", bad), 2);
    char *plain_err = err;
    free(out);
    ck_assert_int_eq(sh(&out, &err, "gzip -c %s >%s.gz", bad, bad), 0);
    drop(&out, &err);
    ck_assert_int_eq(run(&out, &err, "info %s.gz", bad), 2);
    HAS(err, ".svm.gz:2: ");
    ck_assert_str_eq(strstr(err, ".gz:2: ") + 3, strstr(plain_err, ".svm:2: ") + 4);
    free(plain_err);
    drop(&out, &err);
    /* truncated: named, exit 2 */
    ck_assert_int_eq(sh(&out, &err, "head -c 100 %s.gz >%s.cut.gz", data, data), 0);
    drop(&out, &err);
    ck_assert_int_eq(run(&out, &err, "info %s.cut.gz", data), 2);
    HAS(err, ".cut.gz: gzip data after ");
    HAS(err, "unexpected end of file");
    drop(&out, &err);
    /* a .ptd is not read through gzip */
    ck_assert_int_eq(run(&out, &err, "info %s.ptd.gz", data), 2);
    HAS(err, "decompress it first");
    drop(&out, &err);
}
END_TEST

/* - is standard input for data (LIBSVM, CSV with --format csv, gzip) and standard output for
 * predict -o, convert and gen; .ptd is refused on either side. */
START_TEST(test_stdin_stdout)
{
    const char *data = keep(0, tu_path("io", ".svm")), *m1 = keep(1, tu_path("io", ".model")),
               *m2 = keep(2, tu_path("io", ".model")), *pred = keep(3, tu_path("io", ".pred")),
               *csv = keep(4, tu_path("io", ".csv"));
    gen_data(data);
    char *out, *err;
    ck_assert_int_eq(run(&out, &err, "train %s %s --epochs 5 --quiet", data, m1), 0);
    drop(&out, &err);
    ck_assert_int_eq(sh(&out, &err, "cat %s | $P train - %s --epochs 5 --quiet", data, m2), 0);
    drop(&out, &err);
    ck_assert_msg(same_file(m1, m2), "train - gave another model");
    ck_assert_int_eq(sh(&out, &err, "gzip -c %s | $P train - %s --epochs 5 --quiet", data, m2), 0);
    drop(&out, &err);
    ck_assert_msg(same_file(m1, m2), "train - on gzip gave another model");
    /* predict: labels to stdout, the report to stderr */
    ck_assert_int_eq(run(&out, &err, "predict %s %s -o %s", m1, data, pred), 0);
    char *report = out;
    free(err);
    ck_assert_int_eq(sh(&out, &err, "$P predict %s - -o - <%s", m1, data), 0);
    char *labels = tu_read_file(pred, NULL);
    ck_assert_str_eq(out, labels);
    ck_assert_str_eq(err, report);
    free(labels);
    free(report);
    drop(&out, &err);
    ck_assert_int_eq(run(&out, &err, "predict %s %s -o - --json", m1, data), 1);
    drop(&out, &err);
    /* --scores - likewise: the scores file's text on stdout */
    const char *scores = keep(5, tu_path("io", ".scores"));
    ck_assert_int_eq(run(&out, &err, "predict %s %s --scores %s", m1, data, scores), 0);
    drop(&out, &err);
    ck_assert_int_eq(run(&out, &err, "predict %s %s --scores -", m1, data), 0);
    char *scores_text = tu_read_file(scores, NULL);
    ck_assert_str_eq(out, scores_text);
    HAS(err, "Accuracy = ");
    free(scores_text);
    drop(&out, &err);
    ck_assert_int_eq(run(&out, &err, "predict %s %s --scores - -o -", m1, data), 1);
    HAS(err, "only one can take standard output");
    drop(&out, &err);
    /* convert to stdout equals convert to a file; CSV from stdin */
    ck_assert_int_eq(run(&out, &err, "convert %s -o %s", data, csv), 0);
    drop(&out, &err);
    char *csv_text = tu_read_file(csv, NULL);
    ck_assert_int_eq(sh(&out, &err, "$P convert %s -o - --to csv", data), 0);
    ck_assert_str_eq(out, csv_text);
    drop(&out, &err);
    ck_assert_int_eq(sh(&out, &err, "$P convert - -o - --format csv --to csv <%s", csv), 0);
    ck_assert_str_eq(out, csv_text);
    free(csv_text);
    drop(&out, &err);
    /* gen into a pipe: the data on stdout, its summary on stderr */
    ck_assert_int_eq(sh(&out, &err, "$P gen separable --n 50 -o - | $P info -"), 0);
    HAS(out, "50 rows");
    HAS(err, "-: separable, 50 rows");
    drop(&out, &err);
    /* a parse error on stdin names it */
    ck_assert_int_eq(sh(&out, &err, "printf '1 1:2\\n1 1:x\\n' | $P info -"), 2);
    HAS(err, "standard input:2: ");
    drop(&out, &err);
    /* .ptd cannot come from or go to a stream; nor can a model */
    ck_assert_int_eq(sh(&out, &err, "$P info - --format ptd <%s", data), 1);
    HAS(err, "standard input (-) cannot be read as a .ptd dataset");
    drop(&out, &err);
    ck_assert_int_eq(run(&out, &err, "convert %s -o - --to ptd", data), 1);
    HAS(err, "cannot be written to standard output");
    drop(&out, &err);
    ck_assert_int_eq(run(&out, &err, "predict - %s", data), 1);
    HAS(err, "the model is read from a file");
    drop(&out, &err);
    ck_assert_int_eq(run(&out, &err, "train - --epochs 2"), 1);
    HAS(err, "no default model name");
    drop(&out, &err);
    ck_assert_int_eq(run(&out, &err, "train - m --test -"), 1);
    HAS(err, "standard input can be read once");
    drop(&out, &err);
    ck_assert_int_eq(run(&out, &err, "train %s m --checkpoint -", data), 1);
    drop(&out, &err);
    ck_assert_int_eq(run(&out, &err, "expand %s --degree 2 -o -", data), 1);
    drop(&out, &err);
}
END_TEST

/* An output in a directory that does not exist: the message names the user's path, never the
 * temporary file beside it. */
START_TEST(test_output_messages_name_user_path)
{
    const char *data = keep(0, tu_path("op", ".svm")), *model = keep(1, tu_path("op", ".model"));
    gen_data(data);
    char *out, *err;
    ck_assert_int_eq(run(&out, &err, "train %s /nonexistent-ptron-dir/m.model", data), 2);
    HAS(err, "/nonexistent-ptron-dir/m.model: cannot create: the directory "
             "/nonexistent-ptron-dir does not exist");
    LACKS(err, ".tmp");
    drop(&out, &err);
    ck_assert_int_eq(run(&out, &err, "train %s %s --quiet", data, model), 0);
    drop(&out, &err);
    ck_assert_int_eq(run(&out, &err, "predict %s %s -o /nonexistent-ptron-dir/p", model, data), 2);
    HAS(err, "/nonexistent-ptron-dir/p: ");
    LACKS(err, ".tmp");
    drop(&out, &err);
    ck_assert_int_eq(run(&out, &err, "convert %s -o /nonexistent-ptron-dir/x.csv", data), 2);
    HAS(err, "/nonexistent-ptron-dir/x.csv: ");
    LACKS(err, ".tmp");
    drop(&out, &err);
}
END_TEST

/* info's text without its timing line ("  read in S s") and what follows. */
static void cut_timing(char *text)
{
    char *t = strstr(text, "  read in ");
    if (t) *t = '\0';
}

/* --label-column N|last|NAME; the warning for a label column with a value for most rows. */
START_TEST(test_csv_label_column)
{
    /* 300 rows "a,b,y": a and b continuous, y the class, as numpy writes it */
    char *text = malloc(300 * 64 + 16), *p = text;
    p += sprintf(p, "a,b,y\n");
    for (int i = 0; i < 300; i++) {
        double a = (i * 37 % 300) / 150.0 - 1.0, b = (i * 91 % 300) / 150.0 - 1.0 + 0.001 * i;
        p += sprintf(p, "%.6f,%.6f,%d\n", a, b, a + b > 0 ? 1 : 0);
    }
    const char *csv = keep(0, tu_write_file("lab", ".csv", text));
    free(text);
    char *out, *err, *want, *e2;
    ck_assert_int_eq(run(&out, &err, "info %s", csv), 0);
    HAS(out, "300 classes");
    HAS(err, "warning: ");
    HAS(err, "the label column (column 1 of 3) has 300 distinct values in 300 rows");
    HAS(err, "--label-column N|last|NAME");
    drop(&out, &err);
    ck_assert_int_eq(run(&want, &e2, "info %s --label-column last", csv), 0);
    HAS(want, "300 rows x 2 features");
    HAS(want, "2 classes");
    ck_assert_str_eq(e2, "");
    const char *same[] = {"--label-column 3", "--label-column y", "--label-column=y"};
    cut_timing(want);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(run(&out, &err, "info %s %s", csv, same[i]), 0);
        cut_timing(out);
        ck_assert_msg(strcmp(out, want) == 0, "%s: %s", same[i], out);
        drop(&out, &err);
    }
    drop(&want, &e2);
    /* train and predict take it too */
    const char *model = keep(1, tu_path("lab", ".model"));
    ck_assert_int_eq(run(&out, &err, "train %s %s --label-column y --quiet", csv, model), 0);
    drop(&out, &err);
    ck_assert_int_eq(run(&out, &err, "predict %s %s --label-column last", model, csv), 0);
    HAS(out, "/300)");
    drop(&out, &err);
    /* errors */
    ck_assert_int_eq(run(&out, &err, "info %s --label-column 0", csv), 1);
    HAS(err, "columns count from 1");
    drop(&out, &err);
    ck_assert_int_eq(run(&out, &err, "info %s --label-column 9", csv), 2);
    HAS(err, "label column 9 is out of range: the file has 3 columns");
    drop(&out, &err);
    ck_assert_int_eq(run(&out, &err, "info %s --label-column label", csv), 2);
    HAS(err, ":1: no column named 'label' in the header (the first line): a,b,y");
    HAS(err, "a,b,y");
    drop(&out, &err);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cli_conventions");
    TCase *tc = tcase_create("cli_conventions");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_opt_equals_value);
    tcase_add_test(tc, test_train_data_model_order);
    tcase_add_test(tc, test_help_and_suggestions);
    tcase_add_test(tc, test_golden_help_texts);
    tcase_add_test(tc, test_gzip_input);
    tcase_add_test(tc, test_stdin_stdout);
    tcase_add_test(tc, test_output_messages_name_user_path);
    tcase_add_test(tc, test_csv_label_column);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
