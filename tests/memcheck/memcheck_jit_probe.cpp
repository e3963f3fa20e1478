// Proof that valgrind memcheck checks the JIT's generated code, not only nnd's compiled C++: this
// program deliberately hands the JIT engine an output buffer one float too short (a heap block of
// exactly n - 1 floats) and runs it. The generated kernel writes the model's last output value
// itself, one float past the block, so under memcheck the run must report an "Invalid write"
// whose innermost frame is the JIT code (an address outside every mapped object, shown as
// "???"). ctest runs it under valgrind and requires that report; if memcheck ever stopped
// instrumenting JIT code (or the JIT stopped writing outputs directly), the test would fail.
//
// Usage: nnd_memcheck_jit_probe MODEL.h5 (a model whose single output the JIT writes directly)
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <vector>

#include "core/engine/engine_options.h"
#include "core/io/keras_hdf5.h"
#include "core/io/model_inputs.h"
#include "core/jit/jit_engine.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s MODEL.h5\n", argv[0]);
    return 2;
  }
  try {
    const nnd::Graph g = nnd::load_keras_h5(argv[1]);
    if (g.outputs.size() != 1) {
      std::fprintf(stderr, "%s: need a model with one output\n", argv[1]);
      return 2;
    }
    const nnd::ModelInputs in = nnd::prepare_inputs(g, {}, 1);
    nnd::EngineOptions options;
    options.engine = nnd::EngineKind::kJit;
    auto jit = nnd::jit::make_jit_engine(g, options);
    const size_t n = static_cast<size_t>(nnd::element_count(g.values[g.outputs[0]].shape, "output"));
    // malloc, not a vector: the block must end exactly where the short buffer does.
    float* out = static_cast<float*>(std::malloc((n - 1) * sizeof(float)));
    float* const outs[1] = {out};
    const auto views = in.views();
    jit->run(1, views, outs);
    std::printf("%s ran with an output buffer of %zu of %zu floats\n", jit->name().c_str(), n - 1, n);
    std::free(out);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nnd_memcheck_jit_probe: %s\n", e.what());
    return 1;
  }
  return 0;
}
