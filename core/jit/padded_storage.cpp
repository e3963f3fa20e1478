// Which values get bordered storage (see padded_storage.h).
#include "core/jit/padded_storage.h"

#include <algorithm>
#include <limits>
#include <type_traits>
#include <variant>

#include "core/ir/conv_geometry.h"
#include "core/jit/x86/kernels.h"

namespace nnd::jit {

namespace {

// The consumer's view of its input: (h, w, c) per sample, rank-1 layers as h = 1.
bool hwc_of(const Dims& s, int rank, PaddedStore& p) {
  if (rank == 1 && s.size() == 2) {
    p.h = 1;
    p.w = s[0];
    p.c = s[1];
    return true;
  }
  if (rank == 2 && s.size() == 3) {
    p.h = s[0];
    p.w = s[1];
    p.c = s[2];
    return true;
  }
  return false;
}

// The padding of a window over an (h, w) input (as lowering's pads_for, lower/lower_context.h).
void window_pads(const Window& win, PaddedStore& p) {
  const AxisGeometry gh = window_h(win, p.h);
  const AxisGeometry gw = window_w(win, p.w);
  p.top = gh.pad_before;
  p.left = gw.pad_before;
  p.bottom = std::max<int64_t>(0, (gh.out - 1) * win.stride_h + gh.kernel_eff - p.h - p.top);
  p.right = std::max<int64_t>(0, (gw.out - 1) * win.stride_w + gw.kernel_eff - p.w - p.left);
}

bool any_padding(const PaddedStore& p) { return p.top || p.bottom || p.left || p.right; }

// Whether node n writes its output with a placement-aware spatial kernel and nothing after it.
bool producer_can_place(const Graph& g, const Node& n) {
  return std::visit(
      [&](const auto& p) -> bool {
        using T = std::decay_t<decltype(p)>;
        if constexpr (std::is_same_v<T, ConvParams> || std::is_same_v<T, DepthwiseConvParams> ||
                      std::is_same_v<T, SeparableConvParams>) {
          return !p.residual && act_fusable(p.activation);
        } else if constexpr (std::is_same_v<T, PoolParams>) {
          if (p.kind == PoolKind::kMax) return true;
          // Average pooling over padding rescales its output densely afterwards (f32-posscale).
          PaddedStore own;
          if (n.inputs.empty() || !hwc_of(g.values[static_cast<size_t>(n.inputs[0])].shape, p.rank, own)) return false;
          window_pads(p.window, own);
          return !any_padding(own);
        } else {
          return false;
        }
      },
      n.params);
}

}  // namespace

std::optional<PaddedStore> input_padding_of(const Graph& g, const Node& consumer) {
  if (consumer.inputs.empty()) return std::nullopt;
  const Dims& shape = g.values[static_cast<size_t>(consumer.inputs[0])].shape;
  return std::visit(
      [&](const auto& p) -> std::optional<PaddedStore> {
        using T = std::decay_t<decltype(p)>;
        PaddedStore s;
        if constexpr (std::is_same_v<T, ConvParams> || std::is_same_v<T, PoolParams>) {
          if (!hwc_of(shape, p.rank, s)) return std::nullopt;
          window_pads(p.window, s);
          if constexpr (std::is_same_v<T, PoolParams>) {
            if (p.kind == PoolKind::kMax) s.fill = -std::numeric_limits<float>::infinity();
          }
        } else if constexpr (std::is_same_v<T, DepthwiseConvParams> || std::is_same_v<T, SeparableConvParams>) {
          if (p.depth_multiplier != 1 || !hwc_of(shape, p.rank, s)) return std::nullopt;
          window_pads(p.window, s);
        } else {
          return std::nullopt;
        }
        if (!any_padding(s)) return std::nullopt;
        return s;
      },
      consumer.params);
}

std::vector<std::optional<PaddedStore>> plan_padded_storage(const Graph& g) {
  std::vector<std::optional<PaddedStore>> plan(g.values.size());
  std::vector<int> readers(g.values.size(), 0), producer(g.values.size(), -1);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (ValueId v : g.nodes[i].inputs) ++readers[static_cast<size_t>(v)];
    producer[static_cast<size_t>(g.nodes[i].output)] = static_cast<int>(i);
  }
  for (ValueId v : g.outputs) readers[static_cast<size_t>(v)] += 2;  // never bordered
  for (const Node& n : g.nodes) {
    const std::optional<PaddedStore> need = input_padding_of(g, n);
    if (!need) continue;
    const auto v = static_cast<size_t>(n.inputs[0]);
    if (readers[v] != 1 || producer[v] < 0) continue;
    if (!producer_can_place(g, g.nodes[static_cast<size_t>(producer[v])])) continue;
    plan[v] = need;
  }
  return plan;
}

}  // namespace nnd::jit
