#!/bin/sh
# Regenerates cudart_symbols.txt: every function the CUDA toolkit's libcudart.so.13 exports (the
# names libgpusc_cudart must define, so that a program linked against the toolkit's runtime finds
# each one). Needs the toolkit: CUDA=/usr/local/cuda by default.
set -eu
CUDA=${CUDA:-/usr/local/cuda}
here=$(dirname "$0")
nm -D --defined-only "$CUDA"/lib64/libcudart.so.13 | awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }' |
  LC_ALL=C sort -u > "$here/cudart_symbols.txt"
wc -l < "$here/cudart_symbols.txt"
