# CPACK_PROJECT_CONFIG_FILE of a cross build (cross_packages.cmake): appends to each architecture-
# dependent package's Depends the packages its programs' shared libraries come from. A library is
# named by its SONAME as in Debian's shlibs files (policy 8.6.4): libfoo.so.1.2 and libfoo-1.2.so
# both give "libfoo 1.2", and the first shlibs line of that name and version gives the dependency
# ("libfoo1.2 (>= 1.2.3)"). A library no sysroot package describes is an error:
# a package that does not say what it needs would install and then fail to start on the robot.
include(${CPACK_NND_BINARIES_FILE})
file(STRINGS ${CPACK_NND_SHLIBS_INDEX} _nnd_shlibs)

function(nnd_shlibs_dependency soname out)
  if(soname MATCHES "^(.+)\\.so\\.([0-9].*)$")       # libyaml-cpp.so.0.7
    set(key "${CMAKE_MATCH_1} ${CMAKE_MATCH_2} ")
  elseif(soname MATCHES "^(.+)-([0-9][^-]*)\\.so$")  # libfoo-1.2.so
    set(key "${CMAKE_MATCH_1} ${CMAKE_MATCH_2} ")
  else()
    message(FATAL_ERROR "cross packages: cannot read the SONAME ${soname}")
  endif()
  foreach(line IN LISTS _nnd_shlibs)
    string(FIND "${line}" "${key}" at)
    if(at EQUAL 0)
      string(LENGTH "${key}" n)
      string(SUBSTRING "${line}" ${n} -1 dep)
      string(STRIP "${dep}" dep)
      set(${out} "${dep}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
  message(FATAL_ERROR "cross packages: no package of the sysroot describes ${soname} "
                      "(no \"${key}\" line in ${CPACK_NND_SHLIBS_INDEX})")
endfunction()

foreach(component NNCLIENT LIBNND NND TOOLS)
  set(deps "")
  foreach(binary IN LISTS NND_BINARIES_${component})
    execute_process(COMMAND ${CPACK_NND_READELF} --dynamic ${binary} OUTPUT_VARIABLE dynamic
                    RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "cross packages: ${CPACK_NND_READELF} --dynamic ${binary} failed")
    endif()
    string(REGEX MATCHALL "\\(NEEDED\\)[^\n]*\\[[^]\n]+\\]" needed "${dynamic}")
    foreach(entry IN LISTS needed)
      string(REGEX REPLACE ".*\\[([^]]+)\\]$" "\\1" soname "${entry}")
      # Our own library: the packages depend on libnnclient1 of their own version explicitly.
      if(soname MATCHES "^libnnclient\\.so")
        continue()
      endif()
      nnd_shlibs_dependency(${soname} dep)
      list(APPEND deps "${dep}")
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES deps)
  list(SORT deps)
  list(JOIN deps ", " deps)
  if(CPACK_DEBIAN_${component}_PACKAGE_DEPENDS)
    set(CPACK_DEBIAN_${component}_PACKAGE_DEPENDS "${CPACK_DEBIAN_${component}_PACKAGE_DEPENDS}, ${deps}")
  else()
    set(CPACK_DEBIAN_${component}_PACKAGE_DEPENDS "${deps}")
  endif()
endforeach()
