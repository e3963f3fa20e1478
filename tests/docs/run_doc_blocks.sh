#!/usr/bin/env bash
# Every fenced code block of the repository's Markdown files, built and run as a reader would
# use it, against the build tree installed into a temporary prefix (the layout the Debian packages
# have under /usr) and a daemon of that install serving config/nnd.yaml on a private runtime dir.
#   run_doc_blocks.sh BUILD_DIR SOURCE_DIR WORK_DIR SHARED_DIR [FILE.md...]
# (no FILE.md: every *.md under SOURCE_DIR outside build trees and node_modules).
#
# What the test does with a block is written above its fence, invisible on the rendered page:
#   <!-- doc-test: KIND key=value key="value with spaces" ... -->
# A block without one fails the test: a new block must say how it is checked.
#   run     built and run; the block's language says how:
#             sh      bash -euo pipefail in a copy of the source tree (its top-level entries linked,
#                     `build` = BUILD_DIR, ../shared = SHARED_DIR); a line ending in `&` starts a
#                     daemon in the background: the next line waits for its socket; every
#                     background job is stopped at the end
#             c, cpp  compiled (cc -std=c11 / c++ -std=c++17, -Wall -Wextra -Werror, pkg-config
#                     nnclient and nnd) and run
#             python  python3 with the installed nnclient package
#             yaml    a config file: `nnd --check` passes on it (placed in config/)
#             cmake   a CMake project fragment: configured, built and its program run
#           keys: fragment=NAME  the block is a part of a program: harness/NAME.<ext> holds the
#                                rest (@FRAGMENT@ marks where the block goes; the block's
#                                `#include` lines go on top); for cmake, harness/consumer.c is
#                                the program and target_link_libraries' target its name
#                 file=NAME      written to NAME in the tree instead; a later block of the same
#                                file builds and runs it (the test checks one names it)
#                 needs=A,B:C    files linked into the tree first (B:C: file C as B): from
#                                harness/, else from SHARED_DIR/models
#                 args="..."     program arguments;  exit=N  expected exit status (0)
#                 expect="ERE"   the output must match (grep -E)
#                 daemon=own     no test daemon: the block starts its own (own runtime dir)
#   check   shell commands only checked for syntax (bash -n); why="..." says why they cannot
#           run here (they install packages as root, need systemd, are the CI itself, ...)
#   usage   a synopsis of prog="...": every --option and every lower-case word in it appears in
#           the program's --help (and its subcommands' --help)
#   sample  not code: output, a format, pseudo-code; why="..." says which
# Before a block runs, paths of an installed system point into the prefix: /usr/share/nnd/ and
# /etc/nnd/ -> PREFIX/share/nnd/, PREFIX/etc/nnd/; /tmp/ -> WORK_DIR/tmp/; `sudo ` is dropped.
# The summary line counts the blocks by kind.
set -uo pipefail
build=$1 src=$2 work=$3 shared=$4
shift 4
here=$(cd "$(dirname "$0")" && pwd)
harness=$here/harness
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)

rm -rf "$work"
mkdir -p "$work/blocks" "$work/logs" "$work/tmp" "$work/run" "$work/tree"
prefix=$work/prefix
fail_count=0
declare -A counts=([run]=0 [check]=0 [usage]=0 [sample]=0)
declare -a pending_files=()  # "index<TAB>md<TAB>name" of file= blocks not yet named by a later one

die() { echo "FAIL: $*" >&2; exit 1; }

# ---- the install and the sandbox
cmake --install "$build" --prefix "$prefix" >"$work/logs/install.log" 2>&1 \
  || { cat "$work/logs/install.log"; die "cmake --install $build failed"; }
