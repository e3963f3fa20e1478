// The interface every execution engine implements (the reference engine and the JIT), so
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

// One graph output for a batch: room for `batch` samples of the output's per-sample shape, in
// `dtype`: float32, or int64 for the indices of an ArgMax (Value::dtype of the graph output says
// which).
struct OutputView {
  DType dtype = DType::kFloat32;
  void* data = nullptr;
};

// The dtype an engine writes a graph output of dtype `t` in: int64 for the indices of an ArgMax,
// float32 for everything else (the int8/int32 output of a pre-quantized graph, which only the
// reference engine runs, is written as its values in float32).
inline DType output_view_dtype(DType t) { return t == DType::kInt64 ? DType::kInt64 : DType::kFloat32; }

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
  // with room for batch * element_count(output shape) elements of its graph output's dtype. Throws
  // nnd::Error only for misuse (wrong counts or dtypes, batch < 1, null pointers); never for data
  // values. Safe to call concurrently.
  void run(int64_t batch, std::span<const InputView> inputs, std::span<const OutputView> outputs) {
    run_views(batch, inputs, outputs);
  }
  // The same for a graph whose outputs are all float32 (Error kInvalidArgument naming an output
  // that is not).
  void run(int64_t batch, std::span<const InputView> inputs, std::span<float* const> outputs);

  virtual const Graph& graph() const = 0;
  virtual std::string name() const = 0;  // "reference", "jit-avx2", ...

 protected:
  virtual void run_views(int64_t batch, std::span<const InputView> inputs, std::span<const OutputView> outputs) = 0;
};

// Checks a run's outputs against graph `g` (as every engine's run does): one per graph output,
// none null, each in output_view_dtype() of its output's dtype. `engine` starts the messages ("jit engine").
void check_output_views(const Graph& g, std::span<const OutputView> outputs, const char* engine);

}  // namespace nnd
