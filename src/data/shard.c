/*
 * A rank's share of a dataset in a distributed run: the ranks check that they read one file,
 * the readers read the share (pt_read_options.shard_index), then the ranks agree on what a
 * plain read of the whole file would have given every row: d (the largest), the layout (rank
 * 0's) and the class table (the union of the shares' tables, in the order a plain read sorts
 * labels), and every rank learns whether any failed, with that rank's message.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "data.h"
#include "dist/dist.h"

/* Every rank learns of the first rank that failed: that rank's status and message, prefixed
 * with its rank, become every rank's. */
static pt_status agree(pt_status s)
{
    int bad = pt_dist_first_failed(s != PT_OK);
    if (bad < 0) return PT_OK;
    struct {
        int status;
        char msg[1024];
    } m = {0};
    if (pt_dist_rank() == bad) {
        m.status = (int)s;
        snprintf(m.msg, sizeof m.msg, "%s", pt_last_error());
    }
    pt_dist_bcast(&m, sizeof m, bad);
    return pt_fail((pt_status)m.status, "rank %d of %d: %s", bad, pt_dist_size(), m.msg);
}

/* The bytes of the file's head and of its tail that its fingerprint reads. */
#define FINGERPRINT_BYTES ((size_t)64 << 10)

/* What tells one file from another without reading it all (a share reads only its part):
 * its size and a checksum of its first and last FINGERPRINT_BYTES (a .ptd file's header with
 * n, d and its sections' checksums; a text file's first and last lines). Standard input
 * (refused for a share by the reader) has none. */
static pt_status fingerprint(const char *path, uint64_t fp[2])
{
    fp[0] = fp[1] = 0;
    if (strcmp(path, "-") == 0) return PT_OK;
    int fd = open(path, O_RDONLY);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        pt_status s = pt_fail(PT_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
        if (fd >= 0) close(fd);
        return s;
    }
    size_t size = (size_t)sb.st_size, n = size < FINGERPRINT_BYTES ? size : FINGERPRINT_BYTES;
    char *buf = malloc(2 * FINGERPRINT_BYTES);
    ssize_t a = buf ? pread(fd, buf, n, 0) : -1;
    ssize_t b = a >= 0 ? pread(fd, buf + n, n, (off_t)(size - n)) : -1;
    pt_status s = PT_OK;
    if (!buf) s = pt_fail(PT_ERR_NOMEM, "%s: cannot allocate its fingerprint", path);
    else if (a < 0 || b < 0) s = pt_fail(PT_ERR_IO, "%s: cannot read: %s", path, strerror(errno));
    else {
        fp[0] = (uint64_t)size;
        fp[1] = pt_checksum(buf, (size_t)a + (size_t)b);
    }
    free(buf);
    close(fd);
    return s;
}

/* Every rank reads the same file (by its fingerprint, under whatever path): else every rank
 * fails, naming the rank and both files. */
