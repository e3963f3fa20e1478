// Graph outputs that are ArgMax indices (int64): the JIT compiles the graph without the ArgMax
// nodes, with each one's float input as the graph output in its place, and computes the indices
// from that float output after the kernels (arg_max, core/ir/arg_max.h: one comparison per
// element, a few hundred for a classifier's head, not worth a kernel per ISA). Shape inference
// lets an int64 tensor reach only graph outputs and the views on the way (Reshape, Flatten,
// Identity: Unsqueeze/Squeeze of the indices), which keep the order of the elements, so every
// ArgMax is one of these and its views are nothing to compute.
#pragma once

#include <cstdint>
#include <vector>

#include "core/ir/graph.h"

namespace nnd::jit {

struct IndexOutput {
  int slot = 0;             // graph output slot: the indices in the whole graph, its input in the body
  ArgMaxParams params;
  Dims in_shape;            // per sample
  int64_t in_count = 0;     // floats per sample the body writes in the slot
  int64_t out_count = 0;    // indices per sample
};

struct IndexSplit {
  // What the kernels compute: the graph's nodes without the ArgMax nodes and their views; in each
  // index output's slot the ArgMax's input.
  Graph body;
  // The graph as the engine's callers see it: the body's nodes (same indices), then the ArgMax
  // nodes and their views, and the graph's own outputs.
  Graph whole;
  std::vector<IndexOutput> outputs;  // by slot
};

// `g` with shapes inferred. Without ArgMax nodes body and whole are `g` and outputs is empty.
IndexSplit split_index_outputs(const Graph& g);

}  // namespace nnd::jit
