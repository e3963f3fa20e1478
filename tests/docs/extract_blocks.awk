# Splits the fenced code blocks of one Markdown file into numbered files, for run_doc_blocks.sh.
#   awk -v out=DIR -v rel=PATH -v first=N -f extract_blocks.awk FILE.md >> DIR/index.tsv
# Each block (``` fences, indented ones inside list items too; the fence's indent is removed from
# its lines) goes to DIR/<n>.txt, n counting up from `first`. One line per block on stdout:
#   n <TAB> PATH <TAB> line of the opening fence <TAB> language <TAB> annotation
# The annotation is the text of a `<!-- doc-test: ... -->` comment on the line right above the
# fence. An empty field (no language, no annotation) is written as "-" (a tab-separated line
# read by bash must not have empty fields).
BEGIN { n = first - 1; inblock = 0; prev = "" }
{
  if (!inblock && match($0, /^ *```/)) {
    indent = RLENGTH - 3
    lang = substr($0, RLENGTH + 1)
    gsub(/[ \t]+$/, "", lang)
    note = ""
    if (match(prev, /^ *<!-- doc-test: .* -->[ \t]*$/)) {
      note = prev
      sub(/^ *<!-- doc-test: /, "", note)
      sub(/ -->[ \t]*$/, "", note)
    }
    n++
    file = out "/" n ".txt"
    printf "" > file
    start = NR
    inblock = 1
  } else if (inblock && $0 ~ /^ *```[ \t]*$/) {
    close(file)
    printf "%d\t%s\t%d\t%s\t%s\n", n, rel, start, (lang == "" ? "-" : lang), (note == "" ? "-" : note)
    inblock = 0
  } else if (inblock) {
    line = $0
    if (substr(line, 1, indent) ~ /^ *$/) line = substr(line, indent + 1)
    print line > file
  }
  prev = $0
}
END {
  if (inblock) {
    printf "%s:%d: code block not closed\n", rel, start > "/dev/stderr"
    exit 1
  }
}
