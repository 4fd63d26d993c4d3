#!/usr/bin/env bash
# Runs gpusc in every way that writes stats.json (both modes, a catalog kernel and a launch
# spec, a mesh platform, power and PDN off, a run stopped by a limit) and validates each file
# against docs/stats.schema.json. Used by the docs.stats_schema test.
#   stats_schema.sh GPUSC SOURCE_DIR WORKDIR
set -euo pipefail
exe=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work"
run() {
  local out=$1 rc_ok=$2
  shift 2
  local rc=0
  "$exe" run -q --out "$out" "$@" || rc=$?
  if [[ $rc != "$rc_ok" ]]; then
    echo "gpusc run $* exited with $rc, expected $rc_ok"
    exit 1
  fi
}
run timing 0 --kernel vecadd --size tiny
run functional 0 --kernel vecadd --size tiny --mode functional
run mesh 0 --kernel bfs --size tiny --platform stream-4x4
run nopower 0 --kernel vecadd --size tiny --set pdn.enabled=false --set power.enabled=false
run spec 0 --launch "$src/stimuli/launch/stream_read/stream_read.yaml" --set gpu.num_sms=30
run stopped 5 --launch "$src/tests/data/runaway.yaml" --max-instructions 20000
run summary 0 --kernel bfs --size tiny --stats summary
run summary_functional 0 --kernel bfs --size tiny --mode functional --stats summary
run full_many 0 --kernel gaussian --size tiny --stats full --set pdn.enabled=false
run sampled 0 --kernel gaussian --size tiny --stats full --sample kernel
run sampled_summary 0 --kernel gaussian --size tiny --stats summary --sample kernel
run sampled_borrowed 0 --kernel gaussian --size tiny --stats full --sample kernel \
  --set sampling.borrow_pct=50
# Waves sampled (two SMs: many waves at small size) together with launches.
run sampled_waves 0 --kernel transpose_padded --size small --set gpu.num_sms=2 --sample kernel+wave
# A CUDA program (built where nvcc was found): its kernel fault is in the workload section.
programs=$(dirname "$exe")/programs
if [[ -x $programs/kernel_fault ]]; then
  "$exe" exec -q --out exec -- "$programs/kernel_fault" 2>/dev/null
fi
python=/usr/bin/python3
[[ -x $python ]] || python=python3
"$python" "$src/tests/support/validate_stats.py" "$src/docs/stats.schema.json" */stats.json
