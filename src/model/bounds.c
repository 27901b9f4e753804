/* layers: reads rows by form until ported to data/rows.h */
/*
 * The classic mistake bounds (docs/theory.md, Mistake bounds) for a reference separator w*
 * (u = w* / |w*|, margins m_i = y_i u.x_i, R = max |x_i|, gamma = min m_i), and which of them
 * cover a training run.
 *
 * The lecture notes prove them for the classic perceptron from w = 0 (update w += y x when
 * y w.x <= 0):
 *  - separable (Block/Novikoff): updates <= (R / gamma)^2 when gamma > 0;
 *  - any data: updates <= min over c > 0 of R^2 c^2 + 2 L_hinge(c u, S), with L_hinge summed
 *    over the sequence S the perceptron is shown.
 * A bound holds in the space the perceptron trains in: (x, 1) with the bias on, phi(x) with
 * an expansion or a kernel.
 *
 * ptron's online and kernel paths update w += eta y x when y w.x <= tau. The same argument
 * with eta and tau, for M updates from w = 0:
 *   each update raises w.u by eta y x.u >= eta gamma, so w_M.u >= M eta gamma;
 *   each update raises |w|^2 by 2 eta y w.x + eta^2 |x|^2 <= 2 eta tau + eta^2 R^2 (the update
 *   happens only when y w.x <= tau), so |w_M|^2 <= M (2 eta tau + eta^2 R^2);
 *   Cauchy-Schwarz, (M eta gamma)^2 <= (w_M.u)^2 <= |w_M|^2, gives
 *       M <= (R^2 + 2 tau / eta) / gamma^2,
 * which is (R / gamma)^2 at tau = 0 for any eta (the run is then eta times the eta = 1 run).
 * The hinge bound the same way: with w* = c u and l_t = max(0, 1 - y_t w*.x_t), each update
 * raises w.w* by eta y x.w* >= eta (1 - l_t), so w_M.w* >= eta (M - L) with L the loss summed
 * over the sequence; if M > L, (M - L)^2 eta^2 <= |w_M|^2 c^2 <= M eta^2 (R^2 + 2 tau/eta) c^2,
 * so M <= (R^2 + 2 tau/eta) c^2 + 2 L (and M <= L makes it true at once). E passes over S
 * (shuffled or not) are a sequence whose loss is E L_hinge(c u, S):
 *       M <= min over c > 0 of (R^2 + 2 tau / eta) c^2 + 2 E L_hinge(c u, S).
 * The averaged and voted variants make the classic run's updates, so the bounds cover their
 * updates too. They do not cover the batch path (its steps are averaged subgradients), a run
 * from weights other than 0, or one-vs-rest and the multiclass perceptron.
 *
 * The hinge minimum: f(c) = A c^2 + 2 E sum_i max(0, 1 - c m_i) is a convex piecewise
 * quadratic in c, minimised exactly by walking the points' breakpoints c = 1 / m_i in order.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "features/expand.h"
#include "features/gram.h"
#include "features/kernel_expr.h"
#include "features/kernel_spec.h"
#include "model.h"

static int cmp_desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

/* R^2 and the margins y_i (w.x_i + wb bias) / |w| of a linear w* over the rows of ds, each
 * mapped by map first when map is not NULL (buf: its output row; dense data only). On sparse
 * data R^2 is the largest squared row norm, from each row's non-zeros. A streamed dataset is
 * walked window by window (at), so that its pages are not all resident at once. */
