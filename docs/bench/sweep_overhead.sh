#!/usr/bin/env bash
# The sweep engine's cost per point beyond the runs themselves (docs/performance.md):
#   docs/bench/sweep_overhead.sh [GPUSC] [JOBS]
# Runs docs/bench/sweep200.yaml (200 tiny points) with `gpusc sweep --jobs JOBS`, then the same
# 200 `gpusc run` commands from a shell loop (JOBS at a time, with xargs), and prints the
# difference per point; then the cost of a resumed sweep with nothing left to run.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exe=$(realpath "${1:-build/gpusc}")
jobs=${2:-1}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
now() { date +%s.%N; }
t0=$(now)
"$exe" sweep "$here/sweep200.yaml" --out sweep --jobs "$jobs" -q
t1=$(now)
"$exe" sweep "$here/sweep200.yaml" --out sweep --dry-run | sed -n 's/^    gpusc run //p' >commands.txt
n=$(wc -l <commands.txt)
t2=$(now)
i=0
while read -r line; do
  i=$((i + 1))
  echo "--quiet --force --out loop/$i $line"
done <commands.txt | xargs -P "$jobs" -L 1 "$exe" run
t3=$(now)
"$exe" sweep "$here/sweep200.yaml" --out sweep --jobs "$jobs" -q
t4=$(now)
awk -v n="$n" -v s="$t0 $t1" -v l="$t2 $t3" -v r="$t3 $t4" -v j="$jobs" 'BEGIN {
  split(s, a, " "); s = a[2] - a[1]; split(l, a, " "); l = a[2] - a[1]; split(r, a, " "); r = a[2] - a[1]
  printf "%d points, %d jobs: sweep %.2f s, the same runs from a shell loop %.2f s\n", n, j, s, l
  printf "overhead: %.1f ms per point (%.1f ms per point of it planning and resuming: a sweep with nothing to run takes %.2f s)\n", 1000 * (s - l) / n, 1000 * r / n, r
}'
