/*
 * The sparse generator (`ptron gen sparse`): text-like rows in the sparse layout.
 *
 * Features have Zipf popularity (exponent 1: the feature of rank r is drawn with probability
 * proportional to 1 / r), the ranks scattered over the columns by a seeded permutation, as
 * words are over a vocabulary. A row draws features until it holds m distinct ones, m uniform
 * in [K/2, 3K/2] for K = pt_gen_params.nnz; a feature drawn t times gets the tf-idf-like value
 * (1 + ln t) idf, with idf = 1 - ln df and df = 1 - (1 - p)^K the chance that a row of K draws
 * holds it; then the row is scaled to unit length. Labels come from a planted unit w* on a few
 * thousand features (picked by popularity, so most rows hold some; weights uniform in [-1, 1]),
 * y = sign(w*.x); a row whose
 * |w*.x| is below the margin G is drawn again, so the clean set has margin G (at least one row
 * in 10,000 drawn must reach it, else the margin is refused); then a fraction P of the labels
 * is flipped.
 *
 * One xoshiro256** stream, in one order, all arithmetic in double with + - * / and sqrt only
 * (IEEE, correctly rounded; ln is computed here, not by libm, whose variants may differ in the
 * last bit), rounded to float as values are stored, margins measured on the stored floats: the
 * same parameters give the same bytes on every machine. Memory: the CSR arrays plus a few
 * arrays of d entries (the popularity table, its guide, the permutation, per-feature marks),
 * nothing of n x d; checked against half of RAM before anything is allocated.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"

/* Features of the planted w*, at most (d when smaller). */
#define WSTAR_FEATURES 3000u
/* Draws a row may take to reach its m distinct features, at most: only a tiny d runs out. */
#define DRAWS_PER_FEATURE 8u
/* Rows drawn for each row kept, at most, before the margin is refused. */
#define MAX_DRAWS_PER_ROW 10000u

/* ln x for x > 0 (finite), from + - * / only: x = 2^e f with f in [1, 2), ln f = 2 atanh(z)
 * with z = (f - 1) / (f + 1) <= 1/3, whose series has converged to double precision by z^41. */
static double det_log(double x)
{
    int e;
    double f = 2.0 * frexp(x, &e); /* exact */
    e -= 1;
    double z = (f - 1.0) / (f + 1.0), z2 = z * z, term = z, sum = 0.0;
    for (int k = 1; k <= 41; k += 2) {
        sum += term / k;
        term *= z2;
    }
    return 2.0 * sum + e * 0.69314718055994530942;
}

/* b^k by squaring. */
static double ipow(double b, size_t k)
{
    double r = 1.0;
    for (; k; k >>= 1, b *= b)
        if (k & 1) r *= b;
    return r;
}

/* Zipf popularity over ranks 0..d-1 (weight 1 / (r + 1)): its cumulative sums and a guide
 * table (guide[g] = the first rank whose cumulative sum reaches g / d of the total), so a draw
 * is a look-up and a short walk: exact inversion of the discrete distribution. */
typedef struct zipf {
    size_t d;
    double *cum, total;
    uint32_t *guide;
} zipf;

static pt_status zipf_init(zipf *z, size_t d)
{
    z->d = d;
    z->cum = malloc(d * sizeof *z->cum);
    z->guide = malloc(d * sizeof *z->guide);
    if (!z->cum || !z->guide)
        return pt_fail(PT_ERR_NOMEM, "generator: cannot allocate the popularity table of %zu "
                       "features", d);
    double s = 0.0;
    for (size_t r = 0; r < d; r++) z->cum[r] = s += 1.0 / (double)(r + 1);
    z->total = s;
    size_t r = 0;
    for (size_t g = 0; g < d; g++) {
        double at = s * (double)g / (double)d;
        while (r + 1 < d && z->cum[r] <= at) r++;
        z->guide[g] = (uint32_t)r;
    }
    return PT_OK;
}

