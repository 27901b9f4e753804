/* Training parameters: their defaults, the names of their enums' values and their checks; and
 * parameters by name, tables of pt_train_params' and pt_expand_params' fields, so that a
 * binding (or a configuration file) sets and reads them as text without knowing the structs'
 * layout. */
#include <errno.h>
#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "features/kernel_expr.h"
#include "model.h"

void pt_train_params_init(pt_train_params *p)
{
    memset(p, 0, sizeof *p);
    p->struct_size = sizeof *p;
    p->path = PT_PATH_ONLINE;
    p->epochs = 10;
    p->eta = 1.0f;
    p->margin = 0.0f;
    p->variant = PT_VARIANT_CLASSIC;
    p->seed = 1;
    p->bias = 1;
    p->isa = PT_ISA_AUTO;
    p->mem_budget_bytes = pt_default_mem_budget();
    p->batch.loss = PT_LOSS_PERCEPTRON;
    p->batch.lambda = 0.0f;
    p->batch.schedule = PT_SCHEDULE_CONSTANT;
    p->kernel.kind = PT_KERNEL_LINEAR;
    p->kernel.degree = 2;
    p->kernel.gamma = PT_GAMMA_SCALE;
    p->kernel.coef0 = 1.0f;
    pt_expand_params_init(&p->expand);
    p->expand.kind = PT_EXPAND_NONE;
}

