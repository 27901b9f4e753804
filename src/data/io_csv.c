/* CSV: label in one column (the first unless told), the other columns are the features in
 * order; an optional header line, told from the data by its content; fields split at one
 * delimiter (',' unless told). Empty fields (missing values) are refused: see pt_read_options
 * in ptron.h. Two passes over the mapped file: count the rows and columns (so the dense budget
 * is checked before anything big is allocated), then parse straight into the matrix.
 * Single-threaded: CSV is the interchange format, not the fast one. */
#include <stdlib.h>
#include <string.h>

#include "io_text.h"

#define CELL_SHOWN 40

typedef struct csv_file {
    const char *path;
    const char *data, *end;
    size_t ncols;    /* columns of every row */
    size_t label;    /* 0-based label column */
    char sep;        /* the field delimiter */
    int label_arg;   /* pt_read_options.csv_label_column (PT_CSV_LABEL_LAST: the last) */
    const char *label_name; /* pt_read_options.csv_label_name, or NULL */
    char share_name[1024];  /* a share's name in messages (pt_read_options.shard_count) */
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

static size_t count_cells(const char *p, const char *le, char sep)
{
    size_t n = 1;
    while ((p = memchr(p, sep, (size_t)(le - p))) != NULL) {
        n++;
        p++;
    }
    return n;
}

/* The cell starting at *p, trimmed, as [*s, *e); *p moves past its delimiter (an empty cell
 * at the end of the line). */
static void next_cell(const char **p, const char *le, char sep, const char **s, const char **e)
{
    const char *comma = memchr(*p, sep, (size_t)(le - *p));
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

/* A word: a cell that is neither empty (a missing value) nor a number. NaN and Inf count as
 * numbers here, so a data row holding one is refused with the reason rather than skipped as
 * a header. */
static bool is_word(const char *s, const char *e)
{
    float v;
    return s < e && parse_cell(s, e, &v, NULL) == NUM_BAD;
}

/* Header detection by content: the first line [p, le) is a header when one of its cells is a
 * word where the next non-blank line [q, qe) has a number (q NULL: there is none, and any word
 * will do). The label column is left out unless it is the only one, since labels may be words.
 * An empty cell is no sign of a header: a first data line with a missing value stays data and
 * is refused as such. */
static bool looks_like_header(const csv_file *c, const char *p, const char *le, const char *q,
                              const char *qe)
{
    for (size_t col = 0; col < c->ncols; col++) {
        const char *s, *e, *s2 = NULL, *e2 = NULL;
        next_cell(&p, le, c->sep, &s, &e);
        if (q) next_cell(&q, qe, c->sep, &s2, &e2);
        if (col == c->label && c->ncols > 1) continue;
        if (is_word(s, e) && (!q || (s2 < e2 && !is_word(s2, e2)))) return true;
    }
    return false;
}

/* The separator a first line without the delimiter seems to use instead, or 0. */
static char other_separator(const csv_file *c, const char *p, const char *le)
{
    if (memchr(p, c->sep, (size_t)(le - p))) return 0;
    /* blanks count between fields only, not around the line */
    while (p < le && is_blank(*p)) p++;
    while (le > p && is_blank(le[-1])) le--;
    for (const char *t = ";\t| "; *t; t++)
        if (*t != c->sep && memchr(p, *t, (size_t)(le - p))) return *t;
    return 0;
}

/* How a delimiter is written in a message and on the command line. */
static const char *sep_name(char sep)
{
    switch (sep) {
    case ';': return "';' (semicolon)";
    case '\t': return "a tab";
    case ' ': return "spaces";
    case '|': return "'|'";
    default: return "another separator";
    }
}

static pt_status wrong_separator(const csv_file *c, size_t line, char found)
{
    const char *value = found == '\t' ? "'\\t'" : found == ' ' ? "' '" : found == ';' ? "';'" : "'|'";
    return pt_fail(PT_ERR_PARSE, "%s:%zu: the first line has no '%c' but has %s: to read fields "
                   "separated so, give the delimiter (pt_read_options.csv_delimiter %s)%s",
                   c->path, line, c->sep, sep_name(found), value,
                   found == ' ' ? "; a LIBSVM file is read as one (pt_read_options.format "
                                  "PT_FORMAT_LIBSVM)"
                                : "");
}

static pt_status cell_error(const csv_file *c, size_t line, size_t col, const char *s,
                            const char *e, int st)
{
    int shown = (int)(e - s < CELL_SHOWN ? e - s : CELL_SHOWN);
    const char *what = col == c->label ? " (the label)" : "";
    if (s == e)
        return pt_fail(PT_ERR_PARSE, "%s:%zu: column %zu%s is empty: a missing value (refused; "
                       "fill it in, with 0 where the feature is absent)", c->path, line, col + 1,
                       what);
    if (st == NUM_NONFINITE)
        return pt_fail(PT_ERR_PARSE, "%s:%zu: column %zu%s: '%.*s' is not finite (NaN and Inf "
                       "are refused)", c->path, line, col + 1, what, shown, s);
    /* a field that holds another separator, or a decimal comma, says why */
    const char *hint = "";
    for (const char *t = ";\t|"; *t && !*hint; t++)
        if (*t != c->sep && memchr(s, *t, (size_t)(e - s)))
            hint = *t == ';' ? " (are the fields separated by ';'? set the delimiter)"
                   : *t == '|' ? " (are the fields separated by '|'? set the delimiter)"
                               : " (are the fields separated by tabs? set the delimiter)";
    if (!*hint && c->sep != ',' && memchr(s, ',', (size_t)(e - s)))
        hint = " (decimal commas are not read: write 0.5, not 0,5)";
    return pt_fail(PT_ERR_PARSE, "%s:%zu: column %zu%s: '%.*s' is not a number%s", c->path, line,
                   col + 1, what, shown, s, hint);
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
    size_t got = count_cells(p, le, c->sep);
    if (got != c->ncols)
        return pt_fail(PT_ERR_PARSE, "%s:%zu: expected %zu columns, got %zu (ragged row)",
                       c->path, line, c->ncols, got);
    for (size_t col = 0; col < c->ncols; col++) {
        const char *s, *e;
        next_cell(&p, le, c->sep, &s, &e);
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

/* The next non-blank line at or after *p as [*p, *le) (its number in *line); false at the end. */
static bool next_nonblank(const csv_file *c, const char **p, const char **le, size_t *line)
{
    for (; *p < c->end; *p = *le < c->end ? *le + 1 : c->end) {
        *le = line_end(*p, c->end);
        ++*line;
        if (!line_blank(*p, *le)) return true;
    }
    return false;
}

/* csv_label_name: its column in the first line [p, le) (line number line), which is the
 * header; an error listing the names there when it is not one of them. */
static pt_status find_named_column(csv_file *c, const char *p, const char *le, size_t line)
{
    const char *q = p, *s, *e;
    size_t want = strlen(c->label_name);
    for (size_t col = 0; col < c->ncols; col++) {
        next_cell(&q, le, c->sep, &s, &e);
        if ((size_t)(e - s) == want && memcmp(s, c->label_name, want) == 0) {
            c->label = col;
            return PT_OK;
        }
    }
    size_t shown = (size_t)(le - p) < 200 ? (size_t)(le - p) : 200;
    return pt_fail(PT_ERR_PARSE, "%s:%zu: no column named '%s' in the header (the first line): "
                   "%.*s%s", c->path, line, c->label_name, (int)shown, p,
                   shown < (size_t)(le - p) ? "..." : "");
}

/* The first line start at or after off. */
static const char *share_start(const csv_file *c, size_t off)
{
    if (off == 0) return c->data;
    const char *at = c->data + off - 1;
    const char *nl = at < c->end ? memchr(at, '\n', (size_t)(c->end - at)) : NULL;
    return nl ? nl + 1 : c->end;
}

/* Pass 1: the first non-blank line fixes the columns and, with the line after it, whether it
 * is a header; rows are the other non-blank lines. */
static pt_status scan_file(csv_file *c, const pt_read_options *o, size_t *rows,
                           const char **first_data, size_t *first_line)
{
    size_t line = 0, n = 0;
    const char *p = c->data, *le = NULL;
    *first_data = NULL;
    if (!next_nonblank(c, &p, &le, &line)) return pt_fail(PT_ERR_PARSE, "%s: no data rows", c->path);
    char other = other_separator(c, p, le);
    if (other) return wrong_separator(c, line, other);
    c->ncols = count_cells(p, le, c->sep);
    if (c->label_arg == PT_CSV_LABEL_LAST) c->label = c->ncols - 1;
    bool named = false;
    if (c->label_name) {
        PT_TRY(find_named_column(c, p, le, line));
        named = true;
    }
    if (c->label >= c->ncols)
        return pt_fail(PT_ERR_PARSE, "%s:%zu: label column %zu is out of range: the file has %zu "
                       "columns", c->path, line, c->label + 1, c->ncols);
    const char *q = le < c->end ? le + 1 : c->end, *qe = NULL;
    size_t qline = line;
    bool second = next_nonblank(c, &q, &qe, &qline);
    bool header = named || o->csv_header > 0 ||
                  (o->csv_header < 0 && looks_like_header(c, p, le, second ? q : NULL, qe));
    *first_data = header ? (le < c->end ? le + 1 : c->end) : p;
    *first_line = header ? line + 1 : line;
    if (o->shard_count > 1) {
        /* a share: the data lines that start in its bytes (the header, read above, is the
         * first share's first line); its messages count lines from the share's first */
        size_t len = (size_t)(c->end - c->data), i = o->shard_index, P = o->shard_count;
        const char *b = share_start(c, (size_t)((unsigned __int128)len * i / P));
        const char *e = share_start(c, (size_t)((unsigned __int128)len * (i + 1) / P));
        snprintf(c->share_name, sizeof c->share_name, "%s (share %zu of %zu, from byte %zu)",
                 c->path, i + 1, P, (size_t)(b - c->data));
        c->path = c->share_name;
        if (b > *first_data) {
            *first_data = b;
            *first_line = 1;
        }
        c->end = e > *first_data ? e : *first_data;
    }
    for (p = *first_data, line = *first_line - 1; next_nonblank(c, &p, &le, &line);
         p = le < c->end ? le + 1 : c->end)
        n++;
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
    /* Few classes are plausible; a label column with a value for almost every row is more
     * likely a feature (the label elsewhere, e.g. last). */
    if (s == PT_OK && ds->nclass > 100 && ds->nclass > n / 2)
        pt_log(PT_LOG_WARN, "%s: the label column (column %zu of %zu) has %zu distinct values in "
               "%zu rows: is it the label? A classification problem has few classes; choose "
               "the label's column with pt_read_options.csv_label_name",
               c->path, c->label + 1, c->ncols, ds->nclass, n);
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
    if (o->csv_label_column < PT_CSV_LABEL_LAST)
        return pt_fail(PT_ERR_INVALID, "%s: label column %d must be >= 0 (or "
                       "PT_CSV_LABEL_LAST)", path, o->csv_label_column);
    char sep = o->csv_delimiter ? o->csv_delimiter : ',';
    unsigned char u = (unsigned char)sep;
    bool letter = (u | 0x20) >= 'a' && (u | 0x20) <= 'z';
    if (u >= 0x7f || (u < ' ' && sep != '\t') || letter || strchr("0123456789.+-\"", sep))
        return pt_fail(PT_ERR_INVALID, "%s: pt_read_options.csv_delimiter '%c' (0x%02x) cannot "
                       "separate fields: it can be part of a number (letters, digits, '.', '+', "
                       "'-'), a quote or a line end", path, u >= ' ' && u < 0x7f ? sep : '?', u);
    const char *data;
    size_t len;
    bool mapped;
    PT_TRY(pt_text_map(path, &data, &len, &mapped));
    pt_status s;
    if (o->shard_count > 1 && !mapped) {
        s = pt_fail(PT_ERR_UNSUPPORTED, "%s: a share of a distributed run is read from a regular "
                    "file, not gzip or standard input: decompress it first", path);
    } else if (len == 0) {
        s = pt_fail(PT_ERR_PARSE, "%s: no data rows (empty file)", path);
    } else {
        csv_file c = {path,
                      data,
                      data + len,
                      0,
                      o->csv_label_column > 0 ? (size_t)o->csv_label_column : 0,
                      sep,
                      o->csv_label_column,
                      o->csv_label_name,
                      ""};
        s = read_mapped(&c, o, out);
    }
    pt_text_unmap(data, len, mapped);
    return s;
}

/* Label first, then the d values, no header; the buffered number formatting is shared with
 * the LIBSVM writer. */
/* ------------------------------------------------------------------------ the writer */

/* Row i: every feature, dense; a sparse row's absent features are written as 0. */
static pt_status csv_row(FILE *f, const pt_dataset *ds, const char *label, size_t i, char *buf,
                         size_t *used)
{
    const float *x = NULL;
    const uint32_t *col = NULL;
    size_t m = 0, k = 0;
    if (ds->layout == PT_LAYOUT_SPARSE) m = pt_csr_row(ds, i, &col, &x);
    else x = ds->X + i * ds->stride;
    char *p = stpcpy(buf + *used, label);
    for (size_t j = 0; j < ds->d; j++) {
        if ((size_t)(p - buf) > PT_TEXT_WBUF - PT_TEXT_WMAX_ITEM) {
            *used = (size_t)(p - buf);
            PT_TRY(pt_text_flush(f, buf, used));
            p = buf;
        }
        *p++ = ',';
        if (!col) p = pt_put_float(p, x[j]);
        else if (k < m && col[k] == j) p = pt_put_float(p, x[k++]);
        else *p++ = '0';
    }
    *p++ = '\n';
    *used = (size_t)(p - buf);
    return PT_OK;
}

pt_status pt_write_csv(FILE *f, const void *ctx)
{
    const pt_dataset *ds = ctx;
    /* CSV is read back dense: refuse a sparse set whose dense form the reader would refuse */
    size_t budget = pt_default_mem_budget(), bytes = pt_dense_bytes(ds->n, ds->d);
    if (ds->layout == PT_LAYOUT_SPARSE && bytes > budget)
        return pt_fail(PT_ERR_LIMIT, "a sparse dataset of %zu rows x %zu features written as CSV "
                       "(every feature of every row) reads back as %.1f MiB dense, over the "
                       "memory budget of %.1f MiB; write LIBSVM or .ptd instead", ds->n, ds->d,
                       bytes == SIZE_MAX ? INFINITY : bytes / 1048576.0, budget / 1048576.0);
    return pt_text_write_rows(f, ds, csv_row);
}
