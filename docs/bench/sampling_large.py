#!/usr/bin/env python3
"""Sampled runs of the catalog's large sizes against their full-detail runs.

The full-detail runs take about 37 minutes (`gpusc bench --mode timing --size large --repeat 1
--threads 1 --sample kernel+wave` gives their cycles and seconds); this script takes them from
an earlier result (--full, e.g. docs/bench/sampling-large.json) unless --run-full is given, runs
each kernel sampled with `gpusc run`, and writes the comparison as JSON. `--threads N` runs
both on N host threads (the timing model's SMs and the functional engine's blocks).

    docs/bench/sampling_large.py build/gpusc --full docs/bench/sampling-large.json \
        --json docs/bench/sampling-large.json
    docs/bench/sampling_large.py build/gpusc --run-full --threads 2 -k sgemm -k hotspot \
        -k srad --json docs/bench/sampling-large-threads2.json
    docs/bench/sampling_large.py build/gpusc --run-full -k gaussian -k bfs -k kmeans \
        --set sampling.borrow_pct=25 --json docs/bench/sampling-large-borrow.json
"""
import argparse
import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path

KERNELS = ["bfs", "gaussian", "hotspot", "kmeans", "sgemm", "srad"]
SAMPLED = ("{gpusc} run --kernel KERNEL --size large --mode timing --threads {threads} "
           "--sample kernel+wave")


def run(gpusc, kernel, sample, out, threads, sets=()):
    cmd = [gpusc, "run", "--kernel", kernel, "--size", "large", "--mode", "timing", "--threads",
           str(threads), "-q", "--out", str(out), "--force"]
    if sample:
        cmd += ["--sample", "kernel+wave"]
        for s in sets:
            cmd += ["--set", s]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    stats = json.loads((out / "stats.json").read_text())
    seconds = sum(l.get("host_seconds", 0.0) for l in stats["launches"])
    cycles = stats["run"]["cycles"]
    return stats, cycles, seconds


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("gpusc")
    ap.add_argument("--full", help="earlier JSON holding full_cycles and full_seconds")
    ap.add_argument("--run-full", action="store_true", help="run full detail too (slow)")
    ap.add_argument("--json", required=True)
    ap.add_argument("-k", "--kernel", action="append", help="kernels (default: the six)")
    ap.add_argument("--threads", type=int, default=1, help="host threads of every run")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="a platform key for the sampled runs (e.g. sampling.borrow_pct=25)")
    a = ap.parse_args()
    if not a.full and not a.run_full:
        sys.exit("give --full FILE or --run-full")
    earlier = {}
    if a.full:
        earlier = {k["kernel"]: k for k in json.loads(Path(a.full).read_text())["kernels"]}
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for kernel in a.kernel or KERNELS:
            if a.run_full:
                fstats, fcycles, fseconds = run(a.gpusc, kernel, False, Path(tmp) / "full", a.threads)
                insts = fstats["run"]["warp_instructions"]
            else:
                e = earlier[kernel]
                fcycles, fseconds, insts = e["full_cycles"], e["full_seconds"], e["warp_instructions"]
            stats, cycles, seconds = run(a.gpusc, kernel, True, Path(tmp) / "sampled", a.threads,
                                         a.set)
            s = stats["run"]["sampling"]
            err = 100.0 * (cycles / fcycles - 1.0)
            rows.append({
                "kernel": kernel, "warp_instructions": insts,
                "full_cycles": fcycles, "full_seconds": fseconds,
                "sampled_cycles": cycles, "sampled_seconds": seconds,
                # of which the functional engine's (its fast-forward and trial runs)
                "sampled_functional_seconds": stats["simulation"].get("functional_seconds"),
                "cycle_error_pct": err, "speedup": fseconds / seconds,
                "cycles_bound_pct": s.get("cycles_bound_pct", 0.0),
                "bound_covers": abs(err) <= s.get("cycles_bound_pct", 0.0),
                "sampling": s,
            })
            print(f"{kernel}: {err:+.2f} % (bound {s.get('cycles_bound_pct', 0.0):.2f} %), "
                  f"{fseconds / seconds:.1f}x", flush=True)
    errs = [abs(r["cycle_error_pct"]) for r in rows]
    speed = [r["speedup"] for r in rows]
    out = {
        "benchmark": "sampling-large",
        "platform": "gtx480",
        "size": "large",
        "host_threads": a.threads,
        "full_command": (f"build/gpusc run --kernel KERNEL --size large --mode timing --threads "
                         f"{a.threads} (stats.json: run cycles, launches host_seconds)")
        if a.run_full else "build/gpusc bench --mode timing --size large --repeat 1 --threads 1 "
                           "--sample kernel+wave (its full runs: cycles, seconds)",
        "sampled_command": SAMPLED.format(gpusc="build/gpusc", threads=a.threads) +
                           "".join(f" --set {x}" for x in a.set) +
                           " (stats.json: run cycles and sampling, launches host_seconds)",
        "kernels": rows,
        "summary": {
            "kernels": len(rows),
            "cycle_error_pct_geomean": math.exp(sum(math.log(max(e, 1e-9)) for e in errs) / len(errs)),
            "cycle_error_pct_max": max(errs),
            "bound_covers": sum(r["bound_covers"] for r in rows),
            "speedup_geomean": math.exp(sum(math.log(x) for x in speed) / len(speed)),
            "speedup_min": min(speed),
            "speedup_max": max(speed),
        },
    }
    Path(a.json).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