static pt_status linear_margins(const pt_dataset *ds, const pt_row_map *map, float *buf,
                                const float *w, size_t dw, float wbias, int bias, double *R2_out,
                                double *m)
{
    double bb = bias ? 1.0 : 0.0, wn2 = bias ? (double)wbias * wbias : 0.0;
    for (size_t j = 0; j < dw; j++) wn2 += (double)w[j] * w[j];
    if (!(wn2 > 0.0)) return pt_fail(PT_ERR_INVALID, "the reference separator is zero");
    double wn = sqrt(wn2), R2 = 0.0;
    if (ds->layout == PT_LAYOUT_SPARSE) {
        /* the same sums over the non-zeros (the zeros add nothing): O(nnz) */
        if (map) return pt_require_dense(ds, "the bounds of a run on an expansion");
        pt_window_pos at = {0};
        for (size_t i = 0; i < ds->n; i++) {
            pt_window_at(ds, &at, i);
            const uint32_t *col;
            const float *val;
            size_t nnz = pt_csr_row(ds, i, &col, &val);
            double s = wbias * bb, r2 = bb;
            for (size_t k = 0; k < nnz; k++) {
                if (col[k] < dw) s += (double)w[col[k]] * val[k];
                r2 += (double)val[k] * val[k];
            }
            m[i] = ds->y[i] * s / wn;
            if (r2 > R2) R2 = r2;
        }
        pt_window_end(ds, &at);
        *R2_out = R2;
        return PT_OK;
    }
    /* compact rows: each widened first (the float32 copy's values) */
    float *wide = ds->dtype != PT_DTYPE_F32 ? pt_alloc(ds->stride * sizeof *wide, "a row") : NULL;
    if (ds->dtype != PT_DTYPE_F32 && !wide) return PT_ERR_NOMEM;
    pt_window_pos at = {0};
    for (size_t i = 0; i < ds->n; i++) {
        pt_window_at(ds, &at, i);
        const float *x = wide ? pt_compact_widen_row(ds, i, wide) : pt_window_row(ds, &at, i);
        if (map) {
            map->map(map->ctx, x, buf);
            x = buf;
        }
        double s = wbias * bb, r2 = bb;
        for (size_t j = 0; j < dw; j++) {
            s += (double)w[j] * x[j];
            r2 += (double)x[j] * x[j];
        }
        m[i] = ds->y[i] * s / wn;
        if (r2 > R2) R2 = r2;
    }
    pt_window_end(ds, &at);
    pt_free(wide);
    *R2_out = R2;
    return PT_OK;
}

/* min over c >= 0 of A c^2 + 2 E sum_i max(0, 1 - c m_i); m is sorted (descending) in place.
 * f'(c) = 2 A c - 2 E S(c), S(c) the sum of m_i over points still inside the margin
 * (c m_i < 1). Positive m_i leave at c = 1/m_i, largest m_i first. */
static void hinge_minimum(double *m, size_t n, double A, double E, double *c_out, double *loss_out,
                          double *bound_out)
{
    qsort(m, n, sizeof *m, cmp_desc);
    double S = 0.0;
    for (size_t i = 0; i < n; i++) S += m[i];
    double prev = 0.0, c = 0.0;
    size_t k = 0;
    for (;;) {
        double next = (k < n && m[k] > 0.0) ? 1.0 / m[k] : INFINITY;
        double cand = A > 0.0 ? E * S / A : INFINITY;
        if (cand <= next) {
            c = cand > prev ? cand : prev;
            break;
        }
        S -= m[k];
        prev = next;
        k++;
    }
    double hinge = 0.0;
    for (size_t i = 0; i < n; i++) {
        double l = 1.0 - c * m[i];
        if (l > 0.0) hinge += l;
    }
    *c_out = c;
    *loss_out = hinge;
    *bound_out = A * c * c + 2.0 * E * hinge;
}

static double min_of(const double *m, size_t n)
{
    double g = INFINITY;
    for (size_t i = 0; i < n; i++)
        if (m[i] < g) g = m[i];
    return n ? g : 0.0;
}

pt_status pt_bounds_compute(const pt_dataset *ds, const float *wstar, float wbias, int bias,
                            pt_bounds *out)
{
    pt_clear_error();
    memset(out, 0, sizeof *out);
    if (ds->nclass != 2) return pt_fail(PT_ERR_LABELS, "bounds need two classes (got %zu)", ds->nclass);
    size_t n = ds->n;
    double *m = malloc((n ? n : 1) * sizeof *m);
    if (!m) return pt_fail(PT_ERR_NOMEM, "cannot allocate %zu margins", n);
    double R2;
    pt_status s = linear_margins(ds, NULL, NULL, wstar, ds->d, wbias, bias, &R2, m);
    if (s == PT_OK) {
        double gamma = min_of(m, n);
        out->R = sqrt(R2);
        out->gamma = gamma;
        out->mistake_bound = gamma > 0.0 ? R2 / (gamma * gamma) : INFINITY;
        hinge_minimum(m, n, R2, 1.0, &out->wstar_norm, &out->hinge_loss, &out->hinge_mistake_bound);
    }
    free(m);
    return s;
}

