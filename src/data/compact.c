/*
 * Compact storage of a dense matrix (bf16, u8 with divisors; see pt_dtype in ptron.h): the
 * type's names, allocation, conversion between types (the u8 divisors chosen here) and the
 * float32 copy the kernel path trains on (every other path reads compact rows as stored).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"


pt_status pt_dtype_parse(const char *name, pt_dtype *out)
{
    if (name && (strcmp(name, "f32") == 0 || strcmp(name, "float32") == 0)) *out = PT_DTYPE_F32;
    else if (name && strcmp(name, "bf16") == 0) *out = PT_DTYPE_BF16;
    else if (name && strcmp(name, "u8") == 0) *out = PT_DTYPE_U8;
    else
        return pt_fail(PT_ERR_INVALID, "unknown storage type '%s' (choose f32, bf16 or u8)",
                       name ? name : "(null)");
    return PT_OK;
}







/* ------------------------------------------------------------------ element coding */

/* float32 to bf16, to nearest, ties to even (the value is finite). */
static uint16_t to_bf16(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}



/* ------------------------------------------------------------------ u8 divisors */

/* Whether the single divisor m gives back every value of the float32 matrix exactly. */
static bool u8_exact(const pt_dataset *ds, float m)
{
    if (!(m > 0.0f) || !isfinite(m)) return false;
    float rh = 1.0f / m, rl = (float)(1.0 / (double)m - (double)rh), table[256];
    for (int q = 0; q < 256; q++) table[q] = pt_u8_decode((uint8_t)q, rh, rl);
    for (size_t i = 0; i < ds->n; i++) {
        const float *x = ds->X + i * ds->stride;
        for (size_t j = 0; j < ds->d; j++) {
            float v = x[j] * m;
            if (!(v <= 255.5f)) return false;
            long q = lrintf(v);
            if (table[q] != x[j]) return false;
        }
    }
    return true;
}

/* The divisors for ds (float32, values >= 0 checked): one exact divisor if a candidate is,
 * else per feature 255 / max. m gets d values. */
static bool u8_divisors(const pt_dataset *ds, float *m)
{
    float all_max = 0.0f, min_pos = INFINITY;
    for (size_t j = 0; j < ds->d; j++) m[j] = 0.0f;
    for (size_t i = 0; i < ds->n; i++) {
        const float *x = ds->X + i * ds->stride;
        for (size_t j = 0; j < ds->d; j++) {
            if (x[j] > m[j]) m[j] = x[j];
            if (x[j] > 0.0f && x[j] < min_pos) min_pos = x[j];
        }
    }
    for (size_t j = 0; j < ds->d; j++)
        if (m[j] > all_max) all_max = m[j];
    float cand[3] = {all_max > 0.0f ? 255.0f / all_max : 1.0f,
                     isfinite(min_pos) ? nearbyintf(1.0f / min_pos) : 1.0f, 255.0f};
    for (int c = 0; c < 3; c++)
        if (u8_exact(ds, cand[c])) {
            for (size_t j = 0; j < ds->d; j++) m[j] = cand[c];
            return true;
        }
    for (size_t j = 0; j < ds->d; j++) {
        m[j] = m[j] > 0.0f ? 255.0f / m[j] : 1.0f;
        if (!isfinite(m[j])) m[j] = 1.0f; /* a subnormal maximum: its values all round to 0 */
    }
    return false;
}

/* ------------------------------------------------------------------ conversion */



/* Fill the compact copy c of the float32 dataset f (divisors set for u8). */
static pt_status narrow(const pt_dataset *f, pt_dataset *c)
{
    size_t d = f->d, s = f->stride;
    for (size_t i = 0; i < f->n; i++) {
        const float *x = f->X + i * s;
        if (c->dtype == PT_DTYPE_BF16) {
            uint16_t *h = (uint16_t *)pt_compact_row(c, i);
            for (size_t j = 0; j < d; j++) {
                h[j] = to_bf16(x[j]);
                if ((h[j] & 0x7f80u) == 0x7f80u)
                    return pt_fail(PT_ERR_INVALID, "row %zu, feature %zu: %g is beyond bf16's "
                                   "range", i + 1, j + 1, (double)x[j]);
            }
        } else {
            uint8_t *q = (uint8_t *)pt_compact_row(c, i);
            for (size_t j = 0; j < d; j++) {
                float v = x[j] * c->u8_m[j];
                q[j] = (uint8_t)(v > 255.0f ? 255 : lrintf(v));
            }
        }
    }
    return PT_OK;
}

