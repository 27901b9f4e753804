/* Text helpers shared by the LIBSVM and CSV readers and writers (io_text.c). The number
 * scanner and the number formatting are inline, below: the readers' and writers' inner loops
 * call them once a value. */
#ifndef PT_IO_TEXT_H
#define PT_IO_TEXT_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "data.h"

/* ------------------------------------------------------------------ whole-file access */

/* Open path read-only and stat it (pt_stdin_path: a duplicate of standard input); a message
 * naming path on failure. */
pt_status pt_text_open(const char *path, int *fd, struct stat *st);
/* Whether the regular file fd starts with gzip's magic bytes (1f 8b). */
bool pt_text_gzip(int fd);
/* Read fd to its end into a growing malloc'd buffer (pipes, gzip files and other inputs that
 * cannot be mapped as text), through zlib: gzip members are decompressed (one after another,
 * as gunzip does), anything else is read as it is; a corrupt or truncated gzip stream is an
 * error naming path. The text held never exceeds budget bytes (0: the default budget): past
 * it the read stops with PT_ERR_LIMIT naming the budget and the way out (a file, read in
 * place), so that a gzip bomb, /dev/zero or an endless pipe cost at most the budget. Nothing
 * read gives NULL and 0. */
pt_status pt_text_read_all(const char *path, int fd, size_t budget, const char **data,
                           size_t *len);
/* The whole file in memory: mapped, or read (pipes, gzip: within budget, as
 * pt_text_read_all); *mapped says which, for pt_text_unmap. A mapping is guarded (*guard:
 * pt_guard_damaged once the file shrank under it, its part that went then reading as zeros;
 * NULL when read). An empty file gives len 0 and data NULL. */
pt_status pt_text_map(const char *path, size_t budget, const char **data, size_t *len,
                      bool *mapped, pt_guard **guard);
void pt_text_unmap(const char *data, size_t len, bool mapped, pt_guard *guard);

/* ------------------------------------------------------------------------ writers */

/* The text writers fill a buffer of PT_TEXT_WBUF bytes, and flush it before a value when
 * fewer than PT_TEXT_WMAX_ITEM bytes (the longest " idx:value" or label text) are left. */
#define PT_TEXT_WBUF (1u << 20)
#define PT_TEXT_WMAX_ITEM 64

/* Row i of ds, its label's text given, appended to buf at *used (flushing with pt_text_flush
 * when it runs short); x: a dense row's stride floats (a compact row widened), NULL for a
 * sparse one. */
typedef pt_status (*pt_text_row_fn)(FILE *f, const pt_dataset *ds, const char *label, size_t i,
                                    const float *x, char *buf, size_t *used);
/* Write the *used bytes of buf to f; *used = 0. */
pt_status pt_text_flush(FILE *f, char *buf, size_t *used);
/* Every row of ds by fn through one buffer, numbers in the C locale; each class's label as
 * the shortest %.17g-or-less text that reads back exactly. Compact rows are widened one at a
 * time (the values of the float32 copy, which is not made); a streamed dataset's rows are
 * walked window by window. */
pt_status pt_text_write_rows(FILE *f, const pt_dataset *ds, pt_text_row_fn fn);

/* Decimal digits of u at p; returns the end. */
static inline char *pt_put_uint(char *p, uint64_t u)
{
    char tmp[24];
    int k = 0;
    do tmp[k++] = (char)('0' + u % 10);
    while (u /= 10);
    while (k) *p++ = tmp[--k];
    return p;
}

/* v as %.9g (exact for floats), with integers below 1e9 printed directly (the same text). */
static inline char *pt_put_float(char *p, float v)
{
    /* the range test first: converting a float beyond int32 is undefined */
    if (fabsf(v) < 1e9f && v == (float)(int32_t)v && !(v == 0.0f && signbit(v))) {
        if (v < 0) *p++ = '-';
        return pt_put_uint(p, (uint64_t)fabsf(v));
    }
    return p + snprintf(p, 32, "%.9g", v);
}

