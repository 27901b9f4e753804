/* The small grid ptron train --search tries on each path, one point at a time. */
#include <stdio.h>

#include "workflow.h"

static const float margins[] = {0.0f, 0.1f, 1.0f};
static const int epochs[] = {10, 30};
static const float lambdas[] = {1e-5f, 1e-4f, 1e-3f, 1e-2f};
static const float gammas[] = {0.1f, 1.0f, 10.0f};

#define LEN(a) (sizeof(a) / sizeof((a)[0]))

/* online: variant x margin x epochs */
static int online_point(pt_train_params *p, size_t i, char *desc, size_t cap)
{
    if (i >= 2 * LEN(margins) * LEN(epochs)) return 0;
    p->variant = i % 2 ? PT_VARIANT_AVERAGED : PT_VARIANT_CLASSIC;
    p->margin = margins[i / 2 % LEN(margins)];
    p->epochs = epochs[i / 2 / LEN(margins)];
    snprintf(desc, cap, "--margin %g --epochs %d%s", (double)p->margin, p->epochs,
             i % 2 ? " --averaged" : "");
    return 1;
}

/* batch: the hinge loss with lambda x (pegasos, invsqrt), then the perceptron loss */
static int batch_point(pt_train_params *p, size_t i, char *desc, size_t cap)
{
    size_t n = 2 * LEN(lambdas);
    if (i > n) return 0;
    if (i == n) {
        p->batch.loss = PT_LOSS_PERCEPTRON;
        p->batch.lambda = 0.0f;
        p->batch.schedule = PT_SCHEDULE_CONSTANT;
        snprintf(desc, cap, "--loss perceptron --lambda 0 --schedule constant");
        return 1;
    }
    p->batch.loss = PT_LOSS_HINGE;
    p->batch.lambda = lambdas[i / 2];
    p->batch.schedule = i % 2 ? PT_SCHEDULE_INVSQRT : PT_SCHEDULE_PEGASOS;
    snprintf(desc, cap, "--loss hinge --lambda %g --schedule %s", (double)p->batch.lambda,
             pt_schedule_name(p->batch.schedule));
    return 1;
}

/* kernel: (rbf at each gamma, poly of degree 2 and 3, linear) x variant */
static int kernel_point(pt_train_params *p, size_t i, char *desc, size_t cap)
{
    size_t kinds = LEN(gammas) + 3;
    if (i >= 2 * kinds) return 0;
    size_t k = i / 2;
    p->variant = i % 2 ? PT_VARIANT_AVERAGED : PT_VARIANT_CLASSIC;
    const char *avg = i % 2 ? " --averaged" : "";
    if (k < LEN(gammas)) {
        p->kernel.kind = PT_KERNEL_RBF;
        p->kernel.gamma = gammas[k];
        snprintf(desc, cap, "--kernel rbf --gamma %g%s", (double)p->kernel.gamma, avg);
    } else if (k < LEN(gammas) + 2) {
        p->kernel.kind = PT_KERNEL_POLY;
        p->kernel.degree = (int)(k - LEN(gammas)) + 2;
        snprintf(desc, cap, "--kernel poly --degree %d --coef0 %g%s", p->kernel.degree,
                 (double)p->kernel.coef0, avg);
    } else {
        p->kernel.kind = PT_KERNEL_LINEAR;
        snprintf(desc, cap, "--kernel linear%s", avg);
    }
    return 1;
}

int pt_search_point(pt_train_params *p, size_t i, char *desc, size_t cap)
{
    switch (p->path) {
    case PT_PATH_BATCH: return batch_point(p, i, desc, cap);
    case PT_PATH_KERNEL: return kernel_point(p, i, desc, cap);
    default: return online_point(p, i, desc, cap);
    }
}
