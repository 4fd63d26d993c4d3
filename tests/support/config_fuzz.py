#!/usr/bin/env python3
"""The configuration fuzzer: platform variants an architect could write, run on catalog kernels.

Each draw takes a built-in platform as its base, changes a few of its keys at once (values at and
near each key's bounds, the base value's halves and doubles, every choice of a string key, a flipped
flag, now and then a value anywhere in the range) and runs one catalog kernel at --size tiny in
timing and then functional mode (a shader platform: one shader benchmark's draw). Every run is one
of:

  correct        exit 0: the kernel's result matched its host reference
  refused        exit 2 with one line that names a changed key: the input was rejected
  unclear        exit 2 whose message names none of the changed keys (a defect: the user cannot
                 tell which key to change)
  wrong-result   exit 1: the check failed
  fault          exit 3: the kernel faulted
  internal-error exit 4 (a stall, a deadlock the watchdog found, a broken invariant)
  slow           exit 5 (the --timeout given to gpusc) after steady progress: at least
                 SLOW_MIN_CYCLES core cycles at SLOW_MIN_RATE per second (not a defect: the
                 configuration asks for that much simulated time; counted apart)
  time-limit     exit 5 without that progress, or no exit before the hard limit
  divergence     exit 7: an RTL block in lockstep diverged from its model
  crash          killed by a signal, or any other exit code

Anything but correct, refused and slow is a defect. Each defect is shrunk to the fewest changed keys that
still show it (and to vecadd when it shows there too), and a reproducer is written to
OUT/defects/NNN.yaml, in the form tests/data/config_regressions/ holds (one ctest each).

  config_fuzz.py --gpusc build/gpusc --out DIR --seed 1 --draws 40           (CI: fixed draws)
  config_fuzz.py --gpusc build/gpusc --out DIR --seconds 3600 --jobs 2       (./build.sh fuzz-config)
  config_fuzz.py --gpusc build/gpusc --replay tests/data/config_regressions/x.yaml

OUT/draws.jsonl has one line per draw (its keys, kernel and both runs' outcomes), OUT/summary.json
the counts; the exit status is 1 when a defect was found.
"""

import argparse
import concurrent.futures
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time


def builtin_platforms(gpusc):
    """The built-in platforms, from `gpusc list platforms` (so a new one is drawn from without
    changing this script): (every name, the set of shader-cluster ones)."""
    out = subprocess.run([gpusc, "list", "platforms"], check=True, capture_output=True,
                         text=True).stdout
    names, shaders = [], set()
    for line in out.splitlines():
        if not line.strip():
            break  # the listing ends at its first blank line; a note follows
        names.append(line.split()[0])
        if "(gpusc shader)" in line:
            shaders.add(names[-1])
    return names, shaders


# Keys that are not part of the simulated design: names, output files and run limits (a limit
# stops a run on purpose), and the VCD's contents. noc.*_positions are drawn by their own rule.
SKIPPED = re.compile(
    r"^(name|description|limits\..*|pdn\.monitor\.vcd_.*|noc\.(sm|mc)_positions)$")

OUTCOMES = ["correct", "refused", "slow", "unclear", "wrong-result", "fault", "internal-error",
            "time-limit", "divergence", "crash"]
DEFECTS = [o for o in OUTCOMES if o not in ("correct", "refused", "slow")]
# A run gpusc's --timeout stopped after simulating at least this many core cycles, at this many
# per second or more, was progressing: "slow" (the configuration asks for that much simulated
# time), not a hang.
SLOW_MIN_CYCLES = 100000
SLOW_MIN_RATE = 5000


def log2_floor(v):
    return v.bit_length() - 1


