// Parameter counts and FLOP estimates.
//
// FLOP conventions (per sample; a multiply-add is 2, other element-wise work 1 per element):
//   Dense / Conv / Depthwise / Separable / Transpose: 2 per multiply-add of the weights, plus one
//     per output element for the bias, one for a fused residual and one for a non-linear fused
//     activation (3 when softmax-like), so fusing a layer in a pass does not change the total.
//   Activation layers (incl. ReLU, ELU, PReLU, ...): 1 per element; softmax-like: 3 per element
//     (exponent, sum, division).
//   BatchNormalization: 2 per element (scale and shift once folded), plus its fused activation.
//   LayerNormalization: 7 per element (mean, centring, square-accumulate, normalise, scale, shift).
//   Pooling: one comparison/addition per window tap and output element; global pooling: one per
//     input element.
//   Merge: (inputs - 1) per output element (+1 for Average's division).
//   UpSampling / Resize bilinear: 7 per output element (3 lerps of 2 plus one), 1-D linear 3;
//     nearest: 0.
//   Data movement (Flatten, Reshape, Permute, Concatenate, padding, cropping, RepeatVector,
//   identity): 0.
// Figures saturate at INT64_MAX rather than overflow.
#include "core/ir/cost.h"

#include <limits>
#include <type_traits>
#include <variant>

#include "core/ir/layer_kind_traits.h"
#include "core/util/checked_math.h"

namespace nnd {
namespace {

constexpr int64_t kSat = std::numeric_limits<int64_t>::max();

int64_t sat_mul(int64_t a, int64_t b) {
  if (a <= 0 || b <= 0) return 0;
  if (a > kSat / b) return kSat;
  return a * b;
}

int64_t sat_add(int64_t a, int64_t b) {
  if (a > kSat - b) return kSat;
  return a + b;
}

int64_t count(const Dims& d) {
  int64_t n = 1;
  for (int64_t x : d) n = sat_mul(n, x);
  return n;
}

int64_t wsize(const Weights& w) { return static_cast<int64_t>(w.data.size()); }

// One overload per kind (layer_kind_traits.h): a new kind does not compile until it says what it
// holds.
struct ParameterCounter {
  int64_t operator()(const DenseParams& p) const { return wsize(p.kernel) + wsize(p.bias); }
  int64_t operator()(const ConvParams& p) const { return wsize(p.kernel) + wsize(p.bias); }
  int64_t operator()(const DepthwiseConvParams& p) const { return wsize(p.kernel) + wsize(p.bias); }
  int64_t operator()(const SeparableConvParams& p) const {
    return wsize(p.depthwise_kernel) + wsize(p.pointwise_kernel) + wsize(p.bias);
  }
  int64_t operator()(const ConvTransposeParams& p) const { return wsize(p.kernel) + wsize(p.bias); }
  int64_t operator()(const BatchNormParams& p) const {
    return wsize(p.gamma) + wsize(p.beta) + wsize(p.moving_mean) + wsize(p.moving_variance);
  }
  int64_t operator()(const LayerNormParams& p) const { return wsize(p.gamma) + wsize(p.beta); }
  int64_t operator()(const PReluParams& p) const { return wsize(p.alpha); }
  int64_t operator()(const RecurrentParams& p) const {
    int64_t total = 0;
    for (const RecurrentWeights& w : p.directions) {
      total = sat_add(total, wsize(w.kernel) + wsize(w.recurrent_kernel) + wsize(w.bias) + wsize(w.recurrent_bias) +
                                 wsize(w.initial_h) + wsize(w.initial_c));
    }
    return total;
  }
  // Kinds whose parameters are all scalars or index lists (not weights).
  int64_t operator()(const ActivationParams&) const { return 0; }
  int64_t operator()(const ReluParams&) const { return 0; }
  int64_t operator()(const EluParams&) const { return 0; }
  int64_t operator()(const ThresholdedReluParams&) const { return 0; }
  int64_t operator()(const SoftmaxParams&) const { return 0; }
  int64_t operator()(const PoolParams&) const { return 0; }
  int64_t operator()(const GlobalPoolParams&) const { return 0; }
  int64_t operator()(const FlattenParams&) const { return 0; }
  int64_t operator()(const ReshapeParams&) const { return 0; }
  int64_t operator()(const PermuteParams&) const { return 0; }
  int64_t operator()(const RepeatVectorParams&) const { return 0; }
  int64_t operator()(const IdentityParams&) const { return 0; }
  int64_t operator()(const ZeroPaddingParams&) const { return 0; }
  int64_t operator()(const CroppingParams&) const { return 0; }
  int64_t operator()(const UpSamplingParams&) const { return 0; }
  int64_t operator()(const MergeParams&) const { return 0; }
  int64_t operator()(const ConcatParams&) const { return 0; }
  int64_t operator()(const ResizeParams&) const { return 0; }
  int64_t operator()(const GatherParams&) const { return 0; }
  int64_t operator()(const ArgMaxParams&) const { return 0; }
  int64_t operator()(const MatMulParams&) const { return 0; }  // both operands are computed
  int64_t operator()(const ConstantParams& p) const { return wsize(p.value); }
  int64_t operator()(const QuantizeParams&) const { return 0; }
  int64_t operator()(const DequantizeParams&) const { return 0; }
  int64_t operator()(const QConvParams& p) const { return sat_add(static_cast<int64_t>(p.kernel.data.size()), static_cast<int64_t>(p.bias.size())); }
  int64_t operator()(const QDenseParams& p) const { return sat_add(static_cast<int64_t>(p.kernel.data.size()), static_cast<int64_t>(p.bias.size())); }
};

// FLOPs of one node for one sample, one overload per kind (see the conventions at the top).
class FlopCounter {
 public:
  FlopCounter(const Graph& g, const Node& n) : g_(g), n_(n), out_(count(g.values[n.output].shape)) {}

