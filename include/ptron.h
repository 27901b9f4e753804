/*
 * ptron: perceptron training engine.
 *
 * The whole public API. Conventions:
 *  - every function that can fail returns a pt_status; PT_OK is 0;
 *  - after a failure, pt_last_error() returns a message for the calling thread that names
 *    the file, the line and what was wrong ("data.svm:12: feature index 0 must be >= 1");
 *  - opaque types come with create/free pairs; every free accepts NULL;
 *  - the library never prints to stdout or stderr and never exits: it reports through the
 *    log callback (pt_set_log) and the progress callback in pt_train_params;
 *  - messages name the parameter a caller set by its struct and field
 *    ("pt_train_params.epochs must be at least 1"), never a command-line flag;
 *  - parameter structs (pt_read_options, pt_gen_params, pt_expand_params, pt_train_params)
 *    begin with struct_size, which their _init function sets: always start from _init and then
 *    set the fields you need. A struct whose struct_size is not this library's (left unset, or
 *    from a caller compiled against another version of this header) is refused with
 *    PT_ERR_INVALID and a message saying so, never read past its end;
 *  - functions may be called from several threads at once on different objects (each
 *    pt_train call has its own stop state and error message); reading one dataset or model
 *    from several threads at once is safe. The log sink and pt_request_stop are process-wide.
 *
 * Data model: a dataset is n rows of d float32 features, row-major, each row padded with
 * zeros to a stride that is a multiple of 16 floats and starts 64-byte aligned, so SIMD
 * loops need no tail and BLAS sees lda = stride. Labels are stored as a class index per row
 * with a sorted table of the distinct label values; for two classes the larger value is +1
 * and the smaller -1 (so {-1,+1}, {0,1} and any two values map naturally).
 * The bias is an extra weight on a constant-1 coordinate, kept beside w (not in X).
 */
#ifndef PTRON_H
#define PTRON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What the shared library exports: the declarations of this header and nothing else (the
 * library is built with -fvisibility=hidden). */
#if defined(__GNUC__) || defined(__clang__)
#define PT_API __attribute__((visibility("default")))
#else
#define PT_API
#endif

#define PT_VERSION_MAJOR 0
#define PT_VERSION_MINOR 1
#define PT_VERSION_STRING "0.1.0"

/* Rows are padded to a multiple of this many floats (64 bytes). */
#define PT_ALIGN_FLOATS 16
#define PT_ALIGN_BYTES 64

/* ------------------------------------------------------------------------- errors */

typedef enum pt_status {
    PT_OK = 0,
    PT_ERR_INVALID = 1,      /* an argument or parameter out of range */
    PT_ERR_IO = 2,           /* open/read/write/rename failed (errno in the message) */
    PT_ERR_PARSE = 3,        /* a text file that does not parse: file:line in message */
    PT_ERR_FORMAT = 4,       /* a binary file with wrong magic, truncated, inconsistent */
    PT_ERR_CHECKSUM = 5,     /* stored checksum does not match the contents */
    PT_ERR_VERSION = 6,      /* a file written by a newer ptron */
    PT_ERR_NOMEM = 7,        /* an allocation failed */
    PT_ERR_LIMIT = 8,        /* a memory budget or size limit would be exceeded */
    PT_ERR_LABELS = 9,       /* one class only, or too many classes for the path */
    PT_ERR_UNSUPPORTED = 10, /* e.g. an ISA the CPU lacks, a path option not built */
    PT_ERR_NUMERIC = 11,     /* weights or margins became NaN/Inf */
    PT_ERR_INTERRUPTED = 12  /* training stopped: pt_stop_request, pt_request_stop, a callback */
} pt_status;

/* A short fixed description of a status ("parse error"). Never NULL. */
PT_API const char *pt_strerror(pt_status s);

/* The detailed message of the last failure in this thread (empty string if none). */
PT_API const char *pt_last_error(void);

/* ------------------------------------------------------------------- log callback */

typedef enum pt_log_level { PT_LOG_DEBUG = 0, PT_LOG_INFO = 1, PT_LOG_WARN = 2 } pt_log_level;
typedef void (*pt_log_fn)(pt_log_level level, const char *msg, void *user);

/* Set the process-wide log sink (NULL: discard). Warnings such as "model has 10 features,
 * data has 12: extra features ignored" go through it. */
PT_API void pt_set_log(pt_log_fn fn, void *user);

/* ----------------------------------------------------------------- ISA selection */

typedef enum pt_isa {
    PT_ISA_AUTO = 0,
    PT_ISA_SCALAR = 1,
    PT_ISA_AVX2 = 2,   /* AVX2 + FMA */
    PT_ISA_AVX512 = 3, /* AVX-512F */
    PT_ISA_NEON = 4    /* aarch64 Advanced SIMD */
} pt_isa;

PT_API const char *pt_isa_name(pt_isa isa);                 /* "scalar", "avx2", ... */
PT_API pt_status pt_isa_parse(const char *name, pt_isa *out); /* accepts "auto" too */
/* 1 if this build has the variant and the CPU (and OS) can run it. */
PT_API int pt_isa_available(pt_isa isa);
/* The variant used for PT_ISA_AUTO: PTRON_ISA from the environment if set, else the best
 * available. */
PT_API pt_isa pt_isa_default(void);

/* ----------------------------------------------------------------------- datasets */

typedef struct pt_dataset pt_dataset;

/* How a dataset stores its matrix. Dense: n rows of stride floats (the layout below). Sparse:
 * compressed sparse rows (CSR), for wide data with few non-zeros a row (text, web, hashed
 * features): rowptr holds n + 1 offsets (uint64_t, rowptr[0] = 0, rowptr[n] = nnz), row i's
 * non-zeros are col[rowptr[i] .. rowptr[i + 1]) (uint32_t column indices, 0-based, strictly
 * increasing within a row, each < d, so d < 2^32) with their values val[...] (float, finite).
 * A dense row costs 4 bytes a feature, a sparse one 8 bytes a non-zero (and 8 a row). Labels,
 * classes and everything else are the same for both layouts. PT_LAYOUT_AUTO is for reading
 * only (pt_read_options.layout): the reader chooses, by pt_layout_choose. */
typedef enum pt_layout {
    PT_LAYOUT_DENSE = 0,
    PT_LAYOUT_SPARSE = 1, /* CSR */
    PT_LAYOUT_AUTO = 2
} pt_layout;

PT_API const char *pt_layout_name(pt_layout l); /* "dense", "sparse", "auto" */
PT_API pt_status pt_layout_parse(const char *name, pt_layout *out);
/* The layout PT_LAYOUT_AUTO gives n rows of d features holding nnz non-zeros under a memory
 * budget of mem_budget_bytes (0: half of RAM): sparse when the density nnz / (n d) is below
 * 1/4 (the CSR arrays are then at most half the dense matrix, and an epoch reads that much
 * less), dense otherwise; but when the chosen layout would not fit the budget and the other
 * would, the other. d = 0 or d >= 2^32 is dense. The readers take nnz from what they read
 * first: a LIBSVM file's INDEX:VALUE entries (explicit zeros included), a CSV file's non-zero
 * values, a .ptd file's header (where auto keeps the layout the file was written in, unless
 * only the other fits). */
PT_API pt_layout pt_layout_choose(size_t n, size_t d, size_t nnz, size_t mem_budget_bytes);

typedef enum pt_format {
    PT_FORMAT_AUTO = 0, /* by extension: .ptd binary, .csv CSV, anything else LIBSVM */
    PT_FORMAT_LIBSVM = 1,
    PT_FORMAT_CSV = 2,
    PT_FORMAT_PTD = 3
} pt_format;

PT_API const char *pt_format_name(pt_format f);
PT_API pt_status pt_format_parse(const char *name, pt_format *out);
/* The format PT_FORMAT_AUTO resolves to for this path. */
PT_API pt_format pt_format_from_path(const char *path);

/* CSV as read: one row a line, fields split at csv_delimiter and trimmed of blanks, the label
 * in column csv_label_column, every other field a feature value (numbers only; labels may be
 * words). With csv_header -1 the first line is a header when it holds no number (in the
 * label's column or any other), at least one word, and the next line has numbers: "y,a,b"
 * above "1,0.5,2" is a header (empty names too: ",a,b"), anything else is data, so a malformed
 * first row ("1,2x,3", a NUL byte) is refused with its line and column, not dropped as a
 * header, and a first line of empty fields is data. An empty field is a missing value, and
 * missing values are refused with the file, line and column (as NaN and Inf are): ptron does not
 * impute, so fill them in first (0 where a feature is absent, as a LIBSVM file means it).
 * With the default delimiter, a first line without a comma that holds ';', a tab, '|' or a
 * space is refused with the separator found (such a file would otherwise read as one column
 * of text labels and no features): set csv_delimiter to read it. When the label column has
 * more than 100 distinct values and more distinct values than half the rows, the reader logs
 * a warning (PT_LOG_WARN) naming the column: a classification problem has few classes, so the
 * label is probably in another column (numpy's habit puts it last). */
typedef struct pt_read_options {
    size_t struct_size;      /* sizeof(pt_read_options), set by pt_read_options_init */
    pt_format format;        /* PT_FORMAT_AUTO by default */
    size_t max_features;     /* LIBSVM: an index above this is an error (default 10,000,000) */
    size_t mem_budget_bytes; /* refuse a dense load larger than this (default: half of RAM) */
    int csv_header;          /* -1 detect (default), 0 no header, 1 first line is a header */
    int csv_label_column;    /* 0-based column of the label (default 0), or
                              * PT_CSV_LABEL_LAST (-1): the last column, numpy's habit */
    int threads;             /* 0: all cores (default) */
    char csv_delimiter;      /* CSV field separator (default ',', and 0 means ','): ';',
                              * '\t', '|', ' ' or another ASCII byte that cannot be part of
                              * a number (no letter, digit, '.', '+', '-', '"' or line end) */
    pt_layout layout;        /* the layout of the dataset read: PT_LAYOUT_AUTO (default, by
                              * pt_layout_choose), PT_LAYOUT_DENSE or PT_LAYOUT_SPARSE. The
                              * LIBSVM reader chooses before it allocates and fills either
                              * layout in place; CSV is parsed dense and then converted; a .ptd
                              * file is mapped in its own layout and converted (a copy) only to
                              * the other. Either layout must fit mem_budget_bytes. */
    const char *csv_label_name; /* NULL (default), or the label column's name in the header
                                 * line: the first line is then the header, and a name it
                                 * lacks is an error listing the names it has (this wins
                                 * over csv_label_column) */
    /* Read only share shard_index of shard_count (default 0 of 0: the whole file): the rows
     * [i n / P, (i + 1) n / P) of a .ptd file (only those pages touched; the matrix checksum,
     * a hash of the whole section, is then not verified), or the lines that start in the
     * bytes [i L / P, (i + 1) L / P) of a LIBSVM or CSV file of L bytes (not gzip, not
     * standard input). d and the class table are the share's own: pt_dataset_read_shard
     * agrees them across the ranks of a distributed run. */
    size_t shard_index, shard_count;
} pt_read_options;

