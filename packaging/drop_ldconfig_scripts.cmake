# CPACK_POST_BUILD_SCRIPTS step (packaging/CMakeLists.txt): CPack 3.25 gives a package with a
# shared library under /usr/lib a postinst and a postrm that run `ldconfig` (there is no option
# to turn that off), which lintian reports as maintscript-calls-ldconfig: Debian updates the
# loader cache through the ldconfig trigger, which libnnclient1 and libnnd1 activate (their
# `triggers` files). This rebuilds their .debs without the two generated scripts, after checking
# that they are the generated ldconfig calls and nothing else.
foreach(deb IN LISTS CPACK_PACKAGE_FILES)
  get_filename_component(name "${deb}" NAME)
  if(NOT name MATCHES "^(libnnclient1|libnnd1)_.*\\.deb$")
    continue()
  endif()
  set(tree "${deb}.tree")
  file(REMOVE_RECURSE "${tree}")
  execute_process(COMMAND dpkg-deb -R "${deb}" "${tree}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "dpkg-deb -R ${deb} failed")
  endif()
  foreach(script postinst postrm)
    set(path "${tree}/DEBIAN/${script}")
    if(NOT EXISTS "${path}")
      continue()
    endif()
    file(STRINGS "${path}" lines)
    foreach(line IN LISTS lines)
      if(NOT line MATCHES "^(#!/bin/sh|set -e|if \\[ \"\\$1\" = \"(configure|remove)\" \\]; then|[ \t]*ldconfig|fi|)$")
        message(FATAL_ERROR "${name}: ${script} has more than CPack's ldconfig call: '${line}'")
      endif()
    endforeach()
    file(REMOVE "${path}")
  endforeach()
  execute_process(COMMAND dpkg-deb --root-owner-group -b "${tree}" "${deb}"
                  RESULT_VARIABLE rc OUTPUT_QUIET)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "dpkg-deb -b ${tree} failed")
  endif()
  file(REMOVE_RECURSE "${tree}")
  message(STATUS "${name}: dropped CPack's ldconfig maintainer scripts (the ldconfig trigger does it)")
endforeach()
