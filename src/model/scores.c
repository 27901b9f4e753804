/* layers: reads rows by form until ported to data/rows.h */
/*
 * Scores: what a model says of each row. Linear models are a dot per row (one-vs-rest and the
 * multiclass perceptron: one per class, by the table's dot_many; on sparse data the sparse
 * kernels', a gather a row, O(nnz)), the voted perceptron a vote
 * of its vectors, a model trained on an expansion expands the rows block by block first
 * (features/expand), and a kernel model sums its support vectors' kernel values, block by
 * block (features/gram). Compact rows (bf16, u8) are scored as they are stored: each row, or
 * each block of rows, widened into a buffer of the thread first, exactly as their float32 copy
 * holds them, so the scores are the copy's bit for bit with no copy of the data made.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "features/expand.h"
#include "features/gram.h"
#include "model.h"

void pt_warn_extra_features(size_t model_d, size_t data_d)
{
    if (data_d > model_d)
        pt_log(PT_LOG_WARN, "model has %zu features, data has %zu: features %zu..%zu ignored",
               model_d, data_d, model_d + 1, data_d);
}

float pt_vote_score(const pt_kernels *k, const float *V, size_t ldv, const float *Vb,
                    const float *Vc, size_t nv, const float *x, size_t len, float bias)
{
    double vote = 0.0;
    for (size_t v = 0; v < nv; v++) {
        float s = k->dot(V + v * ldv, x, len) + Vb[v] * bias;
        vote += pt_sign_positive(s) ? Vc[v] : -Vc[v];
    }
    return (float)vote;
}

/* The voted score of a sparse row (nnz pairs idx, val), as pt_vote_score of its dense form. */
static float vote_score_sparse(const pt_kernels *k, const pt_model *m, size_t ldv,
                               const uint32_t *idx, const float *val, size_t nnz, float bias)
{
    double vote = 0.0;
    for (size_t v = 0; v < m->n_votes; v++) {
        float s = k->sparse->dot(m->votes + v * ldv, idx, val, nnz) + m->vote_b[v] * bias;
        vote += pt_sign_positive(s) ? m->vote_c[v] : -m->vote_c[v];
    }
    return (float)vote;
}

/* Row i of a sparse dataset, its pairs of columns below d only (a model of d features ignores
 * the data's further ones): *idx, *val and their count, found by bisection. */
static size_t sparse_row_below(const pt_dataset *ds, size_t i, size_t d, const uint32_t **idx,
                               const float **val)
{
    size_t nnz = pt_csr_row(ds, i, idx, val);
    const uint32_t *c = *idx;
    if (nnz == 0 || c[nnz - 1] < d) return nnz;
    size_t lo = 0, hi = nnz; /* the first column >= d */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c[mid] < d) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* binary_scores of a linear model on a sparse dataset: a gather a row, O(nnz). */
static void binary_scores_sparse(const pt_kernels *k, const pt_model *m, const pt_dataset *ds,
                                 float *scores)
{
    const size_t mstride = pt_stride_for(m->d);
    const float bias = m->bias ? 1.0f : 0.0f;
#pragma omp parallel for schedule(static) if (ds->nnz * (m->n_votes ? m->n_votes : 1) > 65536)
    for (size_t i = 0; i < ds->n; i++) {
        const uint32_t *idx;
        const float *val;
        size_t nnz = sparse_row_below(ds, i, m->d, &idx, &val);
        scores[i] = m->n_votes ? vote_score_sparse(k, m, mstride, idx, val, nnz, bias)
                               : k->sparse->dot(m->w, idx, val, nnz) + m->b * bias;
    }
}

