# Runs `systemd-analyze verify` on a copy of the unit whose binary paths point at the built nnd
# and nnctl (verify checks that the executables exist). The unit's man: Documentation= links are
# looked up in the generated man pages (MANDIR, man/); without them (no help2man/pandoc) that
# check is skipped with a message.
file(READ ${UNIT} text)
string(REPLACE "/usr/sbin/nnd" "${NND}" text "${text}")
string(REPLACE "/usr/bin/nnctl" "${NNCTL}" text "${text}")
file(MAKE_DIRECTORY ${OUT})
file(WRITE ${OUT}/nnd.service "${text}")
set(man_check --man=yes)
if(NOT EXISTS ${MANDIR}/man8/nnd.8)
  message("no generated man pages in ${MANDIR}: not checking Documentation= links")
  set(man_check --man=no)
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env MANPATH=${MANDIR}
                        ${SYSTEMD_ANALYZE} verify ${man_check} ${OUT}/nnd.service
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 0 OR NOT "${out}${err}" STREQUAL "")
  message(FATAL_ERROR "systemd-analyze verify failed (exit ${rc})")
endif()
