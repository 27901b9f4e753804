/* Shared by the libFuzzer targets: the input as a file the readers can open (a memfd, so a
 * run writes nothing to disk), a private scratch directory for round trips, and a hash that
 * picks reader options from the input (the same input always gets the same options, so a
 * reproducer replays exactly). */
#ifndef PT_FUZZ_UTIL_H
#define PT_FUZZ_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "data/data.h"

/* Report a broken invariant as a crash, with the reader's message (on fd 2 directly: the
 * CLI target points the stderr stream at /dev/null). */
#define FUZZ_CHECK(cond, ...)                                                                      \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            dprintf(2, "fuzz invariant failed at %s:%d: %s\n  ", __FILE__, __LINE__, #cond);       \
            dprintf(2, __VA_ARGS__);                                                               \
            dprintf(2, "\n");                                                                      \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* The input as a file: one memfd per process, rewritten each run. Returns its path. */
static inline const char *fuzz_memfd(const void *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("fuzz-input", 0);
        if (fd < 0) abort();
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) != 0 || ftruncate(fd, (off_t)size) != 0) abort();
    size_t done = 0;
    while (done < size) {
        ssize_t w = pwrite(fd, (const char *)data + done, size - done, (off_t)done);
        if (w <= 0) abort();
        done += (size_t)w;
    }
    return path;
}

/* A private directory for files a target writes, made once under $PTRON_FUZZ_TMP (scripts/fuzz
 * points it at a tmpfs directory it removes afterwards), else /dev/shm or /tmp. */
static inline const char *fuzz_scratch_dir(void)
{
    static char dir[256];
    if (!dir[0]) {
        const char *base = getenv("PTRON_FUZZ_TMP");
        if (!base || !*base) base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        snprintf(dir, sizeof dir, "%s/ptron-fuzz-XXXXXX", base);
        if (!mkdtemp(dir)) abort();
    }
    return dir;
}

/* name inside the scratch directory (static buffer, one per slot 0..3). */
static inline const char *fuzz_scratch(int slot, const char *name)
{
    static char bufs[4][320];
    snprintf(bufs[slot], sizeof bufs[slot], "%s/%s", fuzz_scratch_dir(), name);
    return bufs[slot];
}

/* FNV-1a of the input: picks options. */
static inline uint64_t fuzz_hash(const uint8_t *data, size_t size)
{
    uint64_t h = 1469598103934665603u;
    for (size_t i = 0; i < size; i++) h = (h ^ data[i]) * 1099511628211u;
    return h;
}

/* The non-zeros of one row, in column order, from either layout: a dense row scanned, a sparse
 * row's entries (explicit zeros of either sign skipped). */
typedef struct fuzz_row {
    const float *x;
    const uint32_t *col; /* NULL: dense */
    size_t k, end;
} fuzz_row;

static inline fuzz_row fuzz_row_of(const pt_dataset *ds, size_t i)
{
    fuzz_row r = {NULL, NULL, 0, ds->d};
    if (ds->layout == PT_LAYOUT_SPARSE) r.end = pt_csr_row(ds, i, &r.col, &r.x);
    else r.x = ds->X + i * ds->stride;
    return r;
}

static inline bool fuzz_row_next(fuzz_row *r, size_t *j, float *v)
{
    while (r->k < r->end) {
        size_t k = r->k++;
        if (r->x[k] != 0.0f) {
            *j = r->col ? r->col[k] : k;
            *v = r->x[k];
            return true;
        }
    }
    return false;
}

/* Row i of a and of b hold the same non-zeros, bit for bit, whatever their layouts. */
static inline void fuzz_same_row(const pt_dataset *a, const pt_dataset *b, size_t i,
                                 const char *what)
{
    fuzz_row ra = fuzz_row_of(a, i), rb = fuzz_row_of(b, i);
    size_t ja, jb;
    float va, vb;
    for (;;) {
        bool ha = fuzz_row_next(&ra, &ja, &va), hb = fuzz_row_next(&rb, &jb, &vb);
        FUZZ_CHECK(ha == hb, "%s: row %zu: %s has more non-zeros", what, i,
                   ha ? "the first" : "the second");
        if (!ha) return;
        FUZZ_CHECK(ja == jb && memcmp(&va, &vb, sizeof va) == 0,
                   "%s: row %zu: feature %zu = %.9g vs feature %zu = %.9g", what, i, ja + 1,
                   (double)va, jb + 1, (double)vb);
    }
}

