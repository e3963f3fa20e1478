// Which element-wise layers run in place (see in_place.h).
#include "core/jit/in_place.h"

#include <algorithm>
#include <limits>
#include <variant>

namespace nnd::jit {

namespace {

bool aliases_input(const Node& n) {
  return std::holds_alternative<FlattenParams>(n.params) || std::holds_alternative<ReshapeParams>(n.params) ||
         std::holds_alternative<IdentityParams>(n.params);
}

}  // namespace

std::vector<int> dying_inputs(const Graph& g) {
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
  std::vector<int> dying(g.nodes.size(), -1);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (last_read[static_cast<size_t>(n.output)] == kForever || aliases_input(n)) continue;
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      if (last_read[static_cast<size_t>(root[static_cast<size_t>(n.inputs[k])])] == static_cast<int>(i)) {
        dying[i] = static_cast<int>(k);
        break;
      }
    }
  }
  return dying;
}

bool write_in_place(LowerContext& cx, const Node& n, size_t first, int dying) {
  if (dying < 0 || first >= cx.kernels.size() || !runs_in_place(cx.kernels[first].spec)) return false;
  const int dst = cx.value_buf[static_cast<size_t>(n.output)];
  const int src = cx.in_buf(n, static_cast<size_t>(dying));
  const std::vector<int>& reads = cx.kernels[first].in;
  if (std::find(reads.begin(), reads.end(), src) == reads.end()) return false;
  const PlanBuffer& in = cx.buffers[static_cast<size_t>(src)];
  const PlanBuffer& out = cx.buffers[static_cast<size_t>(dst)];
  if (in.kind != PlanBuffer::kArena || in.floats != cx.out_count(n)) return false;
  if (out.kind != PlanBuffer::kArena) return false;
  for (size_t k = first; k < cx.kernels.size(); ++k) {
    for (int& b : cx.kernels[k].in) b = b == dst ? src : b;
    if (cx.kernels[k].out == dst) cx.kernels[k].out = src;
  }
  cx.value_buf[static_cast<size_t>(n.output)] = src;
  // The fresh output buffer was the node's last (an element-wise node makes no others).
  if (dst == static_cast<int>(cx.buffers.size()) - 1) cx.buffers.pop_back();
  cx.reused_input[static_cast<size_t>(&n - cx.g.nodes.data())] = dying;
  return true;
}

}  // namespace nnd::jit
