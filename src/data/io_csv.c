/* CSV: label in one column (the first unless told), the other columns are the features in
 * order; an optional header line, told from the data by its content; fields split at one
 * delimiter (',' unless told). Empty fields (missing values) are refused: see pt_read_options
 * in ptron.h. Two passes over the mapped file: count the rows and columns (so the dense budget
 * is checked before anything big is allocated), then parse straight into the matrix.
 * Single-threaded: CSV is the interchange format, not the fast one. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

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
    const char *kept; /* the bounded convert: the mapped text from here on is resident; pages
                       * behind the passes are released (NULL: never) ... */
    size_t resident;  /* ... in steps of this many bytes (a power of two, pages whole) */
    pt_guard *guard;  /* the mapped text's (pt_text_map), or NULL */
} csv_file;

static inline bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

static const char *line_end(const char *p, const char *end)
{
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    return nl ? nl : end;
}

/* The bounded convert: release the mapped pages wholly before p (the file stays in the page
 * cache; a later pass maps them again), so the text adds about 2 c->resident to the resident
 * memory however large the file. */
static void release_behind(csv_file *c, const char *p)
{
    if (!c->kept || p < c->kept || (size_t)(p - c->kept) < c->resident) return;
    const char *to = c->data + (((size_t)(p - c->data)) & ~(c->resident - 1));
    if (to > c->kept && madvise((void *)c->kept, (size_t)(to - c->kept), MADV_DONTNEED) == 0)
        c->kept = to;
}

/* The bounded convert: the passes restart at p (page-aligned down, the mapping's pages are). */
static void keep_from(csv_file *c, const char *p)
{
    if (c->kept) c->kept = c->data + (((size_t)(p - c->data)) & ~(c->resident - 1));
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

/* Whether the cell [s, e) holds a number: NaN and Inf count, as for is_word. */
static bool is_number(const char *s, const char *e) { return s < e && !is_word(s, e); }

/* Header detection by content: the first line [p, le) is a header when none of its cells is
 * a number (the label's included), at least one is a word, and the next non-blank line
 * [q, qe) has a number in some cell (q NULL: there is none, and the words will do). Anything
 * else is data, and a bad cell in it is refused with its line and column: a malformed first
 * row ("1,2x,3", or one holding a NUL byte) is not dropped as a header. Empty cells are
 * allowed in a header ("y,a," names two columns; pandas leaves its index column's name
 * empty), but a first line of empty cells only is data with missing values. */
static bool looks_like_header(const csv_file *c, const char *p, const char *le, const char *q,
                              const char *qe)
{
    bool words = false, numbers_below = q == NULL;
    for (size_t col = 0; col < c->ncols; col++) {
        const char *s, *e, *s2 = NULL, *e2 = NULL;
        next_cell(&p, le, c->sep, &s, &e);
        if (is_number(s, e)) return false;
        words = words || s < e;
        if (q) next_cell(&q, qe, c->sep, &s2, &e2);
        numbers_below = numbers_below || is_number(s2, e2);
    }
    return words && numbers_below;
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
    /* (a NUL byte would cut the field short in the message: it is named instead) */
    const char *nul = memchr(s, '\0', (size_t)(e - s));
    if (nul)
        return pt_fail(PT_ERR_PARSE, "%s:%zu: column %zu%s holds a NUL byte (byte %zu of the "
                       "field): not a number (is this a text file?)", c->path, line, col + 1,
                       what, (size_t)(nul - s) + 1);
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
        if (col == c->label && memchr(s, '\0', (size_t)(e - s)))
            return cell_error(c, line, col, s, e, NUM_BAD); /* (its text would stop there) */
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
         p = le < c->end ? le + 1 : c->end) {
        n++;
        release_behind(c, p);
    }
    *rows = n;
    if (n == 0) return pt_fail(PT_ERR_PARSE, "%s: no data rows", c->path);
    return PT_OK;
}

/* Pass 2 from *p (the line numbered *line): the next rows data lines into X (row r at X + r
 * stride; stride 0: each over the last) and labels, each label's text into texts (NULL: not
 * kept); *nnz counts the non-zero features; *p and *line move past them. */
static pt_status parse_some(csv_file *c, const char **p, size_t *line, size_t rows, float *X,
                            size_t stride, double *labels, char **texts, size_t *nnz)
{
    const char *q = *p;
    size_t ln = *line;
    for (size_t row = 0; row < rows && q < c->end; ln++) {
        const char *le = line_end(q, c->end);
        if (!line_blank(q, le)) {
            char *text = NULL;
            pt_status s = parse_line(c, ln, q, le, X + row * stride, &labels[row], &text, nnz);
            if (texts) texts[row] = text;
            else free(text);
            if (s != PT_OK) return s;
            row++;
        }
        q = le < c->end ? le + 1 : c->end;
        release_behind(c, q);
    }
    *p = q;
    *line = ln;
    return PT_OK;
}

