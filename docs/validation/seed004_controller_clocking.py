#!/usr/bin/env python3
"""What counting the I/O buffers' clocking outside the core's run would change (seed004.md).

gpusc's energy counts the cycles the cores run an invocation. The input buffer is also clocked
while the input controller fills it (cluster.phases[].fill_cycles in stats.json) and the output
buffer while the core writes its outputs out (core_busy_cycles - cycles): the same in every
configuration. This adds both, at Table VI's per-cycle energies, to the baseline and the
both-buffers local + global runs of the paper's nine programs and prints the savings with and
without them.

Usage: build/gpusc experiment seed004 --work /tmp/s4w
       python3 docs/validation/seed004_controller_clocking.py /tmp/s4w/seed004
"""
import json
import statistics
import sys

NINE = ["blur0", "blur1", "hgaussian_blur", "normal_map", "pom", "simple_tex_light",
        "simple_tex", "vgaussian_blur", "water_wave"]


def main(work):
    io, shader = [], []
    for name in NINE:
        base = json.load(open(f"{work}/{name}/baseline/stats.json"))
        gated = json.load(open(f"{work}/{name}/both-global/stats.json"))
        e = base["config"]["energy"]
        fill = sum(p["fill_cycles"] for p in base["cluster"]["phases"])
        t, g = base["stages"]["total"], gated["stages"]["total"]
        writeout = sum(base["cluster"]["core_busy_cycles"]) - t["cycles"]
        extra = e["input_buffer"] * fill + e["output_buffer"] * writeout

        def buffers(s):
            return (e["input_buffer"] * s["input_clocked_cycles"] +
                    e["output_buffer"] * s["output_clocked_cycles"])

        row = (buffers(g) / buffers(t) - 1, (buffers(g) + extra) / (buffers(t) + extra) - 1,
               g["energy"]["total"] / t["energy"]["total"] - 1,
               (g["energy"]["total"] + extra) / (t["energy"]["total"] + extra) - 1)
        io.append(row[:2])
        shader.append(row[2:])
        print(f"{name:18} fill {fill:5} write-out {writeout:5} core cycles {t['cycles']:6}: "
              f"I/O buffers {100 * row[0]:+.1f}% -> {100 * row[1]:+.1f}%, "
              f"shader {100 * row[2]:+.1f}% -> {100 * row[3]:+.1f}%")
    mean = lambda rows, k: 100 * statistics.mean(r[k] for r in rows)
    print(f"mean over the nine: I/O buffers {mean(io, 0):+.1f}% -> {mean(io, 1):+.1f}%, "
          f"shader {mean(shader, 0):+.1f}% -> {mean(shader, 1):+.1f}%")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "gpusc-experiments/seed004")
