#!/usr/bin/env bash
# The two README commands:
#   ./build.sh run [gpusc run options]   set up, build, and run the default kernel on the default platform
#   ./build.sh test                      set up, build, and run the whole test suite (ctest, in parallel)
set -euo pipefail
cd "$(dirname "$0")"
what=${1:-run}
shift || true
./setup.sh
build=${GPUSC_BUILD_DIR:-build}
jobs=$(nproc)
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=${GPUSC_BUILD_TYPE:-Release} >/dev/null
case "$what" in
  run)
    cmake --build "$build" -j "$jobs" --target gpusc
    exec "$build/gpusc" run "$@"
    ;;
  test)
    cmake --build "$build" -j "$jobs"
    cd "$build" && exec ctest --output-on-failure -j "$jobs" --timeout 900 "$@"
    ;;
  *)
    echo "usage: ./build.sh run [gpusc run options] | ./build.sh test [ctest options]" >&2
    exit 2
    ;;
esac
