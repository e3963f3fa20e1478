#include "core/passes/fuse_activation.h"

#include <cmath>
#include <type_traits>
#include <variant>

#include "core/passes/graph_edit.h"

namespace nnd::passes {

std::optional<ActivationKind> activation_of_node(const Node& n) {
  if (n.inputs.size() != 1) return std::nullopt;
  if (const auto* a = std::get_if<ActivationParams>(&n.params)) return a->activation;
  if (const auto* r = std::get_if<ReluParams>(&n.params)) {
    if (r->threshold != 0.0 || r->negative_slope != 0.0) return std::nullopt;
    if (std::isinf(r->max_value) && r->max_value > 0) return ActivationKind::kRelu;
    if (r->max_value == 6.0) return ActivationKind::kRelu6;
  }
  return std::nullopt;
}

namespace {

// Sets the producer's activation when it can take `act`; false otherwise.
bool fuse_into(const Graph& g, Node& p, ActivationKind act) {
  return std::visit(
      [&](auto& q) -> bool {
        using T = std::decay_t<decltype(q)>;
        if constexpr (std::is_same_v<T, DenseParams> || std::is_same_v<T, ConvParams> ||
                      std::is_same_v<T, DepthwiseConvParams> || std::is_same_v<T, SeparableConvParams>) {
          if (q.activation != ActivationKind::kLinear) return false;
          q.activation = act;
          return true;
        } else if constexpr (std::is_same_v<T, BatchNormParams>) {
          if (q.activation != ActivationKind::kLinear) return false;
          if (act != ActivationKind::kRelu && act != ActivationKind::kRelu6) return false;
          if (q.axis != static_cast<int>(g.values[static_cast<size_t>(p.output)].shape.size()) - 1) return false;
          q.activation = act;
          return true;
        } else {
          return false;
        }
      },
      p.params);
}

}  // namespace

bool FuseActivation::run(Graph& g) {
  std::vector<bool> dead(g.nodes.size(), false);
  bool changed = false;
  const std::vector<int> uses = value_uses(g);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const auto act = activation_of_node(g.nodes[i]);
    if (!act) continue;
    const ValueId x = g.nodes[i].inputs[0];
    const NodeId p = g.values[static_cast<size_t>(x)].producer;
    if (p == kNoNode || uses[static_cast<size_t>(x)] != 1) continue;
    if (!fuse_into(g, g.nodes[static_cast<size_t>(p)], *act)) continue;
    absorb_successor(g, p, static_cast<NodeId>(i), dead);
    changed = true;
  }
  if (changed) remove_nodes(g, dead);
  return changed;
}

}  // namespace nnd::passes
