#!/usr/bin/env bash
# The whole check on the GPU machine (one NVIDIA H200), in one script (docs/cuda.md,
# docs/vulkan.md): run it there from the repository root with what ci/device/prepare.sh made here
# carried along (build/bundle, .gl):
#
#   OUT=$OUT bash ci/device-check.sh          (at most 5 minutes; each step has a limit)
#
# Steps, in order, each appending to $OUT/device.log, each result written to $OUT as it finishes
# (so a run cut short still returns what it did), later steps skipped once the budget is spent:
#   1. the device: nvidia-smi, the Vulkan loader and NVIDIA's ICD, `attnbench env --peaks`  -> env.json
#   2. compute-sanitizer memcheck and racecheck on the smoke suite (CUDA), where the machine's
#      runtime allows it; the [cuda] and [vulkan] tests (device Philox against the host's)
#   3. correctness: `check suites/ci.json` on cuda, vulkan and cpu                       -> check_ci.json
#   4. the anchor shapes (suites/anchors.json) timed on cuda and vulkan                     -> bench.json
#   5. torch SDPA (FLASH, CUDNN) on the same inputs, the same way, with the ratios          -> torch.json
#   6. the ci suite's cases of every method outside the attention family, timed           -> kvcomp.json
#      then the samplers beside torch's sampler on the same logits (suites/anchors_sampling.json) -> the log
#      and gather_decode and kivi_decode beside full decode at 32k (ci/bench/kv_decode.py)     -> the log
#   7. the model suites on the GPU backends, one object keyed by model                     -> models.json
#   8. suites/kv.json (every KV method at kvpress's points, 4k and 32k) on cuda, if time is left -> kv.json
# Eight files at most come back from $OUT; this writes eight.
set -uo pipefail
cd "$(dirname "$0")/.."
: "${OUT:?set OUT to the folder the results go to}"
mkdir -p "$OUT"
bundle=${BUNDLE:-build/bundle}
ab=$bundle/attnbench
tests=$bundle/attnbench_tests
log=$OUT/device.log
budget=${ATTNBENCH_DEVICE_BUDGET_S:-300}  # the CUDA issue: the whole check within 5 minutes
start=$SECONDS
summary=()
export ATTNBENCH_CACHE_DIR=/tmp/attnbench-references

# step NAME LIMIT_S COMMAND...: runs it with a time limit (skipped once the budget is spent).
step() {
  local name=$1 limit=$2
  shift 2
  local left=$((budget - (SECONDS - start)))
  if [ "$left" -le 10 ]; then
    summary+=("$(printf '%-16s skipped: budget spent' "$name")")
    return
  fi
  [ "$limit" -gt "$left" ] && limit=$left
  local t0=$SECONDS
  echo "=== $name ($(date -u +%H:%M:%S), limit ${limit} s): $*" >>"$log"
  timeout -k 10 "$limit" "$@" >>"$log" 2>&1
  local rc=$?
  [ $rc -eq 124 ] || [ $rc -eq 137 ] && echo "=== $name: TIMED OUT" >>"$log"
  echo "=== $name: exit $rc after $((SECONDS - t0)) s" >>"$log"
  summary+=("$(printf '%-16s exit %3d  %4d s' "$name" "$rc" "$((SECONDS - t0))")")
}

[ -x "$ab" ] || { echo "device-check: no bundle at $bundle (run ci/device/prepare.sh here)" | tee -a "$log"; exit 1; }