class KeySpace:
    """The keys of one base platform (gpusc list keys --json --platform P) and their candidates."""

    def __init__(self, gpusc, platform, shader):
        what = "shader-keys" if shader else "keys"
        out = subprocess.run([gpusc, "list", what, "--json", "--platform", platform],
                             check=True, capture_output=True, text=True).stdout
        self.platform = platform
        self.shader = shader
        self.keys = [k for k in json.loads(out) if not SKIPPED.match(k["key"])]
        self.keys = [k for k in self.keys if self.drawable(k)]

    @staticmethod
    def drawable(k):
        t = k["type"]
        if t == "bool" or k.get("choices"):
            return True
        if t == "number":
            return "lo" in k and "hi" in k
        if t in ("unsigned integer", "integer"):
            return True
        if t == "list":
            return True
        return False

    def candidates(self, k, rng):
        t = k["type"]
        v = k["value"]
        if t == "bool":
            return ["false" if v == "true" else "true"]
        if k.get("choices"):
            return [c for c in k["choices"] if c != v] or [v]
        if t == "list":
            return self.list_candidates(v, rng)
        if t == "number":
            return self.number_candidates(k, rng)
        return self.integer_candidates(k, rng)

    @staticmethod
    def integer_candidates(k, rng):
        d = int(k["value"])
        lo = int(k["lo"]) if "lo" in k else 0
        hi = int(k["hi"]) if "hi" in k else max(2 * d, 1 << 20)
        c = {lo, lo + 1, hi, hi - 1, d // 2, d * 2, d + 1, d - 1, max(d // 4, lo)}
        # Now and then any value of the range (log-uniform: small values matter most).
        c.add(int(round(math.exp(rng.uniform(math.log(max(lo, 1)), math.log(max(hi, 1)))))))
        if k.get("power_of_two"):
            p = set()
            for x in c:
                if x >= 1:
                    p.add(1 << log2_floor(x))
                    p.add(1 << (log2_floor(x) + 1))
            c = p
        return sorted(str(x) for x in c if lo <= x <= hi and str(x) != k["value"])

    @staticmethod
    def number_candidates(k, rng):
        d = float(k["value"])
        lo, hi = float(k["lo"]), float(k["hi"])
        span = hi - lo
        c = {lo, hi, d / 2, d * 2, lo + span * 1e-3, hi - span * 1e-3}
        if lo > 0:
            c.add(math.exp(rng.uniform(math.log(lo), math.log(hi))))
        else:
            c.add(rng.uniform(lo, min(hi, max(4 * abs(d), 1.0))))
        return sorted(f"{x:.6g}" for x in c if lo <= x <= hi and f"{x:.6g}" != k["value"])

    @staticmethod
    def list_candidates(v, rng):
        try:
            items = json.loads(v) if v.startswith("[") else []
        except json.JSONDecodeError:
            items = []
        if not all(isinstance(x, (int, float)) for x in items):
            return []
        c = [[], list(reversed(items)), [x * 2 for x in items], [x / 2 for x in items],
             items[:1], items + items[-1:]]
        if not items:
            c += [[0], [1, 2]]
        return ["[" + ", ".join(f"{x:g}" for x in e) + "]" for e in c if e != items]

    def draw_sets(self, rng, n):
        chosen = rng.sample(self.keys, min(n, len(self.keys)))
        sets = []
        for k in chosen:
            cands = self.candidates(k, rng)
            if cands:
                sets.append(f"{k['key']}={rng.choice(cands)}")
        return sets


class Runner:
    def __init__(self, gpusc, work, timeout):
        self.gpusc = gpusc
        self.work = work
        self.timeout = timeout
        self.lock = threading.Lock()
        self.n = 0

    def command(self, platform, shader, kernel, mode, sets, out):
        if shader:
            cmd = [self.gpusc, "shader", "run", "--platform", platform, "-s", kernel]
        else:
            cmd = [self.gpusc, "run", "--platform", platform, "--kernel", kernel, "--size",
                   "tiny", "--mode", mode, "--threads", "1", "--timeout", str(self.timeout)]
        for s in sets:
            cmd += ["--set", s]
        return cmd + ["-q", "--force", "--out", out]

    def run(self, platform, shader, kernel, mode, sets):
        with self.lock:
            self.n += 1
            out = os.path.join(self.work, f"run{self.n}")
        cmd = self.command(platform, shader, kernel, mode, sets, out)
        t0 = time.monotonic()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True,
                               timeout=self.timeout * 2 + 30)
            rc, err = p.returncode, (p.stderr or "") + (p.stdout or "")
        except subprocess.TimeoutExpired:
            rc, err = None, "no exit before the hard time limit"
        seconds = time.monotonic() - t0
        outcome = classify(rc, err, sets)
        cycles = None
        if rc == 5:
            # Stopped by gpusc's own time limit: a run that was making steady progress is a slow
            # configuration (latencies of thousands of cycles), not a hang.
            try:
                with open(os.path.join(out, "stats.json")) as f:
                    cycles = json.load(f)["run"].get("cycles", 0)
            except (OSError, ValueError, KeyError):
                cycles = 0
            if cycles >= SLOW_MIN_CYCLES and cycles / self.timeout >= SLOW_MIN_RATE:
                outcome = "slow"
        shutil.rmtree(out, ignore_errors=True)
        r = {"mode": mode, "rc": rc, "outcome": outcome, "seconds": round(seconds, 2),
             "message": first_error(err)}
        if cycles is not None:
            r["cycles"] = cycles
        return r


