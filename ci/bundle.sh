#!/usr/bin/env bash
# Makes a self-contained copy of a build for another machine (the GPU machine: Ubuntu 24.04, no
# Debian packages): the attnbench executable, the test binary, the CUDA backend library
# (libattnbench_cuda.so, which also carries the statically linked CUDA runtime) and every shared
# library they load that is not part of the base system (Debian's libbenchmark.so.1debian), in one
# folder. The executables find them through their $ORIGIN runpath. Debug sections are stripped
# (symbols and the kernels' line tables stay), so the folder stays far below what a device call
# carries.
#
# usage: ci/bundle.sh BUILD_DIR OUT_DIR [--max-mib N]
#   --max-mib N   fail when the bundle exceeds N MiB (the bundle_size test uses 48)
# It also fails when a bundled binary would not load: a library not found, or a symbol of the CUDA
# library that the executables do not export (the library takes the core's from the executable).
set -euo pipefail

usage() { echo "usage: ci/bundle.sh BUILD_DIR OUT_DIR [--max-mib N]" >&2; exit 2; }
[ $# -ge 2 ] || usage
build=$1
out=$2
shift 2
max_mib=""
while [ $# -gt 0 ]; do
  case $1 in
    --max-mib) [ $# -ge 2 ] || usage; max_mib=$2; shift 2 ;;
    *) usage ;;
  esac
done
[ -x "$build/attnbench" ] || { echo "bundle: $build/attnbench not found (build first)" >&2; exit 1; }

rm -rf "$out"
mkdir -p "$out"
copy() { objcopy --strip-debug "$1" "$2"; }

binaries=("$build/attnbench")
[ -x "$build/tests/attnbench_tests" ] && binaries+=("$build/tests/attnbench_tests")
for b in "${binaries[@]}"; do copy "$b" "$out/$(basename "$b")"; done

# Shared libraries outside the base system: whatever ldd resolves that is not libc, libm, the GCC
# runtime, the dynamic loader, or the NVIDIA driver's (which the GPU machine provides).
base_system='^(linux-vdso|ld-linux-x86-64|libc|libm|libdl|libpthread|librt|libresolv|libstdc\+\+|libgcc_s|libcuda|libnvidia-[a-z-]+)\.so'
for b in "$out"/*; do
  ldd "$b" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}'
done | sort -u | while read -r name path; do
  [[ $name =~ $base_system ]] && continue
  [ -e "$out/$name" ] || copy "$path" "$out/$name"
done

# Every bundled binary must load from the bundle alone.
status=0
for b in "$out"/*; do
  report=$(ldd -r "$b" 2>&1 || true)
  if grep -q "not found" <<<"$report"; then
    echo "bundle: $(basename "$b") misses a library:" >&2
    grep "not found" <<<"$report" >&2
    status=1
  fi
  # A library may leave symbols to the executable that loads it (the CUDA library takes the
  # core's); an executable's report covers the libraries it loads.
  if [[ $b != *.so* ]] && grep -q "undefined symbol" <<<"$report"; then
    echo "bundle: $(basename "$b") has undefined symbols:" >&2
    grep "undefined symbol" <<<"$report" | head -20 >&2
    status=1
  fi
  while read -r name path; do
    case $path in
      "$out"/*|"$(cd "$out" && pwd)"/*) ;;
      *) [[ $name =~ $base_system ]] || { echo "bundle: $(basename "$b") loads $name from $path" >&2; status=1; } ;;
    esac
  done < <(ldd "$b" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}')
done

{
  echo "attnbench bundle"
  echo "commit: $(git -C "$(dirname "$0")/.." rev-parse HEAD 2>/dev/null || echo unknown)"
  echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -m)"
  grep -E '^(CMAKE_CUDA_ARCHITECTURES|ATTNBENCH_CUDA|ATTNBENCH_VULKAN):' "$build/CMakeCache.txt" 2>/dev/null || true
  (cd "$out" && ls -l --time-style=+ | awk 'NR > 1 {print $5, $NF}')
} >"$out/MANIFEST.txt"

bytes=$(du -sb "$out" | cut -f1)
mib=$(( (bytes + 1048575) / 1048576 ))
echo "bundle: $out, $(ls "$out" | wc -l) files, $mib MiB"
if [ -n "$max_mib" ] && [ "$bytes" -gt $(( max_mib * 1048576 )) ]; then
  echo "bundle: $bytes bytes exceed the limit of $max_mib MiB" >&2
  status=1
fi
exit $status
