#!/usr/bin/env python3
"""stats.json's two forms (test cli.stats_forms): the same run written with --stats full and
--stats summary has the same run totals, and every value of each summary launch entry is the
full entry's at the same path, with the detail per SM, slice, partition and link left out; the
default (auto) writes the full form up to 16 launches and the summary beyond.

  stats_forms.py GPUSC WORKDIR
"""
import json
import os
import shutil
import subprocess
import sys

HOST = {"host_seconds", "simulation", "gpusc_version"}  # differ from run to run


def run(exe, out, *args):
    subprocess.run([exe, "run", "-q", "--force", "--out", out, "--threads", "1", *args],
                   check=True)
    with open(os.path.join(out, "stats.json")) as f:
        return json.load(f), os.path.getsize(os.path.join(out, "stats.json"))


def subtree(part, whole, path, errors):
    """Every value of `part` is `whole`'s at the same path."""
    if isinstance(part, dict):
        if not isinstance(whole, dict):
            errors.append(f"{path}: an object in the summary, {type(whole).__name__} in full")
            return
        for k, v in part.items():
            if k in HOST:
                continue
            if k not in whole:
                errors.append(f"{path}.{k}: only in the summary")
            else:
                subtree(v, whole[k], f"{path}.{k}", errors)
    elif part != whole:
        errors.append(f"{path}: {part!r} in the summary, {whole!r} in full")


def main():
    exe, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    errors = []
    # bfs: several launches of different grids, memory traffic on every level.
    full, full_bytes = run(exe, os.path.join(work, "full"), "--kernel", "bfs", "--size", "tiny",
                           "--stats", "full")
    summ, summ_bytes = run(exe, os.path.join(work, "summary"), "--kernel", "bfs", "--size", "tiny",
                           "--stats", "summary")
    if full["stats_form"] != "full" or summ["stats_form"] != "summary":
        errors.append(f"stats_form {full['stats_form']} and {summ['stats_form']}")
    for key in ("run", "totals", "workload", "complete", "config"):
        if full[key] != summ[key]:
            errors.append(f"{key} differs between the forms")
    if len(full["launches"]) != len(summ["launches"]) or len(full["launches"]) < 2:
        errors.append(f"{len(full['launches'])} and {len(summ['launches'])} launches")
    for i, (s, f) in enumerate(zip(summ["launches"], full["launches"])):
        subtree(s, f, f"launches[{i}]", errors)
        t = s.get("timing", {})
        if "sms" in t or "per_sm" in t.get("power", {}):
            errors.append(f"launches[{i}]: the summary keeps detail per SM")
        for unit, figures in t.get("memory", {}).items():
            if isinstance(figures, dict) and any(isinstance(v, (dict, list)) and k != "totals"
                                                 for k, v in figures.items()):
                errors.append(f"launches[{i}].timing.memory.{unit}: detail in the summary")
        # The summary's memory totals are what the sweeps read: the full entry's.
        for unit, figures in f["timing"]["memory"].items():
            if isinstance(figures, dict) and "totals" in figures and \
                    t["memory"][unit]["totals"] != figures["totals"]:
                errors.append(f"launches[{i}].timing.memory.{unit}.totals differ")
    if not summ_bytes < full_bytes:
        errors.append(f"the summary ({summ_bytes} bytes) is not smaller than full ({full_bytes})")
    # The default: full for a run of few launches, summary for many (gaussian: 73 at tiny).
    few, _ = run(exe, os.path.join(work, "few"), "--kernel", "vecadd", "--size", "tiny")
    many, many_bytes = run(exe, os.path.join(work, "many"), "--kernel", "gaussian", "--size",
                           "tiny")
    if few["stats_form"] != "full" or many["stats_form"] != "summary":
        errors.append(f"auto chose {few['stats_form']} for 1 launch and {many['stats_form']} for "
                      f"{len(many['launches'])}")
    for e in errors:
        print("stats_forms:", e)
    print(f"stats_forms: bfs {len(full['launches'])} launches, full {full_bytes} bytes, summary "
          f"{summ_bytes}; gaussian {len(many['launches'])} launches, auto {many_bytes} bytes; "
          f"{len(errors)} problems")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