/* ------------------------------------------------------------------ bounds of a run */

static void not_covered(pt_run_bounds *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void not_covered(pt_run_bounds *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->reason, sizeof out->reason, fmt, ap);
    va_end(ap);
    out->covered = 0;
}

/* Margins of a kernel model w* = sum_j coef_j phi(sv_j) over the rows of ds (either layout), in
 * the feature space of this run (its bias: the constant coordinate of K + 1, or none):
 * R^2 = max K(x, x) (+ 1), |w*|^2 = sum_j coef_j f(sv_j). */
static pt_status kernel_margins(const pt_dataset *ds, const pt_model *ref, int bias, double *R2_out,
                                double *m)
{
    pt_model in_run_space = *ref; /* read only: the same vectors, the run's constant coordinate */
    in_run_space.bias = bias;
    in_run_space.params.bias = bias;
    pt_kfun kf;
    pt_kfun_from_params(&kf, &in_run_space.params);
    kf.add = 0.0f;
    size_t n = ds->n, nsv = ref->n_sv, rows = n > nsv ? n : nsv;
    float *f = pt_alloc((rows ? rows : 1) * sizeof(float), "kernel margins");
    if (!f) return PT_ERR_NOMEM;
    pt_dataset svs = {.n = nsv, .d = ref->d, .stride = pt_stride_for(ref->d), .X = ref->sv,
                      .layout = ref->sv_ptr ? PT_LAYOUT_SPARSE : PT_LAYOUT_DENSE,
                      .rowptr = ref->sv_ptr, .col = ref->sv_col, .val = ref->sv_val};
    /* compact rows: each widened for K(x, x) (the kernel scores widen their own) */
    float *wide = ds->dtype != PT_DTYPE_F32 ? pt_alloc(ds->stride * sizeof *wide, "a row") : NULL;
    pt_status s = PT_ERR_NOMEM;
    if (ds->dtype == PT_DTYPE_F32 || wide) s = pt_model_kernel_scores(&in_run_space, &svs, f);
    double wn2 = 0.0;
    for (size_t j = 0; s == PT_OK && j < nsv; j++) wn2 += (double)ref->coef[j] * f[j];
    if (s == PT_OK && !(wn2 > 0.0)) s = pt_fail(PT_ERR_INVALID, "the reference separator is zero");
    if (s == PT_OK) s = pt_model_kernel_scores(&in_run_space, ds, f);
    if (s == PT_OK) {
        double R2 = 0.0, wn = sqrt(wn2);
        for (size_t i = 0; i < n; i++) {
            /* K(x, x) of a sparse row from its values alone: the same sums (the zeros add
             * nothing, and x - x is 0 wherever x is) */
            const uint32_t *col;
            const float *x = wide ? pt_compact_widen_row(ds, i, wide)
                             : ds->X ? ds->X + i * ds->stride : NULL;
            size_t len = ds->layout == PT_LAYOUT_SPARSE ? pt_csr_row(ds, i, &col, &x) : ds->d;
            double r2 = pt_kfun_ref(&kf, x, x, len) + (bias ? 1.0 : 0.0);
            if (r2 > R2) R2 = r2;
            m[i] = ds->y[i] * (double)f[i] / wn;
        }
        *R2_out = R2;
    }
    pt_free(f);
    pt_free(wide);
    return s;
}

