# Sourced by the shell tests of CUDA programs (SCRIPT GPUSC PROGRAM ...): sets $gpusc and $prog,
# says skipped (exit 77, ctest's SKIP_RETURN_CODE) when the program was not built, and gives a
# temporary folder $tmp removed at exit.
gpusc=$1
prog=$2
if [ ! -x "$prog" ]; then
  echo "skipped: $prog was not built: nvcc was not found when gpusc was configured"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
