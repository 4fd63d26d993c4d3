#!/bin/sh
# A sweep over a CUDA program ({exec: [PROGRAM, ARGS]}) at two SM counts: both points run and
# pass, and the SM count changes their cycles (the points are the program's runs, not copies).
#   cuda_sweep.sh GPUSC PROGRAM ARG   (a program of many CTAs: the catalog's vecadd, small)
set -eu
gpusc=$1 prog=$2 arg=$3
if [ ! -x "$prog" ]; then
  echo "skipped: $prog was not built: nvcc was not found when gpusc was configured"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/cuda.yaml" <<SPEC
name: cuda
platform: gtx480
kernels:
  - {exec: [$prog, $arg]}
axes:
  grid:
    gpu.num_sms: [4, 15]
SPEC
"$gpusc" sweep "$tmp/cuda.yaml" --out "$tmp/out" --jobs 2 --quiet
"$gpusc" results "$tmp/cuda.yaml" --out "$tmp/out" --json -o "$tmp/rows.json"
python3 - "$tmp/rows.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
assert len(rows) == 2, rows
assert all(r["status"] == "ok" for r in rows), [(r["label"], r["status"]) for r in rows]
cycles = {r["axes"]["gpu.num_sms"]: r["cycles"] for r in rows}
print("cycles by gpu.num_sms:", cycles)
assert cycles[4] > cycles[15] > 0, cycles
PY