def first_error(text):
    for line in text.splitlines():
        if "error" in line or "FAIL" in line or "fault" in line:
            return line.strip()[:400]
    return text.strip().splitlines()[-1][:400] if text.strip() else ""


def names_a_key(message, sets):
    """Whether a refusal's message names one of the changed keys by its whole path."""
    return any(s.split("=", 1)[0] in message for s in sets)


def classify(rc, text, sets):
    if rc is None:
        return "time-limit"
    if rc == 0:
        return "correct"
    if rc == 2:
        return "refused" if names_a_key(text, sets) else "unclear"
    return {1: "wrong-result", 3: "fault", 4: "internal-error", 5: "time-limit",
            7: "divergence"}.get(rc, "crash")


NO_EFFECT = re.compile(r"--set ([^=\s]+)=.*: has no effect: ")


def run_draw(runner, d):
    """Timing then functional mode (a shader platform has one mode). A run refused because a
    changed key has no effect with the others (a drowsy timeout without drowsy lines, the mesh's
    shape on a crossbar) is a correct refusal; the draw then runs again without that key, so the
    rest of its keys are still tried (the keys dropped are listed under "dropped")."""
    d = dict(d)
    runs = []
    modes = ["draw"] if d["shader"] else ["timing", "functional"]
    for mode in modes:
        while True:
            r = runner.run(d["platform"], d["shader"], d["kernel"], mode, d["sets"])
            m = NO_EFFECT.search(r["message"]) if r["outcome"] == "refused" else None
            kept = [s for s in d["sets"] if s.split("=", 1)[0] != m.group(1)] if m else d["sets"]
            if not kept or len(kept) == len(d["sets"]):
                break
            d["sets"] = kept
            d["dropped"] = d.get("dropped", []) + [m.group(1)]
        runs.append(r)
    d["runs"] = runs
    return d


def defect_of(d):
    for r in d["runs"]:
        if r["outcome"] in DEFECTS:
            return r
    return None


def signature(r):
    """A run's outcome and its message without the numbers, paths and quoted values that vary
    between draws showing the same defect."""
    m = re.sub(r"\S*/\S*", "P", r["message"])
    m = re.sub(r"'[^']*'", "Q", m)
    m = re.sub(r"[0-9][0-9.e+-]*", "N", m)
    return r["outcome"], m


