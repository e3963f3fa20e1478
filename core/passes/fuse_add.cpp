#include "core/passes/fuse_add.h"

#include <optional>
#include <variant>

#include "core/passes/graph_edit.h"

namespace nnd::passes {
namespace {

// A kind takes a fused residual exactly when its params have the `residual` field (layers.h):
// shape inference, the reference engine and the JIT all key on that field, so the field is the
// classification and a generic visit is exhaustive by construction.
// Where p can take a fused residual: before its activation when that is linear (a later
// activation can still fuse), after it when it is ReLU or ReLU6 (the kinds every engine applies
// in the layer's epilogue); nothing otherwise.
std::optional<ResidualAt> residual_place(const Node& p) {
  return std::visit(
      [&](const auto& q) -> std::optional<ResidualAt> {
        if constexpr (requires { q.residual; }) {
          if (q.residual || p.inputs.size() != 1) return std::nullopt;
          if (q.activation == ActivationKind::kLinear) return ResidualAt::kBeforeActivation;
          if (q.activation == ActivationKind::kRelu || q.activation == ActivationKind::kRelu6) {
            return ResidualAt::kAfterActivation;
          }
        }
        return std::nullopt;
      },
      p.params);
}

void set_residual(Node& p, ResidualAt at) {
  std::visit(
      [&](auto& q) {
        if constexpr (requires { q.residual; }) {
          q.residual = true;
          q.residual_at = at;
        }
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
    ResidualAt best_at = ResidualAt::kBeforeActivation;
    for (int k = 0; k < 2; ++k) {
      const ValueId v = add.inputs[static_cast<size_t>(k)], w = add.inputs[static_cast<size_t>(1 - k)];
      const NodeId p = g.values[static_cast<size_t>(v)].producer;
      if (p == kNoNode || dead[static_cast<size_t>(p)] || uses[static_cast<size_t>(v)] != 1) continue;
      const std::optional<ResidualAt> at = residual_place(g.nodes[static_cast<size_t>(p)]);
      if (!at) continue;
      const NodeId pw = g.values[static_cast<size_t>(w)].producer;
      if (pw != kNoNode && pw > p) continue;  // w not computed before p
      if (best == kNoNode || p > best) {
        best = p;
        other = w;
        best_at = *at;
      }
    }
    if (best == kNoNode) continue;
    Node& p = g.nodes[static_cast<size_t>(best)];
    p.inputs.push_back(other);
    set_residual(p, best_at);
    absorb_successor(g, best, static_cast<NodeId>(i), dead);
    changed = true;
    uses = value_uses(g);
  }
  if (changed) remove_nodes(g, dead);
  return changed;
}

}  // namespace nnd::passes