pt_status pt_dataset_to_dtype(const pt_dataset *ds, pt_dtype to, size_t mem_budget_bytes,
                              pt_dataset **out)
{
    pt_clear_error();
    *out = NULL;
    if (to != PT_DTYPE_F32 && to != PT_DTYPE_BF16 && to != PT_DTYPE_U8)
        return pt_fail(PT_ERR_INVALID, "unknown storage type %d", (int)to);
    if (ds->layout != PT_LAYOUT_DENSE)
        return pt_fail(PT_ERR_UNSUPPORTED, "storage type %s: compact storage is for the dense "
                       "layout only (convert with --layout dense first)", pt_dtype_name(to));
    size_t budget = mem_budget_bytes ? mem_budget_bytes : pt_default_mem_budget();
    size_t need = pt_dtype_bytes(ds->n, ds->d, to);
    /* a conversion between two compact types goes through a float32 copy */
    bool via = ds->dtype != PT_DTYPE_F32 && to != PT_DTYPE_F32;
    if (via && need != SIZE_MAX) {
        size_t f = pt_dtype_bytes(ds->n, ds->d, PT_DTYPE_F32);
        need = f == SIZE_MAX || f > SIZE_MAX - need ? SIZE_MAX : need + f;
    }
    if (need > budget)
        return pt_fail(PT_ERR_LIMIT, "storing %zu rows x %zu features as %s needs %.1f MiB, over "
                       "the memory budget of %.1f MiB (--mem-mb)", ds->n, ds->d,
                       pt_dtype_name(to), need / 1048576.0, budget / 1048576.0);
    pt_dataset *f = NULL, *c = NULL;
    pt_status s = PT_OK;
    if (ds->dtype != PT_DTYPE_F32) {
        /* widen (the whole answer when to is f32) */
        if (!(f = pt_dataset_alloc(ds->n, ds->d))) return PT_ERR_NOMEM;
        for (size_t i = 0; i < ds->n; i++) pt_compact_widen_row(ds, i, f->X + i * f->stride);
        f->nnz = ds->nnz;
        if (to == PT_DTYPE_F32) {
            s = pt_dataset_copy_meta(f, ds, 0);
            if (s == PT_OK) s = pt_dataset_count_nnz(f, "widened copy");
            if (s != PT_OK) {
                pt_dataset_free(f);
                return s;
            }
            *out = f;
            return PT_OK;
        }
    } else if (to == PT_DTYPE_F32) {
        pt_dataset *copy;
        PT_TRY(pt_dataset_slice(ds, 0, ds->n, &copy));
        *out = copy;
        return PT_OK;
    }
    const pt_dataset *src = f ? f : ds;
    if (!(c = pt_dataset_alloc_compact(ds->n, ds->d, to))) {
        pt_dataset_free(f);
        return PT_ERR_NOMEM;
    }
    if (to == PT_DTYPE_U8) {
        for (size_t i = 0; i < src->n && s == PT_OK; i++)
            for (size_t j = 0; j < src->d; j++)
                if (src->X[i * src->stride + j] < 0.0f) {
                    s = pt_fail(PT_ERR_INVALID, "row %zu, feature %zu: %g is negative; u8 "
                                "storage holds values >= 0 (use bf16, or shift the feature)",
                                i + 1, j + 1, (double)src->X[i * src->stride + j]);
                    break;
                }
        float *m = s == PT_OK ? malloc((ds->d ? ds->d : 1) * sizeof *m) : NULL;
        if (s == PT_OK && !m) s = pt_fail(PT_ERR_NOMEM, "cannot allocate %zu divisors", ds->d);
        if (s == PT_OK) pt_u8_set_divisors(c, m, u8_divisors(src, m));
        free(m);
    }
    if (s == PT_OK) s = narrow(src, c);
    if (s == PT_OK) s = pt_dataset_copy_meta(c, ds, 0);
    if (s == PT_OK) c->nnz = pt_compact_nnz(c); /* a value may round to 0 */
    pt_dataset_free(f);
    if (s != PT_OK) {
        pt_dataset_free(c);
        return s;
    }
    *out = c;
    return PT_OK;
}

pt_status pt_dataset_as_f32(const pt_dataset *ds, size_t budget, const char *what,
                            pt_dataset **tmp, const pt_dataset **use)
{
    *tmp = NULL;
    *use = ds;
    if (ds->dtype == PT_DTYPE_F32) return PT_OK;
    size_t b = budget ? budget : pt_default_mem_budget();
    size_t need = pt_dtype_bytes(ds->n, ds->d, PT_DTYPE_F32);
    if (need > b)
        return pt_fail(PT_ERR_LIMIT, "%s reads float32 rows: a float32 copy of the %s data "
                       "needs %.1f MiB, over the memory budget of %.1f MiB (raise --mem-mb, or "
                       "train the online or batch path, which read %s rows)", what,
                       pt_dtype_name(ds->dtype), need / 1048576.0, b / 1048576.0,
                       pt_dtype_name(ds->dtype));
    pt_status s = pt_dataset_to_dtype(ds, PT_DTYPE_F32, b, tmp);
    if (s == PT_OK) *use = *tmp;
    return s;
}
