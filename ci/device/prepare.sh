#!/usr/bin/env bash
# Prepares, on this machine, everything ci/device-check.sh needs on the GPU machine, in folders
# git ignores (the device tool carries them when named; 64 MiB in all):
#   build/bundle/   attnbench, attnbench_tests, libattnbench_cuda.so and Debian's libbenchmark,
#                   found through $ORIGIN (ci/bundle.sh)
#   .gl/*.deb       the Vulkan loader, as the device tool's README prescribes (the GPU image has
#                   NVIDIA's driver but may lack libvulkan.so.1)
# usage: ci/device/prepare.sh [BUILD_DIR]   (default build/release, built with CUDA and Vulkan)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build/release}
ci/bundle.sh "$build" build/bundle --max-mib 48
if ! ls .gl/libvulkan1_*.deb >/dev/null 2>&1; then
  mkdir -p .gl /tmp/amd64/partial
  o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
  # shellcheck disable=SC2086
  apt-get $o update -qq
  # shellcheck disable=SC2086
  (cd .gl && apt-get $o download -qq libvulkan1)
fi
du -sh build/bundle .gl
echo 'device run: carry ["build/bundle", ".gl"], command: OUT=$OUT bash ci/device-check.sh, timeout_s 600'
