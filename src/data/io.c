/* Format names, reader/writer dispatch by format or extension. */
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "data.h"

void pt_read_options_init(pt_read_options *o)
{
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->format = PT_FORMAT_AUTO;
    o->max_features = 10000000;
    o->mem_budget_bytes = pt_default_mem_budget();
    o->csv_header = -1;
    o->csv_label_column = 0;
    o->threads = 0;
    o->csv_delimiter = ',';
    o->layout = PT_LAYOUT_AUTO;
}

const char *pt_format_name(pt_format f)
{
    switch (f) {
    case PT_FORMAT_AUTO: return "auto";
    case PT_FORMAT_LIBSVM: return "libsvm";
    case PT_FORMAT_CSV: return "csv";
    case PT_FORMAT_PTD: return "ptd";
    }
    return "unknown";
}

pt_status pt_format_parse(const char *name, pt_format *out)
{
    static const struct { const char *name; pt_format f; } names[] = {
        {"auto", PT_FORMAT_AUTO}, {"libsvm", PT_FORMAT_LIBSVM}, {"svm", PT_FORMAT_LIBSVM},
        {"svmlight", PT_FORMAT_LIBSVM}, {"csv", PT_FORMAT_CSV}, {"ptd", PT_FORMAT_PTD},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcasecmp(name, names[i].name) == 0) {
            *out = names[i].f;
            return PT_OK;
        }
    return pt_fail(PT_ERR_INVALID, "unknown format '%s' (libsvm, csv, ptd)", name);
}

/* Whether path ends in ".gz" (any case). */
static bool gz_name(const char *path)
{
    size_t len = strlen(path);
    return len > 3 && strcasecmp(path + len - 3, ".gz") == 0;
}

pt_format pt_format_from_path(const char *path)
{
    /* a gzip file by the extension under its ".gz": data.csv.gz is CSV */
    size_t len = strlen(path) - (gz_name(path) ? 3 : 0);
    const char *dot = NULL, *slash = NULL;
    for (size_t i = 0; i < len; i++) {
        if (path[i] == '.') dot = path + i;
        if (path[i] == '/') slash = path + i;
    }
    if (!dot || (slash && dot < slash)) return PT_FORMAT_LIBSVM;
    size_t ext = len - (size_t)(dot - path);
    if (ext == 4 && strncasecmp(dot, ".ptd", 4) == 0) return PT_FORMAT_PTD;
    if (ext == 4 && strncasecmp(dot, ".csv", 4) == 0) return PT_FORMAT_CSV;
    return PT_FORMAT_LIBSVM;
}

/* A dataset the CSV reader parsed dense, in the layout o asks for (auto: by its density). */
static pt_status to_layout(const char *path, const pt_read_options *o, pt_dataset **ds)
{
    pt_layout want;
    pt_status s = pt_layout_resolve(path, o->layout, (*ds)->n, (*ds)->d, (*ds)->nnz,
                                    o->mem_budget_bytes, &want);
    pt_dataset *copy = NULL;
    if (s == PT_OK && want != (*ds)->layout) s = pt_dataset_convert(*ds, want, o->mem_budget_bytes, &copy);
    if (s != PT_OK) {
        pt_dataset_free(*ds);
        *ds = NULL;
        return s;
    }
    if (copy) {
        pt_dataset_free(*ds);
        *ds = copy;
    }
    return PT_OK;
}

