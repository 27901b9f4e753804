/*
 * Kernel matrices: packing, the tiled Gram build, kernel rows on demand and prediction blocks.
 * See gram.h for the layout, the determinism rule and the accuracy stated.
 *
 * Three variants of the tile code, chosen per call from the requested ISA: AVX-512 (functions
 * built with target("avx512f")), AVX2 + FMA, and portable C (fmaf is correctly rounded, so it
 * gives the same bits as the hardware FMA, slowly). Every variant runs the same IEEE operations
 * in the same order for every kernel value, so they agree bit for bit. The SIMD table in
 * src/kernels stays free of threads; the OpenMP loops live here.
 *
 * Gram build (AVX-512): micro-kernel of 8 rows x 48 columns (24 accumulators; per feature
 * 3 vector loads and 8 broadcasts for 24 FMAs), features in blocks of KC = 128 so the
 * 48-column micro-panel (24 KiB) stays in L1 and the 240-row block in L2. A tile's inner
 * products land in a per-thread 240 x 240 buffer; its kernel function and stores (in place,
 * and transposed into the mirror place by 16 x 16 register transposes) are then done block
 * by block between the micro-kernels of the next tile (streaming stores), so the writes of the
 * fresh Gram lines overlap the FMAs. Diagonal tiles compute their upper half only.
 * Work: n (n + 1) d / 2 multiply-adds, as ssyrk's, plus T / n of that on the diagonal tiles.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#if defined(__x86_64__)
#include <immintrin.h>
#define GRAM_X86 1
#endif

#include "gram.h"

#define KC 128 /* features per block of the Gram micro-kernel */

/* exp(x), x <= 0: n = rint(x log2 e), r = x - n ln2 (in two parts, Cephes), exp(r) by a
 * degree-7 polynomial in Horner form (Cephes expf's minimax coefficients, |r| <= ln2 / 2),
 * times 2^n. Below EXP_LO the result is 0 (exp(-87) = 1.6e-38, the end of the normal range;
 * above it every result is normal, so scaling by 2^n is exact in every variant). */
#define EXP_LO (-87.0f)
#define LOG2E 1.44269504088896341f
#define EXP_C1 0.693359375f
#define EXP_C2 (-2.12194440e-4f)
#define EXP_P0 1.9875691500e-4f
#define EXP_P1 1.3981999507e-3f
#define EXP_P2 8.3334519073e-3f
#define EXP_P3 4.1665795894e-2f
#define EXP_P4 1.6666665459e-1f
#define EXP_P5 5.0000001201e-1f

static size_t round_up(size_t x, size_t to) { return (x + to - 1) / to * to; }
static size_t min_sz(size_t a, size_t b) { return a < b ? a : b; }

pt_isa pt_gram_isa(pt_isa requested)
{
    if (requested == PT_ISA_AUTO) requested = pt_isa_default();
#ifdef GRAM_X86
    __builtin_cpu_init();
    const int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (requested == PT_ISA_AVX512 && avx2 && __builtin_cpu_supports("avx512f"))
        return PT_ISA_AVX512;
    if ((requested == PT_ISA_AVX512 || requested == PT_ISA_AVX2) && avx2) return PT_ISA_AVX2;
#endif
    return PT_ISA_SCALAR;
}

void pt_kfun_from_params(pt_kfun *kf, const pt_train_params *p)
{
    kf->kind = p->kernel;
    kf->degree = p->degree;
    kf->gamma = p->gamma;
    kf->coef0 = p->coef0;
    kf->add = p->bias ? 1.0f : 0.0f;
}

/* A computed tile (raw inner products in C) waiting for its kernel function and its stores
 * into the Gram, done 16 x 16 block by block (column blocks outer, row blocks inner). */
typedef struct pending {
    const pt_kfun *kf;
    const float *norm;
    float *G;
    size_t ldg;
    const float *C;
    size_t ldc, i0, ni, j0, nj;
    int diag;      /* a tile on the diagonal: only blocks ib <= jb were computed */
    int stream;    /* G 64-byte aligned with ldg a multiple of 16: streaming stores */
    size_t jb, ib; /* next block */
    int active;
} pending;

static void pending_next(pending *p)
{
    p->ib += 16;
    if (p->ib >= p->ni || (p->diag && p->ib > p->jb)) {
        p->ib = 0;
        p->jb += 16;
        if (p->jb >= p->nj) p->active = 0;
    }
}

/* ============================================================ portable C reference variant */

static float exp_c(float x)
{
    if (!(x >= EXP_LO)) return 0.0f;
    float n = rintf(x * LOG2E);
    float r = fmaf(n, -EXP_C1, x);
    r = fmaf(n, -EXP_C2, r);
    float p = fmaf(EXP_P0, r, EXP_P1);
    p = fmaf(p, r, EXP_P2);
    p = fmaf(p, r, EXP_P3);
    p = fmaf(p, r, EXP_P4);
    p = fmaf(p, r, EXP_P5);
    p = fmaf(p, r, 1.0f);
    p = fmaf(p, r, 1.0f);
    int32_t e = ((int32_t)n + 127) * (1 << 23);
    float s;
    memcpy(&s, &e, sizeof s);
    return p * s;
}

static float kval_c(const pt_kfun *kf, float v, float xs, float zs)
{
    if (kf->kind == PT_KERNEL_POLY) {
        float b = fmaf(v, kf->gamma, kf->coef0), r = 1.0f;
        for (int e = kf->degree;;) {
            if (e & 1) r = r * b;
            e >>= 1;
            if (!e) break;
            b = b * b;
        }
        v = r;
    } else if (kf->kind == PT_KERNEL_RBF) {
        float a = fmaf(v, 2.0f * kf->gamma, (xs + zs) * -kf->gamma);
        v = exp_c(a < 0.0f ? a : 0.0f);
    }
    if (kf->add != 0.0f) v = v + kf->add;
    return v;
}

