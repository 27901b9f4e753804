/*
 * Kernel expressions: a recursive-descent parser over
 *
 *   expr   := term ('+' term)*
 *   term   := factor ('*' factor)*
 *   factor := NUMBER | NAME ['(' [ARG (',' ARG)*] ')'] | 'normalize' '(' expr ')' | '(' expr ')'
 *   ARG    := KEY '=' (NUMBER | 'scale' | 'auto')
 *
 * Every form is a kernel by the closure rules of kernels (docs/theory.md, Kernels): c K
 * (c >= 0; here c > 0, a zero factor learning nothing), K1 + K2, K1 K2, and f(x) f(z) K with
 * f(x) = 1 / sqrt(K(x, x)) for normalize; the base kernels are the polynomial (c + x.z)^k with
 * c >= 0 (scaled by gamma), the Gaussian exp(-c |x - z|^2), the linear x.z and the geometric
 * series 1 + t + ... + t^D of t = gamma x.z (the 1-D example of the notes on kernels; a sum
 * of powers of the linear kernel, so a kernel in any dimension). A form outside them
 * (subtraction, division, a negative constant or coef0) is refused with the rule it breaks.
 *
 * Evaluation is in double from the float32 inner products and norms every storage computes
 * the same way (gram.h), so a value does not depend on where it is computed; the powers by
 * repeated squaring as gram_scalar.c's, so linear * linear and poly(degree=2,gamma=1,coef0=0)
 * agree bit for bit.
 */
#include <ctype.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_expr.h"
#include "kernel_spec.h"

/* ================================================================================ parsing */

typedef struct parser {
    const char *text, *at;
    pt_kexpr *e;
    pt_status err;
} parser;

static pt_status fail_at(parser *ps, const char *fmt, const char *what)
{
    if (ps->err != PT_OK) return ps->err;
    ps->err = pt_fail(PT_ERR_INVALID, "pt_train_params.kernel_expr '%s' at %zu: %s%s", ps->text,
                      (size_t)(ps->at - ps->text) + 1, fmt, what ? what : "");
    return ps->err;
}

static void skip(parser *ps)
{
    while (isspace((unsigned char)*ps->at)) ps->at++;
}

static int node(parser *ps, pt_kexpr_op op, int l, int r)
{
    pt_kexpr *e = ps->e;
    if (e->n >= PT_KEXPR_NODES) {
        fail_at(ps, "more than 48 terms and operators", NULL);
        return -1;
    }
    pt_kexpr_node *n = &e->node[e->n];
    memset(n, 0, sizeof *n);
    n->op = (uint8_t)op;
    n->l = (uint8_t)(l < 0 ? 0 : l);
    n->r = (uint8_t)(r < 0 ? 0 : r);
    return (int)e->n++;
}

static int parse_expr(parser *ps);

/* A number at ps->at (no sign: a '-' is refused before). */
static int number(parser *ps, float *out)
{
    char *end;
    locale_t loc = pt_c_locale_enter();
    float v = strtof(ps->at, &end);
    pt_c_locale_leave(loc);
    if (end == ps->at || !isfinite(v)) return 0;
    ps->at = end;
    *out = v;
    return 1;
}

static int name(parser *ps, char *buf, size_t cap)
{
    size_t k = 0;
    while ((isalnum((unsigned char)*ps->at) || *ps->at == '_') && k + 1 < cap) buf[k++] = *ps->at++;
    buf[k] = 0;
    return k > 0;
}

