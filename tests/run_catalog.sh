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
  if "$0" run --kernel "$1" --mode "$2" --size tiny --out "$3/$1-$2" >"$3/$1-$2.log" 2>&1; then
    echo "catalog: $1 $2 ok"
  else
    echo "catalog: $1 $2 FAILED (exit $?):"; tail -20 "$3/$1-$2.log"; exit 1
  fi' "$exe" "$out" || failed=1
echo "catalog: $(echo "$kernels" | wc -w) kernels x 2 modes in $((SECONDS - start)) s"
exit $failed
