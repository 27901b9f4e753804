#!/usr/bin/env bash
# The shared library exports exactly the public API: every function include/ptron.h declares
# with PT_API, and no other symbol (internals, test hooks, OpenMP's named critical sections).
#   tests/check_exports.sh LIBPTRON_SO PTRON_H
set -euo pipefail
lib=$1
header=$2

# The declared functions: the name before the first '(' of each PT_API declaration.
declared=$(sed -n 's/^PT_API [^(]*[^a-z0-9_]\(pt_[a-z0-9_]*\)(.*/\1/p' "$header" | sort -u)
# The defined dynamic symbols (a version suffix such as @@V1 dropped).
exported=$(nm -D --defined-only "$lib" | awk '{print $NF}' | sed 's/@.*//' | sort -u)

n_declared=$(printf '%s\n' "$declared" | grep -c . || true)
if [ "$n_declared" -lt 50 ]; then
    echo "check_exports: only $n_declared PT_API functions found in $header: is the parse broken?" >&2
    exit 1
fi

extra=$(comm -13 <(printf '%s\n' "$declared") <(printf '%s\n' "$exported"))
missing=$(comm -23 <(printf '%s\n' "$declared") <(printf '%s\n' "$exported"))
status=0
if [ -n "$extra" ]; then
    echo "check_exports: $lib exports symbols that $header does not declare:" >&2
    printf '  %s\n' $extra >&2
    status=1
fi
if [ -n "$missing" ]; then
    echo "check_exports: $header declares functions that $lib does not export:" >&2
    printf '  %s\n' $missing >&2
    status=1
fi
[ $status -eq 0 ] && echo "check_exports: $n_declared functions declared, the same exported"
exit $status