static pt_status agree_file(const char *path)
{
    if (pt_dist_size() < 2) return PT_OK;
    uint64_t fp[2];
    PT_TRY(agree(fingerprint(path, fp)));
    char label[1200], *f0, *fr;
    snprintf(label, sizeof label, "%.1000s (%llu bytes)", path, (unsigned long long)fp[0]);
    int r;
    PT_TRY(pt_dist_compare(fp, sizeof fp, label, &r, &f0, &fr));
    if (r < 0) return PT_OK;
    pt_status s = pt_fail(PT_ERR_FORMAT, "the ranks read different files: rank %d of %d reads "
                          "%s, rank 0 %s%s (every rank reads its share of one file)", r,
                          pt_dist_size(), fr, f0,
                          strcmp(strrchr(fr, '('), strrchr(f0, '(')) == 0
                              ? ": the same size, other contents" : "");
    free(f0);
    free(fr);
    return s;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The union of the ranks' class tables, sorted, and each row's class in it: values, or names
 * (text labels) sent as their bytes with their NULs. */
static pt_status agree_classes(pt_dataset *ds)
{
    const int P = pt_dist_size(), me = pt_dist_rank();
    uint64_t names = ds->class_names != NULL;
    pt_dist_max_u64(&names, 1);
    if (names != (ds->class_names != NULL))
        return pt_fail(PT_ERR_PARSE, "the ranks' shares mix text and numeric labels");
    size_t total = 0, bytes = 0, mine = 0;
    char *buf = NULL;
    if (names)
        for (size_t k = 0; k < ds->nclass; k++) mine += strlen(ds->class_names[k]) + 1;
    /* each rank's count and bytes, then its table, in rank order */
    uint64_t *cnt = calloc(2 * (size_t)P, sizeof *cnt);
    if (!cnt) return pt_fail(PT_ERR_NOMEM, "cannot allocate the class agreement");
    cnt[2 * me] = ds->nclass;
    cnt[2 * me + 1] = names ? mine : ds->nclass * sizeof(double);
    pt_dist_sum_u64(cnt, 2 * (size_t)P);
    for (int r = 0; r < P; r++) {
        total += cnt[2 * r];
        bytes += cnt[2 * r + 1];
    }
    double *vals = names ? NULL : malloc((total ? total : 1) * sizeof *vals);
    char **nm = names ? malloc((total ? total : 1) * sizeof *nm) : NULL;
    buf = malloc(bytes ? bytes : 1);
    int32_t *cls = pt_alloc((ds->n ? ds->n : 1) * sizeof *cls, "class indices");
    pt_status s = PT_OK;
    if (!buf || !cls || (names ? !nm : !vals)) {
        s = pt_fail(PT_ERR_NOMEM, "cannot allocate the class agreement (%zu labels)", total);
        goto out;
    }
    size_t at = 0, k = 0;
    for (int r = 0; r < P; r++) {
        if (r == me) {
            if (names)
                for (size_t c = 0, o = at; c < ds->nclass; c++) {
                    size_t l = strlen(ds->class_names[c]) + 1;
                    memcpy(buf + o, ds->class_names[c], l);
                    o += l;
                }
            else
                memcpy(buf + at, ds->class_values, ds->nclass * sizeof(double));
        }
        pt_dist_bcast(buf + at, cnt[2 * r + 1], r);
        for (size_t c = 0, o = at; c < cnt[2 * r]; c++, k++) {
            if (names) {
                nm[k] = buf + o;
                o += strlen(buf + o) + 1;
            } else {
                memcpy(&vals[k], buf + at + c * sizeof(double), sizeof(double));
            }
        }
        at += cnt[2 * r + 1];
    }
    /* sorted and distinct */
    if (names) qsort(nm, total, sizeof *nm, cmp_name);
    else qsort(vals, total, sizeof *vals, cmp_double);
    size_t K = 0;
    for (size_t i = 0; i < total; i++)
        if (K == 0 || (names ? strcmp(nm[i], nm[K - 1]) != 0 : vals[i] != vals[K - 1])) {
            if (names) nm[K++] = nm[i];
            else vals[K++] = vals[i];
        }
    for (size_t i = 0; i < ds->n; i++) {
        size_t lo = 0, hi = K, c = (size_t)ds->cls[i];
        while (lo + 1 < hi) {
            size_t mid = (lo + hi) / 2;
            int below = names ? strcmp(ds->class_names[c], nm[mid]) < 0
                              : ds->class_values[c] < vals[mid];
            if (below) hi = mid;
            else lo = mid;
        }
        cls[i] = (int32_t)lo;
    }
    if (K == 0) K = 1; /* not reached: a share has a row */
    s = pt_dataset_set_classes(ds, K, names ? NULL : vals, names ? (const char *const *)nm : NULL,
                               cls);
out:
    free(cnt);
    free(vals);
    free(nm);
    free(buf);
    pt_free(cls);
    return s;
}

/* d of every rank's share to the largest: a dense share is laid out again at the wider
 * stride (a copy), a sparse one only says so. */
static pt_status widen(pt_dataset **dsp, size_t d)
{
    pt_dataset *ds = *dsp;
    if (ds->d == d) return PT_OK;
    if (ds->layout == PT_LAYOUT_SPARSE) {
        ds->d = d;
        ds->stride = pt_stride_for(d);
        free(ds->wstar);
        ds->wstar = NULL;
        return PT_OK;
    }
    pt_dataset *w = pt_dataset_alloc(ds->n, d);
    if (!w) return PT_ERR_NOMEM;
    for (size_t i = 0; i < ds->n; i++)
        memcpy(w->X + i * w->stride, ds->X + i * ds->stride, ds->d * sizeof(float));
    free(ds->wstar); /* the generator's truth is of the file's d; one that differs has none */
    ds->wstar = NULL;
    pt_status s = pt_dataset_copy_meta(w, ds, 0);
    if (s != PT_OK) {
        pt_dataset_free(w);
        return s;
    }
    w->nnz = ds->nnz;
    pt_dataset_free(ds);
    *dsp = w;
    return PT_OK;
}

pt_status pt_dataset_read_replicated(const char *path, const pt_read_options *o,
                                     pt_dataset **out)
{
    pt_dataset *ds = NULL;
    *out = NULL;
    pt_status s = agree_file(path);
    if (s != PT_OK) return s;
    s = agree(pt_dataset_read(path, o, &ds));
    if (s != PT_OK) {
        pt_dataset_free(ds);
        return s;
    }
    ds->replicated = true;
    *out = ds;
    return PT_OK;
}

pt_status pt_dataset_read_shard(const char *path, const pt_read_options *o, pt_dataset **out)
{
    pt_read_options opt;
    pt_clear_error();
    *out = NULL;
    if (o) PT_TRY(PT_CHECK_STRUCT(o, pt_read_options));
    if (o) opt = *o;
    else pt_read_options_init(&opt);
    opt.shard_index = (size_t)pt_dist_rank();
    opt.shard_count = (size_t)pt_dist_size();
    pt_dataset *ds = NULL;
    pt_status s = agree_file(path);
    if (s != PT_OK) return s;
    s = pt_dataset_read(path, &opt, &ds);
    if (s == PT_OK && ds->n == 0)
        s = pt_fail(PT_ERR_PARSE, "%s: no data rows in share %zu of %zu (fewer rows than "
                    "ranks: run fewer)", path, opt.shard_index + 1, opt.shard_count);
    if ((s = agree(s)) != PT_OK) goto fail;
    /* d, the layout and the rows in all */
    uint64_t v[3] = {ds->d, (uint64_t)ds->layout, 0};
    pt_dist_bcast(&v[1], sizeof v[1], 0);
    pt_dist_max_u64(&v[0], 1);
    v[2] = ds->n;
    pt_dist_sum_u64(&v[2], 1);
    s = widen(&ds, (size_t)v[0]);
    if (s == PT_OK && (pt_layout)v[1] != ds->layout) {
        pt_dataset *copy;
        s = pt_dataset_convert(ds, (pt_layout)v[1], opt.mem_budget_bytes, &copy);
        if (s == PT_OK) {
            pt_dataset_free(ds);
            ds = copy;
        }
    }
    if ((s = agree(s)) != PT_OK) goto fail;
    if ((s = agree(agree_classes(ds))) != PT_OK) goto fail;
    ds->shard_count = opt.shard_count;
    ds->n_total = (size_t)v[2];
    *out = ds;
    return PT_OK;
fail:
    pt_dataset_free(ds);
    return s;
}
