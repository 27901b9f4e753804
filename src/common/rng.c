/* xoshiro256** seeded by splitmix64: the same streams on every machine. */
#include <math.h>

#include "common.h"

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void pt_rng_seed(pt_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t pt_rng_next(pt_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double pt_rng_uniform(pt_rng *r) { return (double)(pt_rng_next(r) >> 11) * 0x1.0p-53; }

double pt_rng_normal(pt_rng *r)
{
    /* Box-Muller with one draw kept simple: deterministic, two uniforms per normal. */
    double u1 = pt_rng_uniform(r), u2 = pt_rng_uniform(r);
    if (u1 < 0x1.0p-60) u1 = 0x1.0p-60;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

uint64_t pt_rng_below(pt_rng *r, uint64_t n)
{
    /* Lemire's nearly divisionless method with rejection: unbiased. */
    unsigned __int128 m = (unsigned __int128)pt_rng_next(r) * n;
    uint64_t lo = (uint64_t)m;
    if (lo < n) {
        uint64_t t = -n % n;
        while (lo < t) {
            m = (unsigned __int128)pt_rng_next(r) * n;
            lo = (uint64_t)m;
        }
    }
    return (uint64_t)(m >> 64);
}

void pt_rng_shuffle(pt_rng *r, uint32_t *a, size_t n)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)pt_rng_below(r, i);
        uint32_t t = a[i - 1];
        a[i - 1] = a[j];
        a[j] = t;
    }
}

void pt_rng_shuffle_chunks(pt_rng *r, uint32_t *a, size_t n, size_t chunk)
{
    if (chunk == 0) {
        pt_rng_shuffle(r, a, n);
        return;
    }
    if (n == 0) return;
    /* a chunk of n rows or more is one chunk of n: the same order, and no sum below wraps */
    if (chunk > n) chunk = n;
    /* the chunk order first, in a[0..C), then each chunk's rows written from the back: chunk
     * position k starts at or after k, so nothing not yet read is overwritten */
    const size_t C = (n + chunk - 1) / chunk, last = n - (C - 1) * chunk;
    for (size_t k = 0; k < C; k++) a[k] = (uint32_t)k;
    pt_rng_shuffle(r, a, C);
    size_t short_at = 0; /* the position of the last (shorter) chunk */
    while (a[short_at] != C - 1) short_at++;
    for (size_t k = C; k-- > 0;) {
        size_t c = a[k], rows = c == C - 1 ? last : chunk;
        size_t start = k * chunk - (short_at < k ? chunk - last : 0);
        for (size_t j = rows; j-- > 0;) a[start + j] = (uint32_t)(c * chunk + j);
    }
    for (size_t k = 0, start = 0; k < C; k++) {
        size_t rows = k == short_at ? last : chunk;
        pt_rng_shuffle(r, a + start, rows);
        start += rows;
    }
}
