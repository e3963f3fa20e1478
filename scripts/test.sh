#!/usr/bin/env bash
# Quick start, command 2: installs what is missing, builds nnd and runs the whole test suite,
# first as a Release build, then built with AddressSanitizer + UndefinedBehaviorSanitizer, then
# the daemon/client/integration (concurrency) tests and the JIT's worker pool built with
# ThreadSanitizer.
# then the libFuzzer targets (clang) for a short run each plus their regression inputs.
# ctest prints a summary line for each. NND_TEST_SANITIZE=0 skips the ASan+UBSan pass,
# NND_TEST_TSAN=0 the ThreadSanitizer pass, NND_TEST_FUZZ=0 the fuzz pass;
# NND_FUZZ_SECONDS (default 20) is each target's fuzzing time. Last, the aarch64 cross build and
# its tests under qemu-aarch64 (scripts/test-arm64.sh); NND_TEST_ARM64=0 skips it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
jobs=$(nproc)

# The sanitizer passes build with -O1 and line tables only (file:line in every report, no variable
# debug info): that halves their compile time against RelWithDebInfo's -O2 -g (six of the largest
# files, ASan+UBSan, one side-by-side run: 152 s against 78 s), and -O1 is what the sanitizers'
# own documentation asks for. NDEBUG stays as in RelWithDebInfo. The test programs' own code
# skips UBSan's null and alignment checks (tests/CMakeLists.txt says why and what it saves).
sanitizer_flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
                 "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG")

# Each stage's wall time, printed when it ends and again together at the end: CI's budget is
# spent here, and a stage that grows should show which one.
stage_names=() stage_seconds=() stage_start=$SECONDS stage_current=""
stage() {  # stage NAME: ends the running stage (if any) and starts NAME
  if [ -n "$stage_current" ]; then
    stage_names+=("$stage_current") stage_seconds+=($((SECONDS - stage_start)))
    echo "=== ${stage_current}: $((SECONDS - stage_start)) s"
  fi
  stage_current=$1 stage_start=$SECONDS
  [ -z "$1" ] || echo "=== $1"
}
stage_summary() {
  stage ""
  echo "=== stage times (wall):"
  for i in "${!stage_names[@]}"; do
    printf '    %5d s  %s\n' "${stage_seconds[$i]}" "${stage_names[$i]}"
  done
  printf '    %5d s  total\n' "$SECONDS"
}

run_suite() {  # run_suite BUILD_DIR [cmake args...]
  local dir=$1; shift
  cmake -S "$root" -B "$dir" -DNND_WERROR=ON "$@" >/dev/null
  local start=$SECONDS
  cmake --build "$dir" -j"$jobs"
  echo "=== $(basename "$dir"): built in $((SECONDS - start)) s"
  start=$SECONDS
  (cd "$dir" && ctest --output-on-failure -j"$jobs" --timeout 600)
  echo "=== $(basename "$dir"): tests ran in $((SECONDS - start)) s"
}

stage "Release build: tests"
run_suite "$root/build" -DCMAKE_BUILD_TYPE=Release
if [ "${NND_TEST_SANITIZE:-1}" != 0 ]; then
  stage "AddressSanitizer + UndefinedBehaviorSanitizer build: tests"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    run_suite "$root/build-asan" "${sanitizer_flags[@]}" -DNND_SANITIZE=ON
fi
if [ "${NND_TEST_TSAN:-1}" != 0 ]; then
  # Only what the concurrency tests need; the installed-consumer test is left out (it builds
  # projects against the installed library with the host compiler flags, not TSan's).
  stage "ThreadSanitizer build: daemon, client, integration and JIT worker-pool tests"
  cmake -S "$root" -B "$root/build-tsan" -DNND_WERROR=ON "${sanitizer_flags[@]}" -DNND_TSAN=ON \
    >/dev/null
  cmake --build "$root/build-tsan" -j"$jobs" --target nnd nnctl nnd_fake_daemon nnd_test_daemon \
    nnd_test_client nnd_test_integration nnd_test_jit_common
  # Also the JIT's worker pool (one call on several threads): its own tests and concurrent calls
  # of one engine. (TSan sees the pool's C++ hand-offs; the generated code is not instrumented.)
  (cd "$root/build-tsan" &&
    export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 NND_TEST_TIMEOUT_SCALE=4 &&
    ctest --output-on-failure -j"$jobs" --timeout 900 -L 'daemon|client|integration' -LE install &&
    ctest --output-on-failure --timeout 900 -R '^jit\.(WorkerPool|JitThreadsConcurrency)\.')
fi
if [ "${NND_TEST_FUZZ:-1}" != 0 ]; then
  stage "libFuzzer build (clang): ${NND_FUZZ_SECONDS:-20} s per fuzz target + regression inputs"
  CC=clang CXX=clang++ cmake -S "$root" -B "$root/build-fuzz" -DCMAKE_BUILD_TYPE=Release \
    -DNND_WERROR=ON -DNND_FUZZ=ON -DNND_BUILD_TESTS=OFF >/dev/null
  cmake --build "$root/build-fuzz" -j"$jobs" --target nnd_fuzz
  (cd "$root/build-fuzz" && ctest -L fuzz --output-on-failure -j"$jobs")
fi
if [ "${NND_TEST_ARM64:-1}" != 0 ]; then
  stage "aarch64 cross build (qemu-aarch64 -cpu cortex-a76): tests"
  "$root/scripts/test-arm64.sh"
fi
stage_summary
