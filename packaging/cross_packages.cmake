# The Debian packages of a cross build (aarch64 on an x86-64 host, scripts/test-arm64.sh): the
# target's architecture in every package name and control file, and Depends computed without
# dpkg-shlibdeps, which looks libraries up in the host's dpkg database, where the sysroot's arm64
# packages are not installed (scripts/make-arm64-sysroot.sh unpacks them). Instead,
# cross_depends.cmake reads, when cpack runs, the NEEDED entries of each package's programs and
# maps each to the dependency of its library's shlibs line, as dpkg-shlibdeps does with shlibs
# files. Included by packaging/CMakeLists.txt before include(CPack).
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64|ARM64)$")
  set(NND_DEBIAN_ARCH arm64)
else()
  message(FATAL_ERROR "packaging: no Debian architecture known for a cross build to ${CMAKE_SYSTEM_PROCESSOR}")
endif()
if(NOT NND_ARM64_SYSROOT OR NOT EXISTS ${NND_ARM64_SYSROOT}/.nnd-shlibs)
  message(FATAL_ERROR "packaging: the sysroot has no shlibs index (${NND_ARM64_SYSROOT}/.nnd-shlibs): "
                      "run scripts/make-arm64-sysroot.sh again")
endif()
set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE ${NND_DEBIAN_ARCH})
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS OFF)

# What cross_depends.cmake needs at cpack time (CPack keeps only CPACK_* variables).
set(CPACK_NND_READELF ${CMAKE_READELF})
set(CPACK_NND_SHLIBS_INDEX ${NND_ARM64_SYSROOT}/.nnd-shlibs)
set(CPACK_NND_BINARIES_FILE ${CMAKE_CURRENT_BINARY_DIR}/cross_binaries.cmake)
# Per component (upper case, as in CPACK_DEBIAN_<COMPONENT>_PACKAGE_DEPENDS), the ELF files it ships.
# (nnbench is built for x86 only while it has no AArch64 peak kernel: bench/CMakeLists.txt.)
set(_nnd_tools "")
foreach(tool nnrun nninfo nnbench)
  if(TARGET ${tool})
    list(APPEND _nnd_tools "$<TARGET_FILE:${tool}>")
  endif()
endforeach()
file(GENERATE OUTPUT ${CPACK_NND_BINARIES_FILE} CONTENT
"set(NND_BINARIES_NNCLIENT \"$<TARGET_FILE:nnclient>\")
set(NND_BINARIES_LIBNND \"$<TARGET_FILE:libnnd>\")
set(NND_BINARIES_NND \"$<TARGET_FILE:nnd>;$<TARGET_FILE:nnctl>\")
set(NND_BINARIES_TOOLS \"${_nnd_tools}\")
")
set(CPACK_PROJECT_CONFIG_FILE ${CMAKE_CURRENT_SOURCE_DIR}/cross_depends.cmake)
