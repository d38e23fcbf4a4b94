#!/usr/bin/env bash
# Packs, on this machine, what ci/device/vulkan.sh needs on the GPU machine, into folders git
# ignores (they travel as the device tool's `carry`, 64 MiB in all):
#   .device-vulkan/attnbench   the CLI without debug info (a RelWithDebInfo binary is ~35 MB)
#   .device-vulkan/lib/        shared libraries of the binary beyond glibc and the compiler's
#                              runtime (Debian's libbenchmark.so.1debian)
#   .gl/*.deb                  the Vulkan loader, as /work/.library/device/README.md prescribes:
#                              the GPU image may have NVIDIA's driver but no libvulkan.so.1
# Usage: ci/device/pack-vulkan.sh [build folder, default build/default]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build/default}
pack=.device-vulkan
# Both folders are in .gitignore: the device tool carries ignored paths only when named.

rm -rf "$pack"
mkdir -p "$pack/lib"
objcopy --strip-debug "$build/attnbench" "$pack/attnbench"
ldd "$build/attnbench" | awk '/=> \// {print $3}' | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so.* | libm.so.* | libgcc_s.so.* | libstdc++.so.* | ld-linux*) ;;  # newer on the GPU image
    *) cp -L "$lib" "$pack/lib/" ;;
  esac
done

if ! ls .gl/libvulkan1_*.deb >/dev/null 2>&1; then
  mkdir -p .gl /tmp/amd64/partial
  o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
  # shellcheck disable=SC2086
  apt-get $o update -qq
  # shellcheck disable=SC2086
  (cd .gl && apt-get $o download -qq libvulkan1)
fi
du -sh "$pack" .gl
echo "carry: [\"$pack\", \".gl\"]; command: bash ci/device/vulkan.sh"
