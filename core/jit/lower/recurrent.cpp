// Recurrent layers have no kernels of their own: passes::ExpandRecurrent rewrites them into Dense
// and Merge nodes before lowering, up to passes::kMaxUnrolledSteps steps. The one limit of the JIT.
#include <string>

#include "core/jit/lower/lower.h"
#include "core/passes/expand_recurrent.h"
#include "core/util/error.h"

namespace nnd::jit {

std::optional<std::string> recurrent_limit(const Graph& g, const Node& n) {
  if (!std::holds_alternative<RecurrentParams>(n.params)) return std::nullopt;
  const int64_t steps = g.values[static_cast<size_t>(n.inputs[0])].shape[0];
  if (steps > passes::kMaxUnrolledSteps) return "a recurrent layer over " + std::to_string(steps) + " steps";
  return std::nullopt;
}

void lower(LowerContext& cx, const Node& n, const RecurrentParams&) {
  const std::optional<std::string> why = recurrent_limit(cx.g, n);
  // Over the step limit the JIT does not compile it (kUnsupported); unexpanded otherwise is a bug.
  throw Error(why ? ErrorCode::kUnsupported : ErrorCode::kInternal, cx.g.node_context(n) + ": not compiled by the JIT yet (" +
              (why ? *why : std::string("a recurrent layer the graph passes did not expand")) + ")");
}

}  // namespace nnd::jit