/* ------------------------------------------------------------------------ numbers */

/* Results of the slow parsers. */
enum { NUM_OK = 0, NUM_BAD = 1, NUM_NONFINITE = 2 };

/* The slow parsers on [s, s + len): NUM_OK, NUM_BAD (not a number) or NUM_NONFINITE. */
int pt_parse_float_slow(const char *s, size_t len, float *out);
int pt_parse_double_slow(const char *s, size_t len, double *out);

/* The fast scanner: pt_scan_float and pt_scan_double scan one number at p (before end) and
 * return where it ends, or NULL when it is not in the plain decimal form they take (the caller
 * then hands the token to the slow parsers). Their results equal strtof's and strtod's. */

static inline bool is_digit(char c) { return (unsigned char)(c - '0') < 10; }

typedef struct decimal {
    uint64_t m; /* significant digits, at most 19 */
    int e10;    /* value = m * 10^e10 */
    bool neg;
} decimal;

static const uint64_t pow10_u64[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000,
                                      100000000};

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HAVE_SWAR 1
/* The leading ASCII digits (0..8) of the 8 bytes at p, and their value in *value: eight
 * characters at a time, so a digit run costs no branch per character (SWAR as in simdjson).
 * Carries and borrows only start at non-digit bytes and only move to later bytes. */
static inline int digits8(const char *p, uint64_t *value)
{
    const uint64_t ones = 0x0101010101010101u;
    uint64_t v;
    memcpy(&v, p, sizeof v);
    uint64_t bad = ((v & 0xF0 * ones) ^ 0x30 * ones) | (((v + 0x06 * ones) & 0xF0 * ones) ^ 0x30 * ones);
    int k = bad ? __builtin_ctzll(bad) >> 3 : 8;
    uint64_t t = v - 0x30 * ones;
    t = k ? t << (8 * (8 - k)) : 0; /* the k digits, after 8-k zero digits */
    t = t * 10 + (t >> 8);
    t = (((t & 0x000000FF000000FFu) * 0x000F424000000064u) +
         (((t >> 16) & 0x000000FF000000FFu) * 0x0000271000000001u)) >> 32;
    *value = (uint32_t)t;
    return k;
}
#else
#define HAVE_SWAR 0
#endif

/* Append the digits at p to *m (counting them in *nd); NULL past 19 digits. Runs of up to
 * 15 digits take two SWAR words and no loop. */
static inline const char *scan_digits(const char *p, const char *end, uint64_t *m, int *nd)
{
#if HAVE_SWAR
    if (end - p >= 16) {
        uint64_t v1, v2;
        int k1 = digits8(p, &v1), k2 = digits8(p + 8, &v2);
        if (k1 < 8) {
            if (*nd + k1 > 19) return NULL;
            *m = *m * pow10_u64[k1] + v1;
            *nd += k1;
            return p + k1;
        }
        if (k2 < 8) {
            if (*nd + 8 + k2 > 19) return NULL;
            *m = (*m * pow10_u64[8] + v1) * pow10_u64[k2] + v2;
            *nd += 8 + k2;
            return p + 8 + k2;
        }
    }
#endif
    for (; p < end && is_digit(*p); p++) {
        if (*nd == 19) return NULL;
        *m = *m * 10 + (uint64_t)(*p - '0');
        ++*nd;
    }
    return p;
}

/* Scan [+-]digits[.digits][(e|E)[+-]digits] at p, stopping at end. Returns where the number
 * ends, or NULL when the text is not in that plain form or has more than 19 digits (leading
 * zeros included): the caller then hands the whole token to strtof/strtod. */
