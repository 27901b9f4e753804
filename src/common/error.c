/* Status strings, the per-thread detailed message, and the log sink. */
#include <stdio.h>
#include <string.h>

#include "common.h"

static _Thread_local char last_error[1024];

static pt_log_fn log_fn;
static void *log_user;

const char *pt_strerror(pt_status s)
{
    switch (s) {
    case PT_OK: return "success";
    case PT_ERR_INVALID: return "invalid argument";
    case PT_ERR_IO: return "input/output error";
    case PT_ERR_PARSE: return "parse error";
    case PT_ERR_FORMAT: return "bad file format";
    case PT_ERR_CHECKSUM: return "checksum mismatch";
    case PT_ERR_VERSION: return "file from a newer version";
    case PT_ERR_NOMEM: return "out of memory";
    case PT_ERR_LIMIT: return "resource limit exceeded";
    case PT_ERR_LABELS: return "unsuitable labels";
    case PT_ERR_UNSUPPORTED: return "not supported";
    case PT_ERR_NUMERIC: return "numeric failure";
    case PT_ERR_INTERRUPTED: return "interrupted";
    }
    return "unknown status";
}

const char *pt_last_error(void) { return last_error; }

void pt_clear_error(void) { last_error[0] = '\0'; }

pt_status pt_fail(pt_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return s;
}

pt_status pt_fail_prefix(pt_status s, const char *fmt, ...)
{
    char prefix[256], old[sizeof last_error - sizeof prefix - 4];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    size_t keep = strnlen(last_error, sizeof old - 1); /* truncation intended */
    memcpy(old, last_error, keep);
    old[keep] = '\0';
    snprintf(last_error, sizeof last_error, "%s: %s", prefix, old);
    return s;
}

pt_status pt_check_struct_size(const char *type, size_t got, size_t want)
{
    if (got == want) return PT_OK;
    return pt_fail(PT_ERR_INVALID,
                   "%s.struct_size is %zu, not %zu: start the struct with %s_init (a program "
                   "compiled against another version of ptron.h must be compiled again)",
                   type, got, want, type);
}

void pt_set_log(pt_log_fn fn, void *user)
{
    log_fn = fn;
    log_user = user;
}

void pt_log(pt_log_level level, const char *fmt, ...)
{
    if (!log_fn) return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    log_fn(level, msg, log_user);
}
