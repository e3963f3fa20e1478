#!/usr/bin/env bash
# package.lintian test: builds the Debian packages of a build tree with cpack (into WORK_DIR, not
# the build tree's own package folder), runs lintian on them (fails on any error, prints
# warnings and the rest), and checks what each package holds and depends on.
#   check_packages.sh BUILD_DIR SOURCE_PACKAGING_DIR WORK_DIR DEBIAN_VERSION LIBDIR [ARCH [NM]]
# ARCH: the packages' Debian architecture (default: the host's; arm64 for the aarch64 cross build),
# NM: an nm that reads the target's ELF files (default: nm).
set -euo pipefail
build=$1 src=$2 work=$3 version=$4 libdir=$5 arch=${6:-} nm=${7:-nm}
[ -n "$arch" ] || arch=$(dpkg --print-architecture)
fail=0
bad() { echo "FAIL: $*" >&2; fail=1; }

rm -rf "$work"
mkdir -p "$work"
echo "== cpack"
cpack --config "$build/CPackConfig.cmake" -B "$work" >"$work/cpack.log" 2>&1 ||
  { cat "$work/cpack.log"; exit 1; }
declare -A deb
packages="libnnclient1 libnnclient-dev nnd nnd-tools python3-nnclient libnnd1 libnnd-dev"
for p in $packages; do
  a=$arch; [ $p = python3-nnclient ] && a=all
  deb[$p]=$work/${p}_${version}_${a}.deb
  [ -f "${deb[$p]}" ] || { cat "$work/cpack.log"; echo "FAIL: ${deb[$p]} not built" >&2; exit 1; }
done

echo "== lintian"
# Every tag lintian has an opinion on is printed (warnings and info too); errors fail the test.
# Run as root, lintian says it should not be (it unpacks untrusted packages); these are our own.
# One tag is suppressed: initial-upload-closes-no-bugs asks the first Debian changelog entry to
# close an ITP bug of the Debian archive; these packages are not uploaded to Debian and have
# none.
set +e
lintian --display-info --fail-on error --suppress-tags initial-upload-closes-no-bugs "${deb[@]}" 2>&1 |
  grep -v "running with root privileges"
rc=${PIPESTATUS[0]}
set -e
[ "$rc" -eq 0 ] || bad "lintian reports errors (exit $rc)"

contents() { dpkg-deb -c "$1" | awk '{print $6}' | sed 's|^\./|/|; s|/$||' | grep -v '^$'; }
must_have() {  # must_have PACKAGE PATH-REGEX...
  local p=$1; shift
  local list; list=$(contents "${deb[$p]}")
  for re in "$@"; do
    grep -Eq "^$re\$" <<<"$list" || bad "$p: nothing matches $re"
  done
}
only() {  # only PACKAGE PATH-REGEX...: every file (not directory) matches one of them
  local p=$1; shift
  local files; files=$(dpkg-deb -c "${deb[$p]}" | awk '$1 !~ /^d/ {print $6}' | sed 's|^\./|/|')
  local pattern; pattern=$(printf '|%s' "$@"); pattern="^(${pattern:1})\$"
  local extra; extra=$(grep -Ev "$pattern" <<<"$files" || true)
  [ -z "$extra" ] || bad "$p: unexpected files: $extra"
}
field() { dpkg-deb -f "${deb[$1]}" "$2"; }

echo "== contents"
L=/usr/$libdir
for p in $packages; do
  must_have $p "/usr/share/doc/$p/copyright" "/usr/share/doc/$p/changelog.Debian.gz"
done
must_have libnnclient1 "$L/libnnclient\.so\.1" "$L/libnnclient\.so\.1\.[0-9.]+"
only libnnclient1 "$L/libnnclient\.so\.1(\.[0-9.]+)?" "/usr/share/doc/libnnclient1/.*"
must_have libnnclient-dev /usr/include/nnclient.h /usr/include/nnclient.hpp "$L/libnnclient\.so" \
  "$L/libnnclient\.a" "$L/pkgconfig/nnclient\.pc" "$L/cmake/nnclient/nnclientConfig\.cmake" \
  "$L/cmake/nnclient/nnclientConfigVersion\.cmake" "$L/cmake/nnclient/nnclientTargets.*\.cmake"
must_have libnnclient-dev /usr/share/doc/libnnclient-dev/README\.md /usr/share/doc/libnnclient-dev/ABI\.md
only libnnclient-dev "/usr/include/nnclient\.(h|hpp)" "$L/libnnclient\.(so|a)" "$L/pkgconfig/nnclient\.pc" \
  "$L/cmake/nnclient/.*\.cmake" "/usr/share/doc/libnnclient-dev/.*"
