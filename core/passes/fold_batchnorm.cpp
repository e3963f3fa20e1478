#include "core/passes/fold_batchnorm.h"

#include <cmath>
#include <type_traits>
#include <variant>

#include "core/ir/conv_geometry.h"
#include "core/ir/layer_kind_traits.h"
#include "core/passes/graph_edit.h"

namespace nnd::passes {

ChannelAffine batchnorm_affine(const BatchNormParams& bn) {
  ChannelAffine a;
  const size_t c = bn.gamma.data.size();
  a.scale.resize(c);
  a.shift.resize(c);
  for (size_t i = 0; i < c; ++i) {
    const double s = static_cast<double>(bn.gamma.data[i]) /
                     std::sqrt(static_cast<double>(bn.moving_variance.data[i]) + bn.epsilon);
    a.scale[i] = s;
    a.shift[i] = static_cast<double>(bn.beta.data[i]) - static_cast<double>(bn.moving_mean.data[i]) * s;
  }
  return a;
}

void fold_affine_into_outputs(const ChannelAffine& a, Weights& kernel, Weights& bias) {
  const size_t c = a.scale.size();
  for (size_t i = 0; i < kernel.data.size(); ++i) {
    kernel.data[i] = static_cast<float>(static_cast<double>(kernel.data[i]) * a.scale[i % c]);
  }
  std::vector<float> b(c);
  for (size_t i = 0; i < c; ++i) {
    const double old = bias.empty() ? 0.0 : static_cast<double>(bias.data[i]);
    b[i] = static_cast<float>(old * a.scale[i] + a.shift[i]);
  }
  bias.shape = {static_cast<int64_t>(c)};
  bias.data = std::move(b);
}

void fold_affine_into_inputs(const ChannelAffine& a, int64_t groups, Weights& kernel, Weights& bias) {
  const int64_t filters = kernel.shape.back();
  const int64_t cin_g = kernel.shape[kernel.shape.size() - 2];
  const int64_t taps = static_cast<int64_t>(kernel.data.size()) / (cin_g * filters);
  const int64_t cout_g = filters / groups;
  std::vector<double> acc(static_cast<size_t>(filters));
  for (int64_t f = 0; f < filters; ++f) acc[static_cast<size_t>(f)] = bias.empty() ? 0.0 : bias.data[static_cast<size_t>(f)];
  for (int64_t t = 0; t < taps; ++t) {
    for (int64_t ci = 0; ci < cin_g; ++ci) {
      for (int64_t f = 0; f < filters; ++f) {
        const size_t c = static_cast<size_t>((f / cout_g) * cin_g + ci);
        float& w = kernel.data[static_cast<size_t>((t * cin_g + ci) * filters + f)];
        acc[static_cast<size_t>(f)] += static_cast<double>(w) * a.shift[c];
        w = static_cast<float>(static_cast<double>(w) * a.scale[c]);
      }
    }
  }
  bias.shape = {filters};
  bias.data.assign(static_cast<size_t>(filters), 0.0f);
  for (int64_t f = 0; f < filters; ++f) bias.data[static_cast<size_t>(f)] = static_cast<float>(acc[static_cast<size_t>(f)]);
}

bool conv_reads_no_padding(const Window& win, int64_t h, int64_t w) {
  auto axis_clean = [](const AxisGeometry& a, int64_t in, int64_t s) {
    return a.pad_before == 0 && (a.out - 1) * s + a.kernel_eff <= in;
  };
  return axis_clean(window_h(win, h), h, win.stride_h) && axis_clean(window_w(win, w), w, win.stride_w);
}

namespace {

bool bn_on_last_axis(const Graph& g, const Node& bn_node, const BatchNormParams& bn) {
  return bn.axis == static_cast<int>(g.values[static_cast<size_t>(bn_node.inputs[0])].shape.size()) - 1 &&
         bn.activation == ActivationKind::kLinear;
}

// Kinds no BatchNorm folds into, in either direction.
using NoFold = KindsReturning<false, BatchNormParams, LayerNormParams, ActivationParams, ReluParams, EluParams,
                              ThresholdedReluParams, PReluParams, SoftmaxParams, PoolParams, GlobalPoolParams,
                              FlattenParams, ReshapeParams, PermuteParams, RepeatVectorParams, IdentityParams,
                              ZeroPaddingParams, CroppingParams, UpSamplingParams, MergeParams, ConcatParams,
                              RecurrentParams, ResizeParams, GatherParams, MatMulParams, ConstantParams,
                              // integer weights: a float affine does not fold into them exactly
                              QuantizeParams, DequantizeParams, QConvParams, QDenseParams,
                              // int64 indices
                              ArgMaxParams>;

// Backward fold of BN `bn` into producer node p; false when p is not a foldable kind. Every kind
// decides.
bool fold_into_producer(Node& p, const ChannelAffine& a) {
  auto into_outputs = [&a](auto& q, Weights& kernel) {
    if (q.activation != ActivationKind::kLinear || q.residual) return false;
    fold_affine_into_outputs(a, kernel, q.bias);
    return true;
  };
  return visit_layer(
      Overloaded{
          [&](DenseParams& q) { return into_outputs(q, q.kernel); },
          [&](ConvParams& q) { return into_outputs(q, q.kernel); },
          [&](DepthwiseConvParams& q) { return into_outputs(q, q.kernel); },
          [&](SeparableConvParams& q) { return into_outputs(q, q.pointwise_kernel); },
          // Its kernel is (kh, kw, filters, Cin), output channels on axis 2: not the layout
          // fold_affine_into_outputs scales; never folded so far.
          KindsReturning<false, ConvTransposeParams>{},
          NoFold{},
      },
      p.params);
}

// Forward fold into consumer node c reading the BN output as input 0; false when not exact. Every
// kind decides.
bool fold_into_consumer(const Graph& g, Node& c, const ChannelAffine& a) {
  bool shift_zero = true;
  for (double t : a.shift) shift_zero = shift_zero && t == 0.0;
  return visit_layer(
      Overloaded{
          [&](DenseParams& d) {
            fold_affine_into_inputs(a, 1, d.kernel, d.bias);
            return true;
          },
          [&](ConvParams& cv) {
            const Dims& s = g.values[static_cast<size_t>(c.inputs[0])].shape;
            const int64_t h = cv.rank == 2 ? s[0] : 1, w = s[static_cast<size_t>(cv.rank - 1)];
            if (!shift_zero && !conv_reads_no_padding(cv.window, h, w)) return false;
            fold_affine_into_inputs(a, cv.groups, cv.kernel, cv.bias);
            return true;
          },
          // Per-channel scales on the input of a depthwise or separable convolution would fold
          // into the depthwise kernel, a transposed convolution's into its Cin axis; not done so
          // far: the BatchNorm stays a node of its own there.
          KindsReturning<false, DepthwiseConvParams, SeparableConvParams, ConvTransposeParams>{},
          NoFold{},
      },
      c.params);
}

}  // namespace

bool FoldBatchNorm::run(Graph& g) {
  std::vector<bool> dead(g.nodes.size(), false);
  bool changed = false;
  std::vector<int> uses = value_uses(g);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& n = g.nodes[i];
    // This pass looks for one kind; what it folds into is decided per kind above.
    const auto* bn = std::get_if<BatchNormParams>(&n.params);
    if (!bn || n.inputs.size() != 1 || !bn_on_last_axis(g, n, *bn)) continue;
    const ValueId x = n.inputs[0];
    const ChannelAffine a = batchnorm_affine(*bn);
    // Backward: into the producer of x when the BN is x's only reader.
    const NodeId p = g.values[static_cast<size_t>(x)].producer;
    if (p != kNoNode && uses[static_cast<size_t>(x)] == 1 && !dead[static_cast<size_t>(p)]) {
      Node& prod = g.nodes[static_cast<size_t>(p)];
      if (fold_into_producer(prod, a)) {
        absorb_successor(g, p, static_cast<NodeId>(i), dead);
        changed = true;
        continue;
      }
    }
    // Forward: into the single consumer of the BN output.
    const ValueId y = n.output;
    if (uses[static_cast<size_t>(y)] != 1 || is_graph_output(g, y)) continue;
    for (size_t j = i + 1; j < g.nodes.size(); ++j) {
      Node& c = g.nodes[j];
      if (c.inputs.empty() || c.inputs[0] != y) continue;
      if (c.inputs.size() != 1) break;  // e.g. a fused residual: leave it
      if (fold_into_consumer(g, c, a)) {
        c.inputs[0] = x;
        dead[i] = true;
        changed = true;
        uses = value_uses(g);
      }
      break;
    }
  }
  if (changed) remove_nodes(g, dead);
  return changed;
}

}  // namespace nnd::passes