static void kfun_c(const pt_kfun *kf, const float *dot, float xs, const float *zs, float *out,
                   size_t n)
{
    for (size_t j = 0; j < n; j++) out[j] = kval_c(kf, dot[j], xs, zs ? zs[j] : 0.0f);
}

/* Raw inner products of a tile: C[i][j] for i < round_up(ni, 8), j < round_up(nj, 16); with
 * upper, the 16 x 16 blocks below the diagonal may be skipped. */
static void tile_c(const pt_gram_rows *a, size_t i0, size_t ni, const pt_gram_rows *b, size_t j0,
                   size_t nj, float *C, size_t ldc, int upper)
{
    const size_t d = a->d, nir = round_up(ni, 8), njc = round_up(nj, 16);
    for (size_t i = 0; i < nir; i++) {
        size_t gi = i0 + i;
        const float *A = a->P + (gi / 16) * d * 16 + gi % 16;
        for (size_t j = upper ? i / 16 * 16 : 0; j < njc; j++) {
            size_t gj = j0 + j;
            const float *B = b->P + (gj / 16) * d * 16 + gj % 16;
            float acc = 0.0f;
            for (size_t k = 0; k < d; k++) acc = fmaf(A[k * 16], B[k * 16], acc);
            C[i * ldc + j] = acc;
        }
    }
}

static void row_c(const pt_gram_rows *r, const float *x, size_t p0, size_t p1, float *out)
{
    const size_t d = r->d;
    for (size_t p = p0; p < p1; p++)
        for (size_t l = 0; l < 16; l++) {
            const float *B = r->P + p * d * 16 + l;
            float acc = 0.0f;
            for (size_t k = 0; k < d; k++) acc = fmaf(x[k], B[k * 16], acc);
            out[(p - p0) * 16 + l] = acc;
        }
}

/* Squared norms of panel p: the chain over the packed features. */
static void norms_c(const pt_gram_rows *r, size_t p, float *out)
{
    const size_t d = r->d;
    for (size_t l = 0; l < 16; l++) {
        const float *B = r->P + p * d * 16 + l;
        float acc = 0.0f;
        for (size_t k = 0; k < d; k++) acc = fmaf(B[k * 16], B[k * 16], acc);
        out[l] = acc;
    }
}

/* The kernel function on a raw tile and its stores (see storek_avx512). */
static void store_c(const pt_kfun *kf, const float *norm, float *C, size_t ldc, size_t i0,
                    size_t ni, size_t j0, size_t nj, int diag, float *G, size_t ldg)
{
    for (size_t jb = 0; jb < nj; jb += 16) {
        size_t ncol = min_sz(16, nj - jb);
        for (size_t ib = 0; ib < ni && !(diag && ib > jb); ib += 16) {
            size_t nrow = min_sz(16, ni - ib);
            for (size_t r = 0; r < nrow; r++) {
                float *c = C + (ib + r) * ldc + jb;
                kfun_c(kf, c, norm ? norm[i0 + ib + r] : 0.0f, norm ? norm + j0 + jb : NULL, c, ncol);
                memcpy(G + (i0 + ib + r) * ldg + j0 + jb, c, ncol * sizeof(float));
                if (diag && ib == jb) continue;
                for (size_t q = 0; q < ncol; q++) G[(j0 + jb + q) * ldg + i0 + ib + r] = c[q];
            }
        }
    }
}

#ifdef GRAM_X86
/* ================================================================================ AVX2 */

#define T2 __attribute__((target("avx2,fma")))
#define T2I static inline __attribute__((always_inline, target("avx2,fma")))

T2I __m256 exp256(__m256 x)
{
    __m256 ok = _mm256_cmp_ps(x, _mm256_set1_ps(EXP_LO), _CMP_GE_OQ);
    __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(LOG2E)),
                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fmadd_ps(n, _mm256_set1_ps(-EXP_C1), x);
    r = _mm256_fmadd_ps(n, _mm256_set1_ps(-EXP_C2), r);
    __m256 p = _mm256_fmadd_ps(_mm256_set1_ps(EXP_P0), r, _mm256_set1_ps(EXP_P1));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(EXP_P2));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(EXP_P3));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(EXP_P4));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(EXP_P5));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    /* 2^n built in the exponent field; lanes below EXP_LO (any garbage there) masked to 0. */
    __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_and_ps(ok, _mm256_mul_ps(p, _mm256_castsi256_ps(e)));
}

T2I __m256 kval256(const pt_kfun *kf, __m256 v, __m256 xs, __m256 zs)
{
    if (kf->kind == PT_KERNEL_POLY) {
        __m256 b = _mm256_fmadd_ps(v, _mm256_set1_ps(kf->gamma), _mm256_set1_ps(kf->coef0));
        __m256 r = _mm256_set1_ps(1.0f);
        for (int e = kf->degree;;) {
            if (e & 1) r = _mm256_mul_ps(r, b);
            e >>= 1;
            if (!e) break;
            b = _mm256_mul_ps(b, b);
        }
        v = r;
    } else if (kf->kind == PT_KERNEL_RBF) {
        __m256 a = _mm256_fmadd_ps(v, _mm256_set1_ps(2.0f * kf->gamma),
                                   _mm256_mul_ps(_mm256_add_ps(xs, zs), _mm256_set1_ps(-kf->gamma)));
        v = exp256(_mm256_min_ps(a, _mm256_setzero_ps()));
    }
    if (kf->add != 0.0f) v = _mm256_add_ps(v, _mm256_set1_ps(kf->add));
    return v;
}

static T2 void kfun_avx2(const pt_kfun *kf, const float *dot, float xs, const float *zs,
                         float *out, size_t n)
{
    __m256 vx = _mm256_set1_ps(xs);
    for (size_t j = 0; j < n; j += 8) {
        __m256 z = zs ? _mm256_loadu_ps(zs + j) : _mm256_setzero_ps();
        _mm256_storeu_ps(out + j, kval256(kf, _mm256_loadu_ps(dot + j), vx, z));
    }
}

