#!/usr/bin/env bash
# Quick start, command 1: installs what is missing, builds nnd (Release), starts the daemon on its
# default config (config/nnd.yaml: the example models in examples/models) on a private endpoint,
# and shows a client getting answers: `nnctl models`, one `nnctl infer` per model (the same
# result `nnrun` computes in-process is printed beside it), then `nnctl stats`. Stops the daemon
# at the end (SIGTERM: graceful exit, socket removed).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$root/build" -j"$(nproc)" --target nnd nnctl nnrun

bin=$root/build
work=$(mktemp -d)
export NND_RUNTIME_DIR=$work   # the socket lives here: no root-owned /run/nnd needed
endpoint=demo
nnd_pid=
cleanup() {
  if [ -n "$nnd_pid" ] && kill -0 "$nnd_pid" 2>/dev/null; then
    kill -TERM "$nnd_pid"
    wait "$nnd_pid" || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

echo "=== starting nnd on config/nnd.yaml (endpoint $endpoint)"
"$bin/daemon/nnd" --config "$root/config/nnd.yaml" --endpoint "$endpoint" &
nnd_pid=$!
for _ in $(seq 1 300); do
  [ -S "$work/$endpoint.sock" ] && break
  kill -0 "$nnd_pid" 2>/dev/null || { echo "demo: nnd exited during startup" >&2; exit 1; }
  sleep 0.1
done
[ -S "$work/$endpoint.sock" ] || { echo "demo: nnd did not start listening within 30 s" >&2; exit 1; }

echo
echo "=== nnctl models"
"$bin/tools/nnctl/nnctl" --endpoint "$endpoint" models
for model in ball:ball_patch field_boundary:field_boundary detector:; do
  name=${model%%:*}
  echo
  echo "=== nnctl infer $name --batch 2 (through the daemon)"
  "$bin/tools/nnctl/nnctl" --endpoint "$endpoint" infer "$name" --batch 2 --output-dir "$work/out-$name"
  # The detector's input is declared uint8 (camera bytes) in the config, so its pattern input
  # differs from nnrun's float32 one; the two float models get the same input in both tools.
  [ -n "${model#*:}" ] || continue
  file=$root/examples/models/${model#*:}.h5
  echo "--- nnrun $(basename "$file") --batch 2 --engine jit (in-process, same input)"
  "$bin/tools/cli/nnrun" "$file" --batch 2 --engine jit --repeat 20 | tail -n +2
done

echo
echo "=== nnctl stats"
"$bin/tools/nnctl/nnctl" --endpoint "$endpoint" stats
echo
echo "=== stopping nnd (SIGTERM)"
kill -TERM "$nnd_pid"
wait "$nnd_pid"
nnd_pid=
echo "nnd exited cleanly"