/* Bitwise equality of two datasets in the same layout (the dense matrix with its padding, or
 * the sparse arrays; class table, labels). */
static inline void fuzz_same_dataset(const pt_dataset *a, const pt_dataset *b, const char *what)
{
    FUZZ_CHECK(a->n == b->n && a->d == b->d && a->stride == b->stride, "%s: %zux%zu vs %zux%zu",
               what, a->n, a->d, b->n, b->d);
    FUZZ_CHECK(a->layout == b->layout, "%s: layouts %s vs %s", what, pt_layout_name(a->layout),
               pt_layout_name(b->layout));
    FUZZ_CHECK(a->nclass == b->nclass, "%s: %zu vs %zu classes", what, a->nclass, b->nclass);
    FUZZ_CHECK(a->nnz == b->nnz, "%s: nnz %zu vs %zu", what, a->nnz, b->nnz);
    FUZZ_CHECK(memcmp(a->class_values, b->class_values, a->nclass * sizeof(double)) == 0,
               "%s: class values differ", what);
    FUZZ_CHECK(memcmp(a->cls, b->cls, a->n * sizeof(int32_t)) == 0, "%s: labels differ", what);
    if (a->layout == PT_LAYOUT_SPARSE) {
        size_t e = (size_t)a->rowptr[a->n];
        FUZZ_CHECK(memcmp(a->rowptr, b->rowptr, (a->n + 1) * sizeof(uint64_t)) == 0,
                   "%s: row offsets differ", what);
        FUZZ_CHECK(e == 0 || (memcmp(a->col, b->col, e * sizeof(uint32_t)) == 0 &&
                              memcmp(a->val, b->val, e * sizeof(float)) == 0),
                   "%s: sparse entries differ", what);
    } else {
        FUZZ_CHECK(memcmp(a->X, b->X, a->n * a->stride * sizeof(float)) == 0,
                   "%s: matrix differs", what);
    }
}

/* The same rows (non-zeros bit for bit) and labels in any two layouts. */
static inline void fuzz_same_contents(const pt_dataset *a, const pt_dataset *b, const char *what)
{
    FUZZ_CHECK(a->n == b->n && a->d == b->d && a->nnz == b->nnz,
               "%s: %zux%zu (%zu non-zeros) vs %zux%zu (%zu)", what, a->n, a->d, a->nnz, b->n,
               b->d, b->nnz);
    FUZZ_CHECK(a->nclass == b->nclass &&
               memcmp(a->class_values, b->class_values, a->nclass * sizeof(double)) == 0 &&
               memcmp(a->cls, b->cls, a->n * sizeof(int32_t)) == 0, "%s: labels differ", what);
    for (size_t i = 0; i < a->n; i++) fuzz_same_row(a, b, i, what);
}

/* The dense layout's invariants: the matrix aligned, finite, zero padding; nnz its count. */
static inline void check_dense(const pt_dataset *ds)
{
    FUZZ_CHECK(((uintptr_t)ds->X & (PT_ALIGN_BYTES - 1)) == 0, "matrix not 64-byte aligned");
    size_t nnz = 0;
    for (size_t i = 0; i < ds->n; i++) {
        const float *x = ds->X + i * ds->stride;
        for (size_t j = 0; j < ds->d; j++) {
            FUZZ_CHECK(x[j] - x[j] == 0.0f, "row %zu feature %zu is not finite", i, j);
            nnz += x[j] != 0.0f;
        }
        for (size_t j = ds->d; j < ds->stride; j++)
            FUZZ_CHECK(x[j] == 0.0f, "row %zu: non-zero padding at %zu", i, j);
    }
    FUZZ_CHECK(nnz == ds->nnz, "nnz %zu counted, %zu recorded", nnz, ds->nnz);
}