static T2 void exp_avx2(const float *x, float *y, size_t n)
{
    for (size_t j = 0; j < n; j += 8) _mm256_storeu_ps(y + j, exp256(_mm256_loadu_ps(x + j)));
}

/* 4 rows (a quarter panel, broadcast) x 16 columns (one panel, two vectors). */
T2I void mk_avx2(const float *A, const float *B, size_t kc, float *C, size_t ldc, int first)
{
    __m256 c[4][2];
    for (int r = 0; r < 4; r++)
        for (int q = 0; q < 2; q++)
            c[r][q] = first ? _mm256_setzero_ps() : _mm256_loadu_ps(C + r * ldc + 8 * q);
    for (size_t k = 0; k < kc; k++) {
        __m256 b0 = _mm256_loadu_ps(B + k * 16), b1 = _mm256_loadu_ps(B + k * 16 + 8);
        for (int r = 0; r < 4; r++) {
            __m256 av = _mm256_broadcast_ss(A + k * 16 + r);
            c[r][0] = _mm256_fmadd_ps(av, b0, c[r][0]);
            c[r][1] = _mm256_fmadd_ps(av, b1, c[r][1]);
        }
    }
    for (int r = 0; r < 4; r++)
        for (int q = 0; q < 2; q++) _mm256_storeu_ps(C + r * ldc + 8 * q, c[r][q]);
}

static T2 void tile_avx2(const pt_gram_rows *a, size_t i0, size_t ni, const pt_gram_rows *b,
                         size_t j0, size_t nj, float *C, size_t ldc, int upper)
{
    const size_t d = a->d, nir = round_up(ni, 8), npan = (nj + 15) / 16;
    size_t kb = 0;
    do {
        size_t kc = min_sz(KC, d - kb);
        for (size_t q = 0; q < npan; q++) {
            const float *B = b->P + ((j0 / 16 + q) * d + kb) * 16;
            for (size_t ir = 0; ir < nir && !(upper && ir >= (q + 1) * 16); ir += 4) {
                size_t gi = i0 + ir;
                const float *A = a->P + ((gi / 16) * d + kb) * 16 + gi % 16;
                mk_avx2(A, B, kc, C + ir * ldc + q * 16, ldc, kb == 0);
            }
        }
        kb += kc;
    } while (kb < d);
}

/* Q panels against the broadcast row x: Q independent chains in flight. */
T2I void rowq_avx2(const float *P, size_t d, const float *x, size_t p, int Q, float *out)
{
    __m256 c[4][2];
    for (int q = 0; q < Q; q++) c[q][0] = c[q][1] = _mm256_setzero_ps();
    for (size_t k = 0; k < d; k++) {
        __m256 av = _mm256_broadcast_ss(x + k);
        for (int q = 0; q < Q; q++) {
            const float *B = P + ((p + q) * d + k) * 16;
            c[q][0] = _mm256_fmadd_ps(av, _mm256_loadu_ps(B), c[q][0]);
            c[q][1] = _mm256_fmadd_ps(av, _mm256_loadu_ps(B + 8), c[q][1]);
        }
    }
    for (int q = 0; q < Q; q++) {
        _mm256_storeu_ps(out + q * 16, c[q][0]);
        _mm256_storeu_ps(out + q * 16 + 8, c[q][1]);
    }
}

static T2 void row_avx2(const pt_gram_rows *r, const float *x, size_t p0, size_t p1, float *out)
{
    size_t p = p0;
    for (; p + 4 <= p1; p += 4) rowq_avx2(r->P, r->d, x, p, 4, out + (p - p0) * 16);
    for (; p < p1; p++) rowq_avx2(r->P, r->d, x, p, 1, out + (p - p0) * 16);
}

static T2 void norms_avx2(const pt_gram_rows *r, size_t p, float *out)
{
    __m256 c0 = _mm256_setzero_ps(), c1 = _mm256_setzero_ps();
    for (size_t k = 0; k < r->d; k++) {
        __m256 v0 = _mm256_loadu_ps(r->P + (p * r->d + k) * 16);
        __m256 v1 = _mm256_loadu_ps(r->P + (p * r->d + k) * 16 + 8);
        c0 = _mm256_fmadd_ps(v0, v0, c0);
        c1 = _mm256_fmadd_ps(v1, v1, c1);
    }
    _mm256_storeu_ps(out, c0);
    _mm256_storeu_ps(out + 8, c1);
}

/* Continue a squared norm's chain over x[d0, d1) (prediction: the model's extra features). */
static T2 float chain_fma(const float *x, size_t d0, size_t d1, float acc)
{
    for (size_t k = d0; k < d1; k++) acc = __builtin_fmaf(x[k], x[k], acc);
    return acc;
}

/* 8 x 8 transpose in registers: w[c] lane i = v[i] lane c. */
T2I void t8_avx2(const __m256 *v, __m256 *w)
{
    __m256 t[8], u[8];
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_ps(v[i], v[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(v[i], v[i + 1]);
    }
    for (int g = 0; g < 8; g += 4) {
        u[g + 0] = _mm256_shuffle_ps(t[g], t[g + 2], 0x44);
        u[g + 1] = _mm256_shuffle_ps(t[g], t[g + 2], 0xEE);
        u[g + 2] = _mm256_shuffle_ps(t[g + 1], t[g + 3], 0x44);
        u[g + 3] = _mm256_shuffle_ps(t[g + 1], t[g + 3], 0xEE);
    }
    for (int c = 0; c < 4; c++) {
        w[c] = _mm256_permute2f128_ps(u[c], u[c + 4], 0x20);
        w[c + 4] = _mm256_permute2f128_ps(u[c], u[c + 4], 0x31);
    }
}

T2I void store8_avx2(float *p, __m256 v, size_t k)
{
    if (k == 8) {
        _mm256_storeu_ps(p, v);
    } else {
        __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)k), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        _mm256_maskstore_ps(p, m, v);
    }
}

