#!/usr/bin/env bash
# A run never writes into an earlier run's results: the default folder gets a new name, a
# non-empty --out is refused without --force, and --force clears the files runs own (a
# functional run into a timing run's folder leaves no power or voltage files behind); a run
# refused after its folder was made (a launch spec's error) leaves no folder behind, and the
# status of a sweep that has not run creates none; an option's empty value is refused.
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
printf 'ptx: no_such.ptx\nbuffers: {}\nlaunches: []\n' >bad_spec.yaml
rc=0
"$exe" run --launch bad_spec.yaml --out new/deeper -q 2>refused_spec.txt || rc=$?
[[ $rc == 2 ]] || fail "a bad launch spec was not refused (exit $rc)"
[[ ! -e new ]] || fail "the refused run left its folder new/deeper behind"
rm -rf gpusc-results
"$exe" run --launch bad_spec.yaml -q 2>/dev/null && fail "a bad launch spec ran"
[[ ! -e gpusc-results ]] || fail "the refused run left gpusc-results behind"
# An empty value names nothing: refused, not taken for the option's absence (the default kernel).
for opt in --launch --kernel --out --vcd-sms --sample; do
  rc=0
  "$exe" run "$opt" "" --size tiny -q >empty.txt 2>&1 || rc=$?
  [[ $rc == 2 ]] && grep -q -- "$opt: an empty value" empty.txt || fail "run $opt '': $(cat empty.txt)"
done
[[ ! -e gpusc-results ]] || fail "a run refused for an empty value left gpusc-results behind"
printf 'name: s\nkernels: [{kernel: vecadd, sizes: [tiny]}]\naxes:\n  grid:\n    gpu.num_sms: [2, 4]\n' >sweep.yaml
"$exe" sweep status sweep.yaml --out never >status.txt 2>&1 || fail "sweep status: $(cat status.txt)"
grep -q "2 points: 0 ok, 0 failed, 0 interrupted, 0 running, 2 pending (not run yet" status.txt ||
  fail "sweep status: $(cat status.txt)"
"$exe" sweep sweep.yaml --out never --dry-run >dry.txt 2>&1 || fail "sweep --dry-run: $(cat dry.txt)"
[[ ! -e never ]] || fail "sweep status or --dry-run created the folder of a sweep not run"
# Another program's SQLite database is refused as a sweep's, and left as it was.
python3 -c "import sqlite3; c = sqlite3.connect('foreign.sqlite'); c.execute('create table t(x)'); c.commit()"
cp foreign.sqlite foreign.before
for cmd in "sweep sweep.yaml" "sweep status sweep.yaml" "results sweep.yaml --csv"; do
  mkdir -p foreign && cp foreign.before foreign/results.sqlite
  rc=0
  "$exe" $cmd --out foreign >foreign.txt 2>&1 || rc=$?
  [[ $rc == 2 ]] && grep -q "not a gpusc results database" foreign.txt ||
    fail "$cmd on a foreign database: $(cat foreign.txt)"
  cmp -s foreign.before foreign/results.sqlite || fail "$cmd changed a foreign database"
done
# "." and ".." are not a sweep's name (results/sweeps/.. is results/).
printf 'name: ..\nkernels: [{kernel: vecadd, sizes: [tiny]}]\naxes:\n  grid:\n    gpu.num_sms: [2]\n' >dots.yaml
rc=0
"$exe" sweep dots.yaml -q >dots.txt 2>&1 || rc=$?
[[ $rc == 2 ]] && grep -q "name: '..': use letters" dots.txt || fail "sweep named '..': $(cat dots.txt)"
[[ ! -e results ]] || fail "a sweep named '..' wrote results/"
# bench checks its --json file before it measures anything.
rc=0
"$exe" bench -k vecadd --size tiny --mode functional --json no_such_folder/b.json >bench.txt 2>&1 || rc=$?
[[ $rc == 2 ]] && grep -q -- "--json no_such_folder/b.json: cannot write there" bench.txt &&
  ! grep -q vecadd bench.txt || fail "bench --json into no folder: $(cat bench.txt)"
echo "PASS"
