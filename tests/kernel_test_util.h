/*
 * What test_kernels.c and neon_harness.c (the same checks for aarch64, without the check
 * library) share: the operand sizes and offsets, the canary, the random numbers and the
 * bit comparisons. Header-only, so the harness builds from its own file and this one.
 */
#ifndef PT_KERNEL_TEST_UTIL_H
#define PT_KERNEL_TEST_UTIL_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#define MAXN 257
#define MAXOFF 16
/* Room for the largest offset, n, and 16 canary floats on each side, rounded up to a
 * multiple of 16 floats (aligned_alloc wants a size that is a multiple of the alignment). */
#define BUFLEN ((16 + MAXOFF + MAXN + 16 + 15) / 16 * 16)
#define CANARY -12345.678f

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

/* xorshift64*: 64 random bits. */
static inline uint64_t rng_next(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dull;
}

/* Uniform in [-1, 1): 24 random bits. */
static inline float urand(void) { return (float)(rng_next() >> 40) * (2.0f / 16777216.0f) - 1.0f; }

/* Uniform integer in [0, n), n > 0 (the bias of the modulo is far below what the tests see). */
static inline size_t rand_below(size_t n) { return (size_t)((rng_next() >> 11) % n); }

/* Integer in [-k, k]. */
static inline float irand(int k) { return floorf((urand() + 1.0f) * 0.5f * (float)(2 * k + 1)) - (float)k; }

/* Bit equality of float arrays (so -0 vs +0 and NaN payloads count). */
static inline int same_bits(const float *a, const float *b, size_t n) { return memcmp(a, b, n * sizeof *a) == 0; }

static inline int same_float(float a, float b) { return memcmp(&a, &b, sizeof a) == 0; }

/* A second offset for another operand, so operands are misaligned differently. */
static inline size_t other_off(size_t off, size_t k) { return (off * (2 * k + 3) + k) % MAXOFF; }

#endif /* PT_KERNEL_TEST_UTIL_H */
