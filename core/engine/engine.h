// The interface every execution engine implements (the reference engine now, the JIT later), so
// tools and the daemon run a model without knowing which engine serves it.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "core/ir/graph.h"

namespace nnd {

// One graph input for a batch: `batch` samples of the input's per-sample shape, contiguous,
// batch-major, in `dtype` (float32, or uint8 converted to float32 by the engine). The engine never
// writes to it.
struct InputView {
  DType dtype = DType::kFloat32;
  const void* data = nullptr;
};

class Engine {
 public:
  virtual ~Engine() = default;

  // Runs `batch` samples. `inputs` in Graph::inputs order, `outputs` in Graph::outputs order, each
  // with room for batch * element_count(output shape) floats. Throws nnd::Error only for misuse
  // (wrong counts, batch < 1, null pointers); never for data values.
  virtual void run(int64_t batch, std::span<const InputView> inputs,
                   std::span<float* const> outputs) = 0;

  virtual const Graph& graph() const = 0;
  virtual std::string name() const = 0;  // "reference", "jit-avx2", ...
};

}  // namespace nnd
