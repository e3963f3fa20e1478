#include "core/passes/graph_edit.h"

#include <algorithm>

namespace nnd::passes {

std::vector<int> value_uses(const Graph& g) {
  std::vector<int> uses(g.values.size(), 0);
  for (const Node& n : g.nodes) {
    for (ValueId v : n.inputs) ++uses[static_cast<size_t>(v)];
  }
  for (ValueId v : g.outputs) ++uses[static_cast<size_t>(v)];
  return uses;
}

bool is_graph_output(const Graph& g, ValueId v) {
  return std::find(g.outputs.begin(), g.outputs.end(), v) != g.outputs.end();
}

void absorb_successor(Graph& g, NodeId into, NodeId from, std::vector<bool>& dead) {
  Node& a = g.nodes[static_cast<size_t>(into)];
  Node& b = g.nodes[static_cast<size_t>(from)];
  g.values[static_cast<size_t>(a.output)].producer = kNoNode;
  a.output = b.output;
  g.values[static_cast<size_t>(b.output)].producer = into;
  b.output = -1;
  dead[static_cast<size_t>(from)] = true;
}

void replace_uses(Graph& g, ValueId from, ValueId to) {
  for (Node& n : g.nodes) {
    for (ValueId& v : n.inputs) {
      if (v == from) v = to;
    }
  }
  for (ValueId& v : g.outputs) {
    if (v == from) v = to;
  }
}

void remove_nodes(Graph& g, const std::vector<bool>& dead) {
  std::vector<Node> kept;
  kept.reserve(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (dead[i]) continue;
    kept.push_back(std::move(g.nodes[i]));
  }
  g.nodes = std::move(kept);
  for (Value& v : g.values) v.producer = kNoNode;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    g.values[static_cast<size_t>(g.nodes[i].output)].producer = static_cast<NodeId>(i);
  }
}

}  // namespace nnd::passes
