/* CSV reader and writer: round trip, header detection, delimiters, label column, refused
 * inputs. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

static pt_read_options opts(int header, int label_column)
{
    pt_read_options o;
    pt_read_options_init(&o);
    o.csv_header = header;
    o.csv_label_column = label_column;
    return o;
}

static pt_dataset *read_text(const char *text, const pt_read_options *o)
{
    const char *path = tu_write_file("csv", ".csv", text);
    pt_dataset *ds = NULL;
    pt_status s = pt_dataset_read(path, o, &ds);
    ck_assert_msg(s == PT_OK, "%s", pt_last_error());
    unlink(path);
    return ds;
}

/* The status, and a message naming the file, the line (if line > 0) and the key word. */
static void expect_fail_o(const char *text, const pt_read_options *o, pt_status want, long line,
                          const char *key)
{
    char path[512];
    snprintf(path, sizeof path, "%s", tu_write_file("bad", ".csv", text));
    pt_dataset *ds = (pt_dataset *)1;
    pt_status s = pt_dataset_read(path, o, &ds);
    const char *msg = pt_last_error();
    ck_assert(ds == NULL);
    ck_assert_msg(s == want, "status %d, want %d: %s", s, want, msg);
    ck_assert_msg(strstr(msg, path) != NULL, "message lacks the path: %s", msg);
    if (line > 0) {
        char tag[600];
        snprintf(tag, sizeof tag, "%s:%ld: ", path, line);
        ck_assert_msg(strstr(msg, tag) != NULL, "message lacks '%s': %s", tag, msg);
    }
    ck_assert_msg(strstr(msg, key) != NULL, "message lacks '%s': %s", key, msg);
    unlink(path);
}

static void expect_fail(const char *text, long line, const char *key)
{
    pt_read_options o = opts(-1, 0);
    expect_fail_o(text, &o, PT_ERR_PARSE, line, key);
}

static void check_row(const pt_dataset *ds, size_t i, double label, const float *x, size_t d)
{
    ck_assert_msg(pt_dataset_label(ds, i) == label, "row %zu label %g", i, pt_dataset_label(ds, i));
    for (size_t j = 0; j < d; j++)
        ck_assert_msg(pt_dataset_row_const(ds, i)[j] == x[j], "row %zu col %zu: %g", i, j,
                      pt_dataset_row_const(ds, i)[j]);
}

START_TEST(roundtrip)
{
    size_t n = 150, d = 9;
    pt_dataset *ds = pt_dataset_create(n, d);
    double *lab = malloc(n * sizeof *lab);
    uint64_t r = 12345;
    for (size_t i = 0; i < n; i++) {
        float *x = pt_dataset_row(ds, i);
        for (size_t j = 0; j + 1 < d; j++) { /* the last column stays all zero */
            r = r * 6364136223846793005u + 1442695040888963407u;
            uint32_t b = (uint32_t)(r >> 32);
            float v;
            memcpy(&v, &b, sizeof v);
            x[j] = j % 3 == 0 ? 0.0f : isfinite(v) ? v : 1.0f / (float)(j + 1);
        }
        lab[i] = (double)(i % 2);
    }
    ck_assert_int_eq(pt_dataset_set_labels(ds, lab), PT_OK);
    const char *path = tu_path("rt", ".csv");
    ck_assert_msg(pt_dataset_write(ds, path, PT_FORMAT_CSV) == PT_OK, "%s", pt_last_error());
    pt_read_options o = opts(-1, 0);
    pt_dataset *back = NULL;
    ck_assert_msg(pt_dataset_read(path, &o, &back) == PT_OK, "%s", pt_last_error());
    ck_assert_uint_eq(pt_dataset_n(back), n);
    ck_assert_uint_eq(pt_dataset_d(back), d); /* CSV keeps all-zero columns */
    int same = 1;
    for (size_t i = 0; i < n; i++) {
        same &= memcmp(pt_dataset_row_const(ds, i), pt_dataset_row_const(back, i), d * sizeof(float)) == 0;
        same &= pt_dataset_label(back, i) == lab[i];
    }
    ck_assert(same);
    pt_dataset_info info;
    pt_dataset_get_info(back, &info);
    size_t nnz = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < d; j++) nnz += pt_dataset_row_const(ds, i)[j] != 0.0f;
    ck_assert_uint_eq(info.nnz, nnz);
    pt_dataset_free(back);
    pt_dataset_free(ds);
    free(lab);
    unlink(path);
}
END_TEST

