#!/usr/bin/env bash
# Builds CPU-time variants of the two anchors (../shared/anchors: ort_c, cnn_harness) into OUT:
# the same sources with their clock replaced by the calling thread's CPU time
# (thread_cpu_clock.h), linked against the libraries ../shared/anchors/build.sh already built in
# ANCHORS. bench/side_by_side.py --cpu-time uses them, with nnrun --cpu-time, so that all three
# engines are timed alike on a loaded machine.
#
#   bench/anchors/build_cpu_time.sh [ANCHORS] [OUT]    (defaults /work/anchors, /tmp/nnd-anchors-cpu-time)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../../../shared/anchors" && pwd)
anchors=${1:-/work/anchors}
out=${2:-${TMPDIR:-/tmp}/nnd-anchors-cpu-time}
mkdir -p "$out"
swap() { sed 's/using Clock = std::chrono::steady_clock;/using Clock = ThreadCpuClock;/' "$1" > "$2"; grep -q 'using Clock = ThreadCpuClock;' "$2"; }
if [ ! -x "$out/ort_c" ] || [ "$src/ort_c.cpp" -nt "$out/ort_c" ]; then
  swap "$src/ort_c.cpp" "$out/ort_c.cpp"
  d=$anchors/ort/node_modules/onnxruntime-node/bin/napi-v6/linux/x64
  g++ -O2 -std=c++17 -include "$here/thread_cpu_clock.h" "$out/ort_c.cpp" -o "$out/ort_c" -L"$d" -l:libonnxruntime.so.1 -Wl,-rpath,"$d"
fi
if [ ! -x "$out/cnn_harness" ] || [ "$src/cnn_harness.cpp" -nt "$out/cnn_harness" ]; then
  swap "$src/cnn_harness.cpp" "$out/cnn_harness.cpp"
  c=$anchors/CompiledNN
  g++ -O2 -std=c++14 -include "$here/thread_cpu_clock.h" -I"$c/Src" -I"$c/3rdParty/B-Human" "$out/cnn_harness.cpp" \
    "$c/build/libCompiledNN.a" -L/usr/lib/x86_64-linux-gnu/hdf5/serial -lhdf5 -lpthread -lrt -o "$out/cnn_harness"
fi
echo "$out/ort_c and $out/cnn_harness time the calling thread's CPU time"
