#!/usr/bin/env bash
# Usage: check_suite.sh ATTNBENCH SUITE BACKEND [extra attnbench args]
# Runs `attnbench check SUITE --backends BACKEND`; a backend that is not compiled in, or is compiled
# in but unavailable here (exit 3), is a skip (77, CTest's SKIP_RETURN_CODE).
exe=$1 suite=$2 backend=$3
shift 3
if ! "$exe" list --json | grep -q "\"name\": \"$backend\""; then
  echo "skip: backend $backend is not compiled into this build"
  exit 77
fi
"$exe" check "$suite" --backends "$backend" --quiet "$@"
rc=$?
[ "$rc" -eq 3 ] && exit 77
exit "$rc"