START_TEST(writer_text)
{
    const float x[] = {0.5f, 0.0f, -2.0f, 1e-7f};
    const double lab[] = {1.0, -1.0};
    pt_dataset *ds = tu_dataset(2, 2, x, lab);
    const char *path = tu_path("wt", ".csv");
    ck_assert_int_eq(pt_dataset_write(ds, path, PT_FORMAT_CSV), PT_OK);
    char *text = tu_read_file(path, NULL);
    ck_assert_str_eq(text, "1,0.5,0\n-1,-2,1.00000001e-07\n");
    free(text);
    pt_dataset_free(ds);
    unlink(path);
}
END_TEST

START_TEST(header_detected)
{
    pt_read_options o = opts(-1, 0);
    pt_dataset *ds = read_text("label,a,b\n1,0.5,2\n-1,3,4\n", &o);
    ck_assert_uint_eq(pt_dataset_n(ds), 2);
    ck_assert_uint_eq(pt_dataset_d(ds), 2);
    check_row(ds, 0, 1, (const float[]){0.5f, 2}, 2);
    pt_dataset_free(ds);
    /* No header: the first line is data. */
    ds = read_text("1,0.5,2\n-1,3,4\n", &o);
    ck_assert_uint_eq(pt_dataset_n(ds), 2);
    check_row(ds, 0, 1, (const float[]){0.5f, 2}, 2);
    pt_dataset_free(ds);
    /* A first line whose label cell only is a word is data with a text label, not a header. */
    ds = read_text("y,1,2\nz,2,3\n", &o);
    ck_assert_uint_eq(pt_dataset_n(ds), 2);
    ck_assert_str_eq(pt_dataset_class_name(ds, 0), "y");
    pt_dataset_free(ds);
}
END_TEST

START_TEST(header_forced)
{
    pt_read_options o = opts(1, 0);
    pt_dataset *ds = read_text("7,8,9\n1,0.5,2\n-1,3,4\n", &o);
    ck_assert_uint_eq(pt_dataset_n(ds), 2);
    check_row(ds, 1, -1, (const float[]){3, 4}, 2);
    pt_dataset_free(ds);
    o = opts(0, 0);
    expect_fail_o("y,a,b\n1,2,3\n", &o, PT_ERR_PARSE, 1, "column 2: 'a' is not a number");
}
END_TEST

START_TEST(label_column)
{
    pt_read_options o = opts(-1, 2);
    pt_dataset *ds = read_text("a,b,class,c\n1,2,0,3\n4,5,1,6\n", &o);
    ck_assert_uint_eq(pt_dataset_d(ds), 3);
    check_row(ds, 0, 0, (const float[]){1, 2, 3}, 3);
    check_row(ds, 1, 1, (const float[]){4, 5, 6}, 3);
    pt_dataset_free(ds);
    o = opts(-1, 3);
    expect_fail_o("1,2,3\n", &o, PT_ERR_PARSE, 1, "label column 4 is out of range");
}
END_TEST

/* PT_CSV_LABEL_LAST and csv_label_name (which makes the first line the header). */
START_TEST(label_last_and_named)
{
    pt_read_options o = opts(-1, PT_CSV_LABEL_LAST);
    pt_dataset *ds = read_text("1,2,0\n4,5,1\n", &o);
    ck_assert_uint_eq(pt_dataset_d(ds), 2);
    check_row(ds, 0, 0, (const float[]){1, 2}, 2);
    check_row(ds, 1, 1, (const float[]){4, 5}, 2);
    pt_dataset_free(ds);
    o = opts(-1, 0);
    o.csv_label_name = "class";
    ds = read_text("a, class ,c\n1,0,3\n4,1,6\n", &o);
    ck_assert_uint_eq(pt_dataset_n(ds), 2);
    check_row(ds, 0, 0, (const float[]){1, 3}, 2);
    check_row(ds, 1, 1, (const float[]){4, 6}, 2);
    pt_dataset_free(ds);
    /* a name the header lacks: the names it has */
    o.csv_label_name = "label";
    expect_fail_o("a,class,c\n1,0,3\n", &o, PT_ERR_PARSE, 1, "no column named 'label'");
    o = opts(-1, -2);
    const char *path = tu_write_file("bad", ".csv", "1,2\n");
    pt_dataset *bad = NULL;
    ck_assert_int_eq(pt_dataset_read(path, &o, &bad), PT_ERR_INVALID);
    unlink(path);
}
END_TEST

