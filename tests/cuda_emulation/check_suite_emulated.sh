#!/usr/bin/env bash
# Usage: check_suite_emulated.sh ATTNBENCH_EMULATED SUITE KNOWN_FAILURES
# `check SUITE --backends cuda` on the emulated device: passes when the rows that fail are exactly
# the ones KNOWN_FAILURES lists (a row name per line, then two spaces and why; # comments), so a
# new failure fails the test, and so does a listed row that passes (the list must then shrink).
exe=$1 suite=$2 known=$3
out=$("$exe" check "$suite" --backends cuda --quiet 2>&1)
rc=$?
echo "$out"
if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then exit "$rc"; fi
failing=$(printf '%s\n' "$out" | sed -n '/^rows that failed:/,$p' | sed -n 's/^  [a-z]* *\([^ ]*\).*/\1/p' | sort -u)
expected=$(grep -v '^#' "$known" | sed -n 's/^\([^ ]*\).*/\1/p' | sort -u)
if [ "$failing" != "$expected" ]; then
  echo "rows failing on the emulated device differ from $known:"
  diff <(printf '%s\n' "$expected") <(printf '%s\n' "$failing") | sed -n 's/^</  listed, now passes:/p; s/^>/  new failure:/p'
  exit 1
fi
echo "the rows that fail are the $(printf '%s\n' "$expected" | grep -c .) listed in $known"
exit 0
