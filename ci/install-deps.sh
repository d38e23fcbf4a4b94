#!/usr/bin/env bash
# Installs every Debian package attnbench's build and tests need. Idempotent: packages already
# present are not fetched again, so a warm machine passes through in about a second.
set -euo pipefail

packages=(
  build-essential cmake ninja-build git pkg-config
  libbenchmark-dev libbenchmark-tools     # timing engine; compare.py for the results-format test
  catch2                                  # 2.13: tests (skips exit 77, see tests/CMakeLists.txt)
  nlohmann-json3-dev python3-jsonschema   # JSON; the suite schema is cross-checked by jsonschema
  libre2-dev                              # --filter: a linear-time regular expression engine
  clang libclang-rt-14-dev llvm           # the fuzz targets: libFuzzer, ASan+UBSan, the symbolizer
  libvulkan-dev glslc vulkan-validationlayers mesa-vulkan-drivers vulkan-tools
  python3 python3-numpy python3-scipy     # docs' regenerator test, compare.py
  chromium                                # the leaderboard's browser test
  slurm-wlm munge                         # the cluster test: a one-node Slurm cluster (ci/slurm)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
