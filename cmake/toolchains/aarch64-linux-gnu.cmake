# Cross build for AArch64 (the Booster's Jetson Orin) with Debian's g++-aarch64-linux-gnu, against a
# sysroot of arm64 .debs made by scripts/make-arm64-sysroot.sh; tests run under qemu-aarch64.
#
#   cmake -S . -B build-arm64 --toolchain cmake/toolchains/aarch64-linux-gnu.cmake \
#         -DNND_ARM64_SYSROOT=build-arm64/sysroot
#
# NND_ARM64_SYSROOT (cache variable or environment): the sysroot; default <source>/build-arm64/sysroot.
# The compiler keeps its own C library and headers (/usr/aarch64-linux-gnu): the sysroot holds the
# libraries nnd links and is the only place find_package/find_library/pkg-config look.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

if(NOT NND_ARM64_SYSROOT)
  if(DEFINED ENV{NND_ARM64_SYSROOT})
    set(NND_ARM64_SYSROOT "$ENV{NND_ARM64_SYSROOT}")
  else()
    set(NND_ARM64_SYSROOT "${CMAKE_CURRENT_LIST_DIR}/../../build-arm64/sysroot")
  endif()
endif()
get_filename_component(NND_ARM64_SYSROOT "${NND_ARM64_SYSROOT}" ABSOLUTE)
if(NOT EXISTS "${NND_ARM64_SYSROOT}/.nnd-sysroot")
  message(FATAL_ERROR "no arm64 sysroot at ${NND_ARM64_SYSROOT}: run scripts/make-arm64-sysroot.sh")
endif()
set(NND_ARM64_SYSROOT "${NND_ARM64_SYSROOT}" CACHE PATH "arm64 sysroot (scripts/make-arm64-sysroot.sh)")
# try_compile projects re-read this file: hand them the sysroot.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES NND_ARM64_SYSROOT)

# The sysroot is the only find root: packages, libraries and headers of the host are never used.
set(CMAKE_FIND_ROOT_PATH "${NND_ARM64_SYSROOT}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)  # programs (git, python3, qemu) are the host's
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# HDF5's configuration header (H5pubconf.h) differs per architecture: the sysroot's serial build.
set(HDF5_ROOT "${NND_ARM64_SYSROOT}/usr/lib/aarch64-linux-gnu/hdf5/serial")
set(HDF5_PREFER_PARALLEL OFF)
set(HDF5_NO_FIND_PACKAGE_CONFIG_FILE ON)

# pkg-config (libzip, zlib, yaml-cpp, libsystemd) reads the sysroot's .pc files only, and prefixes
# their paths with it.
set(ENV{PKG_CONFIG_DIR} "")
set(ENV{PKG_CONFIG_LIBDIR}
    "${NND_ARM64_SYSROOT}/usr/lib/aarch64-linux-gnu/pkgconfig:${NND_ARM64_SYSROOT}/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "${NND_ARM64_SYSROOT}")

# The linker resolves the libraries' own dependencies (libhdf5 -> libsz, libcurl, ...) in the sysroot.
foreach(dir lib/aarch64-linux-gnu usr/lib/aarch64-linux-gnu usr/lib/aarch64-linux-gnu/hdf5/serial)
  string(APPEND CMAKE_EXE_LINKER_FLAGS_INIT " -Wl,-rpath-link,${NND_ARM64_SYSROOT}/${dir}")
  string(APPEND CMAKE_SHARED_LINKER_FLAGS_INIT " -Wl,-rpath-link,${NND_ARM64_SYSROOT}/${dir}")
endforeach()

# Tests (and gtest_discover_tests) run the aarch64 binaries under qemu-user. Cortex-A76: qemu 7.2
# has no A78, and the A76 has the same ARMv8.2-A set as the robot's A78AE (FP16, dot product, no
# SVE). -L: the dynamic loader and libraries come from the sysroot.
find_program(NND_QEMU_AARCH64 qemu-aarch64 REQUIRED)
set(CMAKE_CROSSCOMPILING_EMULATOR "${NND_QEMU_AARCH64};-cpu;cortex-a76;-L;${NND_ARM64_SYSROOT}")
