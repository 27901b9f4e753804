/* libFuzzer target: the .ptd reader (pt_dataset_read with PT_FORMAT_PTD).
 *
 * Random bytes rarely get past the header checksum, so for half of the inputs (by hash) the
 * harness first repairs the checksums: each section's where the header's offset and length
 * lie inside the input, then the header's. That lets mutations of n, d, the offsets, the
 * class table, the labels, the matrix and the sparse sections (row offsets, columns, values)
 * reach the checks behind the checksums. An accepted dataset must satisfy its layout's
 * invariants, read into the other layout with the same rows, and write back to the same bytes'
 * meaning. */
#include "fuzz_util.h"

#define HEADER_SIZE 256u
#define HEADER_SUM_AT 248u
#define SECTIONS_AT 96u
/* Section entries: four in version 1 files, six from version 2 (the sparse sections). */
#define SECTIONS_V1 4
#define SECTIONS_V2 6

static uint64_t get64(const uint8_t *b)
{
    uint64_t v;
    memcpy(&v, b, 8);
    return v;
}

static void put64(uint8_t *b, uint64_t v) { memcpy(b, &v, 8); }

static void repair_checksums(uint8_t *b, size_t size)
{
    if (size < HEADER_SIZE) return;
    uint32_t version;
    memcpy(&version, b + 8, 4);
    int sections = version >= 2 ? SECTIONS_V2 : SECTIONS_V1;
    for (int s = 0; s < sections; s++) {
        uint8_t *e = b + SECTIONS_AT + 24 * s;
        uint64_t off = get64(e), len = get64(e + 8);
        if (off <= size && len <= size - off) put64(e + 16, pt_checksum(b + off, (size_t)len));
    }
    put64(b + HEADER_SUM_AT, pt_checksum(b, HEADER_SUM_AT));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint64_t h = fuzz_hash(data, size);
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy) return 0;
    memcpy(copy, data, size);
    if (h & 1) repair_checksums(copy, size);
    const char *path = fuzz_memfd(copy, size);
    free(copy);

    pt_read_options o;
    pt_read_options_init(&o);
    o.format = PT_FORMAT_PTD;
    o.mem_budget_bytes = (size_t)8 << 20; /* first touch is slow here: keep matrices small */
    pt_dataset *ds = (pt_dataset *)1;
    pt_status s = pt_dataset_read(path, &o, &ds);
    if (s != PT_OK) {
        fuzz_check_failure(s, ds);
        return 0;
    }
    fuzz_check_dataset(ds, true);
    FUZZ_CHECK(pt_dataset_row(ds, 0) == NULL, "a mapped .ptd dataset handed out a writable row");
    pt_dataset_info info;
    pt_dataset_get_info(ds, &info);
    FUZZ_CHECK(info.has_truth == (ds->wstar != NULL), "info.has_truth");
    if (fuzz_bytes(ds) <= (1u << 18)) {
        fuzz_round_trip(ds, PT_FORMAT_PTD, "rt.ptd");
        fuzz_round_trip(ds, PT_FORMAT_CSV, "rt.csv");
        fuzz_round_trip(ds, PT_FORMAT_LIBSVM, "rt.svm");
    }
    /* the other layout: a copy with the same rows, unless it would not fit the budget */
    o.layout = ds->layout == PT_LAYOUT_SPARSE ? PT_LAYOUT_DENSE : PT_LAYOUT_SPARSE;
    pt_dataset *other = (pt_dataset *)1;
    s = pt_dataset_read(path, &o, &other);
    if (s == PT_OK) {
        fuzz_check_dataset(other, true);
        FUZZ_CHECK(other->layout == o.layout, "read %s, asked for %s",
                   pt_layout_name(other->layout), pt_layout_name(o.layout));
        fuzz_same_contents(ds, other, "the file's layout vs the other");
        pt_dataset_free(other);
    } else {
        FUZZ_CHECK(s == PT_ERR_LIMIT, "read into the other layout: %s", pt_last_error());
        fuzz_check_failure(s, other);
    }
    pt_dataset_free(ds);
    return 0;
}
