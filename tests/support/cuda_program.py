#!/usr/bin/env python3
"""Runs a CUDA program built by nvcc under gpusc and checks what it did.

  cuda_program.py GPUSC PROGRAM [options] [-- ARGS...]

  --mode MODE            timing or functional (default timing)
  --expect REGEX         the program's stdout must match (default: a line starting PASS)
  --expect-stderr REGEX  stderr must match
  --exit N               gpusc's exit status (default 0: the program's own)
  --launches N           stats.json must hold N launches
  --kernels REGEX        every launch's kernel name in stats.json must match
  --failed-calls JSON    stats.json's workload.failed_calls must be this object
  --option=OPT           an option of gpusc exec (repeatable; e.g. --option=--max-cycles=500)
  --environment          start the program directly, with libgpusc_cudart first on
                         LD_LIBRARY_PATH and the settings in GPUSC_* variables (as a script
                         would), instead of through `gpusc exec`

Exit status 0 when all holds, 1 when not, 77 (skipped) when PROGRAM was not built because nvcc
was not found at configure time.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile


def main():
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        at = argv.index("--")
        argv, extra = argv[:at], argv[at + 1:]
    p = argparse.ArgumentParser()
    p.add_argument("gpusc")
    p.add_argument("program")
    p.add_argument("--mode", default="timing")
    p.add_argument("--expect", default=r"(?m)^PASS")
    p.add_argument("--expect-stderr")
    p.add_argument("--exit", type=int, default=0)
    p.add_argument("--launches", type=int)
    p.add_argument("--kernels")
    p.add_argument("--failed-calls")
    p.add_argument("--environment", action="store_true")
    p.add_argument("--option", action="append", default=[])
    a = p.parse_args(argv)
    if not os.path.exists(a.program):
        print(f"skipped: {a.program} was not built: nvcc was not found when gpusc was configured "
              "(install the CUDA toolkit, or set GPUSC_NVCC)")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "results")
        if a.environment:
            env = dict(os.environ)
            lib = os.path.join(os.path.dirname(os.path.abspath(a.gpusc)), "cudart")
            env["LD_LIBRARY_PATH"] = lib + (":" + env["LD_LIBRARY_PATH"]
                                            if env.get("LD_LIBRARY_PATH") else "")
            env.update({"GPUSC_EXECUTABLE": os.path.abspath(a.gpusc), "GPUSC_MODE": a.mode,
                        "GPUSC_OUT": out, "GPUSC_QUIET": "1"})
            cmd = [a.program, *extra]
        else:
            env = None
            cmd = [a.gpusc, "exec", "-q", "--mode", a.mode, "-o", out, *a.option, "--", a.program,
                   *extra]
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
        print(r.stdout, end="")
        print(r.stderr, end="", file=sys.stderr)
        failures = []
        if r.returncode != a.exit:
            failures.append(f"exit status {r.returncode}, expected {a.exit}")
        if a.expect and not re.search(a.expect, r.stdout):
            failures.append(f"stdout does not match {a.expect!r}")
        if a.expect_stderr and not re.search(a.expect_stderr, r.stderr):
            failures.append(f"stderr does not match {a.expect_stderr!r}")
        if a.launches is not None or a.kernels or a.failed_calls:
            stats = os.path.join(out, "stats.json")
            if not os.path.exists(stats):
                failures.append("no stats.json")
            else:
                run_stats = json.load(open(stats))
                launches = run_stats["launches"]
                if a.launches is not None and len(launches) != a.launches:
                    failures.append(f"{len(launches)} launches in stats.json, expected {a.launches}")
                # A timing run has cycles, also one without a launch.
                if a.mode == "timing" and "cycles" not in run_stats["run"]:
                    failures.append("no cycles in stats.json's run of a timing run")
                # A sampled run accounts for every launch: in detail or extrapolated.
                sampling = run_stats["run"].get("sampling")
                if sampling is not None:
                    counted = sampling["launches_detailed"] + sampling["launches_extrapolated"]
                    if counted != run_stats["run"]["launches"]:
                        failures.append(f"sampling counts {counted} launches of "
                                        f"{run_stats['run']['launches']}")
                if a.failed_calls:
                    want = json.loads(a.failed_calls)
                    got = run_stats["workload"].get("failed_calls")
                    if got != want:
                        failures.append(f"failed_calls {got}, expected {want}")
                if a.kernels:
                    names = [l["kernel"] for l in launches]
                    if not names:
                        failures.append("no launches in stats.json")
                    for k in names:
                        if not re.search(a.kernels, k):
                            failures.append(f"launch of {k[:120]} does not match {a.kernels!r}")
                            break
    if failures:
        print("FAILED: " + "; ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
