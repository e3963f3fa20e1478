// Parameter counts and FLOP estimates.
//
// FLOP conventions (per sample; a multiply-add is 2, other element-wise work 1 per element):
//   Dense / Conv / Depthwise / Separable / Transpose: 2 per multiply-add of the weights, plus one
//     per output element for the bias and one for a non-linear fused activation.
//   Activation layers (incl. ReLU, ELU, PReLU, ...): 1 per element; softmax-like: 3 per element
//     (exponent, sum, division).
//   BatchNormalization: 2 per element (scale and shift once folded).
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

int64_t epilogue(int64_t out, bool has_bias, ActivationKind act) {
  int64_t f = 0;
  if (has_bias) f = sat_add(f, out);
  if (activation_is_softmax_like(act)) {
    f = sat_add(f, sat_mul(3, out));
  } else if (act != ActivationKind::kLinear) {
    f = sat_add(f, out);
  }
  return f;
}

}  // namespace

int64_t parameter_count(const Node& n) {
  return std::visit(
      [](const auto& p) -> int64_t {
        using T = std::decay_t<decltype(p)>;
        if constexpr (std::is_same_v<T, DenseParams> || std::is_same_v<T, ConvParams> ||
                      std::is_same_v<T, DepthwiseConvParams> ||
                      std::is_same_v<T, ConvTransposeParams>) {
          return wsize(p.kernel) + wsize(p.bias);
        } else if constexpr (std::is_same_v<T, SeparableConvParams>) {
          return wsize(p.depthwise_kernel) + wsize(p.pointwise_kernel) + wsize(p.bias);
        } else if constexpr (std::is_same_v<T, BatchNormParams>) {
          return wsize(p.gamma) + wsize(p.beta) + wsize(p.moving_mean) + wsize(p.moving_variance);
        } else if constexpr (std::is_same_v<T, LayerNormParams>) {
          return wsize(p.gamma) + wsize(p.beta);
        } else if constexpr (std::is_same_v<T, PReluParams>) {
          return wsize(p.alpha);
        } else if constexpr (std::is_same_v<T, RecurrentParams>) {
          int64_t total = 0;
          for (const RecurrentWeights& w : p.directions) {
            total = sat_add(total, wsize(w.kernel) + wsize(w.recurrent_kernel) + wsize(w.bias) +
                                       wsize(w.recurrent_bias) + wsize(w.initial_h) + wsize(w.initial_c));
          }
          return total;
        } else {
          return 0;
        }
      },
      n.params);
}

int64_t parameter_count(const Graph& g) {
  int64_t total = 0;
  for (const Node& n : g.nodes) total = sat_add(total, parameter_count(n));
  return total;
}

int64_t flops_per_sample(const Graph& g, const Node& n) {
  const Dims& out_shape = g.values[n.output].shape;
  const int64_t out = count(out_shape);
  auto in_shape = [&](size_t i) -> const Dims& { return g.values[n.inputs[i]].shape; };
  return std::visit(
      [&](const auto& p) -> int64_t {
        using T = std::decay_t<decltype(p)>;
        if constexpr (std::is_same_v<T, DenseParams>) {
          const int64_t in = in_shape(0).empty() ? 0 : in_shape(0).back();
          return sat_add(sat_mul(sat_mul(2, in), out), epilogue(out, !p.bias.empty(), p.activation));
        } else if constexpr (std::is_same_v<T, ConvParams>) {
          const int64_t taps = sat_mul(sat_mul(p.window.kernel_h, p.window.kernel_w),
                                       p.groups > 0 ? in_shape(0).back() / p.groups : 0);
          return sat_add(sat_mul(sat_mul(2, taps), out), epilogue(out, !p.bias.empty(), p.activation));
        } else if constexpr (std::is_same_v<T, DepthwiseConvParams>) {
          const int64_t taps = sat_mul(p.window.kernel_h, p.window.kernel_w);
          return sat_add(sat_mul(sat_mul(2, taps), out), epilogue(out, !p.bias.empty(), p.activation));
        } else if constexpr (std::is_same_v<T, SeparableConvParams>) {
          const int64_t mid = sat_mul(in_shape(0).back(), p.depth_multiplier);
          const int64_t spatial = p.filters > 0 ? out / p.filters : 0;
          const int64_t dw = sat_mul(sat_mul(2, sat_mul(p.window.kernel_h, p.window.kernel_w)),
                                     sat_mul(spatial, mid));
          const int64_t pw = sat_mul(sat_mul(2, mid), out);
          return sat_add(sat_add(dw, pw), epilogue(out, !p.bias.empty(), p.activation));
        } else if constexpr (std::is_same_v<T, ConvTransposeParams>) {
          // Every input element meets every kernel tap and filter.
          const int64_t taps = sat_mul(sat_mul(p.window.kernel_h, p.window.kernel_w), p.filters);
          return sat_add(sat_mul(sat_mul(2, taps), count(in_shape(0))),
                         epilogue(out, !p.bias.empty(), p.activation));
        } else if constexpr (std::is_same_v<T, BatchNormParams>) {
          return sat_mul(2, out);
        } else if constexpr (std::is_same_v<T, LayerNormParams>) {
          return sat_mul(7, out);
        } else if constexpr (std::is_same_v<T, ActivationParams>) {
          if (p.activation == ActivationKind::kLinear) return 0;
          return activation_is_softmax_like(p.activation) ? sat_mul(3, out) : out;
        } else if constexpr (std::is_same_v<T, SoftmaxParams>) {
          return sat_mul(3, out);
        } else if constexpr (std::is_same_v<T, ReluParams> || std::is_same_v<T, EluParams> ||
                             std::is_same_v<T, ThresholdedReluParams> ||
                             std::is_same_v<T, PReluParams>) {
          return out;
        } else if constexpr (std::is_same_v<T, PoolParams>) {
          return sat_mul(sat_mul(p.window.kernel_h, p.window.kernel_w), out);
        } else if constexpr (std::is_same_v<T, GlobalPoolParams>) {
          return count(in_shape(0));
        } else if constexpr (std::is_same_v<T, MergeParams>) {
          int64_t f = sat_mul(static_cast<int64_t>(n.inputs.size()) - 1, out);
          if (p.op == MergeOp::kAverage) f = sat_add(f, out);
          return f;
        } else if constexpr (std::is_same_v<T, UpSamplingParams> || std::is_same_v<T, ResizeParams>) {
          return p.interpolation == Interpolation::kBilinear ? sat_mul(p.rank == 2 ? 7 : 3, out) : 0;
        } else if constexpr (std::is_same_v<T, RecurrentParams>) {
          // Per step and direction: the input and recurrent products of every gate, plus a few
          // element-wise operations per unit (activations counted as one each).
          const Dims& x = in_shape(0);
          if (x.size() != 2) return 0;
          const int64_t cols = sat_mul(p.units, p.gates());
          const int64_t products = sat_mul(sat_mul(2, sat_add(x[1], p.units)), cols);
          const int64_t per_step = sat_add(products, sat_mul(p.cell == RecurrentCell::kSimple ? 2 : 10, p.units));
          return sat_mul(sat_mul(per_step, x[0]), p.direction_count());
        } else {
          return 0;
        }
      },
      n.params);
}

int64_t flops_per_sample(const Graph& g) {
  int64_t total = 0;
  for (const Node& n : g.nodes) total = sat_add(total, flops_per_sample(g, n));
  return total;
}

}  // namespace nnd
