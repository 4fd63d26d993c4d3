#!/usr/bin/env bash
# The two README commands:
#   ./build.sh run [gpusc run options]   set up, build, and run the default kernel on the default platform
#   ./build.sh test [ctest options]      set up, build, and run the whole test suite (ctest, in parallel)
# Each step prints one line naming its log file (under the build folder's logs/); a step that
# fails prints the end of its log (the test step: the failing tests' output) and stops.
set -euo pipefail
cd "$(dirname "$0")"
what=${1:-run}
shift || true
case "$what" in
  run | test) ;;
  *)
    echo "usage: ./build.sh run [gpusc run options] | ./build.sh test [ctest options]" >&2
    exit 2
    ;;
esac
build=${GPUSC_BUILD_DIR:-build}
jobs=$(nproc)
logs="$build/logs"
mkdir -p "$logs"

# step NAME LOG COMMAND...: runs COMMAND with its output in LOG.
step() {
  local name=$1 log=$2
  shift 2
  echo "build.sh: $name (log: $log)"
  if ! "$@" >"$log" 2>&1; then
    echo "build.sh: $name failed; the end of $log:"
    tail -n 40 "$log"
    exit 1
  fi
}

step "checking and installing Debian packages" "$logs/setup.log" ./setup.sh
step "configuring ($build, ${GPUSC_BUILD_TYPE:-Release})" "$logs/configure.log" \
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE="${GPUSC_BUILD_TYPE:-Release}"
target=all
[[ $what == run ]] && target=gpusc
todo=$(ninja -C "$build" -n "$target" 2>/dev/null | grep -c '^\[' || true)
step "building $target: $todo steps on $jobs cores" "$logs/build.log" \
  cmake --build "$build" -j "$jobs" --target "$target"

if [[ $what == run ]]; then
  echo "build.sh: running $build/gpusc run $*"
  exec "$build/gpusc" run "$@"
fi

log="$logs/test.log"
echo "build.sh: running the tests with ctest -j $jobs (log: $log)"
rc=0
(cd "$build" && ctest --output-on-failure -j "$jobs" --timeout 900 "$@") >"$log" 2>&1 || rc=$?
if ((rc != 0)); then
  # Everything but the passing tests' lines: the failing tests' output and the summary.
  grep -v -E '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .* Passed ' "$log" || true
  exit "$rc"
fi
sed -n '/tests passed/,$p' "$log"
