// In-place element-wise layers: a layer whose first kernel is element-wise (kernel_plan.h:
// runs_in_place: the affine of a BatchNorm, vrelu, vectorised or fast-math activations, merges
// without broadcasting) and whose input dies at that layer writes its output over the input's
// storage. The arena then holds one tensor where the memory plan kept two alive at that step, and
// the output stays in the cache lines the input just occupied.
//
// The graph decides which input dies where (liveness); the node's plan decides whether its kernels
// can overwrite it, so nothing here re-predicts what lowering emits. Padded storage runs later on
// the whole plan and never borders a buffer an in-place layer writes (it has two writers).
#pragma once

#include <cstddef>
#include <vector>

#include "core/ir/graph.h"
#include "core/jit/lower/lower_context.h"

namespace nnd::jit {

// Per node (indexed like g.nodes): the first position in node.inputs whose storage is read by no
// later node (directly or through Flatten/Reshape/Identity aliases) and is not a graph output, or
// -1; -1 also when the node's own output is a graph output.
std::vector<int> dying_inputs(const Graph& g);

// Called right after node n was lowered into kernels [first, cx.kernels.size()) with a fresh
// output buffer: when its first kernel runs in place over the buffer of input `dying` (arena,
// dense, the output's size), the node writes over that buffer instead and the fresh one is
// dropped. Records the choice in cx.reused_input; returns whether it was made.
bool write_in_place(LowerContext& cx, const Node& n, size_t first, int dying);

}  // namespace nnd::jit