/* csv_label_column: the label is the last column. */
#define PT_CSV_LABEL_LAST (-1)

PT_API void pt_read_options_init(pt_read_options *o);

/* Read a dataset file (o NULL: the defaults) into the layout o->layout asks for: LIBSVM
 * (explicit zeros are not stored in the sparse layout), CSV, or .ptd (mmap'd, checksums
 * verified). Refuses NaN/Inf values. LIBSVM and CSV may be gzip-compressed: a file that
 * starts with gzip's magic bytes is read through zlib (messages give the line of the
 * decompressed text), and PT_FORMAT_AUTO looks at the extension under a ".gz" (data.csv.gz is
 * CSV). The path "-" is standard input (LIBSVM or CSV, gzip or not; messages call it
 * "standard input"); a .ptd dataset cannot come from there (PT_ERR_INVALID). A gzip file,
 * standard input and a device or pipe are read whole into memory first, the text held within
 * mem_budget_bytes: one that outgrows it stops there (PT_ERR_LIMIT, naming the budget and the
 * way out: a file, read in place), so a gzip bomb or /dev/zero costs at most the budget. */
PT_API pt_status pt_dataset_read(const char *path, const pt_read_options *o, pt_dataset **out);

/* Write a dataset, in either layout, in format f (PT_FORMAT_AUTO: by the path's extension).
 * A .ptd file keeps the dataset's layout; LIBSVM writes the non-zeros of each row; CSV writes
 * every feature of every row, so a sparse dataset whose dense form exceeds half of RAM is
 * refused (PT_ERR_LIMIT; the CSV could not be read back). The .ptd and all other writers go
 * through a temporary file, fsync and
 * rename, so an existing file is replaced whole or not at all (keeping its permissions). What
 * path is stays so: a symlink is followed and its final target replaced; a device or FIFO is
 * written through (no atomicity there: a write error such as ENOSPC is still reported); a
 * directory or socket is refused. The same holds for every file ptron writes; each write has
 * a temporary of its own, so threads may write one path at once (the last rename wins, and a
 * reader sees one whole file or another). The path "-"
 * is standard output (flushed, not closed; a .ptd dataset is refused there). Writers do not
 * compress: a path ending in ".gz" is refused. */
PT_API pt_status pt_dataset_write(const pt_dataset *ds, const char *path, pt_format f);

/* Convert the dataset file in (read as pt_dataset_read reads it, with o) to the .ptd file out,
 * written as pt_dataset_write writes it. A LIBSVM or CSV file whose dataset exceeds
 * o->mem_budget_bytes is converted in bounded memory: after the counting pass its rows are
 * parsed a window at a time straight into the file (two more passes over the text; a CSV
 * file's mapped text is released behind them), so only the labels (about 24 bytes a row) and
 * the windows are held; the file is the one an in-memory convert writes, byte for byte.
 * Standard input and gzip text are read whole (refused over the budget), and .ptd input is
 * converted in memory. */
PT_API pt_status pt_dataset_convert_file(const char *in, const pt_read_options *o,
                                         const char *out);

/* An empty n x d dataset (all zeros, every label 0) to be filled with pt_dataset_row and
 * pt_dataset_set_labels. NULL on allocation failure (pt_last_error says how much). */
PT_API pt_dataset *pt_dataset_create(size_t n, size_t d);
PT_API void pt_dataset_free(pt_dataset *ds);

/* A dataset over the caller's matrix, without a copy: n rows of stride floats at X, X 64-byte
 * aligned, stride d rounded up to a multiple of PT_ALIGN_FLOATS (the layout of every dataset;
 * at least PT_ALIGN_FLOATS); each row holds its d features and then zeros (the padding, which
 * the SIMD loops read). The library never writes X
 * (pt_dataset_row returns NULL for it), and X must stay valid and unchanged until
 * pt_dataset_free. One pass over X counts the non-zeros and refuses (PT_ERR_INVALID, naming
 * row and column) a NaN or infinity among the features or a non-zero padding float. Every row
 * starts in class 0: set the labels with pt_dataset_set_labels or pt_dataset_set_classes. */
PT_API pt_status pt_dataset_wrap(const float *X, size_t n, size_t d, size_t stride,
                                 pt_dataset **out);

PT_API size_t pt_dataset_n(const pt_dataset *ds);
PT_API size_t pt_dataset_d(const pt_dataset *ds);
PT_API size_t pt_dataset_stride(const pt_dataset *ds); /* floats between rows */
/* Row i: stride floats, 64-byte aligned, zeros past d. Writable only for datasets made by
 * pt_dataset_create (a .ptd file is mapped read-only). */
PT_API float *pt_dataset_row(pt_dataset *ds, size_t i);
PT_API const float *pt_dataset_row_const(const pt_dataset *ds, size_t i);
/* The whole matrix: n rows of stride floats, one after another (row i at i * stride). */
PT_API const float *pt_dataset_matrix(const pt_dataset *ds);
/* Set every row's label from raw values; builds the sorted class table. */
PT_API pt_status pt_dataset_set_labels(pt_dataset *ds, const double *labels);
/* Set every row's class from a class table the caller gives: nclass >= 1 classes named either
 * by label values (values: ascending, distinct, finite) or by text labels (names: distinct, in
 * strcmp order; the class values are then 0..nclass-1), exactly one of the two not NULL, and
 * cls[i] in 0..nclass-1 for each row. Unlike pt_dataset_set_labels a class may have no row, so
 * a chunk of a larger set keeps the whole set's classes (and, for two, their -1/+1 sides). */
PT_API pt_status pt_dataset_set_classes(pt_dataset *ds, size_t nclass, const double *values,
                                        const char *const *names, const int32_t *cls);
/* The label value of row i (from the class table). */
PT_API double pt_dataset_label(const pt_dataset *ds, size_t i);
/* Class index of row i, in 0..nclass-1. */
PT_API int32_t pt_dataset_class(const pt_dataset *ds, size_t i);
/* The class index of every row (n values). */
PT_API const int32_t *pt_dataset_classes(const pt_dataset *ds);
PT_API size_t pt_dataset_nclass(const pt_dataset *ds);
PT_API double pt_dataset_class_value(const pt_dataset *ds, size_t k);
/* Text labels (a CSV whose label column holds words): the name of class k, in strcmp order;
 * the class values are then 0..nclass-1. NULL when the labels are numbers. */
PT_API const char *pt_dataset_class_name(const pt_dataset *ds, size_t k);
/* Binary labels as floats +1/-1 (class 1 is +1); NULL unless there are exactly 2 classes. */
PT_API const float *pt_dataset_y(const pt_dataset *ds);

/* A copy of rows [start, start + count) with the same class table (so label values keep their
 * +1/-1 meaning even if a class is absent from the slice) and the same generator truth. */
PT_API pt_status pt_dataset_slice(const pt_dataset *ds, size_t start, size_t count,
                                  pt_dataset **out);

/* A copy of the rows rows[0..count) (any order, repeats allowed), in ds's layout, with the same
 * class table (a class may have no row in the copy) and the same generator truth. */
PT_API pt_status pt_dataset_take(const pt_dataset *ds, const size_t *rows, size_t count,
                                 pt_dataset **out);

/* ----------------------------------------------------------------- sparse layout */

PT_API pt_layout pt_dataset_layout(const pt_dataset *ds);
/* Non-zero feature values (explicit zeros of a sparse dataset not counted). */
PT_API size_t pt_dataset_nnz(const pt_dataset *ds);
/* The CSR arrays of a sparse dataset (read-only views, valid until pt_dataset_free);
 * PT_ERR_INVALID on a dense one. pt_dataset_row and pt_dataset_matrix return NULL on a sparse
 * dataset and say so in pt_last_error. */
PT_API pt_status pt_dataset_csr(const pt_dataset *ds, const uint64_t **rowptr,
                                const uint32_t **col, const float **val);
/* A sparse n x d dataset from the caller's CSR arrays (see pt_layout), copied: one pass checks
 * them and refuses (PT_ERR_INVALID, naming row and entry) an offset out of order, a column not
 * increasing or >= d, a non-finite value. Explicit zeros are kept. Every row starts in class 0. */
PT_API pt_status pt_dataset_from_csr(size_t n, size_t d, const uint64_t *rowptr,
                                     const uint32_t *col, const float *val, pt_dataset **out);
/* The same without a copy: the arrays must stay valid and unchanged until pt_dataset_free; the
 * library never writes them. Same checks, one pass. */
PT_API pt_status pt_dataset_wrap_csr(size_t n, size_t d, const uint64_t *rowptr,
                                     const uint32_t *col, const float *val, pt_dataset **out);
/* A copy of ds in the other layout (or the same), with the same labels, classes and truth.
 * A dense copy larger than mem_budget_bytes (0: half of RAM) is refused with the bytes it needs
 * (PT_ERR_LIMIT). The sparse copy drops explicit zeros. */
PT_API pt_status pt_dataset_convert(const pt_dataset *ds, pt_layout to, size_t mem_budget_bytes,
                                    pt_dataset **out);

/* ---------------------------------------------------------------- compact storage */

