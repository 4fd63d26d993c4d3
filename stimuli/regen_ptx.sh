#!/usr/bin/env bash
# Regenerates the committed PTX of every catalog kernel, launch-spec kernel and test kernel
# (tests/data/*.cu) from its CUDA source. Needs nvcc and ptxas (the CUDA toolkit); users of gpusc do not, because the generated
# PTX is committed. The header records, per kernel, the registers per thread ptxas allocates
# ("// ptxas -arch=sm_75: <kernel> uses <n> registers"); gpusc sizes a CTA's register footprint
# from it (without such a line it estimates from the PTX's liveness).
#   stimuli/regen_ptx.sh            all kernels (catalog/*/, launch/*/ and tests/data/)
#   stimuli/regen_ptx.sh sgemm bfs  the named ones ("tests": tests/data/)
set -euo pipefail
cd "$(dirname "$0")"
NVCC=${NVCC:-nvcc}
PTXAS=${PTXAS:-ptxas}
command -v "$NVCC" >/dev/null || { echo "regen_ptx.sh: nvcc not found (set NVCC=...)" >&2; exit 1; }
command -v "$PTXAS" >/dev/null || { echo "regen_ptx.sh: ptxas not found (set PTXAS=...)" >&2; exit 1; }
ARCH=sm_75   # the oldest target nvcc 13 accepts
dirs=()
for n in "$@"; do
  if [[ $n == tests ]]; then dirs+=(../tests/data)
  elif [[ -d catalog/$n ]]; then dirs+=("catalog/$n"); elif [[ -d launch/$n ]]; then dirs+=("launch/$n"); else
    echo "regen_ptx.sh: no kernel folder catalog/$n or launch/$n" >&2; exit 1; fi
done
((${#dirs[@]})) || dirs=(catalog/*/ launch/*/ ../tests/data/)
for d in "${dirs[@]}"; do
  d=${d%/}
  for cu in "$d"/*.cu; do
    [[ -e $cu ]] || continue
    base=${cu%.cu}
    # A source may name a newer target for instructions sm_75 lacks: "// regen_ptx.sh: -arch=sm_90".
    arch=$(sed -n 's|^// regen_ptx.sh: -arch=\(sm_[0-9a-z]*\)$|\1|p' "$cu" | head -n 1)
    arch=${arch:-$ARCH}
    # Kernels that launch kernels need relocatable device code: "// regen_ptx.sh: -rdc=true"
    # (ptxas then compiles the file alone, -c, its calls of the device runtime unresolved).
    rdc=() ptxas_rdc=()
    if grep -q '^// regen_ptx.sh: -rdc=true$' "$cu"; then rdc=(-rdc=true) ptxas_rdc=(-c); fi
    cmd="nvcc -ptx -arch=$arch${rdc:+ ${rdc[*]}} -O3 -o $(basename "$base").ptx $(basename "$cu")"
    (cd "$d" && $NVCC -ptx -arch=$arch "${rdc[@]}" -O3 -o "$(basename "$base").ptx.tmp" "$(basename "$cu")")
    # ptxas -v prints "Compiling entry function 'k' ..." and then "Used N registers" per entry.
    regs=$("$PTXAS" -arch=$arch "${ptxas_rdc[@]}" -v -o /dev/null "$base.ptx.tmp" 2>&1 |
      awk -v arch=$arch '/Compiling entry function/ { match($0, /\x27[^\x27]*\x27/); k = substr($0, RSTART + 1, RLENGTH - 2) }
                         /Used [0-9]+ registers/ && k != "" { match($0, /Used [0-9]+/); print "// ptxas -arch=" arch ": " k " uses " substr($0, RSTART + 5, RLENGTH - 5) " registers"; k = "" }')
    { echo "// Generated from $(basename "$cu") by stimuli/regen_ptx.sh: $cmd"
      echo "// $($NVCC --version | tail -n 1)"
      [[ -z $regs ]] || echo "$regs"
      cat "$base.ptx.tmp"; } > "$base.ptx"
    rm -f "$base.ptx.tmp"
    echo "regen_ptx.sh: $base.ptx"
  done
done
