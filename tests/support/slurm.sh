#!/usr/bin/env bash
# A real single-node Slurm cluster (munged, slurmctld, slurmd from Debian's munge and slurm-wlm
# packages) started in a temporary folder, a small sweep submitted to it as a job array with
# `gpusc sweep --backend slurm`, and its rows checked against the same sweep run by the local
# backend. Used by the cli.sweep_slurm test.
#   slurm.sh GPUSC WORKDIR
# Exit 77 (the test is skipped) only when the daemons are not installed or cannot start.
set -u
exe=$1 work=$2
skip() {
  echo "SKIP: $*"
  exit 77
}
fail() {
  echo "FAIL: $*"
  for f in "$work"/*.txt "$work"/cluster/log/*.log; do
    [[ -f $f ]] && echo "--- $f ---" && tail -n 30 "$f"
  done
  exit 1
}
for d in munged slurmctld slurmd sbatch squeue sinfo; do
  command -v "$d" >/dev/null || skip "$d is not installed (Debian packages munge, slurmctld, slurmd, slurm-client; ./setup.sh installs them)"
done
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
c=$work/cluster
mkdir -p "$c/state" "$c/spool" "$c/log" "$c/munge"
chmod 700 "$c/munge"
pids=()
cleanup() {
  # Only the daemons this script started, by their process ids.
  for f in "$c/slurmd.pid" "$c/slurmctld.pid" "$c/munge/munged.pid"; do
    [[ -f $f ]] && kill "$(cat "$f")" 2>/dev/null
  done
  return 0
}
trap cleanup EXIT

# munge: a key of our own and a socket in the folder.
head -c 1024 /dev/urandom >"$c/munge/munge.key"
chmod 400 "$c/munge/munge.key"
munged --force --socket="$c/munge/munge.sock" --key-file="$c/munge/munge.key" \
  --pid-file="$c/munge/munged.pid" --log-file="$c/log/munged.log" \
  --seed-file="$c/munge/munged.seed" || skip "munged does not start: $(tail -n 3 "$c/log/munged.log")"

port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
node=$(hostname -s)
user=$(id -un)
cat >"$c/slurm.conf" <<EOF
ClusterName=gpusctest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$(port)
SlurmdPort=$(port)
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$c/munge/munge.sock
SlurmUser=$user
SlurmdUser=$user
StateSaveLocation=$c/state
SlurmdSpoolDir=$c/spool
SlurmctldPidFile=$c/slurmctld.pid
SlurmdPidFile=$c/slurmd.pid
SlurmctldLogFile=$c/log/slurmctld.log
SlurmdLogFile=$c/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
NodeName=$node NodeAddr=127.0.0.1 CPUs=2 RealMemory=1024 State=UNKNOWN
PartitionName=gpusc Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$c/slurm.conf
slurmctld -f "$c/slurm.conf" || skip "slurmctld does not start: $(tail -n 3 "$c/log/slurmctld.log")"
slurmd -f "$c/slurm.conf" -N "$node" || skip "slurmd does not start: $(tail -n 3 "$c/log/slurmd.log")"
t=0
until sinfo -h -o %t 2>/dev/null | grep -q idle; do
  sleep 0.2
  t=$((t + 1))
  ((t < 150)) || skip "the node never became idle: $(sinfo 2>&1 | tail -n 2); $(tail -n 3 "$c/log/slurmd.log")"
done

cat >spec.yaml <<EOF
name: slurm
kernels: [{kernel: vecadd, sizes: [tiny]}, {kernel: sgemm, sizes: [tiny]}]
variants:
  - name: base
  - name: packed
    set: {gpu.cta_placement: packed}
axes: {grid: {gpu.num_sms: [4, 8]}}
EOF
"$exe" sweep spec.yaml --out local -q --jobs 2 >local.txt 2>&1 || fail "the local sweep failed"
"$exe" sweep spec.yaml --out cluster-run --backend slurm --tasks 3 --array-throttle 2 \
  --partition gpusc --time 10 --mem 256M >submit.txt 2>&1 || fail "submitting failed"
grep -q "submitted Slurm job [0-9]*: 8 points in 3 array tasks" submit.txt || fail "$(cat submit.txt)"
t=0
while [[ -n $(squeue -h 2>/dev/null) ]]; do
  sleep 0.5
  t=$((t + 1))
  ((t < 240)) || fail "the job array did not finish: $(squeue)"
done
"$exe" sweep status spec.yaml --out cluster-run >status.txt 2>&1 || fail "status failed"
grep -q "8 points: 8 ok, 0 failed, 0 interrupted, 0 running, 0 pending" status.txt || fail "$(cat status.txt)"
grep -q "Slurm job [0-9]*: no task in the queue" status.txt || fail "$(cat status.txt)"
[[ -z $(ls cluster-run/slurm/shards) ]] || fail "shards left after merging: $(ls cluster-run/slurm/shards)"
"$exe" results spec.yaml --out local --json -o local.json || fail "results failed"
"$exe" results spec.yaml --out cluster-run --json -o cluster.json || fail "results failed"
python3 - <<'EOF' || fail "the cluster's rows differ from the local backend's"
import json
local, cluster = json.load(open("local.json")), json.load(open("cluster.json"))
assert len(local) == len(cluster) == 8
# Row by row: the same point, configuration and results; only where and when it ran differ.
skip = {"host_seconds", "finished_at"}
for a, b in zip(local, cluster):
    for k in a:
        if k not in skip:
            assert a[k] == b[k], (a["label"], k, a[k], b[k])
EOF
# A second submission finds nothing to run.
"$exe" sweep spec.yaml --out cluster-run --backend slurm >again.txt 2>&1 || fail "resubmitting failed"
grep -q "nothing to run" again.txt || fail "$(cat again.txt)"
echo "PASS: the Slurm job array's 8 rows match the local backend's"