/* The element type of a dense matrix. Arithmetic is float32 whatever the storage: the kernels
 * widen compact rows as they load them.
 *  - PT_DTYPE_F32: 4 bytes a feature (the default; every function reads it).
 *  - PT_DTYPE_BF16: 2 bytes a feature, bfloat16 (float32's sign, exponent and top 7 mantissa
 *    bits); a float32 is rounded to the nearest bf16, ties to even (relative error <= 2^-8).
 *  - PT_DTYPE_U8: 1 byte a feature, q in 0..255, standing for x = q / m_j with a divisor m_j
 *    per feature (the kernels compute q / m_j from 1 / m_j split in two floats, rh + rl, as
 *    fma(q, rh, q rl), on every ISA alike: the correctly rounded quotient for integer divisors
 *    below 2^14).
 *    Values must be >= 0. pt_dataset_to_dtype chooses one divisor for the whole matrix when it
 *    represents every value exactly (pixels / 255: m = 255; tried: 255 / max, 1 / the smallest
 *    positive value rounded, 255), else per feature m_j = 255 / max_i x_ij (1 for an all-zero
 *    feature) and q = x m_j rounded to nearest, ties to even (error <= max_i x_ij / 510).
 * Compact storage is for the dense layout only. A compact dataset's rows are not float32:
 * pt_dataset_row, pt_dataset_row_const and pt_dataset_matrix return NULL for it (saying so in
 * pt_last_error); pt_dataset_to_dtype(ds, PT_DTYPE_F32, ..) gives a float32 copy. Every path
 * but the kernel path reads compact rows directly: the online path (every variant, one-vs-rest,
 * the multiclass perceptron, over an expansion), the batch path (fused and gemv, full batch and
 * mini-batches, one-vs-rest, in memory and streamed, on the ranks of a distributed run), and
 * so do scoring and predictions (every kind of model), expansions (pt_expand), scaling, the
 * bounds and the text writers: each row, or block of rows, is widened where it is read, so
 * they give what the float32 copy gives, bit for bit, without making it (a scaling makes its
 * scaled float32 copy, the only one). The kernel path, whose Gram and kernel rows are compute
 * bound and read the rows many times over, trains on a float32 copy made within
 * pt_train_params.mem_budget_bytes (PT_ERR_LIMIT above it, naming --mem-mb). */
typedef enum pt_dtype {
    PT_DTYPE_F32 = 0,
    PT_DTYPE_BF16 = 1,
    PT_DTYPE_U8 = 2
} pt_dtype;

PT_API const char *pt_dtype_name(pt_dtype t); /* "f32", "bf16", "u8" */
/* "f32" (or "float32"), "bf16", "u8"; anything else is PT_ERR_INVALID naming the choices. */
PT_API pt_status pt_dtype_parse(const char *name, pt_dtype *out);
PT_API pt_dtype pt_dataset_dtype(const pt_dataset *ds);
/* Bytes of one element of type t (4, 2, 1). */
PT_API size_t pt_dtype_size(pt_dtype t);
/* A copy of a dense dataset with its matrix stored as `to` (see pt_dtype; from any type to any
 * type; the labels, classes and truth copied). The copy must fit mem_budget_bytes (0: half of
 * RAM), else PT_ERR_LIMIT with the bytes it needs. PT_DTYPE_U8 refuses a negative value
 * (PT_ERR_INVALID naming row and feature); PT_DTYPE_BF16 a value beyond bf16's range. A
 * sparse dataset is refused (compact storage is dense only). */
PT_API pt_status pt_dataset_to_dtype(const pt_dataset *ds, pt_dtype to, size_t mem_budget_bytes,
                                     pt_dataset **out);
/* The u8 divisors m_j (stride floats; NULL for other types), and whether one divisor serves
 * every feature (*single = 1: m_j is the same for every j). */
PT_API const float *pt_dataset_u8_divisors(const pt_dataset *ds, int *single);

/* What `ptron info` prints. */
typedef struct pt_dataset_info {
    size_t n, d, stride, nclass;
    size_t nnz;          /* non-zero feature values */
    double density;      /* nnz / (n d) */
    double R;            /* max_i |x_i| (features only, no bias) */
    size_t bytes;        /* bytes of the matrix: padded dense rows, or the CSR arrays */
    pt_layout layout;
    int has_truth;       /* 1 if a generator stored w*, R and gamma */
    double truth_R, truth_gamma;
    char kind[16];       /* generator kind, "" if not generated */
    pt_dtype dtype;      /* the matrix's element type (bytes counts its elements) */
    int u8_single;       /* u8: 1 if one divisor serves every feature */
    float u8_divisor;    /* u8 with one divisor: that divisor (255 for pixels / 255) */
    int streamed;        /* 1: the matrix is streamed from its file (pt_dataset_streamed) */
    size_t stream_rows;  /* streamed: rows of its window, else 0 */
    const char *stream_pages; /* streamed: pt_dataset_stream_pages, else NULL */
} pt_dataset_info;

PT_API void pt_dataset_get_info(const pt_dataset *ds, pt_dataset_info *info);

/* Whether ds is streamed, and its window's rows (0: the matrix is in memory). A .ptd file
 * whose matrix (in its own layout) exceeds pt_read_options.mem_budget_bytes is not refused but
 * streamed: mapped without being read in, and walked in windows of rows an eighth of the budget
 * each (its pages read in the mapping and dropped as it ends, or a dense window read into a
 * buffer while a reader thread reads the next: pt_dataset_stream_pages), so the resident matrix
 * stays within the budget; every pass reads the file's bytes once (from the page cache when it
 * holds them). The reader verifies the checksums in a first such pass. The online and
 * batch paths and scoring walk a streamed dataset window by window; the online paths take the
 * windows in the chunked order of pt_train_params.shuffle_chunk when shuffled (its rows: the
 * window's unless given). The kernel path needs every row at once (its Gram) and refuses one.
 * Code that reads the rows in another order still works, with the file's pages resident (and
 * reclaimable) as it reads them. */
PT_API size_t pt_dataset_streamed(const pt_dataset *ds);
/* PT_OK while the file a dataset is mapped from (a .ptd file, read in place) is whole, else
 * PT_ERR_IO "FILE: file shrank while being read" once it shrank under the dataset (another
 * process truncated or rewrote it). Reading the part that went would end the process with
 * SIGBUS; instead the library marks the dataset and the part reads as zeros from then on, so
 * what was computed from its rows since is not of the data. The readers, pt_train, the
 * writers, scoring (pt_model_evaluate, pt_model_predict, pt_model_scores and the files they
 * write) and cross-validation check it themselves and fail so; a caller of other functions
 * (scaling, expansion, statistics) checks it after them. While a dataset or CSV text is
 * mapped the library keeps a SIGBUS handler installed (chaining the one before for any other
 * fault; put back when the last mapping goes). */
PT_API pt_status pt_dataset_intact(const pt_dataset *ds);
/* How a streamed dataset's window pages arrive, the cheapest of three ways timed on 4 MiB of
 * its file when the first window is read (the read verifies the checksums in a streamed pass,
 * so after pt_dataset_read): "faulted" (read in the mapping, released behind each window),
 * "copied" (read into a buffer of the walker's, dense float32 only) or "populated" (advice
 * on the mapping); NULL when ds is not streamed. */
PT_API const char *pt_dataset_stream_pages(const pt_dataset *ds);

/* Reads every byte of ds's matrix (the padded dense rows, or the CSR arrays) passes times on
 * threads threads (0: all), each thread its own share, with the SIMD loads the paths use; the
 * result is a sum of what was read, so that the reads cannot be optimised away. Timed, it is
 * the memory bus's rate for this matrix: the streaming-read baseline of `ptron bench`. */
PT_API double pt_dataset_read_pass(const pt_dataset *ds, int threads, int passes);

/* Generator truth: the unit separator w* (d floats, no bias), R and margin gamma as
 * measured on the stored float data. NULL if the dataset was not generated. */
PT_API const double *pt_dataset_truth(const pt_dataset *ds, double *R, double *gamma);

/* ---------------------------------------------------------------------- generators */

typedef enum pt_gen_kind {
    PT_GEN_SEPARABLE = 0, /* uniform in [-1,1]^d, labelled by a random unit w*, margin >= G */
    PT_GEN_NOISY = 1,     /* separable, then a fraction P of labels flipped */
    PT_GEN_XOR = 2,       /* sign(x1 x2) on [-1,1]^2 (+ d-2 noise coordinates) */
    PT_GEN_CIRCLE = 3,    /* inside/outside a sphere of median radius, gap G */
    PT_GEN_BLOBS = 4,     /* k Gaussian blobs, labels 0..k-1 */
    PT_GEN_SPARSE = 5     /* text-like, in the sparse layout: d features of Zipf popularity
                           * (exponent 1, scattered over the columns), about nnz distinct ones a
                           * row (m uniform in [nnz/2, 3 nnz/2]), tf-idf-like positive values,
                           * rows of unit length; labels sign(w*.x) of a planted unit w* on up
                           * to 3000 features, rows with |w*.x| < G drawn again (margin G: the
                           * rows being unit vectors with a few non-zeros, useful values are
                           * around 0.001; 0 only redraws rows w* does not see), then a
                           * fraction P flipped. Memory: the CSR arrays and O(d), never n x d */
} pt_gen_kind;

typedef struct pt_gen_params {
    size_t struct_size; /* sizeof(pt_gen_params), set by pt_gen_params_init */
    pt_gen_kind kind;
    size_t n, d;
    double margin;  /* G: separable/noisy/sparse margin; circle gap (default 0.1) */
    double noise;   /* P: fraction of flipped labels for noisy and sparse (default 0.1) */
    uint64_t seed;  /* default 1 */
    size_t classes; /* blobs (default 3) */
    size_t nnz;     /* sparse: non-zeros a row on average (default 50) */
} pt_gen_params;

PT_API void pt_gen_params_init(pt_gen_params *p);
PT_API pt_status pt_gen_kind_parse(const char *name, pt_gen_kind *out);
PT_API const char *pt_gen_kind_name(pt_gen_kind k);
/* Deterministic: the same parameters give bit-identical data on every machine. */
PT_API pt_status pt_generate(const pt_gen_params *p, pt_dataset **out);

/* ---------------------------------------------------------------- feature expansion */

typedef enum pt_expand_kind {
    PT_EXPAND_NONE = 0,
    PT_EXPAND_POLY = 1, /* all monomials of degree <= D, multinomial sqrt coefficients:
                           phi(x).phi(z) = (coef0 + x.z)^D exactly (up to rounding) */
    PT_EXPAND_RFF = 2   /* random Fourier features for exp(-gamma |x - z|^2):
                           z(x) = sqrt(2/D) cos(W x + b), W ~ N(0, 2 gamma I), b ~ U[0, 2 pi) */
} pt_expand_kind;