/* As storek_avx512, for a whole tile at once, in 8 x 8 blocks. */
static T2 void store_avx2(const pt_kfun *kf, const float *norm, const float *C, size_t ldc,
                          size_t i0, size_t ni, size_t j0, size_t nj, int diag, float *G, size_t ldg)
{
    for (size_t jb = 0; jb < nj; jb += 8) {
        size_t ncol = min_sz(8, nj - jb);
        __m256 zs = norm ? _mm256_loadu_ps(norm + j0 + jb) : _mm256_setzero_ps();
        for (size_t ib = 0; ib < ni && !(diag && ib / 16 > jb / 16); ib += 8) {
            size_t nrow = min_sz(8, ni - ib);
            __m256 v[8], w[8];
            for (int r = 0; r < 8; r++) {
                __m256 xs = _mm256_set1_ps(norm ? norm[i0 + ib + r] : 0.0f);
                v[r] = kval256(kf, _mm256_loadu_ps(C + (ib + r) * ldc + jb), xs, zs);
            }
            for (size_t r = 0; r < nrow; r++) store8_avx2(G + (i0 + ib + r) * ldg + j0 + jb, v[r], ncol);
            if (diag && ib / 16 == jb / 16) continue; /* the 16 x 16 diagonal block: both halves computed */
            t8_avx2(v, w);
            for (size_t c = 0; c < ncol; c++) store8_avx2(G + (j0 + jb + c) * ldg + i0 + ib, w[c], nrow);
        }
    }
}

/* ============================================================================= AVX-512 */

#define T5 __attribute__((target("avx512f,avx2,fma")))
#define T5I static inline __attribute__((always_inline, target("avx512f,avx2,fma")))

T5I __m512 exp512(__m512 x)
{
    __mmask16 ok = _mm512_cmp_ps_mask(x, _mm512_set1_ps(EXP_LO), _CMP_GE_OQ);
    __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(LOG2E)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fmadd_ps(n, _mm512_set1_ps(-EXP_C1), x);
    r = _mm512_fmadd_ps(n, _mm512_set1_ps(-EXP_C2), r);
    __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(EXP_P0), r, _mm512_set1_ps(EXP_P1));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(EXP_P2));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(EXP_P3));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(EXP_P4));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(EXP_P5));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    /* p 2^n in one instruction; exact, as the result is normal wherever ok */
    return _mm512_maskz_scalef_ps(ok, p, n);
}

T5I __m512 kvalk512(const pt_kfun *kf, const pt_kernel kind, __m512 v, __m512 xs, __m512 zs)
{
    if (kind == PT_KERNEL_POLY) {
        __m512 b = _mm512_fmadd_ps(v, _mm512_set1_ps(kf->gamma), _mm512_set1_ps(kf->coef0));
        __m512 r = _mm512_set1_ps(1.0f);
        for (int e = kf->degree;;) {
            if (e & 1) r = _mm512_mul_ps(r, b);
            e >>= 1;
            if (!e) break;
            b = _mm512_mul_ps(b, b);
        }
        v = r;
    } else if (kind == PT_KERNEL_RBF) {
        __m512 a = _mm512_fmadd_ps(v, _mm512_set1_ps(2.0f * kf->gamma),
                                   _mm512_mul_ps(_mm512_add_ps(xs, zs), _mm512_set1_ps(-kf->gamma)));
        v = exp512(_mm512_min_ps(a, _mm512_setzero_ps()));
    }
    if (kf->add != 0.0f) v = _mm512_add_ps(v, _mm512_set1_ps(kf->add));
    return v;
}

static T5 void kfun_avx512(const pt_kfun *kf, const float *dot, float xs, const float *zs,
                           float *out, size_t n)
{
    __m512 vx = _mm512_set1_ps(xs);
    for (size_t j = 0; j < n; j += 16) {
        __m512 z = zs ? _mm512_loadu_ps(zs + j) : _mm512_setzero_ps();
        _mm512_storeu_ps(out + j, kvalk512(kf, kf->kind, _mm512_loadu_ps(dot + j), vx, z));
    }
}

static T5 void exp_avx512(const float *x, float *y, size_t n)
{
    for (size_t j = 0; j < n; j += 16) _mm512_storeu_ps(y + j, exp512(_mm512_loadu_ps(x + j)));
}

/* 8 rows (half a panel, broadcast) x 16 NP columns (NP panels, one vector each). */
T5I void mk_avx512(const float *A, const float *B, size_t bstep, size_t kc, float *C, size_t ldc,
                   int first, const int NP)
{
    __m512 c[8][3];
#pragma GCC unroll 8
    for (int r = 0; r < 8; r++)
#pragma GCC unroll 3
        for (int q = 0; q < NP; q++)
            c[r][q] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(C + r * ldc + 16 * q);
    for (size_t k = 0; k < kc; k++) {
        __m512 b[3];
#pragma GCC unroll 3
        for (int q = 0; q < NP; q++) b[q] = _mm512_loadu_ps(B + q * bstep + k * 16);
#pragma GCC unroll 8
        for (int r = 0; r < 8; r++) {
            __m512 av = _mm512_set1_ps(A[k * 16 + r]);
#pragma GCC unroll 3
            for (int q = 0; q < NP; q++) c[r][q] = _mm512_fmadd_ps(av, b[q], c[r][q]);
        }
    }
#pragma GCC unroll 8
    for (int r = 0; r < 8; r++)
#pragma GCC unroll 3
        for (int q = 0; q < NP; q++) _mm512_storeu_ps(C + r * ldc + 16 * q, c[r][q]);
}

#define MK_DEF(np)                                                                                 \
    static T5 void mk##np##_avx512(const float *A, const float *B, size_t bs, size_t kc, float *C, \
                                   size_t ldc, int f)                                              \
    {                                                                                              \
        mk_avx512(A, B, bs, kc, C, ldc, f, np);                                                    \
    }
