/*
 * Seeded generators for `ptron gen`. All arithmetic in double from one xoshiro256** stream,
 * rounded to float at the end, so a seed gives the same file on every machine.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"

void pt_gen_params_init(pt_gen_params *p)
{
    memset(p, 0, sizeof *p);
    p->struct_size = sizeof *p;
    p->kind = PT_GEN_SEPARABLE;
    p->n = 1000;
    p->d = 2;
    p->margin = 0.1;
    p->noise = 0.1;
    p->seed = 1;
    p->classes = 3;
    p->nnz = 50;
}

static const char *const kind_names[] = {"separable", "noisy", "xor", "circle", "blobs", "sparse"};

const char *pt_gen_kind_name(pt_gen_kind k)
{
    return (unsigned)k < sizeof kind_names / sizeof kind_names[0] ? kind_names[k] : "unknown";
}

pt_status pt_gen_kind_parse(const char *name, pt_gen_kind *out)
{
    for (size_t i = 0; i < sizeof kind_names / sizeof kind_names[0]; i++)
        if (strcmp(name, kind_names[i]) == 0) {
            *out = (pt_gen_kind)i;
            return PT_OK;
        }
    return pt_fail(PT_ERR_INVALID, "unknown generator '%s' (separable, noisy, xor, circle, blobs, "
                   "sparse)", name);
}

static double dotd(const double *a, const float *x, size_t d)
{
    double s = 0.0;
    for (size_t j = 0; j < d; j++) s += a[j] * (double)x[j];
    return s;
}

/* Separable and noisy: x uniform in [-1,1]^d, y = sign(w*.x); a point closer than the margin
 * is pushed along w* to exactly the margin, so the set's margin is at least G. */
static pt_status gen_linear(const pt_gen_params *p, pt_rng *rng, pt_dataset *ds, double *labels)
{
    size_t n = p->n, d = p->d;
    double *w = malloc(d * sizeof *w), *x = malloc(d * sizeof *x);
    if (!w || !x) {
        free(w);
        free(x);
        return pt_fail(PT_ERR_NOMEM, "generator: cannot allocate %zu doubles", d);
    }
    double norm = 0.0;
    for (size_t j = 0; j < d; j++) {
        w[j] = pt_rng_normal(rng);
        norm += w[j] * w[j];
    }
    norm = sqrt(norm);
    for (size_t j = 0; j < d; j++) w[j] /= norm;
    /* a hair above G so rounding x to float cannot take a point inside the margin */
    double target = p->margin * (1.0 + 1e-5) + 1e-6;
    for (size_t i = 0; i < n; i++) {
        double m = 0.0;
        for (size_t j = 0; j < d; j++) m += w[j] * (x[j] = 2.0 * pt_rng_uniform(rng) - 1.0);
        double y = m >= 0.0 ? 1.0 : -1.0;
        if (p->margin > 0.0 && fabs(m) < target)
            for (size_t j = 0; j < d; j++) x[j] += y * (target - fabs(m)) * w[j];
        float *row = pt_dataset_row(ds, i);
        for (size_t j = 0; j < d; j++) row[j] = (float)x[j];
        labels[i] = y;
    }
    /* truth measured on the stored floats, with the clean labels */
    double R2 = 0.0, gamma = INFINITY;
    for (size_t i = 0; i < n; i++) {
        const float *row = pt_dataset_row(ds, i);
        double r2 = 0.0;
        for (size_t j = 0; j < d; j++) r2 += (double)row[j] * row[j];
        if (r2 > R2) R2 = r2;
        double mg = labels[i] * dotd(w, row, d);
        if (mg < gamma) gamma = mg;
    }
    if (p->kind == PT_GEN_NOISY)
        for (size_t i = 0; i < n; i++)
            if (pt_rng_uniform(rng) < p->noise) labels[i] = -labels[i];
    ds->wstar = w;
    ds->truth_R = sqrt(R2);
    ds->truth_gamma = n ? gamma : 0.0;
    free(x);
    return PT_OK;
}

/* XOR: y = sign(x1 x2) with |x1|, |x2| in [G, 1] (a gap of G around the axes); further
 * coordinates uniform noise. */