must_have nnd /usr/sbin/nnd /usr/bin/nnctl /etc/nnd/nnd.yaml /usr/lib/systemd/system/nnd.service \
  "/usr/share/nnd/models/.*\.h5" /usr/share/doc/nnd/SCHEMA.md /usr/share/man/man8/nnd\.8\.gz \
  /usr/share/man/man1/nnctl\.1\.gz /usr/share/man/man5/nnd\.yaml\.5\.gz
only nnd /usr/sbin/nnd /usr/bin/nnctl /etc/nnd/nnd.yaml /usr/lib/systemd/system/nnd.service \
  "/usr/share/nnd/models/.*\.h5" "/usr/share/doc/nnd/.*" "/usr/share/man/man[158]/.*\.gz"
must_have nnd-tools /usr/bin/nnrun /usr/bin/nninfo /usr/share/man/man1/nnrun\.1\.gz \
  /usr/share/man/man1/nninfo\.1\.gz
# nnbench is built where the JIT has its peak kernel (bench/CMakeLists.txt).
if [ -e "$build/bench/nnbench" ]; then
  must_have nnd-tools /usr/bin/nnbench /usr/share/man/man1/nnbench\.1\.gz
fi
only nnd-tools "/usr/bin/nn(run|info|bench)" "/usr/share/man/man1/nn(run|info|bench)\.1\.gz" \
  "/usr/share/doc/nnd-tools/.*"
must_have python3-nnclient /usr/lib/python3/dist-packages/nnclient/__init__\.py \
  /usr/lib/python3/dist-packages/nnclient/__main__\.py
only python3-nnclient "/usr/lib/python3/dist-packages/nnclient/__(init|main)__\.py" "/usr/share/doc/python3-nnclient/.*"
must_have libnnd1 "$L/libnnd\.so\.1" "$L/libnnd\.so\.1\.[0-9.]+"
only libnnd1 "$L/libnnd\.so\.1(\.[0-9.]+)?" "/usr/share/doc/libnnd1/.*"
must_have libnnd-dev /usr/include/nnd.h /usr/include/nnd.hpp "$L/libnnd\.so" "$L/pkgconfig/nnd\.pc" \
  "$L/cmake/nnd/nndConfig\.cmake" "$L/cmake/nnd/nndConfigVersion\.cmake" "$L/cmake/nnd/nndTargets.*\.cmake" \
  /usr/share/doc/libnnd-dev/libnnd\.md /usr/share/doc/libnnd-dev/examples/run_model\.c
only libnnd-dev "/usr/include/nnd\.(h|hpp)" "$L/libnnd\.so" "$L/pkgconfig/nnd\.pc" "$L/cmake/nnd/.*\.cmake" \
  "/usr/share/doc/libnnd-dev/.*"

echo "== control fields"
for p in $packages; do
  [ "$(field $p Version)" = "$version" ] || bad "$p: Version $(field $p Version), expected $version"
  desc=$(field $p Description)
  [ "$(wc -l <<<"$desc")" -ge 3 ] || bad "$p: no long description"
  grep -q "@localhost" <<<"$(field $p Maintainer)" && bad "$p: maintainer address at localhost"
  echo "$p: Depends: $(field $p Depends)"
done
grep -q "libnnclient1 (= $version)" <<<"$(field libnnclient-dev Depends)" ||
  bad "libnnclient-dev must depend on libnnclient1 (= $version)"
grep -q "libnnclient1 (= $version)" <<<"$(field nnd Depends)" ||
  bad "nnd must depend on libnnclient1 (= $version)"
grep -q "libhdf5" <<<"$(field libnnclient1 Depends)" && bad "libnnclient1 depends on HDF5"
grep -q "libnnd1 (= $version)" <<<"$(field libnnd-dev Depends)" || bad "libnnd-dev must depend on libnnd1 (= $version)"
grep -q "libhdf5" <<<"$(field libnnd1 Depends)" || bad "libnnd1: no HDF5 dependency (it reads .h5): $(field libnnd1 Depends)"
# Every package with programs says which C library and HDF5 it needs (dpkg-shlibdeps on the host,
# the sysroot's shlibs in a cross build: packaging/cross_depends.cmake).
for p in libnnclient1 libnnd1 nnd nnd-tools; do
  grep -q "libc6 (>= " <<<"$(field $p Depends)" || bad "$p: no libc6 dependency: $(field $p Depends)"
  [ "$(field $p Architecture)" = "$arch" ] || bad "$p: Architecture $(field $p Architecture), expected $arch"
done
grep -q "libhdf5" <<<"$(field nnd-tools Depends)" || bad "nnd-tools: no HDF5 dependency (nnrun reads .h5)"