/* Scores of a model trained on an expansion: each row expanded block-wise, then the dot. */
static pt_status expanded_scores(const pt_model *m, const pt_dataset *ds, float *scores)
{
    const size_t d_in = m->expand_d_in;
    pt_warn_extra_features(d_in, ds->d);
    pt_expand_params ep = m->params.expand;
    ep.max_features = SIZE_MAX; /* the model's weights exist already */
    const pt_kernels *k;
    PT_TRY(pt_kernels_get(PT_ISA_AUTO, &k));
    pt_expander *e;
    PT_TRY(pt_expander_create(&ep, d_in, k, &e));
    const size_t dim = pt_expander_d_out(e);
    if (dim != m->d) {
        pt_expander_free(e);
        return pt_fail(PT_ERR_FORMAT, "the model has %zu weights but its expansion gives %zu",
                       m->d, dim);
    }
    const size_t n = ds->n, so = pt_stride_for(m->d), B = pt_expander_block_rows(e);
    const size_t nblocks = (n + B - 1) / B;
    /* rows narrower than the model's input, and sparse rows, are copied into zero-padded
     * staging rows (a sparse row's columns past the model's input left out) */
    const bool sparse = ds->layout == PT_LAYOUT_SPARSE, stage = ds->d < d_in || sparse;
    /* compact rows: each block widened first (the float32 copy's rows, block by block) */
    const bool compact = !sparse && ds->dtype != PT_DTYPE_F32;
    const size_t si = pt_stride_for(d_in);
    const float bias = m->bias ? 1.0f : 0.0f;
    int failed = 0;
#pragma omp parallel if (nblocks > 1) reduction(| : failed)
    {
        float *buf = pt_calloc(B * so * sizeof(float), "expanded rows");
        float *in = stage ? pt_calloc(B * si * sizeof(float), "staged rows") : NULL;
        float *wide = compact ? pt_alloc(B * ds->stride * sizeof(float), "widened rows") : NULL;
        if (!buf || (stage && !in) || (compact && !wide)) failed = 1;
#pragma omp for schedule(dynamic)
        for (size_t bi = 0; bi < nblocks; bi++) {
            if (failed) continue;
            size_t i0 = bi * B, rows = n - i0 < B ? n - i0 : B;
            const float *X = sparse ? NULL : pt_rows_f32(k, ds, i0, rows, wide);
            size_t ldx = ds->stride;
            if (stage && sparse) {
                memset(in, 0, rows * si * sizeof(float));
                for (size_t i = 0; i < rows; i++) {
                    const uint32_t *col;
                    const float *val;
                    size_t nz = pt_csr_row(ds, i0 + i, &col, &val);
                    while (nz > 0 && col[nz - 1] >= d_in) nz--;
                    k->sparse->scatter(col, val, nz, in + i * si);
                }
            }
            if (stage) {
                for (size_t i = 0; !sparse && i < rows; i++)
                    memcpy(in + i * si, X + i * ds->stride, ds->d * sizeof(float));
                X = in;
                ldx = si;
            }
            pt_expander_block(e, X, ldx, rows, buf, so);
            for (size_t i = 0; i < rows; i++) {
                const float *z = buf + i * so;
                if (!m->n_votes) {
                    scores[i0 + i] = k->dot(m->w, z, so) + m->b * bias;
                    continue;
                }
                scores[i0 + i] = pt_vote_score(k, m->votes, so, m->vote_b, m->vote_c,
                                               m->n_votes, z, so, bias);
            }
        }
        pt_free(buf);
        pt_free(in);
        pt_free(wide);
    }
    pt_expander_free(e);
    if (failed) return pt_fail(PT_ERR_NOMEM, "cannot allocate the blocks to expand rows in");
    return PT_OK;
}

#define PRED_ROWS 240  /* test rows a block at most (a multiple of 16) */
#define PRED_SV PT_SV_BLOCK /* support vectors a block */

/* Support vectors in CSR: the model's own, or a copy of its dense ones (their non-zeros). */
typedef struct sv_csr {
    const uint64_t *ptr;
    const uint32_t *col;
    const float *val;
    void *owned[3];
} sv_csr;

