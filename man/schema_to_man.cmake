# Makes nnd.yaml(5) from config/SCHEMA.md with pandoc: the schema's sections become the man page's
# sections after a NAME and a SYNOPSIS, and FILES and SEE ALSO follow.
#   cmake -DPANDOC=... -DSCHEMA=config/SCHEMA.md -DVERSION=1.0.0 -DOUT=nnd.yaml.5 -P schema_to_man.cmake
cmake_policy(VERSION 3.20)  # keep empty list elements (blank lines) in the loop below
file(READ "${SCHEMA}" text)
# Drop the document title (the man page has its own) and lift every heading one level:
# "## daemon" becomes a section (.SH), "### Access" a subsection (.SS).
string(REGEX REPLACE "^# [^\n]*\n" "" text "${text}")
string(REGEX REPLACE "\n## " "\n# " text "${text}")
string(REGEX REPLACE "\n### " "\n## " text "${text}")

# Tables become definition lists (wide tables cannot be set in 80 columns): the header row and
# the rule go, each row becomes "first cell (other cells)" and, indented, the last cell:
#   | `workers` | integer 1..64 | `2` | Inference ... |  ->  `workers` (integer 1..64, default `2`)
#                                                           :   Inference ...
# (";" and brackets are list syntax in CMake: kept out of the way until the end.)
string(REPLACE ";" "<SEMI>" text "${text}")
string(REPLACE "[" "<LB>" text "${text}")
string(REPLACE "]" "<RB>" text "${text}")
string(REPLACE "\\|" "<PIPE>" text "${text}")
string(REPLACE "\n" ";" lines "${text}")
set(out "")
set(header "")
foreach(line IN LISTS lines)
  if(line MATCHES "^\\| *---")
    continue()
  endif()
  if(line MATCHES "^\\|(.*)\\| *$")
    if(header STREQUAL "")
      # The first row of a table is its header: keep the column names for the labels.
      string(REPLACE "|" ";" header "${CMAKE_MATCH_1}")
      list(TRANSFORM header STRIP)
      continue()
    endif()
    string(REPLACE "|" ";" cells "${CMAKE_MATCH_1}")
    list(TRANSFORM cells STRIP)
    list(LENGTH cells n)
    math(EXPR last "${n} - 1")
    list(GET cells 0 term)
    list(GET cells ${last} meaning)
    set(extra "")
    if(n GREATER 2)
      math(EXPR before_last "${last} - 1")
      foreach(i RANGE 1 ${before_last})
        list(GET cells ${i} cell)
        list(GET header ${i} column)
        if(i EQUAL 1)
          set(extra "${cell}")
        else()
          string(APPEND extra ", ${column} ${cell}")
        endif()
      endforeach()
      set(term "${term} (${extra})")
    endif()
    list(APPEND out "${term}" ":   ${meaning}" "")
    continue()
  endif()
  set(header "")
  list(APPEND out "${line}")
endforeach()
list(JOIN out "\n" text)
string(REPLACE "<PIPE>" "|" text "${text}")
string(REPLACE "<SEMI>" ";" text "${text}")
string(REPLACE "<LB>" "[" text "${text}")
string(REPLACE "<RB>" "]" text "${text}")
set(page "---
title: NND.YAML
section: 5
header: File Formats
footer: nnd ${VERSION}
---

# NAME

nnd.yaml - configuration file of the nnd inference daemon

# SYNOPSIS

*/etc/nnd/nnd.yaml*

# DESCRIPTION
${text}
# FILES

*/etc/nnd/nnd.yaml*
:   The configuration the packaged service reads (`nnd --config`).

*/usr/share/nnd/models*
:   The example models it serves.

# SEE ALSO

**nnd**(8), **nnctl**(1), **nninfo**(1)
")
get_filename_component(dir "${OUT}" DIRECTORY)
file(WRITE "${OUT}.md" "${page}")
execute_process(COMMAND "${PANDOC}" --standalone --from markdown --to man "${OUT}.md" -o "${OUT}"
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pandoc failed on ${OUT}.md")
endif()
file(REMOVE "${OUT}.md")