/* a: a model's (gamma a number), b: the run's on ds (gamma maybe a rule). */
static bool same_kernel(const pt_train_params *a, const pt_train_params *b, const pt_dataset *ds)
{
    if (a->kernel.kind != b->kernel.kind) return false;
    const float gb = pt_gamma_resolve(b->kernel.gamma, ds);
    switch (a->kernel.kind) {
    case PT_KERNEL_POLY: return a->kernel.degree == b->kernel.degree && a->kernel.gamma == gb && a->kernel.coef0 == b->kernel.coef0;
    case PT_KERNEL_RBF: return a->kernel.gamma == gb;
    case PT_KERNEL_EXPR: {
        pt_kexpr ea, eb;
        if (pt_kexpr_parse(a->kernel.expr, &ea) != PT_OK ||
            pt_kexpr_parse(b->kernel.expr, &eb) != PT_OK)
            return false;
        pt_kexpr_resolve(&eb, ds);
        return pt_kexpr_same(&ea, &eb);
    }
    default: return true;
    }
}

/* The dimension of the run's space (the expanded one with an expansion). */
static pt_status space_dim(const pt_dataset *ds, const pt_train_params *p, size_t *out)
{
    *out = ds->d;
    if (p->expand.kind == PT_EXPAND_NONE) return PT_OK;
    *out = pt_expand_dim(&p->expand, ds->d);
    if (*out == SIZE_MAX) return pt_fail(PT_ERR_LIMIT, "the expansion's dimension overflows");
    return PT_OK;
}

pt_status pt_bounds_check_reference(const pt_dataset *ds, const pt_train_params *p,
                                    const pt_model *reference)
{
    pt_clear_error();
    size_t space_d;
    PT_TRY(space_dim(ds, p, &space_d));
    if (!reference) {
        if (!pt_dataset_truth(ds, NULL, NULL))
            return pt_fail(PT_ERR_INVALID, "no reference separator: the data has no generator w* "
                           "(only data from pt_generate keeps it); give a reference model");
        return PT_OK;
    }
    pt_model_info mi;
    pt_model_get_info(reference, &mi);
    if (mi.nclass != 2)
        return pt_fail(PT_ERR_INVALID, "the reference separator must be a two-class model (this "
                       "one has %zu classes)", mi.nclass);
    bool kernel = pt_model_weights(reference, NULL) == NULL;
    bool expanded = p->expand.kind != PT_EXPAND_NONE;
    size_t want = kernel ? ds->d : space_d;
    if (mi.d != want && !(expanded && !kernel && mi.d == ds->d))
        return pt_fail(PT_ERR_INVALID, "the reference separator has %zu features; the run trains on "
                       "%zu%s", mi.d, want, expanded && !kernel ? " (the expanded features)" : "");
    return PT_OK;
}

