#!/usr/bin/env bash
# The CUDA part of the GPU machine's check (DESIGN.md §8), run from the repository root with a
# carried bundle (ci/bundle.sh) and $OUT, the folder whose files come back:
#
#   OUT=/some/dir bash ci/device/cuda.sh [BUNDLE_DIR]      (default build/bundle; about 6 minutes)
#
# Steps, each with a time limit, appending to $OUT/cuda.log as it goes (a step that fails or times
# out is recorded and the next one runs):
#   1. the device (nvidia-smi) and attnbench's view of it with the measured peaks -> cuda_env.json
#   2. the [cuda] Catch2 tests (device Philox against the CPU's; snapkv and speculative_sampling:
#      their cases, run-to-run equality, the tie rule, the select kernel against the spec's top-k,
#      the zero-residual and all −inf races, every draw site's uniforms against the CPU's)
#   3. compute-sanitizer memcheck, racecheck and synccheck on the smoke suite, where the machine's
#      runtime allows it (gVisor refuses the device; Firecracker runs it)
#   4. attnbench check suites/ci.json on cuda and cpu                -> check_ci.json
#   5. the anchor shapes timed (suites/anchors.json)                 -> bench_cuda.json
#   6. torch SDPA (FLASH, CUDNN) on the same inputs, side by side    -> anchors_torch.json
# Five files in $OUT in all (the device tool returns at most eight).
set -uo pipefail
: "${OUT:?set OUT to the folder the results go to}"
bundle=${1:-build/bundle}
ab=$bundle/attnbench
tests=$bundle/attnbench_tests
log=$OUT/cuda.log
mkdir -p "$OUT"
summary=()

# step NAME LIMIT_S COMMAND...: runs it with a time limit, output to the log.
step() {
  local name=$1 limit=$2
  shift 2
  local t0=$SECONDS
  echo "=== $name ($(date -u +%H:%M:%S), limit ${limit} s): $*" >>"$log"
  timeout -k 10 "$limit" "$@" >>"$log" 2>&1
  local rc=$?
  [ $rc -eq 124 ] || [ $rc -eq 137 ] && echo "=== $name: TIMED OUT" >>"$log"
  echo "=== $name: exit $rc after $((SECONDS - t0)) s" >>"$log"
  summary+=("$(printf '%-22s exit %3d  %4d s' "$name" "$rc" "$((SECONDS - t0))")")
}

[ -x "$ab" ] || { echo "cuda.sh: no bundle at $bundle (ci/bundle.sh BUILD_DIR $bundle)" | tee -a "$log"; exit 1; }
export ATTNBENCH_CUDA_DEVICE=${ATTNBENCH_CUDA_DEVICE:-0}

step nvidia-smi 20 nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw,memory.used,memory.total --format=csv
step env-peaks 90 bash -c "'$ab' env --peaks > '$OUT/cuda_env.json'"
[ -x "$tests" ] && step tests-cuda 240 "$tests" "[cuda]" --order decl

sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null || true)
if [ -n "$sanitizer" ]; then
  # --error-exitcode: any report fails the step, not only a crash.
  step memcheck 180 "$sanitizer" --tool memcheck --error-exitcode 86 --print-limit 20 \
    "$ab" check suites/smoke.json --backends cuda --quiet
  step racecheck 240 "$sanitizer" --tool racecheck --racecheck-report hazard --error-exitcode 86 --print-limit 20 \
    "$ab" check suites/smoke.json --backends cuda --quiet
  step synccheck 90 "$sanitizer" --tool synccheck --error-exitcode 86 --print-limit 20 \
    "$ab" check suites/smoke.json --backends cuda --quiet
else
  echo "=== compute-sanitizer not found: skipped" >>"$log"
  summary+=("compute-sanitizer     not found")
fi

step check-ci 240 "$ab" check suites/ci.json --backends cuda,cpu --out "$OUT/check_ci.json"
step bench-anchors 300 "$ab" run suites/anchors.json --backends cuda --out "$OUT/bench_cuda.json"
if [ -f "$OUT/bench_cuda.json" ]; then
  step torch-anchors 240 env PYTHONUNBUFFERED=1 python3 ci/anchors/torch_sdpa.py --results "$OUT/bench_cuda.json" \
    --out "$OUT/anchors_torch.json"
fi

{
  echo
  echo "=== summary"
  printf '%s\n' "${summary[@]}"
} | tee -a "$log"
