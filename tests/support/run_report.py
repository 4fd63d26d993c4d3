#!/usr/bin/env python3
"""The HTML report of a run (gpusc run --report, gpusc report FOLDER).

Checks, on a mesh platform and on the crossbar GTX480: the page is self-contained (nothing
loaded from elsewhere), has every section the run's files support, shows the same numbers as the
results (mesh link utilisation against stats.json's flits and cycles, crossbar port values, the
CTA count, energy by block), is rebuilt identically by `gpusc report`, says when a run stopped
early, and bad folders give a clear error with exit code 2.

Used by the cli.run_report test.   run_report.py GPUSC WORKDIR
"""
import html
import json
import os
import re
import sys

from cli_check import fail, fresh_workdir, runner

exe, work = sys.argv[1], sys.argv[2]
fresh_workdir(work)
run = runner(exe)


def sections(page):
    return re.findall(r'<h2 id="[^"]*">([^<]*)</h2>', page)


def self_contained(page, what):
    # The only URL allowed is the SVG namespace name, which is an identifier, not a download.
    for url in re.findall(r'https?://[^\s"\'<>]+', page):
        if url != "http://www.w3.org/2000/svg":
            fail(f"{what}: the page refers to {url}")
    for tag in ("<link", "<img", "<iframe", "@import", " src="):
        if tag in page:
            fail(f"{what}: the page loads something ({tag})")


# ---- a mesh platform: links drawn on the mesh --------------------------------------------------
run("run", "-p", "stream-4x4", "-k", "sgemm", "--size", "tiny", "-q", "--report", "-o", "mesh")
TIMING_SECTIONS = ["Summary", "Power over time", "Supply voltage", "Resident warps per SM",
                   "Interconnect", "Launches", "Files"]


def load(folder):
    """The folder's page and stats.json, after checking the page's sections and that it is
    self-contained."""
    page = open(f"{folder}/report.html").read()
    self_contained(page, folder)
    if sections(page) != TIMING_SECTIONS:
        fail(f"{folder}: sections {sections(page)}, expected {TIMING_SECTIONS}")
    return page, json.load(open(f"{folder}/stats.json"))


page, stats = load("mesh")
summary = open("mesh/summary.txt").read()
if html.escape(summary, quote=False) not in page:
    fail("the summary on the page is not summary.txt")

# Every router-to-router link's tooltip: flits over all launches / cycles over all launches.
flits, cycles = {}, {}
for launch in stats["launches"]:
    noc = launch["timing"]["memory"]["interconnect"]
    for link in noc["links"]:
        key = (link["from"], link["to"])
        flits[key] = flits.get(key, 0) + link["flits"]
        cycles[key] = cycles.get(key, 0) + noc["cycles"]
shown = re.findall(r"<title>(router\(\d+,\d+\)) to (router\(\d+,\d+\)): ([0-9.]+) flits/cycle</title>",
                   page)
expected = {k for k in flits if k[0].startswith("router") and k[1].startswith("router")}
if {(a, b) for a, b, _ in shown} != expected:
    fail(f"mesh links drawn {len(shown)}, stats.json has {len(expected)} router-to-router links")
for a, b, value in shown:
    if abs(float(value) - flits[(a, b)] / cycles[(a, b)]) > 0.0005:
        fail(f"link {a}->{b}: page {value}, stats.json {flits[(a, b)] / cycles[(a, b)]:.4f}")

# The CTA timeline caption counts the CTAs of every launch.
ctas = sum(launch["grid"][0] * launch["grid"][1] * launch["grid"][2] for launch in stats["launches"])
if f"cta_timeline.csv: {ctas} CTAs" not in page:
    fail(f"the CTA timeline does not say {ctas} CTAs")

# Energy by block: each block's row is its energy in mJ and its share of the total.
energy = stats["run"]["energy"]
for block, joules in energy["by_block_j"].items():
    share = 100 * joules / energy["total_j"]
    row = f"<td>{block}</td><td class=\"num\">{joules * 1e3:.4g}</td>"
    if row not in page or f"{share:.1f}%" not in page:
        fail(f"energy by block: no row {row} with {share:.1f}%")

# gpusc report rebuilds the same page from the folder.
os.remove("mesh/report.html")
run("report", "mesh")
if open("mesh/report.html").read() != page:
    fail("gpusc report FOLDER did not rebuild the same page")

# ---- GTX480: the crossbar's ports, the voltage section ------------------------------------------
run("run", "-k", "vecadd", "--size", "tiny", "-q", "--report", "-o", "xbar")
page, stats = load("xbar")
noc = stats["launches"][0]["timing"]["memory"]["interconnect"]
for link in noc["links"]:
    if link["to"] == "switch" and f">{link['flits'] / noc['cycles']:.3f}<" not in page:
        fail(f"crossbar port {link['from']}: {link['flits'] / noc['cycles']:.3f} not shown")
events = sum(1 for _ in open("xbar/droops.csv")) - 1
if f"{events} droop events" not in page:
    fail(f"the voltage figure does not say {events} droop events")

# ---- a run stopped by a limit says so; a functional run has no timing sections ------------------
run("run", "-k", "sgemm", "--size", "small", "-q", "--report", "--max-cycles", "3000", "-o", "cut",
    rc=5)
page = open("cut/report.html").read()
if "This run stopped early (max-cycles: run stopped at the cycle limit" not in page:
    fail("the report of a stopped run does not say it stopped early")
run("run", "-k", "vecadd", "--size", "tiny", "-q", "--mode", "functional", "--report", "-o", "func")
page = open("func/report.html").read()
if sections(page) != ["Summary", "Launches", "Files"] or "has no cycles, power, voltage" not in page:
    fail(f"functional report sections {sections(page)}")

# ---- bad folders ----------------------------------------------------------------------------------
p = run("report", "nowhere", rc=2)
if "report nowhere: expected a results folder" not in p.stderr:
    fail(f"missing folder: {p.stderr}")
os.makedirs("empty")
p = run("report", "empty", rc=2)
if "empty: not a gpusc results folder (no readable stats.json)" not in p.stderr:
    fail(f"folder without stats.json: {p.stderr}")
with open("xbar/power.csv", "a") as f:
    f.write("1,2,3\n")
lines = sum(1 for _ in open("xbar/power.csv"))
p = run("report", "xbar", rc=2)
if f"xbar/power.csv:{lines}: 3 fields, the header has" not in p.stderr:
    fail(f"malformed CSV: {p.stderr}")
print("PASS")