/* The sparse layout's invariants (pt_layout): offsets from 0, not decreasing; columns
 * increasing within a row and below d; values finite; nnz the count of non-zero values. */
static inline void check_sparse(const pt_dataset *ds)
{
    FUZZ_CHECK(ds->X == NULL && ds->rowptr && ds->rowptr[0] == 0, "sparse arrays");
    FUZZ_CHECK(((uintptr_t)ds->rowptr & (PT_ALIGN_BYTES - 1)) == 0 &&
               ((uintptr_t)ds->col & (PT_ALIGN_BYTES - 1)) == 0 &&
               ((uintptr_t)ds->val & (PT_ALIGN_BYTES - 1)) == 0, "sparse arrays not aligned");
    size_t nnz = 0;
    for (size_t i = 0; i < ds->n; i++) {
        FUZZ_CHECK(ds->rowptr[i + 1] >= ds->rowptr[i], "row %zu: offsets decrease", i);
        for (uint64_t k = ds->rowptr[i]; k < ds->rowptr[i + 1]; k++) {
            FUZZ_CHECK(ds->col[k] < ds->d, "row %zu: column %u of %zu", i, ds->col[k], ds->d);
            FUZZ_CHECK(k == ds->rowptr[i] || ds->col[k] > ds->col[k - 1],
                       "row %zu: columns not increasing", i);
            FUZZ_CHECK(ds->val[k] - ds->val[k] == 0.0f, "row %zu: value not finite", i);
            nnz += ds->val[k] != 0.0f;
        }
    }
    FUZZ_CHECK(nnz == ds->nnz, "nnz %zu counted, %zu recorded", nnz, ds->nnz);
}

/* What every successfully read dataset must satisfy. Text readers refuse a file without data
 * rows; a .ptd file may hold an empty dataset (n = 0, no classes). */
static inline void fuzz_check_dataset(const pt_dataset *ds, bool allow_empty)
{
    FUZZ_CHECK(ds->n > 0 || allow_empty, "a dataset with no rows was accepted");
    FUZZ_CHECK(ds->stride == pt_stride_for(ds->d), "stride %zu for d %zu", ds->stride, ds->d);
    FUZZ_CHECK((ds->nclass >= 1 || ds->n == 0) && ds->nclass <= ds->n, "%zu classes for %zu rows",
               ds->nclass, ds->n);
    FUZZ_CHECK((ds->nclass == 2) == (ds->y != NULL), "y present iff two classes");
    for (size_t i = 0; i < ds->n; i++)
        FUZZ_CHECK(ds->cls[i] >= 0 && (size_t)ds->cls[i] < ds->nclass, "row %zu class %d", i,
                   (int)ds->cls[i]);
    for (size_t k = 0; k < ds->nclass; k++) {
        FUZZ_CHECK(ds->class_values[k] - ds->class_values[k] == 0.0, "class %zu not finite", k);
        FUZZ_CHECK(k == 0 || ds->class_values[k] > ds->class_values[k - 1], "class table not sorted");
    }
    if (ds->layout == PT_LAYOUT_SPARSE) check_sparse(ds);
    else check_dense(ds);
}

/* A failure must leave a message (file:line and what) and no dataset. */
static inline void fuzz_check_failure(pt_status s, const void *out)
{
    FUZZ_CHECK(out == NULL, "status %d but an output was returned", (int)s);
    FUZZ_CHECK(pt_last_error()[0] != '\0', "status %d (%s) with an empty message", (int)s,
               pt_strerror(s));
}

/* Row i's label value in ds and in back must be the same. (A class table may hold a class no
 * row uses, e.g. a slice's: a text format drops it, so the tables can differ.) */
static inline void fuzz_same_labels(const pt_dataset *ds, const pt_dataset *back, const char *what)
{
    for (size_t i = 0; i < ds->n; i++)
        FUZZ_CHECK(ds->class_values[ds->cls[i]] == back->class_values[back->cls[i]],
                   "%s round trip: row %zu label %.17g came back as %.17g", what, i,
                   ds->class_values[ds->cls[i]], back->class_values[back->cls[i]]);
}

