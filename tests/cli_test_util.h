/*
 * What the CLI suites (test_cli.c, test_cli_conventions.c, test_workflow.c) share: file names
 * that outlive tu_path's rotation, and the CLI run with printf-style arguments. Header-only
 * and static, so each suite keeps the short names its many calls use.
 */
#ifndef PT_CLI_TEST_UTIL_H
#define PT_CLI_TEST_UTIL_H

#include <stdarg.h>
#include <stdio.h>

#include "testutil.h"

static char path_buf[16][512];
/* p copied into slot (0..15), valid for the rest of the test. */
static const char *keep(int slot, const char *p)
{
    snprintf(path_buf[slot], sizeof path_buf[slot], "%s", p);
    return path_buf[slot];
}

/* tu_run_cli with the arguments formatted printf-style. */
static int run(char **out, char **err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int run(char **out, char **err, const char *fmt, ...)
{
    char args[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    return tu_run_cli(args, out, err);
}

#endif
