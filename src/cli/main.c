/* ptron: the command-line program. One file per subcommand; this one dispatches. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct {
    const char *name;
    int (*fn)(int, char **);
} commands[] = {
    {"gen", cmd_gen},     {"info", cmd_info},       {"convert", cmd_convert},
    {"train", cmd_train}, {"predict", cmd_predict}, {"expand", cmd_expand},
    {"bench", cmd_bench},
};

int main(int argc, char **argv)
{
    if (argc < 2) {
        cli_usage(stderr, NULL);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        printf("ptron %s\n", PT_VERSION_STRING);
        return EXIT_OK;
    }
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        cli_usage(stdout, argc > 2 ? argv[2] : NULL);
        return EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(cmd, commands[i].name) == 0) return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "ptron: unknown command '%s'\n", cmd);
    cli_usage(stderr, NULL);
    return EXIT_USAGE;
}