static pt_status sv_csr_get(const pt_model *m, sv_csr *c)
{
    memset(c, 0, sizeof *c);
    if (m->sv_ptr) {
        c->ptr = m->sv_ptr;
        c->col = m->sv_col;
        c->val = m->sv_val;
        return PT_OK;
    }
    const size_t nsv = m->n_sv, d = m->d, stride = pt_stride_for(d);
    size_t nnz = 0;
    for (size_t i = 0; i < nsv * stride; i++) nnz += m->sv[i] != 0.0f;
    uint64_t *ptr = c->owned[0] = pt_alloc((nsv + 1) * sizeof *ptr, "support vector offsets");
    uint32_t *col = c->owned[1] = pt_alloc((nnz ? nnz : 1) * sizeof *col, "support vector columns");
    float *val = c->owned[2] = pt_alloc((nnz ? nnz : 1) * sizeof *val, "support vector values");
    if (!ptr || !col || !val) return PT_ERR_NOMEM;
    ptr[0] = 0;
    for (size_t i = 0, z = 0; i < nsv; i++) {
        for (size_t j = 0; j < d; j++)
            if (m->sv[i * stride + j] != 0.0f) {
                col[z] = (uint32_t)j;
                val[z++] = m->sv[i * stride + j];
            }
        ptr[i + 1] = z;
    }
    c->ptr = ptr;
    c->col = col;
    c->val = val;
    return PT_OK;
}

static void sv_csr_free(sv_csr *c)
{
    for (int i = 0; i < 3; i++) pt_free(c->owned[i]);
}

/* Kernel scores where the support vectors or the rows are sparse: the support vectors in CSR,
 * transposed (features/gram.h's pt_gram_csc), and each row's non-zeros below the model's d (a
 * dense row's gathered first) summed over their columns; the values summed with the
 * coefficients in double. The features past the model's d are ignored, and the row's squared
 * norm is over the others. A training row of a sparse model gets the kernel values training
 * computed, bit for bit. */
static pt_status sparse_kernel_scores(const pt_model *m, const pt_dataset *ds, const pt_kfun *kf,
                                      const pt_kernels *k, float *scores)
{
    const size_t n = ds->n, nsv = m->n_sv, d = m->d, npad = pt_round_up(nsv, 16);
    /* the squared norms enter RBF and kernel expressions (normalize, rbf terms) */
    const bool norms = kf->kind == PT_KERNEL_RBF || kf->kind == PT_KERNEL_EXPR;
    const bool sparse = ds->layout == PT_LAYOUT_SPARSE;
    const size_t dx = d < ds->d ? d : ds->d; /* a dense row's columns read */
    sv_csr c;
    pt_gram_csc t = {0};
    pt_status st = sv_csr_get(m, &c);
    /* columns past the last one used hold nothing: the transpose stops there */
    size_t used = 0;
    for (uint64_t z = 0; st == PT_OK && z < c.ptr[nsv]; z++)
        if (c.col[z] + (size_t)1 > used) used = c.col[z] + (size_t)1;
    if (st == PT_OK) st = pt_gram_csc_init(&t, c.ptr, c.col, c.val, nsv, used);
    float *zn = st == PT_OK && norms ? pt_alloc(npad * sizeof(float), "squared norms") : NULL;
    if (st == PT_OK && norms && !zn) st = PT_ERR_NOMEM;
    if (st != PT_OK) {
        pt_gram_csc_free(&t);
        sv_csr_free(&c);
        return st;
    }
    if (norms) pt_gram_sparse_norms(c.ptr, c.val, nsv, k, zn);
    const int threads = pt_threads_resolve(0);
    int failed = 0;
#pragma omp parallel num_threads(threads) if (n * (size_t)c.ptr[nsv] > 65536) reduction(| : failed)
    {
        float *out = pt_alloc(npad * sizeof(float), "kernel values");
        uint32_t *gcol = sparse ? NULL : pt_alloc((dx ? dx : 1) * sizeof *gcol, "a row's columns");
        float *gval = sparse ? NULL : pt_alloc((dx ? dx : 1) * sizeof *gval, "a row's values");
        const bool compact = !sparse && ds->dtype != PT_DTYPE_F32; /* a row widened first */
        float *wide = compact ? pt_alloc(ds->stride * sizeof *wide, "a widened row") : NULL;
        if (!out || (!sparse && (!gcol || !gval)) || (compact && !wide)) failed = 1;
#pragma omp for schedule(dynamic, 16)
        for (size_t i = 0; i < n; i++) {
            if (failed) continue;
            const uint32_t *col;
            const float *val;
            size_t nz;
            if (sparse) {
                nz = pt_csr_row(ds, i, &col, &val);
                while (nz > 0 && col[nz - 1] >= d) nz--; /* features past the model's */
            } else {
                const float *row = pt_row_f32(k, ds, i, wide);
                nz = 0;
                for (size_t j = 0; j < dx; j++)
                    if (row[j] != 0.0f) {
                        gcol[nz] = (uint32_t)j;
                        gval[nz++] = row[j];
                    }
                col = gcol;
                val = gval;
            }
            float xn = norms ? k->dot(val, val, nz) : 0.0f;
            pt_gram_csc_kvec(&t, kf, k, col, val, nz, xn, zn, out, 0.0f, NULL);
            double acc = 0.0;
            for (size_t j0 = 0; j0 < nsv; j0 += PRED_SV)
                acc += k->dot(out + j0, m->coef + j0, nsv - j0 < PRED_SV ? nsv - j0 : PRED_SV);
            scores[i] = (float)acc;
        }
        pt_free(out);
        pt_free(gcol);
        pt_free(gval);
        pt_free(wide);
    }
    pt_free(zn);
    pt_gram_csc_free(&t);
    sv_csr_free(&c);
    return failed ? pt_fail(PT_ERR_NOMEM, "cannot allocate the buffers to score rows in") : PT_OK;
}

