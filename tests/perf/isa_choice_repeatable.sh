#!/bin/sh
# Issue 35, "the same ISA every time": RUNS nnrun processes of MODEL with isa auto and one shared
# calibration cache file (a fresh one) choose the same ISA, every run after the first reads it from
# the cache instead of measuring, and all write bit-identical outputs.
#
#   isa_choice_repeatable.sh NNRUN MODEL [RUNS]     (RUNS defaults to 10)
#
# On a CPU with one ISA every run says "the only ISA this CPU has" and the cache is never used.
set -eu
nnrun=$1
model=$2
runs=${3:-10}
dir=$(mktemp -d "${TMPDIR:-/tmp}/nnd-isa-repeat.XXXXXX")
trap 'rm -rf "$dir"' EXIT

first_isa=
i=1
while [ "$i" -le "$runs" ]; do
  "$nnrun" "$model" --isa-cache "$dir/isa-calibration" --output-dir "$dir/out$i" > "$dir/log$i"
  line=$(grep '^isa ' "$dir/log$i") || { echo "run $i: no 'isa' line"; cat "$dir/log$i"; exit 1; }
  isa=$(echo "$line" | cut -d' ' -f2)
  case "$line" in
    *"only ISA"*) ;;
    *"measured:"*) [ "$i" -eq 1 ] || { echo "run $i measured again: $line"; exit 1; } ;;
    *"from the calibration cache"*) [ "$i" -gt 1 ] || { echo "run 1 found a choice in a fresh cache: $line"; exit 1; } ;;
    *) echo "run $i: unexpected isa line: $line"; exit 1 ;;
  esac
  if [ -z "$first_isa" ]; then
    first_isa=$isa
    echo "run 1: $line"
  elif [ "$isa" != "$first_isa" ]; then
    echo "run $i chose $isa, run 1 $first_isa"
    exit 1
  fi
  for f in "$dir/out1"/*.npy; do
    cmp -s "$f" "$dir/out$i/$(basename "$f")" || { echo "run $i: $(basename "$f") differs from run 1"; exit 1; }
  done
  i=$((i + 1))
done
echo "$runs runs: isa $first_isa every time, outputs bit-identical"
