/*
 * ptron's binary dataset file (.ptd): written through a stream, read by mmap. The layout, all
 * integers and doubles little-endian, and its versions are specified in
 * docs/formats.md ("The .ptd dataset file"): a change here changes that page in the same
 * commit. In short: a header of HEADER_SIZE bytes (magic, version, n, d, stride, nclass, nnz,
 * flags, the generator's truth, six section entries {offset, length, checksum}, layout,
 * element type, header checksum at HEADER_SUM_AT), then the sections (class values, labels,
 * w*, then the dense matrix and u8 divisors, or the CSR offsets, columns and values), the
 * matrix sections at multiples of MATRIX_ALIGN.
 *
 * The section offsets are fixed by n, d, nclass, the flag, the layout, the element type and
 * (sparse) the entries E: a reader recomputes them and refuses a header that says otherwise.
 * The reader maps the whole file from offset 0, so the matrix sections are page aligned (64-byte
 * alignment is what the SIMD kernels need) whatever the page size, and the dataset points into
 * the mapping: nothing is copied.
 */
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "data.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the .ptd reader and writer assume a little-endian host"
#endif

#define PTD_VERSION 3u
#define HEADER_SIZE 256u
#define HEADER_SUM_AT 248u
#define SECTIONS_AT 96u
#define LAYOUT_AT 240u
#define MATRIX_ALIGN 4096u
#define FLAG_TRUTH 1u
/* Rows are hashed and scanned in blocks of about this size, so the scan reads from L2. */
#define BLOCK_BYTES (256u << 10)

static const char magic[8] = {'P', 'T', 'R', 'O', 'N', 'D', 'S', '\0'};

/* SEC_MATRIX holds the dense rows, or the sparse row offsets. */
enum { SEC_CLASSES, SEC_LABELS, SEC_WSTAR, SEC_MATRIX, SEC_COL, SEC_VAL, NSEC };
/* A dense u8 file's divisors are in the column indices' entry. */
#define SEC_DIVISORS SEC_COL
#define NSEC_V1 4
enum { LAYOUT_DENSE = 0, LAYOUT_SPARSE = 1 };

typedef struct header {
    uint32_t version, header_size, layout, dtype; /* dtype: bytes 244..247 (reserved before v3) */
    uint64_t n, d, stride, nclass, nnz, flags;
    double truth_R, truth_gamma;
    char kind[16];
    uint64_t off[NSEC], len[NSEC], sum[NSEC];
} header;

static const char *sec_name(const header *h, int s)
{
    static const char *const names[NSEC] = {"class values", "labels", "w*", "matrix",
                                            "column indices", "values"};
    if (s == SEC_DIVISORS && h->layout == LAYOUT_DENSE) return "u8 divisors";
    return s == SEC_MATRIX && h->layout == LAYOUT_SPARSE ? "row offsets" : names[s];
}

/* ------------------------------------------------------------------ header encoding */

static void put32(unsigned char *b, uint32_t v) { memcpy(b, &v, 4); }
static void put64(unsigned char *b, uint64_t v) { memcpy(b, &v, 8); }
static uint32_t get32(const unsigned char *b) { uint32_t v; memcpy(&v, b, 4); return v; }
static uint64_t get64(const unsigned char *b) { uint64_t v; memcpy(&v, b, 8); return v; }

static void encode(const header *h, unsigned char b[HEADER_SIZE])
{
    memset(b, 0, HEADER_SIZE);
    memcpy(b, magic, 8);
    put32(b + 8, h->version);
    put32(b + 12, h->header_size);
    put64(b + 16, h->n);
    put64(b + 24, h->d);
    put64(b + 32, h->stride);
    put64(b + 40, h->nclass);
    put64(b + 48, h->nnz);
    put64(b + 56, h->flags);
    memcpy(b + 64, &h->truth_R, 8);
    memcpy(b + 72, &h->truth_gamma, 8);
    memcpy(b + 80, h->kind, 16);
    for (int s = 0; s < NSEC; s++) {
        put64(b + SECTIONS_AT + 24 * s, h->off[s]);
        put64(b + SECTIONS_AT + 24 * s + 8, h->len[s]);
        put64(b + SECTIONS_AT + 24 * s + 16, h->sum[s]);
    }
    put32(b + LAYOUT_AT, h->layout);
    put32(b + LAYOUT_AT + 4, h->dtype);
    put64(b + HEADER_SUM_AT, pt_checksum(b, HEADER_SUM_AT));
}

static void decode(const unsigned char b[HEADER_SIZE], header *h)
{
    h->version = get32(b + 8);
    h->header_size = get32(b + 12);
    h->n = get64(b + 16);
    h->d = get64(b + 24);
    h->stride = get64(b + 32);
    h->nclass = get64(b + 40);
    h->nnz = get64(b + 48);
    h->flags = get64(b + 56);
    memcpy(&h->truth_R, b + 64, 8);
    memcpy(&h->truth_gamma, b + 72, 8);
    memcpy(h->kind, b + 80, 16);
    /* version 1: four sections, the rest of the header reserved (a dense file) */
    int nsec = h->version == 1 ? NSEC_V1 : NSEC;
    for (int s = 0; s < NSEC; s++) {
        h->off[s] = s < nsec ? get64(b + SECTIONS_AT + 24 * s) : 0;
        h->len[s] = s < nsec ? get64(b + SECTIONS_AT + 24 * s + 8) : 0;
        h->sum[s] = s < nsec ? get64(b + SECTIONS_AT + 24 * s + 16) : 0;
    }
    h->layout = h->version == 1 ? LAYOUT_DENSE : get32(b + LAYOUT_AT);
    h->dtype = h->version == 1 ? 0 : get32(b + LAYOUT_AT + 4);
}

/* The canonical section offsets and lengths for these sizes (a sparse file's E entries), and
 * the file size; false if any of it overflows 64 bits. A dense file's sparse entries are zero. */
static bool plan(uint64_t n, uint64_t d, uint64_t stride, uint64_t nclass, bool truth,
                 bool sparse, uint64_t entries, pt_dtype dtype, uint64_t off[NSEC],
                 uint64_t len[NSEC], uint64_t *total)
{
    uint64_t cells;
    memset(off, 0, NSEC * sizeof *off);
    memset(len, 0, NSEC * sizeof *len);
    if (__builtin_mul_overflow(nclass, 8, &len[SEC_CLASSES]) ||
        __builtin_mul_overflow(n, 4, &len[SEC_LABELS]) ||
        __builtin_mul_overflow(truth ? d : 0, 8, &len[SEC_WSTAR]))
        return false;
    if (!sparse && (__builtin_mul_overflow(n, stride, &cells) ||
                    __builtin_mul_overflow(cells, pt_dtype_size(dtype), &len[SEC_MATRIX])))
        return false;
    if (sparse && (n == UINT64_MAX || __builtin_mul_overflow(n + 1, 8, &len[SEC_MATRIX]) ||
                   __builtin_mul_overflow(entries, 4, &len[SEC_COL])))
        return false;
    len[SEC_VAL] = len[SEC_COL];
    bool divisors = !sparse && dtype == PT_DTYPE_U8;
    if (divisors && __builtin_mul_overflow(stride, 4, &len[SEC_DIVISORS])) return false;
    uint64_t at = HEADER_SIZE;
    int last = sparse ? SEC_VAL : divisors ? SEC_DIVISORS : SEC_MATRIX;
    for (int s = 0; s <= last; s++) {
        uint64_t align = s >= SEC_MATRIX ? MATRIX_ALIGN : 8;
        if (at > UINT64_MAX - align) return false;
        off[s] = (at + align - 1) / align * align;
        if (__builtin_add_overflow(off[s], len[s], &at)) return false;
    }
    *total = at;
    return true;
}

/* ------------------------------------------------------------------- matrix scanning */

/* What a row holds: its non-zeros, whether any feature is NaN/Inf, whether the padding past
 * d is non-zero. Written as plain float compares so the compiler vectorises it. */
typedef struct row_scan {
    size_t nnz, bad, pad;
} row_scan;

