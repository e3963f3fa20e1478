#include "core/passes/drop_identity.h"

#include <variant>

#include "core/passes/graph_edit.h"

namespace nnd::passes {

bool is_identity_node(const Graph& g, const Node& n) {
  if (n.inputs.size() != 1) return false;
  if (std::holds_alternative<IdentityParams>(n.params)) return true;
  if (const auto* a = std::get_if<ActivationParams>(&n.params)) return a->activation == ActivationKind::kLinear;
  if (std::holds_alternative<FlattenParams>(n.params) || std::holds_alternative<ReshapeParams>(n.params)) {
    return g.values[static_cast<size_t>(n.inputs[0])].shape == g.values[static_cast<size_t>(n.output)].shape;
  }
  return false;
}

bool DropIdentity::run(Graph& g) {
  std::vector<bool> dead(g.nodes.size(), false);
  bool changed = false;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (!is_identity_node(g, n)) continue;
    replace_uses(g, n.output, n.inputs[0]);
    dead[i] = true;
    changed = true;
  }
  if (changed) remove_nodes(g, dead);
  return changed;
}

}  // namespace nnd::passes
