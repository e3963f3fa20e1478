#include "core/jit/isa_calibration_standin.h"

#include <string>
#include <utility>

#include "core/ir/cost.h"
#include "core/ir/layers.h"
#include "core/ir/shape_inference.h"

namespace nnd::jit {
namespace {

// Weights in [-0.05, 0.05) from a fixed xorshift sequence: no zeros to skip, no denormals, and
// activations that stay O(1) through four layers.
Weights weights(Dims shape, uint32_t* state) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  Weights w{std::move(shape), {}};
  w.data.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    *state ^= *state << 13;
    *state ^= *state >> 17;
    *state ^= *state << 5;
    w.data.push_back(static_cast<float>(*state >> 8) * (0.1f / 16777216.0f) - 0.05f);
  }
  return w;
}

Window square(int64_t k) {
  Window w;
  w.kernel_h = w.kernel_w = k;
  w.padding = Padding::kSame;
  return w;
}

ConvParams conv(int64_t k, int64_t cin, int64_t filters, ActivationKind act, uint32_t* state) {
  ConvParams p;
  p.filters = filters;
  p.window = square(k);
  p.activation = act;
  p.kernel = weights({k, k, cin, filters}, state);
  p.bias = weights({filters}, state);
  return p;
}

Graph build() {
  Graph g;
  g.source = "isa auto stand-in";
  uint32_t state = 0x2545F491u;
  auto add = [&g](const std::string& name, LayerParams params, ValueId in) {
    Value out;
    out.name = name;
    out.producer = static_cast<NodeId>(g.nodes.size());
    g.values.push_back(out);
    Node n;
    n.name = name;
    n.source_op = "IsaStandin";
    n.params = std::move(params);
    n.inputs = {in};
    n.output = static_cast<ValueId>(g.values.size() - 1);
    g.nodes.push_back(std::move(n));
    return g.nodes.back().output;
  };
  Value in;
  in.name = "input";
  in.shape = {28, 28, 64};
  g.values.push_back(in);
  g.inputs.push_back(0);
  g.input_names.push_back(in.name);
  ValueId x = add("conv3x3", conv(3, 64, 64, ActivationKind::kRelu, &state), 0);
  x = add("expand1x1", conv(1, 64, 256, ActivationKind::kRelu, &state), x);
  DepthwiseConvParams dw;
  dw.window = square(3);
  dw.activation = ActivationKind::kRelu6;
  dw.kernel = weights({3, 3, 256, 1}, &state);
  dw.bias = weights({256}, &state);
  x = add("depthwise3x3", std::move(dw), x);
  x = add("project1x1", conv(1, 256, 64, ActivationKind::kLinear, &state), x);
  g.outputs.push_back(x);
  g.output_names.push_back("project1x1");
  infer_shapes(g);
  return g;
}

}  // namespace

bool calibrates_on_standin(const Graph& g) {
  if (parameter_count(g) >= kStandinMinParameters) return true;
  for (const Node& n : g.nodes) {
    if (g.values[static_cast<size_t>(n.output)].shape.empty()) return false;  // not inferred
  }
  return flops_per_sample(g) >= kStandinMinFlops;
}

const Graph& isa_standin_graph() {
  static const Graph g = build();
  return g;
}

}  // namespace nnd::jit
