#!/usr/bin/env bash
# The aarch64 (Booster) build: makes the arm64 sysroot and host tools if missing
# (scripts/make-arm64-sysroot.sh), cross-builds with cmake/toolchains/aarch64-linux-gnu.cmake into
# build-arm64/ (or $NND_ARM64_BUILD_DIR), and runs under qemu-aarch64 -cpu cortex-a76 the tests
# that do not need the JIT: unit, io, fixtures, real networks and graph passes on the reference
# engine, the daemon's in-process tests, the CPU probe and a daemon/client session (arm64.*),
# and the JIT tests of every architecture (tests/jit_common: NEON against the reference engine,
# random networks, fixtures and real networks; the whole executable, about a minute under qemu;
# skipped with a message while the build has no AArch64 code generator); then it builds the arm64
# Debian packages and checks them (package.lintian).
#
# Tests that start another aarch64 program themselves get the emulator as a command prefix
# (NND_TEST_EXEC_PREFIX, tests/support/exec_prefix.h): nnd's lifecycle tests that load no model
# (daemon.lifecycle_emulated). Not run here: the rest, which need nnd's model validator child (nnd
# re-executing itself), and the integration, client, tools, python and soak tests: without
# binfmt_misc the x86 host cannot execute an aarch64 file; arm64.daemon_client_session covers nnd
# + nnctl + nnrun through the emulator instead.
# tests/jit (x86's generators and encodings) is not built for aarch64.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NND_ARM64_BUILD_DIR:-$root/build-arm64}
export NND_ARM64_SYSROOT=${NND_ARM64_SYSROOT:-$build/sysroot}
jobs=$(nproc)

"$root/scripts/make-arm64-sysroot.sh" "$NND_ARM64_SYSROOT"
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S "$root" -B "$build" --toolchain "$root/cmake/toolchains/aarch64-linux-gnu.cmake" \
  -DNND_ARM64_SYSROOT="$NND_ARM64_SYSROOT" -DCMAKE_BUILD_TYPE=Release -DNND_WERROR=ON \
  "${launcher[@]}" >/dev/null
# Only what the tests below run (nnd, nnctl and nnrun come with nnd_test_arm64).
cmake --build "$build" -j"$jobs" --target nnd_test_unit nnd_test_io nnd_test_fixtures \
  nnd_test_real nnd_test_passes nnd_test_daemon nnd_test_arm64 nnd_test_jit_common
# One ctest test per test executable in a cross build (tests/CMakeLists.txt, nnd_add_gtests).
(cd "$build" && ctest --output-on-failure -j"$jobs" --timeout 900 \
  -L '^(unit|io|fixtures|real|passes|daemon|arm64|jit_common)$')
# The arm64 Debian packages (packaging/cross_packages.cmake): what cpack installs (the man pages run
# the programs under qemu), then package.lintian builds, lints and checks them on the host.
cmake --build "$build" -j"$jobs" --target nnd_packaged
(cd "$build" && ctest --output-on-failure --timeout 900 -R '^package\.lintian$')