#define NAME_TABLE(type, fn_name, fn_parse, what, ...)                                              \
    static const struct { const char *name; type v; } fn_name##_table[] = {__VA_ARGS__};          \
    const char *fn_name(type v)                                                                    \
    {                                                                                              \
        for (size_t i = 0; i < sizeof fn_name##_table / sizeof fn_name##_table[0]; i++)           \
            if (fn_name##_table[i].v == v) return fn_name##_table[i].name;                         \
        return "unknown";                                                                          \
    }                                                                                              \
    pt_status fn_parse(const char *name, type *out)                                                \
    {                                                                                              \
        char list[256] = "";                                                                       \
        for (size_t i = 0; i < sizeof fn_name##_table / sizeof fn_name##_table[0]; i++) {         \
            if (strcmp(fn_name##_table[i].name, name) == 0) {                                      \
                *out = fn_name##_table[i].v;                                                       \
                return PT_OK;                                                                      \
            }                                                                                      \
            strcat(list, i ? ", " : "");                                                           \
            strcat(list, fn_name##_table[i].name);                                                 \
        }                                                                                          \
        return pt_fail(PT_ERR_INVALID, "unknown " what " '%s' (%s)", name, list);                 \
    }

NAME_TABLE(pt_path, pt_path_name, pt_path_parse, "path", {"online", PT_PATH_ONLINE},
           {"batch", PT_PATH_BATCH}, {"kernel", PT_PATH_KERNEL})
NAME_TABLE(pt_loss, pt_loss_name, pt_loss_parse, "loss", {"perceptron", PT_LOSS_PERCEPTRON},
           {"hinge", PT_LOSS_HINGE}, {"squared", PT_LOSS_SQUARED})
NAME_TABLE(pt_schedule, pt_schedule_name, pt_schedule_parse, "schedule",
           {"constant", PT_SCHEDULE_CONSTANT}, {"invsqrt", PT_SCHEDULE_INVSQRT},
           {"pegasos", PT_SCHEDULE_PEGASOS})
NAME_TABLE(pt_kernel, pt_kernel_name, pt_kernel_parse, "kernel", {"linear", PT_KERNEL_LINEAR},
           {"poly", PT_KERNEL_POLY}, {"rbf", PT_KERNEL_RBF}, {"expr", PT_KERNEL_EXPR})
NAME_TABLE(pt_batch_impl, pt_batch_impl_name, pt_batch_impl_parse, "batch implementation",
           {"auto", PT_BATCH_AUTO}, {"gemv", PT_BATCH_GEMV}, {"fused", PT_BATCH_FUSED})
NAME_TABLE(pt_multiclass, pt_multiclass_name, pt_multiclass_parse, "multiclass method",
           {"ovr", PT_MULTI_OVR}, {"direct", PT_MULTI_DIRECT})
NAME_TABLE(pt_online_pass, pt_online_pass_name, pt_online_pass_parse, "pass",
           {"auto", PT_PASS_AUTO}, {"sequential", PT_PASS_SEQUENTIAL}, {"blocked", PT_PASS_BLOCKED})
NAME_TABLE(pt_mix, pt_mix_name, pt_mix_parse, "mixing", {"uniform", PT_MIX_UNIFORM},
           {"mistakes", PT_MIX_MISTAKES})
NAME_TABLE(pt_gram_storage, pt_gram_storage_name, pt_gram_storage_parse, "Gram storage",
           {"auto", PT_GRAM_AUTO}, {"full", PT_GRAM_FULL}, {"rows", PT_GRAM_ROWS})

const char *pt_variant_name(pt_variant v)
{
    switch (v) {
    case PT_VARIANT_CLASSIC: return "classic";
    case PT_VARIANT_AVERAGED: return "averaged";
    case PT_VARIANT_VOTED: return "voted";
    }
    return "unknown";
}

/* Counts of rows: an order holds 32-bit row indices. */
#define MAX_CHUNK_ROWS UINT32_MAX

static pt_status check_enums_and_flags(const pt_train_params *p);

/* The fields whose ranges stand alone, each checked against its own bounds. */
static pt_status check_ranges(const pt_train_params *p)
{
    PT_TRY(check_enums_and_flags(p));
    if ((int)p->online.mix < 0 || p->online.mix > PT_MIX_MISTAKES)
        return pt_fail(PT_ERR_INVALID, "pt_train_params.mix is not one of uniform, mistakes "
                       "(got %d)", (int)p->online.mix);
    if (p->online.shuffle_chunk > MAX_CHUNK_ROWS)
        return pt_fail(PT_ERR_INVALID, "pt_train_params.shuffle_chunk must be at most %u rows "
                       "(got %zu)", (unsigned)MAX_CHUNK_ROWS, p->online.shuffle_chunk);
    /* a budget below what any run needs beside its data would be ignored, not honoured */
    if (p->mem_budget_bytes < PT_MIN_MEM_BUDGET)
        return pt_fail(PT_ERR_INVALID, "pt_train_params.mem_budget_bytes must be at least %zu "
                       "bytes (1 MiB; got %zu)", PT_MIN_MEM_BUDGET, p->mem_budget_bytes);
    if (p->threads > PT_MAX_THREADS)
        return pt_fail(PT_ERR_INVALID, "pt_train_params.threads must be at most %d (got %d)",
                       PT_MAX_THREADS, p->threads);
    return PT_OK;
}

pt_status pt_train_params_check(const pt_train_params *p)
{
    PT_TRY(PT_CHECK_STRUCT(p, pt_train_params));
    PT_TRY(PT_CHECK_STRUCT(&p->expand, pt_expand_params));
    PT_TRY(check_ranges(p));
    if (p->epochs < 1)
        return pt_fail(PT_ERR_INVALID, "pt_train_params.epochs must be at least 1 (got %d)",
                       p->epochs);
    if (!(p->eta > 0.0f) || !isfinite(p->eta))
        return pt_fail(PT_ERR_INVALID, "pt_train_params.eta must be a positive number (got %g)",
                       (double)p->eta);
    if (!isfinite(p->margin) || p->margin < 0.0f)
        return pt_fail(PT_ERR_INVALID, "pt_train_params.margin must be >= 0 (got %g)",
                       (double)p->margin);
    if (!isfinite(p->batch.lambda) || p->batch.lambda < 0.0f)
        return pt_fail(PT_ERR_INVALID, "pt_train_params.lambda must be >= 0 (got %g)",
                       (double)p->batch.lambda);
    if (p->batch.schedule == PT_SCHEDULE_PEGASOS && !(p->batch.lambda > 0.0f))
        return pt_fail(PT_ERR_INVALID, "pt_train_params.schedule PT_SCHEDULE_PEGASOS needs "
                                       "pt_train_params.lambda > 0");
    if (p->path == PT_PATH_BATCH && p->variant != PT_VARIANT_CLASSIC)
        return pt_fail(PT_ERR_INVALID, "the batch path has no %s variant (it would train the plain "
                       "iterate): average its iterates with pt_train_params.average_iterates",
                       p->variant == PT_VARIANT_VOTED ? "PT_VARIANT_VOTED" : "PT_VARIANT_AVERAGED");
    if (p->threads < 0)
        return pt_fail(PT_ERR_INVALID, "pt_train_params.threads must be >= 0 (got %d)",
                       p->threads);
    if (p->kernel.degree < 1 || p->kernel.degree > 32)
        return pt_fail(PT_ERR_INVALID, "pt_train_params.degree must be in 1..32 (got %d)",
                       p->kernel.degree);
    if ((!(p->kernel.gamma > 0.0f) || !isfinite(p->kernel.gamma)) && p->kernel.gamma != PT_GAMMA_SCALE &&
        p->kernel.gamma != PT_GAMMA_AUTO)
        return pt_fail(PT_ERR_INVALID,
                       "pt_train_params.gamma must be a positive number, PT_GAMMA_SCALE or "
                       "PT_GAMMA_AUTO (got %g)",
                       (double)p->kernel.gamma);
    if (!isfinite(p->kernel.coef0)) return pt_fail(PT_ERR_INVALID, "pt_train_params.coef0 must be finite");
    /* (gamma x.z + c)^k = sum_j C(k, j) c^(k-j) (gamma x.z)^j is an inner product of feature
     * maps (a kernel) only for c >= 0: with c < 0 the terms of odd k - j have negative
     * coefficients, which no feature map gives, and the mistake bounds (docs/theory.md) are
     * void */
    if (p->path == PT_PATH_KERNEL && p->kernel.kind == PT_KERNEL_POLY && p->kernel.coef0 < 0.0f)
        return pt_fail(PT_ERR_INVALID,
                       "pt_train_params.coef0 must be >= 0 for the polynomial kernel (got %g): "
                       "(gamma x.z + coef0)^degree is a kernel only for coef0 >= 0",
                       (double)p->kernel.coef0);
    if (p->kernel.kind == PT_KERNEL_EXPR) {
        pt_kexpr e;
        char canon[sizeof p->kernel.expr];
        if (!memchr(p->kernel.expr, 0, sizeof p->kernel.expr))
            return pt_fail(PT_ERR_INVALID, "pt_train_params.kernel_expr is not terminated");
        PT_TRY(pt_kexpr_parse(p->kernel.expr, &e));
        PT_TRY(pt_kexpr_format(&e, canon, sizeof canon));
    }
    if (p->kernel.budget && p->path != PT_PATH_KERNEL)
        return pt_fail(PT_ERR_INVALID, "pt_train_params.budget (support vectors) applies to the "
                       "kernel path (pt_train_params.path PT_PATH_KERNEL)");
    /* The average of the iterates is a sum over every vector ever used; dropping the removed
     * vectors' part leaves an average of nothing in particular (chance level on circle data,
     * where the budgeted last iterate does well) */
    if (p->kernel.budget && p->variant == PT_VARIANT_AVERAGED)
        return pt_fail(PT_ERR_INVALID, "pt_train_params.budget keeps the last iterate within "
                       "the budget; the averaged variant (PT_VARIANT_AVERAGED) averages every "
                       "vector ever used, so it has no budgeted form: train the classic one");
    if (p->online.voted_max_vectors && p->variant != PT_VARIANT_VOTED)
        return pt_fail(PT_ERR_INVALID, "pt_train_params.voted_max_vectors caps the voted "
                       "perceptron's vectors (PT_VARIANT_VOTED); the %s variant keeps one vector",
                       pt_variant_name(p->variant));
    if (p->batch.tol < 0.0 || !isfinite(p->batch.tol))
        return pt_fail(PT_ERR_INVALID, "pt_train_params.tol must be >= 0");
    if (p->init && p->init_random)
        return pt_fail(PT_ERR_INVALID, "pt_train_params.init and pt_train_params.init_random both "
                       "given: start from one");
    if ((p->init || p->init_random) && p->path == PT_PATH_KERNEL)
        return pt_fail(PT_ERR_INVALID, "the kernel path cannot start from given weights "
                       "(pt_train_params.init): its model is the dual coefficients of the samples it "
                       "corrected, from alpha = 0; warm start the online or batch path");
    if ((int)p->scale < 0 || p->scale > PT_SCALE_STANDARDIZE)
        return pt_fail(PT_ERR_INVALID, "pt_train_params.scale is not a scaling kind (got %d)",
                       (int)p->scale);
    if (p->class_weight)
        for (size_t k = 0; k < p->class_weight_n; k++)
            if (!(p->class_weight[k] > 0.0f) || !isfinite(p->class_weight[k]))
                return pt_fail(PT_ERR_INVALID, "pt_train_params.class_weight[%zu] must be a "
                               "positive number (got %g)", k, (double)p->class_weight[k]);
    if ((p->init || p->init_random) && p->resume)
        return pt_fail(PT_ERR_INVALID, "a resumed run (pt_train_params.resume) continues its own "
                       "weights: pt_train_params.init does not apply");
    return PT_OK;
}

/* ---------------------------------------------------------------------- by name */

/* F_GAMMA: a float, or the rules "scale" and "auto" (PT_GAMMA_SCALE, PT_GAMMA_AUTO) */
typedef enum field_type {
    F_ENUM,
    F_BOOL,
    F_INT,
    F_FLOAT,
    F_DOUBLE,
    F_SIZE,
    F_U64,
    F_GAMMA,
    F_TEXT /* a char array (pt_train_params.kernel_expr) */
} field_type;

/* Adapters from each enum's pt_*_name function to one signature. */
#define NAME_OF(fn, type) \
    static const char *fn##_int(int v) { return fn((type)v); }
NAME_OF(pt_path_name, pt_path)
NAME_OF(pt_variant_name, pt_variant)
NAME_OF(pt_online_pass_name, pt_online_pass)
NAME_OF(pt_isa_name, pt_isa)
NAME_OF(pt_loss_name, pt_loss)
NAME_OF(pt_schedule_name, pt_schedule)
NAME_OF(pt_batch_impl_name, pt_batch_impl)
NAME_OF(pt_kernel_name, pt_kernel)
NAME_OF(pt_gram_storage_name, pt_gram_storage)
NAME_OF(pt_multiclass_name, pt_multiclass)

static const char *expand_kind_name(int v)
{
    switch (v) {
    case PT_EXPAND_NONE: return "none";
    case PT_EXPAND_POLY: return "poly";
    case PT_EXPAND_RFF: return "rff";
    }
    return "unknown";
}

/* The enums of pt_train_params are read and written as ints: */
_Static_assert(sizeof(pt_path) == sizeof(int) && sizeof(pt_variant) == sizeof(int) &&
                   sizeof(pt_online_pass) == sizeof(int) && sizeof(pt_isa) == sizeof(int) &&
                   sizeof(pt_loss) == sizeof(int) && sizeof(pt_schedule) == sizeof(int) &&
                   sizeof(pt_batch_impl) == sizeof(int) && sizeof(pt_kernel) == sizeof(int) &&
                   sizeof(pt_gram_storage) == sizeof(int) && sizeof(pt_multiclass) == sizeof(int) &&
                   sizeof(pt_expand_kind) == sizeof(int),
               "enum fields are int-sized");

typedef struct field {
    const char *name;
    field_type type;
    size_t offset;
    const char *(*enum_name)(int); /* F_ENUM: the name of each value 0, 1, ... ("unknown" past
                                     the last) */
} field;

#define FIELD(name, type) {#name, type, offsetof(pt_train_params, name), NULL}
#define ENUM(name, fn) {#name, F_ENUM, offsetof(pt_train_params, name), fn}
/* A field of a learner's sub-struct, under its own key (a key is a name, not a C path). */
#define NFIELD(key, member, type) {key, type, offsetof(pt_train_params, member), NULL}
#define NENUM(key, member, fn) {key, F_ENUM, offsetof(pt_train_params, member), fn}

/* In the order of the keys (pt_train_params_key; Python's Model.params() follows it). The
 * names are the fields' (expand's with "expand." before); a learner's sub-struct's fields
 * keep their flat names ("batch_size" is batch.size). */
static const field fields[] = {
    ENUM(path, pt_path_name_int),
    FIELD(epochs, F_INT),
    FIELD(eta, F_FLOAT),
    FIELD(margin, F_FLOAT),
    ENUM(variant, pt_variant_name_int),
    FIELD(shuffle, F_BOOL),
    NFIELD("shuffle_chunk", online.shuffle_chunk, F_SIZE),
    FIELD(seed, F_U64),
    FIELD(bias, F_BOOL),
    NENUM("pass", online.pass, pt_online_pass_name_int),
    ENUM(isa, pt_isa_name_int),
    FIELD(threads, F_INT),
    FIELD(mem_budget_bytes, F_SIZE),
    NENUM("loss", batch.loss, pt_loss_name_int),
    NFIELD("lambda", batch.lambda, F_FLOAT),
    NFIELD("batch_size", batch.size, F_SIZE),
    NENUM("schedule", batch.schedule, pt_schedule_name_int),
    NFIELD("tol", batch.tol, F_DOUBLE),
    NENUM("batch_impl", batch.impl, pt_batch_impl_name_int),
    NFIELD("average_iterates", batch.average_iterates, F_BOOL),
    NENUM("kernel", kernel.kind, pt_kernel_name_int),
    NFIELD("degree", kernel.degree, F_INT),
    NFIELD("gamma", kernel.gamma, F_GAMMA),
    NFIELD("coef0", kernel.coef0, F_FLOAT),
    NFIELD("cache_mb", kernel.cache_mb, F_SIZE),
    NENUM("gram_storage", kernel.gram_storage, pt_gram_storage_name_int),
    NFIELD("budget", kernel.budget, F_SIZE),
    NFIELD("kernel_expr", kernel.expr, F_TEXT),
    ENUM(multiclass, pt_multiclass_name_int),
    ENUM(expand.kind, expand_kind_name),
    FIELD(expand.degree, F_INT),
    FIELD(expand.coef0, F_FLOAT),
    FIELD(expand.rff_dim, F_SIZE),
    FIELD(expand.gamma, F_FLOAT),
    FIELD(expand.seed, F_U64),
    FIELD(expand.max_features, F_SIZE),
    FIELD(expand.mem_budget_bytes, F_SIZE),
    FIELD(expand.hash_bits, F_INT),
    FIELD(init_random, F_BOOL),
    NFIELD("voted_max_vectors", online.voted_max_vectors, F_SIZE),
};
#define NFIELDS (sizeof fields / sizeof fields[0])

#define XFIELD(name, type) {#name, type, offsetof(pt_expand_params, name), NULL}
static const field expand_fields[] = {
    {"kind", F_ENUM, offsetof(pt_expand_params, kind), expand_kind_name},
    XFIELD(degree, F_INT),
    XFIELD(coef0, F_FLOAT),
    XFIELD(rff_dim, F_SIZE),
    XFIELD(gamma, F_FLOAT),
    XFIELD(seed, F_U64),
    XFIELD(max_features, F_SIZE),
    XFIELD(mem_budget_bytes, F_SIZE),
    XFIELD(hash_bits, F_INT),
};
#define NEXPAND (sizeof expand_fields / sizeof expand_fields[0])

/* The names of an enum field's values, "a, b, c", into list. */
static void enum_values(const field *f, char *list, size_t cap)
{
    size_t len = 0;
    list[0] = '\0';
    for (int k = 0; strcmp(f->enum_name(k), "unknown") != 0 && len < cap; k++)
        len += (size_t)snprintf(list + len, cap - len, "%s%s", k ? ", " : "", f->enum_name(k));
}

/* Every enum field of the table at base one of its values, every flag 0 or 1 (what: the
 * struct's name, for messages). */
static pt_status check_table(const field *table, size_t count, const char *what, const void *base)
{
    for (size_t i = 0; i < count; i++) {
        const field *f = &table[i];
        if (f->type != F_ENUM && f->type != F_BOOL) continue;
        int v;
        memcpy(&v, (const char *)base + f->offset, sizeof v);
        if (f->type == F_BOOL && v != 0 && v != 1)
            return pt_fail(PT_ERR_INVALID, "%s.%s must be 0 or 1 (got %d)", what, f->name, v);
        if (f->type == F_ENUM && (v < 0 || strcmp(f->enum_name(v), "unknown") == 0)) {
            char list[160];
            enum_values(f, list, sizeof list);
            return pt_fail(PT_ERR_INVALID, "%s.%s is not one of %s (got %d)", what, f->name, list,
                           v);
        }
    }
    return PT_OK;
}

static pt_status check_enums_and_flags(const pt_train_params *p)
{
    return check_table(fields, NFIELDS, "pt_train_params", p);
}

static const field *find(const field *table, size_t count, const char *name)
{
    for (size_t i = 0; name && i < count; i++)
        if (strcmp(table[i].name, name) == 0) return &table[i];
    return NULL;
}

static pt_status unknown(const char *what, const char *name)
{
    return pt_fail(PT_ERR_INVALID, "unknown %s parameter '%s'", what, name ? name : "(null)");
}

const char *pt_train_params_key(size_t i) { return i < NFIELDS ? fields[i].name : NULL; }

pt_train_params *pt_train_params_create(void)
{
    pt_train_params *p = malloc(sizeof *p);
    if (!p) {
        pt_fail(PT_ERR_NOMEM, "cannot allocate training parameters");
        return NULL;
    }
    pt_train_params_init(p);
    return p;
}

void pt_train_params_free(pt_train_params *p) { free(p); }

const char *pt_expand_params_key(size_t i) { return i < NEXPAND ? expand_fields[i].name : NULL; }

pt_expand_params *pt_expand_params_create(void)
{
    pt_expand_params *p = malloc(sizeof *p);
    if (!p) {
        pt_fail(PT_ERR_NOMEM, "cannot allocate expansion parameters");
        return NULL;
    }
    pt_expand_params_init(p);
    return p;
}

void pt_expand_params_free(pt_expand_params *p) { free(p); }

void pt_train_params_set_epoch_hook(pt_train_params *p, pt_epoch_fn fn, void *user)
{
    p->epoch_hook = fn;
    p->epoch_user = user;
}

void pt_train_params_set_stop(pt_train_params *p, pt_stop *stop) { p->stop = stop; }

void pt_train_params_set_init(pt_train_params *p, const pt_model *init) { p->init = init; }

void pt_train_params_set_class_weight(pt_train_params *p, const float *w, size_t n)
{
    p->class_weight = w;
    p->class_weight_n = w ? n : 0;
}

/* Parse value as the field's type into out (the field's bytes). */
static pt_status parse_value(const field *f, const char *value, void *out)
{
    const char *v = value;
    char *end = NULL;
    errno = 0;
    switch (f->type) {
    case F_ENUM: {
        char list[160] = "";
        for (int k = 0; strcmp(f->enum_name(k), "unknown") != 0; k++) {
            if (strcmp(f->enum_name(k), v) == 0) {
                memcpy(out, &k, sizeof k);
                return PT_OK;
            }
            strcat(list, k ? ", " : "");
            strcat(list, f->enum_name(k));
        }
        return pt_fail(PT_ERR_INVALID, "%s: unknown value '%s' (%s)", f->name, v, list);
    }
    case F_BOOL:
        if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0)
            return pt_fail(PT_ERR_INVALID, "%s: '%s' is not 0 or 1", f->name, v);
        *(int *)out = v[0] == '1';
        return PT_OK;
    case F_INT: {
        long x = strtol(v, &end, 10);
        if (end == v || *end || errno == ERANGE || x < INT32_MIN || x > INT32_MAX)
            return pt_fail(PT_ERR_INVALID, "%s: '%s' is not an integer", f->name, v);
        *(int *)out = (int)x;
        return PT_OK;
    }
    case F_TEXT: break; /* set_field copies it */
    case F_GAMMA: /* the rules by name, else a number */
        if (strcmp(v, "scale") == 0 || strcmp(v, "auto") == 0) {
            *(float *)out = v[0] == 's' ? PT_GAMMA_SCALE : PT_GAMMA_AUTO;
            return PT_OK;
        }
        return parse_value(&(field){f->name, F_FLOAT, f->offset, NULL}, value, out);
    case F_FLOAT: {
        float x = strtof(v, &end);
        if (end == v || *end || !isfinite(x))
            return pt_fail(PT_ERR_INVALID, "%s: '%s' is not a finite number", f->name, v);
        *(float *)out = x;
        return PT_OK;
    }
    case F_DOUBLE: {
        double x = strtod(v, &end);
        if (end == v || *end || !isfinite(x))
            return pt_fail(PT_ERR_INVALID, "%s: '%s' is not a finite number", f->name, v);
        *(double *)out = x;
        return PT_OK;
    }
    case F_SIZE:
    case F_U64: {
        unsigned long long x = strtoull(v, &end, 10);
        if (v[0] < '0' || v[0] > '9' || *end || errno == ERANGE ||
            (f->type == F_SIZE && x > SIZE_MAX))
            return pt_fail(PT_ERR_INVALID, "%s: '%s' is not a non-negative integer", f->name, v);
        if (f->type == F_SIZE) *(size_t *)out = (size_t)x;
        else *(uint64_t *)out = (uint64_t)x;
        return PT_OK;
    }
    }
    return pt_fail(PT_ERR_INVALID, "%s: unknown field type", f->name);
}

/* Set the field name of the struct at base (what: "training" or "expansion", for messages). */
static pt_status set_field(const field *table, size_t count, const char *what, void *base,
                           const char *name, const char *value)
{
    pt_clear_error();
    const field *f = find(table, count, name);
    if (!f) return unknown(what, name);
    if (!value) return pt_fail(PT_ERR_INVALID, "%s: no value", name);
    if (f->type == F_TEXT) { /* kernel_expr: checked with the parameters (pt_train_params_check) */
        const size_t cap = sizeof ((pt_train_params *)0)->kernel.expr;
        pt_kexpr e;
        if (strlen(value) >= cap)
            return pt_fail(PT_ERR_INVALID, "%s: longer than %zu bytes", name, cap - 1);
        if (value[0]) PT_TRY(pt_kexpr_parse(value, &e)); /* the reason now, not at training */
        memcpy((char *)base + f->offset, value, strlen(value) + 1);
        return PT_OK;
    }
    /* parse into a scratch copy of the field, so a bad value leaves p as it was */
    union {
        int i;
        float f;
        double d;
        size_t z;
        uint64_t u;
    } scratch;
    locale_t loc = pt_c_locale_enter();
    pt_status s = parse_value(f, value, &scratch);
    pt_c_locale_leave(loc);
    if (s != PT_OK) return s;
    size_t size = f->type == F_FLOAT || f->type == F_GAMMA ? sizeof(float)
                  : f->type == F_DOUBLE ? sizeof(double)
                  : f->type == F_SIZE  ? sizeof(size_t)
                  : f->type == F_U64   ? sizeof(uint64_t)
                                       : sizeof(int);
    memcpy((char *)base + f->offset, &scratch, size);
    return PT_OK;
}

static pt_status get_field(const field *table, size_t count, const char *what, const void *base,
                           const char *name, char *buf, size_t cap)
{
    pt_clear_error();
    const field *f = find(table, count, name);
    if (!f) return unknown(what, name);
    const void *at = (const char *)base + f->offset;
    int v;
    int len = 0;
    locale_t loc = pt_c_locale_enter();
    switch (f->type) {
    case F_ENUM:
        memcpy(&v, at, sizeof v);
        len = snprintf(buf, cap, "%s", f->enum_name(v));
        break;
    case F_BOOL: len = snprintf(buf, cap, "%d", *(const int *)at ? 1 : 0); break;
    case F_INT: len = snprintf(buf, cap, "%d", *(const int *)at); break;
    case F_FLOAT: len = snprintf(buf, cap, "%.9g", (double)*(const float *)at); break;
    case F_TEXT: len = snprintf(buf, cap, "%s", (const char *)at); break;
    case F_GAMMA: {
        float g = *(const float *)at;
        len = g == PT_GAMMA_SCALE  ? snprintf(buf, cap, "scale")
              : g == PT_GAMMA_AUTO ? snprintf(buf, cap, "auto")
                                   : snprintf(buf, cap, "%.9g", (double)g);
        break;
    }
    case F_DOUBLE: len = snprintf(buf, cap, "%.17g", *(const double *)at); break;
    case F_SIZE: len = snprintf(buf, cap, "%zu", *(const size_t *)at); break;
    case F_U64: len = snprintf(buf, cap, "%" PRIu64, *(const uint64_t *)at); break;
    }
    pt_c_locale_leave(loc);
    if (len < 0 || (size_t)len >= cap)
        return pt_fail(PT_ERR_INVALID, "%s: the value needs %d bytes, the buffer has %zu", name,
                       len + 1, cap);
    return PT_OK;
}

pt_status pt_train_params_set(pt_train_params *p, const char *name, const char *value)
{
    return set_field(fields, NFIELDS, "training", p, name, value);
}

pt_status pt_train_params_get(const pt_train_params *p, const char *name, char *buf, size_t cap)
{
    return get_field(fields, NFIELDS, "training", p, name, buf, cap);
}

pt_status pt_expand_params_set(pt_expand_params *p, const char *name, const char *value)
{
    return set_field(expand_fields, NEXPAND, "expansion", p, name, value);
}

pt_status pt_expand_params_get(const pt_expand_params *p, const char *name, char *buf, size_t cap)
{
    return get_field(expand_fields, NEXPAND, "expansion", p, name, buf, cap);
}
