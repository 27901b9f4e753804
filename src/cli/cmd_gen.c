/* ptron gen KIND -o FILE: seeded synthetic datasets. */
#include <string.h>

#include "cli.h"

/* The margin of `gen sparse` unless --margin is given (see its usage text). */
#define SPARSE_MARGIN 0.001

int cmd_gen(int argc, char **argv)
{
    cli_args a;
    cli_args_init(&a, argc, argv);
    pt_gen_params p;
    pt_gen_params_init(&p);
    const char *kind = NULL, *out = NULL, *test_out = NULL, *arg;
    size_t test_n = 0;
    bool json = false, d_given = false, margin_given = false;
    while ((arg = cli_next(&a)) && !a.error) {
        if (strcmp(arg, "-o") == 0 || strcmp(arg, "--output") == 0) out = cli_value(&a, arg);
        else if (strcmp(arg, "--n") == 0) cli_size(&a, arg, 1, (size_t)1 << 40, &p.n);
        else if (strcmp(arg, "--d") == 0) d_given = cli_size(&a, arg, 1, UINT32_MAX, &p.d);
        else if (strcmp(arg, "--margin") == 0)
            margin_given = cli_double(&a, arg, 0.0, 1e6, &p.margin);
        else if (strcmp(arg, "--nnz") == 0) cli_size(&a, arg, 1, (size_t)1 << 20, &p.nnz);
        else if (strcmp(arg, "--noise") == 0) cli_double(&a, arg, 0.0, 1.0, &p.noise);
        else if (strcmp(arg, "--seed") == 0) cli_u64(&a, arg, &p.seed);
        else if (strcmp(arg, "--classes") == 0) cli_size(&a, arg, 2, 100000, &p.classes);
        else if (strcmp(arg, "--test-out") == 0) test_out = cli_value(&a, arg);
        else if (strcmp(arg, "--test-n") == 0) cli_size(&a, arg, 1, (size_t)1 << 40, &test_n);
        else if (strcmp(arg, "--json") == 0) json = true;
        else if (arg[0] == '-' && arg[1]) return cli_usage_error("gen", "unknown option %s", arg);
        else if (!kind) kind = arg;
        else return cli_usage_error("gen", "unexpected argument '%s'", arg);
    }
    if (a.error) return EXIT_USAGE;
    if (!kind) return cli_usage_error("gen", "missing KIND");
    if (!out) return cli_usage_error("gen", "missing -o FILE");
    if (pt_gen_kind_parse(kind, &p.kind) != PT_OK) return cli_usage_error("gen", "%s", pt_last_error());
    if (p.kind != PT_GEN_SPARSE && p.d > ((size_t)1 << 30))
        return cli_usage_error("gen", "option --d: %zu is out of range [1, %zu] for %s", p.d,
                               (size_t)1 << 30, kind);
    /* sparse: an rcv1-sized vocabulary, and a margin unit rows of a few non-zeros can have */
    if (p.kind == PT_GEN_SPARSE && !d_given) p.d = 47236;
    if (p.kind == PT_GEN_SPARSE && !margin_given) p.margin = SPARSE_MARGIN;
    if ((test_out != NULL) != (test_n > 0))
        return cli_usage_error("gen", "--test-out FILE and --test-n N go together");
    /* - : the data on stdout, the summary on stderr */
    if (cli_is_std(out) && cli_is_std(test_out))
        return cli_usage_error("gen", "-o - and --test-out -: only one can take standard output");
    if ((cli_is_std(out) || cli_is_std(test_out)) && json)
        return cli_usage_error("gen", "--json prints its object on standard output, which - "
                               "takes for the data: give a file name");

    /* A held-out set comes from the same stream (same w*, same centres): generate n + test_n
     * rows and write the last test_n apart. */
    size_t n = p.n;
    p.n += test_n;
    pt_dataset *all, *ds = NULL, *test = NULL;
    pt_status s = pt_generate(&p, &all);
    if (s != PT_OK) return cli_fail(s);
    if (test_n) {
        s = pt_dataset_slice(all, 0, n, &ds);
        if (s == PT_OK) s = pt_dataset_slice(all, n, test_n, &test);
        pt_dataset_free(all);
    } else {
        ds = all;
    }
    if (s == PT_OK) s = pt_dataset_write(ds, out, PT_FORMAT_AUTO);
    if (s == PT_OK && test) s = pt_dataset_write(test, test_out, PT_FORMAT_AUTO);
    pt_dataset_free(test);
    if (s != PT_OK) {
        pt_dataset_free(ds);
        return cli_fail(s);
    }
    if ((cli_is_std(out) || cli_is_std(test_out)) && cli_report_to_stderr() != EXIT_OK) {
        pt_dataset_free(ds);
        return EXIT_INPUT;
    }
    double R = 0, gamma = 0;
    const double *w = pt_dataset_truth(ds, &R, &gamma);
    if (json) {
        json_out j;
        json_begin(&j, stdout);
        json_str(&j, "file", out);
        json_str(&j, "kind", kind);
        json_int(&j, "n", (long long)pt_dataset_n(ds));
        json_int(&j, "d", (long long)pt_dataset_d(ds));
        json_int(&j, "classes", (long long)pt_dataset_nclass(ds));
        if (w) {
            json_num(&j, "R", R);
            json_num(&j, "gamma", gamma);
        }
        json_end(&j);
    } else {
        printf("%s: %s, %zu rows x %zu features, %zu classes", out, kind, pt_dataset_n(ds),
               pt_dataset_d(ds), pt_dataset_nclass(ds));
        if (w) printf(", R = %.6g, margin of w* = %.6g", R, gamma);
        printf("\n");
        if (test_out) printf("%s: %zu held-out rows from the same distribution\n", test_out, test_n);
    }
    pt_dataset_free(ds);
    return EXIT_OK;
}
