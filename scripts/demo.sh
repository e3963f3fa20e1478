#!/usr/bin/env bash
# Quick start, command 1: installs what is missing, builds nnd (Release) and runs every example
# model in examples/models with the exact reference engine, printing inputs, outputs and timings.
# (The daemon will take this script's place as the main job once it exists.)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$root/build" -j"$(nproc)" --target nnrun nninfo

shopt -s nullglob
models=("$root"/examples/models/*.h5)
[ ${#models[@]} -gt 0 ] || { echo "demo: no models in examples/models" >&2; exit 1; }
for m in "${models[@]}"; do
  echo
  echo "=== $(basename "$m")"
  "$root/build/tools/cli/nninfo" "$m" | tail -n 1
  "$root/build/tools/cli/nnrun" "$m" --batch 4 --repeat 10
done
