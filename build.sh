#!/usr/bin/env bash
# The two README commands:
#   ./build.sh run [gpusc run options]   set up, build, and run the default kernel on the default platform
#   ./build.sh test [ctest options]      set up, build, and run the whole test suite (ctest, in parallel)
# and the reliability checks CI runs after them (docs/reliability.md):
#   ./build.sh sanitize                  clang build with AddressSanitizer + UndefinedBehaviorSanitizer:
#                                        the test suite (a chosen part: the catalog at tiny among it)
#                                        and every fuzz target for GPUSC_FUZZ_SECONDS (45)
#   ./build.sh fuzz [SECONDS]            the same build; every fuzz target for SECONDS (default 60)
#   ./build.sh tsan                      clang build with ThreadSanitizer: the host-thread tests,
#                                        catalog kernels on three platforms with host threads among
#                                        them, each checked equal to one thread
#   ./build.sh fuzz-config [SECONDS]     the Release build; the configuration fuzzer for SECONDS
#                                        (default 600): platform variants on catalog kernels, each
#                                        run correct or refused (GPUSC_FUZZ_SEED: its seed)
# Each step prints one line naming its log file (under the build folder's logs/); a step that
# fails prints the end of its log (the test step: the failing tests' output) and stops.
set -euo pipefail
cd "$(dirname "$0")"
what=${1:-run}
shift || true
case "$what" in
  run | test | sanitize | fuzz | tsan | fuzz-config) ;;
  *)
    echo "usage: ./build.sh run [gpusc run options] | ./build.sh test [ctest options]" \
      "| ./build.sh sanitize | ./build.sh fuzz [SECONDS] | ./build.sh tsan" \
      "| ./build.sh fuzz-config [SECONDS]" >&2
    exit 2
    ;;
esac
build=${GPUSC_BUILD_DIR:-build}
# The sanitizer build: clang, ASan + UBSan, libFuzzer instrumentation (one build for both).
sbuild=${GPUSC_SANITIZE_BUILD_DIR:-build-sanitize}
# The ThreadSanitizer build (host threads evaluating SMs).
tbuild=${GPUSC_TSAN_BUILD_DIR:-build-tsan}
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
# build_step DIR LOGNAME TARGET...: builds the targets, then says how many build steps ran.
build_step() {
  local dir=$1 log=$2 t0=$SECONDS
  shift 2
  step "building $* on $jobs cores" "$logs/$log" cmake --build "$dir" -j "$jobs" --target "$@"
  echo "build.sh: built $* in $((SECONDS - t0)) s" \
    "(ninja steps run: $(grep -c '^\[[0-9]*/[0-9]*\] ' "$logs/$log" || true))"
}

# parallel_tests DIR LABEL ENTRY...: runs each ENTRY (a test executable in DIR/tests, a colon,
# and its gtest filter) $jobs at a time, in the order given (so the longest go first and both
# cores work until the end), each into its own log; prints a line for each, and a failing one's
# log, and fails if any fails.
parallel_tests() {
  local dir=$1 label=$2 n=0 t
  shift 2
  for t in "$@"; do
    echo "$dir/tests/${t%%:*} ${t#*:} $logs/$label.$((n++)).log"
  done | xargs -P "$jobs" -L 1 sh -c '"$1" --gtest_brief=1 --gtest_filter="$2" >"$3" 2>&1 &&
    echo "$0: ${1##*/} $2 ok ($(grep "^\[  PASSED  \]" "$3"))" ||
    { cat "$3"; echo "$0: ${1##*/} $2 FAILED"; exit 1; }' "$label"
}

step "checking and installing Debian packages" "$logs/setup.log" ./setup.sh

case "$what" in
  run | test | fuzz-config)
    step "configuring ($build, ${GPUSC_BUILD_TYPE:-Release})" "$logs/configure.log" \
      cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE="${GPUSC_BUILD_TYPE:-Release}"
    ;;
  sanitize | fuzz)
    step "configuring ($sbuild, clang, address + undefined sanitizers, fuzzing)" \
      "$logs/configure-sanitize.log" \
      env CC=clang CXX=clang++ cmake -S . -B "$sbuild" -G Ninja -DCMAKE_BUILD_TYPE=Sanitize \
      -DGPUSC_SANITIZE=address,undefined -DGPUSC_FUZZ=ON
    # SystemC runs SC_THREADs on QuickThreads coroutine stacks and tells ASan about each switch,
    # but ASan's fake stacks for use-after-return do not survive those switches: the shader
    # cluster's threads crash with detect_stack_use_after_return=1 (docs/reliability.md).
    export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_stack_use_after_return=0:detect_leaks=1:abort_on_error=0}
    export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
    export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/fuzz/lsan.supp:print_suppressions=0}
    ;;
  tsan)
    step "configuring ($tbuild, clang, thread sanitizer)" "$logs/configure-tsan.log" \
      env CC=clang CXX=clang++ cmake -S . -B "$tbuild" -G Ninja -DCMAKE_BUILD_TYPE=Sanitize \
      -DGPUSC_SANITIZE=thread
    # A race report fails the run (exit 66) and prints both threads' stacks.
    export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:exitcode=66:second_deadlock_stack=1}
    ;;