typedef struct pt_expand_params {
    size_t struct_size;   /* sizeof(pt_expand_params), set by pt_expand_params_init */
    pt_expand_kind kind;
    int degree;           /* POLY: D (default 2) */
    float coef0;          /* POLY: C (default 1) */
    size_t rff_dim;       /* RFF: number of features (default 1024) */
    float gamma;          /* RFF: kernel width (default 1) */
    uint64_t seed;        /* RFF: seed of W and b (default 1) */
    size_t max_features;  /* refuse an output dimension above this (default 10,000,000) */
    size_t mem_budget_bytes; /* refuse a materialised expansion above this (default half RAM) */
    int hash_bits;        /* POLY: 0 (default) keeps the C(d + D, D) monomials; B in 1..31
                           * hashes their index space to 2^B columns with a sign hash (Vowpal
                           * Wabbit's feature hashing, from seed): column h(i) mod 2^B gets
                           * s(i) phi_i(x), colliding monomials summed; degree 1 hashes the
                           * original features. Only each row's non-zeros' monomials are
                           * computed, so wide sparse data takes degree 2-3 in 2^B weights */
} pt_expand_params;

/* Defaults: kind POLY, degree 2, coef0 1, rff_dim 1024, gamma 1, seed 1. */
PT_API void pt_expand_params_init(pt_expand_params *p);
/* Output dimension for input dimension d: C(d + D, D) for POLY, rff_dim for RFF; SIZE_MAX on
 * overflow. */
PT_API size_t pt_expand_dim(const pt_expand_params *p, size_t d);
/* Materialise the expansion of every row (refused with the dimension and bytes needed when over
 * max_features or the memory budget). Labels and class table are kept. Sparse rows: POLY gives
 * sparse rows holding only the monomials of each row's non-zeros (the dense expansion's
 * non-zeros, bit for bit; columns must fit 32 bits), RFF dense rows. */
PT_API pt_status pt_expand(const pt_dataset *ds, const pt_expand_params *p, pt_dataset **out);
/* Expansion parameters by name, as pt_train_params_set below: "kind" (none, poly, rff),
 * "degree", "coef0", "rff_dim", "gamma", "seed", "max_features", "mem_budget_bytes";
 * pt_expand_params_create gives a struct on the heap as pt_expand_params_init leaves it (NULL on
 * allocation failure). */
PT_API pt_expand_params *pt_expand_params_create(void);
PT_API void pt_expand_params_free(pt_expand_params *p);
PT_API const char *pt_expand_params_key(size_t i);
PT_API pt_status pt_expand_params_set(pt_expand_params *p, const char *name, const char *value);
PT_API pt_status pt_expand_params_get(const pt_expand_params *p, const char *name, char *buf,
                                      size_t cap);

/* ------------------------------------------------------------------------- scaling */

/* Feature scaling, as svm-scale: per feature j, x'_j = (x_j - offset_j) factor_j, fitted on a
 * dataset: PT_SCALE_RANGE to [-1, 1] (offset (max + min) / 2, factor 2 / (max - min)),
 * PT_SCALE_RANGE01 to [0, 1] (offset min, factor 1 / (max - min)), PT_SCALE_STANDARDIZE to mean
 * 0 and standard deviation 1 (over n). A constant feature gets factor 0. */
typedef enum pt_scale_kind {
    PT_SCALE_NONE = 0,
    PT_SCALE_RANGE = 1,      /* "-1,1" */
    PT_SCALE_RANGE01 = 2,    /* "0,1" */
    PT_SCALE_STANDARDIZE = 3 /* "standardize" */
} pt_scale_kind;

PT_API const char *pt_scale_kind_name(pt_scale_kind k); /* "none", "-1,1", "0,1", "standardize" */
PT_API pt_status pt_scale_kind_parse(const char *name, pt_scale_kind *out);

typedef struct pt_scaling pt_scaling;

/* Fit a scaling of every feature of ds (either layout; kind not PT_SCALE_NONE). */
PT_API pt_status pt_scaling_fit(const pt_dataset *ds, pt_scale_kind kind, pt_scaling **out);
PT_API void pt_scaling_free(pt_scaling *s);
/* A dense copy of ds with its features scaled (a sparse ds is made dense first, refused with
 * PT_ERR_LIMIT over mem_budget_bytes, 0: half of RAM): the scaling's d features scaled (those
 * ds lacks are 0 before scaling), features past the scaling's d left as they are; labels and
 * classes kept. */
PT_API pt_status pt_scaling_apply(const pt_scaling *s, const pt_dataset *ds,
                                  size_t mem_budget_bytes, pt_dataset **out);
/* The parameters as text (ptron scale --save-params): "ptron-scale 1", "kind K", "d D", then
 * one line a feature "OFFSET FACTOR" (%.17g, C locale: offsets and factors are doubles, and
 * each value is computed in double, so a range's ends map to -1, 0 and 1 exactly); the file
 * is replaced whole or not at all. Loading checks every line and names the file and line of
 * what it refuses. */
PT_API pt_status pt_scaling_save(const pt_scaling *s, const char *path);
/* Its kind and d, and its d offsets and factors (read-only, valid until pt_scaling_free). */
PT_API pt_scale_kind pt_scaling_get(const pt_scaling *s, size_t *d, const double **offset,
                                    const double **factor);
PT_API pt_status pt_scaling_load(const char *path, pt_scaling **out);

/* ------------------------------------------------------------------------ training */

typedef enum pt_path { PT_PATH_ONLINE = 0, PT_PATH_BATCH = 1, PT_PATH_KERNEL = 2 } pt_path;
typedef enum pt_loss { PT_LOSS_PERCEPTRON = 0, PT_LOSS_HINGE = 1, PT_LOSS_SQUARED = 2 } pt_loss;
typedef enum pt_schedule {
    PT_SCHEDULE_CONSTANT = 0,
    PT_SCHEDULE_INVSQRT = 1,
    PT_SCHEDULE_PEGASOS = 2
} pt_schedule;
typedef enum pt_kernel {
    PT_KERNEL_LINEAR = 0,
    PT_KERNEL_POLY = 1,
    PT_KERNEL_RBF = 2,
    PT_KERNEL_EXPR = 3 /* an expression: pt_train_params.kernel_expr */
} pt_kernel;
/* pt_train_params.gamma rules (see there): scikit-learn's 'scale' and 'auto' (values no
 * kernel width takes, so a negative gamma such as -1 is still refused). */
#define PT_GAMMA_SCALE (-1e30f)
#define PT_GAMMA_AUTO (-2e30f)
typedef enum pt_variant {
    PT_VARIANT_CLASSIC = 0,  /* last iterate */
    PT_VARIANT_AVERAGED = 1, /* average of all iterates (lazy sum) */
    PT_VARIANT_VOTED = 2     /* Freund and Schapire's voted perceptron */
} pt_variant;

typedef enum pt_batch_impl {
    PT_BATCH_AUTO = 0,  /* the faster of the two (fused) */
    PT_BATCH_GEMV = 1,  /* two OpenBLAS sgemv calls per chunk of rows (fixed chunks, each on
                           one thread, summed in order: the same model at any thread count) */
    PT_BATCH_FUSED = 2  /* one streaming pass over X: margins and X^T g together */
} pt_batch_impl;        /* sparse (CSR) data has one pass whatever this says: fused, by the
                           sparse-row kernels (gather for X w, scatter for X^T g). Compact rows
                           (pt_dtype): fused reads each row as stored (the compact dot and
                           axpy widen it in registers where the ISA can), gemv widens each
                           chunk of rows into a buffer of its thread; the same arithmetic as
                           float32 */
typedef enum pt_gram_storage {
    PT_GRAM_AUTO = 0, /* choose by n, d and --cache-mb */
    PT_GRAM_FULL = 1, /* n x n float32 Gram computed once (tiled, OpenMP) */
    PT_GRAM_ROWS = 2  /* kernel rows computed on demand behind an LRU row cache */
} pt_gram_storage;  /* sparse (CSR) data: kernel values from sparse dots; FULL and AUTO keep the
                       Gram when it fits, its rows computed at the first mistake that needs
                       them; ROWS (or a Gram over --cache-mb) computes a row at every mistake.
                       Its models keep their support vectors sparse (model format version 3) */

typedef enum pt_online_pass {
    PT_PASS_AUTO = 0,       /* blocked when there are 2+ threads and the last epoch's mistakes
                               were rare, else sequential */
    PT_PASS_SEQUENTIAL = 1, /* one sample at a time on one core */
    PT_PASS_BLOCKED = 2     /* scores of a block of samples computed in parallel, then walked in
                               order; recomputed after a mistake: the same model as sequential */
} pt_online_pass;

typedef enum pt_multiclass {
    PT_MULTI_OVR = 0,   /* one-vs-rest: K binary problems, trained in parallel (any path) */
    PT_MULTI_DIRECT = 1 /* the multiclass perceptron: one weight vector per class; on a mistake
                           add eta x to the true class, subtract it from the predicted one
                           (online path) */
} pt_multiclass;

typedef struct pt_model pt_model;

/* Epoch hook: called after each epoch with the model as it stands (for the averaged variant,
 * the current average), so a caller can evaluate held-out data or write a checkpoint: on every
 * path the model records where the run stands (pt_model_resumable), so saved, it continues
 * the run with pt_train_params.resume. One-vs-rest calls it once every class has trained the
 * epoch (the classes then advance an epoch at a time), with the mistakes summed over classes.
 * Return non-zero to stop training: the run ends with PT_OK and the model it has then, a final
 * one (to keep the snapshot passed, copy it with pt_model_clone; pt_model_clear_run makes the
 * copy final). */
typedef int (*pt_epoch_fn)(const pt_model *m, int epoch, size_t mistakes, void *user);

/* Progress callback: called once per epoch (one-vs-rest: once every class has trained it);
 * return non-zero to stop training, as an interrupt does (PT_ERR_INTERRUPTED, a resumable
 * model). */
typedef int (*pt_progress_fn)(int epoch, size_t mistakes, double seconds, void *user);

/* A stop token: a way to stop the pt_train calls it is passed to (pt_train_params.stop) from
 * any thread or a signal handler, without touching any other call in the process. A request
 * stays until pt_stop_reset, so one that comes before the call starts stops it at once. */
typedef struct pt_stop pt_stop;

/* A new token, not requested (NULL on allocation failure). */
PT_API pt_stop *pt_stop_create(void);
PT_API void pt_stop_free(pt_stop *s);
/* Ask every pt_train call given this token to stop at its next sample (or block, or kernel
 * row) boundary: it returns PT_ERR_INTERRUPTED with the model as it stands.
 * Async-signal-safe (one lock-free atomic store). */
PT_API void pt_stop_request(pt_stop *s);
/* 1 once pt_stop_request was called (and not reset since), else 0. */
PT_API int pt_stop_is_requested(const pt_stop *s);
/* Clear a request, to use the token again. */
PT_API void pt_stop_reset(pt_stop *s);

