#include "core/jit/index_outputs.h"

#include <variant>

#include "core/util/error.h"

namespace nnd::jit {

IndexSplit split_index_outputs(const Graph& g) {
  IndexSplit s;
  std::vector<size_t> kept, index_nodes;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    (std::holds_alternative<ArgMaxParams>(g.nodes[i].params) ? index_nodes : kept).push_back(i);
  }
  if (index_nodes.empty()) {
    s.body = g;
    s.whole = g;
    return s;
  }
  // The whole graph: the other nodes in their order, then the ArgMax nodes (which feed nothing).
  s.whole = g;
  s.whole.nodes.clear();
  for (size_t i : kept) s.whole.nodes.push_back(g.nodes[i]);
  for (size_t i : index_nodes) s.whole.nodes.push_back(g.nodes[i]);
  for (size_t i = 0; i < s.whole.nodes.size(); ++i) {
    s.whole.values[static_cast<size_t>(s.whole.nodes[i].output)].producer = static_cast<NodeId>(i);
  }
  s.body = s.whole;
  s.body.nodes.resize(kept.size());
  for (size_t i : index_nodes) {
    const Node& n = g.nodes[i];
    s.body.values[static_cast<size_t>(n.output)].producer = kNoNode;
    const Value& in = g.values[static_cast<size_t>(n.inputs[0])];
    bool is_output = false;
    for (size_t k = 0; k < g.outputs.size(); ++k) {
      if (g.outputs[k] != n.output) continue;
      is_output = true;
      s.body.outputs[k] = n.inputs[0];
      IndexOutput o;
      o.slot = static_cast<int>(k);
      o.params = std::get<ArgMaxParams>(n.params);
      o.in_shape = in.shape;
      o.in_count = element_count(in.shape, in.name);
      o.out_count = element_count(g.values[static_cast<size_t>(n.output)].shape, n.name);
      s.outputs.push_back(o);
    }
    // Shape inference refuses an int64 tensor as any layer's input; an ArgMax nobody reads
    // computes nothing anyone asked for.
    if (!is_output) {
      throw Error(ErrorCode::kUnsupported, g.node_context(n) + ": its indices are not a graph output (nnd serves "
                                                              "ArgMax only as one)");
    }
  }
  return s;
}

}  // namespace nnd::jit
