/* Text helpers shared by the LIBSVM and CSV readers and writers (defined in io_libsvm.c). */
#ifndef PT_IO_TEXT_H
#define PT_IO_TEXT_H

#include <locale.h>
#include <stdbool.h>
#include <stdio.h>

#include "internal.h"

/* The whole file in memory: mapped, or read (pipes); *mapped says which, for pt_text_unmap. */
pt_status pt_text_map(const char *path, const char **data, size_t *len, bool *mapped);
void pt_text_unmap(const char *data, size_t len, bool mapped);
/* Scan one number at p (before end): the end of the number, or NULL if it is not one. Exact
 * (equal to strtof/strtod); fast on plain decimals, falling back to the slow parsers. */
const char *pt_scan_float(const char *p, const char *end, float *out);
const char *pt_scan_double(const char *p, const char *end, double *out);
/* The slow parsers on [s, s + len): 0 ok, 1 not a number, 2 not finite. */
int pt_parse_float_slow(const char *s, size_t len, float *out);
int pt_parse_double_slow(const char *s, size_t len, double *out);
/* CSV rows of a dataset (label first, %.9g values). */
pt_status pt_write_csv_rows(FILE *f, const void *ds);

#endif
