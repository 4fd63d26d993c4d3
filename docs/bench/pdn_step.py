#!/usr/bin/env python3
"""The PDN's detail level (pdn.step_cycles): speed and droop error against every-cycle stepping.

Runs each kernel in timing mode on one host thread with pdn.step_cycles = 1 and each N given,
and writes per kernel and N: the host seconds of its launches, the worst droop (% of the
supply), the droop events above the monitor's first threshold and the emergencies (cycles and
events), with the differences from step_cycles 1.

    docs/bench/pdn_step.py build/gpusc --steps 2,4,8 --json docs/bench/pdn-step-gtx480.json
"""
import argparse
import json
import math
import subprocess
import tempfile
from pathlib import Path


def kernels(gpusc):
    out = subprocess.run([gpusc, "list", "kernels"], check=True, capture_output=True, text=True)
    names = []
    for line in out.stdout.splitlines():
        w = line.split()
        if w and not line.startswith(" ") and w[0].isidentifier():
            names.append(w[0])
    return names


def run(gpusc, platform, kernel, size, step, out):
    cmd = [gpusc, "run", "--platform", platform, "--kernel", kernel, "--size", size, "--mode",
           "timing", "--threads", "1", "-q", "--out", str(out), "--force", "--set",
           f"pdn.step_cycles={step}"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    s = json.loads((out / "stats.json").read_text())
    seconds = sum(l.get("host_seconds", 0.0) for l in s["launches"])
    events = emerg_cycles = emerg_events = 0
    for l in s["launches"]:
        v = (l.get("timing") or {}).get("voltage")
        if not v:
            continue
        events += v["thresholds"][0]["events"]
        emerg_cycles += v["emergencies"]["cycles"]
        emerg_events += v["emergencies"]["events"]
    v = s["run"]["voltage"]
    return {"seconds": seconds, "cycles": s["run"]["cycles"],
            "worst_droop_pct": v["worst_droop_pct"], "events_above_first_threshold": events,
            "emergency_cycles": emerg_cycles, "emergency_events": emerg_events}


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("gpusc")
    ap.add_argument("--platform", default="gtx480")
    ap.add_argument("--size", default="default")
    ap.add_argument("--steps", default="2,4,8")
    ap.add_argument("-k", "--kernel", action="append")
    ap.add_argument("--json", required=True)
    a = ap.parse_args()
    steps = [int(x) for x in a.steps.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for k in a.kernel or kernels(a.gpusc):
            row = {"kernel": k, "steps": {}}
            for n in [1] + steps:
                row["steps"][str(n)] = run(a.gpusc, a.platform, k, a.size, n, Path(tmp) / "o")
            ref = row["steps"]["1"]
            for n in steps:
                r = row["steps"][str(n)]
                r["speedup"] = ref["seconds"] / r["seconds"] if r["seconds"] else None
                r["worst_droop_error_pct"] = (100.0 * (r["worst_droop_pct"] / ref["worst_droop_pct"] - 1)
                                              if ref["worst_droop_pct"] else None)
                r["same_cycles"] = r["cycles"] == ref["cycles"]
            rows.append(row)
            print(k, " ".join(f"N={n}: {row['steps'][str(n)]['speedup']:.3f}x "
                              f"{row['steps'][str(n)]['worst_droop_error_pct']:+.1f} %"
                              for n in steps), flush=True)
    summary = {}
    for n in steps:
        rs = [r["steps"][str(n)] for r in rows]
        errs = [r["worst_droop_error_pct"] for r in rs if r["worst_droop_error_pct"] is not None]
        summary[str(n)] = {
            "speedup_geomean": geomean([r["speedup"] for r in rs]),
            "seconds_total": sum(r["seconds"] for r in rs),
            "worst_droop_error_pct_mean": sum(errs) / len(errs),
            "worst_droop_error_pct_min": min(errs),
            "worst_droop_error_pct_max": max(errs),
            "events_above_first_threshold": sum(r["events_above_first_threshold"] for r in rs),
            "emergency_cycles": sum(r["emergency_cycles"] for r in rs),
            "same_cycles": all(r["same_cycles"] for r in rs),
        }
    summary["1"] = {
        "seconds_total": sum(r["steps"]["1"]["seconds"] for r in rows),
        "events_above_first_threshold": sum(r["steps"]["1"]["events_above_first_threshold"] for r in rows),
        "emergency_cycles": sum(r["steps"]["1"]["emergency_cycles"] for r in rows),
    }
    out = {"benchmark": "pdn-step-cycles", "platform": a.platform, "size": a.size,
           "command": f"docs/bench/pdn_step.py build/gpusc --platform {a.platform} --size {a.size} "
                      f"--steps {a.steps}",
           "kernels": rows, "summary": summary}
    Path(a.json).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
