#!/usr/bin/env python3
"""The HTML report of a sweep (gpusc report SPEC.yaml).

A small sweep with two variants and two numeric axes gets every kind of plot; the numbers on
the page are those of `gpusc results --json` (variant ratios and their geomean in the bars,
IPC in the heatmaps), the table has a row per point whose stats.json link resolves from where
the page is (also with -o elsewhere), and the page loads nothing from elsewhere.

Used by the cli.sweep_report test.   sweep_report.py GPUSC WORKDIR
"""
import html
import json
import math
import os
import re
import sys

from cli_check import fail, fresh_workdir, runner

exe, work = sys.argv[1], sys.argv[2]
fresh_workdir(work)
run = runner(exe)


with open("study.yaml", "w") as f:
    f.write("""name: study
sizes: [tiny]
kernels: [vecadd, sgemm]
variants:
  - name: base
  - name: packed
    set: {gpu.cta_placement: packed}
axes:
  grid:
    sm.l1d.sets: [16, 64]
    gpu.num_sms: [8, 15]
""")
run("sweep", "study.yaml", "-q")
rows = json.loads(run("results", "study.yaml", "--json").stdout)
run("report", "study.yaml")
page = open("results/sweeps/study/report.html").read()

for url in re.findall(r'https?://[^\s"\'<>]+', page):
    if url != "http://www.w3.org/2000/svg":
        fail(f"the page refers to {url}")
sections = re.findall(r'<h2 id="[^"]*">([^<]*)</h2>', page)
want = ["Metrics against the axes", "Variants against base", "sm.l1d.sets and gpu.num_sms", "Points"]
if sections != want:
    fail(f"sections {sections}, expected {want}")


def work_of(r):
    axes = r["axes"]
    return f"{r['kernel']} sm.l1d.sets={axes['sm.l1d.sets']} gpu.num_sms={axes['gpu.num_sms']}"


# Bars: packed / base per kernel and axis values, and the geomean, for cycles.
by = {(work_of(r), r["variant"]): r for r in rows}
ratios = []
for (w, v), r in by.items():
    if v != "packed":
        continue
    ratio = r["cycles"] / by[(w, "base")]["cycles"]
    ratios.append(ratio)
    title = html.escape(f"{w} packed: {ratio:.2f}", quote=False)
    if f"<title>{title}</title>" not in page:
        fail(f"no bar '{title}'")
geomean = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
if f"<title>geomean packed: {geomean:.2f}</title>" not in page:
    fail(f"no geomean bar {geomean:.2f}")

# Heatmaps: one per kernel and variant, each cell the point's IPC.
for r in rows:
    title = f"{r['kernel']} {r['variant']}: IPC"
    at = page.find(f"<title>{title}</title>")
    if at < 0:
        fail(f"no heatmap '{title}'")
    svg = page[at:page.find("</svg>", at)]
    if f">{r['ipc']:.2f}<" not in svg:
        fail(f"heatmap '{title}' does not show {r['ipc']:.2f}")

# The table: a row per point, each linking its stats.json relative to the page.
table = page[page.find("<tbody>"):page.find("</tbody>")]
links = re.findall(r'<a href="([^"]+)">stats.json</a>', table)
if table.count("<tr>") != len(rows) or len(links) != len(rows):
    fail(f"{table.count('<tr>')} table rows and {len(links)} links for {len(rows)} points")
for link in links:
    if not os.path.isfile(os.path.join("results/sweeps/study", link)):
        fail(f"the link {link} does not resolve from the page")
os.makedirs("elsewhere")
run("report", "study.yaml", "-o", "elsewhere/page.html")
for link in re.findall(r'<a href="([^"]+)">stats.json</a>', open("elsewhere/page.html").read()):
    if not os.path.isfile(os.path.join("elsewhere", link)):
        fail(f"with -o elsewhere, the link {link} does not resolve")

# A sweep not run yet has no database: a clear error.
with open("other.yaml", "w") as f:
    f.write("kernels: [vecadd]\nsizes: [tiny]\n")
p = run("report", "other.yaml", rc=2)
if "no results database (run gpusc sweep other.yaml first)" not in p.stderr:
    fail(f"a sweep never run: {p.stderr}")
print("PASS")
