#!/usr/bin/env python3
"""gpusc bench's summary follows from its kernels: for each host-thread count, the geometric mean
and the maximum of the kernels' timing over functional host time (each kernel's seconds with that
count over its functional seconds), the kernel with the fewest warp instructions per second, and
the sum of the seconds; the printed lines say the same. In functional mode there is one summary
per host-thread count, without ratios.

Used by the cli.bench_summary test.
  bench_summary.py GPUSC WORKDIR
"""
import json
import math
import sys

from cli_check import fail, fresh_workdir, runner

exe, work = sys.argv[1:3]
fresh_workdir(work)
run = runner(exe)
kernels = ["vecadd", "sgemm", "histogram"]


def close(a, b):
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=0.0)


def check(summary, entries, threads, timing):
    def seconds(e):
        if threads is None or threads == entries[0]["host_threads"]:
            return e["seconds"]
        return next(t["seconds"] for t in e["threads"] if t["threads"] == threads)

    secs = {e["kernel"]: seconds(e) for e in entries}
    if any(s <= 0 for s in secs.values()):
        fail(f"a kernel measured no time: {secs}")  # the summary's ratios would leave it out
    if summary["kernels"] != len(entries) or summary["kernels_without_time"] != 0:
        fail(f"kernel counts: {summary}")
    if not close(summary["seconds_total"], sum(secs.values())):
        fail(f"seconds_total {summary['seconds_total']} != {sum(secs.values())}")
    rates = {e["kernel"]: e["warp_instructions"] / secs[e["kernel"]] for e in entries}
    slow = min(rates, key=rates.get)
    if summary["warp_instructions_per_second_min_kernel"] != slow or not close(
        summary["warp_instructions_per_second_min"], rates[slow]
    ):
        fail(f"slowest kernel: {summary} against {rates}")
    if not timing:
        if "slowdown_vs_functional_geomean" in summary:
            fail(f"a functional benchmark's summary has timing fields: {summary}")
        if summary["threads"] != (threads or entries[0]["host_threads"]):
            fail(f"summary for {summary['threads']} threads, expected {threads}")
        return
    if summary["threads"] != threads:
        fail(f"summary for {summary['threads']} threads, expected {threads}")
    ratios = {k: secs[k] / e["functional_seconds"] for k, e in zip(secs, entries)}
    geomean = math.exp(sum(math.log(r) for r in ratios.values()) / len(ratios))
    if not close(summary["slowdown_vs_functional_geomean"], geomean):
        fail(f"geomean {summary['slowdown_vs_functional_geomean']} != {geomean}")
    worst = max(ratios, key=ratios.get)
    if summary["slowdown_vs_functional_max_kernel"] != worst or not close(
        summary["slowdown_vs_functional_max"], ratios[worst]
    ):
        fail(f"slowest kernel against functional: {summary} against {ratios}")


args = ["--size", "tiny", "--repeat", "1"] + [a for k in kernels for a in ("-k", k)]
p = run("bench", "--mode", "timing", "--threads", "1,2", "--json", "t.json", *args)
result = json.load(open("t.json"))
summaries = result["summary"]
if [s["threads"] for s in summaries] != [1, 2]:
    fail(f"expected summaries for 1 and 2 threads: {summaries}")
for s in summaries:
    check(s, result["kernels"], s["threads"], True)
    line = next((l for l in p.stdout.splitlines() if l.startswith(f"{s['threads']} thread")), None)
    want = f"timing / functional {s['slowdown_vs_functional_geomean']:.1f}x geomean"
    if line is None or want not in line or s["slowdown_vs_functional_max_kernel"] not in line:
        fail(f"printed summary for {s['threads']} threads: {line!r}, expected {want!r}")

run("bench", "--json", "f.json", *args)
result = json.load(open("f.json"))
if len(result["summary"]) != 1:
    fail(f"a functional benchmark of one thread count has one summary: {result['summary']}")
check(result["summary"][0], result["kernels"], None, False)

# The functional engine on one and two threads: a summary for each, and the same instructions.
run("bench", "--threads", "1,2", "--json", "f2.json", *args)
result = json.load(open("f2.json"))
if [s["threads"] for s in result["summary"]] != [1, 2]:
    fail(f"expected functional summaries for 1 and 2 threads: {result['summary']}")
for s in result["summary"]:
    check(s, result["kernels"], s["threads"], False)
for e in result["kernels"]:
    if not all(t["same_results"] for t in e["threads"]):
        fail(f"{e['kernel']}: two threads gave another run: {e['threads']}")
print("ok")