MK_DEF(1)
MK_DEF(2)
MK_DEF(3)

static void store_avx512(pending *p, size_t count);

/* Raw inner products of a tile; after each micro-kernel, per_call blocks of the pending tile
 * pd (if any) are finished. */
static T5 void tile_avx512(const pt_gram_rows *a, size_t i0, size_t ni, const pt_gram_rows *b,
                           size_t j0, size_t nj, float *C, size_t ldc, int upper, pending *pd,
                           size_t per_call)
{
    const size_t d = a->d, nir = round_up(ni, 8), npan = (nj + 15) / 16, bstep = d * 16;
    size_t kb = 0;
    do {
        size_t kc = min_sz(KC, d - kb);
        for (size_t q = 0; q < npan; q += 3) {
            size_t np = min_sz(3, npan - q);
            const float *B = b->P + ((j0 / 16 + q) * d + kb) * 16;
            for (size_t ir = 0; ir < nir && !(upper && ir >= (q + np) * 16); ir += 8) {
                size_t gi = i0 + ir;
                const float *A = a->P + ((gi / 16) * d + kb) * 16 + gi % 16;
                float *Cb = C + ir * ldc + q * 16;
                if (np == 3) mk3_avx512(A, B, bstep, kc, Cb, ldc, kb == 0);
                else if (np == 2) mk2_avx512(A, B, bstep, kc, Cb, ldc, kb == 0);
                else mk1_avx512(A, B, bstep, kc, Cb, ldc, kb == 0);
                if (pd && pd->active) store_avx512(pd, per_call);
            }
        }
        kb += kc;
    } while (kb < d);
}

T5I void rowq_avx512(const float *P, size_t d, const float *x, size_t p, int Q, float *out)
{
    __m512 c[8];
#pragma GCC unroll 8
    for (int q = 0; q < Q; q++) c[q] = _mm512_setzero_ps();
    for (size_t k = 0; k < d; k++) {
        __m512 av = _mm512_set1_ps(x[k]);
#pragma GCC unroll 8
        for (int q = 0; q < Q; q++)
            c[q] = _mm512_fmadd_ps(av, _mm512_loadu_ps(P + ((p + q) * d + k) * 16), c[q]);
    }
#pragma GCC unroll 8
    for (int q = 0; q < Q; q++) _mm512_storeu_ps(out + q * 16, c[q]);
}

static T5 void row_avx512(const pt_gram_rows *r, const float *x, size_t p0, size_t p1, float *out)
{
    size_t p = p0;
    for (; p + 8 <= p1; p += 8) rowq_avx512(r->P, r->d, x, p, 8, out + (p - p0) * 16);
    for (; p + 2 <= p1; p += 2) rowq_avx512(r->P, r->d, x, p, 2, out + (p - p0) * 16);
    for (; p < p1; p++) rowq_avx512(r->P, r->d, x, p, 1, out + (p - p0) * 16);
}

static T5 void norms_avx512(const pt_gram_rows *r, size_t p, float *out)
{
    __m512 c = _mm512_setzero_ps();
    for (size_t k = 0; k < r->d; k++) {
        __m512 v = _mm512_loadu_ps(r->P + (p * r->d + k) * 16);
        c = _mm512_fmadd_ps(v, v, c);
    }
    _mm512_storeu_ps(out, c);
}

