/* ptron scale DATA -o OUT: features to [-1, 1], [0, 1] or mean 0 and deviation 1 (svm-scale). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cmd_scale(int argc, char **argv)
{
    cli_args a;
    cli_args_init(&a, argc, argv);
    const char *file = NULL, *out = NULL, *format = NULL, *to = NULL, *save = NULL, *load = NULL;
    const char *arg;
    pt_scale_kind kind = PT_SCALE_RANGE;
    bool kind_given = false;
    while ((arg = cli_next(&a)) && !a.error) {
        if (strcmp(arg, "-o") == 0 || strcmp(arg, "--output") == 0) out = cli_value(&a, arg);
        else if (strcmp(arg, "--range") == 0) {
            const char *v = cli_value(&a, arg);
            if (v && (strcmp(v, "-1,1") == 0 || strcmp(v, "0,1") == 0)) {
                pt_scale_kind_parse(v, &kind);
                kind_given = true;
            } else if (v) {
                return cli_usage_error("scale", "option --range: '%s' is not -1,1 or 0,1", v);
            }
        } else if (strcmp(arg, "--standardize") == 0) {
            kind = PT_SCALE_STANDARDIZE;
            kind_given = true;
        } else if (strcmp(arg, "--save-params") == 0) save = cli_value(&a, arg);
        else if (strcmp(arg, "--params") == 0) load = cli_value(&a, arg);
        else if (strcmp(arg, "--format") == 0) format = cli_value(&a, arg);
        else if (strcmp(arg, "--to") == 0) to = cli_value(&a, arg);
        else if (strcmp(arg, "--delimiter") == 0) cli_delimiter(&a, arg);
        else if (strcmp(arg, "--layout") == 0) cli_layout_opt(&a, arg);
        else if (strcmp(arg, "--mem-mb") == 0) cli_size(&a, arg, 1, SIZE_MAX >> 21, &cli_mem_mb);
        else if (arg[0] == '-' && arg[1]) return cli_usage_error("scale", "unknown option %s", arg);
        else if (!file) file = arg;
        else return cli_usage_error("scale", "unexpected argument '%s'", arg);
    }
    if (a.error) return EXIT_USAGE;
    if (!file || !out) return cli_usage_error("scale", "needs DATA and -o OUT");
    if (load && (kind_given || save))
        return cli_usage_error("scale", "--params applies saved parameters: --range, "
                               "--standardize and --save-params do not apply");
    int rc = cli_refuse_same_file("scale",
                                  (const cli_file[]){{"-o", out}, {"--save-params", save}, {NULL, NULL}},
                                  (const cli_file[]){{"DATA", file}, {"--params", load}, {NULL, NULL}});
    if (rc != EXIT_OK) return rc;
    pt_format of = PT_FORMAT_AUTO;
    if (to && pt_format_parse(to, &of) != PT_OK)
        return cli_usage_error("scale", "--to: %s", pt_last_error());
    cli_install_log(false);
    pt_dataset *ds = NULL, *scaled = NULL;
    pt_scaling *sc = NULL;
    pt_status s = cli_read_dataset(file, format, 0, &ds, NULL);
    if (s == PT_OK) s = load ? pt_scaling_load(load, &sc) : pt_scaling_fit(ds, kind, &sc);
    if (s == PT_OK) s = pt_scaling_apply(sc, ds, cli_mem_mb << 20, &scaled);
    if (s == PT_OK && save) s = pt_scaling_save(sc, save);
    if (s == PT_OK) s = pt_dataset_write(scaled, out, of);
    rc = s == PT_OK ? EXIT_OK : cli_fail(s);
    pt_dataset_free(scaled);
    pt_dataset_free(ds);
    pt_scaling_free(sc);
    return rc;
}
