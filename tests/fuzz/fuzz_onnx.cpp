// libFuzzer target: the ONNX loader (load_onnx_bytes: protobuf parsing, constant folding, layout
// bridging, the per-operator lowerings, shape inference) on arbitrary bytes.
// Expected outcome: a graph, or nnd::Error.
#include <cstddef>
#include <cstdint>

#include "core/io/onnx_loader.h"
#include "core/util/error.h"
#include "tests/fuzz/fuzz_graph.h"
#include "tests/fuzz/fuzz_report.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    nnd::Graph g = nnd::load_onnx_bytes(data, size, "fuzz.onnx");
    nnd::fuzz::exercise_loaded_graph(g);
    nnd::fuzz::report("accepted");
  } catch (const nnd::Error& e) {
    nnd::fuzz::report(e.what());  // a clear error: not a model, unsupported operator, bad shape
  }
  return 0;
}
