#!/usr/bin/env bash
# Test cudart.error_table: the committed table of CUDA error codes, names and messages
# (models/cudart/cuda_errors.inc) is what the installed toolkit's libcudart reports. Skipped
# (exit 77) where there is no CUDA toolkit.
set -euo pipefail
src=$1
cuda=${CUDA_HOME:-/usr/local/cuda}
if [[ ! -x "$cuda/bin/nvcc" || ! -e "$cuda/lib64/libcudart.so" ]]; then
  echo "skipped: no CUDA toolkit at $cuda (set CUDA_HOME)"
  exit 77
fi
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
"$src/models/cudart/regen_errors.sh" "$tmp"
if ! diff <(tail -n +2 "$src/models/cudart/cuda_errors.inc") <(tail -n +2 "$tmp"); then
  echo "models/cudart/cuda_errors.inc differs from $cuda's libcudart: run models/cudart/regen_errors.sh"
  exit 1
fi
echo "cuda_errors.inc: $(grep -c '^{' "$tmp") codes, as $cuda's libcudart reports them"
