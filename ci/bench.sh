#!/usr/bin/env bash
# Sets up this machine, builds attnbench, runs the smoke suite on every backend available here and
# prints the summary; the results file goes to results/local/ (ignored by git), and last the
# leaderboard of that run: results/local/leaderboard.md and .html (even when a row failed; the
# script then exits with the run's code).
#   ci/bench.sh [SUITE] [extra attnbench run options]
set -euo pipefail
cd "$(dirname "$0")/.."
suite=${1:-suites/smoke.json}
shift || true

ci/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)" --target attnbench
stamp=$(date -u +%Y%m%dT%H%M%SZ)
out=results/local/$(basename "$suite" .json)-$stamp.json
rc=0
build/release/attnbench run "$suite" --out "$out" "$@" || rc=$?
if [ -f "$out" ]; then
  build/release/attnbench leaderboard "$out" --out results/local
fi
exit "$rc"