/* The arguments of a base kernel: "(key=value, ...)" or nothing. */
static int arguments(parser *ps, pt_kexpr_node *n, const char *kernel)
{
    const int poly = n->op == PT_KX_POLY, rbf = n->op == PT_KX_RBF, geo = n->op == PT_KX_GEOMETRIC;
    skip(ps);
    if (*ps->at != '(') return 1;
    ps->at++;
    skip(ps);
    if (*ps->at == ')') {
        ps->at++;
        return 1;
    }
    for (;;) {
        char key[16];
        skip(ps);
        const char *k0 = ps->at;
        if (!name(ps, key, sizeof key)) return fail_at(ps, "expected an argument name", NULL), 0;
        int is_deg = strcmp(key, "degree") == 0, is_gamma = strcmp(key, "gamma") == 0,
            is_coef0 = strcmp(key, "coef0") == 0;
        if (!((is_deg && (poly || geo)) || (is_gamma && (poly || rbf || geo)) ||
              (is_coef0 && poly))) {
            ps->at = k0;
            return fail_at(ps, "no such argument of ", kernel), 0;
        }
        skip(ps);
        if (*ps->at != '=') return fail_at(ps, "expected '=' after ", key), 0;
        ps->at++;
        skip(ps);
        float v;
        if (is_gamma && (strncmp(ps->at, "scale", 5) == 0 || strncmp(ps->at, "auto", 4) == 0)) {
            n->a = ps->at[0] == 's' ? PT_GAMMA_SCALE : PT_GAMMA_AUTO;
            ps->at += ps->at[0] == 's' ? 5 : 4;
        } else if (*ps->at == '-') {
            return fail_at(ps, is_coef0 ? "a negative coef0: (gamma x.z + coef0)^degree is a "
                                          "kernel only for coef0 >= 0"
                               : is_gamma ? "gamma must be > 0"
                                          : "degree must be in 1..32", NULL), 0;
        } else if (!number(ps, &v)) {
            return fail_at(ps, "expected a number for ", key), 0;
        } else if (is_deg) {
            if (v != floorf(v) || v < 1 || v > 32)
                return fail_at(ps, "degree must be in 1..32", NULL), 0;
            n->degree = (int)v;
        } else if (is_gamma) {
            if (!(v > 0.0f)) return fail_at(ps, "gamma must be > 0", NULL), 0;
            n->a = v;
        } else {
            n->b = v;
        }
        skip(ps);
        if (*ps->at == ',') {
            ps->at++;
            continue;
        }
        if (*ps->at == ')') {
            ps->at++;
            return 1;
        }
        return fail_at(ps, "expected ',' or ')'", NULL), 0;
    }
}

static int parse_factor(parser *ps)
{
    skip(ps);
    char c = *ps->at;
    if (c == '-')
        return fail_at(ps, "a negative constant or factor is not a kernel (the closure rule: c K "
                           "for c >= 0)", NULL), -1;
    if (c == '(') {
        ps->at++;
        int x = parse_expr(ps);
        skip(ps);
        if (x < 0) return -1;
        if (*ps->at != ')') return fail_at(ps, "expected ')'", NULL), -1;
        ps->at++;
        return x;
    }
    if (isdigit((unsigned char)c) || c == '.') {
        float v;
        if (!number(ps, &v)) return fail_at(ps, "expected a number", NULL), -1;
        if (!(v > 0.0f))
            return fail_at(ps, "a zero constant or factor: c K with c > 0 (a zero kernel learns "
                               "nothing)", NULL), -1;
        int x = node(ps, PT_KX_CONST, -1, -1);
        if (x >= 0) ps->e->node[x].a = v;
        return x;
    }
    const char *n0 = ps->at;
    char nm[16];
    if (!name(ps, nm, sizeof nm))
        return fail_at(ps, "expected a kernel (linear, poly, rbf, geometric, normalize), a "
                           "number or '('", NULL), -1;
    if (strcmp(nm, "normalize") == 0) {
        skip(ps);
        if (*ps->at != '(') return fail_at(ps, "expected '(' after normalize", NULL), -1;
        ps->at++;
        int x = parse_expr(ps);
        skip(ps);
        if (x < 0) return -1;
        if (*ps->at != ')') return fail_at(ps, "expected ')'", NULL), -1;
        ps->at++;
        return node(ps, PT_KX_NORMALIZE, x, -1);
    }
    pt_kexpr_op op = strcmp(nm, "linear") == 0      ? PT_KX_LINEAR
                     : strcmp(nm, "poly") == 0      ? PT_KX_POLY
                     : strcmp(nm, "rbf") == 0       ? PT_KX_RBF
                     : strcmp(nm, "geometric") == 0 ? PT_KX_GEOMETRIC
                                                    : PT_KX_CONST;
    if (op == PT_KX_CONST) {
        ps->at = n0;
        char why[96];
        snprintf(why, sizeof why, "'%s': a name (linear, poly, rbf) or an expression", nm);
        return fail_at(ps, "unknown kernel ", why), -1;
    }
    int x = node(ps, op, -1, -1);
    if (x < 0) return -1;
    pt_kexpr_node *n = &ps->e->node[x];
    n->degree = 2;
    n->a = op == PT_KX_GEOMETRIC ? 1.0f : PT_GAMMA_SCALE;
    n->b = 1.0f;
    return arguments(ps, n, nm) ? x : -1;
}

static int parse_term(parser *ps)
{
    int x = parse_factor(ps);
    for (;;) {
        skip(ps);
        if (x < 0 || *ps->at != '*') break;
        ps->at++;
        int y = parse_factor(ps);
        if (y < 0) return -1;
        x = node(ps, PT_KX_MUL, x, y);
    }
    return x;
}

