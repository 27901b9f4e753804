/*
 * The constants of the RBF kernel's exp, shared by every ISA's Gram micro-kernels so that they
 * run the same IEEE operations (gram_scalar.c's exp_ref is the sequence, in C).
 *
 * exp(x), x <= 0: n = rint(x log2 e), r = x - n ln2 (in two parts, Cephes), exp(r) by a
 * degree-7 polynomial in Horner form (Cephes expf's minimax coefficients, |r| <= ln2 / 2),
 * times 2^n. Below EXP_LO the result is 0 (exp(-87) = 1.6e-38, the end of the normal range;
 * above it every result is normal, so scaling by 2^n is exact in every variant).
 */
#ifndef PT_KERNELS_GRAM_EXP_H
#define PT_KERNELS_GRAM_EXP_H

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

#endif /* PT_KERNELS_GRAM_EXP_H */
