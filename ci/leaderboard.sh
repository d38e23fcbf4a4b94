#!/usr/bin/env bash
# The committed leaderboard (results/leaderboard.md, results/leaderboard.html) and the runs it is drawn from.
#   ci/leaderboard.sh [BUILD_DIR]        draw it from the committed results files
#   ci/leaderboard.sh --run [BUILD_DIR]  first run its suites on this machine's CPU and lavapipe into
#                                        results/ (about an hour on 2 cores), then draw it
# BUILD_DIR defaults to build/release if it has attnbench, else build/default (configured if absent).
#
# Which files: the model-sized suites' runs are ranked, tabled and plotted — results/*-leaderboard.json
# (suites/leaderboard.json: real layers, kv_len 1k–32k) and results/*-kv.json (suites/kv.json: the KV
# methods at kvpress's points). results/*-ci.json (suites/ci.json, edge cases sized for CI) are
# --coverage: their rows prove support (the support matrix) and sit in the backends-side-by-side
# view, but a kv_len of 20 draws no curve. Any other results/*.json is ranked too. Adding a machine's
# results is: copy its files here as results/<machine>-<suite>.json, then run this.
set -euo pipefail
cd "$(dirname "$0")/.."
run=0
if [ "${1:-}" = "--run" ]; then run=1; shift; fi
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
ab="$build/attnbench"

# A run whose rows failed (exit 1) still draws: the failure belongs on the board. Bad input (2) or an
# unavailable backend (3) stops.
run_suite() { local rc=0; "$ab" run "$@" || rc=$?; [ $rc -le 1 ] || exit $rc; }

if [ $run = 1 ]; then
  # One backend at a time: both share this machine's cores. lavapipe (a CPU rasteriser, about 100×
  # slower than the CPU backend) runs the decode steps, rope and the sampler: its prefills of 4k
  # tokens are a minute a launch, and MLA's naive baseline beyond 2k keys is minutes.
  run_suite suites/leaderboard.json --backends cpu --repetitions 9 --min-time 0.01 --out results/cpu-leaderboard.json --quiet
  run_suite suites/kv.json --backends cpu --repetitions 5 --min-time 0.01 --out results/cpu-kv.json --quiet
  run_suite suites/speculative.json --backends cpu --repetitions 5 --min-time 0.01 --out results/cpu-speculative.json --quiet
  run_suite suites/leaderboard.json --backends vulkan --repetitions 3 --min-time 0.01 --quiet \
    --filter '^(gqa|mha|mqa|swa|cog|moh)/decode/|^mla/decode/.*kv_len=(1024|2048),|^rope/|^speculative_sampling/' \
    --out results/lavapipe-leaderboard.json
fi

shopt -s nullglob
ranked=() coverage=()
for f in results/*.json; do
  case "$f" in
    *-ci.json) coverage+=("$f") ;;
    *) ranked+=("$f") ;;
  esac
done
if [ ${#ranked[@]} -eq 0 ]; then
  echo "ci/leaderboard.sh: no model-sized results/*.json to draw a leaderboard from" >&2
  exit 2
fi
args=("${ranked[@]}")
if [ ${#coverage[@]} -gt 0 ]; then args+=(--coverage "$(IFS=,; echo "${coverage[*]}")"); fi
"$ab" leaderboard "${args[@]}" --out results
