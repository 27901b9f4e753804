/* libFuzzer target: model files (pt_model_load).
 *
 * Each input is loaded twice: as given, and with its checksum line replaced by the right one
 * for the rest of the text (random edits almost never keep the XXH3 checksum valid, and the
 * parser behind it is what needs the fuzzing). A loaded model must be usable (info, weights,
 * scores on a small dataset), and saving it, loading that and saving again must give the
 * same bytes twice. */
#include <stdbool.h>

#include "fuzz_util.h"

#define CHECKSUM_KEY "checksum "

static void check_model(const pt_model *m)
{
    pt_model_info mi;
    pt_model_get_info(m, &mi);
    FUZZ_CHECK(mi.nclass >= 2, "a model of %zu classes loaded", mi.nclass);
    for (size_t k = 0; k < mi.nclass; k++) {
        double v = pt_model_class_value(m, k);
        FUZZ_CHECK(v - v == 0.0, "class %zu: non-finite label loaded", k);
        FUZZ_CHECK(k == 0 || v > pt_model_class_value(m, k - 1), "class labels not ascending");
    }
    float b = 0.0f;
    const float *w = pt_model_weights(m, &b);
    if (w) {
        FUZZ_CHECK(b - b == 0.0f, "non-finite bias loaded");
        for (size_t j = 0; j < mi.d; j++) FUZZ_CHECK(w[j] - w[j] == 0.0f, "weight %zu not finite", j);
        for (size_t j = mi.d; j < pt_stride_for(mi.d); j++)
            FUZZ_CHECK(w[j] == 0.0f, "non-zero weight padding at %zu", j);
    }

    /* Scores on a 3 x 5 dataset: fewer, as many or more features than the model has. */
    static const float x[15] = {1, -2, 0.5f, 0, 3, 0, 0, 0, 0, 0, -1, 1, -1, 1, -1};
    static const double y[3] = {-1, 1, 1};
    pt_dataset *ds = pt_dataset_create(3, 5);
    FUZZ_CHECK(ds != NULL, "pt_dataset_create(3, 5)");
    for (size_t i = 0; i < 3; i++) memcpy(pt_dataset_row(ds, i), x + 5 * i, 5 * sizeof(float));
    FUZZ_CHECK(pt_dataset_set_labels(ds, y) == PT_OK, "set labels");
    float scores[3];
    pt_status s = pt_model_scores(m, ds, scores);
    /* kernel models: not built yet on every branch; more than two classes: no single score */
    bool kernel = mi.path == PT_PATH_KERNEL;
    FUZZ_CHECK(s == PT_OK || (s == PT_ERR_UNSUPPORTED && kernel) ||
                   (s == PT_ERR_INVALID && mi.nclass > 2),
               "scores: status %d: %s", (int)s, pt_last_error());
    pt_eval ev;
    s = pt_model_evaluate(m, ds, &ev);
    FUZZ_CHECK(s == PT_OK || (s == PT_ERR_UNSUPPORTED && kernel), "evaluate: status %d: %s", (int)s,
               pt_last_error());
    pt_dataset_free(ds);
}

/* save, load, save: the two files must be identical. */
static void check_resave(const pt_model *m)
{
    const char *a = fuzz_scratch(0, "a.model"), *b = fuzz_scratch(1, "b.model");
    pt_status s = pt_model_save(m, a);
    FUZZ_CHECK(s == PT_OK, "saving a loaded model: %s", pt_last_error());
    pt_model *m2 = NULL;
    s = pt_model_load(a, &m2);
    FUZZ_CHECK(s == PT_OK, "a saved model does not load: %s", pt_last_error());
    FUZZ_CHECK(pt_model_save(m2, b) == PT_OK, "saving again: %s", pt_last_error());
    pt_model_free(m2);
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    FUZZ_CHECK(fa && fb, "opening the saved models");
    int ca, cb;
    do {
        ca = fgetc(fa);
        cb = fgetc(fb);
    } while (ca == cb && ca != EOF);
    FUZZ_CHECK(ca == cb, "save, load, save gave different files");
    fclose(fa);
    fclose(fb);
    unlink(a);
    unlink(b);
}

static void load(const char *path)
{
    pt_model *m = (pt_model *)1;
    pt_status s = pt_model_load(path, &m);
    if (s != PT_OK) {
        fuzz_check_failure(s, m);
        return;
    }
    check_model(m);
    check_resave(m);
    pt_model_free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    load(fuzz_memfd(data, size));

    /* The body: the input less a last line that starts with "checksum ", newline-ended. */
    size_t body = size;
    while (body > 0 && data[body - 1] == '\n') body--;
    const uint8_t *nl = body ? memrchr(data, '\n', body) : NULL;
    size_t last = nl ? (size_t)(nl - data) + 1 : 0;
    if (body - last >= sizeof CHECKSUM_KEY - 1 &&
        memcmp(data + last, CHECKSUM_KEY, sizeof CHECKSUM_KEY - 1) == 0)
        body = last;
    else
        body = size;
    char *fixed = malloc(body + 64);
    if (!fixed) return 0;
    memcpy(fixed, data, body);
    size_t len = body;
    if (len && fixed[len - 1] != '\n') fixed[len++] = '\n';
    len += (size_t)snprintf(fixed + len, 64, CHECKSUM_KEY "%016llx\n",
                            (unsigned long long)pt_checksum(fixed, len));
    load(fuzz_memfd(fixed, len));
    free(fixed);
    return 0;
}
