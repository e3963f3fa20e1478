#!/usr/bin/env bash
# Installs the nnclient and nnclient_dev components of a build tree into a temporary prefix, then
# builds projects outside nnd against that installed tree only: the consumer (CMake package:
# shared, static, C++ wrapper; and pkg-config) and examples/vision_process, and runs them.
#   run_consumer_test.sh BUILD_DIR SOURCE_DIR WORK_DIR FAKE_DAEMON "EXTRA_FLAGS" CHECK_NEEDED(0/1)
set -euo pipefail
build=$1 src=$2 work=$3 fake=$4 flags=$5 check_needed=$6
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
fail() { echo "FAIL: $*" >&2; exit 1; }

# The two library components: the runtime (libnnclient1) and the development files (-dev).
for component in nnclient nnclient_dev; do
  cmake --install "$build" --prefix "$prefix" --component $component >/dev/null
done
for f in include/nnclient.h include/nnclient.hpp; do
  [ -f "$prefix/$f" ] || fail "$f not installed"
done
so=$(find "$prefix" -name 'libnnclient.so.1' -print -quit)
[ -n "$so" ] || fail "libnnclient.so.1 not installed"
libdir=$(dirname "$so")
for f in libnnclient.so libnnclient.a pkgconfig/nnclient.pc cmake/nnclient/nnclientConfig.cmake \
         cmake/nnclient/nnclientConfigVersion.cmake cmake/nnclient/nnclientTargets.cmake; do
  [ -e "$libdir/$f" ] || fail "$libdir/$f not installed"
done
grep -q 'SONAME.*\[libnnclient.so.1\]' <<<"$(readelf -d "$so")" || fail "no SONAME libnnclient.so.1"
if [ "$check_needed" = 1 ]; then
  needed=$(readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
  for n in $needed; do
    case $n in libc.so.6|ld-linux-x86-64.so.2|ld-linux-aarch64.so.1|libpthread.so.0) ;; *) fail "libnnclient needs $n" ;; esac
  done
  echo "libnnclient NEEDED: $needed"
fi

# The Python package (component python), installed beside the library: it must load the
# installed libnnclient.so.1 by its soname (not the build tree's). Not in sanitizer builds (an
# instrumented library does not load into the interpreter).
py=/usr/bin/python3
if [ "$check_needed" = 1 ] && [ -x "$py" ] && "$py" -c "import numpy" 2>/dev/null; then
  echo "== python3 -c 'import nnclient' (installed)"
  cmake --install "$build" --prefix "$prefix" --component python >/dev/null
  [ -f "$prefix/lib/python3/dist-packages/nnclient/__init__.py" ] || fail "nnclient (Python) not installed"
  got=$(env -u NNCLIENT_LIBRARY PYTHONPATH="$prefix/lib/python3/dist-packages" LD_LIBRARY_PATH="$libdir" \
        "$py" -c "import nnclient; print(nnclient.library_path(), nnclient.version())")
  [ "$got" = "libnnclient.so.1 $(sed -n 's/^Version: //p' "$libdir/pkgconfig/nnclient.pc")" ] \
    || fail "installed Python package loaded '$got'"
  echo "$got"
fi

common=(-DCMAKE_BUILD_TYPE=Release "-DCMAKE_C_FLAGS=$flags" "-DCMAKE_CXX_FLAGS=$flags"
        "-DCMAKE_EXE_LINKER_FLAGS=$flags")
nobody=$work/nobody.sock

echo "== find_package(nnclient)"
cmake -S "$src/tests/client/consumer" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" "${common[@]}" >/dev/null
cmake --build "$work/cmake" >/dev/null
for exe in consumer_c consumer_static consumer_cpp consumer_cpp17; do
  "$work/cmake/$exe" "$nobody" || fail "$exe"
done
grep -q libnnclient <<<"$(readelf -d "$work/cmake/consumer_static")" && fail "consumer_static links the .so"

echo "== pkg-config nnclient"
PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --exists nnclient || fail "pkg-config does not find nnclient"
# Absolute paths under the prefix the files were installed to (not relative to the .pc file).
pc_libdir=$(PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --variable=libdir nnclient)
[ "$pc_libdir" = "$libdir" ] || fail "nnclient.pc libdir is '$pc_libdir', expected '$libdir'"
pc_incdir=$(PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --variable=includedir nnclient)
[ "$pc_incdir" = "$prefix/include" ] || fail "nnclient.pc includedir is '$pc_incdir'"
PKG_CONFIG_PATH=$libdir/pkgconfig cmake -S "$src/tests/client/consumer" -B "$work/pc" -DUSE_PKGCONFIG=ON \
  "${common[@]}" >/dev/null
PKG_CONFIG_PATH=$libdir/pkgconfig cmake --build "$work/pc" >/dev/null
LD_LIBRARY_PATH=$libdir "$work/pc/consumer_c" "$nobody" || fail "pkg-config consumer_c"

echo "== examples/vision_process"
cmake --no-warn-unused-cli -S "$src/examples/vision_process" -B "$work/vision" -DCMAKE_PREFIX_PATH="$prefix" "${common[@]}" >/dev/null
cmake --build "$work/vision" >/dev/null
set +e
out=$("$work/vision/vision_process" --endpoint "$nobody" --frames 1 2>&1); rc=$?
set -e
[ $rc -eq 1 ] || fail "vision_process without daemon: exit $rc ($out)"
grep -q NNCLIENT_E_DAEMON_NOT_RUNNING <<<"$out" || fail "vision_process message: $out"
sock=$work/fake.sock
"$fake" "$sock" & fake_pid=$!
trap 'kill $fake_pid 2>/dev/null || true' EXIT
for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.02; done
"$work/vision/vision_process" --endpoint "$sock" --ball-model double --detector-model pair \
  --frames 3 --patches 5 --fps 0 --timeout-ms 1000 || fail "vision_process against the fake daemon"
echo "== C++17 and C++20 wrapper against the fake daemon"
# Each prints the __cplusplus it was compiled with: the modes must really be C++17 and C++20.
out=$("$work/cmake/consumer_cpp17" "$nobody" "$sock") || fail "consumer_cpp17 against the fake daemon: $out"
grep -q "C++201703 wrapper: infer and zero-copy request OK" <<<"$out" || fail "consumer_cpp17: $out"
out=$("$work/cmake/consumer_cpp" "$nobody" "$sock") || fail "consumer_cpp against the fake daemon: $out"
grep -q "C++202002 wrapper: infer and zero-copy request OK" <<<"$out" || fail "consumer_cpp: $out"
echo "$out"
echo "consumer test passed"