/* How a distributed online run mixes its ranks' weights (pt_train_params.mix). */
typedef enum pt_mix { PT_MIX_UNIFORM = 0, PT_MIX_MISTAKES = 1 } pt_mix;
PT_API const char *pt_mix_name(pt_mix m); /* "uniform", "mistakes" */
PT_API pt_status pt_mix_parse(const char *name, pt_mix *out);

/* The online learners' parameters (pt_train_params.online): the sample-at-a-time paths
 * (online, its one-vs-rest lockstep, the multiclass perceptron). */
typedef struct pt_online_params {
    pt_online_pass pass; /* online: sequential, blocked (both cores) or auto (default) */
    /* shuffle in chunks of this many consecutive rows (0: the whole order, default): each
     * epoch the chunks come in an order shuffled from seed, and the rows of each chunk in an
     * order shuffled from seed, chunk after chunk (see pt_dataset_streamed). A streamed dataset
     * is always shuffled so, by its window's rows when this is 0; the same value gives an
     * in-memory run the same order, so both train the same model bit for bit. Online paths
     * (the batch path shuffles its blocks, which are chunks already). At most 2^32 - 1. */
    size_t shuffle_chunk;
    /* A distributed run's online path (a dataset read by pt_dataset_read_shard on more than
     * one rank): how the ranks' weights are mixed after each epoch of iterative parameter
     * mixing (McDonald, Hall and Mann 2010). PT_MIX_UNIFORM (default): their mean;
     * PT_MIX_MISTAKES: each rank's weighted by its share of the epoch's mistakes. */
    pt_mix mix;
    /* The voted variant (PT_VARIANT_VOTED) keeps at most this many vectors (per class for
     * one-vs-rest); 0: every vector (the default), one per update within mem_budget_bytes. Its
     * vote costs one dot per vector per row scored (see pt_model_score_cost), so an uncapped
     * run over many epochs of noisy data scores slowly. The rule keeps the current vector and,
     * of the closed ones, the K - 1 of largest survival counts: when a vector closes with the
     * store full, the one of smallest count is dropped (of equal counts, the one that closed
     * first; the new one itself when its count is the smallest), its count dropped with it.
     * The vote is a sum weighted by survival, so the vectors of small count are those it misses
     * least. Freund and Schapire (1999) weigh each vector by the samples it survived; removing
     * the coefficient of smallest size is the removal rule of the budgeted SGD of Wang, Crammer
     * and Vucetic (2012), here with the survival count as the coefficient (removing the oldest
     * instead, as the Forgetron of Dekel, Shalev-Shwartz and Singer (2008) does, kept less of
     * the full vote's accuracy on noisy data, and so did merging a dropped count into a
     * neighbour). K = 1 keeps the last iterate (the classic variant's predictions). A run
     * resumed or checkpointed keeps the same vectors as an uninterrupted one; a model file
     * keeps K (a line 'voted_max_vectors K'). Any other variant refuses a cap (PT_ERR_INVALID).
     * ptron train --voted-max-vectors K. */
    size_t voted_max_vectors;
} pt_online_params;

/* The batch path's parameters (pt_train_params.batch). */
typedef struct pt_batch_params {
    pt_loss loss;
    float lambda;
    /* 0: full batch. A distributed run (pt_dataset_read_shard on P > 1 ranks) takes each
     * mini-batch of about batch_size rows from every rank: block q of ceil(n_total /
     * batch_size) is each rank's q-th contiguous part of its share, cut as evenly, and the
     * step's gradient is summed over the ranks, so the model is one process's on the rows in
     * the order of those blocks up to the order of the float sums, and converges by epoch as
     * one process with batch_size does. (Local steps averaged every epoch were not kept:
     * their small local batches went faster on sparse sets but ended at a worse objective on
     * noisy dense data, and one process with those small batches beat them;
     * scripts/compare-mpi-minibatch measures both.) batch_size below P is refused. */
    size_t size;
    pt_schedule schedule;
    double tol;          /* stop when the relative change of the objective is below (0: off) */
    pt_batch_impl impl;
    int average_iterates; /* batch: return the average of the iterates */
} pt_batch_params;

/* The kernel (dual) path's parameters (pt_train_params.kernel). */
typedef struct pt_kernel_params {
    pt_kernel kind;
    int degree;          /* poly (default 2) */
    /* poly and rbf: a positive number, or a rule pt_train applies to the data (the default,
     * PT_GAMMA_SCALE, is scikit-learn's 'scale'): PT_GAMMA_SCALE 1 / (d Var(X)), Var over all
     * n d entries of the first d features (1 when the variance is 0); PT_GAMMA_AUTO 1 / d.
     * The model records the number used (pt_model_get_params); runs off the kernel path record
     * 1 for a rule. */
    float gamma;
    float coef0;         /* poly (default 1, so every lower degree is in the span); >= 0 */
    /* Gram / row cache budget in MiB (0: the memory budget). More than mem_budget_bytes is
     * refused (PT_ERR_LIMIT) rather than silently shrunk. */
    size_t cache_mb;
    pt_gram_storage gram_storage;
    /* At most this many support vectors (samples with alpha != 0) per binary problem (per
     * class for one-vs-rest); 0: no budget. The rule is the randomized budget perceptron of
     * Cavallanti, Cesa-Bianchi and Gentile (2007): a mistake on a new sample when the budget
     * is full first removes a support vector drawn uniformly at random (alpha_j = 0, and
     * f -= c_j K[j, :]); the draw depends only on seed and the sample visit, so a resumed run
     * removes the same ones. The classic variant only (the averaged one averages every vector
     * ever used: refused with a budget). A budget >= n removes nothing:
     * the unbudgeted run, bit for bit. The mistake bounds (pt_bounds_for_run) do not cover a
     * budget below n. */
    size_t budget;
    /* The kernel as an expression (kernel PT_KERNEL_EXPR), by the closure rules of kernels
     * (c K for c >= 0, K1 + K2, K1 K2, f(x) f(z) K):
     *   linear | poly(degree=D,gamma=G,coef0=C) | rbf(gamma=G) | geometric(degree=D,gamma=G)
     *   | a number c >= 0 | E + E | E * E | normalize(E) | (E)
     * with * before +; normalize(K) = K(x, z) / sqrt(K(x, x) K(z, z)); geometric is the
     * sum over k = 0..D of (G x.z)^k. Arguments may be left out: degree 2, gamma scale (poly,
     * rbf; geometric 1), coef0 1; gamma may be scale or auto (resolved from the data by
     * pt_train, which records the expression with the numbers used). Refused with the reason:
     * a negative coef0 or constant, subtraction or division, gamma <= 0, a degree outside
     * 1..32, more than 48 nodes. Evaluated in double from the float32 inner products. */
    char expr[256];
} pt_kernel_params;

/* Training parameters. The parameters that one learner alone reads are nested in its
 * sub-struct: online (pt_online_params), batch (pt_batch_params), kernel (pt_kernel_params),
 * beside expand (pt_expand_params); the rest, read by several, are at the top. A parameter's
 * name (its by-name key for pt_train_params_set/get and pt_train_params_key, its model-file
 * key, and the name messages give it, "pt_train_params.batch_size") stays its own and does
 * not spell the C path: batch_size is batch.size, batch_impl batch.impl, kernel kernel.kind,
 * kernel_expr kernel.expr, and every other nested field keeps its name in its sub-struct
 * (lambda is batch.lambda, gamma kernel.gamma, mix online.mix). The nesting changed the
 * layout (the library is 0.x): struct_size grew, so a caller compiled against the flat
 * struct of an older header is refused (PT_ERR_INVALID) until it is rebuilt against this
 * one, with its fields renamed as above. */
typedef struct pt_train_params {
    size_t struct_size;  /* sizeof(pt_train_params), set by pt_train_params_init */
    pt_path path;
    int epochs;          /* maximum epochs (default 10); training stops early at an epoch with no mistake */
    float eta;           /* learning rate (default 1) */
    float margin;        /* tau: update when y w.x <= tau (0 = Rosenblatt) */
    pt_variant variant;
    int shuffle;         /* reshuffle the order each epoch from seed */
    uint64_t seed;
    int bias;            /* 1: augment with a constant-1 coordinate (default) */
    pt_isa isa;          /* PT_ISA_AUTO by default */
    /* Threads of this call's parallel loops and OpenBLAS calls (0: OpenMP's count for the
     * calling thread, omp_get_max_threads()). The calling thread's OpenMP count and
     * OpenBLAS's count are set for the call and restored before pt_train returns, so what
     * the caller sees after the call is what it set before. Other threads' OpenMP counts are
     * never touched; OpenBLAS's count is one per process, so calls running at once in
     * several threads each restore the count they found. At most 4096. */
    int threads;
    /* voted vectors, Gram cache and the like (default: half of RAM; at least 1 MiB) */
    size_t mem_budget_bytes;
    /* more than two classes */
    pt_multiclass multiclass;
    /* callbacks */
    pt_progress_fn progress;
    void *progress_user;
    pt_epoch_fn epoch_hook;
    void *epoch_user;
    /* A stop token of the caller's (NULL: none); see pt_stop_create. */
    pt_stop *stop;
    /* Continue the run recorded in this model (an interrupted run's model, or an epoch
     * snapshot or a checkpoint saved from one: see pt_model_resumable), on any path, with the
     * parameters it was trained with (pt_model_get_params; epochs may grow, threads, isa, pass
     * and the memory budgets may change): the model equals the uninterrupted run's, bit for
     * bit. Data or parameters other than the run's are refused (PT_ERR_FORMAT: the data does not
     * fit the run; PT_ERR_INVALID: a parameter differs, or epochs is below the epochs done). The
     * report then lists the epochs trained after those taken over (see epochs_before). */
    const pt_model *resume;
    /* each learner's own parameters (see above) */
    pt_online_params online;
    pt_batch_params batch;
    pt_kernel_params kernel;
    /* feature expansion (kind PT_EXPAND_NONE by default): the online path streams it, row by
     * row into one buffer; the batch path materialises it within mem_budget_bytes. The model
     * remembers it, so scoring expands too. */
    pt_expand_params expand;
    /* Warm start (online and batch paths, binary and more classes; the kernel path refuses
     * both: its model is the dual coefficients of the samples it corrected, from alpha = 0).
     * Default: w = 0, the classic perceptron's start (docs/theory.md).
     *  - init: start from this model's weights and bias weights (the last iterate for voted
     *    models, the average for averaged ones). It must be a linear model (online or batch
     *    path) of the same features (the expanded dimension and the same expansion with
     *    `expand`), the same classes (values, or names for text labels) and the same bias
     *    setting; pt_train (and pt_train_check) refuse it otherwise with PT_ERR_INVALID. The
     *    caller keeps it alive during pt_train; the trained model does not keep it. Exact: from
     *    the classic model of epoch k, E - k more epochs without shuffle give the weights of the
     *    E-epoch run bit for bit (with shuffle, the orders start over from seed). The averaged
     *    variant's average, the voted variant's vectors, the batch path's step counter (the
     *    invsqrt and pegasos schedules) and its average of iterates start over.
     *  - init_random: start from random weights drawn from seed, each weight and bias weight
     *    uniform in [0, 1) as the perceptron notebook does (np.random.random_sample), class after
     *    class for more than two classes (a stream apart from shuffle's).
     * The bounds of pt_bounds_for_run start from w = 0 and do not cover a warm start. Neither
     * field is kept in model files. */
    const pt_model *init;
    int init_random;
    /* Class weights (NULL: every class weighs 1): class_weight_n weights, one a class of the
     * data in class index order (pt_dataset_class_value), each finite and > 0; pt_train_check
     * refuses another count. A row of class k counts class_weight[k] times as much: the online
     * path's update is scaled by it (w += eta c y x; the decision to update is the same), the
     * batch path's loss term and subgradient of the row are, and the kernel path's dual step
     * (its coefficient becomes eta c y alpha). One-vs-rest weighs each row by its own class in
     * every binary problem; the multiclass perceptron scales the update of a row of class k.
     * The caller keeps the array alive during pt_train; models do not keep it (a resumed run
     * is given it again). The online path then runs its sequential pass (the blocked pass and
     * the whole-chunk kernel assume one step size). pt_class_weights builds the array from
     * "balanced" or "LABEL:W,..." text. */
    const float *class_weight;
    size_t class_weight_n;
    /* Feature scaling (PT_SCALE_NONE by default): pt_train fits it on the training data (see
     * pt_scaling_fit), trains on the scaled rows, and the model keeps it (a version 3 model
     * file), so that scoring scales raw rows first: predict takes the data as it was given.
     * The epoch hook's models keep it too. */
    pt_scale_kind scale;
} pt_train_params;

