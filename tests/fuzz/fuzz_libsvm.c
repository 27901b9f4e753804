/* libFuzzer target: the LIBSVM reader (pt_dataset_read with PT_FORMAT_LIBSVM).
 *
 * Each input is read as given, on one thread, with the layout auto, then into the layout auto
 * did not choose: both must hold the same rows, or fail alike (the same message; only the
 * memory budget may refuse one layout and not the other). It is then read again between two
 * long comment lines, on one thread and on two, in each layout: the parallel reader then
 * splits the text into two chunks at a line start inside the input (chosen by its hash), and
 * both reads must agree bit for bit, error message included (scripts/fuzz sets
 * OMP_THREAD_LIMIT=1: the chunks then run one after the other, which is what ASan needs; races
 * are not this harness's business). An accepted dataset must satisfy its layout's invariants
 * and survive .ptd, CSV and LIBSVM round trips unchanged. */
#include "fuzz_util.h"

/* The reader makes a chunk per 16 KiB of text: a 12,000-byte comment line in front keeps the
 * whole text between 16 and 32 KiB, so two threads get two chunks. */
#define PAD 12000u

/* Budgets stay small: first touch of memory is slow under virtualisation (about 10 us a page),
 * and a one-line input can name feature 10,000,000; the budget check is fuzzed all the same. */
static pt_status read_as(const char *path, int threads, size_t max_features, size_t budget,
                         pt_layout layout, pt_dataset **out)
{
    pt_read_options o;
    pt_read_options_init(&o);
    o.format = PT_FORMAT_LIBSVM;
    o.threads = threads;
    o.layout = layout;
    o.max_features = max_features;
    o.mem_budget_bytes = budget;
    *out = (pt_dataset *)1; /* the reader must reset it */
    return pt_dataset_read(path, &o, out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint64_t h = fuzz_hash(data, size);
    size_t max_features = (h & 3) == 0 ? 10000000 : 1000;

    const char *path = fuzz_memfd(data, size);
    size_t budget = (size_t)2 << 20;
    pt_dataset *ds;
    pt_status s = read_as(path, 1, max_features, budget, PT_LAYOUT_AUTO, &ds);
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", pt_last_error());
    pt_layout other = s == PT_OK && ds->layout == PT_LAYOUT_SPARSE ? PT_LAYOUT_DENSE
                                                                   : PT_LAYOUT_SPARSE;
    pt_dataset *ds2;
    pt_status s2 = read_as(path, 1, max_features, budget, other, &ds2);
    /* Check the second read's failure now: the round trips below set and clear the last error. */
    if (s2 != PT_OK) fuzz_check_failure(s2, ds2);
    char msg2[1024];
    snprintf(msg2, sizeof msg2, "%s", pt_last_error());
    if (s == PT_OK) {
        fuzz_check_dataset(ds, false);
        if (fuzz_bytes(ds) <= (1u << 18)) {
            fuzz_round_trip(ds, PT_FORMAT_PTD, "rt.ptd");
            fuzz_round_trip(ds, PT_FORMAT_CSV, "rt.csv");
            fuzz_round_trip(ds, PT_FORMAT_LIBSVM, "rt.svm");
        }
    } else {
        fuzz_check_failure(s, ds);
    }
    if (s2 == PT_OK) fuzz_check_dataset(ds2, false);
    if (s != PT_ERR_LIMIT && s2 != PT_ERR_LIMIT) {
        FUZZ_CHECK(s == s2, "auto: %d (%s), %s: %d (%s)", (int)s, msg, pt_layout_name(other),
                   (int)s2, msg2);
        if (s == PT_OK) fuzz_same_contents(ds, ds2, "auto vs the other layout");
        else FUZZ_CHECK(strcmp(msg, msg2) == 0, "auto: '%s', %s: '%s'", msg,
                        pt_layout_name(other), msg2);
    }
    pt_dataset_free(ds);
    pt_dataset_free(ds2);

    if (size == 0 || size > 4096) return 0;
    /* [comment line of PAD bytes][input][comment line]: 2 chunks on 2 threads, split at the
     * middle of the text, which the second comment's length puts at byte r of the input. */
    size_t r = (size_t)(h >> 8) % size, tail = PAD + 2 * r - size + 2; /* >= 2: "#\n" at least */
    size_t total = PAD + size + 1 + tail;
    char *big = malloc(total);
    if (!big) return 0;
    memset(big, 'x', total);
    big[0] = '#';
    big[PAD - 1] = '\n';
    memcpy(big + PAD, data, size);
    big[PAD + size] = '\n';
    big[PAD + size + 1] = '#';
    big[total - 1] = '\n';
    path = fuzz_memfd(big, total);
    free(big);
    for (int l = 0; l < 2; l++) {
        pt_layout layout = l ? PT_LAYOUT_SPARSE : PT_LAYOUT_DENSE;
        pt_dataset *one, *two;
        pt_status s1 = read_as(path, 1, max_features, budget, layout, &one);
        char msg1[1024];
        snprintf(msg1, sizeof msg1, "%s", pt_last_error());
        s2 = read_as(path, 2, max_features, budget, layout, &two);
        FUZZ_CHECK(s1 == s2, "%s, 1 chunk: %d (%s), 2 chunks: %d (%s)", pt_layout_name(layout),
                   (int)s1, msg1, (int)s2, pt_last_error());
        if (s1 == PT_OK) {
            fuzz_check_dataset(two, false);
            fuzz_same_dataset(one, two, "1 vs 2 chunks");
        } else {
            FUZZ_CHECK(strcmp(msg1, pt_last_error()) == 0, "1 chunk: '%s', 2 chunks: '%s'", msg1,
                       pt_last_error());
        }
        pt_dataset_free(one);
        pt_dataset_free(two);
    }
    return 0;
}
