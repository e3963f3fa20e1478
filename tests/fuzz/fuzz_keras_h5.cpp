// libFuzzer target: the Keras HDF5 loader. Input: the bytes of an .h5 file, opened as an
// in-memory image (load_keras_h5_image, HDF5's core driver), so nothing touches the disk.
// Expected outcome: a graph, or nnd::Error. Anything else (another exception, a crash, a
// sanitizer report, a leak, a hang, an allocation over -rss_limit_mb) is a finding.
//
// libhdf5 itself is not instrumented: coverage guidance stops at its API, and memory errors
// inside it show up only if they crash (docs/fuzzing.md lists what it is known to do).
#include <cstddef>
#include <cstdint>

#include "core/io/keras_hdf5.h"
#include "core/util/error.h"
#include "tests/fuzz/fuzz_report.h"
#include "tests/fuzz/fuzz_graph.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    // The name only appears in messages; the core driver refuses names of existing files.
    nnd::Graph g = nnd::load_keras_h5_image(data, size, "/nonexistent/fuzz-input.h5");
    nnd::fuzz::exercise_loaded_graph(g);
    nnd::fuzz::report("accepted");
  } catch (const nnd::Error& e) {
    nnd::fuzz::report(e.what());
    // A clear error: the expected outcome for most inputs.
  }
  return 0;
}
