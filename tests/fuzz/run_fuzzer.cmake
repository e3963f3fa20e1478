# ctest driver for one short fuzzing run (cmake -P): copies the committed seed corpus into the
# build tree, fuzzes for $ENV{NND_FUZZ_SECONDS} seconds (default 20) and fails on any finding.
# Crash inputs land in ${WORK}/artifacts/ (libFuzzer prints the path).
#   -DFUZZER=exe -DSEEDS=dir -DWORK=dir [-DEXTRA="-dict=file"] [-DKNOWN_CRASH_MODULE=libhdf5]
# With KNOWN_CRASH_MODULE the run continues past crashes (-fork=1 -ignore_crashes=1) and then
# replays each crash input: one whose crashing frame (#0, or #1 under an intercepted memcpy/
# memmove/memset) lies in that library, or a malloc over -malloc_limit_mb called from it, is
# reported as a known crash of that library (docs/fuzzing.md) and does not fail the test; any
# other crash, timeout, leak or OOM does.
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
  execute_process(COMMAND ${FUZZER} -timeout=10 -rss_limit_mb=2048 ${f}
                  RESULT_VARIABLE replay_rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(replay_rc EQUAL 0)
    message(STATUS "finding ${f} no longer reproduces")
  elseif(out MATCHES "\n *#0 0x[0-9a-f]+ [^\n]*\\(/[^\n]*${KNOWN_CRASH_MODULE}" OR
         out MATCHES "\n *#0 0x[0-9a-f]+ in (__interceptor_|__asan_)?(memcpy|memmove|memset)[^\n]*\n *#1 0x[0-9a-f]+ [^\n]*\\(/[^\n]*${KNOWN_CRASH_MODULE}" OR
         out MATCHES "out-of-memory \\(malloc\\([0-9]+\\)\\).*\n *#[0-9]+ 0x[0-9a-f]+ in malloc [^\n]*\n *#[0-9]+ 0x[0-9a-f]+ [^\n]*\\(/[^\n]*${KNOWN_CRASH_MODULE}")
    message(STATUS "known ${KNOWN_CRASH_MODULE} crash (docs/fuzzing.md): ${f}")
  else()
    message(SEND_ERROR "finding ${f}:\n${out}")
    set(unexpected 1)
  endif()
endforeach()
if(unexpected OR (NOT rc EQUAL 0 AND NOT findings))
  message(FATAL_ERROR "fuzzer ${FUZZER} found a problem (exit ${rc}); inputs in ${WORK}/artifacts/")
endif()
