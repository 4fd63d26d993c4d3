#!/bin/sh
# gpusc exec of a program that links libcuda (the driver API): gpusc warns, naming the library,
# before the program starts; the program then ends as the machine's loader lets it (127 where no
# GPU driver is installed).
#   driver_api_warning.sh GPUSC PROGRAM
. "$(dirname "$0")/program_test_prelude.sh"
"$gpusc" exec -q --mode functional -o "$tmp/out" -- "$prog" >"$tmp/stdout" 2>"$tmp/stderr"
status=$?
cat "$tmp/stdout" "$tmp/stderr"
case $status in
  0 | 127) ;;
  *) echo "FAILED: gpusc exec exited with $status (0 or the loader's 127 expected)"; exit 1 ;;
esac
grep -q "warning: .* links libcuda\.so\.1: it calls the CUDA driver API" "$tmp/stderr" ||
  { echo "FAILED: no warning that the program links libcuda"; exit 1; }
echo "PASS: gpusc exec warned of libcuda"