static char warned[1024];
static void keep_warning(pt_log_level level, const char *msg, void *user)
{
    (void)user;
    if (level == PT_LOG_WARN) snprintf(warned, sizeof warned, "%s", msg);
}

/* The warning for a label column with more than 100 distinct values and more than half as
 * many as rows: on at 101 of 200, off at 100 of 200 and at 101 of 202. */
START_TEST(label_column_warning)
{
    pt_set_log(keep_warning, NULL);
    const struct {
        int distinct, rows;
        bool warn;
    } cases[] = {{101, 200, true}, {100, 200, false}, {101, 202, false}, {300, 300, true}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char *text = malloc((size_t)cases[c].rows * 32 + 1), *p = text;
        for (int i = 0; i < cases[c].rows; i++)
            p += sprintf(p, "%d,%d\n", i % cases[c].distinct, i);
        pt_read_options o = opts(0, 0);
        warned[0] = '\0';
        pt_dataset *ds = read_text(text, &o);
        free(text);
        ck_assert_uint_eq(pt_dataset_nclass(ds), (size_t)cases[c].distinct);
        pt_dataset_free(ds);
        ck_assert_msg((warned[0] != '\0') == cases[c].warn, "%d of %d rows: '%s'",
                      cases[c].distinct, cases[c].rows, warned);
        if (cases[c].warn) ck_assert_ptr_nonnull(strstr(warned, "distinct values"));
    }
    pt_set_log(NULL, NULL);
}
END_TEST

/* gzip: the same rows as the plain file, by extension or by content; a truncated stream is an
 * error naming the file. */
START_TEST(gzip_input)
{
    const char *text = "y,a,b\n1,0.5,2\n-1,3,-4.25\n1,1e-3,7\n";
    pt_read_options o = opts(-1, 0);
    pt_dataset *plain = read_text(text, &o);
    char path[512], cmd[4000];
    snprintf(path, sizeof path, "%s", tu_write_file("gz", ".csv", text));
    snprintf(cmd, sizeof cmd,
             "gzip -c %s >%s.gz && gzip -c %s >%s.bin && head -c 30 %s.gz >%s.cut.gz", path,
             path, path, path, path, path);
    ck_assert_int_eq(system(cmd), 0);
    const char *sfx[] = {".gz", ".bin"};
    for (int i = 0; i < 2; i++) {
        char gz[600];
        snprintf(gz, sizeof gz, "%s%s", path, sfx[i]);
        pt_read_options oc = opts(-1, 0);
        oc.format = i == 1 ? PT_FORMAT_CSV : PT_FORMAT_AUTO;
        pt_dataset *ds = NULL;
        ck_assert_msg(pt_dataset_read(gz, &oc, &ds) == PT_OK, "%s", pt_last_error());
        tu_assert_same_data(plain, ds, gz);
        pt_dataset_free(ds);
        unlink(gz);
    }
    char cut[600];
    snprintf(cut, sizeof cut, "%s.cut.gz", path);
    pt_dataset *ds = NULL;
    ck_assert_int_ne(pt_dataset_read(cut, &o, &ds), PT_OK);
    ck_assert_ptr_nonnull(strstr(pt_last_error(), "unexpected end of file"));
    ck_assert_ptr_nonnull(strstr(pt_last_error(), cut));
    unlink(cut);
    unlink(path);
    pt_dataset_free(plain);
}
END_TEST

