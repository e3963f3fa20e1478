// Readable text dump of a graph, one line per node, for NND_JIT_DUMP and test failure messages:
//
//   graph bop.h5: 2 input(s), 1 output(s), 51 node(s)
//   input  %0 'input' (240, 320, 2) float32
//   node 0 'conv2d' Conv(%0) -> %1 (120, 160, 16) k3x3 s2x2 same relu
//   output 'conv2d_3' = %52
#pragma once

#include <string>

#include "core/ir/graph.h"

namespace nnd {

std::string dump_graph(const Graph& g);

// The per-node part of a dump line: kind-specific parameters ("k3x3 s1x1 same relu +residual").
std::string describe_params(const LayerParams& p);

}  // namespace nnd
