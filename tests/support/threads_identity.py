#!/usr/bin/env python3
"""Host threads change nothing: every catalog kernel (or the ones named) run with --threads 1 and
with --threads N on one platform and size writes the same files, byte for byte: stats.json (but
for its host facts: the "simulation" section and each launch's host seconds), every CSV, the summary (but for its
host-time lines) and, with --vcd, the voltage trace (but for the time its header was written).

The runs with THREADS use --thread-policy fixed, so that the threads take part in every cycle
they can (the adaptive policy may leave them out), unless --adaptive is given.

Used by the cli.threads_identity_* tests.
  threads_identity.py GPUSC WORKDIR PLATFORM SIZE THREADS [--vcd] [--adaptive] [KERNEL...]
"""
import json
import os
import re
import sys

from cli_check import fail, fresh_workdir, runner

exe, work, platform, size, threads = sys.argv[1:6]
rest = sys.argv[6:]
vcd = "--vcd" in rest
policy = "adaptive" if "--adaptive" in rest else "fixed"
kernels = [k for k in rest if k not in ("--vcd", "--adaptive")]
fresh_workdir(work)
run = runner(exe)
if not kernels:
    kernels = [line.split()[0] for line in run("list", "kernels").stdout.splitlines() if line.strip()]


def host_lines(text):
    # Lines that report host time or speed (they differ between any two runs).
    return [l for l in text.splitlines() if "host" not in l and "/s" not in l and " s)" not in l]


def without_date(vcd):
    # A VCD's header carries the wall-clock time it was written ($date ... $end).
    return re.sub(r"\$date.*?\$end", "", vcd, count=1, flags=re.S)


def compare(a, b, what):
    names = sorted(os.listdir(a))
    if names != sorted(os.listdir(b)):
        fail(f"{what}: different files: {names} vs {sorted(os.listdir(b))}")
    for n in names:
        pa, pb = os.path.join(a, n), os.path.join(b, n)
        if n == "stats.json":
            ja, jb = json.load(open(pa)), json.load(open(pb))
            sa, sb = ja.pop("simulation"), jb.pop("simulation")
            for launch in ja.get("launches", []) + jb.get("launches", []):
                launch.pop("host_seconds", None)
            if sb.get("host_threads") != int(threads) and "serial_because" not in sb:
                fail(f"{what}: the run with --threads {threads} reports {sb}")
            if sb.get("thread_policy") != policy:
                fail(f"{what}: the run with --thread-policy {policy} reports {sb}")
            if ja != jb:
                keys = [k for k in ja if ja.get(k) != jb.get(k)]
                fail(f"{what}: stats.json differs in {keys}")
        elif n == "summary.txt":
            if host_lines(open(pa).read()) != host_lines(open(pb).read()):
                fail(f"{what}: summary.txt differs")
        elif n.endswith(".vcd"):
            if without_date(open(pa).read()) != without_date(open(pb).read()):
                fail(f"{what}: {n} differs")
        elif n in ("config.yaml",) or n.endswith((".csv", ".log")):
            if open(pa, "rb").read() != open(pb, "rb").read():
                fail(f"{what}: {n} differs")


if policy == "adaptive":
    # A policy that does not exist is a clear error, before anything runs.
    for cmd in (["run", "--kernel", "vecadd"], ["bench", "-k", "vecadd", "--json", "b.json"]):
        p = run(*cmd, "--thread-policy", "adaptiv", rc=2)
        if "--thread-policy adaptiv: expected adaptive or fixed (did you mean 'adaptive'?)" not in p.stderr:
            fail(f"gpusc {' '.join(cmd)} --thread-policy adaptiv says: {p.stderr}")

checked = 0
for k in kernels:
    args = ["run", "--kernel", k, "--size", size, "--platform", platform, "-q", "--force"]
    if vcd:
        args.append("--vcd")
    # The same relative folder (the configuration names the VCD's path), in two places.
    for t in ("1", threads):
        os.makedirs(f"threads{t}", exist_ok=True)
        os.chdir(f"threads{t}")
        policy_args = [] if t == "1" else ["--thread-policy", policy]
        run(*args, "--threads", t, *policy_args, "--out", k)
        os.chdir("..")
    compare(f"threads1/{k}", f"threads{threads}/{k}", f"{k} {size} on {platform}")
    checked += 1
print(f"{checked} kernels at {size} on {platform}: --threads {threads} ({policy}) equals --threads 1")
