#!/usr/bin/env bash
# The two README commands:
#   ./build.sh run [gpusc run options]   set up, build, and run the default kernel on the default platform
#   ./build.sh test                      set up, build, and run the whole test suite (ctest, in parallel)
# and the reliability checks CI runs after them (docs/reliability.md):
#   ./build.sh sanitize                  clang build with AddressSanitizer + UndefinedBehaviorSanitizer:
#                                        the test suite (a chosen part), the catalog in both modes
#                                        at tiny, and every fuzz target for GPUSC_FUZZ_SECONDS (45)
#   ./build.sh fuzz [SECONDS]            the same build; every fuzz target for SECONDS (default 60)
set -euo pipefail
cd "$(dirname "$0")"
what=${1:-run}
shift || true
./setup.sh
build=${GPUSC_BUILD_DIR:-build}
jobs=$(nproc)
configure() {
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=${GPUSC_BUILD_TYPE:-Release} >/dev/null
}
# The sanitizer build: clang, ASan + UBSan, libFuzzer instrumentation (one build for both).
sbuild=${GPUSC_SANITIZE_BUILD_DIR:-build-sanitize}
configure_sanitize() {
  CC=clang CXX=clang++ cmake -S . -B "$sbuild" -G Ninja -DCMAKE_BUILD_TYPE=Sanitize \
    -DGPUSC_SANITIZE=address,undefined -DGPUSC_FUZZ=ON >/dev/null
}
# SystemC runs SC_THREADs on QuickThreads coroutine stacks and tells ASan about each switch, but
# ASan's fake stacks for use-after-return do not survive those switches: the shader cluster's
# threads crash with detect_stack_use_after_return=1 (docs/reliability.md).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_stack_use_after_return=0:detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/fuzz/lsan.supp:print_suppressions=0}
case "$what" in
  run)
    configure
    cmake --build "$build" -j "$jobs" --target gpusc
    exec "$build/gpusc" run "$@"
    ;;
  test)
    configure
    cmake --build "$build" -j "$jobs"
    cd "$build" && exec ctest --output-on-failure -j "$jobs" --timeout 900 "$@"
    ;;
  sanitize)
    configure_sanitize
    # The test executables run under the sanitizers (the whole suite does not fit CI's budget).
    # The test executables run under the sanitizers: the PTX front end, the engine's semantics
    # and SIMT, configuration and launch specs, and the random programs in both modes on two
    # platforms. Building the whole suite a second time does not fit CI's budget; the catalog
    # run below covers the timing model, memory system, power and PDN code.
    sanitized_tests=(test_ptx_parser test_semantics test_simt test_config test_launch_spec
                     test_random_ptx)
    cmake --build "$sbuild" -j "$jobs" --target gpusc fuzz_ptx fuzz_platform fuzz_launch_spec \
      fuzz_run "${sanitized_tests[@]}"
    for t in "${sanitized_tests[@]}"; do echo "$sbuild/tests/$t"; done |
      xargs -P "$jobs" -I{} sh -c '{} --gtest_brief=1 >{}.log 2>&1 && echo "sanitized: {} ok" ||
                                   { cat {}.log; echo "sanitized: {} FAILED"; exit 1; }'
    (cd "$sbuild" && ctest --output-on-failure -j "$jobs" -R '^fuzz\.')
    tests/run_catalog.sh "$sbuild/gpusc" "$sbuild/catalog-runs" "$jobs"
    exec tests/fuzz/run_fuzzers.sh "$sbuild" "${GPUSC_FUZZ_SECONDS:-45}" "$jobs"
    ;;
  fuzz)
    configure_sanitize
    cmake --build "$sbuild" -j "$jobs" --target fuzz_ptx fuzz_platform fuzz_launch_spec fuzz_run
    exec tests/fuzz/run_fuzzers.sh "$sbuild" "${1:-60}" "$jobs"
    ;;
  *)
    echo "usage: ./build.sh run [gpusc run options] | ./build.sh test [ctest options]" \
         "| ./build.sh sanitize | ./build.sh fuzz [SECONDS]" >&2
    exit 2
    ;;
esac
