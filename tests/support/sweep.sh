#!/usr/bin/env bash
# The sweep engine end to end (docs/sweeps.md). Used by the cli.sweep_* tests.
#   sweep.sh GPUSC WORKDIR DATA CASE
# CASE:
#   kill_resume    SIGKILL of the sweep mid-way: its children stop, nothing finished is lost, and
#                  the next `gpusc sweep` runs only the points not done
#   kill_point     SIGKILL of one point's run: the point is interrupted, the others finish, and
#                  the next `gpusc sweep` runs it again
#   interrupt      SIGTERM to the sweep: running points stop cleanly (exit 6) and are marked
#                  interrupted, the sweep exits 6, no half-written row
#   failed_points  a faulting kernel and a run limit: status failed with exit code and first
#                  error line, not run again unless --retry-failed
set -u
exe=$1 work=$2 data=$3 case=$4
fail() {
  echo "FAIL: $*"
  for f in "$work"/*.txt; do
    [[ -f $f ]] && echo "--- $f ---" && cat "$f"
  done
  exit 1
}
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1

# status SPEC: "N ok, N failed, N interrupted, N running, N pending"
status() { "$exe" sweep status "$1" --out out | sed 's/^[^:]*: [0-9]* points: //; s/ (.*//'; }
# expect_status "N ok, N failed, N interrupted, N running, N pending" WHEN: the counts of spec.yaml
expect_status() {
  [[ $(status spec.yaml) == "$1" ]] || fail "$2: $(status spec.yaml), expected $1"
}
# count STATUS SPEC
count() { status "$2" | tr ',' '\n' | sed -n "s/^ *\([0-9]*\) $1\$/\1/p"; }
# wait_for STATUS N SPEC [SECONDS]: until at least N points have STATUS
wait_for() {
  local t=0
  while (($(count "$1" "$3") < $2)); do
    sleep 0.1
    t=$((t + 1))
    ((t < ${4:-300})) || fail "timed out waiting for $2 $1 points: $(status "$3")"
  done
}
# The points' runs still alive (their command lines name this test's folder).
live_runs() { pgrep -f -- "--out $work/out/points/" || true; }

case $case in
  kill_resume)
    cat >spec.yaml <<EOF
name: kill-resume
kernels: [{kernel: vecadd, sizes: [small]}]
axes: {grid: {sm.l1d.replacement_seed: {from: 1, to: 8, step: 1}}}
EOF
    "$exe" sweep spec.yaml --out "$work/out" --jobs 2 -q >first.txt 2>&1 &
    pid=$!
    wait_for ok 2 spec.yaml
    kill -KILL $pid
    wait $pid 2>/dev/null
    sleep 1
    [[ -z $(live_runs) ]] || fail "runs still alive after the sweep was killed: $(live_runs)"
    done_before=$(count ok spec.yaml)
    "$exe" results spec.yaml --out out --csv -o before.csv || fail "results failed"
    "$exe" sweep spec.yaml --out out --jobs 2 >second.txt 2>&1 || fail "resumed sweep failed"
    grep -q "8 points, $((8 - done_before)) to run ($done_before ok and 0 failed before)" \
      second.txt || fail "the resumed sweep did not skip the $done_before finished points"
    expect_status "8 ok, 0 failed, 0 interrupted, 0 running, 0 pending" "after resuming"
    # The rows finished before the kill are unchanged (same host time and finish time).
    "$exe" results spec.yaml --out out --csv -o after.csv || fail "results failed"
    n=0
    while IFS= read -r row; do
      grep -qxF "$row" after.csv || fail "row changed by the resumed sweep: $row"
      n=$((n + 1))
    done < <(grep ',ok,' before.csv)
    ((n == done_before)) || fail "$n ok rows before, expected $done_before"
    echo "PASS: $done_before points survived the SIGKILL; the resumed sweep ran the other $((8 - done_before))"
    ;;
  kill_point)
    cat >spec.yaml <<EOF