def shrink(runner, d, bad):
    """The fewest keys (and the simplest kernel) with which the run shows the same defect (the
    same outcome and message, numbers aside)."""
    mode, want = bad["mode"], signature(bad)
    sets = list(d["sets"])
    kernel = d["kernel"]

    def same(kernel, sets):
        return signature(runner.run(d["platform"], d["shader"], kernel, mode, sets)) == want

    changed = True
    while changed and len(sets) > 1:
        changed = False
        for i in range(len(sets)):
            trial = sets[:i] + sets[i + 1:]
            if same(kernel, trial):
                sets, changed = trial, True
                break
    simplest = "pom" if d["shader"] else "vecadd"
    if kernel != simplest and same(simplest, sets):
        kernel = simplest
    return kernel, sets


def reproducer(d, kernel, sets, bad, gpusc):
    cmd = Runner(gpusc, "", 600).command(d["platform"], d["shader"], kernel, bad["mode"], sets,
                                         "OUT")
    lines = [
        "# A defect the configuration fuzzer found (tests/support/config_fuzz.py); shrunk from "
        f"{len(d['sets'])} changed keys on {d['kernel']}.",
        f"# outcome: {bad['outcome']}: {bad['message']}",
        "# command: " + " ".join(cmd[1:]),
        f"platform: {d['platform']}",
        f"kernel: {kernel}",
        f"mode: {bad['mode']}",
        "sets:",
    ] + [f"  - {json.dumps(s)}" for s in sets] + [
        "# What the run must do once fixed: correct (the combination is supported) or refused",
        "# (exit 2, naming a changed key).",
        "expect: correct",
    ]
    return "\n".join(lines) + "\n"


def make_draw(spaces, kernels, shaders, rng, index):
    space = rng.choice(spaces)
    n = rng.choices([1, 2, 3, 4, 5], weights=[30, 30, 20, 12, 8])[0]
    sets = []
    while not sets:
        sets = space.draw_sets(rng, n)
    kernel = rng.choice(shaders if space.shader else kernels)
    return {"draw": index, "platform": space.platform, "shader": space.shader, "kernel": kernel,
            "sets": sets}


def load_yaml_repro(path):
    """The few fields of a reproducer (a flat YAML file this script writes)."""
    doc = {"sets": []}
    key = None
    with open(path) as f:
        for line in f:
            line = line.split(" #")[0].rstrip() if not line.startswith("#") else ""
            if not line:
                continue
            if line.startswith("  - ") and key == "sets":
                doc["sets"].append(json.loads(line[4:]))
            elif ":" in line:
                key, _, value = line.partition(":")
                if value.strip():
                    doc[key.strip()] = value.strip()
    return doc