pt_status pt_model_kernel_scores(const pt_model *m, const pt_dataset *ds, float *scores)
{
    const size_t n = ds->n, nsv = m->n_sv;
    if (n == 0) return PT_OK;
    if (nsv == 0) {
        for (size_t i = 0; i < n; i++) scores[i] = 0.0f;
        return PT_OK;
    }
    const pt_kernels *k;
    PT_TRY(pt_kernels_get(PT_ISA_AUTO, &k));
    pt_kfun kf;
    pt_kfun_from_params(&kf, &m->params);
    kf.add = m->bias ? 1.0f : 0.0f;
    if (m->sv_ptr || ds->layout == PT_LAYOUT_SPARSE)
        return sparse_kernel_scores(m, ds, &kf, k, scores);
    const int threads = pt_threads_resolve(0);
    /* Features the model and the data share; the data's extra ones are ignored, missing ones
     * are zero (so they drop out of x.z, and the support vectors keep their whole norm). */
    const size_t dm = m->d < ds->d ? m->d : ds->d;
    pt_gram_rows sv;
    PT_TRY(pt_gram_rows_init(&sv, m->sv, nsv, dm, pt_stride_for(m->d), m->d, kf.kind, k, threads));
    /* test rows a block: 240, fewer for very wide data (the packed block stays under 8 MiB) */
    size_t rows = (8u << 20) / ((dm ? dm : 1) * sizeof(float)) / 16 * 16;
    rows = rows < 16 ? 16 : rows > PRED_ROWS ? PRED_ROWS : rows;
    const size_t nblocks = (n + rows - 1) / rows;
    /* compact rows: a block's rows widened before they are packed (the float32 copy's) */
    const size_t wide = ds->dtype != PT_DTYPE_F32 ? rows * ds->stride : 0;
    const size_t per_thread = (rows * dm + rows + rows * PRED_SV + wide) * sizeof(float);
    float *work = pt_alloc(per_thread * (size_t)threads, "prediction blocks");
    if (!work) {
        pt_gram_rows_free(&sv);
        return PT_ERR_NOMEM;
    }
    const ptrdiff_t nb = (ptrdiff_t)nblocks;
#pragma omp parallel num_threads(threads)
    {
#ifdef _OPENMP
        float *w = work + (size_t)omp_get_thread_num() * (per_thread / sizeof(float));
#else
        float *w = work;
#endif
        float *P = w, *norm = P + rows * dm, *C = norm + rows, *W = C + rows * PRED_SV;
#pragma omp for schedule(dynamic, 1)
        for (ptrdiff_t b = 0; b < nb; b++) {
            size_t i0 = (size_t)b * rows, ni = n - i0 < rows ? n - i0 : rows;
            pt_gram_rows tr;
            pt_gram_rows_pack(&tr, pt_rows_f32(k, ds, i0, ni, W), ni, dm, ds->stride, dm, kf.kind,
                              k, P, norm);
            double acc[PRED_ROWS] = {0};
            for (size_t j0 = 0; j0 < nsv; j0 += PRED_SV) {
                size_t nj = nsv - j0 < PRED_SV ? nsv - j0 : PRED_SV;
                pt_gram_block(&tr, 0, ni, &sv, j0, nj, &kf, k, C, PRED_SV);
                for (size_t i = 0; i < ni; i++) acc[i] += k->dot(C + i * PRED_SV, m->coef + j0, nj);
            }
            for (size_t i = 0; i < ni; i++) scores[i0 + i] = (float)acc[i];
        }
    }
    pt_free(work);
    pt_gram_rows_free(&sv);
    return PT_OK;
}