libdir=$(dirname "$(find "$prefix" -name 'libnnclient.so.1' -print -quit)")
[ -d "$libdir/pkgconfig" ] || die "no pkgconfig folder under $prefix"
for entry in "$src"/* "$src"/.[!.]*; do
  name=$(basename "$entry")
  case $name in build*|.git|node_modules) continue ;; esac
  ln -s "$entry" "$work/tree/$name"
done
ln -s "$build" "$work/tree/build"
ln -s "$shared" "$work/shared"

# `python3` in a block is Debian's interpreter (the one with python3-numpy), not one earlier on PATH.
mkdir -p "$work/python-bin" && ln -s "$py" "$work/python-bin/python3"
export PATH="$prefix/bin:$prefix/sbin:$work/python-bin:$PATH"
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LIBRARY_PATH="$libdir" PKG_CONFIG_PATH="$libdir/pkgconfig" CMAKE_PREFIX_PATH="$prefix"
export PYTHONPATH="$prefix/lib/python3/dist-packages" PYTHONDONTWRITEBYTECODE=1
export NND_RUNTIME_DIR="$work/run"
unset NND_ENDPOINT NNCLIENT_LIBRARY NNCLIENT_TRUSTED_USERS

# ---- the test daemon: the installed nnd on the repository's config (ball, field_boundary,
# detector), socket in WORK_DIR/run
"$prefix/sbin/nnd" --config "$src/config/nnd.yaml" >"$work/logs/daemon.log" 2>&1 &
daemon_pid=$!
trap 'kill $daemon_pid 2>/dev/null; wait $daemon_pid 2>/dev/null' EXIT
for _ in $(seq 600); do
  [ -S "$work/run/nnd.sock" ] && break
  kill -0 $daemon_pid 2>/dev/null || { cat "$work/logs/daemon.log"; die "the test daemon exited"; }
  sleep 0.1
done
[ -S "$work/run/nnd.sock" ] || { cat "$work/logs/daemon.log"; die "no daemon socket after 60 s"; }

# ---- the blocks
if [ $# -eq 0 ] && git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  # The Markdown files of the checkout (tracked or new), none of a build tree's copies.
  mapfile -t docs < <(git -C "$src" ls-files --cached --others --exclude-standard '*.md' | sort -u)
elif [ $# -eq 0 ]; then
  mapfile -t docs < <(cd "$src" && find . -name node_modules -prune -o -name 'build*' -prune \
                        -o -path "./${build#"$src"/}" -prune -o -name .git -prune -o -name '*.md' -print |
                        sed 's|^\./||' | sort)
else
  docs=("$@")
fi
index=$work/blocks/index.tsv
: >"$index"
next=1
for md in "${docs[@]}"; do
  awk -v out="$work/blocks" -v rel="$md" -v first=$next -f "$here/extract_blocks.awk" \
      "$src/$md" >>"$index" || die "$md: cannot read its code blocks"
  next=$(( $(wc -l <"$index") + 1 ))
done

# note_value KEY: the value of KEY= in $note ("" when absent); quoted values may hold spaces.
note_value() {
  local re="(^| )$1=(\"([^\"]*)\"|([^ \"]*))"
  if [[ $note =~ $re ]]; then printf '%s' "${BASH_REMATCH[3]}${BASH_REMATCH[4]}"; fi
}

# localize FILE: the installed-system paths of a block pointed into the test's prefix.
localize() {
  sed -e "s|/tmp/|$work/tmp/|g" -e "s|/usr/share/nnd/|$prefix/share/nnd/|g" \
      -e "s|/etc/nnd/|$prefix/etc/nnd/|g" -e 's/\bsudo //g' "$1"
}

# link_needs: the files of needs= linked into the tree.
link_needs() {
  local needs f
  needs=$(note_value needs)
  [ -n "$needs" ] || return 0
  for f in ${needs//,/ }; do
    local as=${f%%:*} from=${f#*:}
    if [ -e "$harness/$from" ]; then ln -sf "$harness/$from" "$work/tree/$as"
    elif [ -e "$shared/models/$from" ]; then ln -sf "$shared/models/$from" "$work/tree/$as"
    else echo "needs=$f: $from neither in $harness nor in $shared/models"; return 1; fi
  done
}

# with_fragment HARNESS BLOCK OUT: the harness with the block in place of @FRAGMENT@, the
# block's #include lines first.
with_fragment() {
  { grep '^#include' "$2"
    awk -v body="$2" '/@FRAGMENT@/ { while ((getline l < body) > 0) if (l !~ /^#include/) print l; next } { print }' "$1"
  } >"$3"
}

# run_program COMMAND...: runs it with args= appended, in the tree; its exit status checked.
run_program() {
  local args want rc
  args=$(note_value args)
  want=$(note_value exit); want=${want:-0}
  (cd "$work/tree" && eval "$(printf '%q ' "$@") $args"); rc=$?
  [ "$rc" = "$want" ] || { echo "exit status $rc, expected $want"; return 1; }
}

# A shell block as a script: background jobs stopped at the end, a daemon started with `&`
# waited for.
shell_script() {
  echo 'trap '\''kill $(jobs -p) 2>/dev/null || true; wait || true'\'' EXIT'
  echo 'doc_wait_socket() { for _ in $(seq 600); do [ -S "$NND_RUNTIME_DIR/nnd.sock" ] && return 0; sleep 0.1; done; echo "no daemon socket after 60 s" >&2; return 1; }'
  awk '{ print } /&[ \t]*(#.*)?$/ && !/&&[ \t]*(#.*)?$/ { print "doc_wait_socket" }' "$1"
}

run_block() {  # run_block N LANG BLOCK_FILE MD  -> 0 when it passes; output is the log
  local n=$1 lang=$2 block=$3 md=$4 frag name exe own
  frag=$(note_value fragment)
  name=$(note_value file)
  link_needs || return 1
  own=$(note_value daemon)
  if [ "$own" = own ]; then
    export NND_RUNTIME_DIR="$work/run-$n"; mkdir -p "$NND_RUNTIME_DIR"
  fi
  if [ -n "$name" ]; then
    localize "$block" >"$work/tree/$name"
    pending_files+=("$n	$md	$name")
    return 0
  fi
  case $lang in
    sh|bash)
      shell_script <(localize "$block") >"$work/blocks/$n.sh"
      (cd "$work/tree" && bash -euo pipefail "$work/blocks/$n.sh") || return 1 ;;
    c|cpp)
      local ext=$lang std=-std=c11 cc=cc
      [ "$lang" = cpp ] && std=-std=c++17 cc=c++
      localize "$block" >"$work/blocks/$n.src"
      if [ -n "$frag" ]; then
        [ -f "$harness/$frag.$ext" ] || { echo "no harness $harness/$frag.$ext"; return 1; }
        with_fragment "$harness/$frag.$ext" "$work/blocks/$n.src" "$work/blocks/$n.$ext"
      else
        cp "$work/blocks/$n.src" "$work/blocks/$n.$ext"
      fi
      exe=$work/blocks/$n.exe
      # shellcheck disable=SC2046
      $cc $std -Wall -Wextra -Werror "$work/blocks/$n.$ext" -o "$exe" \
        $(pkg-config --cflags --libs nnclient nnd) || return 1
      run_program "$exe" || return 1 ;;
    python)
      localize "$block" >"$work/blocks/$n.py"
      run_program "$py" "$work/blocks/$n.py" || return 1 ;;
    yaml)
      mkdir -p "$work/tree/config-doc"
      localize "$block" >"$work/tree/config-doc/doc-test-$n.yaml"
      # Relative model paths resolve against the file's folder: ../examples is the tree's.
      nnd --check "$work/tree/config-doc/doc-test-$n.yaml" || return 1 ;;
    cmake)
      [ -n "$frag" ] && [ -f "$harness/$frag.cmake" ] || { echo "cmake needs fragment=NAME"; return 1; }
      local target dir=$work/blocks/$n.cmake.d
      target=$(sed -n 's/.*target_link_libraries(\([A-Za-z0-9_]*\).*/\1/p' "$block" | head -1)
      [ -n "$target" ] || { echo "no target_link_libraries(TARGET ...) in the block"; return 1; }
      mkdir -p "$dir"
      cp "$harness/consumer.c" "$dir/consumer.c"
      with_fragment "$harness/$frag.cmake" "$block" "$dir/CMakeLists.txt.in"
      sed "s/@TARGET@/$target/g" "$dir/CMakeLists.txt.in" >"$dir/CMakeLists.txt"
      cmake -S "$dir" -B "$dir/build" -DCMAKE_BUILD_TYPE=Release >/dev/null || return 1
      cmake --build "$dir/build" || return 1
      run_program "$dir/build/$target" || return 1 ;;
    *) echo "run: no way to run a '$lang' block"; return 1 ;;
  esac
}

