#!/usr/bin/env python3
"""A catalog kernel's stand-alone CUDA program under `gpusc exec` against `gpusc run --kernel`:
the program must pass its own check, and every launch must be the same launch with the same
results (kernel, grid, block, registers, shared memory, instructions and, in timing mode, cycles).

  exec_vs_run.py GPUSC PROGRAM KERNEL [--size tiny] [--platform gtx480] [--mode timing]

Exit status 0 when identical, 1 when not (the differences printed), 77 when PROGRAM does not
exist because nvcc was not found at configure time.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def launch_facts(launch, mode):
    facts = {
        "kernel": launch["kernel"],
        "grid": launch["grid"],
        "block": launch["block"],
        "registers_per_thread": launch["registers_per_thread"],
        "dynamic_shared_bytes": launch["dynamic_shared_bytes"],
        "shared_bytes_per_cta": launch["shared_bytes_per_cta"],
        "warp_instructions": launch["stats"]["warp_instructions"],
        "thread_instructions": launch["stats"]["thread_instructions"],
    }
    if mode == "timing":
        facts["cycles"] = launch["timing"]["cycles"]
    return facts


def main():
    p = argparse.ArgumentParser()
    p.add_argument("gpusc")
    p.add_argument("program")
    p.add_argument("kernel")
    p.add_argument("--size", default="tiny")
    p.add_argument("--platform", default="gtx480")
    p.add_argument("--mode", default="timing")
    a = p.parse_args()
    if not os.path.exists(a.program):
        print(f"skipped: {a.program} was not built (nvcc was not found when gpusc was configured)")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        common = ["-q", "--platform", a.platform, "--mode", a.mode, "--stats", "full"]
        run = subprocess.run([a.gpusc, "run", *common, "--kernel", a.kernel, "--size", a.size,
                              "-o", f"{tmp}/run"], capture_output=True, text=True)
        if run.returncode != 0:
            print(f"gpusc run --kernel {a.kernel} failed ({run.returncode}):\n{run.stderr}")
            return 1
        ex = subprocess.run([a.gpusc, "exec", *common, "-o", f"{tmp}/exec", "--", a.program,
                             a.size], capture_output=True, text=True)
        print(ex.stdout, end="")
        if ex.returncode != 0 or "PASS" not in ex.stdout:
            print(f"gpusc exec {a.program} {a.size} exited {ex.returncode}:\n{ex.stderr}")
            return 1
        runs = json.load(open(f"{tmp}/run/stats.json"))
        execs = json.load(open(f"{tmp}/exec/stats.json"))
    r = [launch_facts(l, a.mode) for l in runs["launches"]]
    e = [launch_facts(l, a.mode) for l in execs["launches"]]
    differences = []
    if len(r) != len(e):
        differences.append(f"{len(e)} launches under exec, {len(r)} under run")
    for i, (x, y) in enumerate(zip(r, e)):
        for key in x:
            if x[key] != y[key]:
                differences.append(f"launch {i} ({x['kernel']}): {key} {y[key]} under exec, "
                                   f"{x[key]} under run")
    if differences:
        print("\n".join(differences))
        return 1
    total = sum(l.get("cycles", 0) for l in r)
    print(f"{a.kernel}: {len(r)} launches identical under exec and run"
          + (f", {total} cycles" if a.mode == "timing" else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
