#!/usr/bin/env bash
# One memcheck run of nnrun: runs `nnrun MODEL ARGS...` under the given valgrind command, which
# must exit 0 (valgrind runs with --error-exitcode=1 and leak errors on), then runs the same
# command natively with the ISA the valgrind run picked and requires every output file to agree
# within 1e-5 of max(1, |value|). The comparison proves the work really ran under valgrind
# (valgrind's CPU has no AVX-512, so `--isa auto` resolves differently there) and gave right
# results; a run that silently skipped the JIT code could not agree.
#
# usage: nnrun_under_valgrind.sh NNRUN NPY_AGREE VALGRIND [VALGRIND_OPTION...] -- MODEL [ARG...]
set -uo pipefail
nnrun=$1 npy_agree=$2
shift 2
vg=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do vg+=("$1"); shift; done
[ $# -ge 2 ] || { echo "usage: $0 NNRUN NPY_AGREE VALGRIND [OPTION...] -- MODEL [ARG...]"; exit 2; }
shift
work=$(mktemp -d "${TMPDIR:-/tmp}/nnd_memcheck_nnrun.XXXXXX")
trap 'rm -rf "$work"' EXIT

start=$(date +%s)
"${vg[@]}" "$nnrun" "$@" --output-dir "$work/vg" >"$work/vg.out" 2>"$work/vg.err"
rc=$?
cat "$work/vg.out"
grep -E "ERROR SUMMARY|definitely lost|indirectly lost|possibly lost" "$work/vg.err"
if [ $rc -ne 0 ]; then
  echo "FAIL: nnrun under valgrind exited $rc; valgrind report:"
  cat "$work/vg.err"
  exit 1
fi
echo "valgrind run: $(( $(date +%s) - start )) s"

# "model X (Keras v), engine jit-avx2" -> run natively on the same engine and ISA.
engine=$(sed -n 's/^model .*, engine \([a-z0-9.-]*\)$/\1/p' "$work/vg.out")
native=()
while [ $# -gt 0 ]; do  # the same arguments without any --isa (replaced below)
  if [ "$1" = --isa ]; then shift 2; else native+=("$1"); shift; fi
done
case "$engine" in
  jit-*) native+=(--isa "${engine#jit-}") ;;
  reference) ;;
  *) echo "FAIL: no engine line in nnrun's output"; exit 1 ;;
esac
if ! "$nnrun" "${native[@]}" --output-dir "$work/native" >"$work/native.out" 2>&1; then
  echo "FAIL: native nnrun failed:"; cat "$work/native.out"; exit 1
fi
n=0
for f in "$work/native"/*.npy; do
  [ -e "$f" ] || break
  "$npy_agree" "$work/vg/$(basename "$f")" "$f" 1e-5 || exit 1
  n=$((n + 1))
done
[ $n -gt 0 ] || { echo "FAIL: nnrun wrote no output"; exit 1; }
echo "ok: $engine under valgrind, $n output(s) agree with the native run"