pt_status pt_dataset_read(const char *path, const pt_read_options *o, pt_dataset **out)
{
    pt_read_options defaults;
    if (!o) {
        pt_read_options_init(&defaults);
        o = &defaults;
    }
    pt_clear_error();
    *out = NULL;
    PT_TRY(PT_CHECK_STRUCT(o, pt_read_options));
    if ((unsigned)o->layout > PT_LAYOUT_AUTO)
        return pt_fail(PT_ERR_INVALID, "pt_read_options.layout: unknown layout %d", (int)o->layout);
    pt_format f = o->format == PT_FORMAT_AUTO ? pt_format_from_path(path) : o->format;
    bool in = strcmp(path, "-") == 0;
    if (in && f == PT_FORMAT_PTD)
        return pt_fail(PT_ERR_INVALID, "standard input (-) cannot be read as a .ptd dataset: "
                       "it is mapped from its file; give the file's path (standard input takes "
                       "LIBSVM or CSV text, gzip-compressed or not)");
    if (f == PT_FORMAT_PTD && gz_name(path))
        return pt_fail(PT_ERR_FORMAT, "%s: a .ptd dataset is read mapped, not through gzip: "
                       "decompress it first (gunzip)", path);
    if (o->shard_count > 1 && (o->shard_index >= o->shard_count || in))
        return pt_fail(in ? PT_ERR_UNSUPPORTED : PT_ERR_INVALID, "%s: %s", in ? "-" : path,
                       in ? "a share of a distributed run is read from a file, not standard "
                            "input"
                          : "pt_read_options.shard_index must be below shard_count");
    if (in) path = pt_stdin_path; /* opened as such, and named so in messages */
    switch (f) {
    case PT_FORMAT_CSV: PT_TRY(pt_read_csv(path, o, out)); break;
    case PT_FORMAT_PTD: return pt_read_ptd(path, o, out);
    default: return pt_read_libsvm(path, o, out);
    }
    return to_layout(path, o, out);
}

pt_status pt_dataset_write(const pt_dataset *ds, const char *path, pt_format f)
{
    pt_clear_error();
    if (f == PT_FORMAT_AUTO) f = pt_format_from_path(path);
    if (f == PT_FORMAT_PTD && strcmp(path, "-") == 0)
        return pt_fail(PT_ERR_INVALID, "a .ptd dataset cannot be written to standard output "
                       "(-): it is a file to map; write LIBSVM or CSV text there, or give a path");
    if (gz_name(path))
        return pt_fail(PT_ERR_INVALID, "%s: ptron reads gzip but does not write it: write the "
                       "file without .gz and compress it (gzip)", path);
    /* (text holds a compact dataset's widened values, each row widened as it is written) */
    switch (f) {
    case PT_FORMAT_CSV: return pt_write_atomic(path, pt_write_csv, ds);
    case PT_FORMAT_PTD: return pt_write_atomic(path, pt_write_ptd, ds);
    default: return pt_write_atomic(path, pt_write_libsvm, ds);
    }
}

pt_status pt_dataset_convert_file(const char *in, const pt_read_options *o, const char *out)
{
    pt_read_options defaults;
    if (!o) {
        pt_read_options_init(&defaults);
        o = &defaults;
    }
    pt_clear_error();
    PT_TRY(PT_CHECK_STRUCT(o, pt_read_options));
    pt_format f = o->format == PT_FORMAT_AUTO ? pt_format_from_path(in) : o->format;
    bool text = f == PT_FORMAT_LIBSVM || f == PT_FORMAT_CSV;
    if (!text || o->shard_count > 1 || strcmp(out, "-") == 0 || gz_name(out) ||
        (unsigned)o->layout > PT_LAYOUT_AUTO) {
        /* in memory: the reader and writer say what is wrong, if anything */
        pt_dataset *ds;
        PT_TRY(pt_dataset_read(in, o, &ds));
        pt_status s = pt_dataset_write(ds, out, PT_FORMAT_PTD);
        pt_dataset_free(ds);
        return s;
    }
    const char *path = strcmp(in, "-") == 0 ? pt_stdin_path : in;
    if (f == PT_FORMAT_LIBSVM) return pt_convert_libsvm_ptd(path, o, out);
    /* CSV: written by the bounded convert, or read whole and written as pt_dataset_read and
     * pt_dataset_write would */
    pt_dataset *ds;
    PT_TRY(pt_convert_csv_ptd(path, o, out, &ds));
    if (!ds) return PT_OK;
    pt_status s = to_layout(path, o, &ds);
    if (s == PT_OK) s = pt_dataset_write(ds, out, PT_FORMAT_PTD);
    pt_dataset_free(ds);
    return s;
}