/* The bytes ds takes in its layout (what the round trips are limited by). */
static inline size_t fuzz_bytes(const pt_dataset *ds)
{
    return ds->layout == PT_LAYOUT_SPARSE ? (size_t)ds->rowptr[ds->n] * 8 + ds->n * 8
                                          : ds->n * ds->stride * sizeof(float);
}

/* Write ds in format f to the scratch dir, read it back into ds's layout and compare: .ptd bit
 * for bit (it keeps the layout); CSV the same d and non-zeros, a dense matrix bit for bit;
 * LIBSVM the non-zeros (it writes no zeros, so -0 comes back +0, and all-zero trailing columns
 * do not come back at all). A sparse dataset goes to CSV only when its dense form is small. */
static inline void fuzz_round_trip(const pt_dataset *ds, pt_format f, const char *name)
{
    if (f != PT_FORMAT_PTD && ds->n == 0)
        return; /* a text file without rows is refused */
    if (f == PT_FORMAT_CSV && ds->layout == PT_LAYOUT_SPARSE && ds->n * ds->stride > (1u << 16))
        return; /* every feature of every row is written */
    const char *path = fuzz_scratch(3, name);
    pt_status s = pt_dataset_write(ds, path, f);
    FUZZ_CHECK(s == PT_OK, "writing %s: %s", pt_format_name(f), pt_last_error());
    pt_read_options o;
    pt_read_options_init(&o);
    o.format = f;
    o.threads = 1;
    o.csv_header = 0;
    o.layout = ds->layout;
    if (ds->d > o.max_features) o.max_features = ds->d; /* the indices written are <= d */
    pt_dataset *back = NULL;
    s = pt_dataset_read(path, &o, &back);
    FUZZ_CHECK(s == PT_OK, "%s round trip: the written file does not read back: %s",
               pt_format_name(f), pt_last_error());
    FUZZ_CHECK(back->layout == ds->layout, "%s round trip: read back %s", pt_format_name(f),
               pt_layout_name(back->layout));
    if (f == PT_FORMAT_PTD) {
        fuzz_same_dataset(ds, back, "ptd round trip");
    } else if (f == PT_FORMAT_CSV) {
        FUZZ_CHECK(back->n == ds->n && back->d == ds->d && back->nnz == ds->nnz,
                   "csv round trip: %zux%zu (%zu non-zeros), wrote %zux%zu (%zu)", back->n,
                   back->d, back->nnz, ds->n, ds->d, ds->nnz);
        /* the features bit for bit; the padding is zero by value (a .ptd file may hold -0
         * there, which its reader accepts and CSV cannot carry) */
        if (ds->layout == PT_LAYOUT_DENSE)
            for (size_t i = 0; i < ds->n; i++)
                for (size_t j = 0; j < ds->d; j++)
                    FUZZ_CHECK(memcmp(&ds->X[i * ds->stride + j], &back->X[i * ds->stride + j],
                                      sizeof(float)) == 0,
                               "csv round trip: row %zu feature %zu: %.9g came back as %.9g", i,
                               j, (double)ds->X[i * ds->stride + j],
                               (double)back->X[i * ds->stride + j]);
        else
            for (size_t i = 0; i < ds->n; i++) fuzz_same_row(ds, back, i, "csv round trip");
        fuzz_same_labels(ds, back, "csv");
    } else {
        FUZZ_CHECK(back->n == ds->n && back->d <= ds->d && back->nnz == ds->nnz,
                   "libsvm round trip: %zux%zu (%zu non-zeros), wrote %zux%zu (%zu)", back->n,
                   back->d, back->nnz, ds->n, ds->d, ds->nnz);
        fuzz_same_labels(ds, back, "libsvm");
        for (size_t i = 0; i < ds->n; i++) fuzz_same_row(ds, back, i, "libsvm round trip");
    }
    pt_dataset_free(back);
    unlink(path);
}

#endif