# 1. The device, the Vulkan loader (carried .debs, unpacked as the device README says) and ICD.
if ! ldconfig -p 2>/dev/null | grep -q 'libvulkan\.so\.1' && ls .gl/*.deb >/dev/null 2>&1; then
  for f in .gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
fi
if [ -z "${VK_DRIVER_FILES:-}" ]; then
  for icd in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json \
             /etc/vulkan/icd.d/nvidia_icd.json; do
    [ -f "$icd" ] && { export VK_DRIVER_FILES=$icd; break; }
  done
fi
echo "VK_DRIVER_FILES=${VK_DRIVER_FILES:-unset}" >>"$log"
step nvidia-smi 20 nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw,memory.total --format=csv
step env 40 bash -c "'$ab' env --peaks > '$OUT/env.json'"

# 2. Sanitizers first (the GPU machine's runtime may refuse them: the step records it), then the
#    device tests.
sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null || true)
if [ -n "$sanitizer" ]; then
  for tool in memcheck racecheck; do
    step "$tool" 45 "$sanitizer" --tool "$tool" --error-exitcode 86 --print-limit 20 \
      "$ab" check suites/smoke.json --backends cuda --quiet --no-isolate
  done
else
  summary+=("compute-sanitizer not found")
fi
step tests-cuda 45 "$tests" "[cuda]" --order decl
step tests-vulkan 30 "$tests" "[vulkan]" --order decl

# 3. Correctness on every backend.
step check-ci 60 "$ab" check suites/ci.json --backends cuda,vulkan,cpu --quiet --out "$OUT/check_ci.json"

# 4-5. The anchors, then torch on the same inputs, timed the same way.
step bench 60 "$ab" run suites/anchors.json --backends cuda,vulkan --quiet --out "$OUT/bench.json"
if [ -f "$OUT/bench.json" ]; then
  step torch 45 env PYTHONUNBUFFERED=1 python3 ci/anchors/torch_sdpa.py --results "$OUT/bench.json" \
    --backend cuda --out "$OUT/torch.json"
fi

# 6. Every method whose family is not attention (step 4 times those), named by the registry so a
#    new method is timed here with no edit; on both GPU backends, with their related cases (e.g.
#    snapkv's decode companions). The step and its file keep their first name, kvcomp.
others=$("$ab" list --json | python3 -c '
import json, sys
print("|".join(m["name"] for m in json.load(sys.stdin)["methods"] if m["family"] != "attention"))')
if [ -n "$others" ]; then
  step kvcomp 30 "$ab" run suites/ci.json --backends cuda,vulkan --quiet --filter "^($others)/" --out "$OUT/kvcomp.json"
else
  summary+=("$(printf '%-16s skipped: no method outside the attention family' kvcomp)")
fi

# 6b. The samplers beside torch's on the GPU (the B = 64, V = 128256 top-p row among them), into
#     the log: the eight files are spoken for.
step sampling-torch 40 env PYTHONUNBUFFERED=1 python3 ci/anchors/torch_sampling.py --attnbench "$ab" --backend cuda \
  --rounds 1 --reps 5

# 6c. The decode steps of the selection-only and quantized caches against full decode (gather_decode,
#     kivi_decode beside gqa at 32k), on each GPU backend, into the log.
for be in cuda vulkan; do
  step "kv-decode-$be" 15 python3 ci/bench/kv_decode.py --attnbench "$ab" --backend "$be" --rounds 3
done

# 7. Real models' shapes and the leaderboard's suite (suites/leaderboard.json: real layers, kv_len
#    1k-32k), joined into one file (the device returns eight files at most).
models=$(mktemp -d)
for suite in suites/models/*.json suites/leaderboard.json; do
  name=$(basename "$suite" .json)
  step "models-$name" 20 "$ab" run "$suite" --backends cuda,vulkan --quiet --out "$models/$name.json"
done
python3 - "$models" "$OUT/models.json" <<'PY'
import json, pathlib, sys
folder, out = pathlib.Path(sys.argv[1]), sys.argv[2]
json.dump({f.stem: json.loads(f.read_text()) for f in sorted(folder.glob("*.json"))}, open(out, "w"))
PY

# 8. The KV section's suite on CUDA: its fp64 references at 32k run on this machine's cores.
step kv 60 "$ab" run suites/kv.json --backends cuda --quiet --out "$OUT/kv.json"

{
  echo
  echo "=== summary"
  printf '%s\n' "${summary[@]}"
} | tee -a "$log"