START_TEST(accepts_crlf_blank_spaces)
{
    pt_read_options o = opts(-1, 0);
    pt_dataset *ds = read_text("\r\n x , y \r\n\r\n 1 , 2.5 \r\n  \n-1,\t-3\t\r\n0,4", &o);
    ck_assert_uint_eq(pt_dataset_n(ds), 3);
    check_row(ds, 0, 1, (const float[]){2.5f}, 1);
    check_row(ds, 1, -1, (const float[]){-3}, 1);
    check_row(ds, 2, 0, (const float[]){4}, 1);
    pt_dataset_free(ds);
}
END_TEST

START_TEST(err_ragged)
{
    expect_fail("1,2,3\n1,2\n", 2, "expected 3 columns, got 2");
    expect_fail("a,b\n1,2\n\n1,2,3\n", 4, "expected 2 columns, got 3");
}
END_TEST

START_TEST(err_not_number)
{
    expect_fail("1,2,3\n-1,2,abc\n", 2, "column 3: 'abc' is not a number");
    expect_fail("1,2,3\n-1,,3\n", 2, "column 2 is empty: a missing value");
    expect_fail("1,2,3\n ,2,3\n", 2, "label is empty");
}
END_TEST

/* Words in the label column are text labels: classes in strcmp order, kept by name. */
START_TEST(text_labels)
{
    pt_read_options o = opts(-1, 0);
    pt_dataset *ds = read_text("setosa,1,2\n\"virginica\",3,4\nversicolor,5,6\n7,7,8\n", &o);
    ck_assert_uint_eq(pt_dataset_nclass(ds), 4);
    ck_assert_str_eq(pt_dataset_class_name(ds, 0), "7");
    ck_assert_str_eq(pt_dataset_class_name(ds, 1), "setosa");
    ck_assert_str_eq(pt_dataset_class_name(ds, 3), "virginica");
    ck_assert_int_eq(pt_dataset_class(ds, 1), 3);
    ck_assert_int_eq(pt_dataset_class(ds, 3), 0);
    pt_dataset_free(ds);
    /* numbers only: numeric labels, no names */
    ds = read_text("1,2\n0,3\n", &o);
    ck_assert_ptr_null(pt_dataset_class_name(ds, 0));
    pt_dataset_free(ds);
}
END_TEST

START_TEST(err_nan_inf)
{
    expect_fail("1,2,3\n-1,nan,3\n", 2, "column 2: 'nan' is not finite");
    expect_fail("1,2,inf\n", 1, "not finite");
    expect_fail("1,2,3\nNaN,2,3\n", 2, "not finite");
    expect_fail("1,2,3\n1,2,1e39\n", 2, "not finite");
}
END_TEST

START_TEST(err_empty)
{
    expect_fail("", 0, "no data rows");
    expect_fail("\n  \n", 0, "no data rows");
    expect_fail("a,b,c\n", 0, "no data rows");
}
END_TEST

START_TEST(err_missing_file)
{
    pt_read_options o = opts(-1, 0);
    pt_dataset *ds;
    const char *path = tu_path("missing", ".csv");
    ck_assert_int_eq(pt_dataset_read(path, &o, &ds), PT_ERR_IO);
    ck_assert(strstr(pt_last_error(), path) != NULL);
}
END_TEST

START_TEST(memory_budget_refused)
{
    pt_read_options o = opts(-1, 0);
    o.mem_budget_bytes = 100;
    expect_fail_o("1,2\n3,4\n5,6\n", &o, PT_ERR_LIMIT, 0, "budget");
}
END_TEST

/* The header is told by content: words standing above numbers. An empty field is a missing
 * value, not a header sign: a first line with one is data, refused at its line. */