static pt_status binary_scores(const pt_model *m, const pt_dataset *ds, float *scores);

pt_status pt_model_scaled(const pt_model *m, const pt_dataset *ds, const pt_dataset **use,
                          pt_dataset **tmp)
{
    *tmp = NULL;
    *use = ds;
    /* compact rows are scored as they are (each row, or block of rows, widened where it is
     * read); a scaling needs the scaled float32 copy, which pt_scaling_apply makes from compact
     * rows directly: one copy */
    if (!m->scale) return PT_OK;
    PT_TRY(pt_scaling_apply(m->scale, ds, 0, tmp));
    *use = *tmp;
    return PT_OK;
}

pt_status pt_model_scores(const pt_model *m, const pt_dataset *ds, float *scores)
{
    pt_clear_error();
    const pt_dataset *use;
    pt_dataset *tmp;
    PT_TRY(pt_model_scaled(m, ds, &use, &tmp));
    pt_vote_cost_log(m, use);
    pt_status s = pt_model_scores_raw(m, use, scores);
    pt_dataset_free(tmp);
    return s == PT_OK ? pt_dataset_intact(ds) : s; /* (zeros read from a file that shrank) */
}

pt_status pt_model_scores_raw(const pt_model *m, const pt_dataset *ds, float *scores)
{
    if (m->nclass > 2)
        return pt_fail(PT_ERR_INVALID, "a %zu-class model has one score per class: use "
                                       "pt_model_class_scores", m->nclass);
    /* trained on an expansion: expand the rows (block-wise) before the dot */
    if (m->params.expand.kind != PT_EXPAND_NONE && m->w) return expanded_scores(m, ds, scores);
    pt_warn_extra_features(m->d, ds->d);
    return binary_scores(m, ds, scores);
}

/* The voted scores of dense rows, a block of VOTE_ROWS rows at a time against blocks of
 * vectors of about VOTE_BLOCK_BYTES, which stay in cache while each row of the block takes its
 * dots with them: the vectors are read from memory once a block of rows rather than once a
 * row, and each row's vote adds the same dots (the table's dot, the same operands) in the same
 * order, vector 0 first, as pt_vote_score: the same scores bit for bit. */
