#!/usr/bin/env bash
# Regenerates results/leaderboard.md and results/leaderboard.html from every committed results file
# (results/*.json: one per machine and backend run) with this checkout's attnbench.
#   ci/leaderboard.sh [BUILD_DIR]     default: build/release if it has attnbench, else build/default
# Adding a machine's results is: copy its results file to results/<machine>-<suite>.json, run this.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-}
if [ -z "$build" ]; then
  for b in build/release build/default; do
    if [ -x "$b/attnbench" ]; then build=$b; break; fi
  done
fi
if [ -z "$build" ]; then
  cmake --preset release >/dev/null
  build=build/release
fi
cmake --build "$build" --target attnbench >/dev/null   # up to date with this checkout
shopt -s nullglob
files=(results/*.json)
if [ ${#files[@]} -eq 0 ]; then
  echo "ci/leaderboard.sh: no results/*.json to draw a leaderboard from" >&2
  exit 2
fi
"$build/attnbench" leaderboard "${files[@]}" --out results