static inline const char *scan_decimal(const char *p, const char *end, decimal *dec)
{
    uint64_t m = 0;
    int nd = 0, e10 = 0;
    char c0 = p < end ? *p : '\0';
    bool neg = c0 == '-';
    p += neg | (c0 == '+');
    p = scan_digits(p, end, &m, &nd);
    if (!p) return NULL;
    if (p < end && *p == '.') {
        int before = nd;
        p = scan_digits(p + 1, end, &m, &nd);
        if (!p) return NULL;
        e10 = before - nd;
    }
    if (nd == 0) return NULL;
    if (p < end && (*p | 0x20) == 'e') {
        p++;
        bool eneg = false;
        if (p < end && (*p == '-' || *p == '+')) eneg = *p++ == '-';
        if (p == end || !is_digit(*p)) return NULL;
        int x = 0;
        for (; p < end && is_digit(*p); p++)
            if (x < 100000) x = x * 10 + (*p - '0'); /* saturate: far outside the fast range */
        e10 += eneg ? -x : x;
    }
    dec->m = m;
    dec->e10 = m ? e10 : 0;
    dec->neg = neg;
    return p;
}

static const double pow10_exact[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                       1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                       1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* |m * 10^e10| as a correctly rounded double when both m and 10^|e10| are exact doubles
 * (Clinger's fast path: one IEEE multiply or divide); false otherwise. */
static inline bool decimal_to_double(const decimal *dec, double *out)
{
    if (dec->m >= (UINT64_C(1) << 53) || dec->e10 < -22 || dec->e10 > 22) return false;
    double m = (double)dec->m;
    *out = dec->e10 >= 0 ? m * pow10_exact[dec->e10] : m / pow10_exact[-dec->e10];
    return true;
}

static const double pow10_inv[23] = {1e0,   1e-1,  1e-2,  1e-3,  1e-4,  1e-5,  1e-6,  1e-7,
                                     1e-8,  1e-9,  1e-10, 1e-11, 1e-12, 1e-13, 1e-14, 1e-15,
                                     1e-16, 1e-17, 1e-18, 1e-19, 1e-20, 1e-21, 1e-22};

/* A float from the decimal at p, equal to strtof's; NULL when the caller must use strtof.
 * m * 10^e is computed in double: exactly rounded for e >= 0, and within 2 double ulps for
 * e < 0 (m times the rounded 1e-k: a multiply instead of a slow divide). Rounding that
 * double to float gives strtof's answer unless it lies within those 2 ulps of a midpoint
 * between two floats (the low 29 of its 52 fraction bits near 1000...0): then strtof
 * decides. The fast range, 1e-22 .. 9e37, holds only normal floats. */
static inline const char *pt_scan_float(const char *p, const char *end, float *out)
{
    decimal dec;
    p = scan_decimal(p, end, &dec);
    if (!p) return NULL;
    float f = 0.0f;
    if (dec.m != 0) {
        if (dec.m >= (UINT64_C(1) << 53) || dec.e10 < -22 || dec.e10 > 22) return NULL;
        double m = (double)dec.m;
        double v = dec.e10 >= 0 ? m * pow10_exact[dec.e10] : m * pow10_inv[-dec.e10];
        uint64_t bits;
        memcpy(&bits, &v, sizeof bits);
        uint64_t low = bits & ((UINT64_C(1) << 29) - 1);
        if (low - ((UINT64_C(1) << 28) - 3) <= 6) return NULL;
        f = (float)v;
    }
    /* The sign without a branch: signs of data values are unpredictable. */
    uint32_t fb;
    memcpy(&fb, &f, sizeof fb);
    fb |= (uint32_t)dec.neg << 31;
    memcpy(out, &fb, sizeof fb);
    return p;
}

static inline const char *pt_scan_double(const char *p, const char *end, double *out)
{
    decimal dec;
    double v;
    p = scan_decimal(p, end, &dec);
    if (!p) return NULL;
    if (dec.m == 0) v = 0.0;
    else if (!decimal_to_double(&dec, &v)) return NULL;
    *out = dec.neg ? -v : v;
    return p;
}

#endif /* PT_IO_TEXT_H */