/* Pass 2 into ds: every data line from the first one. */
static pt_status parse_rows(csv_file *c, const char *p, size_t line, pt_dataset *ds,
                            double *labels, char **texts)
{
    size_t nnz = 0;
    PT_TRY(parse_some(c, &p, &line, ds->n, ds->X, ds->stride, labels, texts, &nnz));
    ds->nnz = nnz;
    return PT_OK;
}

/* Few classes are plausible; a label column with a value for almost every row is more likely
 * a feature (the label elsewhere, e.g. last): warn. */
static void warn_many_classes(const csv_file *c, size_t nclass, size_t n)
{
    if (nclass > 100 && nclass > n / 2)
        pt_log(PT_LOG_WARN, "%s: the label column (column %zu of %zu) has %zu distinct values in "
               "%zu rows: is it the label? A classification problem has few classes; choose "
               "the label's column with pt_read_options.csv_label_name",
               c->path, c->label + 1, c->ncols, nclass, n);
}

/* After scan_file: the n data rows from first (line first_line) into a dataset in memory. */
static pt_status read_rows(csv_file *c, const pt_read_options *o, size_t n, const char *first,
                           size_t first_line, pt_dataset **out)
{
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
    if (s == PT_OK) warn_many_classes(c, ds->nclass, n);
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

static pt_status read_mapped(csv_file *c, const pt_read_options *o, pt_dataset **out)
{
    size_t n, first_line = 0;
    const char *first;
    PT_TRY(scan_file(c, o, &n, &first, &first_line));
    pt_log(PT_LOG_INFO, "%s: %zu data rows of %zu columns counted; parsing them", c->path, n,
           c->ncols);
    return read_rows(c, o, n, first, first_line, out);
}

/* The options' CSV settings checked, and path's text in memory (pt_text_map) as c. */
static pt_status csv_open(const char *path, const pt_read_options *o, csv_file *c, size_t *len,
                          bool *mapped)
{
    c->guard = NULL;
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
    pt_guard *guard;
    PT_TRY(pt_text_map(path, o->mem_budget_bytes, &data, len, mapped, &guard));
    /* before c's end pointer: an empty text may be a null pointer (no offset on it) */
    if (*len == 0) return pt_fail(PT_ERR_PARSE, "%s: no data rows (empty file)", path);
    *c = (csv_file){path,
                    data,
                    data + *len,
                    0,
                    o->csv_label_column > 0 ? (size_t)o->csv_label_column : 0,
                    sep,
                    o->csv_label_column,
                    o->csv_label_name,
                    "",
                    NULL,
                    0,
                    guard};
    return PT_OK;
}

pt_status pt_read_csv(const char *path, const pt_read_options *o, pt_dataset **out)
{
    *out = NULL;
    csv_file c;
    size_t len = 0;
    bool mapped = false;
    pt_status s = csv_open(path, o, &c, &len, &mapped);
    if (s == PT_OK && o->shard_count > 1 && !mapped)
        s = pt_fail(PT_ERR_UNSUPPORTED, "%s: a share of a distributed run is read from a regular "
                    "file, not gzip or standard input: decompress it first", path);
    if (s == PT_OK) s = read_mapped(&c, o, out);
    if (len && pt_guard_damaged(c.guard)) { /* (whatever the zeros it read made of it) */
        pt_dataset_free(*out);
        *out = NULL;
        s = pt_guard_check(c.guard);
    }
    if (len) pt_text_unmap(c.data, len, mapped, c.guard);
    return s;
}

/* ------------------------------------------------------------------ bounded convert */

/* The label texts of a file whose labels are words (pt_dataset_set_class_names), interned:
 * each distinct text once, by id, found through an open-addressing table of ids + 1. */
typedef struct name_table {
    char **text;
    uint32_t *slot;
    size_t count, cap, bytes; /* bytes: held, texts included */
} name_table;

static uint64_t name_hash(const char *t)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *t; t++) h = (h ^ (unsigned char)*t) * 1099511628211ull;
    return h;
}

static void names_clear(name_table *nt)
{
    for (size_t i = 0; i < nt->count; i++) free(nt->text[i]);
    free(nt->text);
    free(nt->slot);
}

/* The id of text, or UINT32_MAX if it is not in the table; *at gets its slot or the empty
 * one where it would go. */
