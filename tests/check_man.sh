#!/bin/sh
# check_man.sh PTRON MAN_PAGE: the page built from the help texts is roff man(7) with a
# section for every command `ptron help` lists, each holding that command's usage line, and it
# renders (where man is installed) without warnings.
set -eu
bin=$1
page=$2
fail() { echo "check_man: $*" >&2; exit 1; }
[ -s "$page" ] || fail "$page is missing or empty"
head -n 1 "$page" | grep -q '^\.TH PTRON 1 ' || fail "$page does not start with .TH PTRON 1"
for sec in NAME SYNOPSIS DESCRIPTION COMMANDS 'EXIT STATUS'; do
    grep -q "^\.SH $sec\$" "$page" || fail "no .SH $sec"
done
n=0
for cmd in $("$bin" help | sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p' | grep -v '^help$'); do
    grep -q "^\.SS ptron $cmd\$" "$page" || fail "no section for ptron $cmd"
    usage=$("$bin" help "$cmd" | head -n 1 | sed 's/-/\\-/g')
    grep -qF "$usage" "$page" || fail "the usage line of ptron $cmd is not in the page"
    n=$((n + 1))
done
[ "$n" -ge 7 ] || fail "only $n commands found in ptron help"
if command -v man >/dev/null 2>&1; then
    warnings=$(MANWIDTH=100 man --warnings -l "$page" 2>&1 >/dev/null || true)
    [ -z "$warnings" ] || fail "man reports: $warnings"
fi
echo "ptron.1: $n commands"