/* 16 x 16 transpose in registers: w[c] lane i = v[i] lane c. */
T5I void t16_avx512(const __m512 *v, __m512 *w)
{
    __m512 t[16], u[16], s[16];
#pragma GCC unroll 8
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_ps(v[i], v[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(v[i], v[i + 1]);
    }
    /* u[4g + c], 128-bit lane L: column 4L + c of rows 4g..4g+3 */
#pragma GCC unroll 4
    for (int g = 0; g < 16; g += 4) {
        u[g + 0] = _mm512_shuffle_ps(t[g], t[g + 2], 0x44);
        u[g + 1] = _mm512_shuffle_ps(t[g], t[g + 2], 0xEE);
        u[g + 2] = _mm512_shuffle_ps(t[g + 1], t[g + 3], 0x44);
        u[g + 3] = _mm512_shuffle_ps(t[g + 1], t[g + 3], 0xEE);
    }
    /* s[c]: columns c, c+8 of rows 0-7 ... then whole columns */
#pragma GCC unroll 4
    for (int c = 0; c < 4; c++) {
        s[c] = _mm512_shuffle_f32x4(u[c], u[c + 4], 0x88);
        s[c + 4] = _mm512_shuffle_f32x4(u[c], u[c + 4], 0xdd);
        s[c + 8] = _mm512_shuffle_f32x4(u[c + 8], u[c + 12], 0x88);
        s[c + 12] = _mm512_shuffle_f32x4(u[c + 8], u[c + 12], 0xdd);
    }
#pragma GCC unroll 4
    for (int c = 0; c < 4; c++) {
        w[c] = _mm512_shuffle_f32x4(s[c], s[c + 8], 0x88);
        w[c + 8] = _mm512_shuffle_f32x4(s[c], s[c + 8], 0xdd);
        w[c + 4] = _mm512_shuffle_f32x4(s[c + 4], s[c + 12], 0x88);
        w[c + 12] = _mm512_shuffle_f32x4(s[c + 4], s[c + 12], 0xdd);
    }
}

/* Up to count blocks of a pending tile: kernel function, stored at G[i][j] and, off the
 * diagonal block, transposed at G[j][i] straight from registers. Whole blocks are written with
 * streaming stores: every line is written whole, so reading it first (the write-allocate) is
 * wasted bandwidth (measured: 4-8% of the build). One instance per kernel, so the rows go
 * through the kernel function without a branch. */
T5I void storek_avx512(pending *p, const pt_kernel kind, size_t count)
{
    const pt_kfun *kf = p->kf;
    const float *norm = p->norm, *C = p->C;
    const size_t ldc = p->ldc, ldg = p->ldg, i0 = p->i0, j0 = p->j0;
    for (; count > 0 && p->active; count--, pending_next(p)) {
        const size_t ib = p->ib, jb = p->jb;
        const size_t ncol = min_sz(16, p->nj - jb), nrow = min_sz(16, p->ni - ib);
        __m512 zs = kind == PT_KERNEL_RBF ? _mm512_loadu_ps(norm + j0 + jb) : _mm512_setzero_ps();
        __m512 v[16], w[16];
#pragma GCC unroll 16
        for (int r = 0; r < 16; r++) {
            __m512 xs = kind == PT_KERNEL_RBF ? _mm512_set1_ps(norm[i0 + ib + r]) : zs;
            v[r] = kvalk512(kf, kind, _mm512_loadu_ps(C + (ib + r) * ldc + jb), xs, zs);
        }
        float *g = p->G + (i0 + ib) * ldg + j0 + jb, *gt = p->G + (j0 + jb) * ldg + i0 + ib;
        const int tr = !(p->diag && ib == jb);
        if (tr) t16_avx512(v, w);
        if (nrow == 16 && ncol == 16 && p->stream) {
#pragma GCC unroll 16
            for (int r = 0; r < 16; r++) _mm512_stream_ps(g + r * ldg, v[r]);
            if (tr) {
#pragma GCC unroll 16
                for (int c = 0; c < 16; c++) _mm512_stream_ps(gt + c * ldg, w[c]);
            }
        } else if (nrow == 16 && ncol == 16) {
#pragma GCC unroll 16
            for (int r = 0; r < 16; r++) _mm512_storeu_ps(g + r * ldg, v[r]);
            if (tr) {
#pragma GCC unroll 16
                for (int c = 0; c < 16; c++) _mm512_storeu_ps(gt + c * ldg, w[c]);
            }
        } else {
            __mmask16 cm = (__mmask16)((1u << ncol) - 1u), rm = (__mmask16)((1u << nrow) - 1u);
            for (size_t r = 0; r < nrow; r++) _mm512_mask_storeu_ps(g + r * ldg, cm, v[r]);
            if (tr)
                for (size_t c = 0; c < ncol; c++) _mm512_mask_storeu_ps(gt + c * ldg, rm, w[c]);
        }
    }
}

static T5 void store_lin_avx512(pending *p, size_t n) { storek_avx512(p, PT_KERNEL_LINEAR, n); }
static T5 void store_poly_avx512(pending *p, size_t n) { storek_avx512(p, PT_KERNEL_POLY, n); }
static T5 void store_rbf_avx512(pending *p, size_t n) { storek_avx512(p, PT_KERNEL_RBF, n); }

static void store_avx512(pending *p, size_t count)
{
    if (p->kf->kind == PT_KERNEL_RBF) store_rbf_avx512(p, count);
    else if (p->kf->kind == PT_KERNEL_POLY) store_poly_avx512(p, count);
    else store_lin_avx512(p, count);
}

static T5 void sfence_avx512(void) { _mm_sfence(); }

/* One thread's share of the tiles, each tile's stores interleaved with the next's micro-kernels. */
static void full_avx512(const pt_gram_rows *r, const pt_kfun *kf, float *G, size_t ldg,
                        const size_t *tl, ptrdiff_t nt, float *C2)
{
    const size_t n = r->n, T = PT_GRAM_TILE, nb = (n + T - 1) / T;
    pending pd = {.kf = kf, .norm = r->norm, .G = G, .ldg = ldg, .ldc = T,
                  .stream = (uintptr_t)G % 64 == 0 && ldg % 16 == 0};
    int cur = 0;
#pragma omp for schedule(dynamic, 1) nowait
    for (ptrdiff_t t = 0; t < nt; t++) {
        size_t bi = tl[t] / nb, bj = tl[t] % nb;
        size_t i0 = bi * T, j0 = bj * T, ni = min_sz(T, n - i0), nj = min_sz(T, n - j0);
        float *C = C2 + (size_t)cur * T * T;
        /* spread the pending tile's blocks evenly over this tile's micro-kernel calls */
        size_t calls = (round_up(ni, 8) / 8) * ((nj + 47) / 48) * ((r->d + KC - 1) / KC + (r->d == 0));
        if (bi == bj) calls = calls / 2 + 1;
        size_t blocks = ((pd.ni + 15) / 16) * ((pd.nj + 15) / 16);
        size_t per_call = pd.active ? (blocks + calls - 1) / calls : 1;
        tile_avx512(r, i0, ni, r, j0, nj, C, T, bi == bj, &pd, per_call);
        if (pd.active) store_avx512(&pd, SIZE_MAX);
        pd.C = C;
        pd.i0 = i0;
        pd.ni = ni;
        pd.j0 = j0;
        pd.nj = nj;
        pd.diag = bi == bj;
        pd.ib = pd.jb = 0;
        pd.active = 1;
        cur ^= 1;
    }
    if (pd.active) store_avx512(&pd, SIZE_MAX);
    sfence_avx512(); /* the streaming stores are weakly ordered */
}
#endif /* GRAM_X86 */

/* ============================================================================= dispatch */

void pt_kfun_apply(const pt_kfun *kf, pt_isa isa, const float *dot, float xs, const float *zs,
                   float *out, size_t n)
{
#ifdef GRAM_X86
    if (isa == PT_ISA_AVX512) return kfun_avx512(kf, dot, xs, zs, out, n);
    if (isa == PT_ISA_AVX2) return kfun_avx2(kf, dot, xs, zs, out, n);
#endif
    kfun_c(kf, dot, xs, zs, out, n);
}

static void tile_dots(pt_isa isa, const pt_gram_rows *a, size_t i0, size_t ni,
                      const pt_gram_rows *b, size_t j0, size_t nj, float *C, size_t ldc, int upper)
{
#ifdef GRAM_X86
    if (isa == PT_ISA_AVX512) return tile_avx512(a, i0, ni, b, j0, nj, C, ldc, upper, NULL, 0);
    if (isa == PT_ISA_AVX2) return tile_avx2(a, i0, ni, b, j0, nj, C, ldc, upper);
#endif
    tile_c(a, i0, ni, b, j0, nj, C, ldc, upper);
}

static void row_dots(pt_isa isa, const pt_gram_rows *r, const float *x, size_t p0, size_t p1,
                     float *out)
{
#ifdef GRAM_X86
    if (isa == PT_ISA_AVX512) return row_avx512(r, x, p0, p1, out);
    if (isa == PT_ISA_AVX2) return row_avx2(r, x, p0, p1, out);
#endif
    row_c(r, x, p0, p1, out);
}

void pt_gram_exp(pt_isa isa, const float *x, float *y, size_t n)
{
    isa = pt_gram_isa(isa);
#ifdef GRAM_X86
    if (isa == PT_ISA_AVX512) return exp_avx512(x, y, n);
    if (isa == PT_ISA_AVX2) return exp_avx2(x, y, n);
#endif
    for (size_t j = 0; j < n; j++) y[j] = exp_c(x[j]);
}

/* ================================================================================ rows */

size_t pt_gram_rows_bytes(size_t n, size_t d, pt_kernel kind)
{
    size_t npad = round_up(n, 16), b;
    if (!pt_mul_ok(npad, d, &b) || !pt_mul_ok(b, sizeof(float), &b)) return SIZE_MAX;
    if (kind == PT_KERNEL_RBF) b += npad * sizeof(float);
    return b;
}

/* Pack rows into r->P (and their squared norms into r->norm when it is set). */
static void pack_rows(pt_gram_rows *r, size_t d_norm, pt_isa isa, int threads)
{
    const size_t n = r->n, d = r->d, stride = r->stride;
    const float *X = r->X;
    const ptrdiff_t np = (ptrdiff_t)(r->npad / 16);
#pragma omp parallel for num_threads(threads > 0 ? threads : 1) schedule(static) if (threads > 1 && n * d > 65536)
    for (ptrdiff_t pp = 0; pp < np; pp++) {
        size_t p = (size_t)pp;
        float *dst = r->P + p * d * 16;
        for (size_t l = 0; l < 16; l++) {
            size_t i = p * 16 + l;
            const float *x = X + i * stride;
            for (size_t k = 0; k < d; k++) dst[k * 16 + l] = i < n ? x[k] : 0.0f;
        }
        if (!r->norm) continue;
        float nrm[16];
#ifdef GRAM_X86
        if (isa == PT_ISA_AVX512) norms_avx512(r, p, nrm);
        else if (isa == PT_ISA_AVX2) norms_avx2(r, p, nrm);
        else
#endif
            norms_c(r, p, nrm);
        for (size_t l = 0; l < 16; l++) {
            size_t i = p * 16 + l;
            float acc = nrm[l];
            if (i < n && d_norm > d) {
#ifdef GRAM_X86
                if (isa != PT_ISA_SCALAR) acc = chain_fma(X + i * stride, d, d_norm, acc);
                else
#endif
                    for (size_t k = d; k < d_norm; k++) acc = fmaf(X[i * stride + k], X[i * stride + k], acc);
            }
            r->norm[i] = acc;
        }
    }
}

static void rows_setup(pt_gram_rows *r, const float *X, size_t n, size_t d, size_t stride)
{
    memset(r, 0, sizeof *r);
    r->n = n;
    r->d = d;
    r->npad = round_up(n, 16);
    r->X = X;
    r->stride = stride;
}

pt_status pt_gram_rows_init(pt_gram_rows *r, const float *X, size_t n, size_t d, size_t stride,
                            size_t d_norm, pt_kernel kind, pt_isa isa, int threads)
{
    rows_setup(r, X, n, d, stride);
    size_t bytes = pt_gram_rows_bytes(n, d, PT_KERNEL_LINEAR);
    if (bytes == SIZE_MAX) return pt_fail(PT_ERR_LIMIT, "packed rows: %zu x %zu overflows", n, d);
    if (!(r->P = pt_alloc(bytes, "packed kernel rows"))) return PT_ERR_NOMEM;
    if (kind == PT_KERNEL_RBF && !(r->norm = pt_alloc(r->npad * sizeof(float), "squared norms"))) {
        pt_gram_rows_free(r);
        return PT_ERR_NOMEM;
    }
    pack_rows(r, d_norm, pt_gram_isa(isa), threads);
    return PT_OK;
}

void pt_gram_rows_pack(pt_gram_rows *r, const float *X, size_t n, size_t d, size_t stride,
                       size_t d_norm, pt_kernel kind, pt_isa isa, float *P, float *norm)
{
    rows_setup(r, X, n, d, stride);
    r->P = P;
    r->norm = kind == PT_KERNEL_RBF ? norm : NULL;
    pack_rows(r, d_norm, pt_gram_isa(isa), 1);
}

void pt_gram_rows_free(pt_gram_rows *r)
{
    if (!r) return;
    pt_free(r->P);
    pt_free(r->norm);
    r->P = r->norm = NULL;
}

/* ================================================================================ Gram */

size_t pt_gram_full_scratch_bytes(int threads)
{
    /* two tile buffers a thread: one being computed, one being stored */
    return (size_t)(threads > 0 ? threads : 1) * 2 * PT_GRAM_TILE * PT_GRAM_TILE * sizeof(float);
}

pt_status pt_gram_full(const pt_gram_rows *r, const pt_kfun *kf, pt_isa isa, float *G, size_t ldg,
                       int threads)
{
    isa = pt_gram_isa(isa);
    if (threads < 1) threads = 1;
    const size_t n = r->n, T = PT_GRAM_TILE, nb = (n + T - 1) / T, ntiles = nb * (nb + 1) / 2;
    if (n == 0) return PT_OK;
    float *scratch = pt_alloc(pt_gram_full_scratch_bytes(threads), "Gram tile buffers");
    if (!scratch) return PT_ERR_NOMEM;
    /* tiles in row-major order of the upper triangle: (bi, bj), bj >= bi */
    size_t *tl = malloc(ntiles * sizeof *tl);
    if (!tl) {
        pt_free(scratch);
        return pt_fail(PT_ERR_NOMEM, "cannot allocate the Gram tile list (%zu tiles)", ntiles);
    }
    for (size_t bi = 0, t = 0; bi < nb; bi++)
        for (size_t bj = bi; bj < nb; bj++) tl[t++] = bi * nb + bj;
    const ptrdiff_t nt = (ptrdiff_t)ntiles;

#pragma omp parallel num_threads(threads)
    {
#ifdef _OPENMP
        float *C = scratch + (size_t)omp_get_thread_num() * 2 * T * T;
#else
        float *C = scratch;
#endif
#ifdef GRAM_X86
        if (isa == PT_ISA_AVX512) {
            full_avx512(r, kf, G, ldg, tl, nt, C);
        } else
#endif
        {
#pragma omp for schedule(dynamic, 1)
            for (ptrdiff_t t = 0; t < nt; t++) {
                size_t bi = tl[t] / nb, bj = tl[t] % nb;
                size_t i0 = bi * T, j0 = bj * T, ni = min_sz(T, n - i0), nj = min_sz(T, n - j0);
                tile_dots(isa, r, i0, ni, r, j0, nj, C, T, bi == bj);
#ifdef GRAM_X86
                if (isa == PT_ISA_AVX2)
                    store_avx2(kf, r->norm, C, T, i0, ni, j0, nj, bi == bj, G, ldg);
                else
#endif
                    store_c(kf, r->norm, C, T, i0, ni, j0, nj, bi == bj, G, ldg);
            }
        }
    }
    free(tl);
    pt_free(scratch);
    return PT_OK;
}

/* ============================================================================ kernel rows */

void pt_gram_row(const pt_gram_rows *r, const pt_kfun *kf, pt_isa isa, size_t i, float *out,
                 float a, float *f, pt_axpy_fn axpy, int threads)
{
    isa = pt_gram_isa(isa);
    const float *x = r->X + i * r->stride;
    const float xn = r->norm ? r->norm[i] : 0.0f;
    const size_t npan = r->npad / 16, n = r->n;
    /* chunks of 8 panels (128 columns); threads only when the row is worth a fork */
    const size_t chunk = 8;
    const ptrdiff_t nc = (ptrdiff_t)((npan + chunk - 1) / chunk);
    const int par = threads > 1 && n * (r->d + 8) >= 65536;
#pragma omp parallel for num_threads(threads > 0 ? threads : 1) schedule(static) if (par)
    for (ptrdiff_t c = 0; c < nc; c++) {
        size_t p0 = (size_t)c * chunk, p1 = min_sz(npan, p0 + chunk);
        float *o = out + p0 * 16;
        row_dots(isa, r, x, p0, p1, o);
        pt_kfun_apply(kf, isa, o, xn, r->norm ? r->norm + p0 * 16 : NULL, o, (p1 - p0) * 16);
        if (p1 * 16 > n)
            for (size_t j = n; j < p1 * 16; j++) out[j] = 0.0f;
        if (f) axpy(a, o, f + p0 * 16, min_sz(p1 * 16, n) - p0 * 16);
    }
}

void pt_gram_kvec(const pt_gram_rows *r, const pt_kfun *kf, pt_isa isa, const float *x, float xn,
                  float *out)
{
    isa = pt_gram_isa(isa);
    const size_t npan = r->npad / 16;
    row_dots(isa, r, x, 0, npan, out);
    pt_kfun_apply(kf, isa, out, xn, r->norm, out, npan * 16);
}

void pt_gram_block(const pt_gram_rows *a, size_t i0, size_t ni, const pt_gram_rows *b, size_t j0,
                   size_t nj, const pt_kfun *kf, pt_isa isa, float *C, size_t ldc)
{
    isa = pt_gram_isa(isa);
    const size_t njc = round_up(nj, 16);
    tile_dots(isa, a, i0, ni, b, j0, nj, C, ldc, 0);
    for (size_t i = 0; i < ni; i++)
        pt_kfun_apply(kf, isa, C + i * ldc, a->norm ? a->norm[i0 + i] : 0.0f,
                      b->norm ? b->norm + j0 : NULL, C + i * ldc, njc);
}

/* ========================================================================= reference */

double pt_kfun_ref(const pt_kfun *kf, const float *x, const float *z, size_t d)
{
    double dot = 0.0, dist = 0.0, v;
    for (size_t k = 0; k < d; k++) {
        dot += (double)x[k] * z[k];
        dist += ((double)x[k] - z[k]) * ((double)x[k] - z[k]);
    }
    switch (kf->kind) {
    case PT_KERNEL_POLY: v = pow((double)kf->gamma * dot + kf->coef0, kf->degree); break;
    case PT_KERNEL_RBF: v = exp(-(double)kf->gamma * dist); break;
    default: v = dot;
    }
    return v + kf->add;
}

double pt_gram_tolerance(const pt_kfun *kf, size_t d, double xnorm2, double znorm2)
{
    const double eps = 0x1p-24, nxz = sqrt(xnorm2 * znorm2);
    switch (kf->kind) {
    case PT_KERNEL_POLY: {
        double T = kf->gamma * nxz + fabs((double)kf->coef0);
        return kf->degree * (d + 4.0) * eps * pow(T, kf->degree) + eps * kf->add;
    }
    case PT_KERNEL_RBF:
        return (2.0 * d + 4.0) * eps * kf->gamma * (xnorm2 + znorm2) + 5.0 * eps + eps * kf->add;
    default: return (d + 1.0) * eps * (nxz + kf->add);
    }
}
