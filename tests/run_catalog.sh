#!/usr/bin/env bash
# Runs every catalog kernel at size tiny in functional and in timing mode, JOBS runs at a time;
# each must pass its check (exit code 0). Used under the sanitizers by ./build.sh sanitize.
#   tests/run_catalog.sh GPUSC_BINARY OUT_DIR [JOBS]
set -euo pipefail
exe=$1
out=$2
jobs=${3:-$(nproc)}
mkdir -p "$out"
kernels=$("$exe" list kernels | awk '{print $1}')
start=$SECONDS
failed=0
for k in $kernels; do
  for mode in functional timing; do echo "$k $mode"; done
done | xargs -P "$jobs" -L 1 sh -c '
  exe=$0 out=$1 k=$2 mode=$3
  if "$exe" run --kernel "$k" --mode "$mode" --size tiny --out "$out/$k-$mode" >"$out/$k-$mode.log" 2>&1; then
    echo "catalog: $k $mode ok"
  else
    echo "catalog: $k $mode FAILED (exit $?):"; tail -20 "$out/$k-$mode.log"; exit 1
  fi' "$exe" "$out" || failed=1
echo "catalog: $(echo "$kernels" | wc -w) kernels x 2 modes in $((SECONDS - start)) s"
exit $failed
