// What a model will need in memory once compiled, computed from its graph before any engine
// exists, so that a model asking for too much is refused by name instead of failing an
// allocation (a 181-byte ONNX file whose Pad makes an 8 GiB tensor ended in "std::bad_alloc",
// naming no model and no file, or drove the machine into the OOM killer).
//
// The figures are upper bounds of what the engines allocate:
//   weights      every parameter as float32 (the engine's packed copy)
//   activations  the largest sum of tensors alive at once when the layers run in order (each
//                tensor from its layer to its last reader; inputs and outputs throughout), per
//                sample, times max_batch: the engines' arenas reuse memory within that bound
//   code         generated code, kCodeBytesPerLayer per layer
#pragma once

#include <cstdint>
#include <string>

#include "core/ir/graph.h"

namespace nnd::daemon {

struct ModelMemoryNeed {
  uint64_t weights = 0;
  uint64_t activations = 0;  // at `batch` samples
  uint64_t code = 0;
  uint32_t batch = 1;
  uint64_t total() const;    // saturating
};

inline constexpr uint64_t kCodeBytesPerLayer = 16 << 10;

// Infers the graph's shapes (idempotent) and computes its need at `batch` samples; saturates at
// UINT64_MAX instead of overflowing. Throws nnd::Error when the shapes do not infer.
ModelMemoryNeed model_memory_need(Graph& g, uint32_t batch);

// "8.0 GiB (weights 0 B, activations 8.0 GiB at max_batch 1, code 48.0 KiB)".
std::string describe_memory_need(const ModelMemoryNeed& need);
// "8.0 GiB", "512.0 KiB", "17 B".
std::string byte_text(uint64_t bytes);

}  // namespace nnd::daemon