#define VOTE_ROWS 32
#define VOTE_BLOCK_BYTES ((size_t)128 << 10)
static pt_status vote_scores_dense(const pt_kernels *k, const pt_model *m, const pt_dataset *ds,
                                   size_t len, float bias, float *scores)
{
    const size_t mstride = pt_stride_for(m->d), nv = m->n_votes, n = ds->n;
    size_t vb = VOTE_BLOCK_BYTES / (mstride * sizeof(float));
    vb = vb < 1 ? 1 : vb;
    const ptrdiff_t nb = (ptrdiff_t)((n + VOTE_ROWS - 1) / VOTE_ROWS);
    const bool compact = ds->dtype != PT_DTYPE_F32;
    int failed = 0;
#pragma omp parallel if (n * nv > 65536) reduction(| : failed)
    {
        float *wide = compact ? pt_alloc(VOTE_ROWS * ds->stride * sizeof *wide, "widened rows")
                              : NULL;
        if (compact && !wide) failed = 1;
#pragma omp for schedule(dynamic, 1)
        for (ptrdiff_t b = 0; b < nb; b++) {
            if (failed) continue;
            const size_t i0 = (size_t)b * VOTE_ROWS, rows = n - i0 < VOTE_ROWS ? n - i0 : VOTE_ROWS;
            const float *X = pt_rows_f32(k, ds, i0, rows, wide);
            double vote[VOTE_ROWS] = {0};
            for (size_t v0 = 0; v0 < nv; v0 += vb) {
                const size_t v1 = nv - v0 < vb ? nv : v0 + vb;
                for (size_t r = 0; r < rows; r++)
                    for (size_t v = v0; v < v1; v++) {
                        float sv = k->dot(m->votes + v * mstride, X + r * ds->stride, len) +
                                   m->vote_b[v] * bias;
                        vote[r] += pt_sign_positive(sv) ? m->vote_c[v] : -m->vote_c[v];
                    }
            }
            for (size_t r = 0; r < rows; r++) scores[i0 + r] = (float)vote[r];
        }
        pt_free(wide);
    }
    return failed ? pt_fail(PT_ERR_NOMEM, "cannot allocate the rows to widen") : PT_OK;
}

/* Scores of a binary model on the rows as they are (no expansion, no warning). */
static pt_status binary_scores(const pt_model *m, const pt_dataset *ds, float *scores)
{
    if (!m->w) return pt_model_kernel_scores(m, ds, scores);
    const pt_kernels *k;
    PT_TRY(pt_kernels_get(PT_ISA_AUTO, &k));
    if (ds->layout == PT_LAYOUT_SPARSE) {
        binary_scores_sparse(k, m, ds, scores);
        return PT_OK;
    }
    /* w is zero past the model's d and x is zero past the data's d, so a dot over the shorter
     * padded length ignores the features the model never saw and counts missing ones as 0. */
    size_t mstride = pt_stride_for(m->d);
    size_t len = mstride < ds->stride ? mstride : ds->stride;
    float bias = m->bias ? 1.0f : 0.0f;
    if (m->n_votes) return vote_scores_dense(k, m, ds, len, bias, scores);
    /* compact rows: each widened into the thread's row buffer first */
    const bool compact = ds->dtype != PT_DTYPE_F32;
    const bool par = ds->n > 4096;
    int failed = 0;
#pragma omp parallel if (par) reduction(| : failed)
    {
        float *wide = compact ? pt_alloc(ds->stride * sizeof *wide, "a widened row") : NULL;
        if (compact && !wide) failed = 1;
#pragma omp for schedule(static)
        for (size_t i = 0; i < ds->n; i++) {
            if (failed) continue;
            const float *x = pt_row_f32(k, ds, i, wide);
            scores[i] = k->dot(m->w, x, len) + m->b * bias;
        }
        pt_free(wide);
    }
    return failed ? pt_fail(PT_ERR_NOMEM, "cannot allocate a row to widen") : PT_OK;
}

/* Kernel one-vs-rest on dense rows: is scoring through the classes' set of distinct support
 * vectors (ovr_kernel_scores) the cheaper? A kernel value costs d multiply-adds and feeds one
 * class's sum; through the set, each distinct vector's feeds all K. */
static bool ovr_kernel_shared(const pt_model *m, const pt_dataset *ds)
{
    if (m->W || m->path != PT_PATH_KERNEL || ds->layout == PT_LAYOUT_SPARSE) return false;
    for (size_t c = 0; c < m->nclass; c++)
        if (m->sub[c]->sv_ptr || !m->sub[c]->sv) return false;
    return true;
}

/* Kernel one-vs-rest: each row's kernel values against the classes' distinct support vectors
 * (the set the model file keeps, pt_sv_set), computed once, then each class's coefficients
 * over the set (zero where a vector is not the class's), block by block of PRED_SV vectors.
 * Where the classes share vectors this computes fewer kernel values than scoring each class
 * alone; the sums run in the set's order, so a class's score equals its own model's to
 * rounding (pt_model_kernel_scores sums in the class's order). */