static void scan_row(const float *x, size_t d, size_t stride, row_scan *r)
{
    size_t nz = 0, bad = 0, pad = 0;
    for (size_t j = 0; j < d; j++) {
        nz += x[j] != 0.0f;
        bad += !(fabsf(x[j]) <= FLT_MAX);
    }
    for (size_t j = d; j < stride; j++) pad += x[j] != 0.0f;
    r->nnz = nz;
    r->bad = bad;
    r->pad = pad;
}

static size_t first_bad(const float *x, size_t d)
{
    size_t j = 0;
    while (j < d && fabsf(x[j]) <= FLT_MAX) j++;
    return j;
}

static size_t rows_per_block(size_t stride)
{
    size_t row = stride * sizeof(float);
    return row >= BLOCK_BYTES ? 1 : BLOCK_BYTES / row;
}

/* ---------------------------------------------------------------------------- reader */

static pt_status read_header(const char *path, int fd, uint64_t file_size, header *h)
{
    unsigned char b[HEADER_SIZE];
    size_t got = 0;
    while (got < HEADER_SIZE) {
        ssize_t r = pread(fd, b + got, HEADER_SIZE - got, (off_t)got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return pt_fail(PT_ERR_IO, "%s: cannot read: %s", path, strerror(errno));
        if (r == 0) break;
        got += (size_t)r;
    }
    if (memcmp(b, magic, got < 8 ? got : 8) != 0 || got == 0)
        return pt_fail(PT_ERR_FORMAT, "%s: not a ptron dataset (bad magic)", path);
    if (got < 12)
        return pt_fail(PT_ERR_FORMAT, "%s: truncated: the header needs %u bytes, the file has %zu",
                       path, HEADER_SIZE, got);
    decode(b, h);
    /* The version comes before anything else: a newer format may lay out the rest otherwise. */
    if (h->version > PTD_VERSION)
        return pt_fail(PT_ERR_VERSION,
                       "%s: .ptd format version %" PRIu32 " is newer than this ptron reads "
                       "(version %u); upgrade ptron",
                       path, h->version, PTD_VERSION);
    if (h->version == 0)
        return pt_fail(PT_ERR_FORMAT, "%s: inconsistent header: format version 0", path);
    if (got < HEADER_SIZE)
        return pt_fail(PT_ERR_FORMAT, "%s: truncated: the header needs %u bytes, the file has %zu",
                       path, HEADER_SIZE, got);
    if (get64(b + HEADER_SUM_AT) != pt_checksum(b, HEADER_SUM_AT))
        return pt_fail(PT_ERR_CHECKSUM, "%s: checksum mismatch in the header (file corrupted)",
                       path);
    if (h->header_size != HEADER_SIZE)
        return pt_fail(PT_ERR_FORMAT, "%s: inconsistent header: header size %" PRIu32
                       ", expected %u", path, h->header_size, HEADER_SIZE);
    if (h->flags & ~(uint64_t)FLAG_TRUTH)
        return pt_fail(PT_ERR_FORMAT, "%s: inconsistent header: unknown flags 0x%" PRIx64,
                       path, h->flags);
    if (h->layout != LAYOUT_DENSE && h->layout != LAYOUT_SPARSE)
        return pt_fail(PT_ERR_FORMAT, "%s: inconsistent header: unknown layout %" PRIu32, path,
                       h->layout);
    if (h->version < 3 && h->dtype != 0)
        return pt_fail(PT_ERR_FORMAT, "%s: inconsistent header: reserved bytes 244..247 are not "
                       "zero", path);
    if (h->dtype > PT_DTYPE_U8)
        return pt_fail(PT_ERR_FORMAT, "%s: inconsistent header: unknown element type %" PRIu32
                       " (0 f32, 1 bf16, 2 u8)", path, h->dtype);
    if (h->layout == LAYOUT_SPARSE && h->dtype != PT_DTYPE_F32)
        return pt_fail(PT_ERR_FORMAT, "%s: inconsistent header: a sparse file of %s elements "
                       "(compact storage is dense only)", path, pt_dtype_name(h->dtype));
    bool sparse = h->layout == LAYOUT_SPARSE;
    if (sparse && h->d > UINT32_MAX)
        return pt_fail(PT_ERR_FORMAT, "%s: inconsistent header: %" PRIu64 " features in the "
                       "sparse layout (32-bit column indices)", path, h->d);
    if (sparse && (h->len[SEC_COL] % 4 != 0 || h->len[SEC_VAL] != h->len[SEC_COL]))
        return pt_fail(PT_ERR_FORMAT, "%s: inconsistent header: column indices of %" PRIu64
                       " bytes and values of %" PRIu64 " bytes (4 bytes an entry each)", path,
                       h->len[SEC_COL], h->len[SEC_VAL]);
    /* 0 for a d so large that the stride would wrap: refused whatever stride says */
    size_t want_stride = h->d > SIZE_MAX / 8 ? 0 : pt_stride_for((size_t)h->d);
    if (want_stride == 0 || h->stride != want_stride)
        return pt_fail(PT_ERR_FORMAT,
                       "%s: inconsistent header: stride %" PRIu64 " for %" PRIu64
                       " features, expected %zu",
                       path, h->stride, h->d, want_stride);
    if (h->nclass > h->n || (h->n > 0 && h->nclass == 0))
        return pt_fail(PT_ERR_FORMAT, "%s: inconsistent header: %" PRIu64 " classes for %" PRIu64
                       " rows", path, h->nclass, h->n);
    if (memchr(h->kind, '\0', sizeof h->kind) == NULL)
        return pt_fail(PT_ERR_FORMAT, "%s: inconsistent header: generator kind not terminated",
                       path);
    if (!isfinite(h->truth_R) || !isfinite(h->truth_gamma))
        return pt_fail(PT_ERR_FORMAT, "%s: inconsistent header: truth R or gamma not finite",
                       path);

    uint64_t off[NSEC], len[NSEC], total;
    if (!plan(h->n, h->d, h->stride, h->nclass, h->flags & FLAG_TRUTH, sparse,
              sparse ? h->len[SEC_COL] / 4 : 0, (pt_dtype)h->dtype, off, len, &total) ||
        total > SIZE_MAX)
        return pt_fail(PT_ERR_FORMAT,
                       "%s: inconsistent header: %" PRIu64 " rows x %" PRIu64
                       " features overflow the file size",
                       path, h->n, h->d);
    for (int s = 0; s < NSEC; s++)
        if (h->off[s] != off[s] || h->len[s] != len[s])
            return pt_fail(PT_ERR_FORMAT,
                           "%s: inconsistent header: %s section at offset %" PRIu64 ", %" PRIu64
                           " bytes; expected offset %" PRIu64 ", %" PRIu64 " bytes",
                           path, sec_name(h, s), h->off[s], h->len[s], off[s], len[s]);
    if (file_size < total)
        return pt_fail(PT_ERR_FORMAT,
                       "%s: truncated: the header describes %" PRIu64
                       " bytes, the file has %" PRIu64,
                       path, total, file_size);
    if (file_size > total)
        return pt_fail(PT_ERR_FORMAT,
                       "%s: inconsistent: the header describes %" PRIu64 " bytes, the file has %"
                       PRIu64 " (trailing data)",
                       path, total, file_size);
    return PT_OK;
}

static pt_status check_section(const char *path, const header *h, const unsigned char *base,
                               int s)
{
    if (pt_checksum(base + h->off[s], (size_t)h->len[s]) != h->sum[s])
        return pt_fail(PT_ERR_CHECKSUM, "%s: checksum mismatch in the %s section (file corrupted)",
                       path, sec_name(h, s));
    return PT_OK;
}

/* Copy and check the small sections: class table, labels (and y), w*. */
static pt_status load_small(const char *path, const header *h, const unsigned char *base,
                            pt_dataset *ds)
{
    for (int s = SEC_CLASSES; s <= SEC_WSTAR; s++) PT_TRY(check_section(path, h, base, s));

    size_t n = ds->n, k = (size_t)h->nclass;
    ds->nclass = k;
    ds->class_values = malloc((k ? k : 1) * sizeof(double));
    if (!ds->class_values) return pt_fail(PT_ERR_NOMEM, "%s: cannot allocate %zu classes", path, k);
    memcpy(ds->class_values, base + h->off[SEC_CLASSES], k * sizeof(double));
    for (size_t c = 0; c < k; c++) {
        double v = ds->class_values[c];
        if (!isfinite(v) || (c > 0 && !(v > ds->class_values[c - 1])))
            return pt_fail(PT_ERR_FORMAT,
                           "%s: class value %zu (%g) is not finite or not in ascending order",
                           path, c, v);
    }

    if (!(ds->cls = pt_alloc((n ? n : 1) * sizeof(int32_t), "class indices"))) return PT_ERR_NOMEM;
    memcpy(ds->cls, base + h->off[SEC_LABELS], n * sizeof(int32_t));
    for (size_t i = 0; i < n; i++)
        if (ds->cls[i] < 0 || (size_t)ds->cls[i] >= k)
            return pt_fail(PT_ERR_FORMAT, "%s: row %zu: class index %" PRId32
                           " out of range (%zu classes)", path, i + 1, ds->cls[i], k);
    if (k == 2) {
        if (!(ds->y = pt_alloc((n ? n : 1) * sizeof(float), "labels"))) return PT_ERR_NOMEM;
        for (size_t i = 0; i < n; i++) ds->y[i] = ds->cls[i] == 1 ? 1.0f : -1.0f;
    }

    if (h->flags & FLAG_TRUTH) {
        size_t d = ds->d;
        if (!(ds->wstar = malloc((d ? d : 1) * sizeof(double))))
            return pt_fail(PT_ERR_NOMEM, "%s: cannot allocate w* (%zu doubles)", path, d);
        memcpy(ds->wstar, base + h->off[SEC_WSTAR], d * sizeof(double));
        for (size_t j = 0; j < d; j++)
            if (!isfinite(ds->wstar[j]))
                return pt_fail(PT_ERR_FORMAT, "%s: w* value %zu is not finite", path, j + 1);
    }
    return PT_OK;
}

/* The end of a matrix's verification pass: its hash (st, freed) against the header's. */
static pt_status matrix_sum_ok(const char *path, const header *h, XXH3_state_t *st)
{
    uint64_t sum = XXH3_64bits_digest(st);
    XXH3_freeState(st);
    if (sum != h->sum[SEC_MATRIX])
        return pt_fail(PT_ERR_CHECKSUM,
                       "%s: checksum mismatch in the matrix section (file corrupted)", path);
    return PT_OK;
}

/* The non-zeros a pass counted against the header's. */
static pt_status nnz_ok(const char *path, const header *h, size_t nnz)
{
    if (nnz != h->nnz)
        return pt_fail(PT_ERR_FORMAT,
                       "%s: inconsistent: the header says %" PRIu64
                       " non-zeros, the matrix has %zu",
                       path, h->nnz, nnz);
    return PT_OK;
}

/* One pass over the mapped matrix: checksum, finiteness, zero padding, nnz. The pass reads
 * block by block, hashing a block and then scanning it while it sits in cache. A corrupted
 * byte is reported as a checksum mismatch even if it also made a NaN. */
static pt_status verify_matrix(const char *path, const header *h, pt_dataset *ds)
{
    size_t n = ds->n, d = ds->d, stride = ds->stride;
    XXH3_state_t *st = XXH3_createState();
    if (!st) return pt_fail(PT_ERR_NOMEM, "%s: cannot allocate a hash state", path);
    XXH3_64bits_reset(st);
    size_t nnz = 0, bad_row = SIZE_MAX, pad_row = SIZE_MAX, step = rows_per_block(stride);
    pt_window_pos at = {0}; /* streamed: blocks within windows, dropped behind */
    for (size_t i0 = 0, i1; i0 < n; i0 = i1) {
        pt_window_at(ds, &at, i0);
        i1 = n - i0 < step ? n : i0 + step;
        if (ds->win && i1 > at.hi) i1 = at.hi;
        const float *blk = pt_window_row(ds, &at, i0);
        XXH3_64bits_update(st, blk, (i1 - i0) * stride * sizeof(float));
        for (size_t i = i0; i < i1; i++) {
            row_scan r;
            scan_row(blk + (i - i0) * stride, d, stride, &r);
            nnz += r.nnz;
            if (r.bad && bad_row == SIZE_MAX) bad_row = i;
            if (r.pad && pad_row == SIZE_MAX) pad_row = i;
        }
    }
    pt_window_end(ds, &at);
    PT_TRY(matrix_sum_ok(path, h, st));
    if (bad_row != SIZE_MAX)
        return pt_fail(PT_ERR_FORMAT, "%s: row %zu, feature %zu: value is not finite", path,
                       bad_row + 1, first_bad(ds->X + bad_row * stride, d) + 1);
    if (pad_row != SIZE_MAX)
        return pt_fail(PT_ERR_FORMAT, "%s: row %zu: non-zero padding past feature %zu", path,
                       pad_row + 1, d);
    PT_TRY(nnz_ok(path, h, nnz));
    ds->nnz = nnz;
    return PT_OK;
}

/* The compact rows of ds (rows first + 1.. of the file: a share starts past row 0): no bf16
 * value infinite or NaN, zero padding. */
static pt_status check_compact_rows(const char *path, const pt_dataset *ds, size_t first)
{
    size_t n = ds->n, d = ds->d, stride = ds->stride, es = pt_dtype_size(ds->dtype);
    for (size_t i = 0; i < n; i++) {
        const unsigned char *b = pt_compact_row(ds, i);
        for (size_t j = 0; es == 2 && j < d; j++)
            if ((b[2 * j + 1] & 0x7f) == 0x7f && (b[2 * j] & 0x80))
                return pt_fail(PT_ERR_FORMAT, "%s: row %zu, feature %zu: value is not finite",
                               path, first + i + 1, j + 1);
        for (size_t k = d * es; k < stride * es; k++)
            if (b[k] != 0)
                return pt_fail(PT_ERR_FORMAT, "%s: row %zu: non-zero padding past feature %zu",
                               path, first + i + 1, d);
    }
    return PT_OK;
}

/* A u8 file's divisors, checked (with their checksum) and set in ds. */
static pt_status load_divisors(const char *path, const header *h, const unsigned char *base,
                               pt_dataset *ds)
{
    size_t d = ds->d, stride = ds->stride;
    PT_TRY(check_section(path, h, base, SEC_DIVISORS));
    const float *m = (const float *)(const void *)(base + h->off[SEC_DIVISORS]);
    bool single = true;
    for (size_t j = 0; j < stride; j++) {
        /* 255 / m must be finite: every value q / m is then */
        if (!(m[j] >= 255.0f / FLT_MAX && m[j] <= FLT_MAX) || (j >= d && m[j] != 1.0f))
            return pt_fail(PT_ERR_FORMAT, "%s: u8 divisor %zu is %g (finite, at least "
                           "255 / FLT_MAX, and 1 past the features)", path, j + 1,
                           (double)m[j]);
        single = single && (j >= d || m[j] == m[0]);
    }
    PT_TRY(pt_u8_alloc_divisors(ds));
    pt_u8_set_divisors(ds, m, single);
    return PT_OK;
}

/* A compact matrix (bf16 or u8) and u8's divisors: checksums (a corrupted byte is a checksum
 * mismatch even where it also breaks a value), then bf16 values finite (no exponent of all
 * ones), the padding zero, the divisors finite and > 0 (copied, with their reciprocals), nnz.
 * One pass block by block, as verify_matrix's; streamed, window by window, each dropped
 * behind, so a streamed file's pages are never all resident at once. */
static pt_status verify_compact(const char *path, const header *h, pt_dataset *ds)
{
    const size_t n = ds->n, row = ds->stride * pt_dtype_size(ds->dtype);
    const size_t step = row >= BLOCK_BYTES ? 1 : BLOCK_BYTES / row;
    XXH3_state_t *st = XXH3_createState();
    if (!st) return pt_fail(PT_ERR_NOMEM, "%s: cannot allocate a hash state", path);
    XXH3_64bits_reset(st);
    size_t nnz = 0;
    pt_status bad = PT_OK; /* the first row refused, said after the checksum */
    char why[512] = "";
    pt_window_pos at = {0};
    for (size_t i0 = 0, i1; i0 < n; i0 = i1) {
        pt_window_at(ds, &at, i0);
        i1 = n - i0 < step ? n : i0 + step;
        if (ds->win && i1 > at.hi) i1 = at.hi;
        pt_dataset blk = *ds; /* rows [i0, i1) */
        blk.n = i1 - i0;
        blk.Xc = (void *)pt_compact_row(ds, i0);
        XXH3_64bits_update(st, blk.Xc, blk.n * row);
        if (bad == PT_OK && (bad = check_compact_rows(path, &blk, i0)) != PT_OK)
            snprintf(why, sizeof why, "%s", pt_last_error());
        nnz += pt_compact_nnz(&blk);
    }
    pt_window_end(ds, &at);
    PT_TRY(matrix_sum_ok(path, h, st));
    if (bad != PT_OK) return pt_fail(bad, "%s", why);
    if (ds->dtype == PT_DTYPE_U8) PT_TRY(load_divisors(path, h, ds->map, ds));
    PT_TRY(nnz_ok(path, h, nnz));
    ds->nnz = nnz;
    return PT_OK;
}

/* The sparse sections: checksums first (a corrupted byte is a checksum mismatch even where it
 * also breaks the layout), then the row offsets (from 0, not decreasing, ending at the entries:
 * so no row reaches past the mapped arrays), then columns and values (pt_csr_check), nnz. */
/* check_section on a streamed dataset: the section hashed a window's bytes at a time, each
 * dropped once hashed. */
static pt_status check_section_streamed(const char *path, const header *h, pt_dataset *ds, int s,
                                        size_t piece)
{
    XXH3_state_t *st = XXH3_createState();
    if (!st) return pt_fail(PT_ERR_NOMEM, "%s: cannot allocate a hash state", path);
    XXH3_64bits_reset(st);
    const unsigned char *p = (const unsigned char *)ds->map + h->off[s];
    for (size_t at = 0, len = (size_t)h->len[s]; at < len; at += piece) {
        size_t k = len - at < piece ? len - at : piece;
        pt_window_fetch(ds, p + at, k);
        XXH3_64bits_update(st, p + at, k);
        pt_window_drop(ds, p + at, k);
    }
    uint64_t sum = XXH3_64bits_digest(st);
    XXH3_freeState(st);
    if (sum != h->sum[s])
        return pt_fail(PT_ERR_CHECKSUM, "%s: checksum mismatch in the %s section (file corrupted)",
                       path, sec_name(h, s));
    return PT_OK;
}

static pt_status verify_csr(const char *path, const header *h, pt_dataset *ds)
{
    const unsigned char *base = ds->map;
    size_t n = ds->n, entries = (size_t)(h->len[SEC_COL] / 4);
    const uint64_t *rp = ds->rowptr;
    if (ds->win) {
        /* streamed: the checksums in a first pass, then the rows window by window */
        size_t piece = pt_dataset_streamed(ds) * (entries / (n ? n : 1) * 8 + 8);
        for (int s = SEC_MATRIX; s <= SEC_VAL; s++)
            PT_TRY(check_section_streamed(path, h, ds, s, piece));
    } else {
        for (int s = SEC_MATRIX; s <= SEC_VAL; s++) PT_TRY(check_section(path, h, base, s));
    }
    for (size_t i = 0; i <= n; i++) {
        uint64_t prev = i ? rp[i - 1] : 0;
        if (rp[i] < prev || rp[i] > entries || (i == 0 && rp[0] != 0))
            return pt_fail(PT_ERR_FORMAT, "%s: row offset %zu is %" PRIu64 " after %" PRIu64
                           " (offsets start at 0 and do not decrease up to the %zu entries)",
                           path, i, rp[i], prev, entries);
    }
    if (rp[n] != entries)
        return pt_fail(PT_ERR_FORMAT, "%s: the row offsets end at %" PRIu64 ", the file holds "
                       "%zu entries", path, rp[n], entries);
    size_t nnz = 0, step = ds->win ? pt_dataset_streamed(ds) : n;
    pt_window_pos at = {0};
    for (size_t r0 = 0; r0 < n; r0 += step) {
        size_t r1 = n - r0 < step ? n : r0 + step;
        pt_window_at(ds, &at, r0);
        if (pt_csr_check_rows(r0, r1, ds->d, rp, ds->col, ds->val, path) != PT_OK) {
            char msg[512]; /* the check's message, as a format error of the file */
            snprintf(msg, sizeof msg, "%s", pt_last_error());
            pt_window_end(ds, &at);
            return pt_fail(PT_ERR_FORMAT, "%s", msg);
        }
        for (uint64_t k = rp[r0]; k < rp[r1]; k++) nnz += ds->val[k] != 0.0f;
    }
    pt_window_end(ds, &at);
    if (nnz != h->nnz)
        return pt_fail(PT_ERR_FORMAT,
                       "%s: inconsistent: the header says %" PRIu64
                       " non-zeros, the values hold %zu",
                       path, h->nnz, nnz);
    ds->nnz = nnz;
    return PT_OK;
}

/* The rows of a streamed file's window: an eighth of the budget (at least one row), since a
 * walker holds two (the one it reads and the next, read ahead), and two walk at once on the
 * batch path's two threads. */
static size_t window_rows(const header *h, size_t budget)
{
    uint64_t matrix = h->len[SEC_MATRIX] + h->len[SEC_COL] + h->len[SEC_VAL];
    uint64_t row = h->n ? (matrix + h->n - 1) / h->n : 1;
    uint64_t rows = budget / 8 / (row ? row : 1);
    return rows < 1 ? 1 : rows > h->n ? (size_t)(h->n ? h->n : 1) : (size_t)rows;
}

/* Whether n x d with nnz non-zeros fits budget in layout l. */
static bool layout_fits(pt_layout l, size_t n, size_t d, size_t nnz, size_t budget)
{
    if (l == PT_LAYOUT_DENSE) return pt_dense_bytes(n, d) <= budget;
    return d <= UINT32_MAX && pt_sparse_bytes(n, nnz) <= budget;
}

/* Rows [a, b) of the file's n: share i of P, [i n / P, (i + 1) n / P). */
static void share_rows(uint64_t n, size_t i, size_t P, size_t *a, size_t *b)
{
    *a = (size_t)((unsigned __int128)n * i / P);
    *b = (size_t)((unsigned __int128)n * (i + 1) / P);
}

/* The end of a read: on success ds in the layout wanted (a copy in the other layout when it
 * differs from the stored one) into *out; on failure (s, or the copy's) ds freed. */
static pt_status finish_read(pt_status s, pt_dataset *ds, pt_layout want, size_t budget,
                             pt_dataset **out)
{
    if (s == PT_OK && want != ds->layout) {
        pt_dataset *copy;
        s = pt_dataset_convert(ds, want, budget, &copy);
        if (s == PT_OK && pt_guard_damaged(ds->guard)) { /* the copy holds zeros */
            pt_dataset_free(copy);
            s = pt_guard_check(ds->guard);
        }
        if (s == PT_OK) {
            pt_dataset_free(ds);
            ds = copy;
        }
    }
    if (s != PT_OK) {
        pt_dataset_free(ds);
        return s;
    }
    *out = ds;
    return PT_OK;
}

/* A share of a distributed run (o->shard_count > 1): rows [a, b) of the file, mapped but only
 * their pages (and the small sections) touched. The class table, the labels and w* are
 * checksummed as in a whole read; of the matrix, the share's rows are checked (finite, zero
 * padding; a sparse share's offsets, columns and values) but not the section's checksum,
 * a hash of the whole section that only a pass over all of it could verify. The dataset keeps
 * the stored layout (the other one is a copy of the share, when asked for). */
static pt_status read_share(const char *path, int fd, size_t map_len, const header *h,
                            const pt_read_options *o, pt_dataset **out)
{
    const bool sparse = h->layout == LAYOUT_SPARSE;
    size_t a, b, budget = o->mem_budget_bytes ? o->mem_budget_bytes : pt_default_mem_budget();
    share_rows(h->n, o->shard_index, o->shard_count, &a, &b);
    void *map = mmap(NULL, map_len, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED)
        return pt_fail(PT_ERR_IO, "%s: cannot map %zu bytes: %s", path, map_len, strerror(errno));
    pt_dataset *ds = calloc(1, sizeof *ds);
    if (!ds) {
        munmap(map, map_len);
        return pt_fail(PT_ERR_NOMEM, "%s: cannot allocate the dataset header", path);
    }
    unsigned char *base = map;
    ds->map = map;
    ds->map_len = map_len;
    ds->guard = pt_guard_map(map, map_len, path);
    ds->n = (size_t)h->n; /* the whole file's, for load_small; the share's below */
    ds->d = (size_t)h->d;
    ds->stride = (size_t)h->stride;
    ds->truth_R = h->truth_R;
    ds->truth_gamma = h->truth_gamma;
    memcpy(ds->kind, h->kind, sizeof ds->kind);
    pt_status s = load_small(path, h, base, ds);
    if (s == PT_OK && a > 0) {
        /* the share's labels at the front */
        memmove(ds->cls, ds->cls + a, (b - a) * sizeof *ds->cls);
        if (ds->y) memmove(ds->y, ds->y + a, (b - a) * sizeof *ds->y);
    }
    ds->n = b - a;
    if (s == PT_OK && !sparse && h->dtype != PT_DTYPE_F32) {
        /* compact rows: the share's, mapped as stored (and the divisors, whole) */
        ds->dtype = (pt_dtype)h->dtype;
        ds->Xc = base + h->off[SEC_MATRIX] + a * ds->stride * pt_dtype_size(ds->dtype);
        size_t bytes = (b - a) * ds->stride * pt_dtype_size(ds->dtype);
        size_t at = (size_t)((unsigned char *)ds->Xc - base), page = (size_t)sysconf(_SC_PAGESIZE);
        madvise(base + at / page * page, bytes + at % page, MADV_WILLNEED);
        s = check_compact_rows(path, ds, a);
        if (s == PT_OK && ds->dtype == PT_DTYPE_U8) s = load_divisors(path, h, base, ds);
        if (s == PT_OK) ds->nnz = pt_compact_nnz(ds);
    } else if (s == PT_OK && !sparse) {
        ds->X = (float *)(void *)(base + h->off[SEC_MATRIX]) + a * ds->stride;
        size_t bytes = (b - a) * ds->stride * sizeof(float), at = (size_t)((unsigned char *)ds->X - base);
        size_t page = (size_t)sysconf(_SC_PAGESIZE);
        madvise(base + at / page * page, bytes + at % page, MADV_WILLNEED);
        size_t nnz = 0;
        for (size_t i = 0; i < ds->n && s == PT_OK; i++) {
            row_scan r;
            scan_row(ds->X + i * ds->stride, ds->d, ds->stride, &r);
            nnz += r.nnz;
            if (r.bad)
                s = pt_fail(PT_ERR_FORMAT, "%s: row %zu, feature %zu: value is not finite", path,
                            a + i + 1, first_bad(ds->X + i * ds->stride, ds->d) + 1);
            else if (r.pad)
                s = pt_fail(PT_ERR_FORMAT, "%s: row %zu: non-zero padding past feature %zu", path,
                            a + i + 1, ds->d);
        }
        ds->nnz = nnz;
    } else if (s == PT_OK) {
        /* the share's row offsets, from 0, in memory of its own; columns and values mapped */
        const uint64_t *rp = (const uint64_t *)(const void *)(base + h->off[SEC_MATRIX]);
        const size_t entries = (size_t)(h->len[SEC_COL] / 4);
        if (rp[a] > rp[b] || rp[b] > entries)
            s = pt_fail(PT_ERR_FORMAT, "%s: row offsets %zu and %zu are %" PRIu64 " and %" PRIu64
                        " (offsets do not decrease up to the %zu entries)", path, a, b, rp[a],
                        rp[b], entries);
        else if (!(ds->shard_rowptr = pt_alloc((b - a + 1) * sizeof(uint64_t), "row offsets")))
            s = PT_ERR_NOMEM;
        for (size_t i = 0; s == PT_OK && i <= b - a; i++) {
            if (rp[a + i] < rp[a] || rp[a + i] > rp[b] || (i && rp[a + i] < rp[a + i - 1]))
                s = pt_fail(PT_ERR_FORMAT, "%s: row offset %zu is %" PRIu64 " (offsets start at "
                            "0 and do not decrease up to the %zu entries)", path, a + i,
                            rp[a + i], entries);
            else
                ds->shard_rowptr[i] = rp[a + i] - rp[a];
        }
        if (s == PT_OK) {
            ds->layout = PT_LAYOUT_SPARSE;
            ds->rowptr = ds->shard_rowptr;
            ds->col = (uint32_t *)(void *)(base + h->off[SEC_COL]) + rp[a];
            ds->val = (float *)(void *)(base + h->off[SEC_VAL]) + rp[a];
            if (pt_csr_check(ds->n, ds->d, ds->rowptr, ds->col, ds->val, path) != PT_OK) {
                char msg[512];
                snprintf(msg, sizeof msg, "%s", pt_last_error());
                s = pt_fail(PT_ERR_FORMAT, "%s (rows %zu..%zu of the file)", msg, a + 1, b);
            }
            size_t nnz = 0, e = (size_t)(rp[b] - rp[a]);
            for (size_t k = 0; k < e; k++) nnz += ds->val[k] != 0.0f;
            ds->nnz = nnz;
        }
    }
    if (pt_guard_damaged(ds->guard)) s = pt_guard_check(ds->guard); /* (over what zeros made) */
    pt_layout want = o->layout == PT_LAYOUT_AUTO ? ds->layout : o->layout;
    return finish_read(s, ds, want, budget, out);
}

pt_status pt_read_ptd(const char *path, const pt_read_options *o, pt_dataset **out)
{
    *out = NULL;
    size_t budget = o && o->mem_budget_bytes ? o->mem_budget_bytes : pt_default_mem_budget();
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return pt_fail(PT_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        pt_status s = pt_fail(PT_ERR_IO, "%s: cannot stat: %s", path, strerror(errno));
        close(fd);
        return s;
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        return pt_fail(PT_ERR_IO, "%s: not a regular file (a .ptd file is memory-mapped)", path);
    }
    header h = {0};
    size_t stream_rows = 0; /* streamed: the window's rows */
    pt_status s = read_header(path, fd, (uint64_t)sb.st_size, &h);
    if (s == PT_OK && o && o->shard_count > 1) {
        s = read_share(path, fd, (size_t)sb.st_size, &h, o, out);
        close(fd);
        return s;
    }
    bool sparse = h.layout == LAYOUT_SPARSE;
    pt_layout stored = sparse ? PT_LAYOUT_SPARSE : PT_LAYOUT_DENSE, want = stored;
    if (s == PT_OK) {
        /* a sparse copy keeps the non-zeros; the file's own arrays hold all its entries */
        size_t n = (size_t)h.n, d = (size_t)h.d;
        size_t nnz = sparse ? (size_t)(h.len[SEC_COL] / 4) : (size_t)h.nnz;
        pt_layout asked = o ? o->layout : PT_LAYOUT_AUTO, other = sparse ? PT_LAYOUT_DENSE
                                                                         : PT_LAYOUT_SPARSE;
        /* auto keeps the file's layout (mapped, no copy) unless only the other fits; when
         * neither does, or the file's layout is asked for and does not fit, it is streamed */
        if (asked == PT_LAYOUT_AUTO && layout_fits(stored, n, d, nnz, budget)) asked = stored;
        else if (asked == PT_LAYOUT_AUTO && layout_fits(other, n, d, nnz, budget)) asked = other;
        /* the file's layout over the budget: streamed, a window an eighth of it */
        if (asked == PT_LAYOUT_AUTO || (asked == stored && !layout_fits(stored, n, d, nnz, budget)))
            stream_rows = window_rows(&h, budget);
        else s = pt_layout_resolve(path, asked, n, d, nnz, budget, &want);
    }
    if (s != PT_OK) {
        close(fd);
        return s;
    }

    /* MADV_HUGEPAGE: what the page cache does not hold yet is read in 2 MiB folios, which
     * the kernel maps whole (a cold file is read through the mapping much faster,
     * bench load/format:ptd/data:big; window.c's streamed walks fault far less often). Then
     * populated in one call (MAP_POPULATE's work, after the advice): the verification pass
     * touches every page anyway, and one call is much cheaper than a fault per 64 KiB. A
     * streamed file's pages come in a window at a time (window.c). */
    size_t map_len = (size_t)sb.st_size;
    void *map = mmap(NULL, map_len, PROT_READ, MAP_PRIVATE, fd, 0);
    int map_errno = errno;
    if (map != MAP_FAILED) {
#ifdef MADV_HUGEPAGE
        (void)madvise(map, map_len, MADV_HUGEPAGE);
#endif
        if (!stream_rows && madvise(map, map_len, 22 /* MADV_POPULATE_READ */) != 0)
            (void)madvise(map, map_len, MADV_WILLNEED); /* before Linux 5.14 */
    }
    /* a streamed file's window reads it (window.c); it keeps the descriptor */
    int keep_fd = stream_rows && map != MAP_FAILED ? fd : -1;
    if (keep_fd < 0) close(fd);
    if (map == MAP_FAILED)
        return pt_fail(PT_ERR_IO, "%s: cannot map %zu bytes: %s", path, map_len,
                       strerror(map_errno));

    pt_dataset *ds = calloc(1, sizeof *ds);
    if (!ds) {
        munmap(map, map_len);
        if (keep_fd >= 0) close(keep_fd);
        return pt_fail(PT_ERR_NOMEM, "%s: cannot allocate the dataset header", path);
    }
    ds->map = map;
    ds->map_len = map_len;
    ds->X_owned = false;
    ds->guard = pt_guard_map(map, map_len, path);
    if (stream_rows && !(ds->win = pt_window_new(map, map_len, stream_rows,
                                                 (size_t)h.stride * sizeof(float), keep_fd))) {
        pt_dataset_free(ds);
        return PT_ERR_NOMEM;
    }
    if (stream_rows)
        pt_log(PT_LOG_INFO, "%s: the matrix (%.1f MiB) exceeds the memory budget (%.1f MiB): "
               "streamed from the file, %zu rows a window", path,
               (double)(map_len - h.off[SEC_MATRIX]) / 1048576.0, budget / 1048576.0,
               stream_rows);
    ds->n = (size_t)h.n;
    ds->d = (size_t)h.d;
    ds->stride = (size_t)h.stride;
    unsigned char *base = map;
    if (sparse) {
        ds->layout = PT_LAYOUT_SPARSE;
        ds->rowptr = (uint64_t *)(void *)(base + h.off[SEC_MATRIX]);
        ds->col = (uint32_t *)(void *)(base + h.off[SEC_COL]);
        ds->val = (float *)(void *)(base + h.off[SEC_VAL]);
    } else if (h.dtype != PT_DTYPE_F32) {
        ds->dtype = (pt_dtype)h.dtype;
        ds->Xc = base + h.off[SEC_MATRIX];
    } else {
        ds->X = (float *)(void *)(base + h.off[SEC_MATRIX]);
    }
    ds->truth_R = h.truth_R;
    ds->truth_gamma = h.truth_gamma;
    memcpy(ds->kind, h.kind, sizeof ds->kind);

    s = load_small(path, &h, map, ds);
    if (s == PT_OK) s = sparse ? verify_csr(path, &h, ds)
                         : ds->dtype != PT_DTYPE_F32 ? verify_compact(path, &h, ds)
                                                    : verify_matrix(path, &h, ds);
    if (pt_guard_damaged(ds->guard)) s = pt_guard_check(ds->guard); /* (over what zeros made) */
    if (s == PT_OK && want != stored && ds->dtype != PT_DTYPE_F32)
        s = pt_fail(PT_ERR_UNSUPPORTED, "%s: a %s file is read in the dense layout only (compact "
                    "storage is dense)", path, pt_dtype_name(ds->dtype));
    return finish_read(s, ds, want, budget, out); /* the other layout: a copy, budgeted above */
}

/* ---------------------------------------------------------------------------- writer */

/* Hands the matrix to fn block by block, exactly as the file holds it: rows whose padding is
 * not zero (a caller wrote past d) are copied into scratch with the padding cleared. */
typedef pt_status (*block_fn)(const float *blk, size_t i0, size_t rows, void *ctx);

static pt_status each_block(const pt_dataset *ds, float *scratch, block_fn fn, void *ctx)
{
    size_t n = ds->n, d = ds->d, stride = ds->stride, step = rows_per_block(stride);
    pt_window_pos at = {0}; /* streamed: blocks within windows, dropped behind */
    pt_status s = PT_OK;
    for (size_t i0 = 0, rows; i0 < n && s == PT_OK; i0 += rows) {
        pt_window_at(ds, &at, i0);
        rows = n - i0 < step ? n - i0 : step;
        if (ds->win && i0 + rows > at.hi) rows = at.hi - i0;
        const float *blk = pt_window_row(ds, &at, i0);
        bool clean = true;
        for (size_t i = 0; i < rows && clean; i++)
            for (size_t j = d; j < stride; j++)
                if (blk[i * stride + j] != 0.0f) {
                    clean = false;
                    break;
                }
        if (!clean) {
            memcpy(scratch, blk, rows * stride * sizeof(float));
            for (size_t i = 0; i < rows; i++)
                memset(scratch + i * stride + d, 0, (stride - d) * sizeof(float));
            blk = scratch;
        }
        s = fn(blk, i0, rows, ctx);
    }
    pt_window_end(ds, &at);
    return s;
}

typedef struct hash_ctx {
    XXH3_state_t *st;
    size_t d, stride, nnz;
} hash_ctx;

static pt_status hash_block(const float *blk, size_t i0, size_t rows, void *ctx)
{
    hash_ctx *c = ctx;
    XXH3_64bits_update(c->st, blk, rows * c->stride * sizeof(float));
    for (size_t i = 0; i < rows; i++) {
        row_scan r;
        const float *x = blk + i * c->stride;
        scan_row(x, c->d, c->stride, &r);
        if (r.bad)
            return pt_fail(PT_ERR_INVALID,
                           "row %zu, feature %zu: value is not finite (a .ptd file holds finite "
                           "numbers only)",
                           i0 + i + 1, first_bad(x, c->d) + 1);
        c->nnz += r.nnz;
    }
    return PT_OK;
}

static pt_status put(FILE *f, const void *p, size_t len)
{
    if (len && fwrite(p, 1, len, f) != len)
        return pt_fail(PT_ERR_IO, "writing the .ptd file: %s", strerror(errno));
    return PT_OK;
}

typedef struct write_ctx {
    FILE *f;
    size_t stride;
} write_ctx;

static pt_status write_block(const float *blk, size_t i0, size_t rows, void *ctx)
{
    (void)i0;
    const write_ctx *w = ctx;
    return put(w->f, blk, rows * w->stride * sizeof(float));
}

/* Zero bytes from position at up to to. */
static pt_status pad_to(FILE *f, uint64_t at, uint64_t to)
{
    static const unsigned char zeros[MATRIX_ALIGN];
    while (at < to) {
        size_t k = to - at < sizeof zeros ? (size_t)(to - at) : sizeof zeros;
        PT_TRY(put(f, zeros, k));
        at += k;
    }
    return PT_OK;
}

/* The bytes a whole-section pass over a streamed dataset's mapping takes at a time: a window's
 * share of a section of len bytes (each piece fetched before use and dropped after, so that
 * about one stays resident); the whole section when ds is not streamed. */
static size_t piece_bytes(const pt_dataset *ds, size_t len)
{
    const size_t rows = pt_dataset_streamed(ds);
    if (!rows || !ds->n || len == 0) return len ? len : 1;
    const size_t piece = rows * (len / ds->n + 8);
    return piece < len ? piece : len;
}

/* The checksum of [p, p + len), piece by piece (piece_bytes). */
static uint64_t checksum_pieces(const pt_dataset *ds, const void *p, size_t len)
{
    if (!ds->win) return pt_checksum(p, len);
    XXH3_state_t st;
    XXH3_INITSTATE(&st);
    XXH3_64bits_reset(&st);
    for (size_t at = 0, step = piece_bytes(ds, len), k; at < len; at += k) {
        k = len - at < step ? len - at : step;
        pt_window_fetch(ds, (const unsigned char *)p + at, k);
        XXH3_64bits_update(&st, (const unsigned char *)p + at, k);
        pt_window_drop(ds, (const unsigned char *)p + at, k);
    }
    return XXH3_64bits_digest(&st);
}

/* put of [p, p + len), piece by piece (piece_bytes). */
static pt_status put_pieces(FILE *f, const pt_dataset *ds, const void *p, size_t len)
{
    pt_status s = PT_OK;
    for (size_t at = 0, step = piece_bytes(ds, len), k; at < len && s == PT_OK; at += k) {
        k = len - at < step ? len - at : step;
        pt_window_fetch(ds, (const unsigned char *)p + at, k);
        s = put(f, (const unsigned char *)p + at, k);
        pt_window_drop(ds, (const unsigned char *)p + at, k);
    }
    return s;
}

/* The sections, each after the zeros that pad it to its offset: the small ones as they are,
 * the matrix sections (from SEC_MATRIX on, through last) piece by piece. */
static pt_status put_sections(FILE *f, const pt_dataset *ds, const header *h,
                              const void *const data[NSEC], int last)
{
    uint64_t at = HEADER_SIZE;
    for (int k = 0; k <= last; k++) {
        PT_TRY(pad_to(f, at, h->off[k]));
        PT_TRY(k >= SEC_MATRIX ? put_pieces(f, ds, data[k], (size_t)h->len[k])
                               : put(f, data[k], (size_t)h->len[k]));
        at = h->off[k] + h->len[k];
    }
    return PT_OK;
}

/* A sparse dataset's file: the CSR arrays are written as they are (they are contiguous), after
 * one pass that counts the non-zeros and refuses NaN/Inf (which the reader would refuse).
 * Streamed, each pass walks the windows. */
static pt_status write_sparse(FILE *f, const pt_dataset *ds, header *h, const double *classes)
{
    size_t n = ds->n, entries = (size_t)ds->rowptr[n], nnz = 0;
    pt_window_pos w = {0};
    for (size_t i = 0; i < n; i++) {
        pt_window_at(ds, &w, i);
        for (uint64_t k = ds->rowptr[i]; k < ds->rowptr[i + 1]; k++) {
            if (!isfinite(ds->val[k])) {
                pt_window_end(ds, &w);
                return pt_fail(PT_ERR_INVALID, "row %zu, feature %u: value is not finite (a .ptd "
                               "file holds finite numbers only)", i + 1, ds->col[k] + 1);
            }
            nnz += ds->val[k] != 0.0f;
        }
    }
    pt_window_end(ds, &w);
    h->nnz = nnz;
    h->sum[SEC_MATRIX] = checksum_pieces(ds, ds->rowptr, (n + 1) * sizeof(uint64_t));
    h->sum[SEC_COL] = checksum_pieces(ds, ds->col, entries * sizeof(uint32_t));
    h->sum[SEC_VAL] = checksum_pieces(ds, ds->val, entries * sizeof(float));
    unsigned char b[HEADER_SIZE];
    encode(h, b);
    const void *data[NSEC] = {classes, ds->cls, ds->wstar, ds->rowptr, ds->col, ds->val};
    PT_TRY(put(f, b, HEADER_SIZE));
    return put_sections(f, ds, h, data, SEC_VAL);
}

/* The non-zeros of a compact matrix; streamed, window by window. */
static size_t compact_nnz(const pt_dataset *ds)
{
    if (!ds->win) return pt_compact_nnz(ds);
    size_t nnz = 0;
    pt_window_pos w = {0};
    for (size_t i0 = 0; i0 < ds->n; i0 = w.hi) {
        pt_window_at(ds, &w, i0);
        pt_dataset blk = *ds; /* rows [i0, w.hi) */
        blk.n = w.hi - i0;
        blk.Xc = (void *)pt_compact_row(ds, i0);
        nnz += pt_compact_nnz(&blk);
    }
    pt_window_end(ds, &w);
    return nnz;
}

/* A compact dataset's file: the matrix (its padding is zero: compact matrices are only made
 * by this library) and u8's divisors, written as they are. */
static pt_status write_compact(FILE *f, const pt_dataset *ds, header *h, const double *classes)
{
    h->nnz = compact_nnz(ds);
    h->sum[SEC_MATRIX] = checksum_pieces(ds, ds->Xc, (size_t)h->len[SEC_MATRIX]);
    if (ds->dtype == PT_DTYPE_U8)
        h->sum[SEC_DIVISORS] = pt_checksum(ds->u8_m, (size_t)h->len[SEC_DIVISORS]);
    unsigned char b[HEADER_SIZE];
    encode(h, b);
    const void *data[NSEC] = {classes, ds->cls, ds->wstar, ds->Xc, ds->u8_m, NULL};
    PT_TRY(put(f, b, HEADER_SIZE));
    return put_sections(f, ds, h, data, ds->dtype == PT_DTYPE_U8 ? SEC_DIVISORS : SEC_MATRIX);
}

static pt_status write_ptd(FILE *f, const pt_dataset *ds);

/* (the rows written must be the file's: one that shrank under ds meanwhile read as zeros) */
pt_status pt_write_ptd(FILE *f, const void *ctx)
{
    pt_status s = write_ptd(f, ctx);
    return s == PT_OK ? pt_guard_check(((const pt_dataset *)ctx)->guard) : s;
}

static pt_status write_ptd(FILE *f, const pt_dataset *ds)
{
    size_t n = ds->n, d = ds->d, stride = ds->stride;
    if (stride != pt_stride_for(d))
        return pt_fail(PT_ERR_INVALID, "dataset stride %zu, expected %zu for %zu features", stride,
                       pt_stride_for(d), d);
    /* A dataset whose labels were never set has every label 0 (pt_dataset_create). */
    static const double zero_class = 0.0;
    const double *classes = ds->class_values;
    size_t nclass = ds->nclass;
    if (nclass == 0 && n > 0) {
        classes = &zero_class;
        nclass = 1;
    }
    for (size_t i = 0; i < n; i++)
        if (ds->cls[i] < 0 || (size_t)ds->cls[i] >= nclass)
            return pt_fail(PT_ERR_INVALID, "row %zu: class index %" PRId32 " out of range", i + 1,
                           ds->cls[i]);

    header h;
    memset(&h, 0, sizeof h);
    h.version = PTD_VERSION;
    h.header_size = HEADER_SIZE;
    h.n = n;
    h.d = d;
    h.stride = stride;
    h.nclass = nclass;
    h.flags = ds->wstar ? FLAG_TRUTH : 0;
    h.truth_R = ds->truth_R;
    h.truth_gamma = ds->truth_gamma;
    memcpy(h.kind, ds->kind, sizeof h.kind);
    h.kind[sizeof h.kind - 1] = '\0';
    bool sparse = ds->layout == PT_LAYOUT_SPARSE;
    size_t entries = sparse ? (size_t)ds->rowptr[n] : 0;
    h.layout = sparse ? LAYOUT_SPARSE : LAYOUT_DENSE;
    uint64_t total;
    h.dtype = sparse ? PT_DTYPE_F32 : ds->dtype;
    if (!plan(n, d, stride, nclass, ds->wstar != NULL, sparse, entries, (pt_dtype)h.dtype, h.off,
              h.len, &total))
        return pt_fail(PT_ERR_INVALID, "dataset of %zu x %zu: size overflows", n, d);
    h.sum[SEC_CLASSES] = pt_checksum(classes, nclass * sizeof(double));
    h.sum[SEC_LABELS] = pt_checksum(ds->cls, n * sizeof(int32_t));
    h.sum[SEC_WSTAR] = pt_checksum(ds->wstar, ds->wstar ? d * sizeof(double) : 0);
    if (sparse) return write_sparse(f, ds, &h, classes);
    if (ds->dtype != PT_DTYPE_F32) return write_compact(f, ds, &h, classes);

    /* The header carries the matrix checksum and nnz, so a first pass computes them (and
     * refuses NaN/Inf, which the reader would refuse); the second pass writes. */
    size_t step = rows_per_block(stride);
    float *scratch = pt_alloc(step * stride * sizeof(float), "write buffer");
    hash_ctx hc = {.st = XXH3_createState(), .d = d, .stride = stride};
    pt_status s = PT_OK;
    if (!scratch || !hc.st) {
        s = scratch ? pt_fail(PT_ERR_NOMEM, "cannot allocate a hash state") : PT_ERR_NOMEM;
        goto out;
    }
    XXH3_64bits_reset(hc.st);
    if ((s = each_block(ds, scratch, hash_block, &hc)) != PT_OK) goto out;
    h.sum[SEC_MATRIX] = XXH3_64bits_digest(hc.st);
    h.nnz = hc.nnz;

    unsigned char b[HEADER_SIZE];
    encode(&h, b);
    const void *data[NSEC] = {classes, ds->cls, ds->wstar, NULL, NULL, NULL};
    uint64_t at = 0;
    if ((s = put(f, b, HEADER_SIZE)) != PT_OK) goto out;
    at = HEADER_SIZE;
    for (int k = 0; k <= SEC_MATRIX && s == PT_OK; k++) {
        if ((s = pad_to(f, at, h.off[k])) != PT_OK) break;
        if (k == SEC_MATRIX) s = each_block(ds, scratch, write_block, &(write_ctx){f, stride});
        else s = put(f, data[k], (size_t)h.len[k]);
        at = h.off[k] + h.len[k];
    }
out:
    pt_free(scratch);
    if (hc.st) XXH3_freeState(hc.st);
    return s;
}

/* ------------------------------------------------------------------- streamed writer */

/* A .ptd file written in row order without the dataset in memory (the bounded convert): the
 * section offsets are fixed by n, d and (sparse) the entries, so each matrix section is written
 * at its place as its rows come and hashed as it goes (XXH3's streaming digest equals the one
 * over the whole section); the class table, the labels and the header, which need every row,
 * come last. The stream must be seekable. */
struct pt_ptd_writer {
    FILE *f;
    header h;
    uint64_t total;
    bool sparse;
    size_t rows, ents;            /* written so far */
    uint64_t at[NSEC];            /* where each matrix section's next bytes go */
    XXH3_state_t *st[NSEC];       /* their running checksums */
};

static pt_status put_raw(FILE *f, uint64_t off, const void *p, size_t len)
{
    if (!len) return PT_OK;
    if (fseeko(f, (off_t)off, SEEK_SET) != 0)
        return pt_fail(PT_ERR_IO, "writing the .ptd file: cannot seek: %s", strerror(errno));
    return put(f, p, len);
}

/* Append to matrix section s, hashing. */
static pt_status put_at(pt_ptd_writer *w, int s, const void *p, size_t len)
{
    PT_TRY(put_raw(w->f, w->at[s], p, len));
    XXH3_64bits_update(w->st[s], p, len);
    w->at[s] += len;
    return PT_OK;
}

void pt_ptd_writer_free(pt_ptd_writer *w)
{
    if (!w) return;
    for (int s = 0; s < NSEC; s++)
        if (w->st[s]) XXH3_freeState(w->st[s]);
    free(w);
}

pt_status pt_ptd_writer_begin(FILE *f, size_t n, size_t d, bool sparse, size_t entries,
                              size_t nclass, pt_ptd_writer **out)
{
    *out = NULL;
    if (fseeko(f, 0, SEEK_CUR) != 0)
        return pt_fail(PT_ERR_IO, "a .ptd file converted in bounded memory is written in place: "
                       "the output must be a regular file (not a pipe or device)");
    pt_ptd_writer *w = calloc(1, sizeof *w);
    if (!w) return pt_fail(PT_ERR_NOMEM, "cannot allocate a .ptd writer");
    header *h = &w->h;
    h->version = PTD_VERSION;
    h->header_size = HEADER_SIZE;
    h->n = n;
    h->d = d;
    h->stride = pt_stride_for(d);
    h->nclass = nclass;
    h->layout = sparse ? LAYOUT_SPARSE : LAYOUT_DENSE;
    w->f = f;
    w->sparse = sparse;
    if (!plan(n, d, h->stride, nclass, false, sparse, entries, PT_DTYPE_F32, h->off, h->len,
              &w->total)) {
        pt_ptd_writer_free(w);
        return pt_fail(PT_ERR_INVALID, "dataset of %zu x %zu: size overflows", n, d);
    }
    for (int s = SEC_MATRIX; s < NSEC; s++) {
        w->at[s] = h->off[s];
        if (!(w->st[s] = XXH3_createState())) {
            pt_ptd_writer_free(w);
            return pt_fail(PT_ERR_NOMEM, "cannot allocate a hash state");
        }
        XXH3_64bits_reset(w->st[s]);
    }
    *out = w;
    static const uint64_t zero = 0; /* the first row offset */
    pt_status s = sparse ? put_at(w, SEC_MATRIX, &zero, sizeof zero) : PT_OK;
    if (s != PT_OK) {
        pt_ptd_writer_free(w);
        *out = NULL;
    }
    return s;
}

pt_status pt_ptd_writer_dense(pt_ptd_writer *w, const float *X, size_t rows)
{
    w->rows += rows;
    return put_at(w, SEC_MATRIX, X, rows * (size_t)w->h.stride * sizeof(float));
}

pt_status pt_ptd_writer_sparse(pt_ptd_writer *w, const uint64_t *ends, size_t rows,
                               const uint32_t *col, const float *val, size_t ents)
{
    w->rows += rows;
    w->ents += ents;
    PT_TRY(put_at(w, SEC_MATRIX, ends, rows * sizeof *ends));
    PT_TRY(put_at(w, SEC_COL, col, ents * sizeof *col));
    return put_at(w, SEC_VAL, val, ents * sizeof *val);
}

pt_status pt_ptd_writer_end(pt_ptd_writer *w, const double *classes, const int32_t *cls,
                            size_t nnz)
{
    header *h = &w->h;
    if (w->rows != h->n || (w->sparse && w->ents != h->len[SEC_COL] / 4))
        return pt_fail(PT_ERR_INVALID, "internal error: %zu rows and %zu entries written for %"
                       PRIu64 " rows", w->rows, w->ents, h->n);
    h->nnz = nnz;
    h->sum[SEC_CLASSES] = pt_checksum(classes, (size_t)h->len[SEC_CLASSES]);
    h->sum[SEC_LABELS] = pt_checksum(cls, (size_t)h->len[SEC_LABELS]);
    h->sum[SEC_WSTAR] = pt_checksum(NULL, 0);
    for (int s = SEC_MATRIX; s <= (w->sparse ? SEC_VAL : SEC_MATRIX); s++)
        h->sum[s] = XXH3_64bits_digest(w->st[s]);
    unsigned char b[HEADER_SIZE];
    encode(h, b);
    PT_TRY(put_raw(w->f, h->off[SEC_CLASSES], classes, (size_t)h->len[SEC_CLASSES]));
    PT_TRY(put_raw(w->f, h->off[SEC_LABELS], cls, (size_t)h->len[SEC_LABELS]));
    PT_TRY(put_raw(w->f, 0, b, HEADER_SIZE));
    /* the gaps between sections are holes (zeros); the file ends where the plan says */
    if (fflush(w->f) != 0 || ftruncate(fileno(w->f), (off_t)w->total) != 0)
        return pt_fail(PT_ERR_IO, "writing the .ptd file: %s", strerror(errno));
    return fseeko(w->f, 0, SEEK_END) == 0 ? PT_OK
                                           : pt_fail(PT_ERR_IO, "writing the .ptd file: %s",
                                                     strerror(errno));
}
