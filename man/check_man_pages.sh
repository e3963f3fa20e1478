#!/usr/bin/env bash
# man.pages test: every man page was generated, renders without groff warnings, has a NAME line
# whatis(1) can read, and documents what the program's --help lists (every --option) or, for
# nnd.yaml(5), every key of config/SCHEMA.md's tables.
#   check_man_pages.sh MAN_DIR SCHEMA_MD
set -euo pipefail
mandir=$1 schema=$2
fail=0
bad() { echo "FAIL: $*" >&2; fail=1; }

render() {  # render PAGE: the page as text, 80 columns; groff warnings go to stderr
  LC_ALL=C.UTF-8 MANWIDTH=80 MAN_KEEP_FORMATTING=0 man --warnings -E UTF-8 -l "$1" 2>"$tmp/warn" | col -b
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for entry in nnd:8 nnctl:1 nnrun:1 nninfo:1 nnbench:1 nnd.yaml:5; do
  name=${entry%%:*} section=${entry##*:}
  page=$mandir/man$section/$name.$section
  if [ ! -s "$page" ] || [ ! -s "$page.gz" ]; then
    bad "$name($section) not built ($page): is help2man/pandoc installed (scripts/install-deps.sh)?"
    continue
  fi
  text=$(render "$page")
  if [ -s "$tmp/warn" ]; then
    bad "$name($section): groff warnings:"; cat "$tmp/warn" >&2
  fi
  lines=$(printf '%s\n' "$text" | wc -l)
  [ "$lines" -ge 25 ] || bad "$name($section): only $lines lines"
  grep -q "\"$name - " <<<"$(lexgrog "$page")" || bad "$name($section): no NAME line: $(lexgrog "$page")"
  zcat "$page.gz" | cmp -s - "$page" || bad "$name($section): $page.gz differs from $page"

  wanted=""
  case $name in
    nnd.yaml)
      # The keys are the first column of the tables: | `key` | ...
      wanted=$(sed -n 's/^| `\([a-z_]*\)` |.*/\1/p' "$schema" | sort -u) ;;
    nnctl)
      # Every subcommand nnctl --help lists has its section ("Command nnctl SUB") and options.
      subs=$("$mandir/bin/nnctl" --help | sed -n '/^Subcommands:/,/^$/s/^  \([a-z][a-z]*\)  .*/\1/p')
      [ -n "$subs" ] || bad "nnctl --help lists no subcommands"
      for sub in $subs; do
        grep -q "Command nnctl $sub:" <<<"$text" || bad "nnctl(1): no section for nnctl $sub"
      done
      wanted=$(for sub in "" $subs; do
                 "$mandir/bin/nnctl" $sub --help; done | grep -o -- '--[a-z][a-z-]*' | sort -u) ;;
    *)
      wanted=$("$mandir/bin/$name" --help | grep -o -- '--[a-z][a-z-]*' | sort -u) ;;
  esac
  [ -n "$wanted" ] || bad "$name($section): found nothing to look for"
  missing=""
  for w in $wanted; do
    grep -q -- "$w" <<<"$text" || missing="$missing $w"
  done
  [ -z "$missing" ] || bad "$name($section): does not mention$missing"
  echo "$name($section): $lines lines, $(echo $wanted | wc -w) options/keys documented"
done
exit $fail
