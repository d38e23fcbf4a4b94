#!/usr/bin/env bash
# The Vulkan section of the GPU machine's check (DESIGN.md §8), run there from the repository
# root with what ci/device/pack-vulkan.sh packed here carried along (.device-vulkan, .gl):
#   1. the Vulkan loader (carried .debs, unpacked as the device README says) and NVIDIA's ICD;
#   2. `attnbench env --peaks`: the device the backend chose, its limits, copy and FMA peaks;
#   3. correctness first: `check suites/ci.json` and the smoke suite with forced KV splits;
#   4. then the benchmarks: the headline cases, snapkv and speculative_sampling (the ci suite's
#      cases, with snapkv's decode companions), then each model suite (suites/models/*.json).
# Every step writes its results JSON and log to $OUT as it finishes, so a run cut short by the
# device's time limit still returns what it did. A closing table compares the headline rows
# with the bars (decode >= 70% of the in-run copy bandwidth; coopmat_nv prefill >= 130 TFLOP/s).
#
# Environment: OUT (required), ATTNBENCH_EXE (default .device-vulkan/attnbench),
# ATTNBENCH_DEVICE_BUDGET_S (default 540: later steps are skipped once it is spent).
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?OUT must name the folder results go to}"
mkdir -p "$OUT"
pack=.device-vulkan
exe=${ATTNBENCH_EXE:-$pack/attnbench}
budget=${ATTNBENCH_DEVICE_BUDGET_S:-540}
start=$SECONDS
status=0
log() { echo "[vulkan.sh +$((SECONDS - start))s] $*" | tee -a "$OUT/vulkan.log"; }
time_left() { [ $((SECONDS - start)) -lt "$budget" ]; }

# --- 1. loader, driver, libraries -------------------------------------------------------------
if ! ldconfig -p 2>/dev/null | grep -q 'libvulkan\.so\.1'; then
  if ls .gl/*.deb >/dev/null 2>&1; then
    for f in .gl/*.deb; do dpkg -x "$f" /; done
    ldconfig
    log "unpacked the carried Vulkan loader: $(ls .gl)"
  else
    log "no libvulkan.so.1 here and no .gl/*.deb carried: run ci/device/pack-vulkan.sh and carry .gl"
  fi
fi
if [ -z "${VK_DRIVER_FILES:-}${VK_ICD_FILENAMES:-}" ]; then
  for icd in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json \
             /etc/vulkan/icd.d/nvidia_icd.json; do
    if [ -f "$icd" ]; then
      export VK_DRIVER_FILES=$icd
      break
    fi
  done
fi
log "VK_DRIVER_FILES=${VK_DRIVER_FILES:-unset}"
[ -d "$pack/lib" ] && export LD_LIBRARY_PATH="$PWD/$pack/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if ! [ -x "$exe" ]; then
  log "no attnbench at $exe: run ci/device/pack-vulkan.sh here and carry $pack"
  exit 2
fi
if ldd "$exe" | grep -q 'not found'; then
  log "missing libraries: $(ldd "$exe" | grep 'not found' | tr -s ' \n\t' ' ')"
  exit 2
fi
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu \
  --format=csv >"$OUT/vulkan-nvidia-smi.csv" 2>&1

# --- 2. the device ------------------------------------------------------------------------------
"$exe" env --peaks >"$OUT/vulkan-env.json" 2>"$OUT/vulkan-env.stderr"
device=$(python3 -c 'import json,sys; v=json.load(open(sys.argv[1]))["vulkan"]; print(v["device"] if v["available"] else "unavailable: "+v["reason"])' \
  "$OUT/vulkan-env.json" 2>/dev/null || echo "env failed")
log "vulkan device: $device"
case "$device" in
  *NVIDIA*) ;;
  *) log "the Vulkan backend did not open NVIDIA's driver; see $OUT/vulkan-env.stderr"; status=1 ;;
esac

# Runs one attnbench verb, writing <name>.json and <name>.log to $OUT.
step() {
  local name=$1
  shift
  if ! time_left; then
    log "skipped $name: the ${budget}s budget is spent"
    return
  fi
  log "start $name: $*"
  "$exe" "$@" --backends vulkan --out "$OUT/$name.json" >"$OUT/$name.log" 2>&1
  local rc=$?
  log "done  $name: exit $rc ($(grep -E '^vulkan/' "$OUT/$name.log" | tr -s ' ' | paste -sd ';'))"
  [ $rc -eq 0 ] || status=1
}

# --- 3. correctness -----------------------------------------------------------------------------
step vulkan-check-ci check suites/ci.json --quiet
step vulkan-check-smoke-splits check suites/smoke.json --quiet --backend-opt vulkan.splits=3

# --- 4. benchmarks ------------------------------------------------------------------------------
step vulkan-run-headline run suites/models/llama-3-8b.json --quiet \
  --filter '^(gqa/decode/batch=16,q_heads=32,kv_heads=8,head_dim=128,q_len=1,kv_len=8192,causal=true,ragged=false/bf16|mha/prefill/batch=2,q_heads=32,head_dim=128,q_len=4096,kv_len=4096,causal=true,ragged=false/f16)/'
step vulkan-run-kvcomp-decoding run suites/ci.json --quiet --filter '^(snapkv|speculative_sampling)/'
for suite in suites/models/*.json; do
  step "vulkan-run-$(basename "$suite" .json)" run "$suite" --quiet
done

# --- 5. the headline rows against the bars ------------------------------------------------------
if [ -f "$OUT/vulkan-run-headline.json" ]; then
  python3 - "$OUT/vulkan-run-headline.json" <<'PY' | tee -a "$OUT/vulkan.log"
import json, sys
doc = json.load(open(sys.argv[1]))
peaks = doc["context"].get("backends", {}).get("vulkan", {}).get("peaks", {})
copy = peaks.get("copy_bytes_per_s", 0)
print(f"in-run copy bandwidth: {copy / 1e9:.0f} GB/s; fp32 FMA: {peaks.get('flops_per_s', 0) / 1e12:.1f} TFLOP/s")
seen = set()
for row in doc["benchmarks"]:
    a = row.get("attnbench", {})
    if "timing" not in a:  # timings sit on the median row; a row that did not pass has none
        if a.get("status") not in (None, "pass") and a.get("case_id") not in seen:
            seen.add(a.get("case_id"))
            print(f"{a.get('status'):8} {a.get('case_id')} {a.get('variant')}: {a.get('reason')}")
        continue
    t, tp = a["timing"], a.get("throughput", {})
    if a["phase"] == "decode":
        pct = 100 * tp.get("bytes_per_s", 0) / copy if copy else 0
        bar = "meets" if pct >= 70 else "misses"
        print(f"{a['variant']:10} decode  {t['median_s'] * 1e6:9.1f} us  {tp.get('bytes_per_s', 0) / 1e9:7.0f} GB/s  "
              f"{pct:5.1f}% of copy ({bar} the 70% bar)")
    else:
        tf = tp.get("flops_per_s", 0) / 1e12
        bar = ("meets" if tf >= 130 else "misses") if a["variant"] == "coopmat_nv" else "no bar"
        print(f"{a['variant']:10} prefill {t['median_s'] * 1e6:9.1f} us  {tf:7.1f} TFLOP/s ({bar}: 130 = 0.5x torch FLASH)")
PY
fi
log "finished with status $status"
exit $status
