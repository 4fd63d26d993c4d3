#!/bin/sh
# gpusc exec of a script that starts a CUDA program without the descriptor gpusc exec passed down
# (docs/cuda-programs.md, "Processes"): Python's subprocess closes every descriptor above 2 by
# default, and a shell redirection may put a file where the socket was. Each program starts a
# simulator of its own with the run's settings, computes correctly, and writes its results in a
# folder inside the run's.
#   closed_descriptors.sh GPUSC PROCESSES_PROGRAM
. "$(dirname "$0")/program_test_prelude.sh"
"$gpusc" exec -q --mode functional -p rtx3070 -o "$tmp/out" -- python3 -c "
import os, subprocess, sys
fd = int(os.environ['GPUSC_CUDART_FD'])
# closed (subprocess's default), then a file in the socket's place
subprocess.run(['$prog', 'child'], check=True)
null = os.open(os.devnull, os.O_RDONLY)
subprocess.run(['$prog', 'child'], check=True, close_fds=False,
               preexec_fn=lambda: os.dup2(null, fd))
" >"$tmp/stdout" 2>&1
status=$?
cat "$tmp/stdout"
[ $status -eq 0 ] || { echo "FAILED: gpusc exec exited with $status"; exit 1; }
[ "$(grep -c "^child: gpusc rtx3070 8.6 untimed correct" "$tmp/stdout")" -eq 2 ] ||
  { echo "FAILED: not both programs ran correctly on rtx3070 in functional mode"; exit 1; }
python3 - "$tmp/out" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
nested = glob.glob(os.path.join(out, "processes-*", "stats.json"))
if len(nested) != 2 or any(len(json.load(open(n))["launches"]) != 1 for n in nested):
    print(f"FAILED: {len(nested)} folders of other simulators inside the run's (expected 2, of "
          "1 launch each)")
    sys.exit(1)
print("PASS: each program's launch in a folder of its own inside the run's")
PY