name: kill-point
kernels: [{kernel: vecadd, sizes: [default]}, {kernel: sgemm, sizes: [tiny]}]
EOF
    "$exe" sweep spec.yaml --out "$work/out" --jobs 2 -q >first.txt 2>&1 &
    pid=$!
    # The vecadd point's run (a few seconds long), killed mid-run.
    t=0
    while ! run=$(pgrep -f -- "--out $work/out/points/.*--kernel vecadd"); do
      sleep 0.05
      t=$((t + 1))
      ((t < 600)) || fail "the vecadd point never started"
    done
    sleep 0.5
    kill -KILL "$run"
    wait $pid
    rc=$?
    ((rc == 1)) || fail "sweep exit code $rc, expected 1 (a point did not finish)"
    expect_status "1 ok, 0 failed, 1 interrupted, 0 running, 0 pending" "after the kill"
    "$exe" results spec.yaml --out out --csv | grep -q "vecadd@default/base,[^,]*,vecadd,.*,interrupted,137,killed by signal 9," ||
      fail "the killed point's row: $("$exe" results spec.yaml --out out --csv)"
    "$exe" sweep spec.yaml --out out -q >second.txt 2>&1 || fail "resumed sweep failed"
    expect_status "2 ok, 0 failed, 0 interrupted, 0 running, 0 pending" "after resuming"
    echo "PASS: the killed point was marked interrupted and ran again on resume"
    ;;
  interrupt)
    cat >spec.yaml <<EOF
name: interrupt
kernels: [{launch: $data/runaway.yaml}]
mode: functional
limits: {timeout_seconds: 60}
axes: {grid: {gpu.num_sms: [4, 8, 15]}}
EOF
    "$exe" sweep spec.yaml --out "$work/out" --jobs 2 >first.txt 2>&1 &
    pid=$!
    wait_for running 2 spec.yaml
    sleep 0.5
    kill -TERM $pid
    wait $pid
    rc=$?
    ((rc == 6)) || fail "sweep exit code $rc, expected 6"
    grep -q "interrupted; stopping 2 running points" first.txt || fail "no interrupt message"
    expect_status "0 ok, 0 failed, 2 interrupted, 0 running, 1 pending" "after SIGTERM"
    [[ -z $(live_runs) ]] || fail "runs still alive: $(live_runs)"
    "$exe" results spec.yaml --out out --json -o rows.json || fail "results failed"
    python3 - <<'EOF' || fail "interrupted rows"
import json, os
rows = [r for r in json.load(open("rows.json")) if r["status"] == "interrupted"]
assert len(rows) == 2, rows
for r in rows:
    assert r["exit_code"] == 6 and r["complete"] == 0, r
    stats = json.load(open(os.path.join("out", r["stats_path"])))
    assert stats["complete"] is False and stats["stopped_by"] == "interrupted", stats["stopped_by"]
    assert r["warp_instructions"] == stats["run"]["warp_instructions"] > 0, r
EOF
    if find out -name '*.tmp-*' | grep -q .; then fail "temporary files left"; fi
    echo "PASS: SIGTERM stopped the sweep; its 2 running points are interrupted with their partial results"
    ;;
  failed_points)
    cat >spec.yaml <<EOF
name: failed
kernels:
  - {launch: $data/misaligned.yaml}
  - {launch: $data/runaway.yaml}
  - {kernel: sgemm, sizes: [tiny]}
