/* Class weights from text (ptron train --class-weight): "balanced", or "LABEL:W,...". */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "workflow.h"

/* The class of ds whose label is the text [s, s + len): by name for text labels, else by
 * value. -1 when none. */
static long find_class(const pt_dataset *ds, const char *s, size_t len)
{
    size_t K = pt_dataset_nclass(ds);
    char buf[256];
    if (len >= sizeof buf) return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    if (pt_dataset_class_name(ds, 0)) {
        for (size_t k = 0; k < K; k++)
            if (strcmp(pt_dataset_class_name(ds, k), buf) == 0) return (long)k;
        return -1;
    }
    char *end;
    locale_t loc = pt_c_locale_enter();
    double v = strtod(buf, &end);
    pt_c_locale_leave(loc);
    if (end == buf || *end) return -1;
    for (size_t k = 0; k < K; k++)
        if (pt_dataset_class_value(ds, k) == v) return (long)k;
    return -1;
}

pt_status pt_class_weights(const pt_dataset *ds, const char *spec, float *out)
{
    pt_clear_error();
    const size_t K = pt_dataset_nclass(ds), n = pt_dataset_n(ds);
    if (strcmp(spec, "balanced") == 0) {
        /* n / (K n_k), as scikit-learn's: every class then weighs n / K in all */
        size_t *count = calloc(K ? K : 1, sizeof *count);
        if (!count) return pt_fail(PT_ERR_NOMEM, "cannot count %zu classes", K);
        for (size_t i = 0; i < n; i++) count[pt_dataset_class(ds, i)]++;
        for (size_t k = 0; k < K; k++)
            out[k] = count[k] ? (float)((double)n / ((double)K * (double)count[k])) : 1.0f;
        free(count);
        return PT_OK;
    }
    for (size_t k = 0; k < K; k++) out[k] = 1.0f;
    for (const char *at = spec; *at;) {
        const char *comma = strchr(at, ','), *end = comma ? comma : at + strlen(at);
        const char *colon = memchr(at, ':', (size_t)(end - at));
        /* the last colon: a text label may hold one */
        for (const char *c = colon; c && c < end; c = memchr(c + 1, ':', (size_t)(end - c - 1)))
            colon = c;
        if (!colon || colon == at)
            return pt_fail(PT_ERR_INVALID, "class weight '%.*s' is not LABEL:W (or use "
                           "'balanced')", (int)(end - at), at);
        long k = find_class(ds, at, (size_t)(colon - at));
        if (k < 0)
            return pt_fail(PT_ERR_INVALID, "class weight '%.*s': the data has no class '%.*s'",
                           (int)(end - at), at, (int)(colon - at), at);
        char num[64], *e;
        size_t len = (size_t)(end - colon - 1);
        if (len == 0 || len >= sizeof num)
            return pt_fail(PT_ERR_INVALID, "class weight '%.*s': no weight after ':'",
                           (int)(end - at), at);
        memcpy(num, colon + 1, len);
        num[len] = '\0';
        locale_t loc = pt_c_locale_enter();
        double w = strtod(num, &e);
        pt_c_locale_leave(loc);
        if (e == num || *e || !(w > 0.0) || !isfinite(w) || w > 1e30)
            return pt_fail(PT_ERR_INVALID, "class weight '%.*s': the weight must be a positive "
                           "number", (int)(end - at), at);
        out[k] = (float)w;
        at = comma ? comma + 1 : end;
    }
    return PT_OK;
}
