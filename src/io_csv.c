/* CSV: label in one column (the first unless told), the other columns are the features in
 * order; an optional header line. Two passes over the mapped file: count the rows and
 * columns (so the dense budget is checked before anything big is allocated), then parse
 * straight into the matrix. Single-threaded: CSV is the interchange format, not the fast one. */
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io_text.h"

enum { NUM_OK = 0, NUM_BAD = 1, NUM_NONFINITE = 2 };

#define CELL_SHOWN 40

typedef struct csv_file {
    const char *path;
    const char *data, *end;
    size_t ncols;    /* columns of every row */
    size_t label;    /* 0-based label column */
} csv_file;

static inline bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

static const char *line_end(const char *p, const char *end)
{
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    return nl ? nl : end;
}

static bool line_blank(const char *p, const char *le)
{
    while (p < le && is_blank(*p)) p++;
    return p == le;
}

static size_t count_cells(const char *p, const char *le)
{
    size_t n = 1;
    while ((p = memchr(p, ',', (size_t)(le - p))) != NULL) {
        n++;
        p++;
    }
    return n;
}

/* The cell starting at *p, trimmed, as [*s, *e); *p moves past its comma. */
static void next_cell(const char **p, const char *le, const char **s, const char **e)
{
    const char *comma = memchr(*p, ',', (size_t)(le - *p));
    const char *ce = comma ? comma : le;
    const char *a = *p;
    while (a < ce && is_blank(*a)) a++;
    while (ce > a && is_blank(ce[-1])) ce--;
    *s = a;
    *e = ce;
    *p = comma ? comma + 1 : le;
}

/* Parse the cell [s, e) as a float or (label) double: NUM_OK, NUM_BAD or NUM_NONFINITE. */
static int parse_cell(const char *s, const char *e, float *f, double *d)
{
    if (s == e) return NUM_BAD;
    const char *q = f ? pt_scan_float(s, e, f) : pt_scan_double(s, e, d);
    if (q == e) return NUM_OK;
    return f ? pt_parse_float_slow(s, (size_t)(e - s), f)
             : pt_parse_double_slow(s, (size_t)(e - s), d);
}

/* Header detection: a first line is a header if any feature cell is not a number (the
 * label cell when there are no feature columns). NaN and Inf count as numbers here, so the
 * data row is refused with the reason rather than skipped as a header. */
static bool looks_like_header(const csv_file *c, const char *p, const char *le)
{
    for (size_t col = 0; col < c->ncols; col++) {
        const char *s, *e;
        next_cell(&p, le, &s, &e);
        if (col == c->label && c->ncols > 1) continue;
        float v;
        if (parse_cell(s, e, &v, NULL) == NUM_BAD) return true;
    }
    return false;
}

static pt_status cell_error(const csv_file *c, size_t line, size_t col, const char *s,
                            const char *e, int st)
{
    int shown = (int)(e - s < CELL_SHOWN ? e - s : CELL_SHOWN);
    const char *what = col == c->label ? " (the label)" : "";
    if (s == e)
        return pt_fail(PT_ERR_PARSE, "%s:%zu: column %zu%s is empty", c->path, line, col + 1, what);
    if (st == NUM_NONFINITE)
        return pt_fail(PT_ERR_PARSE, "%s:%zu: column %zu%s: '%.*s' is not finite (NaN and Inf "
                       "are refused)", c->path, line, col + 1, what, shown, s);
    return pt_fail(PT_ERR_PARSE, "%s:%zu: column %zu%s: '%.*s' is not a number", c->path, line,
                   col + 1, what, shown, s);
}

/* One data line into row x (d floats) and its label. */
/* The text of a label cell: trimmed, without surrounding double quotes (malloc'd). */
static char *label_text(const char *s, const char *e)
{
    while (s < e && (*s == ' ' || *s == '\t')) s++;
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r')) e--;
    if (e - s >= 2 && *s == '"' && e[-1] == '"') {
        s++;
        e--;
    }
    return strndup(s, (size_t)(e - s));
}

static pt_status parse_line(const csv_file *c, size_t line, const char *p, const char *le,
                            float *x, double *label, char **text, size_t *nnz)
{
    size_t got = count_cells(p, le);
    if (got != c->ncols)
        return pt_fail(PT_ERR_PARSE, "%s:%zu: expected %zu columns, got %zu (ragged row)",
                       c->path, line, c->ncols, got);
    for (size_t col = 0; col < c->ncols; col++) {
        const char *s, *e;
        next_cell(&p, le, &s, &e);
        int st;
        if (col == c->label) {
            /* keep every label's text: if any is not a number, labels are words */
            if (!(*text = label_text(s, e)))
                return pt_fail(PT_ERR_NOMEM, "%s:%zu: cannot allocate a label", c->path, line);
            if (!**text) return pt_fail(PT_ERR_PARSE, "%s:%zu: the label is empty", c->path, line);
            st = parse_cell(s, e, NULL, label);
            if (st == NUM_BAD) {
                *label = NAN;
                st = NUM_OK;
            }
        } else {
            float *v = &x[col < c->label ? col : col - 1];
            st = parse_cell(s, e, v, NULL);
            *nnz += *v != 0.0f;
        }
        if (st != NUM_OK) return cell_error(c, line, col, s, e, st);
    }
    return PT_OK;
}

