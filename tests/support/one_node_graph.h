// The smallest graph around one layer, shared by the unit, JIT and layer-kind tests: graph inputs
// in0, in1, ... of the given shapes feed one node, whose output is the only graph output.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/ir/graph.h"

namespace nnd::test {

struct OneNodeNames {
  std::string source = "test";       // Graph::source, as error messages show it
  std::string node = "layer";        // the node's and its output's name
  std::string source_op = "Test";  // Node::source_op
};

// Shapes are not inferred: tests of shape inference take the graph as built.
inline Graph one_node_graph(LayerParams params, const std::vector<Dims>& input_shapes, DType input_dtype,
                            const OneNodeNames& names) {
  Graph g;
  g.source = names.source;
  Node n;
  n.name = names.node;
  n.source_op = names.source_op;
  n.params = std::move(params);
  for (size_t i = 0; i < input_shapes.size(); ++i) {
    Value v;
    v.name = "in" + std::to_string(i);
    v.dtype = input_dtype;
    v.shape = input_shapes[i];
    g.values.push_back(v);
    g.inputs.push_back(static_cast<ValueId>(i));
    g.input_names.push_back(v.name);
    n.inputs.push_back(static_cast<ValueId>(i));
  }
  Value out;
  out.name = names.node;
  out.producer = 0;
  g.values.push_back(out);
  n.output = static_cast<ValueId>(g.values.size() - 1);
  g.outputs.push_back(n.output);
  g.output_names.push_back(names.node);
  g.nodes.push_back(std::move(n));
  return g;
}

}  // namespace nnd::test