esac

case "$what" in
  run)
    build_step "$build" build.log gpusc
    echo "build.sh: running $build/gpusc run $*"
    exec "$build/gpusc" run "$@"
    ;;
  test)
    build_step "$build" build.log all
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
    ;;
  sanitize)
    # The test executables run under the sanitizers: the PTX front end, the engine's semantics
    # and SIMT, configuration and launch specs, the random programs in both modes on two
    # platforms, every catalog kernel at tiny in functional mode and through the memory hierarchy
    # of gtx480 and of rtx3070 (timing model, memory system, power and PDN code), sampled runs
    # (launches extrapolated, waves cut and their CTAs run functionally), and the shader
    # cluster's draws (its SystemC threads). Building the whole suite a second time does not fit
    # CI's budget. Each entry is an executable and the gtest filter it runs with.
    # (test_catalog runs as two processes, so both cores work until the end.)
    # Longest first (test_sampling's sampled runs take a minute and a half under the sanitizers,
    # so they run as two processes, as the catalog does).
    sanitized_tests=('test_sampling:SampledRun.NewGroups*:WaveSampledRun.ExtrapolatesTheWaves*'
      'test_sampling:-SampledRun.NewGroups*:WaveSampledRun.ExtrapolatesTheWaves*'
      'test_catalog:Platforms/*_rtx3070' 'test_catalog:Functional/*_tiny:Platforms/*_gtx480'
      test_random_ptx:* test_wave_sampling:*
      test_shader_cluster:ShaderCluster.BenchmarkOutputsEqualTheReferenceInterpreter
      test_semantics:* test_launch_spec:* test_config:* test_simt:* test_ptx_parser:*)
    build_step "$sbuild" build-sanitize.log fuzz_ptx fuzz_platform fuzz_launch_spec fuzz_run \
      $(printf '%s\n' "${sanitized_tests[@]%%:*}" | sort -u)
    echo "build.sh: running ${sanitized_tests[*]%%:*} under the sanitizers (logs: $logs/sanitized.*.log)"
    parallel_tests "$sbuild" sanitized "${sanitized_tests[@]}"
    echo "build.sh: replaying the fuzz targets' seeds and regressions"
    (cd "$sbuild" && ctest --output-on-failure -j "$jobs" -R '^fuzz\.')
    echo "build.sh: fuzzing each target for ${GPUSC_FUZZ_SECONDS:-45} s"
    exec tests/fuzz/run_fuzzers.sh "$sbuild" "${GPUSC_FUZZ_SECONDS:-45}" "$jobs"
    ;;
  fuzz)
    build_step "$sbuild" build-sanitize.log fuzz_ptx fuzz_platform fuzz_launch_spec fuzz_run
    exec tests/fuzz/run_fuzzers.sh "$sbuild" "${1:-60}" "$jobs"
    ;;
  fuzz-config)
    build_step "$build" build.log gpusc
    seed=${GPUSC_FUZZ_SEED:-$(date +%s)}
    out="$build/config-fuzz/seed-$seed"
    echo "build.sh: the configuration fuzzer for ${1:-600} s, seed $seed, $jobs at a time" \
      "(results: $out; a defect's reproducer: $out/defects/)"
    exec python3 tests/support/config_fuzz.py --gpusc "$build/gpusc" --out "$out" --seed "$seed" \
      --seconds "${1:-600}" --jobs "$jobs"
    ;;
  tsan)
    build_step "$tbuild" build-tsan.log test_timing test_parallel_ctas
    # The host-thread team and the timing engine's thread tests: background work, batches whose
    # first work throws, the PDN stepped by the workers (fixed and adaptive policies, the workers
    # waking for it between the SMs' cycles), a voltage sink failing on one, a deadlocked launch;
    # and whole catalog kernels with global atomics, barriers, shuffles, irregular memory traffic
    # and several launches on the crossbar GTX480, on a mesh large enough for its routers to run
    # on the threads too and on rtx3070's processing blocks, each with 2 and 3 host threads (more
    # threads than cores: the workers sleep and wake too) against one, and under the adaptive
    # policy, which leaves the threads out and takes them back as it measures.
    # The functional engine's CTAs on two threads (test_parallel_ctas): faults on several at
    # once, a time limit, and catalog kernels with several launches, barriers and shared tiles.
    # (Not bfs: its blocks race on plain stores of one value, a race of the kernel's that
    # ThreadSanitizer rightly reports.)
    # Three processes, longest first: under ThreadSanitizer the adaptive policy's test alone
    # takes about a minute, and each process keeps about one core busy.
    echo "build.sh: ThreadSanitizer: test_timing's host-thread tests, test_parallel_ctas (logs: $logs/tsan.*.log)"
    parallel_tests "$tbuild" tsan \
      'test_timing:TimingHostThreads.TheAdaptivePolicyGivesTheSameRuns:TimingHostThreads.HandingOn*' \
      'test_timing:HostWorkers.*:TimingHostThreads*:-TimingHostThreads.TheAdaptivePolicyGivesTheSameRuns:TimingHostThreads.HandingOn*' \
      'test_parallel_ctas:ParallelCtas.*:*/scan:*/sgemm:*/transpose_padded'
    ;;
esac
