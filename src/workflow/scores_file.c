/* Decision values to a file (ptron predict --scores): one row a line, one column a class. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "workflow.h"

typedef struct scores_out {
    const pt_model *m;
    const float *s;
    size_t n, cols;
} scores_out;

/* A class's label as the predictions file writes it: its name, or its value (%.17g). */
static int put_label(FILE *f, const pt_model *m, size_t k)
{
    const char *name = pt_model_class_name(m, k);
    return name ? fprintf(f, " %s", name) : fprintf(f, " %.17g", pt_model_class_value(m, k));
}

static pt_status print_scores(FILE *f, const void *ctx)
{
    const scores_out *o = ctx;
    /* the header: the class of each column (two classes: the +1 class, predicted where the
     * score is >= 0) */
    int ok = fputs("#", f) >= 0;
    if (o->cols == 1) ok = ok && put_label(f, o->m, 1) >= 0;
    for (size_t k = 0; o->cols > 1 && k < o->cols && ok; k++) ok = put_label(f, o->m, k) >= 0;
    ok = ok && fputc('\n', f) != EOF;
    for (size_t i = 0; i < o->n && ok; i++) {
        for (size_t k = 0; k < o->cols && ok; k++)
            ok = fprintf(f, k ? " %.9g" : "%.9g", (double)o->s[i * o->cols + k]) >= 0;
        ok = ok && fputc('\n', f) != EOF;
    }
    return ok ? PT_OK : pt_fail(PT_ERR_IO, "write failed: %s", strerror(errno));
}

typedef struct proba_out {
    const pt_model *m;
    const double *p;
    size_t n;
} proba_out;

static pt_status print_proba(FILE *f, const void *ctx)
{
    const proba_out *o = ctx;
    int ok = fputs("#", f) >= 0 && put_label(f, o->m, 1) >= 0 && fputc('\n', f) != EOF;
    for (size_t i = 0; i < o->n && ok; i++) ok = fprintf(f, "%.9g\n", o->p[i]) >= 0;
    return ok ? PT_OK : pt_fail(PT_ERR_IO, "write failed: %s", strerror(errno));
}

pt_status pt_proba_write(const pt_model *m, const pt_dataset *ds, const char *path)
{
    pt_clear_error();
    size_t n = pt_dataset_n(ds);
    double *p = malloc((n ? n : 1) * sizeof *p);
    if (!p) return pt_fail(PT_ERR_NOMEM, "cannot allocate %zu probabilities", n);
    pt_status st = pt_model_proba(m, ds, p);
    if (st == PT_OK) {
        proba_out o = {m, p, n};
        locale_t loc = pt_c_locale_enter();
        st = pt_write_atomic(path, print_proba, &o);
        pt_c_locale_leave(loc);
    }
    free(p);
    return st;
}

pt_status pt_scores_write(const pt_model *m, const pt_dataset *ds, const char *path)
{
    pt_clear_error();
    size_t n = pt_dataset_n(ds), K = pt_model_nclass(m), cols = K > 2 ? K : 1;
    if (cols && n > SIZE_MAX / sizeof(float) / cols)
        return pt_fail(PT_ERR_LIMIT, "%zu rows x %zu scores do not fit in memory", n, cols);
    float *s = malloc((n ? n : 1) * cols * sizeof *s);
    if (!s) return pt_fail(PT_ERR_NOMEM, "cannot allocate %zu x %zu scores", n, cols);
    pt_status st = K > 2 ? pt_model_class_scores(m, ds, s) : pt_model_scores(m, ds, s);
    if (st == PT_OK) {
        scores_out o = {m, s, n, cols};
        locale_t loc = pt_c_locale_enter();
        st = pt_write_atomic(path, print_scores, &o);
        pt_c_locale_leave(loc);
    }
    free(s);
    return st;
}
