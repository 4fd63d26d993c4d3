#!/usr/bin/env bash
# Runs every fuzz target of a GPUSC_FUZZ build for SECONDS each, JOBS targets at a time.
#   tests/fuzz/run_fuzzers.sh BUILD_DIR SECONDS [JOBS]
# Each target's corpus (BUILD_DIR/fuzz/corpus/<target>/) starts from its committed seeds and
# keeps what libFuzzer adds, so later runs continue from it. A finding's input is written to
# BUILD_DIR/fuzz/findings/ and the script exits non-zero; add it to tests/fuzz/regressions/<target>/.
set -euo pipefail
build=$1
seconds=$2
jobs=${3:-$(nproc)}
src=$(cd "$(dirname "$0")" && pwd)
out="$build/fuzz"
rm -rf "$out/findings"  # inputs of earlier runs: fixed ones live in tests/fuzz/regressions
mkdir -p "$out/findings" "$out/logs"

run_one() {
  local t=$1 corpus="$out/corpus/$1"
  mkdir -p "$corpus"
  # Seeds under names that cannot clash (two catalog folders may hold files of the same name).
  while IFS= read -r f; do
    [[ -n $f ]] && cp -f "$f" "$corpus/seed-$(echo "$f" | md5sum | cut -c1-12)"
  done <"$build/tests/fuzz/$t.seeds"
  local dict=(-dict="$src/yaml.dict")
  [[ $t == ptx || $t == run ]] && dict=(-dict="$src/ptx.dict")
  "$build/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=3072 \
    -print_final_stats=1 -artifact_prefix="$out/findings/$t-" "${dict[@]}" "$corpus" \
    >"$out/logs/$t.log" 2>&1
}

targets=(ptx platform launch_spec run)
status=0
pids=()
for t in "${targets[@]}"; do
  run_one "$t" &
  pids+=($!)
  if ((${#pids[@]} >= jobs)); then
    wait "${pids[0]}" || status=1
    pids=("${pids[@]:1}")
  fi
done
for p in "${pids[@]}"; do wait "$p" || status=1; done

for t in "${targets[@]}"; do
  log="$out/logs/$t.log"
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 || true)
  echo "fuzz_$t: ${execs:-?} executions (${rate:-?}/s) in ${seconds}s, ${cov:-cov: ?}, corpus $(ls "$out/corpus/$t" | wc -l) inputs"
done
findings=$(ls "$out/findings" | wc -l)
if ((status != 0 || findings != 0)); then
  echo "fuzzing found $findings input(s) in $out/findings (logs: $out/logs)" >&2
  for t in "${targets[@]}"; do grep -m1 -A12 -E '^==[0-9]+==ERROR|runtime error|uncaught exception|deadly signal' "$out/logs/$t.log" >&2 || true; done
  exit 1
fi
