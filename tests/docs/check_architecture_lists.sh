#!/usr/bin/env bash
# The "Where to add" lists of docs/architecture.md against the tree:
#   check_architecture_lists.sh SOURCE_DIR
# A list starts at a line `<!-- where-to-add: NAME -->` and ends at the next heading. Every
# backquoted path in it (a word with a '/' or a file name with an extension; words with '<' are
# patterns for the reader, words with '*' must match at least one file) must exist, and every file
# that dispatches over what the list is about must be named in it: the markers below find those
# files (a per-kind visitor, a switch over ISA rows, the architecture variable, a model format
# value, the protocol version). A new file that starts such a dispatch without joining the list,
# or a list that names a file that is gone, fails the test.
set -uo pipefail
src=$1
doc=$src/docs/architecture.md
[ -f "$doc" ] || { echo "FAIL: $doc is missing"; exit 1; }
cd "$src" || exit 1

# name -> "extended regex<TAB>where to look (paths relative to SOURCE_DIR)"
declare -A markers=(
  [layer-kind]=$'visit_layer\\(|static_assert\\(ExhaustiveLayerVisitor<|NND_LAYER_KIND\\(\tcore daemon tools client'
  [isa]=$'case Isa::k|add\\(Isa::k|kIsaTable\\[\\] =\tcore daemon tools client'
  [architecture]=$'NND_JIT_ARCH|Arch::kAarch64\tCMakeLists.txt core daemon tools client bench tests'
  [model-format]=$'ModelFormat::k\tcore daemon tools client'
  [protocol]=$'NND_IPC_VERSION\tipc core daemon tools client'
)

# The lines of list $1.
section() {
  awk -v name="$1" '
    $0 ~ "^<!-- where-to-add: " name " -->" { on = 1; next }
    on && /^#/ { exit }
    on { print }' "$doc"
}

# Backquoted words of stdin that name files.
paths() {
  grep -o '`[^`]*`' | tr -d '`' | while read -r word; do
    case $word in
      *' '* | *'<'* ) continue ;;
      */* | *.h | *.cpp | *.c | *.md | *.txt | *.sh | *.cmake ) printf '%s\n' "$word" ;;
    esac
  done | sort -u
}

fail=0
checked=0
for name in layer-kind isa architecture model-format protocol; do
  text=$(section "$name")
  if [ -z "$text" ]; then
    echo "FAIL: docs/architecture.md has no list 'where-to-add: $name'"
    fail=1
    continue
  fi
  listed=$(printf '%s\n' "$text" | paths)
  while read -r p; do
    [ -n "$p" ] || continue
    checked=$((checked + 1))
    if [[ $p == *'*'* ]]; then
      compgen -G "$p" >/dev/null || { echo "FAIL [$name]: $p matches no file"; fail=1; }
    elif [ ! -e "$p" ]; then
      echo "FAIL [$name]: $p does not exist"
      fail=1
    fi
  done <<<"$listed"
  IFS=$'\t' read -r regex roots <<<"${markers[$name]}"
  found=0
  # shellcheck disable=SC2086  # roots is a list of paths
  while read -r f; do
    [ -n "$f" ] || continue
    found=$((found + 1))
    # Exact names, or a '*' word of the list that covers the file.
    covered=0
    while read -r p; do
      [ -n "$p" ] || continue
      # shellcheck disable=SC2053  # $p is a pattern on purpose
      if [[ $f == $p ]]; then covered=1; break; fi
    done <<<"$listed"
    [ $covered = 1 ] || { echo "FAIL [$name]: $f dispatches over it (/$regex/) but the list does not name it"; fail=1; }
  done < <(find $roots \( -name '*.h' -o -name '*.cpp' -o -name '*.c' -o -name '*.md' -o -name 'CMakeLists.txt' -o -name '*.cmake' \) \
             -not -path '*/node_modules/*' -print 2>/dev/null | xargs grep -lE "$regex" 2>/dev/null | grep -v '^tests/.*\.\(cpp\|h\)$' | sort)
  if [ $found = 0 ]; then
    echo "FAIL [$name]: no file matches /$regex/: the marker is stale"
    fail=1
  fi
  echo "[ $name ] $(printf '%s\n' "$listed" | grep -c .) files listed, $found found by /$regex/"
done
[ $checked -gt 0 ] || { echo "FAIL: no paths read"; fail=1; }
[ $fail = 0 ] && echo "docs/architecture.md: every list complete"
exit $fail
