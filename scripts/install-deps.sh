#!/usr/bin/env bash
# Installs the Debian packages nnd needs to build and test, only those not yet installed
# (idempotent: a second run installs nothing and touches no package list). Run as root or with
# sudo available.
#
#   scripts/install-deps.sh              nnd's build and test packages (the list below)
#   scripts/install-deps.sh PACKAGE...   those packages instead, the same way (other scripts'
#                                        host tools: scripts/make-arm64-sysroot.sh)
set -euo pipefail

packages=(
  build-essential cmake pkg-config    # toolchain
  libhdf5-dev                         # Keras .h5 loading (HDF5 C API)
  libonnx-dev libprotobuf-dev         # ONNX loading (the generated onnx.pb.h classes, protobuf runtime)
  libzip-dev zlib1g-dev               # Keras 3 .keras archives (zip; CRC-32 of stored entries)
  nlohmann-json3-dev                  # the Keras model_config JSON
  libcli11-dev                        # command-line parsing of the tools
  libgtest-dev googletest             # tests
  libasmjit-dev                       # the JIT engine (core/jit)
  libcapstone-dev                     # tests/jit: decodes the SSE4.1 code to prove it has no VEX/EVEX
  llvm                                # nnbench --cpu-model (tools/cost_model): llvm-mc, llvm-mca, llc
  libyaml-cpp-dev                     # the daemon's config
  libsystemd-dev                      # sd_notify (READY/RELOADING/STOPPING/WATCHDOG)
  systemd                             # systemd-analyze verify of systemd/nnd.service (test)
  qemu-user                           # tests/jit: the robot's CPU (qemu-x86_64 -cpu Denverton, no AVX)
  valgrind                            # tests/memcheck: memcheck runs (label memcheck)
  clang libclang-rt-14-dev            # tests/fuzz: libFuzzer + sanitizer runtimes (label fuzz)
  help2man pandoc                     # man/: man pages from the tools' --help and config/SCHEMA.md
  man-db bsdextrautils                # man.pages test: man -l, lexgrog, col
  dpkg-dev file lintian               # packaging/: cpack's dpkg-shlibdeps and file; package.lintian test
  python3 python3-numpy python3-pytest  # the Python client (client/python) and its tests (label python)
)

[ $# -gt 0 ] && packages=("$@")

missing=()
for p in "${packages[@]}"; do
  if ! grep -q "install ok installed" <<<"$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: run as root (missing: ${missing[*]})" >&2; exit 1; }
  SUDO=sudo
fi
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
