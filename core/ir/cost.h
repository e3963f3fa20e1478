// Static cost figures of a graph: parameter counts and FLOPs, for nninfo and `nnd --check`.
#pragma once

#include <cstdint>

#include "core/ir/graph.h"

namespace nnd {

// Number of weight scalars of one node (what Keras' model.summary() counts as parameters,
// including BatchNormalization's moving statistics).
int64_t parameter_count(const Node& n);
int64_t parameter_count(const Graph& g);

// Floating-point operations for ONE sample: a multiply-add counts as 2, other element-wise work
// as 1 per output element (pooling counts window comparisons/additions). Requires inferred shapes.
int64_t flops_per_sample(const Graph& g, const Node& n);
int64_t flops_per_sample(const Graph& g);

}  // namespace nnd