START_TEST(header_by_content)
{
    expect_fail("1,,2\n-1,3,4\n", 1, "column 2 is empty: a missing value");
    expect_fail("1,2,\n-1,3,4\n", 1, "column 3 is empty: a missing value");
    /* a header with an empty name is still a header ('a' above 2) */
    pt_read_options o = opts(-1, 0);
    pt_dataset *ds = read_text("y,a,\n1,2,3\n-1,4,5\n", &o);
    ck_assert_uint_eq(pt_dataset_n(ds), 2);
    check_row(ds, 0, 1, (const float[]){2, 3}, 2);
    pt_dataset_free(ds);
    /* a header above a first row with a missing value: the header goes, the row is refused */
    expect_fail("label,a,b\n1,,2\n-1,3,4\n", 2, "column 2 is empty: a missing value");
    /* a word above a word is no header: the first line is data with a bad value */
    expect_fail("1,x,3\n-1,y,4\n", 1, "column 2: 'x' is not a number");
    /* a one-column file: the label column decides */
    ds = read_text("label\n1\n-1\n", &o);
    ck_assert_uint_eq(pt_dataset_n(ds), 2);
    ck_assert_ptr_null(pt_dataset_class_name(ds, 0));
    pt_dataset_free(ds);
    /* blank lines between the header and the data do not matter */
    ds = read_text("y,a,b\n\n  \n1,2,3\n", &o);
    ck_assert_uint_eq(pt_dataset_n(ds), 1);
    check_row(ds, 0, 1, (const float[]){2, 3}, 2);
    pt_dataset_free(ds);
}
END_TEST

/* A header holds no number: a first row with a numeric label or value is data, and a bad
 * cell in it is an error naming its line and column (it is not dropped as a header). */