  int64_t operator()(const DenseParams& p) const {
    const int64_t in = in_shape(0).empty() ? 0 : in_shape(0).back();
    return sat_add(sat_mul(sat_mul(2, in), out_), epilogue(p, p.residual));
  }
  int64_t operator()(const ConvParams& p) const {
    const int64_t taps = sat_mul(sat_mul(p.window.kernel_h, p.window.kernel_w),
                                 p.groups > 0 ? in_shape(0).back() / p.groups : 0);
    return sat_add(sat_mul(sat_mul(2, taps), out_), epilogue(p, p.residual));
  }
  int64_t operator()(const DepthwiseConvParams& p) const {
    const int64_t taps = sat_mul(p.window.kernel_h, p.window.kernel_w);
    return sat_add(sat_mul(sat_mul(2, taps), out_), epilogue(p, p.residual));
  }
  int64_t operator()(const SeparableConvParams& p) const {
    const int64_t mid = sat_mul(in_shape(0).back(), p.depth_multiplier);
    const int64_t spatial = p.filters > 0 ? out_ / p.filters : 0;
    const int64_t dw =
        sat_mul(sat_mul(2, sat_mul(p.window.kernel_h, p.window.kernel_w)), sat_mul(spatial, mid));
    const int64_t pw = sat_mul(sat_mul(2, mid), out_);
    return sat_add(sat_add(dw, pw), epilogue(p, p.residual));
  }
  int64_t operator()(const ConvTransposeParams& p) const {
    // Every input element meets every kernel tap and filter.
    const int64_t taps = sat_mul(sat_mul(p.window.kernel_h, p.window.kernel_w), p.filters);
    return sat_add(sat_mul(sat_mul(2, taps), count(in_shape(0))), epilogue(p, false));
  }
  int64_t operator()(const BatchNormParams& p) const {
    // The affine, and the activation graph passes fused into it (counted as the Relu layer was).
    return sat_add(sat_mul(2, out_), activation(p.activation));
  }
  int64_t operator()(const LayerNormParams&) const { return sat_mul(7, out_); }
  int64_t operator()(const ActivationParams& p) const { return activation(p.activation); }
  int64_t operator()(const ReluParams&) const { return out_; }
  int64_t operator()(const EluParams&) const { return out_; }
  int64_t operator()(const ThresholdedReluParams&) const { return out_; }
  int64_t operator()(const PReluParams&) const { return out_; }
  int64_t operator()(const SoftmaxParams&) const { return sat_mul(3, out_); }
  int64_t operator()(const PoolParams& p) const { return sat_mul(sat_mul(p.window.kernel_h, p.window.kernel_w), out_); }
  int64_t operator()(const GlobalPoolParams&) const { return count(in_shape(0)); }
  int64_t operator()(const MergeParams& p) const {
    int64_t f = sat_mul(static_cast<int64_t>(n_.inputs.size()) - 1, out_);
    if (p.op == MergeOp::kAverage) f = sat_add(f, out_);
    return f;
  }
  int64_t operator()(const UpSamplingParams& p) const { return interpolation(p.interpolation, p.rank); }
  int64_t operator()(const ResizeParams& p) const { return interpolation(p.interpolation, p.rank); }
  int64_t operator()(const RecurrentParams& p) const {
    // Per step and direction: the input and recurrent products of every gate, plus a few
    // element-wise operations per unit (activations counted as one each). Shape inference gives
    // the input {steps, features}.
    const Dims& x = in_shape(0);
    if (x.size() != 2) return 0;
    const int64_t cols = sat_mul(p.units, p.gates());
    const int64_t products = sat_mul(sat_mul(2, sat_add(x[1], p.units)), cols);
    const int64_t per_step = sat_add(products, sat_mul(p.cell == RecurrentCell::kSimple ? 2 : 10, p.units));
    return sat_mul(sat_mul(per_step, x[0]), p.direction_count());
  }
  // Data movement: no arithmetic.
  int64_t operator()(const FlattenParams&) const { return 0; }
  int64_t operator()(const ReshapeParams&) const { return 0; }
  int64_t operator()(const PermuteParams&) const { return 0; }
  int64_t operator()(const RepeatVectorParams&) const { return 0; }
  int64_t operator()(const IdentityParams&) const { return 0; }
  int64_t operator()(const ZeroPaddingParams&) const { return 0; }
  int64_t operator()(const CroppingParams&) const { return 0; }
  int64_t operator()(const ConcatParams&) const { return 0; }
  int64_t operator()(const GatherParams&) const { return 0; }
  // One comparison per input element.
  int64_t operator()(const ArgMaxParams&) const { return count(in_shape(0)); }
  // One multiply-add (2) per output element and step of the shared axis K.
  int64_t operator()(const MatMulParams&) const { return sat_mul(sat_mul(2, in_shape(0).back()), out_); }
  int64_t operator()(const ConstantParams&) const { return 0; }  // a copy
  // Quantized kinds: integer operations counted like the float ones (a multiply-add is 2), plus
  // one per element for the requantization.
  int64_t operator()(const QuantizeParams&) const { return out_; }
  int64_t operator()(const DequantizeParams&) const { return out_; }
  int64_t operator()(const QConvParams& p) const {
    const int64_t taps = sat_mul(sat_mul(p.window.kernel_h, p.window.kernel_w),
                                 p.groups > 0 ? in_shape(0).back() / p.groups : 0);
    return sat_add(sat_mul(sat_mul(2, taps), out_), out_);
  }
  int64_t operator()(const QDenseParams&) const {
    const int64_t in = in_shape(0).empty() ? 0 : in_shape(0).back();
    return sat_add(sat_mul(sat_mul(2, in), out_), out_);
  }

