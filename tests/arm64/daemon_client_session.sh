#!/usr/bin/env bash
# A short nnd session with the default config, every program under the emulator:
#   daemon_client_session.sh "EMULATOR ARGS" NND NNCTL NNRUN CONFIG WORKDIR
# nnd starts, nnctl lists the model and runs it, and its outputs must be the bytes nnrun writes
# for the same model and inputs; then a SIGHUP and an `nnctl reload` each reload, the daemon keeps
# serving, and SIGTERM stops it with status 0. On AArch64 `engine: auto` must serve the NEON JIT
# (jit-neon): the NEON generators emit every kernel the default config's models need.
set -euo pipefail
read -r -a emu <<<"$1"
nnd=$2 nnctl=$3 nnrun=$4 config=$5 work=$6

fail() { echo "FAIL: $*" >&2; echo "--- nnd log:" >&2; cat "$work/nnd.log" >&2 || true; exit 1; }

rm -rf "$work"
mkdir -p "$work/run"
config_dir=$(cd "$(dirname "$config")" && pwd)
sock=$work/run/nnd.sock
# The default config, its endpoint in the work folder and its model paths absolute, models
# validated in process: the isolated validator re-executes /proc/self/exe, an AArch64 binary the
# x86 host cannot execute without binfmt_misc (qemu-user runs only the process it started).
sed -e "s|^\(  endpoint:\) nnd |\1 $sock |" -e "s|^\(    path:\) \.\./|\1 $config_dir/../|" \
    -e "s|^daemon:\$|daemon:\n  validate_models: in_process|" "$config" >"$work/nnd.yaml"
grep -q "endpoint: $sock" "$work/nnd.yaml" || fail "could not move the endpoint in $config"
model_path=$(sed -n 's/^    path: //p' "$work/nnd.yaml" | head -1)
model_name=$(sed -n 's/^  - name: //p' "$work/nnd.yaml" | head -1)

"${emu[@]}" "$nnd" --config "$work/nnd.yaml" >"$work/nnd.log" 2>&1 &
nnd_pid=$!
trap 'kill -KILL $nnd_pid 2>/dev/null || true' EXIT

ctl() { "${emu[@]}" "$nnctl" --endpoint "$sock" "$@"; }
for _ in $(seq 1 120); do
  ctl models >"$work/models.txt" 2>/dev/null && break
  kill -0 $nnd_pid 2>/dev/null || fail "nnd exited at start-up"
  sleep 0.5
done
ctl models >"$work/models.txt" || fail "nnd did not answer within 60 s"
cat "$work/models.txt"
grep -q "$model_name" "$work/models.txt" || fail "model '$model_name' not listed"
grep -q "$model_name .*engine jit-neon" "$work/models.txt" || fail "'$model_name' not served by the NEON JIT"

# Served outputs against nnrun's (same deterministic input pattern, same engine): identical bytes.
"${emu[@]}" "$nnrun" "$model_path" --engine jit --batch 3 --output-dir "$work/nnrun" >/dev/null
check_infer() {  # check_infer TAG
  ctl infer "$model_name" --batch 3 --output-dir "$work/$1" >/dev/null || fail "nnctl infer ($1)"
  local n=0
  for f in "$work/nnrun"/*.npy; do
    cmp -s "$f" "$work/$1/$(basename "$f")" || fail "$1: $(basename "$f") differs from nnrun's"
    n=$((n + 1))
  done
  [ $n -gt 0 ] || fail "nnrun wrote no output"
  echo "$1: $n output(s) identical to nnrun's"
}
check_infer served

kill -HUP $nnd_pid
ctl reload >"$work/reload.txt" || fail "nnctl reload refused: $(cat "$work/reload.txt")"
check_infer after_reload
[ "$(grep -c "reload OK" "$work/nnd.log")" -eq 2 ] || fail "the log does not show two reloads"

kill -TERM $nnd_pid
status=0
wait $nnd_pid || status=$?
trap - EXIT
[ $status -eq 0 ] || fail "nnd exited with status $status after SIGTERM"
echo "PASS: start, serve, two reloads, stop under ${emu[*]}"