static void gen_xor(const pt_gen_params *p, pt_rng *rng, pt_dataset *ds, double *labels)
{
    double g = p->margin < 1.0 ? p->margin : 0.0;
    for (size_t i = 0; i < p->n; i++) {
        float *row = pt_dataset_row(ds, i);
        double a = 1.0;
        for (size_t j = 0; j < p->d; j++) {
            double u = 2.0 * pt_rng_uniform(rng) - 1.0;
            if (j < 2) {
                u = (u >= 0.0 ? 1.0 : -1.0) * (g + fabs(u) * (1.0 - g));
                a *= u;
            }
            row[j] = (float)u;
        }
        labels[i] = a > 0.0 ? 1.0 : -1.0;
    }
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Circle (sphere in d dims): x uniform in [-1,1]^d, +1 inside the median radius r0, -1
 * outside; points within G/2 of r0 are pushed radially to r0 +- G/2. */
static pt_status gen_circle(const pt_gen_params *p, pt_rng *rng, pt_dataset *ds, double *labels)
{
    size_t n = p->n, d = p->d;
    double *r = malloc((n ? n : 1) * sizeof *r);
    if (!r) return pt_fail(PT_ERR_NOMEM, "generator: cannot allocate %zu doubles", n);
    for (size_t i = 0; i < n; i++) {
        float *row = pt_dataset_row(ds, i);
        double s = 0.0;
        for (size_t j = 0; j < d; j++) {
            double u = 2.0 * pt_rng_uniform(rng) - 1.0;
            row[j] = (float)u;
            s += u * u;
        }
        r[i] = sqrt(s);
    }
    double *sorted = malloc((n ? n : 1) * sizeof *sorted);
    if (!sorted) {
        free(r);
        return pt_fail(PT_ERR_NOMEM, "generator: cannot allocate %zu doubles", n);
    }
    memcpy(sorted, r, n * sizeof *r);
    qsort(sorted, n, sizeof *sorted, cmp_dbl);
    double r0 = n ? sorted[n / 2] : 1.0, half = p->margin / 2.0;
    if (half >= r0) half = r0 / 2.0;
    for (size_t i = 0; i < n; i++) {
        bool inside = r[i] < r0;
        labels[i] = inside ? 1.0 : -1.0;
        double target = inside ? r0 - half : r0 + half;
        if (r[i] > 0.0 && fabs(r[i] - r0) < half) {
            float *row = pt_dataset_row(ds, i);
            double scale = target / r[i];
            for (size_t j = 0; j < d; j++) row[j] = (float)(row[j] * scale);
        }
    }
    free(sorted);
    free(r);
    return PT_OK;
}

/* Blobs: k centres N(0, 3^2 I), points N(centre, I), labels 0..k-1 in turn. */
static pt_status gen_blobs(const pt_gen_params *p, pt_rng *rng, pt_dataset *ds, double *labels)
{
    size_t k = p->classes, d = p->d;
    double *c = malloc(k * d * sizeof *c);
    if (!c) return pt_fail(PT_ERR_NOMEM, "generator: cannot allocate %zu centres", k);
    for (size_t i = 0; i < k * d; i++) c[i] = 3.0 * pt_rng_normal(rng);
    for (size_t i = 0; i < p->n; i++) {
        size_t cls = (size_t)pt_rng_below(rng, k);
        float *row = pt_dataset_row(ds, i);
        for (size_t j = 0; j < d; j++) row[j] = (float)(c[cls * d + j] + pt_rng_normal(rng));
        labels[i] = (double)cls;
    }
    free(c);
    return PT_OK;
}

pt_status pt_generate(const pt_gen_params *p, pt_dataset **out)
{
    pt_clear_error();
    *out = NULL;
    PT_TRY(PT_CHECK_STRUCT(p, pt_gen_params));
    if (p->n < 1) return pt_fail(PT_ERR_INVALID, "pt_gen_params.n must be at least 1");
    if (p->d < 1) return pt_fail(PT_ERR_INVALID, "pt_gen_params.d must be at least 1");
    if ((p->kind == PT_GEN_XOR) && p->d < 2)
        return pt_fail(PT_ERR_INVALID, "xor needs pt_gen_params.d >= 2");
    if (!(p->margin >= 0.0) || !isfinite(p->margin))
        return pt_fail(PT_ERR_INVALID, "pt_gen_params.margin must be >= 0");
    if (!(p->noise >= 0.0 && p->noise <= 1.0))
        return pt_fail(PT_ERR_INVALID, "pt_gen_params.noise must be in [0, 1]");
    if (p->kind == PT_GEN_BLOBS && (p->classes < 2 || p->classes > 100000))
        return pt_fail(PT_ERR_INVALID, "pt_gen_params.classes must be in 2..100000");
    if (p->kind == PT_GEN_SPARSE) {
        pt_status s = pt_gen_sparse(p, out);
        if (s == PT_OK) snprintf((*out)->kind, sizeof (*out)->kind, "%s", pt_gen_kind_name(p->kind));
        return s;
    }
    pt_dataset *ds = pt_dataset_alloc(p->n, p->d);
    if (!ds) return PT_ERR_NOMEM;
    double *labels = malloc(p->n * sizeof *labels);
    if (!labels) {
        pt_dataset_free(ds);
        return pt_fail(PT_ERR_NOMEM, "generator: cannot allocate %zu labels", p->n);
    }
    pt_rng rng;
    pt_rng_seed(&rng, p->seed);
    pt_status s = PT_OK;
    switch (p->kind) {
    case PT_GEN_SEPARABLE:
    case PT_GEN_NOISY: s = gen_linear(p, &rng, ds, labels); break;
    case PT_GEN_XOR: gen_xor(p, &rng, ds, labels); break;
    case PT_GEN_CIRCLE: s = gen_circle(p, &rng, ds, labels); break;
    case PT_GEN_BLOBS: s = gen_blobs(p, &rng, ds, labels); break;
    default: s = pt_fail(PT_ERR_INVALID, "unknown generator kind %d", (int)p->kind);
    }
    if (s == PT_OK) s = pt_dataset_set_class_table(ds, labels);
    if (s == PT_OK) s = pt_dataset_count_nnz(ds, "generator");
    free(labels);
    if (s != PT_OK) {
        pt_dataset_free(ds);
        return s;
    }
    snprintf(ds->kind, sizeof ds->kind, "%s", pt_gen_kind_name(p->kind));
    *out = ds;
    return PT_OK;
}