/* Every field to its default (struct_size included): the only way to start a params struct. */
PT_API void pt_train_params_init(pt_train_params *p);
/* Check parameters without training: PT_OK or PT_ERR_INVALID with a message naming the field
 * ("pt_train_params.eta must be a positive number (got -1)"): every enum one of its values,
 * every flag (shuffle, bias, average_iterates, init_random) 0 or 1, every number in its range. */
PT_API pt_status pt_train_params_check(const pt_train_params *p);
/* Check parameters against the data without training: what pt_train checks before it starts
 * (the parameters, the classes for the path, init and resume against the data: PT_ERR_INVALID,
 * PT_ERR_LABELS or, for a resume model whose run does not fit the data, PT_ERR_FORMAT, with a
 * message). */
PT_API pt_status pt_train_check(const pt_dataset *ds, const pt_train_params *p);

/* Parameters by name, for bindings and configuration files that should not depend on the
 * struct's layout. The names are the fields' ("eta", "batch_size", "expand.degree", ...);
 * pt_train_params_key(i) gives the i-th name, NULL past the last. Values are text: enums by
 * their names ("averaged", "hinge", "rbf"; pt_variant_name and the like), booleans 0 or 1, and
 * numbers as strtod reads them under the C locale (floats round to the field's type; NaN,
 * infinity, and values out of the field's range are refused). A refused value leaves p as it
 * was. pt_train_params_get writes the value as set would read it (floats %.9g, doubles %.17g)
 * into buf of cap bytes. Callbacks and pointers have their own setters (the same as assigning
 * the fields). */
/* A params struct on the heap, as pt_train_params_init leaves it (NULL on allocation failure). */
PT_API pt_train_params *pt_train_params_create(void);
PT_API void pt_train_params_free(pt_train_params *p);
PT_API const char *pt_train_params_key(size_t i);
PT_API pt_status pt_train_params_set(pt_train_params *p, const char *name, const char *value);
PT_API pt_status pt_train_params_get(const pt_train_params *p, const char *name, char *buf,
                                     size_t cap);
PT_API void pt_train_params_set_epoch_hook(pt_train_params *p, pt_epoch_fn fn, void *user);
PT_API void pt_train_params_set_stop(pt_train_params *p, pt_stop *stop);
PT_API void pt_train_params_set_init(pt_train_params *p, const pt_model *init);
/* Class weights (pt_train_params.class_weight and class_weight_n): w holds n weights, one a
 * class in class index order, or NULL (with n 0) for none. The caller keeps w alive during
 * pt_train; pt_train_check refuses a count other than the data's classes or a weight that is
 * not finite and > 0. */
PT_API void pt_train_params_set_class_weight(pt_train_params *p, const float *w, size_t n);

PT_API const char *pt_path_name(pt_path p);
PT_API pt_status pt_path_parse(const char *name, pt_path *out);
PT_API const char *pt_variant_name(pt_variant v);
PT_API const char *pt_loss_name(pt_loss l);
PT_API pt_status pt_loss_parse(const char *name, pt_loss *out);
PT_API const char *pt_schedule_name(pt_schedule s);
PT_API pt_status pt_schedule_parse(const char *name, pt_schedule *out);
PT_API const char *pt_multiclass_name(pt_multiclass m);
PT_API pt_status pt_multiclass_parse(const char *name, pt_multiclass *out);
PT_API const char *pt_kernel_name(pt_kernel k);
PT_API pt_status pt_kernel_parse(const char *name, pt_kernel *out);
PT_API const char *pt_batch_impl_name(pt_batch_impl b);
PT_API pt_status pt_batch_impl_parse(const char *name, pt_batch_impl *out);
PT_API const char *pt_online_pass_name(pt_online_pass p);
PT_API pt_status pt_online_pass_parse(const char *name, pt_online_pass *out);
PT_API const char *pt_gram_storage_name(pt_gram_storage g);
PT_API pt_status pt_gram_storage_parse(const char *name, pt_gram_storage *out);

typedef struct pt_train_report {
    int epochs_run;             /* epochs of the whole run (a resumed run counts those it took over) */
    /* A run resumed from a recorded one (pt_train_params.resume) reports the epochs this call
     * trained, after the epochs_before complete epochs it took over (0 for a fresh run): the
     * arrays below hold epochs_run - epochs_before entries, the first for epoch
     * epochs_before + 1 (when the run resumed in the middle of that epoch, its mistakes include
     * those made before the stop). The earlier epochs' mistakes are not repeated: the model file
     * keeps the last 1000 of them (see pt_model_get_info). epochs_run, updates and converged
     * describe the whole run, so they equal an uninterrupted run's. */
    int epochs_before;
    size_t *mistakes_per_epoch; /* epochs_run - epochs_before entries, owned by the report */
    double *objective_per_epoch; /* batch path only, else NULL */
    double *seconds_per_epoch;   /* wall time of each epoch (the first from the call's start);
                                  * NULL for one-vs-rest runs without an epoch hook, whose
                                  * classes' epochs do not line up in time */
    size_t updates;             /* total weight updates */
    int converged;              /* an epoch with no mistake was reached */
    pt_isa isa;                 /* variant actually used */
    int threads;
    double train_seconds;
    /* A distributed run on more than one rank (pt_dataset_read_shard): the seconds each epoch
     * spent in communication on this rank, waiting for the other ranks included; else NULL */
    double *comm_seconds_per_epoch;
    /* Kernel path: of train_seconds, the seconds spent on kernel values (packing the rows,
     * building the Gram with its first touch, kernel rows computed on demand); 0 elsewhere. */
    double gram_seconds;
    /* Kernel one-vs-rest on dense rows: when train_scored is 1, train_correct of the n
     * training rows are predicted right by the final model, as pt_model_evaluate on them
     * counts, summed from the kernel rows training kept (else 0: evaluate the model), in
     * score_seconds of train_seconds. */
    int train_scored;
    size_t train_correct;
    double score_seconds;
} pt_train_report;

/* Free what the report owns (not the struct itself). */
PT_API void pt_train_report_clear(pt_train_report *r);

/* Train. Two classes: one binary model. More: one-vs-rest on any path, or the multiclass
 * perceptron (p->multiclass) on the online path. On success *model is new (free with pt_model_free) and
 * *report (if not NULL) is filled; the model is final (pt_model_resumable is 0). A run stopped
 * by its stop token, pt_request_stop or the progress callback returns PT_ERR_INTERRUPTED with the model as it
 * stands in *model, on every path, recording where the run stands so that it can be resumed.
 * A run on a dataset whose file shrank under it (pt_dataset_intact) stops at once and returns
 * PT_ERR_IO naming the file; what it computed from the rows that went (read as zeros) is
 * dropped: *model is the model of the last epoch the run read whole (its epochs_run; resumable,
 * as a checkpoint of that epoch, with the file whole again), or NULL when no epoch was. On such
 * data the epoch hook (p->epoch_hook) is not called for an epoch that read zeros, and the
 * library copies the hook's model at the epoch ends (the copies kept to a sixteenth of the
 * run's time: the model handed back may then be a few epochs older than the last whole one);
 * the report describes the run as it went. */
PT_API pt_status pt_train(const pt_dataset *ds, const pt_train_params *p, pt_model **model,
                          pt_train_report *report);

/* Stop every pt_train call running in the process when it is called, as pt_stop_request does
 * for one token's (a call that starts afterwards is not affected). For a program with one
 * training at a time, such as a command-line tool's Ctrl-C handler; a library that embeds
 * ptron should give each call its own token instead. Async-signal-safe. */
PT_API void pt_request_stop(void);

/* -------------------------------------------------------------------------- models */

/* Save atomically (temporary file, fsync, rename; see pt_dataset_write for symlinks, devices
 * and FIFOs) with a checksum. Load verifies the checksum, then every field: a value out of its
 * range, or fields that contradict each other or the body (a kernel degree outside 1..32, an
 * online model with support vectors, a voted model without its votes, ...), is PT_ERR_PARSE
 * naming the file and line. */