 private:
  const Dims& in_shape(size_t i) const { return g_.values[n_.inputs[i]].shape; }

  int64_t activation(ActivationKind act) const {
    if (act == ActivationKind::kLinear) return 0;
    return activation_is_softmax_like(act) ? sat_mul(3, out_) : out_;
  }

  // Bias, fused residual (one addition per element, as the Add layer it replaced) and activation.
  template <class P>
  int64_t epilogue(const P& p, bool residual) const {
    int64_t f = activation(p.activation);
    if (!p.bias.empty()) f = sat_add(f, out_);
    if (residual) f = sat_add(f, out_);
    return f;
  }

  int64_t interpolation(Interpolation mode, int rank) const {
    return mode == Interpolation::kBilinear ? sat_mul(rank == 2 ? 7 : 3, out_) : 0;
  }

  const Graph& g_;
  const Node& n_;
  const int64_t out_;
};

}  // namespace

int64_t parameter_count(const Node& n) { return visit_layer(ParameterCounter{}, n.params); }

int64_t parameter_count(const Graph& g) {
  int64_t total = 0;
  for (const Node& n : g.nodes) total = sat_add(total, parameter_count(n));
  return total;
}

int64_t flops_per_sample(const Graph& g, const Node& n) { return visit_layer(FlopCounter(g, n), n.params); }

int64_t flops_per_sample(const Graph& g) {
  int64_t total = 0;
  for (const Node& n : g.nodes) total = sat_add(total, flops_per_sample(g, n));
  return total;
}

}  // namespace nnd
