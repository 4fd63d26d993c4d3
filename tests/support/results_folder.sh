#!/usr/bin/env bash
# A run never writes into an earlier run's results: the default folder gets a new name, a
# non-empty --out is refused without --force, and --force clears the files runs own (a
# functional run into a timing run's folder leaves no power or voltage files behind).
# Used by the cli.results_folder test.   results_folder.sh GPUSC WORKDIR
set -u
exe=$1 work=$2
fail() {
  echo "FAIL: $*"
  exit 1
}
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
"$exe" run --kernel vecadd --size tiny --mode functional >one.txt 2>&1 || fail "first run: $(cat one.txt)"
"$exe" run --kernel vecadd --size tiny --mode functional >two.txt 2>&1 || fail "second run: $(cat two.txt)"
grep -q "results: gpusc-results/vecadd-gtx480/ " one.txt || fail "first run's folder: $(cat one.txt)"
grep -q "results: gpusc-results/vecadd-gtx480-2/ " two.txt || fail "second run's folder: $(cat two.txt)"

"$exe" run --kernel vecadd --size tiny --out out -q || fail "timing run into out"
[[ -f out/power.csv && -f out/voltage.csv ]] || fail "the timing run wrote no power.csv/voltage.csv"
echo "mine" >out/notes.txt
rc=0
"$exe" run --kernel vecadd --size tiny --mode functional --out out >refused.txt 2>&1 || rc=$?
[[ $rc == 2 ]] || fail "a non-empty --out was not refused (exit $rc)"
grep -q "gpusc: error: --out out: the folder is not empty" refused.txt || fail "$(cat refused.txt)"
"$exe" run --kernel vecadd --size tiny --mode functional --out out --force -q || fail "--force run"
for f in power.csv voltage.csv cta_timeline.csv droops.csv worst_droop.svg; do
  [[ ! -e out/$f ]] || fail "out/$f of the timing run is still there after the functional run"
done
grep -q '"mode": "functional"' out/stats.json || fail "stats.json is not the functional run's"
[[ $(cat out/notes.txt) == mine ]] || fail "--force removed a file gpusc does not own"
echo "PASS"