limits: {max_warp_instructions: 20000}
EOF
    "$exe" sweep spec.yaml --out out -q >first.txt 2>&1
    rc=$?
    ((rc == 1)) || fail "sweep exit code $rc, expected 1"
    expect_status "1 ok, 2 failed, 0 interrupted, 0 running, 0 pending" "after the sweep"
    "$exe" results spec.yaml --out out --csv -o rows.csv || fail "results failed"
    grep -q '^failed,misaligned/base,[^,]*,misaligned,,[^,]*,base,gtx480,timing,failed,3,"\?gpusc: kernel fault: misaligned 4-byte read access' rows.csv ||
      fail "the faulting point's row: $(cat rows.csv)"
    grep -q '^failed,runaway/base,[^,]*,runaway,,[^,]*,base,gtx480,timing,failed,5,"\?gpusc: run stopped at the instruction limit' rows.csv ||
      fail "the run-limit point's row: $(cat rows.csv)"
    "$exe" sweep spec.yaml --out out >second.txt 2>&1
    grep -q "3 points, 0 to run (1 ok and 2 failed before)" second.txt || fail "failed points ran again"
    "$exe" sweep spec.yaml --out out --retry-failed >third.txt 2>&1
    grep -q "3 points, 2 to run (1 ok and 0 failed before)" third.txt ||
      fail "--retry-failed did not run the failed points"
    expect_status "1 ok, 2 failed, 0 interrupted, 0 running, 0 pending" "after --retry-failed"
    echo "PASS: failed points recorded with exit code and error line, run again only with --retry-failed"
    ;;
  results)
    cat >spec.yaml <<EOF
name: results
kernels: [{kernel: vecadd, sizes: [tiny]}]
variants:
  - name: base
  - name: same-as-base
    set: {sm.l1d.enabled: yes}
  - name: packed
    set: {gpu.cta_placement: packed}
axes:
  zip:
    gpu.num_sms: [4, 8]
    sm.l1d.sets: [16, 64]
EOF
    "$exe" sweep spec.yaml --out out -q >first.txt 2>&1 || fail "sweep failed"
    "$exe" results spec.yaml --out out --csv -o rows.csv || fail "results --csv failed"
    "$exe" results spec.yaml --out out --json >rows.json || fail "results --json failed"
    python3 - <<'EOF' || fail "the exported table"
import csv, json, os
rows = json.load(open("rows.json"))
table = list(csv.DictReader(open("rows.csv")))
assert len(rows) == len(table) == 6, (len(rows), len(table))
runs = set()
for r, c in zip(rows, table):
    assert r["status"] == c["status"] == "ok", r
    stats = json.load(open(os.path.join("out", r["stats_path"])))
    config = open(os.path.join("out", os.path.dirname(r["stats_path"]), "config.yaml")).read()
    run = stats["run"]
    # The axes: columns of the CSV, values of the run's configuration.
    assert c["gpu.num_sms"] == str(r["axes"]["gpu.num_sms"]), c
    assert c["sm.l1d.sets"] == str(r["axes"]["sm.l1d.sets"]), c
    assert stats["config"]["gpu"]["num_sms"] == r["axes"]["gpu.num_sms"], r
    assert stats["config"]["sm"]["l1d"]["sets"] == r["axes"]["sm.l1d.sets"], r
    assert ("cta_placement: packed" in config) == (r["variant"] == "packed"), r["variant"]
    # The metrics: the run's totals.
    assert r["cycles"] == run["cycles"] == int(c["cycles"]), r
    assert r["warp_instructions"] == run["warp_instructions"], r
    assert r["ipc"] == run["ipc"] and r["energy_j"] == run["energy"]["total_j"], r
    assert r["energy_by_block_j"] == run["energy"]["by_block_j"], r
    assert float(c["energy_by_block_j.dram"]) == run["energy"]["by_block_j"]["dram"], c
    assert r["worst_droop_pct"] == run["voltage"]["worst_droop_pct"], r
    l1 = [l["timing"]["memory"]["l1d"]["totals"] for l in stats["launches"]]
    rate = sum(t["hits"] for t in l1) / sum(t["accesses"] for t in l1)
    assert abs(r["l1d_hit_rate"] - rate) < 1e-12, r
    runs.add(r["stats_path"])
# base and same-as-base resolve to one configuration: one run, two rows, one hash.
same = {(r["axes"]["gpu.num_sms"], r["hash"]) for r in rows if r["variant"] != "packed"}
assert len(same) == 2, same
assert len(runs) == 4, runs
EOF
    echo "PASS: the exported rows match each point's stats.json and configuration"
    ;;
  *)
    fail "unknown case $case"
    ;;
esac
