// In-place element-wise layers: a BatchNormalization, ReLU, vectorised activation or
// same-shape merge whose input dies at that layer writes its output over the input's storage.
// The arena then holds one tensor where the memory plan kept two alive at that step, and the
// output stays in the cache lines the input just occupied.
//
// This unit decides on the graph (liveness, layer kinds); the JIT engine also requires the input
// to live in the arena (not the caller's input, not a bordered buffer, same size) before reusing it.
#pragma once

#include <vector>

#include "core/engine/engine_options.h"
#include "core/ir/graph.h"

namespace nnd::jit {

// Per node (indexed like g.nodes): the position in node.inputs whose storage the output may
// reuse, or -1. Only kernels that read each element before writing it qualify: the affine
// (BatchNorm over the last axis), vrelu (threshold 0), vectorised or fast-math element-wise
// activations (not softmax) and merges without broadcasting. The input must not be read later
// (directly or through Flatten/Reshape/Identity aliases) and neither value may be a graph output.
std::vector<int> plan_in_place(const Graph& g, MathMode math);

}  // namespace nnd::jit
