#!/usr/bin/env bash
# Runs every catalog kernel at size tiny in functional and in timing mode, and every shader
# benchmark's draw (the shader cluster's SystemC threads), JOBS runs at a time; each must pass its
# check (exit code 0). Used under the sanitizers by ./build.sh sanitize.
#   tests/run_catalog.sh GPUSC_BINARY OUT_DIR [JOBS]
set -euo pipefail
exe=$1
out=$2
jobs=${3:-$(nproc)}
mkdir -p "$out"
kernels=$("$exe" list kernels | awk '{print $1}')
shaders=$("$exe" list shaders | awk '{print $1}')
start=$SECONDS
failed=0
{
for k in $kernels; do
  for mode in functional timing; do echo "run $k $mode"; done
done
for s in $shaders; do echo "shader $s draw"; done
} | xargs -P "$jobs" -L 1 sh -c '
  exe=$0 out=$1 what=$2 k=$3 mode=$4
  if [ "$what" = run ]; then set -- run --kernel "$k" --mode "$mode" --size tiny
  else set -- shader run --shader "$k"; fi
  if "$exe" "$@" --out "$out/$k-$mode" >"$out/$k-$mode.log" 2>&1; then
    echo "catalog: $k $mode ok"
  else
    echo "catalog: $k $mode FAILED (exit $?):"; tail -20 "$out/$k-$mode.log"; exit 1
  fi' "$exe" "$out" || failed=1
echo "catalog: $(echo "$kernels" | wc -w) kernels x 2 modes and $(echo "$shaders" | wc -w) shader draws in $((SECONDS - start)) s"
exit $failed