/* Pass 1: the first non-blank line fixes the columns and whether it is a header; rows are
 * the other non-blank lines. */
static pt_status scan_file(csv_file *c, const pt_read_options *o, size_t *rows,
                           const char **first_data, size_t *first_line)
{
    size_t line = 0, n = 0;
    *first_data = NULL;
    for (const char *p = c->data; p < c->end;) {
        const char *le = line_end(p, c->end);
        line++;
        if (!line_blank(p, le)) {
            if (!*first_data) {
                c->ncols = count_cells(p, le);
                if (c->label >= c->ncols)
                    return pt_fail(PT_ERR_PARSE, "%s:%zu: label column %zu is out of range: the "
                                   "file has %zu columns", c->path, line, c->label + 1, c->ncols);
                bool header = o->csv_header > 0 || (o->csv_header < 0 && looks_like_header(c, p, le));
                *first_data = header ? (le < c->end ? le + 1 : c->end) : p;
                *first_line = header ? line + 1 : line;
                if (!header) n++;
            } else {
                n++;
            }
        }
        p = le < c->end ? le + 1 : c->end;
    }
    *rows = n;
    if (n == 0) return pt_fail(PT_ERR_PARSE, "%s: no data rows", c->path);
    return PT_OK;
}

/* Pass 2: parse every data line from the first one. */
static pt_status parse_rows(const csv_file *c, const char *p, size_t line, pt_dataset *ds,
                            double *labels, char **texts)
{
    size_t row = 0, nnz = 0;
    for (; p < c->end; line++) {
        const char *le = line_end(p, c->end);
        if (!line_blank(p, le)) {
            PT_TRY(parse_line(c, line, p, le, ds->X + row * ds->stride, &labels[row], &texts[row], &nnz));
            row++;
        }
        p = le < c->end ? le + 1 : c->end;
    }
    ds->nnz = nnz;
    return PT_OK;
}

static pt_status read_mapped(csv_file *c, const pt_read_options *o, pt_dataset **out)
{
    size_t n, first_line = 0;
    const char *first;
    PT_TRY(scan_file(c, o, &n, &first, &first_line));
    size_t d = c->ncols - 1;
    PT_TRY(pt_check_dense_budget(c->path, n, d, o->mem_budget_bytes));
    pt_dataset *ds = pt_dataset_alloc(n, d);
    if (!ds) return PT_ERR_NOMEM;
    double *labels = malloc(n * sizeof *labels);
    char **texts = calloc(n, sizeof *texts);
    pt_status s = labels && texts ? PT_OK : pt_fail(PT_ERR_NOMEM, "%s: cannot allocate %zu labels", c->path, n);
    if (s == PT_OK) s = parse_rows(c, first, first_line, ds, labels, texts);
    bool words = false;
    for (size_t i = 0; s == PT_OK && i < n && !words; i++) words = isnan(labels[i]);
    if (s == PT_OK) s = words ? pt_dataset_set_class_names(ds, texts) : pt_dataset_set_class_table(ds, labels);
    for (size_t i = 0; texts && i < n; i++) free(texts[i]);
    free(texts);
    free(labels);
    if (s != PT_OK) {
        pt_dataset_free(ds);
        return s;
    }
    *out = ds;
    return PT_OK;
}

pt_status pt_read_csv(const char *path, const pt_read_options *o, pt_dataset **out)
{
    *out = NULL;
    if (o->csv_label_column < 0)
        return pt_fail(PT_ERR_INVALID, "%s: label column %d must be >= 0", path,
                       o->csv_label_column);
    const char *data;
    size_t len;
    bool mapped;
    PT_TRY(pt_text_map(path, &data, &len, &mapped));
    pt_status s;
    if (len == 0) {
        s = pt_fail(PT_ERR_PARSE, "%s: no data rows (empty file)", path);
    } else {
        csv_file c = {path, data, data + len, 0, (size_t)o->csv_label_column};
        s = read_mapped(&c, o, out);
    }
    pt_text_unmap(data, len, mapped);
    return s;
}

/* Label first, then the d values, no header; the buffered number formatting is shared with
 * the LIBSVM writer. */
pt_status pt_write_csv(FILE *f, const void *ds) { return pt_write_csv_rows(f, ds); }