def replay(args):
    runner = Runner(args.gpusc, tempfile.mkdtemp(prefix="config-fuzz-"), args.timeout)
    _, shader_platforms = builtin_platforms(args.gpusc)
    failed = 0
    for path in args.replay:
        doc = load_yaml_repro(path)
        shader = doc["platform"] in shader_platforms
        r = runner.run(doc["platform"], shader, doc["kernel"], doc.get("mode", "timing"),
                       doc["sets"])
        ok = r["outcome"] == doc["expect"]
        print(f"{'ok' if ok else 'FAILED'}: {path}: {r['outcome']} (expected {doc['expect']})"
              + ("" if ok else f": {r['message']}"))
        failed += not ok
    shutil.rmtree(runner.work, ignore_errors=True)
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpusc", required=True)
    ap.add_argument("--out", help="results folder (draws.jsonl, summary.json, defects/)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--draws", type=int, help="number of draws (default: until --seconds)")
    ap.add_argument("--seconds", type=float, help="draw until this many seconds have passed")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=60,
                    help="seconds one run may take (gpusc --timeout; twice that plus 30 kills it)")
    ap.add_argument("--platforms", help="platforms to draw from, comma-separated (default: "
                    "every built-in one, as `gpusc list platforms` gives them)")
    ap.add_argument("--kernels", help="catalog kernels to draw from (default: all)")
    ap.add_argument("--no-shrink", action="store_true")
    ap.add_argument("--replay", nargs="+", help="reproducers to run; each must give its expect")
    args = ap.parse_args()
    if args.replay:
        return replay(args)
    if not args.out or (args.draws is None and args.seconds is None):
        ap.error("--out and one of --draws or --seconds are needed (or --replay)")

    os.makedirs(args.out, exist_ok=True)
    defects_dir = os.path.join(args.out, "defects")
    os.makedirs(defects_dir, exist_ok=True)
    work = tempfile.mkdtemp(prefix="config-fuzz-")
    runner = Runner(args.gpusc, work, args.timeout)
    all_platforms, shader_platforms = builtin_platforms(args.gpusc)
    platforms = args.platforms.split(",") if args.platforms else all_platforms
    spaces = [KeySpace(args.gpusc, p, p in shader_platforms) for p in platforms]
    if args.kernels:
        kernels = args.kernels.split(",")
    else:
        out = subprocess.run([args.gpusc, "list", "kernels"], check=True, capture_output=True,
                             text=True).stdout
        kernels = [l.split()[0] for l in out.splitlines() if l.strip()]
    out = subprocess.run([args.gpusc, "list", "shaders"], check=True, capture_output=True,
                         text=True).stdout
    shaders = [l.split()[0] for l in out.splitlines() if l.strip()]

    rng = random.Random(args.seed)
    t0 = time.monotonic()
    counts = {o: 0 for o in OUTCOMES}
    defects = []
    draws_log = open(os.path.join(args.out, "draws.jsonl"), "w")
    index = 0
    done = 0

    def more():
        if args.draws is not None and index >= args.draws:
            return False
        return args.seconds is None or time.monotonic() - t0 < args.seconds

    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        pending = {}
        # Draws are made in order from the seed whatever finishes first; results are written in
        # draw order.
        results = {}
        next_write = 0
        while more() or pending:
            while more() and len(pending) < args.jobs * 2:
                d = make_draw(spaces, kernels, shaders, rng, index)
                pending[pool.submit(run_draw, runner, d)] = index
                index += 1
            finished, _ = concurrent.futures.wait(
                pending, return_when=concurrent.futures.FIRST_COMPLETED)
            for f in finished:
                results[pending.pop(f)] = f.result()
            while next_write in results:
                d = results.pop(next_write)
                next_write += 1
                done += 1
                for r in d["runs"]:
                    counts[r["outcome"]] += 1
                bad = defect_of(d)
                if bad:
                    kernel, sets = (d["kernel"], d["sets"]) if args.no_shrink else shrink(
                        runner, d, bad)
                    n = len(defects) + 1
                    path = os.path.join(defects_dir, f"{n:03d}.yaml")
                    with open(path, "w") as f:
                        f.write(reproducer(d, kernel, sets, bad, args.gpusc))
                    d["defect"] = {"file": path, "kernel": kernel, "sets": sets,
                                   "outcome": bad["outcome"], "message": bad["message"]}
                    defects.append(d["defect"])
                    print(f"config_fuzz: draw {d['draw']}: {bad['outcome']} on {d['platform']} "
                          f"{d['kernel']} {bad['mode']} with {' '.join(d['sets'])}; shrunk to "
                          f"{kernel} {' '.join(sets)}: {bad['message']} ({path})", flush=True)
                draws_log.write(json.dumps(d) + "\n")
                draws_log.flush()
                if done % 500 == 0:
                    print(f"config_fuzz: {done} draws, {time.monotonic() - t0:.0f} s, "
                          f"{len(defects)} defects", flush=True)
    draws_log.close()
    shutil.rmtree(work, ignore_errors=True)
    summary = {"seed": args.seed, "draws": done, "runs": counts,
               "seconds": round(time.monotonic() - t0, 1), "platforms": platforms,
               "defects": defects}
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print(f"config_fuzz: {done} draws in {summary['seconds']} s (seed {args.seed}); runs: " +
          ", ".join(f"{o} {counts[o]}" for o in OUTCOMES if counts[o]) +
          f"; {len(defects)} defect{'s' if len(defects) != 1 else ''}")
    return 1 if defects else 0


if __name__ == "__main__":
    sys.exit(main())
