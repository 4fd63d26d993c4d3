#!/usr/bin/env bash
# Regenerates the committed PTX of every catalog kernel and launch-spec kernel from its CUDA
# source. Needs nvcc (the CUDA toolkit); users of gpusc do not, because the generated PTX is
# committed.
#   stimuli/regen_ptx.sh            all kernels (catalog/*/ and launch/*/)
#   stimuli/regen_ptx.sh sgemm bfs  the named ones
set -euo pipefail
cd "$(dirname "$0")"
NVCC=${NVCC:-nvcc}
command -v "$NVCC" >/dev/null || { echo "regen_ptx.sh: nvcc not found (set NVCC=...)" >&2; exit 1; }
ARCH=sm_75   # the oldest target nvcc 13 accepts
dirs=()
for n in "$@"; do
  if [[ -d catalog/$n ]]; then dirs+=("catalog/$n"); elif [[ -d launch/$n ]]; then dirs+=("launch/$n"); else
    echo "regen_ptx.sh: no kernel folder catalog/$n or launch/$n" >&2; exit 1; fi
done
((${#dirs[@]})) || dirs=(catalog/*/ launch/*/)
for d in "${dirs[@]}"; do
  d=${d%/}
  for cu in "$d"/*.cu; do
    [[ -e $cu ]] || continue
    base=${cu%.cu}
    cmd="nvcc -ptx -arch=$ARCH -O3 -o $(basename "$base").ptx $(basename "$cu")"
    (cd "$d" && $NVCC -ptx -arch=$ARCH -O3 -o "$(basename "$base").ptx.tmp" "$(basename "$cu")")
    { echo "// Generated from $(basename "$cu") by stimuli/regen_ptx.sh: $cmd"
      echo "// $($NVCC --version | tail -n 1)"
      cat "$base.ptx.tmp"; } > "$base.ptx"
    rm -f "$base.ptx.tmp"
    echo "regen_ptx.sh: $base.ptx"
  done
done
