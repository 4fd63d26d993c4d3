#!/usr/bin/env bash
# A seed experiment runs through the sweep engine: a second run of it finds every point in the
# sweep's database, runs none again (no point's stats.json is rewritten) and writes the same
# tables. With SPEC (the shipped spec file), the points first run as a plain `gpusc sweep` of it
# (at size tiny, on KERNEL) into the experiment's folder, and the experiment runs none of them.
# seed001's tables are also written a third time from a fresh work folder and must not change.
# Used by the cli.experiment_*_resume tests.
#   experiment_resume.sh GPUSC WORKDIR EXPERIMENT KERNEL [SPEC]
set -u
exe=$1 work=$2 name=$3 kernel=$4 spec=${5:-}
fail() {
  echo "FAIL: $*"
  exit 1
}
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
run() {  # run OUT: the experiment at size tiny on one kernel, tables into OUT
  "$exe" experiment "$name" --size tiny --kernel "$kernel" -j 2 --out "$1" --work work \
    >"$1.txt" 2>&1 || fail "$name into $1: $(cat "$1.txt")"
}
first=one.txt
if [[ -n $spec ]]; then
  sed -e 's/^sizes: .*/sizes: [tiny]/' -e "s/^kernels: .*/kernels: [$kernel]/" "$spec" >spec.yaml
  grep -q "^kernels: \[$kernel\]" spec.yaml || fail "cannot set the kernels of $spec"
  "$exe" sweep spec.yaml --jobs 2 --out "work/$name" >sweep.txt 2>&1 || fail "sweep: $(cat sweep.txt)"
  first=sweep.txt
else
  run one
fi
points=$(sed -n "s/^gpusc: sweep $name: \([0-9]*\) points, \1 to run (0 ok and 0 failed before).*/\1/p" $first)
[[ -n $points && $points -gt 0 ]] || fail "the first run did not run every point: $(cat $first)"
if [[ -n $spec ]]; then
  run one
  grep -q "^gpusc: sweep $name: $points points, 0 to run ($points ok and 0 failed before)" one.txt ||
    fail "the experiment ran points the sweep had run: $(cat one.txt)"
fi
[[ -f work/$name/results.sqlite ]] || fail "no sweep database in work/$name"
[[ $(find work/$name/points -name stats.json | wc -l) == "$points" ]] ||
  fail "expected $points points' stats.json in work/$name/points"
# Every pass's points (seed001 runs a second sweep, seed001-lowered, into work/ too).
stamps() { find work -path '*/points/*' -name stats.json -printf '%p %T@\n' | sort; }
stamps >before.txt
run two
grep -q "^gpusc: sweep $name: $points points, 0 to run ($points ok and 0 failed before)" two.txt ||
  fail "the second run ran points again: $(cat two.txt)"
! grep -q "^gpusc: sweep [^:]*: [0-9]* points, [1-9][0-9]* to run" two.txt ||
  fail "the second run ran points of another pass again: $(cat two.txt)"
stamps >after.txt
cmp -s before.txt after.txt || fail "the second run rewrote a point's stats.json"
for f in one/*; do
  cmp -s "$f" "two/${f#one/}" || fail "$f and two/${f#one/} differ"
done
# seed001: its tables (both columns of assumptions) come out byte for byte the same from the
# command again in a fresh work folder, every pass run anew.
if [[ $name == seed001 ]]; then
  "$exe" experiment "$name" --size tiny --kernel "$kernel" -j 2 --out three --work fresh \
    >three.txt 2>&1 || fail "$name into three: $(cat three.txt)"
  for f in one/*; do
    cmp -s "$f" "three/${f#one/}" || fail "$f and three/${f#one/} (a fresh work folder) differ"
  done
fi
[[ $(ls one | wc -l) -ge 2 ]] || fail "the experiment wrote $(ls one) (expected a CSV and a markdown table)"
echo "ok: $name: $points points run once, tables unchanged on the second run"
