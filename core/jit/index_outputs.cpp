#include "core/jit/index_outputs.h"

#include <variant>

#include "core/util/error.h"

namespace nnd::jit {

namespace {

// The nodes that make or view indices: ArgMax, and the views (Reshape, Flatten, Identity) shape
// inference lets read an int64 tensor.
bool makes_indices(const Graph& g, const Node& n) {
  if (std::holds_alternative<ArgMaxParams>(n.params)) return true;
  return !n.inputs.empty() && g.values[static_cast<size_t>(n.inputs[0])].dtype == DType::kInt64;
}

}  // namespace

IndexSplit split_index_outputs(const Graph& g) {
  IndexSplit s;
  std::vector<size_t> kept, index_nodes;
  for (size_t i = 0; i < g.nodes.size(); ++i) (makes_indices(g, g.nodes[i]) ? index_nodes : kept).push_back(i);
  if (index_nodes.empty()) {
    s.body = g;
    s.whole = g;
    return s;
  }
  // The whole graph: the other nodes in their order, then the index nodes (which feed only each
  // other and the outputs).
  s.whole = g;
  s.whole.nodes.clear();
  for (size_t i : kept) s.whole.nodes.push_back(g.nodes[i]);
  for (size_t i : index_nodes) s.whole.nodes.push_back(g.nodes[i]);
  for (size_t i = 0; i < s.whole.nodes.size(); ++i) {
    s.whole.values[static_cast<size_t>(s.whole.nodes[i].output)].producer = static_cast<NodeId>(i);
  }
  s.body = s.whole;
  s.body.nodes.resize(kept.size());
  for (size_t i : index_nodes) s.body.values[static_cast<size_t>(g.nodes[i].output)].producer = kNoNode;
  // Each int64 output, through its views, to the ArgMax that makes it: the body writes that
  // ArgMax's float input in the slot, the indices are computed there after the kernels (a view
  // keeps the order of the elements).
  std::vector<bool> served(g.nodes.size(), false);
  for (size_t k = 0; k < g.outputs.size(); ++k) {
    ValueId v = g.outputs[k];
    if (g.values[static_cast<size_t>(v)].dtype != DType::kInt64) continue;
    NodeId p = g.values[static_cast<size_t>(v)].producer;
    while (p != kNoNode && !std::holds_alternative<ArgMaxParams>(g.nodes[static_cast<size_t>(p)].params)) {
      p = g.values[static_cast<size_t>(g.nodes[static_cast<size_t>(p)].inputs[0])].producer;
    }
    if (p == kNoNode) throw Error(ErrorCode::kInternal, "internal: int64 output " + std::to_string(k) + " has no ArgMax");
    const Node& n = g.nodes[static_cast<size_t>(p)];
    served[static_cast<size_t>(p)] = true;
    const Value& in = g.values[static_cast<size_t>(n.inputs[0])];
    s.body.outputs[k] = n.inputs[0];
    IndexOutput o;
    o.slot = static_cast<int>(k);
    o.params = std::get<ArgMaxParams>(n.params);
    o.in_shape = in.shape;
    o.in_count = element_count(in.shape, in.name);
    o.out_count = element_count(g.values[static_cast<size_t>(n.output)].shape, n.name);
    s.outputs.push_back(o);
  }
  // Shape inference lets an int64 tensor reach only views and outputs: an ArgMax no output shows
  // computes nothing anyone asked for.
  for (size_t i : index_nodes) {
    if (std::holds_alternative<ArgMaxParams>(g.nodes[i].params) && !served[i]) {
      throw Error(ErrorCode::kUnsupported, g.node_context(g.nodes[i]) + ": its indices are not a graph output (nnd "
                                                                        "serves ArgMax only as one)");
    }
  }
  return s;
}

}  // namespace nnd::jit