static pt_status ovr_kernel_scores(const pt_model *m, const pt_dataset *ds, float *out)
{
    const size_t K = m->nclass, n = ds->n, d = m->d, stride = pt_stride_for(d);
    pt_sv_set u;
    PT_TRY(pt_sv_set_build(&u, m));
    const size_t N = u.n, npad = pt_round_up(N ? N : 1, 16);
    if (!pt_sv_set_shared(N, u.total, d, K)) { /* little shared: each class alone is cheaper */
        pt_sv_set_free(&u, K);
        return PT_ERR_UNSUPPORTED;
    }
    const pt_kernels *k;
    pt_kfun kf;
    pt_status st = pt_kernels_get(PT_ISA_AUTO, &k);
    pt_kfun_from_params(&kf, &m->sub[0]->params);
    kf.add = m->sub[0]->bias ? 1.0f : 0.0f;
    const int threads = pt_threads_resolve(0);
    const size_t dm = d < ds->d ? d : ds->d; /* as pt_model_kernel_scores */
    size_t rows = (8u << 20) / ((dm ? dm : 1) * sizeof(float)) / 16 * 16;
    rows = rows < 16 ? 16 : rows > PRED_ROWS ? PRED_ROWS : rows;
    /* compact rows: a block's rows widened before they are packed (an even count of floats:
     * the doubles after them stay aligned) */
    const size_t wide = ds->dtype != PT_DTYPE_F32 ? rows * ds->stride : 0;
    const size_t per_thread = (rows * dm + rows + rows * PRED_SV + wide) * sizeof(float) +
                              rows * K * sizeof(double);
    float *U = st == PT_OK ? pt_alloc(N * stride * sizeof(float), "support vector set") : NULL;
    float *coef = U ? pt_calloc(K * npad * sizeof(float), "class coefficients") : NULL;
    char *work = coef ? pt_alloc(per_thread * (size_t)threads, "prediction blocks") : NULL;
    pt_gram_rows sv = {0};
    if (work) {
        for (size_t i = 0; i < N; i++) memcpy(U + i * stride, u.row[i], stride * sizeof(float));
        for (size_t c = 0; c < K; c++)
            for (size_t i = 0; i < m->sub[c]->n_sv; i++)
                coef[c * npad + u.idx[c][i]] += m->sub[c]->coef[i];
        st = pt_gram_rows_init(&sv, U, N, dm, stride, d, kf.kind, k, threads);
    } else if (st == PT_OK) {
        st = PT_ERR_NOMEM;
    }
    pt_sv_set_free(&u, K);
    pt_free(U);
    if (st != PT_OK) {
        pt_free(coef);
        pt_free(work);
        return st;
    }
    const ptrdiff_t nb = (ptrdiff_t)((n + rows - 1) / rows);
#pragma omp parallel num_threads(threads)
    {
#ifdef _OPENMP
        char *w = work + (size_t)omp_get_thread_num() * per_thread;
#else
        char *w = work;
#endif
        float *P = (float *)w, *norm = P + rows * dm, *C = norm + rows, *W = C + rows * PRED_SV;
        double *acc = (double *)(W + wide);
#pragma omp for schedule(dynamic, 1)
        for (ptrdiff_t b = 0; b < nb; b++) {
            size_t i0 = (size_t)b * rows, ni = n - i0 < rows ? n - i0 : rows;
            pt_gram_rows tr;
            pt_gram_rows_pack(&tr, pt_rows_f32(k, ds, i0, ni, W), ni, dm, ds->stride, dm,
                              kf.kind, k, P, norm);
            memset(acc, 0, ni * K * sizeof *acc);
            for (size_t j0 = 0; j0 < N; j0 += PRED_SV) {
                size_t nj = N - j0 < PRED_SV ? N - j0 : PRED_SV;
                pt_gram_block(&tr, 0, ni, &sv, j0, nj, &kf, k, C, PRED_SV);
                for (size_t i = 0; i < ni; i++)
                    for (size_t c = 0; c < K; c++)
                        acc[i * K + c] += k->dot(C + i * PRED_SV, coef + c * npad + j0, nj);
            }
            for (size_t i = 0; i < ni * K; i++) out[i0 * K + i] = (float)acc[i];
        }
    }
    pt_gram_rows_free(&sv);
    pt_free(coef);
    pt_free(work);
    return PT_OK;
}

