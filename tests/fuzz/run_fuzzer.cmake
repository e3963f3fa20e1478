# ctest driver for one short fuzzing run (cmake -P): copies the committed seed corpus into the
# build tree, fuzzes for $ENV{NND_FUZZ_SECONDS} seconds (default 20) and fails on any finding.
# Crash inputs land in ${WORK}/artifacts/ (libFuzzer prints the path).
#   -DFUZZER=exe -DSEEDS=dir -DWORK=dir [-DEXTRA="-dict=file"]
set(seconds 20)
if(DEFINED ENV{NND_FUZZ_SECONDS} AND NOT "$ENV{NND_FUZZ_SECONDS}" STREQUAL "")
  set(seconds $ENV{NND_FUZZ_SECONDS})
endif()
file(REMOVE_RECURSE ${WORK}/corpus)
file(MAKE_DIRECTORY ${WORK}/artifacts)
file(COPY ${SEEDS}/ DESTINATION ${WORK}/corpus)
separate_arguments(extra UNIX_COMMAND "${EXTRA}")
execute_process(
  COMMAND ${FUZZER} -max_total_time=${seconds} -timeout=10 -rss_limit_mb=2048
          -print_final_stats=1 -artifact_prefix=${WORK}/artifacts/ ${extra} ${WORK}/corpus
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "fuzzer ${FUZZER} failed (exit ${rc}); the input is in ${WORK}/artifacts/")
endif()