START_TEST(malformed_first_row_is_data)
{
    expect_fail("1,2x,3\n-1,3,4\n1,5,6\n", 1, "column 2: '2x' is not a number");
    expect_fail("label,a,b\n1,2x,3\n", 2, "column 2: '2x' is not a number");
    /* a word among numbers in the first row is bad data too, in any column */
    expect_fail("1,2,zz\n-1,3,4\n", 1, "column 3: 'zz' is not a number");
    /* a NUL byte in the first row: refused, said as such, at its line and column */
    static const char nul_value[] = "1,2\0,3\n-1,3,4\n";
    static const char nul_label[] = "1\0,2,3\n-1,3,4\n";
    const struct { const char *text; size_t len; const char *key; } cases[] = {
        {nul_value, sizeof nul_value - 1, "column 2 holds a NUL byte (byte 2 of the field)"},
        {nul_label, sizeof nul_label - 1, "column 1 (the label) holds a NUL byte"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        char path[512];
        snprintf(path, sizeof path, "%s", tu_write_bytes("nul", ".csv", cases[k].text,
                                                         cases[k].len));
        pt_read_options o = opts(-1, 0);
        pt_dataset *ds = NULL;
        ck_assert_int_eq(pt_dataset_read(path, &o, &ds), PT_ERR_PARSE);
        ck_assert_ptr_null(ds);
        char tag[600];
        snprintf(tag, sizeof tag, "%s:1: %s", path, cases[k].key);
        HAS(pt_last_error(), tag);
        unlink(path);
    }
    /* a header with an empty label name (pandas' index column) is still a header */
    pt_read_options o = opts(-1, 0);
    pt_dataset *ds = read_text(",a,b\n1,2,3\n", &o);
    ck_assert_uint_eq(pt_dataset_n(ds), 1);
    check_row(ds, 0, 1, (const float[]){2, 3}, 2);
    pt_dataset_free(ds);
}
END_TEST

/* A first line without a comma but with another separator is refused, naming it and the
 * option; with csv_delimiter set the file reads. */
START_TEST(other_separators)
{
    expect_fail("y;a;b\n1;0.5;2\n-1;3;4\n", 1, "has ';' (semicolon)");
    expect_fail("y;a;b\n1;0.5;2\n", 1, "pt_read_options.csv_delimiter ';'");
    expect_fail("y;a;b\n1;0.5;2\n", 1, "csv_delimiter");
    expect_fail("1\t0.5\t2\n-1\t3\t4\n", 1, "has a tab");
    expect_fail("1\t0.5\t2\n-1\t3\t4\n", 1, "pt_read_options.csv_delimiter '\\t'");
    expect_fail("1|0.5|2\n", 1, "has '|'");
    expect_fail("\n1 0.5 2\n-1 3 4\n", 2, "has spaces");
    expect_fail("1 1:0.5 2:2\n", 1, "pt_read_options.format PT_FORMAT_LIBSVM");
    /* commas in the first line: a field holding ';' says what it may be */
    expect_fail("1,2;3,4\n-1,5;6,7\n", 1, "'2;3' is not a number (are the fields separated by ';'?");

    const char *seps = ";\t| ";
    const char *texts[] = {"y;a;b\n1;0.5;2\n-1;3;4\n", "y\ta\tb\n1\t0.5\t2\n-1\t3\t4\n",
                           "y|a|b\n1|0.5|2\n-1|3|4\n", "y a b\n1 0.5 2\n-1 3 4\n"};
    for (int k = 0; k < 4; k++) {
        pt_read_options o = opts(-1, 0);
        o.csv_delimiter = seps[k];
        pt_dataset *ds = read_text(texts[k], &o);
        ck_assert_uint_eq(pt_dataset_n(ds), 2);
        ck_assert_uint_eq(pt_dataset_d(ds), 2);
        check_row(ds, 0, 1, (const float[]){0.5f, 2}, 2);
        check_row(ds, 1, -1, (const float[]){3, 4}, 2);
        pt_dataset_free(ds);
    }
    /* with a delimiter given, commas are in the fields: decimal commas are refused, said so */
    pt_read_options o = opts(-1, 0);
    o.csv_delimiter = ';';
    expect_fail_o("1;0,5;2\n-1;1,5;3\n", &o, PT_ERR_PARSE, 1,
                  "'0,5' is not a number (decimal commas");
    /* 0 is the default, ',' */
    o.csv_delimiter = 0;
    pt_dataset *ds = read_text("1,2\n-1,3\n", &o);
    ck_assert_uint_eq(pt_dataset_d(ds), 1);
    pt_dataset_free(ds);
    /* a delimiter that can be part of a number or a line is refused */
    const char bad[] = {'a', 'E', '7', '.', '-', '+', '"', '\n', '\r', (char)0xc3};
    for (size_t k = 0; k < sizeof bad; k++) {
        o.csv_delimiter = bad[k];
        expect_fail_o("1,2\n", &o, PT_ERR_INVALID, 0, "cannot separate fields");
    }
}
END_TEST

/* A sparse dataset written as CSV: every feature of every row (trailing all-zero columns kept),
 * read back with the same rows into either layout (auto: sparse, by its density); one whose
 * dense form could not be read back is refused before anything is written. */
START_TEST(sparse_written)
{
    const uint64_t rowptr[] = {0, 2, 3, 3, 5};
    const uint32_t col[] = {0, 4, 1, 2, 3};
    const float val[] = {1.5f, 0.0f, -2.0f, 0.25f, 3.0f};
    const double labels[] = {1, -1, 1, -1};
    pt_dataset *sp;
    ck_assert_int_eq(pt_dataset_from_csr(4, 20, rowptr, col, val, &sp), PT_OK);
    ck_assert_int_eq(pt_dataset_set_labels(sp, labels), PT_OK);
    char path[512];
    snprintf(path, sizeof path, "%s", tu_path("sp", ".csv"));
    ck_assert_msg(pt_dataset_write(sp, path, PT_FORMAT_CSV) == PT_OK, "%s", pt_last_error());
    char *text = tu_read_file(path, NULL);
    ck_assert_str_eq(text, "1,1.5,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0\n"
                           "-1,0,-2,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0\n"
                           "1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0\n"
                           "-1,0,0,0.25,3,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0\n");
    free(text);
    pt_read_options o = opts(-1, 0);
    const pt_layout layouts[] = {PT_LAYOUT_AUTO, PT_LAYOUT_DENSE, PT_LAYOUT_SPARSE};
    for (int l = 0; l < 3; l++) {
        o.layout = layouts[l];
        pt_dataset *back = NULL;
        ck_assert_msg(pt_dataset_read(path, &o, &back) == PT_OK, "%s", pt_last_error());
        ck_assert_int_eq(pt_dataset_layout(back),
                         layouts[l] == PT_LAYOUT_DENSE ? PT_LAYOUT_DENSE : PT_LAYOUT_SPARSE);
        tu_assert_same_data(sp, back, "sparse written as CSV");
        pt_dataset_free(back);
    }
    pt_dataset_free(sp);
    unlink(path);

    /* 1000 rows of 2^32 - 1 features: 16 TiB dense */
    uint64_t *rp = calloc(1001, sizeof *rp);
    ck_assert_ptr_nonnull(rp);
    ck_assert_int_eq(pt_dataset_from_csr(1000, UINT32_MAX, rp, NULL, NULL, &sp), PT_OK);
    ck_assert_int_eq(pt_dataset_write(sp, path, PT_FORMAT_CSV), PT_ERR_LIMIT);
    ck_assert_ptr_nonnull(strstr(pt_last_error(), "write LIBSVM or .ptd instead"));
    ck_assert_int_ne(access(path, F_OK), 0);
    pt_dataset_free(sp);
    free(rp);
}
END_TEST

/* Truncates the file named by user when the reader's log says `when`: before a pass over the
 * text that then reads the part that went, certainly. */
typedef struct shrink_when {
    const char *path, *when;
    int done;
} shrink_when;

static void shrink_on_log(pt_log_level level, const char *msg, void *user)
{
    (void)level;
    shrink_when *w = user;
    if (!w->done && strstr(msg, w->when)) {
        ck_assert_int_eq(truncate(w->path, 4096), 0);
        w->done = 1;
    }
}

/* A CSV file truncated while it is read (after the counting pass, before the parse), and
 * while it is converted in bounded memory (before the pass that writes the windows): no
 * SIGBUS, PT_ERR_IO "FILE: file shrank while being read", no dataset, no output file. */
START_TEST(shrinks_while_read)
{
    /* 20,000 rows of 30 features: 2.6 MB dense, 1.3 MB of text */
    size_t cap = 20000 * 64, len = 0;
    char *text = malloc(cap);
    for (int i = 0; i < 20000; i++) {
        len += (size_t)snprintf(text + len, cap - len, "%d", i % 2);
        for (int j = 0; j < 30; j++) len += (size_t)snprintf(text + len, cap - len, ",%d", (i + j) % 7);
        text[len++] = '\n';
    }
    for (int k = 0; k < 2; k++) {
        char path[512], out[512], want[600];
        snprintf(path, sizeof path, "%s", tu_write_bytes("shrink", ".csv", text, len));
        snprintf(out, sizeof out, "%s", tu_path("shrink", ".ptd"));
        pt_read_options o = opts(-1, 0);
        shrink_when w = {path, k == 0 ? "counted; parsing" : "converted in windows", 0};
        pt_set_log(shrink_on_log, &w);
        pt_dataset *ds = NULL;
        pt_status s;
        if (k == 0) {
            s = pt_dataset_read(path, &o, &ds);
        } else {
            o.mem_budget_bytes = 1u << 20; /* under the dense rows: converted in bounded memory */
            s = pt_dataset_convert_file(path, &o, out);
        }
        pt_set_log(NULL, NULL);
        ck_assert_msg(w.done, "case %d: the log never said '%s'", k, w.when);
        ck_assert_msg(s == PT_ERR_IO, "case %d: status %d: %s", k, s, pt_last_error());
        snprintf(want, sizeof want, "%s: file shrank while being read", path);
        HAS(pt_last_error(), want);
        ck_assert_ptr_null(ds);
        ck_assert_int_eq(access(out, F_OK), -1);
        unlink(path);
    }
    free(text);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("io_csv");
    TCase *t = tcase_create("csv");
    tcase_add_test(t, roundtrip);
    tcase_add_test(t, writer_text);
    tcase_add_test(t, sparse_written);
    tcase_add_test(t, header_detected);
    tcase_add_test(t, header_forced);
    tcase_add_test(t, header_by_content);
    tcase_add_test(t, malformed_first_row_is_data);
    tcase_add_test(t, other_separators);
    tcase_add_test(t, label_column);
    tcase_add_test(t, label_last_and_named);
    tcase_add_test(t, label_column_warning);
    tcase_add_test(t, gzip_input);
    tcase_add_test(t, accepts_crlf_blank_spaces);
    tcase_add_test(t, err_ragged);
    tcase_add_test(t, err_not_number);
    tcase_add_test(t, text_labels);
    tcase_add_test(t, err_nan_inf);
    tcase_add_test(t, err_empty);
    tcase_add_test(t, err_missing_file);
    tcase_add_test(t, memory_budget_refused);
    tcase_add_test(t, shrinks_while_read);
    suite_add_tcase(s, t);
    return s;
}

int main(void) { return tu_run_suite(suite()); }
