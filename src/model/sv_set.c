/* The distinct support vectors of a kernel one-vs-rest model's classes: the model file keeps
 * them once (model_io.c, version 4) and scoring computes each one's kernel values once
 * (scores.c). Distinct by value (the classes' vectors are rows of one training set), found by
 * a hash of their bytes; the first seen comes first. */
#include <stdlib.h>
#include <string.h>

#include "model.h"

void pt_sv_set_free(pt_sv_set *u, size_t K)
{
    free(u->row);
    free(u->slot);
    for (size_t c = 0; u->idx && c < K; c++) free(u->idx[c]);
    free(u->idx);
    memset(u, 0, sizeof *u);
}

pt_status pt_sv_set_build(pt_sv_set *u, const pt_model *m)
{
    const size_t K = m->nclass, d = m->d, stride = pt_stride_for(d);
    size_t total = 0;
    for (size_t c = 0; c < K; c++) total += m->sub[c]->n_sv;
    memset(u, 0, sizeof *u);
    if (total > UINT32_MAX - 1)
        return pt_fail(PT_ERR_LIMIT, "%zu support vectors: a set holds up to 2^32 - 2", total);
    u->total = total;
    u->cap = 16;
    while (u->cap < 2 * total) u->cap *= 2;
    u->row = malloc((total ? total : 1) * sizeof *u->row);
    u->slot = calloc(u->cap, sizeof *u->slot);
    u->idx = calloc(K, sizeof *u->idx);
    bool ok = u->row && u->slot && u->idx;
    for (size_t c = 0; ok && c < K; c++) {
        const pt_model *s = m->sub[c];
        if (!(ok = (u->idx[c] = malloc((s->n_sv ? s->n_sv : 1) * sizeof(uint32_t))) != NULL))
            break;
        for (size_t i = 0; i < s->n_sv; i++) {
            const float *x = s->sv + i * stride;
            size_t h = (size_t)pt_checksum(x, d * sizeof(float)) & (u->cap - 1);
            while (u->slot[h] && memcmp(u->row[u->slot[h] - 1], x, d * sizeof(float)) != 0)
                h = (h + 1) & (u->cap - 1);
            if (!u->slot[h]) {
                u->row[u->n] = x;
                u->slot[h] = (uint32_t)++u->n;
            }
            u->idx[c][i] = u->slot[h] - 1;
        }
    }
    if (ok) return PT_OK;
    pt_sv_set_free(u, K);
    return pt_fail(PT_ERR_NOMEM, "cannot allocate the set of %zu support vectors", total);
}
