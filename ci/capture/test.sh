#!/usr/bin/env bash
# The test of ci/capture/capture_hf.py (ci/capture/test_capture.py): a tiny random Llama captured,
# checked bit for bit against torch, and replayed by attnbench (check, list, dump).
#   ci/capture/test.sh [--python PY] [--attnbench BIN] [--keep DIR]
# --python      a Python with torch, transformers and safetensors (default $ATTNBENCH_CAPTURE_PYTHON,
#               else python3); without them the test is skipped: exit 77 and one line saying why
# --attnbench   the binary (default build/release/attnbench)
# --keep DIR    capture into DIR and keep it (how tests/data/replay/ is made)
# Exit: 0 every check passed, 1 a check failed, 2 bad arguments, 77 skipped.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

python=${ATTNBENCH_CAPTURE_PYTHON:-python3}
args=()
while [ $# -gt 0 ]; do
  case $1 in
    --python) [ $# -ge 2 ] || { echo "ci/capture/test.sh: --python needs a value" >&2; exit 2; }
              python=$2; shift 2 ;;
    --attnbench|--keep)
              [ $# -ge 2 ] || { echo "ci/capture/test.sh: $1 needs a value" >&2; exit 2; }
              args+=("$1" "$2"); shift 2 ;;
    -h|--help) sed -n '2,9s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "ci/capture/test.sh: unknown argument $1 (accepted: --python, --attnbench, --keep)" >&2; exit 2 ;;
  esac
done

setup="set up: python3 -m venv ~/.venvs/attnbench-capture && ~/.venvs/attnbench-capture/bin/pip install torch transformers safetensors, then --python ~/.venvs/attnbench-capture/bin/python or ATTNBENCH_CAPTURE_PYTHON (docs/real-tensors.md)"
if ! command -v "$python" >/dev/null 2>&1; then
  echo "ci/capture/test.sh: skipped: no Python at $python; $setup"
  exit 77
fi
if ! why=$("$python" -c 'import safetensors, torch, transformers' 2>&1); then
  echo "ci/capture/test.sh: skipped: $python cannot import torch, transformers and safetensors ($(printf '%s' "$why" | tail -n 1)); $setup"
  exit 77
fi
exec "$python" "$here/test_capture.py" "${args[@]+"${args[@]}"}"
