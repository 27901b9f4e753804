/* Feature expansion inside the library: an expander built once per (parameters, input d), used
 * row by row (the streamed online path), block by block (materialisation, prediction). */
#ifndef PT_EXPAND_H
#define PT_EXPAND_H

#include "data/data.h"
#include "kernels/kernels.h"

/* A row transformation applied on the fly (streamed feature expansion): map writes the
 * d_out mapped features of x, zero padded to pt_stride_for(d_out) floats, into out. */
typedef struct pt_row_map {
    size_t d_out;
    void (*map)(const void *ctx, const float *x, float *out);
    const void *ctx;
} pt_row_map;

typedef struct pt_expander pt_expander;

/* The expansion's own parameters: POLY's degree in 1..32 and coef0 >= 0, RFF's D >= 1 and
 * gamma > 0 (and a kind given). */
pt_status pt_expand_check_params(const pt_expand_params *p);

/* Check the parameters and build what the expansion needs once: POLY's monomial layout and
 * coefficient vector, RFF's W and b from the seed. Refuses an output dimension over
 * p->max_features with the dimension and the bytes one expanded row needs. The rows are
 * computed by k's expansion kernels (the same values on every ISA). */
pt_status pt_expander_create(const pt_expand_params *p, size_t d_in, const pt_kernels *k,
                             pt_expander **out);
void pt_expander_free(pt_expander *e);
size_t pt_expander_d_in(const pt_expander *e);
size_t pt_expander_d_out(const pt_expander *e);

/* One row: reads x[0..d_in), writes pt_stride_for(d_out) floats into out (zero padded).
 * Deterministic; POLY gives bit-identical values to pt_expander_block. POLY reads entries of
 * out before it writes them (whole-vector copies spill into later entries): give it
 * initialised memory (a reused or zeroed buffer) so no garbage is read. */
void pt_expander_row(const pt_expander *e, const float *x, float *out);
/* rows rows of X (ldx floats apart, d_in used) into out (ldo >= pt_stride_for(d_out) floats
 * apart, zero padded). RFF: one sgemm for the block (rounding differs from the row form in the
 * last bits). Single-threaded apart from what BLAS does. */
void pt_expander_block(const pt_expander *e, const float *X, size_t ldx, size_t rows, float *out,
                       size_t ldo);
/* The row map the online path calls for every sample; valid while e lives. */
pt_row_map pt_expander_row_map(const pt_expander *e);
/* Rows a block of pt_expander_block should hold: about 512 KiB of output, so a block stays in
 * L2 while it is used. */
size_t pt_expander_block_rows(const pt_expander *e);

/* pt_expand with an expander already built; budget is the byte limit of the output matrix,
 * budget_field the parameter it comes from (named in a refusal). */
pt_status pt_expand_with(const pt_dataset *ds, const pt_expander *e, size_t budget,
                         const char *budget_field, pt_dataset **out);

#endif /* PT_EXPAND_H */
