#include "core/passes/fuse_add.h"

#include <variant>

#include "core/passes/graph_edit.h"

namespace nnd::passes {
namespace {

// A kind takes a fused residual exactly when its params have the `residual` field (layers.h):
// shape inference, the reference engine and the JIT all key on that field, so the field is the
// classification and a generic visit is exhaustive by construction.
bool can_take_residual(const Node& p) {
  return std::visit(
      [&](const auto& q) -> bool {
        if constexpr (requires { q.residual; }) {
          return q.activation == ActivationKind::kLinear && !q.residual && p.inputs.size() == 1;
        } else {
          return false;
        }
      },
      p.params);
}

void set_residual(Node& p) {
  std::visit(
      [](auto& q) {
        if constexpr (requires { q.residual; }) q.residual = true;
      },
      p.params);
}

}  // namespace

bool FuseAdd::run(Graph& g) {
  std::vector<bool> dead(g.nodes.size(), false);
  bool changed = false;
  std::vector<int> uses = value_uses(g);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& add = g.nodes[i];
    // This pass looks for one kind only.
    const auto* m = std::get_if<MergeParams>(&add.params);
    if (!m || m->op != MergeOp::kAdd || add.inputs.size() != 2 || add.inputs[0] == add.inputs[1]) continue;
    const Dims& out = g.values[static_cast<size_t>(add.output)].shape;
    if (g.values[static_cast<size_t>(add.inputs[0])].shape != out ||
        g.values[static_cast<size_t>(add.inputs[1])].shape != out) {
      continue;
    }
    // Candidate producers, the later one first.
    NodeId best = kNoNode;
    ValueId other = -1;
    for (int k = 0; k < 2; ++k) {
      const ValueId v = add.inputs[static_cast<size_t>(k)], w = add.inputs[static_cast<size_t>(1 - k)];
      const NodeId p = g.values[static_cast<size_t>(v)].producer;
      if (p == kNoNode || dead[static_cast<size_t>(p)] || uses[static_cast<size_t>(v)] != 1) continue;
      if (!can_take_residual(g.nodes[static_cast<size_t>(p)])) continue;
      const NodeId pw = g.values[static_cast<size_t>(w)].producer;
      if (pw != kNoNode && pw > p) continue;  // w not computed before p
      if (best == kNoNode || p > best) {
        best = p;
        other = w;
      }
    }
    if (best == kNoNode) continue;
    Node& p = g.nodes[static_cast<size_t>(best)];
    p.inputs.push_back(other);
    set_residual(p);
    absorb_successor(g, best, static_cast<NodeId>(i), dead);
    changed = true;
    uses = value_uses(g);
  }
  if (changed) remove_nodes(g, dead);
  return changed;
}

}  // namespace nnd::passes