static int parse_expr(parser *ps)
{
    int x = parse_term(ps);
    for (;;) {
        skip(ps);
        if (x < 0) return -1;
        if (*ps->at == '-')
            return fail_at(ps, "K1 - K2 is not a kernel in general (closure rules: c K for "
                               "c >= 0, K1 + K2, K1 K2)", NULL), -1;
        if (*ps->at == '/')
            return fail_at(ps, "K1 / K2 is not a kernel in general (closure rules: c K for "
                               "c >= 0, K1 + K2, K1 K2)", NULL), -1;
        if (*ps->at != '+') break;
        ps->at++;
        int y = parse_term(ps);
        if (y < 0) return -1;
        x = node(ps, PT_KX_ADD, x, y);
    }
    return x;
}

/* Base kernels evaluated for one value: normalize evaluates its argument three times, so
 * nesting multiplies the work. */
static double cost(const pt_kexpr *e, size_t i)
{
    const pt_kexpr_node *n = &e->node[i];
    switch ((pt_kexpr_op)n->op) {
    case PT_KX_ADD:
    case PT_KX_MUL: return cost(e, n->l) + cost(e, n->r);
    case PT_KX_NORMALIZE: return 3.0 * cost(e, n->l);
    default: return 1.0;
    }
}

#define MAX_COST 1024.0 /* base kernels a value: a bound on an evaluation's time */

pt_status pt_kexpr_parse(const char *text, pt_kexpr *e)
{
    memset(e, 0, sizeof *e);
    parser ps = {.text = text, .at = text, .e = e, .err = PT_OK};
    int root = parse_expr(&ps);
    skip(&ps);
    if (root >= 0 && *ps.at) {
        if (*ps.at == '-' || *ps.at == '/') parse_expr(&ps); /* its reason */
        else fail_at(&ps, "unexpected text after the kernel", NULL);
        root = -1;
    }
    if (root < 0) {
        e->n = 0;
        return ps.err != PT_OK ? ps.err : pt_fail(PT_ERR_INVALID, "pt_train_params.kernel_expr");
    }
    /* the root is the last node made (children are made before their parents) */
    if (cost(e, e->n - 1) > MAX_COST) {
        e->n = 0;
        return pt_fail(PT_ERR_INVALID, "pt_train_params.kernel_expr '%s': more than %.0f base "
                       "kernels to evaluate for one value (normalize evaluates its argument "
                       "three times: nest fewer)", text, MAX_COST);
    }
    return PT_OK;
}

int pt_kexpr_has_rule(const pt_kexpr *e)
{
    for (size_t i = 0; i < e->n; i++)
        if ((e->node[i].op == PT_KX_POLY || e->node[i].op == PT_KX_RBF ||
             e->node[i].op == PT_KX_GEOMETRIC) &&
            pt_gamma_is_rule(e->node[i].a))
            return 1;
    return 0;
}

void pt_kexpr_resolve(pt_kexpr *e, const pt_dataset *ds)
{
    for (size_t i = 0; i < e->n; i++) {
        pt_kexpr_node *n = &e->node[i];
        if ((n->op == PT_KX_POLY || n->op == PT_KX_RBF || n->op == PT_KX_GEOMETRIC) &&
            pt_gamma_is_rule(n->a))
            n->a = pt_gamma_resolve(n->a, ds);
    }
}

/* ============================================================================= printing */

typedef struct out {
    char *buf;
    size_t cap, len;
} out;

