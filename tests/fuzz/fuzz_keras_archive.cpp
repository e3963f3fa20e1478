// libFuzzer target: the Keras 3 .keras loader (load_keras_archive_bytes: libzip, config.json and
// metadata.json parsing, the class-based variable paths, model.weights.h5 through libhdf5's core
// driver, and everything the Keras model builder does). Expected outcome: a graph, or nnd::Error.
// libhdf5 is reached with fuzzed bytes too, so its known crashes (docs/fuzzing.md) apply here.
#include <cstddef>
#include <cstdint>

#include "core/io/keras_archive.h"
#include "core/util/error.h"
#include "tests/fuzz/fuzz_graph.h"
#include "tests/fuzz/fuzz_report.h"

// As in fuzz_keras_h5.cpp: malloc may fail as in production (libhdf5 turns it into an error),
// and leaks allocated inside libhdf5 on its own error paths are not nnd's.
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }
extern "C" const char* __lsan_default_suppressions() { return "leak:libhdf5\n"; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    nnd::Graph g = nnd::load_keras_archive_bytes(data, size, "/nonexistent/fuzz.keras");
    nnd::fuzz::exercise_loaded_graph(g);
    nnd::fuzz::report("accepted");
  } catch (const nnd::Error& e) {
    nnd::fuzz::report(e.what());  // a clear error: not a zip, not a Keras archive, bad weights
  }
  return 0;
}