PT_API pt_status pt_model_save(const pt_model *m, const char *path);
PT_API pt_status pt_model_load(const char *path, pt_model **out);
/* The same through memory: pt_model_save_buffer sets *buf (free it with pt_buffer_free) and
 * *len to the bytes pt_model_save would write; pt_model_load_buffer reads len such bytes
 * (checksum verified), naming the model `name` in messages where a file would be named. */
PT_API pt_status pt_model_save_buffer(const pt_model *m, void **buf, size_t *len);
PT_API pt_status pt_model_load_buffer(const void *buf, size_t len, const char *name,
                                      pt_model **out);
PT_API void pt_buffer_free(void *buf);
PT_API void pt_model_free(pt_model *m);
/* 1 if the model records where its run stands (the run was interrupted, or the model is a
 * snapshot passed to the epoch hook, or a checkpoint saved from one), so that
 * pt_train_params.resume can continue it; every path records it. A model whose run finished
 * (pt_train returned PT_OK) is final and records none. */
PT_API int pt_model_resumable(const pt_model *m);
/* Forget the recorded run: the model becomes final (kept as it is, no longer resumable), e.g.
 * the best epoch's snapshot that early stopping keeps. */
PT_API void pt_model_clear_run(pt_model *m);
/* The training parameters the model was trained with (callbacks, the stop token and the
 * caller's models, resume and init, cleared; init_random kept only in memory). */
PT_API void pt_model_get_params(const pt_model *m, pt_train_params *p);
/* A deep copy (NULL on allocation failure). */
PT_API pt_model *pt_model_clone(const pt_model *m);

typedef struct pt_model_info {
    pt_path path;
    pt_variant variant;
    pt_kernel kernel;
    size_t d;           /* features the model was trained on */
    size_t nclass;
    double class_values[2]; /* binary models: label for -1 and +1 (see pt_model_class_value) */
    pt_multiclass multiclass;
    int bias;
    float eta, margin;
    int epochs_run;
    size_t n_support;   /* kernel models */
    /* a resumable model (pt_model_resumable): where its run stands. One-vs-rest: the class
     * furthest behind among those still running (or the last to finish), updates summed over
     * the classes. */
    int resumable;
    int run_epochs_done;    /* complete epochs */
    size_t run_position;    /* samples (batch path: blocks) done in the next epoch */
    size_t run_rows;        /* rows of the data it runs on */
    size_t run_updates;     /* updates so far */
    /* the mistakes of its last min(run_epochs_done, 1000) epochs, oldest first (points into
     * the model); NULL for one-vs-rest, whose classes keep one such list each */
    const size_t *run_recent_mistakes;
    int run_recent_epochs;
} pt_model_info;

PT_API void pt_model_get_info(const pt_model *m, pt_model_info *info);
/* Label value of class k (0..nclass-1, ascending). */
PT_API double pt_model_class_value(const pt_model *m, size_t k);
/* The text label of class k for a model trained on text labels, else NULL. */
PT_API const char *pt_model_class_name(const pt_model *m, size_t k);
/* The scaling the model applies to the rows it scores (pt_train_params.scale), or NULL. */
PT_API const pt_scaling *pt_model_scaling(const pt_model *m);
/* Linear models: w (d floats) and bias b. NULL for kernel models. */
PT_API const float *pt_model_weights(const pt_model *m, float *bias);
/* Linear models of more than two classes: class k's weights (d floats) and bias. NULL for
 * binary models (pt_model_weights) and kernel models. */
PT_API const float *pt_model_class_weights(const pt_model *m, size_t k, float *bias);
PT_API size_t pt_model_nclass(const pt_model *m);
/* Features a row to score has: d, or the input features of a model trained on a feature
 * expansion (whose d is the expanded dimension). */
PT_API size_t pt_model_features(const pt_model *m);
PT_API int pt_model_epochs_run(const pt_model *m);

/* Scores f(x) for every row of ds (n floats). Features beyond the model's d are ignored
 * (logged once as a warning); missing ones count as zero. The voted perceptron's score is its
 * vote sum_k c_k sigma(w_k.x + b_k) (sigma below). */
PT_API pt_status pt_model_scores(const pt_model *m, const pt_dataset *ds, float *scores);
/* The multiply-adds scoring ds with m takes, an estimate of its time: one dot of each of its
 * vectors with each row, a row's dot costing its features (the model's, at most the data's;
 * an expansion's, for a model trained on one) or, on sparse rows, its non-zeros. The vectors:
 * one for a linear model, one a class for more classes, the voted perceptron's stored vectors
 * (each votes on every row: a run's updates, unless pt_train_params.voted_max_vectors caps
 * them), a kernel model's support vectors (a kernel value costing about a dot). Every call that
 * scores a voted model (scores, predictions, evaluations) first logs this cost with its terms
 * (PT_LOG_INFO; a warning, PT_LOG_WARN, from PT_SCORE_COST_WARN multiply-adds up, seconds of
 * work or more). */
#define PT_SCORE_COST_WARN 1e10
PT_API double pt_model_score_cost(const pt_model *m, const pt_dataset *ds);
/* Models of more than two classes: the score of every class for every row (n x nclass floats,
 * row-major; the prediction is the first class of highest score). PT_ERR_UNSUPPORTED for a
 * binary model (use pt_model_scores). */
PT_API pt_status pt_model_class_scores(const pt_model *m, const pt_dataset *ds, float *out);
/* Two-class models: probabilities by Platt scaling, P(+1 class | x) = 1 / (1 + exp(A f(x) + B))
 * with f the score. pt_model_set_platt sets A and B (finite; PT_ERR_INVALID for a model of
 * more classes), kept in the model file (version 3); pt_model_platt gives them (0 when the
 * model has none); pt_model_proba writes each row's probability of the +1 class into p (n
 * doubles), PT_ERR_UNSUPPORTED without A and B. pt_platt_fit (below) fits them. */
PT_API pt_status pt_model_set_platt(pt_model *m, double a, double b);
PT_API int pt_model_platt(const pt_model *m, double *a, double *b);
PT_API pt_status pt_model_proba(const pt_model *m, const pt_dataset *ds, double *p);
/* The predicted class index (0..nclass-1, as pt_model_class_value numbers them) of every row,
 * by the convention of pt_model_predict below. */
PT_API pt_status pt_model_predict_class(const pt_model *m, const pt_dataset *ds, int32_t *cls);
/* Predicted label values (n doubles, from the model's label mapping).
 * Sign convention (the threshold unit's sigma(z) = +1 for z >= 0, -1 for z < 0): a two-class model
 * predicts the +1 label (the larger value) where the score is >= 0, a score of exactly 0
 * included, and the -1 label where it is < 0 (or NaN). More than two classes: the class of
 * highest score; a tie goes to the lowest class index (the smallest label). Training is
 * separate: a path updates on y s <= tau, so with tau = 0 a score of 0 is still corrected. */
PT_API pt_status pt_model_predict(const pt_model *m, const pt_dataset *ds, double *labels);

typedef struct pt_eval {
    size_t n, correct;
    double accuracy;
} pt_eval;

PT_API pt_status pt_model_evaluate(const pt_model *m, const pt_dataset *ds, pt_eval *out);

/* Confusion matrix: conf[t * nclass + p] counts rows of true class t (the model's class
 * index of the row's label) predicted as class p; rows whose label the model never saw are
 * counted in *unknown (they are errors). conf has nclass^2 entries: for a model of many
 * classes, pt_model_class_counts gives the per-class figures in O(nclass) memory. */
PT_API pt_status pt_model_confusion(const pt_model *m, const pt_dataset *ds, size_t *conf,
                                    size_t *unknown);
/* Per-class counts of the model's predictions on ds, each array nclass long: rows[k] rows of
 * true class k, predicted[k] rows predicted as class k, correct[k] rows of class k predicted as
 * k (so precision is correct/predicted, recall correct/rows); rows whose label the model never
 * saw count in *unknown and in predicted. */
PT_API pt_status pt_model_class_counts(const pt_model *m, const pt_dataset *ds, size_t *rows,
                                       size_t *predicted, size_t *correct, size_t *unknown);

/* Write predicted labels (as pt_model_predict gives them, n values) to path, one a line: the
 * label (%.17g, C locale), or the class name for a model trained on text labels. The file is
 * replaced whole or not at all, as pt_dataset_write does. */
PT_API pt_status pt_predictions_write(const pt_model *m, const double *labels, size_t n,
                                      const char *path);

/* ----------------------------------------------------------------------- workflow */

/* Write the decision values of every row of ds to path (ptron predict --scores), replaced
 * whole or not at all as pt_dataset_write does. The first line is a header, '#' and the
 * class of each column: a two-class model has one column, the score f(x) of pt_model_scores,
 * and its header names the +1 class (predicted where the score is >= 0); a model of K > 2
 * classes has K columns, the scores of pt_model_class_scores (the prediction is the first
 * column of highest score), headed by the K classes in pt_model_class_value order. Then one
 * line a row, the columns separated by one space (%.9g, C locale). Labels are written as the
 * predictions file writes them (the class name for text labels, else %.17g of the value). */
PT_API pt_status pt_scores_write(const pt_model *m, const pt_dataset *ds, const char *path);

/* Class weights for pt_train_params.class_weight from text: "balanced" (class k of n_k rows
 * weighs n / (K n_k), as scikit-learn's, so every class weighs n / K in all), or
 * comma-separated LABEL:W pairs (the label as the data writes it: a value, compared as a
 * number, or a text label; classes not named weigh 1). out has pt_dataset_nclass(ds) floats.
 * PT_ERR_INVALID, naming the pair, for a label the data does not have or a weight that is not
 * a positive number. */
PT_API pt_status pt_class_weights(const pt_dataset *ds, const char *spec, float *out);

/* Stratified folds for k-fold cross-validation: fold[i] in 0..k-1 for each of the n rows. Each
 * class's rows are shuffled from seed and dealt round the folds in turn (each class starting
 * where the last stopped), so every fold holds floor or ceil of n_c / k rows of class c and
 * the folds' sizes differ by at most one. The same seed gives the same folds on every machine.
 * PT_ERR_INVALID unless 2 <= k <= n. */
PT_API pt_status pt_cv_folds(const pt_dataset *ds, size_t k, uint64_t seed, int32_t *fold);

/* One fold of a cross-validation: its rows, and the held-out accuracy of the model trained on
 * the other folds. */
typedef struct pt_cv_fold {
    size_t n_train, n_test, correct;
    double accuracy; /* correct / n_test */
    int epochs_run;
} pt_cv_fold;

