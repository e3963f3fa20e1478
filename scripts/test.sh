#!/usr/bin/env bash
# Quick start, command 2: installs what is missing, builds nnd and runs the whole test suite,
# first as a Release build, then built with AddressSanitizer + UndefinedBehaviorSanitizer.
# ctest prints a summary line for each. Set NND_TEST_SANITIZE=0 to skip the sanitizer pass.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
jobs=$(nproc)

run_suite() {  # run_suite BUILD_DIR [cmake args...]
  local dir=$1; shift
  cmake -S "$root" -B "$dir" -DNND_WERROR=ON "$@" >/dev/null
  cmake --build "$dir" -j"$jobs"
  (cd "$dir" && ctest --output-on-failure -j"$jobs" --timeout 600)
}

echo "=== Release build: tests"
run_suite "$root/build" -DCMAKE_BUILD_TYPE=Release
if [ "${NND_TEST_SANITIZE:-1}" != 0 ]; then
  echo "=== AddressSanitizer + UndefinedBehaviorSanitizer build: tests"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    run_suite "$root/build-asan" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNND_SANITIZE=ON
fi
