#include "core/engine/engine.h"

#include <array>
#include <string>
#include <vector>

#include "core/util/error.h"

namespace nnd {

void Engine::run(int64_t batch, std::span<const InputView> inputs, std::span<float* const> outputs) {
  const Graph& g = graph();
  // A warm run allocates nothing (tests/jit_common/jit_warm_run_alloc_test.cpp): the views of a
  // usual graph's outputs stand on the stack.
  constexpr size_t kOnStack = 16;
  std::array<OutputView, kOnStack> local;
  std::vector<OutputView> heap(outputs.size() > kOnStack ? outputs.size() : 0);
  const std::span<OutputView> views = heap.empty() ? std::span<OutputView>(local.data(), outputs.size())
                                                   : std::span<OutputView>(heap);
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (i < g.outputs.size()) {
      const Value& v = g.values[static_cast<size_t>(g.outputs[i])];
      if (output_view_dtype(v.dtype) != DType::kFloat32) {
        const std::string name = i < g.output_names.size() ? g.output_names[i] : v.name;
        throw Error(ErrorCode::kInvalidArgument, this->name() + " engine: output '" + name + "' is " +
                                                     dtype_name(v.dtype) + ", not float32: run it with OutputViews");
      }
    }
    views[i] = {DType::kFloat32, outputs[i]};
  }
  run_views(batch, inputs, views);
}

void check_output_views(const Graph& g, std::span<const OutputView> outputs, const char* engine) {
  if (outputs.size() != g.outputs.size()) {
    throw Error(ErrorCode::kInvalidArgument, std::string(engine) + ": " + g.source + " has " +
                                                 std::to_string(g.outputs.size()) + " output(s), got " +
                                                 std::to_string(outputs.size()));
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!outputs[i].data) {
      throw Error(ErrorCode::kInvalidArgument, std::string(engine) + ": output " + std::to_string(i) + " is null");
    }
    const DType want = output_view_dtype(g.values[static_cast<size_t>(g.outputs[i])].dtype);
    if (outputs[i].dtype != want) {
      throw Error(ErrorCode::kInvalidArgument, std::string(engine) + ": output " + std::to_string(i) + " is " +
                                                   dtype_name(want) + ", given " + dtype_name(outputs[i].dtype));
    }
  }
}

}  // namespace nnd
