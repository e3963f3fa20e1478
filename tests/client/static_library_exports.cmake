# cmake -DNM=nm -DLIBRARY=libnnclient.a -P static_library_exports.cmake
# Fails when the static library defines a global symbol other than the public nnclient_* API
# (names that begin with two underscores, the toolchain's and the sanitizers', are left alone),
# and when it defines no nnclient_open (an empty or mislinked archive).
execute_process(COMMAND ${NM} -g --defined-only ${LIBRARY}
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} failed on ${LIBRARY} (${rc}): ${err}")
endif()
string(REPLACE "\n" ";" lines "${out}")
set(public 0)
set(leaked "")
foreach(line IN LISTS lines)
  # "<address> <type> <name>"; archive member headers ("x.o:") and blank lines have no type.
  if(NOT line MATCHES "^[0-9a-fA-F]+ [A-Za-z] (.+)$")
    continue()
  endif()
  set(name ${CMAKE_MATCH_1})
  if(name MATCHES "^nnclient_")
    math(EXPR public "${public} + 1")
  elseif(NOT name MATCHES "^__")
    list(APPEND leaked ${name})
  endif()
endforeach()
if(leaked)
  list(JOIN leaked ", " leaked)
  message(FATAL_ERROR "${LIBRARY} exports internal symbols an application could clash with: ${leaked}")
endif()
if(NOT out MATCHES " T nnclient_open\n")
  message(FATAL_ERROR "${LIBRARY} does not define nnclient_open:\n${out}")
endif()
message(STATUS "${LIBRARY}: ${public} public nnclient_* symbols, nothing else")
