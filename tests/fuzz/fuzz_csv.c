/* libFuzzer target: the CSV reader (pt_dataset_read with PT_FORMAT_CSV), with the header
 * mode (detect, none, present), the label column (0, 1, 2) and the delimiter (',' most often,
 * else ';', tab, '|' or space) picked from the input's hash.
 * An accepted dataset must satisfy the layout invariants and survive .ptd and LIBSVM round
 * trips. */
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint64_t h = fuzz_hash(data, size);
    pt_read_options o;
    pt_read_options_init(&o);
    o.format = PT_FORMAT_CSV;
    o.threads = 1;
    o.csv_header = (int)(h % 3) - 1;
    o.csv_label_column = (h >> 8) % 4 == 3 ? (int)((h >> 16) % 3) : 0;
    o.csv_delimiter = ",,,,;\t| "[(h >> 24) % 8];
    o.mem_budget_bytes = (size_t)8 << 20; /* first touch is slow here: keep matrices small */

    pt_dataset *ds = (pt_dataset *)1;
    pt_status s = pt_dataset_read(fuzz_memfd(data, size), &o, &ds);
    if (s != PT_OK) {
        fuzz_check_failure(s, ds);
        return 0;
    }
    fuzz_check_dataset(ds, false);
    if (fuzz_bytes(ds) <= (1u << 18)) {
        fuzz_round_trip(ds, PT_FORMAT_PTD, "rt.ptd");
        fuzz_round_trip(ds, PT_FORMAT_LIBSVM, "rt.svm");
    }
    pt_dataset_free(ds);
    return 0;
}
