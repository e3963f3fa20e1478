// A hash of what a graph computes: its structure, shapes, layer parameters and weights, but not
// the file it came from. Two loads of the same model (from any path, .h5 or a copy) hash alike; a
// retrained model (new weights) or an edited one hashes differently. What the JIT's ISA
// calibration cache (core/jit/isa_calibration_cache.h) keys a network by.
#pragma once

#include <cstdint>

#include "core/ir/graph.h"

namespace nnd {

// 64-bit, not cryptographic: it tells a robot's few networks apart, it does not resist forgery.
// Cost: one pass over the weights (bop: under a millisecond).
uint64_t graph_content_hash(const Graph& g);

}  // namespace nnd
