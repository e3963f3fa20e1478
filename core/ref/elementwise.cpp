// Activation layers, Softmax and the merge layers (with broadcasting).
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/ir/broadcast.h"
#include "core/ref/activation_math.h"
#include "core/ref/ref_ops.h"

namespace nnd::ref {
namespace {

template <typename F>
Tensor map_elements(const Tensor& x, F f) {
  Tensor y(x.shape, x.batch);
  for (size_t i = 0; i < x.data.size(); ++i) y.data[i] = f(x.data[i]);
  return y;
}

// Softmax over axis `axis` of every sample.
void softmax_axis(Tensor& t, size_t axis, bool log) {
  int64_t inner = 1;
  for (size_t i = axis + 1; i < t.shape.size(); ++i) inner *= t.shape[i];
  const int64_t len = t.shape[axis];
  const int64_t outer = static_cast<int64_t>(t.data.size()) / (len * inner);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) softmax_inplace(t.data.data() + o * len * inner + i, len, inner, log);
  }
}

}  // namespace

void apply_activation(ActivationKind k, Tensor& t) {
  if (k == ActivationKind::kLinear) return;
  if (activation_is_softmax_like(k)) {
    softmax_axis(t, t.shape.size() - 1, k == ActivationKind::kLogSoftmax);
    return;
  }
  for (double& v : t.data) v = activation_scalar(k, v);
}

Tensor activation(const ActivationParams& p, const Tensor& x) {
  Tensor y = x;
  apply_activation(p.activation, y);
  return y;
}

// Keras' relu(x, negative_slope, max_value, threshold) (keras.backend.relu in Keras 2 and
// keras.layers.ReLU.static_call in Keras 3), step by step:
//   with a slope, no max and no threshold: tf.nn.leaky_relu, x > 0 ? x : slope * x
//   negative_part = relu(threshold - x)
//   x = threshold != 0 ? (x > threshold ? x : 0) : max(x, 0)
//   x = clip(x, 0, max_value) when max_value is given
//   x -= slope * negative_part
// (so x == threshold gives 0, not threshold.)
Tensor relu(const ReluParams& p, const Tensor& x) {
  const bool has_max = std::isfinite(p.max_value);
  return map_elements(x, [&](double v) {
    if (p.negative_slope != 0 && !has_max && p.threshold == 0) return v > 0 ? v : p.negative_slope * v;
    const double neg = std::max(p.threshold - v, 0.0);
    double r = p.threshold != 0 ? (v > p.threshold ? v : 0.0) : std::max(v, 0.0);
    if (has_max) r = std::min(std::max(r, 0.0), p.max_value);
    if (p.negative_slope != 0) r -= p.negative_slope * neg;
    return r;
  });
}

Tensor elu(const EluParams& p, const Tensor& x) {
  return map_elements(x, [&](double v) { return v > 0 ? v : p.alpha * std::expm1(v); });
}

Tensor thresholded_relu(const ThresholdedReluParams& p, const Tensor& x) {
  return map_elements(x, [&](double v) { return v > p.theta ? v : 0.0; });
}

Tensor prelu(const PReluParams& p, const Tensor& x) {
  Tensor y(x.shape, x.batch);
  const std::vector<int64_t> map = broadcast_map(x.shape, p.alpha.shape);
  for (int64_t n = 0; n < x.batch; ++n) {
    const double* xs = x.sample(n);
    double* ys = y.sample(n);
    for (int64_t i = 0; i < x.sample_size; ++i) {
      ys[i] = xs[i] > 0 ? xs[i] : static_cast<double>(p.alpha.data[map[i]]) * xs[i];
    }
  }
  return y;
}

Tensor softmax(const SoftmaxParams& p, const Tensor& x) {
  Tensor y = x;
  softmax_axis(y, static_cast<size_t>(p.axis), false);
  return y;
}

Tensor merge(const MergeParams& p, const std::vector<const Tensor*>& xs, const Dims& out_shape) {
  Tensor y(out_shape, xs[0]->batch);
  for (size_t k = 0; k < xs.size(); ++k) {
    const Tensor& x = *xs[k];
    const std::vector<int64_t> map = broadcast_map(out_shape, x.shape);
    for (int64_t n = 0; n < y.batch; ++n) {
      const double* s = x.sample(n);
      double* d = y.sample(n);
      for (int64_t i = 0; i < y.sample_size; ++i) {
        const double v = s[map[i]];
        if (k == 0) {
          d[i] = v;
          continue;
        }
        switch (p.op) {
          case MergeOp::kAdd:
          case MergeOp::kAverage: d[i] += v; break;
          case MergeOp::kSubtract: d[i] -= v; break;
          case MergeOp::kMultiply: d[i] *= v; break;
          case MergeOp::kMaximum: d[i] = std::max(d[i], v); break;
          case MergeOp::kMinimum: d[i] = std::min(d[i], v); break;
        }
      }
    }
  }
  if (p.op == MergeOp::kAverage) {
    for (double& v : y.data) v /= static_cast<double>(xs.size());
  }
  return y;
}

}  // namespace nnd::ref
