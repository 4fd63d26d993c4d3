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
    sm.l1d.sets: [16, 64, 256]
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

# Lines against each axis: sm.l1d.sets (16, 64, 256) grows geometrically and is drawn on a log
# scale, gpu.num_sms (8, 15: two values) on a linear one; every run is a dot; a metric whose
# values lie within 10 % of each other is drawn relative to the base variant.
def figure_after(heading):
    at = page.find(f">{heading}</h3>")
    if at < 0:
        fail(f"no line plots '{heading}'")
    fig = page[at:page.find("</figure>", at)]
    return fig, page[page.find("<figcaption", at):page.find("</figcaption>", at)]


metrics = ["cycles", "ipc", "energy_j", "average_power_w", "worst_droop_pct"]
titles = {"cycles": "Cycles", "ipc": "IPC (warp instructions per cycle)",
          "energy_j": "Energy (mJ)", "average_power_w": "Average power (W)",
          "worst_droop_pct": "Worst droop (% of supply)"}
for axis, log in (("sm.l1d.sets", True), ("gpu.num_sms", False)):
    fig, caption = figure_after(f"Against {axis}")
    if (f"{axis} is on a log scale" in caption) != log:
        fail(f"{axis}: log scale {not log} in the caption: {caption}")
    # Every run is a dot in each panel: the points of the 5 metrics.
    dots = fig.count("<circle ")
    if dots < len(rows) * len(metrics):
        fail(f"{axis}: {dots} dots for {len(rows)} runs in {len(metrics)} panels")
    for m in metrics:
        values = [r[m] for r in rows if r.get(m) is not None]
        relative = min(values) > 0 and max(values) - min(values) <= 0.1 * max(values)
        title = f"{titles[m]} relative to base"
        if (title in fig) != relative:
            fail(f"{axis}: '{title}' {'missing' if relative else 'drawn'} for values "
                 f"{min(values)}..{max(values)}")

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
