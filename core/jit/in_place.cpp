// Which element-wise layers run in place (see in_place.h).
#include "core/jit/in_place.h"

#include <limits>
#include <type_traits>
#include <variant>

#include "core/ir/activation.h"
#include "core/jit/x86/kernels.h"
#include "core/jit/x86/math.h"

namespace nnd::jit {

namespace {

bool aliases_input(const Node& n) {
  return std::holds_alternative<FlattenParams>(n.params) || std::holds_alternative<ReshapeParams>(n.params) ||
         std::holds_alternative<IdentityParams>(n.params);
}

// Whether the kernel the engine emits for n is element-wise and reads before it writes.
bool elementwise_kernel(const Graph& g, const Node& n, MathMode math) {
  const Dims& out = g.values[static_cast<size_t>(n.output)].shape;
  return std::visit(
      [&](const auto& p) -> bool {
        using T = std::decay_t<decltype(p)>;
        if constexpr (std::is_same_v<T, BatchNormParams>) {
          return p.axis == static_cast<int>(out.size()) - 1;  // other axes: jit_lower_extra.cpp
        } else if constexpr (std::is_same_v<T, ReluParams>) {
          return p.threshold == 0.0;  // f32-vrelu (thresholds go through a helper)
        } else if constexpr (std::is_same_v<T, ActivationParams>) {
          if (activation_is_softmax_like(p.activation)) return false;
          return unary_vectorised(p.activation) || (math == MathMode::kFast && fast_math_kind(p.activation));
        } else if constexpr (std::is_same_v<T, MergeParams>) {
          for (ValueId v : n.inputs) {
            if (g.values[static_cast<size_t>(v)].shape != out) return false;  // broadcasting
          }
          return true;
        } else {
          return false;
        }
      },
      n.params);
}

}  // namespace

std::vector<int> plan_in_place(const Graph& g, MathMode math) {
  constexpr int kForever = std::numeric_limits<int>::max();
  // The storage root of every value (aliases share their input's storage) and the last node
  // reading each root.
  std::vector<ValueId> root(g.values.size());
  for (size_t v = 0; v < g.values.size(); ++v) root[v] = static_cast<ValueId>(v);
  std::vector<int> last_read(g.values.size(), -1);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (aliases_input(n) && !n.inputs.empty()) root[static_cast<size_t>(n.output)] = root[static_cast<size_t>(n.inputs[0])];
    for (ValueId v : n.inputs) last_read[static_cast<size_t>(root[static_cast<size_t>(v)])] = static_cast<int>(i);
  }
  for (ValueId v : g.outputs) last_read[static_cast<size_t>(root[static_cast<size_t>(v)])] = kForever;
  std::vector<int> plan(g.nodes.size(), -1);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (last_read[static_cast<size_t>(n.output)] == kForever || !elementwise_kernel(g, n, math)) continue;
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      if (last_read[static_cast<size_t>(root[static_cast<size_t>(n.inputs[k])])] == static_cast<int>(i)) {
        plan[i] = static_cast<int>(k);
        break;
      }
    }
  }
  return plan;
}

}  // namespace nnd::jit
