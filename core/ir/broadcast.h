// Right-aligned (NumPy-style) broadcasting of one tensor to a larger shape, as merge layers and
// PReLU's shared axes use it. Shared by the reference engine and the JIT's index tables so both
// read the same source element for every output element.
#pragma once

#include <cstdint>
#include <vector>

#include "core/ir/tensor.h"

namespace nnd {

// For every flat index of a sample of shape `out`, the flat index of the element of `in` it reads
// under right-aligned broadcasting (`in` has at most out's rank; each of its dims equals the
// output's or is 1). Shapes must have passed shape inference (sizes are already bounded).
std::vector<int64_t> broadcast_map(const Dims& out, const Dims& in);

}  // namespace nnd
