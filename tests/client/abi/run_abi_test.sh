#!/usr/bin/env bash
# Runs an application built against a previous nnclient.h, linked with the current shared
# library, against the fake daemon.   run_abi_test.sh OLD_APP FAKE_DAEMON WORK_DIR
set -euo pipefail
app=$1 fake=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
sock=$work/fake.sock
"$fake" "$sock" & fake_pid=$!
trap 'kill $fake_pid 2>/dev/null || true' EXIT
for _ in $(seq 250); do [ -S "$sock" ] && break; sleep 0.02; done
"$app" "$sock"
