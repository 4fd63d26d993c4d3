#!/usr/bin/env bash
# Regenerates the fat binaries of axpy.cu that tests/test_fatbin.cpp reads (needs nvcc):
#   axpy_<mode>.fatbin   -arch=sm_75 --compress-mode=<mode>: compute_75 PTX and sm_75 SASS
#   axpy_two_ptx.fatbin  PTX for compute_75 and compute_80, SASS for sm_86
#   axpy_sass_only.fatbin  SASS for sm_75 only (-gencode arch=compute_75,code=sm_75)
#   axpy.ptx             nvcc -ptx -arch=sm_75: the text the PTX entries must decompress to
set -euo pipefail
cd "$(dirname "$0")"
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
section() { objcopy -O binary --only-section=.nv_fatbin "$1" "$2"; }
for mode in none speed size; do
  "$nvcc" -cudart shared -arch=sm_75 --compress-mode="$mode" -o "$tmp/axpy_$mode" axpy.cu
  section "$tmp/axpy_$mode" "axpy_$mode.fatbin"
done
"$nvcc" -cudart shared -gencode arch=compute_75,code=compute_75 \
  -gencode arch=compute_80,code=compute_80 -gencode arch=compute_86,code=sm_86 \
  -o "$tmp/axpy_two_ptx" axpy.cu
section "$tmp/axpy_two_ptx" axpy_two_ptx.fatbin
"$nvcc" -cudart shared -gencode arch=compute_75,code=sm_75 -o "$tmp/axpy_sass_only" axpy.cu
section "$tmp/axpy_sass_only" axpy_sass_only.fatbin
"$nvcc" -ptx -arch=sm_75 -o axpy.ptx axpy.cu
