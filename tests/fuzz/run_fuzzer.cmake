# ctest driver for one short fuzzing run (cmake -P): copies the committed seed corpus into the
# build tree, fuzzes for $ENV{NND_FUZZ_SECONDS} seconds (default 20) and fails on any finding.
# Crash inputs land in ${WORK}/artifacts/ (libFuzzer prints the path).
#   -DFUZZER=exe -DSEEDS=dir -DWORK=dir [-DEXTRA="-dict=file"] [-DKNOWN_CRASH_MODULE=libhdf5]
# With KNOWN_CRASH_MODULE the run continues past crashes (-fork=1 -ignore_crashes=1) and then
# replays each finding: one whose innermost frame outside libFuzzer, the sanitizer runtime and
# libc lies in that library (a crash, a hang or a malloc over -malloc_limit_mb made by it) is
# reported as a known problem of that library (docs/fuzzing.md) and does not fail the test;
# anything else does.
set(seconds 20)
if(DEFINED ENV{NND_FUZZ_SECONDS} AND NOT "$ENV{NND_FUZZ_SECONDS}" STREQUAL "")
  set(seconds $ENV{NND_FUZZ_SECONDS})
endif()
file(REMOVE_RECURSE ${WORK}/corpus ${WORK}/artifacts)
file(MAKE_DIRECTORY ${WORK}/artifacts)
file(COPY ${SEEDS}/ DESTINATION ${WORK}/corpus)
separate_arguments(extra UNIX_COMMAND "${EXTRA}")
set(common -timeout=10 -rss_limit_mb=2048 -artifact_prefix=${WORK}/artifacts/ ${extra})
if(NOT KNOWN_CRASH_MODULE)
  execute_process(COMMAND ${FUZZER} -max_total_time=${seconds} -print_final_stats=1 ${common}
                          ${WORK}/corpus
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "fuzzer ${FUZZER} failed (exit ${rc}); the input is in ${WORK}/artifacts/")
  endif()
  return()
endif()

execute_process(COMMAND ${FUZZER} -max_total_time=${seconds} -fork=1 -ignore_crashes=1
                        -ignore_timeouts=1 -ignore_ooms=1 ${common} ${WORK}/corpus
                RESULT_VARIABLE rc)
file(GLOB findings ${WORK}/artifacts/*)
set(unexpected 0)
foreach(f ${findings})
  # A longer timeout than the run's: symbolising a report on a loaded machine can take seconds,
  # and a timeout during it garbles the report.
  execute_process(COMMAND ${FUZZER} -timeout=30 -rss_limit_mb=2048 ${f}
                  RESULT_VARIABLE replay_rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(replay_rc EQUAL 0)
    message(STATUS "finding ${f} no longer reproduces")
    continue()
  endif()
  # The first frame of the report that is not libFuzzer, the sanitizer runtime, an allocation
  # function, an intercepted libc function or libc itself: where the program was when it
  # crashed, hung or allocated. An out-of-memory report lists the largest live allocations, and
  # libFuzzer's own buffers (operator new called from FuzzerDriver, called from main) often come
  # first: skipping them reaches the allocation that grew.
  string(REPLACE ";" "," out_safe "${out}")
  string(REPLACE "[" "(" out_safe "${out_safe}")
  string(REPLACE "]" ")" out_safe "${out_safe}")
  string(REGEX MATCHALL "\n *#[0-9]+ [^\n]*" frames "${out_safe}")
  set(culprit "")
  foreach(frame ${frames})
    if(frame MATCHES "fuzzer::|__sanitizer|__asan|__lsan|__interceptor_|/libc\\.so|libc_start|multiarch/mem| in (malloc|calloc|realloc|strdup|memcpy|memmove|memset|main) | in operator (new|delete)")
      continue()
    endif()
    set(culprit "${frame}")
    break()
  endforeach()
  if(culprit MATCHES "\\(/[^\n]*${KNOWN_CRASH_MODULE}")
    message(STATUS "known ${KNOWN_CRASH_MODULE} crash (docs/fuzzing.md): ${f}")
  else()
    message(SEND_ERROR "finding ${f}:\n${out}")
    set(unexpected 1)
  endif()
endforeach()
if(unexpected OR (NOT rc EQUAL 0 AND NOT findings))
  message(FATAL_ERROR "fuzzer ${FUZZER} found a problem (exit ${rc}); inputs in ${WORK}/artifacts/")
endif()