pt_status pt_bounds_for_run(const pt_dataset *ds, const pt_train_params *p,
                            const pt_model *reference, int passes, pt_run_bounds *out)
{
    pt_clear_error();
    memset(out, 0, sizeof *out);
    PT_TRY(pt_bounds_check_reference(ds, p, reference));
    out->R = out->gamma = NAN;
    out->separable_bound = out->hinge_bound = out->hinge_scale = out->hinge_loss = NAN;
    out->tau = p->margin;
    out->eta = p->eta;
    out->passes = passes;
    const bool expanded = p->expand.kind != PT_EXPAND_NONE;
    const bool kernel_space = p->path == PT_PATH_KERNEL && p->kernel.kind != PT_KERNEL_LINEAR;
    snprintf(out->space, sizeof out->space, "%s",
             expanded ? "expanded" : kernel_space ? "kernel" : "input");
    size_t space_d;
    PT_TRY(space_dim(ds, p, &space_d));
    /* the reference separator (checked above): a linear model (w, b) of dw features, a kernel
     * model, or the generator's w* */
    const bool ref_kernel = reference && pt_model_weights(reference, NULL) == NULL;
    const size_t dw = reference ? reference->d : ds->d;
    float *w = NULL;
    float wb = 0.0f;

    /* which theorem covers the run, before measuring anything */
    if (ds->nclass != 2) {
        not_covered(out, "the bounds are for two classes; this run trained %zu (%s)", ds->nclass,
                    p->multiclass == PT_MULTI_DIRECT ? "the multiclass perceptron" : "one-vs-rest");
        return PT_OK;
    }
    if (p->path == PT_PATH_BATCH)
        not_covered(out, "the classic mistake bounds are for the online perceptron; the batch path "
                         "takes averaged subgradient steps");
    else if (p->init || p->init_random)
        not_covered(out, "the run started from %s weights; the classic bounds start from w = 0",
                    p->init ? "a model's" : "random");
    else if (p->path == PT_PATH_KERNEL && p->kernel.budget && p->kernel.budget < ds->n)
        not_covered(out, "the run kept at most %zu support vectors (pt_train_params.budget), "
                         "removing others; the classic bounds are for the perceptron that keeps "
                         "every update", p->kernel.budget);
    else if (p->scale != PT_SCALE_NONE)
        not_covered(out, "the run trains on scaled features (pt_train_params.scale), where R and "
                         "the reference's margin are not those of the data as given");
    else if (p->class_weight)
        not_covered(out, "the run weighs its classes (pt_train_params.class_weight); the classic "
                         "bounds are for one step size eta");
    else if (kernel_space && !ref_kernel)
        not_covered(out, "the run trains in the feature space of the %s kernel, where a linear w* "
                         "does not live: give a reference kernel model with the same kernel",
                    pt_kernel_name(p->kernel.kind));
    else if (ref_kernel && (p->path != PT_PATH_KERNEL || !same_kernel(&reference->params, p, ds)))
        not_covered(out, "the reference is a kernel model whose feature space is not the run's "
                         "(another path or kernel)");
    else if (expanded && dw == ds->d)
        not_covered(out, "the run trains on the expanded features phi(x), the reference w* lives "
                         "in the input space: give a reference model trained with the same "
                         "expansion");
    else
        out->covered = 1;
    /* R and gamma are measured where the reference lives in the run's space (or the input
     * space, for an uncovered run that trains there) */
    bool measurable = ref_kernel ? p->path == PT_PATH_KERNEL &&
                                       same_kernel(&reference->params, p, ds)
                                 : dw == space_d && !kernel_space;
    if (!measurable) return PT_OK;

    size_t n = ds->n;
    double *m = malloc((n ? n : 1) * sizeof *m);
    if (!m) return pt_fail(PT_ERR_NOMEM, "cannot allocate %zu margins", n);
    double R2 = 0.0;
    pt_status s = PT_OK;
    if (ref_kernel) {
        s = kernel_margins(ds, reference, p->bias, &R2, m);
    } else {
        const float *wv;
        if (reference) {
            wv = pt_model_weights(reference, &wb);
            if (!reference->bias) wb = 0.0f;
        } else {
            const double *truth = pt_dataset_truth(ds, NULL, NULL);
            if (!(w = malloc((dw ? dw : 1) * sizeof *w))) s = pt_fail(PT_ERR_NOMEM, "cannot copy w*");
            for (size_t j = 0; w && j < dw; j++) w[j] = (float)truth[j];
            wv = w;
        }
        pt_expander *e = NULL;
        float *buf = NULL;
        pt_row_map map;
        if (s == PT_OK && expanded) {
            /* phi(x) row by row, as the streamed online path computes it */
            const pt_kernels *k;
            s = pt_kernels_get(PT_ISA_AUTO, &k);
            if (s == PT_OK) s = pt_expander_create(&p->expand, ds->d, k, &e);
            if (s == PT_OK && !(buf = pt_calloc(pt_stride_for(space_d) * sizeof(float), "expanded row")))
                s = PT_ERR_NOMEM;
            if (s == PT_OK) map = pt_expander_row_map(e);
        }
        if (s == PT_OK) s = linear_margins(ds, expanded ? &map : NULL, buf, wv, dw, wb, p->bias, &R2, m);
        pt_free(buf);
        pt_expander_free(e);
    }
    if (s == PT_OK) {
        out->R = sqrt(R2);
        out->gamma = min_of(m, n);
        if (out->covered) {
            /* (R^2 + 2 tau / eta): the growth of |w|^2 an update allows, over eta^2 */
            double A = R2 + 2.0 * (double)p->margin / (double)p->eta;
            out->separable = out->gamma > 0.0;
            out->separable_bound = out->separable ? A / (out->gamma * out->gamma) : INFINITY;
            hinge_minimum(m, n, A, passes, &out->hinge_scale, &out->hinge_loss, &out->hinge_bound);
        }
    }
    free(m);
    free(w);
    return s;
}
