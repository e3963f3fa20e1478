# Runs `systemd-analyze verify` on a copy of the unit whose binary paths point at the built nnd.
file(READ ${UNIT} text)
string(REPLACE "/usr/bin/nnd" "${NND}" text "${text}")
file(MAKE_DIRECTORY ${OUT})
file(WRITE ${OUT}/nnd.service "${text}")
execute_process(COMMAND ${SYSTEMD_ANALYZE} verify ${OUT}/nnd.service
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 0 OR NOT "${out}${err}" STREQUAL "")
  message(FATAL_ERROR "systemd-analyze verify failed (exit ${rc})")
endif()
