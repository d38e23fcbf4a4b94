#!/usr/bin/env bash
# Sets up this machine, builds attnbench and runs every test, printing the time of each phase.
#   ci/test.sh            the whole thing (what CI runs through .ci/run)
# Phases: dependencies (Debian packages), build (release preset with every backend whose toolchain
# is here, plus ASan+UBSan and ThreadSanitizer builds of harness and CPU backend), tests (CTest on the release
# build, then the smoke suite under ASan+UBSan and under ThreadSanitizer), fuzz (the parsers of
# suites, case ids and results files under libFuzzer, ASan and UBSan, 15 s each: ci/fuzz.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

phase_start=$(date +%s)
declare -a report=()
phase() {  # phase NAME: close the previous phase, start a new one
  local now; now=$(date +%s)
  if [ -n "${current:-}" ]; then report+=("$(printf '%-14s %4ds' "$current" $((now - phase_start)))"); fi
  current=$1; phase_start=$now
  [ -n "$current" ] && echo "=== $current"
  return 0
}
summary() {
  phase ""
  echo "=== phase times"
  printf '  %s\n' "${report[@]}"
}
trap summary EXIT

jobs=$(nproc)

phase dependencies
ci/install-deps.sh

phase build
cmake --preset release >/dev/null
cmake --build --preset release -j "$jobs"
for preset in asan tsan; do
  cmake --preset $preset >/dev/null
  cmake --build --preset $preset -j "$jobs" --target attnbench
done

phase tests
ctest --preset release -j "$jobs" --timeout 900
echo "--- smoke suite under ASan+UBSan"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  build/asan/attnbench check suites/smoke.json --backends cpu --quiet
echo "--- smoke suite under ThreadSanitizer (timed, so the pool's every path runs)"
# --no-related: the baselines and companions are cases of methods the suite runs itself, a third
# of the rows and no code path the primary cases do not take.
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
  build/tsan/attnbench run suites/smoke.json --backends cpu --quiet --repetitions 2 --min-time 0.001 --warmup 0 \
  --no-related --out build/tsan/smoke.json

phase fuzz
ci/fuzz.sh 15
