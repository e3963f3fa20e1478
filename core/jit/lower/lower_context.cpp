#include "core/jit/lower/lower_context.h"

#include <algorithm>
#include <string>
#include <variant>

#include "core/ir/shape_inference.h"
#include "core/jit/code_generator.h"
#include "core/jit/kernel_name.h"
#include "core/jit/specs/conv.h"
#include "core/util/error.h"

namespace nnd::jit {

Hwc as_hwc(int rank, const Dims& s) {
  if (rank == 1) return {1, s[0], s[1]};
  return {s[0], s[1], s[2]};
}

Pads pads_for(const Window& win, const Hwc& in) {
  Pads p;
  p.h = window_h(win, in.h);
  p.w = window_w(win, in.w);
  p.top = p.h.pad_before;
  p.left = p.w.pad_before;
  p.bottom = std::max<int64_t>(0, (p.h.out - 1) * win.stride_h + p.h.kernel_eff - in.h - p.top);
  p.right = std::max<int64_t>(0, (p.w.out - 1) * win.stride_w + p.w.kernel_eff - in.w - p.left);
  return p;
}

WindowSpec window_geometry(WindowOp op, const Window& win, const Hwc& padded, int64_t channels, const Pads& pd) {
  WindowSpec ws;
  ws.op = op;
  ws.in_h = padded.h;
  ws.in_w = padded.w;
  ws.c = channels;
  ws.out_h = pd.h.out;
  ws.out_w = pd.w.out;
  ws.kh = win.kernel_h;
  ws.kw = win.kernel_w;
  ws.sh = win.stride_h;
  ws.sw = win.stride_w;
  return ws;
}

LowerContext::LowerContext(const Graph& graph, Isa isa_, MathMode math_)
    : g(graph),
      isa(isa_),
      math(math_),
      width(isa_traits(isa_).f32_lanes),
      value_buf(graph.values.size(), -1),
      reused_input(graph.nodes.size(), -1),
      generator_emits(&jit::generator_emits) {}

int LowerContext::new_buffer(int64_t floats, const std::string& name) {
  PlanBuffer b;
  b.floats = floats;
  b.name = name;
  buffers.push_back(b);
  return static_cast<int>(buffers.size()) - 1;
}

int64_t LowerContext::add_weights(const std::vector<float>& w) {
  weights.resize((weights.size() + 15) / 16 * 16, 0.0f);
  const auto off = static_cast<int64_t>(weights.size());
  weights.insert(weights.end(), w.begin(), w.end());
  weights.resize((weights.size() + 15) / 16 * 16, 0.0f);
  return off;
}

void LowerContext::add(const Node& n, const std::string& op, KernelSpec spec, std::vector<int> in, int out,
                       const std::string& variant) {
  PlannedKernel k;
  k.kernel = kernel_name(op, spec, isa, variant);
  if (!emits(spec)) {
    std::string why = g.node_context(n);
    why += ": not compiled by the JIT for ";
    why += isa_traits(isa).name;
    why += " yet (no ";
    why += k.kernel.op;
    why += " kernel)";
    if (!unsupported) throw Error(ErrorCode::kUnsupported, why);
    unsupported->push_back({static_cast<size_t>(&n - g.nodes.data()), std::move(why)});
  }
  k.name = n.name + ": " + k.kernel.str();
  k.spec = std::move(spec);
  k.in = std::move(in);
  k.out = out;
  k.node = static_cast<int>(&n - g.nodes.data());
  kernels.push_back(std::move(k));
}

ResidualAt LowerContext::residual_at(const Node& n) const {
  return std::visit(
      [&](const auto& p) -> ResidualAt {
        if constexpr (requires { p.residual_at; }) {
          if (p.residual && p.residual_at == ResidualAt::kAfterActivation && !act_fusable(p.activation)) {
            throw Error(ErrorCode::kInternal, g.node_context(n) + ": JIT internal error: a residual after " +
                                                  activation_name(p.activation) + ", which no kernel fuses");
          }
          return p.residual_at;
        } else {
          return ResidualAt::kBeforeActivation;
        }
      },
      n.params);
}

int64_t LowerContext::out_count(const Node& n) const {
  return element_count(g.values[n.output].shape, g.values[n.output].name);
}

int LowerContext::output_buffer(const Node& n) {
  const int64_t count = out_count(n);
  int dst = -1;
  const ValueId v = n.output;
  // A value that is a graph output is written straight into the caller's output buffer (first
  // listing of it); others live in the arena.
  for (size_t i = 0; i < g.outputs.size() && dst < 0; ++i) {
    if (g.outputs[i] != v) continue;
    dst = new_buffer(count, g.values[v].name);
    buffers[static_cast<size_t>(dst)].kind = PlanBuffer::kOutput;
    buffers[static_cast<size_t>(dst)].index = static_cast<int>(i);
  }
  if (dst < 0) dst = new_buffer(count, g.values[v].name);
  value_buf[static_cast<size_t>(n.output)] = dst;
  return dst;
}

}  // namespace nnd::jit