/* k-fold cross-validation of the run p on ds: the folds of pt_cv_folds(ds, k, seed), each
 * trained on the other folds' rows (kept in row order, with the whole set's classes) by
 * pt_train(p) and evaluated on its own; folds[0..k) get each fold's figures, *mean the mean of
 * their accuracies, *std their sample standard deviation (over k - 1). The folds run in
 * parallel on min(k, p->threads) threads (0: all cores), each fold's training on one thread,
 * so each fold's model is what pt_train gives on its rows alone (the paths give the same model
 * at any thread count); the folds running at once share p's memory budgets (mem_budget_bytes
 * and cache_mb, each divided by their number; no more run at once than leave each fold 1 MiB
 * of mem_budget_bytes). p's progress and epoch callbacks are not
 * called; its stop token is honoured (PT_ERR_INTERRUPTED). resume and init are refused. A fold
 * that fails fails the call, its message prefixed with the fold. */
PT_API pt_status pt_cross_validate(const pt_dataset *ds, const pt_train_params *p, size_t k,
                                   uint64_t seed, pt_cv_fold *folds, double *mean, double *std);

/* Platt's A and B for a two-class run p on ds, fitted to decision values the models never
 * trained on: each row's from the model pt_train(p) gives on the other folds of
 * pt_cv_folds(ds, k, seed), with Platt's targets (N+ + 1)/(N+ + 2) and 1/(N- + 2) and the
 * Newton method of Lin, Lin and Weng (as libsvm). PT_ERR_LABELS for more than two classes. Set
 * them on the model trained on all of ds with pt_model_set_platt. */
PT_API pt_status pt_platt_fit(const pt_dataset *ds, const pt_train_params *p, size_t k,
                              uint64_t seed, double *A, double *B);
/* Each row's probability of the +1 class (pt_model_proba) to path, one a line (%.9g), after a
 * header line '#' and the +1 class; replaced whole or not at all. */
PT_API pt_status pt_proba_write(const pt_model *m, const pt_dataset *ds, const char *path);

/* The small grid of the options that matter on p's path (ptron train --search), a point at a
 * time: sets point i's options in *p (start each from the same base parameters) and writes
 * them as command-line options into desc (cap bytes); returns 0 past the last point.
 * Online: --margin 0, 0.1, 1 x --epochs 10, 30 x classic and averaged (12 points). Batch: the
 * hinge loss at --lambda 1e-5 .. 1e-2 x the pegasos and invsqrt schedules, then the
 * perceptron loss (9). Kernel: rbf at --gamma 0.1, 1, 10, poly of degree 2 and 3, linear, x
 * classic and averaged (12). */
PT_API int pt_search_point(pt_train_params *p, size_t i, char *desc, size_t cap);

/* ------------------------------------------------------------------------- bounds */

typedef struct pt_bounds {
    double R;            /* max |x| over the training vectors (with the bias coordinate if on) */
    double gamma;        /* min_i y_i w*.x_i / |w*| (<= 0 if w* does not separate) */
    double mistake_bound;       /* (R/gamma)^2, or INFINITY if gamma <= 0 */
    double wstar_norm;   /* the scale c of the unit w* that minimises the hinge bound */
    double hinge_loss;   /* sum_i max(0, 1 - y_i c u.x_i) at that scale */
    double hinge_mistake_bound; /* R^2 c^2 + 2 L_hinge: min over the scale of the hinge bound */
} pt_bounds;

/* The classic mistake bounds (docs/theory.md) as the lecture notes state them, for a
 * reference separator w* (d floats, and wbias for the bias coordinate when bias is on) in the
 * input space: the classic perceptron (tau = 0, any eta) from w = 0, over one pass of the data
 * (the hinge bound). For the
 * generator's truth, pass pt_dataset_truth() converted to float with wbias = 0. Needs a
 * two-class dataset. Which bound covers a given run: pt_bounds_for_run. */
PT_API pt_status pt_bounds_compute(const pt_dataset *ds, const float *wstar, float wbias, int bias,
                                   pt_bounds *out);

/* The bounds that cover one training run: each measured in the space the run trained in and
 * stated for the quantity it bounds, the run's weight updates (pt_train_report.updates; the
 * averaged and voted variants make the classic run's updates). For updates w += eta y x when
 * y w.x <= tau, from w = 0, with R and gamma of w* in the run's space (derivation in
 * src/model/bounds.c):
 *   separable (gamma > 0):  updates <= (R^2 + 2 tau / eta) / gamma^2   ((R/gamma)^2 at tau = 0)
 *   any data, E passes:     updates <= min over c > 0 of (R^2 + 2 tau / eta) c^2
 *                                                        + 2 E L_hinge(c w* / |w*|, S)
 * Covered: the online and kernel paths, two classes, from w = 0. Not covered (covered = 0,
 * reason says why, and no bound is given): the batch path, more than two classes, a warm start
 * (init, init_random), and a reference that does not live in the run's space. */
typedef struct pt_run_bounds {
    int covered;        /* 1: the bounds below hold for the run's updates */
    char reason[256];   /* covered = 0: why no bound applies */
    char space[16];     /* where R and gamma are measured: "input" (x, with the bias
                         * coordinate if on), "expanded" (phi of the expansion), "kernel" (the
                         * kernel's phi, with K + 1 for the bias) */
    double R, gamma;    /* max |phi(x)| and min_i y_i w*.phi(x_i) / |w*|; NAN when the reference
                         * does not live in the run's space */
    double tau, eta;    /* the run's margin and step size */
    int passes;         /* E, as given */
    int separable;      /* covered and gamma > 0: updates <= separable_bound */
    double separable_bound; /* (R^2 + 2 tau / eta) / gamma^2 (NAN or INFINITY when it does not apply) */
    double hinge_bound;     /* covered: the hinge bound over E passes (NAN when not covered) */
    double hinge_scale;     /* the c that minimises it */
    double hinge_loss;      /* L_hinge(c w* / |w*|, S) over one pass of S at that c */
} pt_run_bounds;

/* The bounds covering a run that trained on ds with parameters p for `passes` passes (the
 * epochs run, plus one for an epoch an interrupt cut short). reference: the separator w*: a
 * two-class linear model in the run's space (d features, or the expanded dimension with
 * p->expand; its bias weight counts when p->bias is on), a two-class kernel model with the same
 * kernel (for the kernel path: w* = sum_j coef_j phi(sv_j)), or NULL for the generator's w*
 * (pt_dataset_truth; PT_ERR_INVALID when the data has none). A linear model of the input
 * dimension on an expanded run is accepted and measured nowhere (not covered); any other
 * dimension is PT_ERR_INVALID with a message. */
PT_API pt_status pt_bounds_for_run(const pt_dataset *ds, const pt_train_params *p,
                                   const pt_model *reference, int passes, pt_run_bounds *out);
/* The checks pt_bounds_for_run makes of the reference (or of the generator's w* when it is
 * NULL), without measuring anything: call it before a long run. */
PT_API pt_status pt_bounds_check_reference(const pt_dataset *ds, const pt_train_params *p,
                                           const pt_model *reference);

/* ------------------------------------------------------- distributed runs (Open MPI) */

/* A run launched by `mpirun -np P` trains on P ranks: each reads its share of the data
 * (pt_dataset_read_shard) and pt_train combines them (the batch path's exact gradient, the
 * online path's iterative parameter mixing). In a build without MPI (meson -Dmpi=disabled) or
 * a process not launched by mpirun there is one rank and everything below is a no-op. */

/* Start MPI when the process was launched by mpirun (else nothing); call it once, first. */
PT_API pt_status pt_dist_init(int *argc, char ***argv);
/* End MPI (after the last collective call; nothing when it was not started). */
PT_API void pt_dist_finalize(void);
/* 1 when pt_dist_init started MPI (even on one rank), else 0. */
PT_API int pt_dist_launched(void);
/* 1 when the library was built with MPI. */
PT_API int pt_dist_built(void);
/* This process's rank (0 ..), and the ranks of the run (1 without mpirun). */
PT_API int pt_dist_rank(void);
PT_API int pt_dist_size(void);
/* End every rank of the run with this exit status (MPI_Abort), or this process (exit). */
PT_API void pt_dist_abort(int status);

/* Read this rank's share of a dataset (collective: every rank calls it with the same path and
 * options): share pt_dist_rank() of pt_dist_size() (see pt_read_options.shard_index), then d
 * (the largest), the layout (chosen from the whole data's n, d and non-zeros) and the class
 * table (the union, sorted as a plain read sorts it) agreed across the ranks, so every rank
 * holds rows of the same space and classes. The dataset remembers that it is a share: pt_train
 * and pt_model_evaluate on it are collective too. A rank that cannot read its share, or has
 * no row, fails the call on every rank: that rank's message names it, the others' name it
 * ("rank 2 of 4 failed to read its share of FILE"). The ranks first check that they read
 * one file, whatever its path on each (its size and a checksum of its first and last 64 KiB):
 * else PT_ERR_FORMAT on every rank, naming the rank that differs and both files. On one
 * rank: the whole file. */
PT_API pt_status pt_dataset_read_shard(const char *path, const pt_read_options *o,
                                       pt_dataset **out);
/* Read the whole dataset on every rank (collective; a rank that fails fails the call on every
 * rank, as above; one file, checked as above): pt_train on it splits one-vs-rest's classes on the kernel path across the
 * ranks (rank r trains the classes c with c mod P = r; the model, assembled on every rank, is
 * the one process's byte for byte); on the other paths every rank trains the whole problem. */
PT_API pt_status pt_dataset_read_replicated(const char *path, const pt_read_options *o,
                                            pt_dataset **out);
/* The rows of the whole dataset a share belongs to (pt_dataset_n for a dataset that is not
 * a share). */
PT_API size_t pt_dataset_n_total(const pt_dataset *ds);
/* Seconds this rank has spent in the run's collective communication since it began. */
PT_API double pt_dist_comm_seconds(void);
/* Whether every rank was given the same text (collective): lines such as "eta=1" that say
 * what must be the same on every rank of a run (its parameters, from pt_train_params_key and
 * pt_train_params_get), checked before anything whose sizes depend on them. PT_OK when every
 * rank's text is rank 0's; else PT_ERR_INVALID on every rank, its message naming the lowest
 * rank that differs and the first line that does ("the ranks were given different WHAT: rank
 * 1 of 2 has eta=0.5, rank 0 eta=1"). On one rank: PT_OK. */
PT_API pt_status pt_dist_agree_text(const char *what, const char *text);

#ifdef __cplusplus
}
#endif
#endif /* PTRON_H */