pt_status pt_class_scores(const pt_model *m, const pt_dataset *ds, float *out)
{
    if (m->sub && ovr_kernel_shared(m, ds)) {
        pt_status st = ovr_kernel_scores(m, ds, out);
        if (st != PT_ERR_UNSUPPORTED) return st;
        pt_clear_error();
    }
    if (m->sub) {
        /* one-vs-rest with each class's own binary model (kernel, or voted): its score */
        float *s = pt_alloc((ds->n ? ds->n : 1) * sizeof(float), "class scores");
        if (!s) return PT_ERR_NOMEM;
        pt_status st = PT_OK;
        for (size_t c = 0; c < m->nclass && st == PT_OK; c++) {
            st = binary_scores(m->sub[c], ds, s);
            for (size_t i = 0; st == PT_OK && i < ds->n; i++) out[i * m->nclass + c] = s[i];
        }
        pt_free(s);
        return st;
    }
    if (!m->W)
        return pt_fail(PT_ERR_UNSUPPORTED, "class scores of a %s model with %zu classes are not "
                       "available", pt_path_name(m->path), m->nclass);
    const pt_kernels *k;
    PT_TRY(pt_kernels_get(PT_ISA_AUTO, &k));
    size_t mstride = pt_stride_for(m->d), K = m->nclass;
    size_t len = mstride < ds->stride ? mstride : ds->stride;
    float bias = m->bias ? 1.0f : 0.0f;
    if (ds->layout == PT_LAYOUT_SPARSE) {
        /* every class of a row from one pass over its pairs */
#pragma omp parallel for schedule(static) if (ds->nnz * K > 65536)
        for (size_t i = 0; i < ds->n; i++) {
            const uint32_t *idx;
            const float *val;
            size_t nnz = sparse_row_below(ds, i, m->d, &idx, &val);
            k->sparse->dot_many(m->W, mstride, K, idx, val, nnz, out + i * K);
            for (size_t c = 0; c < K; c++) out[i * K + c] += m->Bk[c] * bias;
        }
        return PT_OK;
    }
    /* compact rows: each widened into the thread's row buffer first */
    const bool compact = ds->dtype != PT_DTYPE_F32;
    int failed = 0;
#pragma omp parallel if (ds->n * K > 4096) reduction(| : failed)
    {
        float *wide = compact ? pt_alloc(ds->stride * sizeof *wide, "a widened row") : NULL;
        if (compact && !wide) failed = 1;
#pragma omp for schedule(static)
        for (size_t i = 0; i < ds->n; i++) {
            if (failed) continue;
            const float *x = pt_row_f32(k, ds, i, wide);
            k->dot_many(m->W, mstride, K, x, len, out + i * K);
            for (size_t c = 0; c < K; c++) out[i * K + c] += m->Bk[c] * bias;
        }
        pt_free(wide);
    }
    return failed ? pt_fail(PT_ERR_NOMEM, "cannot allocate a row to widen") : PT_OK;
}

pt_status pt_model_class_scores(const pt_model *m, const pt_dataset *ds, float *out)
{
    pt_clear_error();
    const pt_dataset *use;
    pt_dataset *tmp;
    PT_TRY(pt_model_scaled(m, ds, &use, &tmp));
    pt_warn_extra_features(m->d, use->d);
    pt_vote_cost_log(m, use);
    pt_status s = pt_class_scores(m, use, out);
    pt_dataset_free(tmp);
    return s == PT_OK ? pt_dataset_intact(ds) : s; /* (zeros read from a file that shrank) */
}