check_usage() {  # check_usage BLOCK_FILE
  local prog help word sub missing=""
  prog=$(note_value prog)
  [ -n "$prog" ] || { echo "usage needs prog=\"...\""; return 1; }
  help=$(cd "$work/tree" && eval "$prog --help" 2>&1) || { echo "$prog --help failed: $help"; return 1; }
  # The program's subcommands (lower-case words its --help lists) have their own --help.
  for sub in $(tr -s ' |[]()' '\n' <"$1" | grep -E '^[a-z][a-z0-9-]*$' | sort -u); do
    if out=$(cd "$work/tree" && eval "$prog $sub --help" 2>&1); then help+=$'\n'"$out"; fi
  done
  for word in $(sed "s|^ *$prog||" "$1" | sed 's/#.*//' | tr -s ' |[]()=,' '\n' |
                grep -E '^(--[a-z][a-z0-9-]*|[a-z][a-z0-9.-]*)$' | sort -u); do
    grep -qF -- "$word" <<<"$help" || missing+=" $word"
  done
  [ -z "$missing" ] || { echo "in the synopsis, not in '$prog --help':$missing"; return 1; }
}

total=0
while IFS=$'\t' read -r n md line lang note; do
  [ "$lang" = - ] && lang=""
  [ "$note" = - ] && note=""
  total=$((total + 1))
  block=$work/blocks/$n.txt
  kind=${note%% *}
  log=$work/logs/$n.log
  where="$md:$line"
  case $kind in
    run|check|usage|sample) ;;
    "") echo "FAIL $where: a \`\`\`$lang block without a <!-- doc-test: KIND ... --> line above it (see $0)"
        fail_count=$((fail_count + 1)); continue ;;
    *) echo "FAIL $where: unknown doc-test kind '$kind'"; fail_count=$((fail_count + 1)); continue ;;
  esac
  if [ "$kind" = check ] || [ "$kind" = sample ]; then
    [ -n "$(note_value why)" ] || { echo "FAIL $where: $kind needs why=\"...\""; fail_count=$((fail_count + 1)); continue; }
  fi
  # A file= block of this file named by this block: it is built and run here.
  for i in "${!pending_files[@]}"; do
    IFS=$'\t' read -r pn pmd pname <<<"${pending_files[$i]}"
    if [ "$pmd" = "$md" ] && grep -qF -- "$pname" "$block"; then unset 'pending_files[i]'; fi
  done
  saved_runtime=$NND_RUNTIME_DIR
  case $kind in
    run)    run_block "$n" "$lang" "$block" "$md" >"$log" 2>&1 </dev/null; rc=$? ;;
    check)  case $lang in
              sh|bash) bash -n "$block" >"$log" 2>&1; rc=$? ;;
              *) echo "check is for shell commands (sh); a '$lang' block is run or a sample" >"$log"; rc=1 ;;
            esac ;;
    usage)  check_usage "$block" >"$log" 2>&1 </dev/null; rc=$? ;;
    sample) rc=0 ;;
  esac
  export NND_RUNTIME_DIR=$saved_runtime
  expect=$(note_value expect)
  if [ $rc = 0 ] && [ "$kind" = run ] && [ -n "$expect" ] && ! grep -qE -- "$expect" "$log"; then
    echo "output does not match expect=\"$expect\"" >>"$log"; rc=1
  fi
  if [ $rc = 0 ]; then
    counts[$kind]=$((counts[$kind] + 1))
    echo "ok   $where ($lang, $kind)"
  else
    fail_count=$((fail_count + 1))
    echo "FAIL $where ($lang, $kind): $note"
    sed 's/^/     | /' "$log" | tail -40
  fi
done <"$index"
for p in "${pending_files[@]}"; do
  IFS=$'\t' read -r pn pmd pname <<<"$p"
  echo "FAIL $pmd: block $pn is written to $pname, and no later block of $pmd uses it"
  fail_count=$((fail_count + 1))
done
kill -0 $daemon_pid 2>/dev/null || { echo "FAIL: the test daemon died during the run"; cat "$work/logs/daemon.log"; fail_count=$((fail_count + 1)); }

echo "code blocks: $total in ${#docs[@]} files: ${counts[run]} built and run, ${counts[usage]} synopses checked against --help, ${counts[check]} commands syntax-checked only, ${counts[sample]} samples (not code); $fail_count failed"
[ $fail_count = 0 ]
