// Shape inference: resolves every node's output shape from its inputs and parameters, validating
// the parameters against the input shapes on the way.
#pragma once

#include "core/ir/graph.h"

namespace nnd {

// Fills Value::shape of every node output, resolves axis fields (`axis` from `keras_axis`),
// and checks that weights have the shapes the layer needs. All size arithmetic is overflow-checked
// (checked_math.h). Throws nnd::Error whose message starts with g.node_context(node) and names the
// offending field, e.g.
//   "m.h5: layer 'conv2d' (Conv2D): kernel: expected shape (3, 3, 5, 8), got (3, 3, 4, 8)".
// Requires graph inputs to have shapes and the graph to pass verify_structure().
void infer_shapes(Graph& g);

// The same for one node whose inputs already have shapes (loaders that need each output shape as
// they build the graph, e.g. the ONNX importer).
void infer_node_shape(Graph& g, NodeId n);

}  // namespace nnd
