#!/usr/bin/env python3
"""Checks that no source includes a header of a layer above its own (test layering.includes).

The layers are the table under "## Layers" in docs/architecture.md: its rows run from the top
layer to the bottom one, and each row's second column names its folders as `folder` (a folder
of models/, or testbenches, stimuli). A source may include headers of its own layer and of every
layer below it. Includes are the quoted ones ("cache/l2_slice.hpp"); a quoted include that names
no known folder is resolved against the including file's folder and the include directories of
testbenches/ and stimuli/ (the tools' own headers), and is an error in models/.

  layering.py SOURCE_DIR [DOC]   exit 1, listing each offending include as file:line
"""

import os
import re
import sys


def layers(doc_path):
    """[(layer index, [folders])], index 0 the bottom layer."""
    rows = []
    with open(doc_path) as f:
        text = f.read()
    m = re.search(r"^## Layers\n(.*?)(?=^## )", text, re.S | re.M)
    if not m:
        sys.exit(f"{doc_path}: no '## Layers' section")
    for line in m.group(1).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 2 or not line.startswith("|") or set(cells[0]) <= set("-: "):
            continue
        folders = re.findall(r"`([a-z_]+)/?`", cells[1])
        if folders:
            rows.append(folders)
    if not rows:
        sys.exit(f"{doc_path}: the Layers section has no table of folders")
    rows.reverse()  # bottom first
    return {f: i for i, fs in enumerate(rows) for f in fs}


def main():
    src = sys.argv[1]
    doc = sys.argv[2] if len(sys.argv) > 2 else os.path.join(src, "docs", "architecture.md")
    level = layers(doc)
    roots = {f: os.path.join(src, "models", f) for f in level if f not in ("testbenches", "stimuli")}
    roots["testbenches"] = os.path.join(src, "testbenches")
    roots["stimuli"] = os.path.join(src, "stimuli")
    missing = [f for f in os.listdir(os.path.join(src, "models"))
               if os.path.isdir(os.path.join(src, "models", f)) and f not in level]
    bad = [f"models/{f}/: a folder in no layer of docs/architecture.md" for f in sorted(missing)]
    include = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
    checked = 0
    for folder, root in sorted(roots.items()):
        for dirpath, _, files in os.walk(root):
            if "verilog" in dirpath.split(os.sep):
                continue
            for name in sorted(files):
                if not name.endswith((".cpp", ".hpp", ".h", ".cu", ".cuh")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, src)
                with open(path, errors="replace") as f:
                    for n, line in enumerate(f, 1):
                        m = include.match(line)
                        if not m:
                            continue
                        checked += 1
                        target = m.group(1)
                        head = target.split("/")[0] if "/" in target else None
                        if head in level:
                            if level[head] > level[folder]:
                                bad.append(f"{rel}:{n}: {folder} includes {target}, a layer above "
                                           f"it ({head})")
                        elif folder in ("testbenches", "stimuli"):
                            continue  # the tools' own headers, beside them or on their path
                        elif folder == "rtl" and re.match(r"(V\w+|verilated\w*)\.h$", target):
                            continue  # Verilator's runtime and the classes it generates
                        elif not os.path.exists(os.path.join(dirpath, target)):
                            bad.append(f"{rel}:{n}: {folder} includes {target}, in no layer")
    for b in bad:
        print(b)
    print(f"layering: {checked} includes checked, {len(bad)} against the layers")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
