#!/usr/bin/env python3
"""What running a catalog kernel as a CUDA program costs over running it as a catalog workload:
the wall-clock time of `gpusc exec -- build/programs/K SIZE` against `gpusc run --kernel K --size
SIZE`, the same launches (tests check they are identical, cycle for cycle). The difference is the
program's own process, its runtime library's requests to gpusc and the copies through them.

  docs/bench/exec_overhead.py build [--size small] [--mode timing] [--repeat 3] [--json FILE]
                              [KERNEL...]

The two commands run alternately, --repeat times each, on one host thread; the fastest of each
counts (this machine's background load only ever adds time). Writes JSON (default
docs/bench/exec-overhead.json) and prints a table.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

DEFAULT_KERNELS = ["vecadd", "sgemm", "bfs", "gaussian", "srad", "scan", "kmeans", "hotspot"]


def fastest(cmds, repeat):
    """The fastest wall-clock time of each command, run alternately."""
    best = [None] * len(cmds)
    for _ in range(repeat):
        for i, cmd in enumerate(cmds):
            t0 = time.perf_counter()
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            dt = time.perf_counter() - t0
            best[i] = dt if best[i] is None else min(best[i], dt)
    return best


def main():
    p = argparse.ArgumentParser()
    p.add_argument("build")
    p.add_argument("kernels", nargs="*")
    p.add_argument("--size", default="small")
    p.add_argument("--mode", default="timing")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--json", default=os.path.join(os.path.dirname(__file__), "exec-overhead.json"))
    a = p.parse_args()
    gpusc = os.path.join(a.build, "gpusc")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for k in a.kernels or DEFAULT_KERNELS:
            program = os.path.join(a.build, "programs", k)
            if not os.path.exists(program):
                sys.exit(f"{program}: not built (nvcc not found when configuring?)")
            common = ["-q", "--force", "--threads", "1", "--mode", a.mode]
            run, ex = fastest([[gpusc, "run", *common, "-o", f"{tmp}/run", "--kernel", k, "--size",
                                a.size],
                               [gpusc, "exec", *common, "-o", f"{tmp}/exec", "--", program,
                                a.size]], a.repeat)
            stats = json.load(open(f"{tmp}/exec/stats.json"))
            rows.append({"kernel": k, "launches": len(stats["launches"]), "run_seconds": run,
                         "exec_seconds": ex, "overhead_percent": 100 * (ex - run) / run})
            print(f"{k:<12} {rows[-1]['launches']:>4} launches  run {run:7.3f} s  exec {ex:7.3f} s"
                  f"  overhead {rows[-1]['overhead_percent']:+6.1f} %", flush=True)
    total_run = sum(r["run_seconds"] for r in rows)
    total_exec = sum(r["exec_seconds"] for r in rows)
    out = {"command": " ".join(["docs/bench/exec_overhead.py", *sys.argv[1:]]), "size": a.size,
           "mode": a.mode, "repeat": a.repeat, "kernels": rows,
           "total_run_seconds": total_run, "total_exec_seconds": total_exec,
           "total_overhead_percent": 100 * (total_exec - total_run) / total_run}
    with open(a.json, "w") as f:
        json.dump(out, f, indent=2)
        f.write("\n")
    print(f"total: run {total_run:.3f} s, exec {total_exec:.3f} s, "
          f"overhead {out['total_overhead_percent']:+.1f} % ({a.json})")


if __name__ == "__main__":
    main()