# The shared libraries' control files: shlibs, symbols, the ldconfig trigger, and no maintainer
# scripts. The symbols file lists exactly the library's exported symbols: a new function needs a
# line with the version that introduces it (packaging/debian/<package>/symbols), a removed one is
# an ABI break (new SONAME).
check_library() {  # check_library PACKAGE LIBNAME (libnnclient1 libnnclient)
  local p=$1 name=$2 ctl=$work/ctl-$1
  dpkg-deb -e "${deb[$p]}" "$ctl"
  grep -q "^$name 1 $p " "$ctl/shlibs" || bad "$p: shlibs: $(cat "$ctl/shlibs")"
  grep -qx "activate-noawait ldconfig" "$ctl/triggers" || bad "$p: no ldconfig trigger"
  for s in preinst postinst prerm postrm; do
    [ ! -e "$ctl/$s" ] || bad "$p: has a $s"
  done
  local lib; lib=$(dpkg-deb -c "${deb[$p]}" | awk '{print $6}' | grep -m1 "$name\.so\.1\.")
  dpkg-deb -x "${deb[$p]}" "$work/x-$p"
  "$nm" -D --defined-only "$work/x-$p/$lib" | awk '{print $3}' | sort >"$work/exported-$p"
  sed -n 's/^ \([a-z_0-9]*\)@Base .*/\1/p' "$ctl/symbols" | sort >"$work/listed-$p"
  if ! diff -u "$work/listed-$p" "$work/exported-$p" >"$work/symbols-$p.diff"; then
    bad "$p: packaging/debian/$p/symbols does not match the exported symbols (- listed only, + exported only):"
    cat "$work/symbols-$p.diff" >&2
  fi
  echo "$p: $(wc -l <"$work/exported-$p") exported symbols, all in its symbols file"
}
check_library libnnclient1 libnnclient
check_library libnnd1 libnnd

# nnd's maintainer scripts go through Debian's systemd helpers.
ctl=$work/ctl-nnd
dpkg-deb -e "${deb[nnd]}" "$ctl"
grep -q "deb-systemd-helper enable nnd.service" "$ctl/postinst" || bad "nnd: postinst does not enable the unit"
grep -q "deb-systemd-helper purge nnd.service" "$ctl/postrm" || bad "nnd: postrm does not purge the unit's links"
grep -qx "/etc/nnd/nnd.yaml" "$ctl/conffiles" || bad "nnd: /etc/nnd/nnd.yaml is not a conffile"

# python3-nnclient byte-compiles with Debian's py3compile and cleans with py3clean (else a purge
# leaves __pycache__ behind).
ctl=$work/ctl-python3-nnclient
dpkg-deb -e "${deb[python3-nnclient]}" "$ctl"
grep -q "py3compile -p python3-nnclient" "$ctl/postinst" 2>/dev/null || bad "python3-nnclient: postinst does not py3compile"
grep -q "py3clean -p python3-nnclient" "$ctl/prerm" 2>/dev/null || bad "python3-nnclient: prerm does not py3clean"

# The installed config and unit point at the installed files.
dpkg-deb -x "${deb[nnd]}" "$work/x-nnd"
cfg=$work/x-nnd/etc/nnd/nnd.yaml
unit=$work/x-nnd/usr/lib/systemd/system/nnd.service
grep -q "examples/" "$cfg" && bad "nnd: /etc/nnd/nnd.yaml still refers to examples/: $(grep -n examples/ "$cfg")"
for f in $(grep -o '/usr/[A-Za-z0-9_./-]*[A-Za-z0-9_]' "$cfg" | sort -u); do
  [ -e "$work/x-nnd$f" ] || [ -e "$work/x-nnd${f%/}" ] || bad "nnd: nnd.yaml names $f, which the package does not hold"
done
for f in $(grep -Eo '^Exec[A-Za-z]*=[^ ]+' "$unit" | cut -d= -f2); do
  [ -x "$work/x-nnd$f" ] || bad "nnd: the unit runs $f, which the package does not hold"
done
grep -Eq "^ExecReload=.*nnctl.* reload$" "$unit" ||
  bad "nnd: ExecReload must be nnctl reload (kill -HUP does not wait for the reload): $(grep ^ExecReload "$unit")"
for f in $(find "$work/x-nnd" "$work/x-libnnclient1" "$work/x-libnnd1" -type f); do
  if grep -q "ELF.*not stripped" <<<"$(file "$f")"; then bad "not stripped: ${f#"$work"/x-*/}"; fi
done

if [ "$fail" = 0 ]; then echo "packages OK: ${deb[*]##*/}"; fi
exit $fail
