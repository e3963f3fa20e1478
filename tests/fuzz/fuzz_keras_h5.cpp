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

// libhdf5 sizes buffers from fields of the file (a metadata entry's length, a heap's size) and
// turns a failed malloc into an error, which the loader reports as nnd::Error; by default ASan
// aborts on a malloc above its 1 TiB limit instead of returning NULL as the C library would.
// Let malloc fail as in production. C++ `new` in nnd's own code still aborts (a finding), and
// libFuzzer still reports any malloc over -malloc_limit_mb (default: -rss_limit_mb).
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }

// libhdf5 1.10.8 leaks small blocks on some of its own error paths (56 bytes when the metadata
// cache fails to allocate an entry's image, H5C_protect): not nnd's to fix, a few bytes per
// rejected file. Leaks allocated inside libhdf5 are ignored; nnd's own still count. (nnd closes
// every HDF5 object through RAII handles and opens files with H5F_CLOSE_STRONG.)
extern "C" const char* __lsan_default_suppressions() { return "leak:libhdf5\n"; }

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
