#!/usr/bin/env bash
# The robot cost model of CompiledNN against nnd, both priced the same way: one inference under
# valgrind's exp-bbv counts every basic block the JIT code executed, each block is priced by
# llvm-mca on LLVM's Silvermont model (the NAO's Atom E3845) and weighted by its runs
# (tools/cost_model/bbv_blocks.h, nnd_bbv_price). Both ends of the FP-queue range are printed:
# LLVM's model (one-entry in-order reservation queues per FP port) and deep queues (each block at
# its port bound, latencies hidden).
#
#   tools/cost_model/bbv/compare_compilednn.sh BUILD_DIR MODEL.h5 [UINT8] [CPU]
#
#   BUILD_DIR  an nnd build with nnd_bbv_harness and nnd_bbv_price (x86, Capstone found)
#   UINT8      1: input 0 is camera bytes for both (bop), 0 (default): float inputs
#   CPU        LLVM's -mcpu (default silvermont)
# Environment: NND_ANCHORS (default /work/anchors, else /tmp/nnd-anchors): a folder where
# ../shared/anchors/build.sh built CompiledNN (CompiledNN/build/libCompiledNN.a); without one the
# snapshot in ../shared/anchors is unpacked and built into NND_BBV_WORK (default /tmp/nnd-bbv),
# where the harness and valgrind's files go too. Needs valgrind, llvm, libhdf5-dev, cmake, g++.
# Takes about a minute per network (valgrind runs the compile and one inference of each).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
build=${1:?usage: compare_compilednn.sh BUILD_DIR MODEL.h5 [UINT8] [CPU]}
model=${2:?usage: compare_compilednn.sh BUILD_DIR MODEL.h5 [UINT8] [CPU]}
u8=${3:-0}
cpu=${4:-silvermont}
work=${NND_BBV_WORK:-/tmp/nnd-bbv}
mkdir -p "$work"
shared_anchors="$repo/../shared/anchors"

cnn=""
for d in "${NND_ANCHORS:-}" /work/anchors /tmp/nnd-anchors; do
  if [ -n "$d" ] && [ -f "$d/CompiledNN/build/libCompiledNN.a" ]; then cnn="$d/CompiledNN"; break; fi
done
if [ -z "$cnn" ]; then
  cnn="$work/CompiledNN"
  if [ ! -f "$cnn/build/libCompiledNN.a" ]; then
    rm -rf "$cnn" && tar -xzf "$shared_anchors"/compilednn-*.tar.gz -C "$work"
    cmake -S "$cnn" -B "$cnn/build" -DCMAKE_BUILD_TYPE=Release -DWITH_ONNX=OFF >/dev/null
    cmake --build "$cnn/build" -j"$(nproc)" >/dev/null
  fi
fi
harness="$work/cnn_bbv_harness"
if [ ! -x "$harness" ] || [ "$here/cnn_bbv_harness.cpp" -nt "$harness" ]; then
  g++ -O2 -std=c++14 -I"$cnn/Src" -I"$cnn/3rdParty/B-Human" -I"$cnn/3rdParty/asmjit/src" \
    "$here/cnn_bbv_harness.cpp" "$cnn/build/libCompiledNN.a" \
    -L/usr/lib/x86_64-linux-gnu/hdf5/serial -lhdf5 -lpthread -lrt -o "$harness"
fi

name=$(basename "$model" .h5)
# No chasing: a valgrind block ends at its first branch, as the pricer cuts it; 100 instructions
# at most, valgrind's largest (the pricer's --max-insns): a loop body is then one block.
vg=(valgrind --tool=exp-bbv --vex-guest-chase=no --vex-guest-max-insns=100 --interval-size=10000000)
nnd_flags=()
[ "$u8" = 1 ] && nnd_flags+=(--uint8)
"${vg[@]}" --bb-out-file="$work/$name.cnn.bb" --pc-out-file="$work/$name.cnn.pc" \
  "$harness" "$model" "$work/$name.cnn.regions" "$u8" 1 >"$work/$name.cnn.log" 2>&1
"${vg[@]}" --bb-out-file="$work/$name.nnd.bb" --pc-out-file="$work/$name.nnd.pc" \
  "$build/tools/cost_model/nnd_bbv_harness" "$model" "$work/$name.nnd.regions" --isa sse4.1 "${nnd_flags[@]}" \
  >"$work/$name.nnd.log" 2>&1
price=$build/tools/cost_model/nnd_bbv_price
echo "== $name, CompiledNN (NAO settings: SSE, no FMA)"
"$price" "$work/$name.cnn.regions" "$work/$name.cnn.bb" "$work/$name.cnn.pc" --cpu "$cpu" --max-insns 100 | tee "$work/$name.cnn.price"
echo "== $name, nnd sse4.1"
"$price" "$work/$name.nnd.regions" "$work/$name.nnd.bb" "$work/$name.nnd.pc" --cpu "$cpu" --max-insns 100 | tee "$work/$name.nnd.price"
cycles() { sed -n "s/.*$1.*: *\([0-9.]*\) Mcycles.*/\1/p" "$2"; }
for end in "one entry" "deep queues"; do
  c=$(cycles "$end" "$work/$name.cnn.price")
  n=$(cycles "$end" "$work/$name.nnd.price")
  awk -v e="$end" -v c="$c" -v n="$n" -v m="$name" \
    'BEGIN { printf "%s, %s: CompiledNN %.3f Mcycles, nnd %.3f Mcycles, CompiledNN / nnd %.2fx\n", m, e, c, n, c / n }'
done
