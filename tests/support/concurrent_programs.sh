#!/bin/sh
# gpusc exec of a script that runs two CUDA programs at once (docs/cuda-programs.md, "Processes"):
# the first (`processes hold`) uses the simulator gpusc exec started and holds it until the second
# (`processes child`) has run; the second, finding it in use, starts a simulator of its own with
# the same settings, whose results go in a folder inside the run's. Both compute correctly.
#   concurrent_programs.sh GPUSC PROCESSES_PROGRAM
. "$(dirname "$0")/program_test_prelude.sh"
"$gpusc" exec -q --mode functional -p rtx3070 -o "$tmp/out" -- sh -c "
  '$prog' hold '$tmp/flag' &
  i=0
  while [ ! -e '$tmp/flag.ready' ] && [ \$i -lt 600 ]; do sleep 0.1; i=\$((i + 1)); done
  '$prog' child
  touch '$tmp/flag.go'
  wait" >"$tmp/stdout" 2>&1
status=$?
cat "$tmp/stdout"
[ $status -eq 0 ] || { echo "FAILED: gpusc exec exited with $status"; exit 1; }
grep -q "^held: correct" "$tmp/stdout" || { echo "FAILED: the holding program"; exit 1; }
grep -q "^child: gpusc rtx3070 8.6 untimed correct" "$tmp/stdout" ||
  { echo "FAILED: the second program (not rtx3070, functional mode and correct)"; exit 1; }
python3 - "$tmp/out" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
top = json.load(open(os.path.join(out, "stats.json")))["launches"]
nested = glob.glob(os.path.join(out, "processes-*", "stats.json"))
if len(top) != 1 or len(nested) != 1 or len(json.load(open(nested[0]))["launches"]) != 1:
    print(f"FAILED: {len(top)} launches in the run's stats.json (expected the holder's 1), "
          f"{len(nested)} folders of another simulator inside it (expected 1, of 1 launch)")
    sys.exit(1)
print("PASS: one launch in the run's folder, one in", os.path.relpath(nested[0], out))
PY