static uint32_t name_find(const name_table *nt, const char *text, size_t *at)
{
    size_t h = (size_t)name_hash(text) & (nt->cap - 1);
    for (; nt->slot[h]; h = (h + 1) & (nt->cap - 1))
        if (strcmp(nt->text[nt->slot[h] - 1], text) == 0) break;
    *at = h;
    return nt->slot[h] ? nt->slot[h] - 1 : UINT32_MAX;
}

/* The id of text, added if new (text taken: kept as the new name's, else freed); UINT32_MAX
 * when out of memory. */
static uint32_t name_id(name_table *nt, char *text)
{
    size_t h = 0;
    uint32_t id = nt->cap ? name_find(nt, text, &h) : UINT32_MAX;
    if (id != UINT32_MAX) {
        free(text);
        return id;
    }
    if (2 * (nt->count + 1) > nt->cap) {
        size_t cap = nt->cap ? 2 * nt->cap : 64;
        uint32_t *slot = calloc(cap, sizeof *slot);
        char **t = realloc(nt->text, cap / 2 * sizeof *t);
        if (t) nt->text = t;
        if (!slot || !t) {
            free(slot);
            free(text);
            return UINT32_MAX;
        }
        for (size_t i = 0; i < nt->count; i++) {
            size_t k = (size_t)name_hash(nt->text[i]) & (cap - 1);
            while (slot[k]) k = (k + 1) & (cap - 1);
            slot[k] = (uint32_t)i + 1;
        }
        free(nt->slot);
        nt->slot = slot;
        nt->bytes += (cap - nt->cap) * (sizeof *slot + sizeof *t / 2);
        nt->cap = cap;
        name_find(nt, text, &h);
    }
    nt->slot[h] = (uint32_t)nt->count + 1;
    nt->text[nt->count] = text;
    nt->bytes += strlen(text) + 1;
    return (uint32_t)nt->count++;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The labels are words (some label is not a number): every row's label text, as the in-memory
 * reader keeps them, replaced in labels by its rank among the distinct texts, which is the
 * class value pt_dataset_set_class_names gives it. One pass over the label cells, the texts
 * held within budget bytes. */
static pt_status rank_label_names(csv_file *c, const char *first, size_t n, size_t budget,
                                  double *labels)
{
    name_table nt = {0};
    uint32_t *id = malloc((n ? n : 1) * sizeof *id);
    pt_status s = id ? PT_OK : pt_fail(PT_ERR_NOMEM, "%s: cannot allocate %zu labels", c->path, n);
    keep_from(c, first);
    size_t row = 0;
    for (const char *p = first; s == PT_OK && p < c->end && row < n;) {
        const char *le = line_end(p, c->end), *q = p, *a = NULL, *e = NULL;
        if (!line_blank(p, le)) {
            for (size_t col = 0; col <= c->label; col++) next_cell(&q, le, c->sep, &a, &e);
            char *t = label_text(a, e);
            id[row] = t ? name_id(&nt, t) : UINT32_MAX;
            if (id[row] == UINT32_MAX)
                s = pt_fail(PT_ERR_NOMEM, "%s: cannot allocate a label", c->path);
            else if (nt.bytes + n * sizeof *id > budget)
                s = pt_fail(PT_ERR_LIMIT, "%s: the labels are words, %zu distinct ones by row %zu "
                            "(%.1f MiB with their row indices), over what the memory budget "
                            "leaves them (%.1f MiB); raise "
                            "pt_read_options.mem_budget_bytes", c->path, nt.count, row + 1,
                            (double)(nt.bytes + n * sizeof *id) / 1048576.0,
                            budget / 1048576.0);
            row++;
        }
        p = le < c->end ? le + 1 : c->end;
        release_behind(c, p);
    }
    char **sorted = s == PT_OK ? malloc((nt.count ? nt.count : 1) * sizeof *sorted) : NULL;
    double *rank = s == PT_OK ? malloc((nt.count ? nt.count : 1) * sizeof *rank) : NULL;
    if (s == PT_OK && (!sorted || !rank))
        s = pt_fail(PT_ERR_NOMEM, "%s: cannot allocate %zu class names", c->path, nt.count);
    if (s == PT_OK) {
        memcpy(sorted, nt.text, nt.count * sizeof *sorted);
        qsort(sorted, nt.count, sizeof *sorted, cmp_name);
        size_t h;
        for (size_t k = 0; k < nt.count; k++) rank[name_find(&nt, sorted[k], &h)] = (double)k;
    }
    for (size_t i = 0; s == PT_OK && i < n; i++) labels[i] = rank[id[i]];
    free(sorted);
    free(rank);
    free(id);
    names_clear(&nt);
    return s;
}

/* The bounded convert's second pass: the rows a window at a time, straight to the file. */
typedef struct csv_job {
    csv_file *c;
    const char *first;
    size_t first_line, n, nnz, window_rows;
    bool sparse;
    const pt_dataset *meta; /* the class table and class indices */
} csv_job;

static pt_status write_windows(FILE *f, const void *ctx)
{
    const csv_job *j = ctx;
    size_t d = j->c->ncols - 1, stride = pt_stride_for(d), W = j->window_rows;
    pt_ptd_writer *w;
    PT_TRY(pt_ptd_writer_begin(f, j->n, d, j->sparse, j->nnz, j->meta->nclass, &w));
    float *X = pt_calloc(W * stride * sizeof *X, "convert window"); /* padding stays 0 */
    double *labels = malloc(W * sizeof *labels);
    uint64_t *ends = j->sparse ? malloc(W * sizeof *ends) : NULL;
    uint32_t *col = j->sparse ? malloc((W * d > 0 ? W * d : 1) * sizeof *col) : NULL;
    float *val = j->sparse ? malloc((W * d > 0 ? W * d : 1) * sizeof *val) : NULL;
    pt_status s = X && labels && (!j->sparse || (ends && col && val))
                      ? PT_OK
                      : pt_fail(PT_ERR_NOMEM, "%s: cannot allocate a window of %zu rows",
                                j->c->path, W);
    const char *p = j->first;
    size_t line = j->first_line, nnz = 0, kept = 0;
    keep_from(j->c, p);
    for (size_t done = 0, rows; s == PT_OK && done < j->n; done += rows) {
        rows = j->n - done < W ? j->n - done : W;
        s = parse_some(j->c, &p, &line, rows, X, stride, labels, NULL, &nnz);
        if (s != PT_OK) break;
        if (!j->sparse) {
            s = pt_ptd_writer_dense(w, X, rows);
            continue;
        }
        /* the rows' non-zeros, as the dense-to-sparse conversion keeps them */
        size_t e = 0;
        for (size_t i = 0; i < rows; i++) {
            const float *x = X + i * stride;
            for (size_t k = 0; k < d; k++)
                if (x[k] != 0.0f) {
                    col[e] = (uint32_t)k;
                    val[e++] = x[k];
                }
            ends[i] = kept + e;
        }
        s = pt_ptd_writer_sparse(w, ends, rows, col, val, e);
        kept += e;
    }
    if (s == PT_OK) s = pt_guard_check(j->c->guard); /* (the rows must be the file's) */
    if (s == PT_OK) s = pt_ptd_writer_end(w, j->meta->class_values, j->meta->cls, nnz);
    pt_ptd_writer_free(w);
    pt_free(X);
    free(labels);
    free(ends);
    free(col);
    free(val);
    return s;
}

/* After scan_file (n rows from first, at line first_line): the dataset exceeds the budget.
 * A first pass parses every row (one row's buffer) for the labels, the non-zeros and every
 * error the in-memory read would find, in the same order; the labels' class table is made;
 * a second pass parses the rows again a window at a time and writes them to the file. Held
 * with the windows: the labels and their class table (24 bytes a row), and about
 * 2 c->resident of the mapped text. */
static pt_status convert_bounded(csv_file *c, const pt_read_options *o, size_t n,
                                 const char *first, size_t first_line, const char *out)
{
    size_t budget = o->mem_budget_bytes ? o->mem_budget_bytes : pt_default_mem_budget();
    size_t d = c->ncols - 1, stride = pt_stride_for(d);
    /* labels, their sorted copy (pt_dataset_set_class_table), class indices, +-1 labels */
    size_t fixed = n * (2 * sizeof(double) + sizeof(int32_t) + sizeof(float)) +
                   stride * sizeof(float) + 2 * c->resident, least = 256u << 10;
    if (fixed > budget || budget - fixed < least)
        return pt_fail(PT_ERR_LIMIT, "%s: converting %zu rows in bounded memory needs %.1f MiB "
                       "for the labels, the text read and the smallest window, over the memory "
                       "budget of %.1f MiB; raise pt_read_options.mem_budget_bytes",
                       c->path, n, (double)(fixed + least) / 1048576.0, budget / 1048576.0);
    double *labels = malloc((n ? n : 1) * sizeof *labels);
    float *row = pt_calloc(stride * sizeof *row, "a row");
    pt_dataset *meta = calloc(1, sizeof *meta);
    pt_status s = labels && row && meta ? PT_OK
                                        : pt_fail(PT_ERR_NOMEM, "%s: cannot allocate %zu labels",
                                                  c->path, n);
    const char *p = first;
    size_t line = first_line, nnz = 0;
    keep_from(c, p);
    if (s == PT_OK) s = parse_some(c, &p, &line, n, row, 0, labels, NULL, &nnz);
    bool words = false;
    for (size_t i = 0; s == PT_OK && i < n && !words; i++) words = isnan(labels[i]);
    if (s == PT_OK && words) s = rank_label_names(c, first, n, budget - fixed, labels);
    pt_layout layout = PT_LAYOUT_DENSE;
    if (s == PT_OK) s = pt_layout_resolve(c->path, o->layout, n, d, nnz, SIZE_MAX, &layout);
    if (s == PT_OK) {
        meta->n = n;
        meta->cls = pt_alloc((n ? n : 1) * sizeof *meta->cls, "class indices");
        s = meta->cls ? pt_dataset_set_class_table(meta, labels) : PT_ERR_NOMEM;
    }
    if (s == PT_OK) warn_many_classes(c, meta->nclass, n);
    free(labels);
    pt_free(row);
    bool sparse = layout == PT_LAYOUT_SPARSE;
    size_t per_row = stride * sizeof(float) + sizeof(double) +
                     (sparse ? d * (sizeof(uint32_t) + sizeof(float)) + sizeof(uint64_t) : 0);
    csv_job j = {c, first, first_line, n, nnz, (budget - fixed) / per_row, sparse, meta};
    if (j.window_rows > n) j.window_rows = n;
    if (s == PT_OK && j.window_rows == 0)
        s = pt_fail(PT_ERR_LIMIT, "%s: a window of one row of %zu features needs %.1f MiB, over "
                    "what the memory budget of %.1f MiB leaves; raise "
                    "pt_read_options.mem_budget_bytes", c->path, d, per_row / 1048576.0,
                    budget / 1048576.0);
    if (s == PT_OK) {
        pt_log(PT_LOG_INFO, "%s: %zu rows x %zu features (%s) exceed the memory budget of %.1f "
               "MiB: converted in windows of %zu rows", c->path, n, d, pt_layout_name(layout),
               budget / 1048576.0, j.window_rows);
        s = pt_write_atomic(out, write_windows, &j);
    }
    pt_dataset_free(meta);
    return s;
}

pt_status pt_convert_csv_ptd(const char *path, const pt_read_options *o, const char *out,
                             pt_dataset **whole)
{
    *whole = NULL;
    csv_file c;
    size_t len = 0, n = 0, first_line = 0;
    bool mapped = false;
    const char *first = NULL;
    pt_status s = csv_open(path, o, &c, &len, &mapped);
    size_t budget = o->mem_budget_bytes ? o->mem_budget_bytes : pt_default_mem_budget();
    if (s == PT_OK && mapped) {
        /* the text read is released in steps of budget / 16 (64 KiB to 4 MiB) */
        c.kept = c.data;
        for (c.resident = 64u << 10; c.resident < (4u << 20) && 32 * c.resident <= budget;)
            c.resident *= 2;
    }
    if (s == PT_OK) s = scan_file(&c, o, &n, &first, &first_line);
    if (s == PT_OK && mapped && pt_dense_bytes(n, c.ncols - 1) > budget) {
        s = convert_bounded(&c, o, n, first, first_line, out);
    } else if (s == PT_OK) {
        keep_from(&c, first);
        s = read_rows(&c, o, n, first, first_line, whole);
        if (s == PT_ERR_LIMIT && !mapped) {
            char why[512];
            snprintf(why, sizeof why, "%s", pt_last_error());
            s = pt_fail(PT_ERR_LIMIT, "%s; standard input and gzip text are read once, in "
                        "memory: give the path of an uncompressed file to convert it in bounded "
                        "memory", why);
        }
    }
    if (len && pt_guard_damaged(c.guard)) { /* (whatever the zeros it read made of it) */
        pt_dataset_free(*whole);
        *whole = NULL;
        s = pt_guard_check(c.guard);
    }
    if (len) pt_text_unmap(c.data, len, mapped, c.guard);
    return s;
}

/* Label first, then the d values, no header; the buffered number formatting is shared with
 * the LIBSVM writer. */
/* ------------------------------------------------------------------------ the writer */

/* Row i: every feature, dense; a sparse row's absent features are written as 0. */
static pt_status csv_row(FILE *f, const pt_dataset *ds, const char *label, size_t i,
                         const float *x, char *buf, size_t *used)
{
    const uint32_t *col = NULL;
    size_t m = 0, k = 0;
    if (ds->layout == PT_LAYOUT_SPARSE) m = pt_csr_row(ds, i, &col, &x);
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