static void put(out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(out *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(o->buf + (o->len < o->cap ? o->len : o->cap),
                      o->len < o->cap ? o->cap - o->len : 0, fmt, ap);
    va_end(ap);
    if (k > 0) o->len += (size_t)k;
}

static void put_gamma(out *o, float g)
{
    if (g == PT_GAMMA_SCALE) put(o, "scale");
    else if (g == PT_GAMMA_AUTO) put(o, "auto");
    else put(o, "%.9g", (double)g);
}

static void print_node(const pt_kexpr *e, size_t i, out *o)
{
    const pt_kexpr_node *n = &e->node[i];
    switch ((pt_kexpr_op)n->op) {
    case PT_KX_LINEAR: put(o, "linear"); break;
    case PT_KX_POLY:
        put(o, "poly(degree=%d,gamma=", n->degree);
        put_gamma(o, n->a);
        put(o, ",coef0=%.9g)", (double)n->b);
        break;
    case PT_KX_RBF:
        put(o, "rbf(gamma=");
        put_gamma(o, n->a);
        put(o, ")");
        break;
    case PT_KX_GEOMETRIC:
        put(o, "geometric(degree=%d,gamma=", n->degree);
        put_gamma(o, n->a);
        put(o, ")");
        break;
    case PT_KX_CONST: put(o, "%.9g", (double)n->a); break;
    case PT_KX_ADD:
        print_node(e, n->l, o);
        put(o, "+");
        print_node(e, n->r, o);
        break;
    case PT_KX_MUL:
        for (int side = 0; side < 2; side++) {
            size_t c = side ? n->r : n->l;
            int paren = e->node[c].op == PT_KX_ADD;
            if (side) put(o, "*");
            if (paren) put(o, "(");
            print_node(e, c, o);
            if (paren) put(o, ")");
        }
        break;
    case PT_KX_NORMALIZE:
        put(o, "normalize(");
        print_node(e, n->l, o);
        put(o, ")");
        break;
    }
}

pt_status pt_kexpr_format(const pt_kexpr *e, char *buf, size_t cap)
{
    out o = {.buf = buf, .cap = cap, .len = 0};
    if (cap) buf[0] = 0;
    if (!e->n) return pt_fail(PT_ERR_INVALID, "an empty kernel expression");
    locale_t loc = pt_c_locale_enter();
    print_node(e, e->n - 1, &o);
    pt_c_locale_leave(loc);
    if (o.len >= cap)
        return pt_fail(PT_ERR_INVALID, "pt_train_params.kernel_expr: the expression needs %zu "
                       "bytes written out, more than %zu", o.len + 1, cap);
    return PT_OK;
}

int pt_kexpr_same(const pt_kexpr *e, const pt_kexpr *f)
{
    char a[512], b[512];
    return pt_kexpr_format(e, a, sizeof a) == PT_OK && pt_kexpr_format(f, b, sizeof b) == PT_OK &&
           strcmp(a, b) == 0;
}

/* =========================================================================== evaluation */

static double power(double b, int e)
{
    /* binary powering, as gram_scalar.c's */
    double r = 1.0;
    for (;;) {
        if (e & 1) r = r * b;
        e >>= 1;
        if (!e) break;
        b = b * b;
    }
    return r;
}

static double eval(const pt_kexpr *e, size_t i, double dot, double xn, double zn)
{
    const pt_kexpr_node *n = &e->node[i];
    switch ((pt_kexpr_op)n->op) {
    case PT_KX_LINEAR: return dot;
    case PT_KX_POLY: return power((double)n->a * dot + (double)n->b, n->degree);
    case PT_KX_RBF: {
        double d2 = xn + zn - 2.0 * dot;
        return exp(-(double)n->a * (d2 > 0.0 ? d2 : 0.0));
    }
    case PT_KX_GEOMETRIC: {
        double t = (double)n->a * dot, s = 1.0;
        for (int k = 0; k < n->degree; k++) s = s * t + 1.0; /* Horner: 1 + t + ... + t^D */
        return s;
    }
    case PT_KX_CONST: return n->a;
    case PT_KX_ADD: return eval(e, n->l, dot, xn, zn) + eval(e, n->r, dot, xn, zn);
    case PT_KX_MUL: return eval(e, n->l, dot, xn, zn) * eval(e, n->r, dot, xn, zn);
    case PT_KX_NORMALIZE: {
        double kx = eval(e, n->l, xn, xn, xn), kz = eval(e, n->l, zn, zn, zn);
        return kx > 0.0 && kz > 0.0 ? eval(e, n->l, dot, xn, zn) / sqrt(kx * kz) : 0.0;
    }
    }
    return 0.0;
}

double pt_kexpr_eval(const pt_kexpr *e, double dot, double xn, double zn)
{
    return e->n ? eval(e, e->n - 1, dot, xn, zn) : 0.0;
}

void pt_kexpr_kfun(const pt_kfun *kf, const float *dot, float xn, const float *zn, float *out,
                   size_t n)
{
    for (size_t j = 0; j < n; j++)
        out[j] = (float)pt_kexpr_eval(&kf->expr, dot[j], xn, zn ? zn[j] : 0.0f) + kf->add;
}

void pt_kexpr_store(const pt_kfun *kf, const float *C, size_t ldc, const float *xn,
                    const float *zn, size_t nrow, size_t ncol, float *G, float *Gt, size_t ldg)
{
    for (size_t r = 0; r < nrow; r++)
        for (size_t c = 0; c < ncol; c++) {
            float v = (float)pt_kexpr_eval(&kf->expr, C[r * ldc + c], xn ? xn[r] : 0.0f,
                                           zn ? zn[c] : 0.0f) +
                      kf->add;
            G[r * ldg + c] = v;
            if (Gt) Gt[c * ldg + r] = v;
        }
}