static void zipf_free(zipf *z)
{
    free(z->cum);
    free(z->guide);
}

/* The rank of one draw: the first r with cum[r] > u total, from the guide's entry (walked
 * back too, should rounding put the entry a step past it). */
static size_t zipf_draw(const zipf *z, pt_rng *rng)
{
    double uni = pt_rng_uniform(rng), u = uni * z->total;
    size_t g = (size_t)(uni * (double)z->d);
    if (g >= z->d) g = z->d - 1;
    size_t r = z->guide[g];
    while (r > 0 && z->cum[r - 1] > u) r--;
    while (r + 1 < z->d && z->cum[r] <= u) r++;
    return r;
}

/* A feature of a row being drawn: column << 32 | rank, so sorting the keys puts the row in
 * column order (the columns are distinct: one order on every machine). */
static inline uint64_t feature_key(uint32_t col, uint32_t rank)
{
    return (uint64_t)col << 32 | rank;
}

static int by_key(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Sort a row's keys: insertion sort for the usual few dozen, qsort beyond. */
static void sort_keys(uint64_t *k, size_t m)
{
    if (m > 128) {
        qsort(k, m, sizeof *k, by_key);
        return;
    }
    for (size_t i = 1; i < m; i++) {
        uint64_t v = k[i];
        size_t j = i;
        for (; j > 0 && k[j - 1] > v; j--) k[j] = k[j - 1];
        k[j] = v;
    }
}

/* Working state of the generator: d-sized tables and one row's scratch. */
typedef struct gen {
    const pt_gen_params *p;
    pt_rng rng;
    zipf z;
    uint32_t *col_of;   /* rank -> column (a permutation) */
    double *idf;        /* by rank */
    uint32_t *mark;     /* by rank: the stamp of the last draw that held it */
    uint32_t *tf;       /* by rank: its draws in the current row */
    uint64_t *row;      /* the row's distinct features (feature_key), max_m at most */
    double *vals;       /* their values, before scaling */
    size_t max_m;
} gen;

/* Draw a row: m distinct features (fewer only when the draws run out), in column order, values
 * scaled to unit length, stored as floats into col/val. Returns the features drawn. */
static size_t draw_row(gen *g, uint32_t stamp, uint32_t *col, float *val)
{
    size_t K = g->p->nnz, d = g->p->d;
    size_t lo = (K + 1) / 2, hi = K + K / 2;
    size_t m = lo + (size_t)pt_rng_below(&g->rng, hi - lo + 1);
    if (m > d) m = d;
    size_t have = 0;
    for (size_t draw = 0; have < m && draw < DRAWS_PER_FEATURE * m + 64; draw++) {
        size_t r = zipf_draw(&g->z, &g->rng);
        if (g->mark[r] != stamp) {
            g->mark[r] = stamp;
            g->tf[r] = 0;
            g->row[have++] = feature_key(g->col_of[r], (uint32_t)r);
        }
        g->tf[r]++;
    }
    sort_keys(g->row, have);
    double norm2 = 0.0;
    for (size_t k = 0; k < have; k++) {
        uint32_t r = (uint32_t)g->row[k];
        double v = (1.0 + det_log((double)g->tf[r])) * g->idf[r];
        g->vals[k] = v;
        norm2 += v * v;
    }
    double scale = 1.0 / sqrt(norm2);
    for (size_t k = 0; k < have; k++) {
        col[k] = (uint32_t)(g->row[k] >> 32);
        val[k] = (float)(g->vals[k] * scale);
    }
    return have;
}

/* The planted w*: weights uniform in [-1, 1] on up to WSTAR_FEATURES features drawn by
 * popularity, unit length, as d doubles by column. */
static double *plant_wstar(gen *g)
{
    size_t d = g->p->d, S = d < WSTAR_FEATURES ? d : WSTAR_FEATURES;
    double *w = calloc(d, sizeof *w);
    if (!w) {
        pt_fail(PT_ERR_NOMEM, "generator: cannot allocate w* (%zu doubles)", d);
        return NULL;
    }
    size_t have = 0;
    double norm2 = 0.0;
    for (size_t draw = 0; have < S && draw < 64 * S; draw++) {
        uint32_t c = g->col_of[zipf_draw(&g->z, &g->rng)];
        if (w[c] != 0.0) continue;
        double v = 2.0 * pt_rng_uniform(&g->rng) - 1.0;
        if (v == 0.0) continue;
        w[c] = v;
        norm2 += v * v;
        have++;
    }
    double scale = 1.0 / sqrt(norm2);
    for (size_t j = 0; j < d; j++) w[j] *= scale;
    return w;
}

static void gen_free(gen *g)
{
    zipf_free(&g->z);
    free(g->col_of);
    free(g->idf);
    free(g->mark);
    free(g->tf);
    free(g->row);
    free(g->vals);
}

static pt_status gen_init(gen *g, const pt_gen_params *p)
{
    memset(g, 0, sizeof *g);
    g->p = p;
    size_t d = p->d, K = p->nnz;
    g->max_m = K + K / 2 < d ? K + K / 2 : d;
    pt_rng_seed(&g->rng, p->seed);
    PT_TRY(zipf_init(&g->z, d));
    g->col_of = malloc(d * sizeof *g->col_of);
    g->idf = malloc(d * sizeof *g->idf);
    g->mark = calloc(d, sizeof *g->mark);
    g->tf = malloc(d * sizeof *g->tf);
    g->row = malloc(g->max_m * sizeof *g->row);
    g->vals = malloc(g->max_m * sizeof *g->vals);
    if (!g->col_of || !g->idf || !g->mark || !g->tf || !g->row || !g->vals)
        return pt_fail(PT_ERR_NOMEM, "generator: cannot allocate the tables of %zu features", d);
    for (size_t r = 0; r < d; r++) g->col_of[r] = (uint32_t)r;
    pt_rng_shuffle(&g->rng, g->col_of, d);
    for (size_t r = 0; r < d; r++) {
        double prob = 1.0 / ((double)(r + 1) * g->z.total);
        double df = 1.0 - ipow(1.0 - prob, K);
        g->idf[r] = 1.0 - det_log(df);
    }
    return PT_OK;
}

/* y w*.x of a stored row, in double. */
static double row_score(const double *w, const uint32_t *col, const float *val, size_t m)
{
    double s = 0.0;
    for (size_t k = 0; k < m; k++) s += w[col[k]] * (double)val[k];
    return s;
}

pt_status pt_gen_sparse(const pt_gen_params *p, pt_dataset **out)
{
    *out = NULL;
    if (p->d > UINT32_MAX)
        return pt_fail(PT_ERR_INVALID, "pt_gen_params.d: %zu features: the sparse layout holds "
                       "at most %u", p->d, UINT32_MAX);
    if (p->nnz < 1 || p->nnz > ((size_t)1 << 20))
        return pt_fail(PT_ERR_INVALID, "pt_gen_params.nnz must be in 1..1048576");
    if (p->n >= UINT32_MAX)
        return pt_fail(PT_ERR_INVALID, "pt_gen_params.n: at most %u rows for sparse",
                       UINT32_MAX - 1);
    /* Before allocating: the tables of d features (popularity sums and guide, permutation,
     * idf, marks, counts, w*: 36 bytes a feature), the CSR arrays at the most non-zeros a row
     * can draw (3K/2) and the labels, against half of RAM. */
    size_t max_m = p->nnz + p->nnz / 2 < p->d ? p->nnz + p->nnz / 2 : p->d, entries, tables,
           need = SIZE_MAX;
    if (pt_mul_ok(p->n, max_m, &entries) && pt_mul_ok(p->d, 36, &tables)) {
        size_t csr = pt_sparse_bytes(p->n, entries);
        if (csr != SIZE_MAX && csr + tables >= csr && csr + tables + p->n * 8 >= csr + tables)
            need = csr + tables + p->n * 8;
    }
    size_t budget = pt_default_mem_budget();
    if (need > budget)
        return pt_fail(PT_ERR_LIMIT, "generator: %zu rows x %zu features (sparse, up to %zu "
                       "non-zeros a row) need %.1f MiB, over the memory budget of %.1f MiB (half "
                       "of RAM); lower pt_gen_params.n, pt_gen_params.d or pt_gen_params.nnz",
                       p->n, p->d, max_m, need == SIZE_MAX ? INFINITY : need / 1048576.0,
                       budget / 1048576.0);
    gen g;
    pt_status s = gen_init(&g, p);
    size_t bound;
    pt_dataset *ds = NULL;
    double *labels = NULL, *w = NULL;
    if (s != PT_OK) goto out;
    if (!pt_mul_ok(p->n, g.max_m, &bound)) {
        s = pt_fail(PT_ERR_INVALID, "generator: %zu rows of up to %zu non-zeros overflow", p->n,
                    g.max_m);
        goto out;
    }
    if (!(w = plant_wstar(&g)) || !(ds = pt_dataset_alloc_sparse(p->n, p->d, bound)) ||
        !(labels = malloc(p->n * sizeof *labels))) {
        s = labels || !ds || !w
                ? PT_ERR_NOMEM
                : pt_fail(PT_ERR_NOMEM, "generator: cannot allocate %zu labels", p->n);
        goto out;
    }
    /* a hair above G so rounding to float cannot take a row inside the margin */
    double target = p->margin > 0.0 ? p->margin * (1.0 + 1e-5) + 1e-9 : 0.0;
    double R2 = 0.0, gamma = INFINITY;
    uint64_t at = 0, drawn = 0;
    uint32_t stamp = 0;
    for (size_t i = 0; i < p->n; i++) {
        uint32_t *col = ds->col + at;
        float *val = ds->val + at;
        size_t m;
        double score;
        for (size_t tries = 0;; tries++) {
            if (tries == MAX_DRAWS_PER_ROW) {
                s = pt_fail(PT_ERR_INVALID, "pt_gen_params.margin %g: %zu rows drawn for row %zu "
                            "and none has |w*.x| above it (these rows have unit length and a "
                            "few non-zeros: margins are around 0.001 to 0.01); lower it",
                            p->margin, tries, i + 1);
                goto out;
            }
            /* the stamp tells this draw's features from every earlier one's */
            if (++stamp == 0) {
                memset(g.mark, 0, p->d * sizeof *g.mark);
                stamp = 1;
            }
            m = draw_row(&g, stamp, col, val);
            drawn++;
            score = row_score(w, col, val, m);
            if (score != 0.0 && fabs(score) >= target) break;
        }
        labels[i] = score > 0.0 ? 1.0 : -1.0;
        double r2 = 0.0;
        for (size_t k = 0; k < m; k++) r2 += (double)val[k] * val[k];
        if (r2 > R2) R2 = r2;
        if (fabs(score) < gamma) gamma = fabs(score);
        at += m;
        ds->rowptr[i + 1] = at;
    }
    for (size_t i = 0; i < p->n; i++)
        if (pt_rng_uniform(&g.rng) < p->noise) labels[i] = -labels[i];
    ds->nnz = (size_t)at;
    if ((s = pt_dataset_set_class_table(ds, labels)) != PT_OK) goto out;
    ds->wstar = w;
    w = NULL;
    ds->truth_R = sqrt(R2);
    ds->truth_gamma = gamma;
    pt_log(PT_LOG_DEBUG, "gen sparse: %zu rows, %zu non-zeros, %llu rows drawn for the margin",
           p->n, ds->nnz, (unsigned long long)drawn);
    *out = ds;
    ds = NULL;
out:
    gen_free(&g);
    free(labels);
    free(w);
    pt_dataset_free(ds);
    return s;
}
