/* libFuzzer target: the LIBSVM reader (pt_dataset_read with PT_FORMAT_LIBSVM).
 *
 * Each input is read as given, on one thread. Small inputs are also repeated to about 48 KiB
 * and read on one thread and on three: the parallel reader then splits the text into chunks
 * at arbitrary line starts, and both reads must agree bit for bit, error message included.
 * An accepted dataset must satisfy the layout invariants and survive .ptd and CSV round
 * trips unchanged. */
#include "fuzz_util.h"

#define REPEAT_BYTES (48u << 10)

static pt_status read_as(const char *path, int threads, size_t max_features, pt_dataset **out)
{
    pt_read_options o;
    pt_read_options_init(&o);
    o.format = PT_FORMAT_LIBSVM;
    o.threads = threads;
    o.max_features = max_features;
    o.mem_budget_bytes = (size_t)32 << 20; /* a one-line input may name index 10,000,000 */
    *out = (pt_dataset *)1;                /* the reader must reset it */
    return pt_dataset_read(path, &o, out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint64_t h = fuzz_hash(data, size);
    size_t max_features = (h & 3) == 0 ? 10000000 : 4096;

    pt_dataset *ds;
    pt_status s = read_as(fuzz_memfd(data, size), 1, max_features, &ds);
    if (s == PT_OK) {
        fuzz_check_dataset(ds, false);
        if (ds->n * ds->stride <= (1u << 16)) {
            fuzz_round_trip(ds, PT_FORMAT_PTD, "rt.ptd");
            fuzz_round_trip(ds, PT_FORMAT_CSV, "rt.csv");
        }
        pt_dataset_free(ds);
    } else {
        fuzz_check_failure(s, ds);
    }

    if (size == 0 || size > 4096) return 0;
    /* The input repeated, with a newline between copies so lines stay whole. */
    size_t copies = REPEAT_BYTES / (size + 1) + 1;
    char *big = malloc(copies * (size + 1));
    if (!big) return 0;
    for (size_t c = 0; c < copies; c++) {
        memcpy(big + c * (size + 1), data, size);
        big[c * (size + 1) + size] = '\n';
    }
    const char *path = fuzz_memfd(big, copies * (size + 1));
    free(big);
    pt_dataset *one, *three;
    pt_status s1 = read_as(path, 1, max_features, &one);
    char msg1[1024];
    snprintf(msg1, sizeof msg1, "%s", pt_last_error());
    pt_status s3 = read_as(path, 3, max_features, &three);
    FUZZ_CHECK(s1 == s3, "1 thread: %d (%s), 3 threads: %d (%s)", (int)s1, msg1, (int)s3,
               pt_last_error());
    if (s1 == PT_OK) {
        fuzz_check_dataset(three, false);
        fuzz_same_dataset(one, three, "1 vs 3 threads");
    } else {
        FUZZ_CHECK(strcmp(msg1, pt_last_error()) == 0, "1 thread: '%s', 3 threads: '%s'", msg1,
                   pt_last_error());
    }
    pt_dataset_free(one);
    pt_dataset_free(three);
    return 0;
}
