// The exact reference engine: a direct, readable implementation of every layer with float64
// arithmetic throughout, used as the oracle for the JIT and as a fallback. Clarity over speed.
#pragma once

#include <memory>

#include "core/engine/engine.h"
#include "core/ir/graph.h"

namespace nnd {

// Creates a reference engine for a graph that has passed infer_shapes(). The engine keeps its own
// copy of the graph. Each run() computes every node in float64 and rounds only the graph outputs
// to float32.
std::unique_ptr<Engine> make_reference_engine(const Graph& g);

}  // namespace nnd
