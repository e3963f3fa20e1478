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

// Thread safety: an engine is immutable after construction, and every method may be called
// from several threads at once on the same engine. In particular run() is re-entrant: concurrent
// calls (each with its own inputs and outputs) do not interfere, so one engine per model serves
// every worker thread of the daemon. An implementation keeps whatever a call needs as scratch in
// that call, or takes it from a pool under a lock (the JIT engine's arenas); it never writes
// state shared between calls. tests/daemon/engine_concurrency_test.cpp checks each engine kind
// (and runs under ThreadSanitizer in scripts/test.sh).
class Engine {
 public:
  virtual ~Engine() = default;

  // Runs `batch` samples. `inputs` in Graph::inputs order, `outputs` in Graph::outputs order, each
  // with room for batch * element_count(output shape) floats. Throws nnd::Error only for misuse
  // (wrong counts, batch < 1, null pointers); never for data values. Safe to call concurrently.
  virtual void run(int64_t batch, std::span<const InputView> inputs,
                   std::span<float* const> outputs) = 0;

  virtual const Graph& graph() const = 0;
  virtual std::string name() const = 0;  // "reference", "jit-avx2", ...
};

}  // namespace nnd
