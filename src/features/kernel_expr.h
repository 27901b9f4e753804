/*
 * Kernel expressions (pt_train_params.kernel_expr, PT_KERNEL_EXPR): parsing with the kernels'
 * closure rules checked, the gamma rules resolved, the canonical text, and evaluation. The
 * tree type is pt_kexpr (kernels/kernels.h), so that a pt_kfun carries it by value.
 */
#ifndef PT_KERNEL_EXPR_H
#define PT_KERNEL_EXPR_H

#include "data/data.h"
#include "kernels/kernels.h"

/* Parse text into *e. PT_ERR_INVALID with the position and the reason on a syntax error or a
 * kernel the closure rules do not give (prefixed "pt_train_params.kernel_expr"). */
pt_status pt_kexpr_parse(const char *text, pt_kexpr *e);

/* 1 if a gamma of e is still a rule (PT_GAMMA_SCALE, PT_GAMMA_AUTO). */
int pt_kexpr_has_rule(const pt_kexpr *e);

/* Replace the gamma rules by the numbers they give on ds (pt_gamma_resolve). */
void pt_kexpr_resolve(pt_kexpr *e, const pt_dataset *ds);

/* The canonical text (no spaces, every argument, numbers %.9g: parses back to the same tree)
 * into buf of cap bytes; PT_ERR_INVALID when it does not fit. */
pt_status pt_kexpr_format(const pt_kexpr *e, char *buf, size_t cap);

/* 1 if e names the same kernel as f (the same canonical text). */
int pt_kexpr_same(const pt_kexpr *e, const pt_kexpr *f);

/* K from x.z and the squared norms, in double. */
double pt_kexpr_eval(const pt_kexpr *e, double dot, double xn, double zn);

/* The micro-kernels' contracts (kernels.h: pt_gram_kfun_ukr, pt_gram_store_ukr) for
 * PT_KERNEL_EXPR, in portable C: kf->add added after the expression, values rounded to float
 * once. zn is read (whole blocks) as for RBF. */
void pt_kexpr_kfun(const pt_kfun *kf, const float *dot, float xn, const float *zn, float *out,
                   size_t n);
void pt_kexpr_store(const pt_kfun *kf, const float *C, size_t ldc, const float *xn,
                    const float *zn, size_t nrow, size_t ncol, float *G, float *Gt, size_t ldg);

#endif /* PT_KERNEL_EXPR_H */
