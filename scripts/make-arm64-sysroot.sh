#!/usr/bin/env bash
# Makes what the aarch64 cross build needs (cmake/toolchains/aarch64-linux-gnu.cmake): Debian's
# cross compiler and qemu-user on the host, and a sysroot holding the arm64 builds of the libraries
# nnd links, with their whole run-time dependency closure (qemu-aarch64 -L runs the binaries from it).
#
#   scripts/make-arm64-sysroot.sh [SYSROOT]     default: $NND_ARM64_SYSROOT or build-arm64/sysroot
#
# Why not `dpkg --add-architecture arm64` and the arm64 -dev packages: libhdf5-dev, hdf5-helpers and
# libyaml-cpp-dev are not Multi-Arch: same, so their arm64 versions would remove the amd64 ones. The
# sysroot is made from the arm64 .debs instead, unpacked with dpkg -x, through a private apt state
# (package lists and an empty "installed" set in SYSROOT.apt/), so the host's apt and dpkg state are
# left alone. libc6-dev and linux-libc-dev stay out: the cross compiler brings its own C headers and
# those of the sysroot would shadow them.
#
# Idempotent: a second run with the same package list only checks and exits (no network).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
sysroot=$(realpath -m "${1:-${NND_ARM64_SYSROOT:-$root/build-arm64/sysroot}}")

# The arm64 counterparts of scripts/install-deps.sh's libraries: what the cross build links and
# includes. Left out: libcapstone-dev (the x86 decoder of the JIT tests, not built for aarch64).
packages=(
  libhdf5-dev libonnx-dev libprotobuf-dev libzip-dev zlib1g-dev nlohmann-json3-dev libcli11-dev
  libgtest-dev libasmjit-dev libyaml-cpp-dev libsystemd-dev
)
# Never unpacked (see above), whoever depends on them.
excluded='^(libc6-dev|linux-libc-dev|libcrypt-dev|libnsl-dev|rpcsvc-proto|libtirpc-dev)$'

# --- host tools: the cross compiler and the emulator ------------------------------------------
"$root/scripts/install-deps.sh" g++-aarch64-linux-gnu qemu-user

# --- the sysroot -----------------------------------------------------------------------------
# The stamp records what the sysroot was made from; the same request finds it and stops here.
# .nnd-shlibs: the shlibs lines of every unpacked package ("libyaml-cpp 0.7 libyaml-cpp0.7 (>= 0.7.0)"),
# from which the cross build's Debian packages get their Depends (packaging/cross_depends.cmake):
# dpkg-shlibdeps cannot, the sysroot's packages being unpacked, not installed.
request="packages: ${packages[*]}"$'\n'"excluded: $excluded"$'\n'"index: .nnd-shlibs"
stamp=$sysroot/.nnd-sysroot
if [ -f "$stamp" ] && [ "$(sed -n '1,3p' "$stamp")" = "$request" ]; then
  exit 0
fi

state=$sysroot.apt
mkdir -p "$state/lists/partial" "$state/cache/archives/partial" "$state/debs"
: >"$state/status"  # nothing "installed": apt resolves the whole closure
apt_opts=(
  -o "Dir::State=$state" -o "Dir::State::Lists=$state/lists" -o "Dir::State::status=$state/status"
  -o "Dir::Cache=$state/cache" -o "APT::Architecture=arm64" -o "APT::Architectures::=arm64"
  -o "Debug::NoLocking=1" -o "Acquire::Languages=none" -o "APT::Sandbox::User=$(id -un)"
)
echo "make-arm64-sysroot: arm64 package lists"
apt-get "${apt_opts[@]}" update -qq

# The run-time closure (Depends and Pre-Depends; no Recommends), concrete packages only.
mapfile -t closure < <(
  apt-cache "${apt_opts[@]}" depends --recurse --no-recommends --no-suggests --no-conflicts \
    --no-breaks --no-replaces --no-enhances "${packages[@]}" |
    grep -E '^[a-z0-9]' | sed 's/:arm64$//' | sort -u | grep -Ev "$excluded")
echo "make-arm64-sysroot: ${#closure[@]} arm64 packages into $sysroot"
(cd "$state/debs" && rm -f ./*.deb && apt-get "${apt_opts[@]}" download -qq "${closure[@]/%/:arm64}")

rm -rf "$sysroot"
mkdir -p "$sysroot"
for deb in "$state"/debs/*.deb; do
  dpkg-deb -x "$deb" "$sysroot"
  # Packages without shared libraries have no shlibs member (tar then fails: not an error).
  dpkg-deb --ctrl-tarfile "$deb" | tar -xOf - ./shlibs 2>/dev/null || true
done | grep -Ev '^[[:space:]]*(#|$)|^[a-z-]+:' | sort -u >"$sysroot/.nnd-shlibs"

# Absolute symlinks point into the host (/usr/lib/aarch64-linux-gnu/libfoo.so -> /lib/...): make
# them relative, so they resolve inside the sysroot wherever it lives.
while IFS= read -r -d '' link; do
  target=$(readlink "$link")
  case $target in
    /*) ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$sysroot$target")" "$link" ;;
  esac
done < <(find "$sysroot" -type l -print0)

{ printf '%s\n' "$request"; printf '%s\n' "${closure[@]}"; } >"$stamp"
echo "make-arm64-sysroot: done ($(du -sh "$sysroot" | cut -f1))"
