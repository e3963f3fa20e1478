// BatchNormalization (inference) and LayerNormalization.
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/ref/ref_ops.h"

namespace nnd::ref {

// y = (x - mean) / sqrt(var + eps) * gamma + beta along the resolved axis.
Tensor batch_norm(const BatchNormParams& p, const Tensor& x) {
  Tensor y(x.shape, x.batch);
  const int64_t c = x.shape[p.axis];
  int64_t inner = 1;
  for (size_t i = p.axis + 1; i < x.shape.size(); ++i) inner *= x.shape[i];
  std::vector<double> scale(c), shift(c);
  for (int64_t k = 0; k < c; ++k) {
    scale[k] = static_cast<double>(p.gamma.data[k]) /
               std::sqrt(static_cast<double>(p.moving_variance.data[k]) + p.epsilon);
  }
  for (size_t i = 0; i < x.data.size(); ++i) {
    const int64_t k = (static_cast<int64_t>(i) / inner) % c;
    y.data[i] = (x.data[i] - static_cast<double>(p.moving_mean.data[k])) * scale[k] +
                static_cast<double>(p.beta.data[k]);
  }
  return y;
}

// Per sample and per position of the non-normalised axes: mean and variance (mean of squared
// centred values) over the normalised axes, y = (x - mean) / sqrt(var + eps) * gamma + beta, with
// gamma/beta indexed row-major over the normalised axes in increasing axis order (Keras reshapes
// them to the input rank with 1 on the other axes).
Tensor layer_norm(const LayerNormParams& p, const Tensor& x) {
  Tensor y(x.shape, x.batch);
  const size_t rank = x.shape.size();
  std::vector<bool> norm(rank, false);
  for (int a : p.axes) norm[a] = true;
  // For each flat per-sample index: its group (position over the other axes) and its index
  // inside the normalised block.
  const int64_t size = x.sample_size;
  std::vector<int64_t> group(size), inner(size);
  int64_t groups = 1, block = 1;
  for (size_t a = 0; a < rank; ++a) (norm[a] ? block : groups) *= x.shape[a];
  for (int64_t i = 0; i < size; ++i) {
    int64_t rem = i, gi = 0, ii = 0, gmul = 1, imul = 1;
    for (size_t a = rank; a-- > 0;) {
      const int64_t idx = rem % x.shape[a];
      rem /= x.shape[a];
      if (norm[a]) {
        ii += idx * imul;
        imul *= x.shape[a];
      } else {
        gi += idx * gmul;
        gmul *= x.shape[a];
      }
    }
    group[i] = gi;
    inner[i] = ii;
  }
  std::vector<double> mean(groups), var(groups);
  for (int64_t n = 0; n < x.batch; ++n) {
    const double* xs = x.sample(n);
    double* ys = y.sample(n);
    std::fill(mean.begin(), mean.end(), 0.0);
    std::fill(var.begin(), var.end(), 0.0);
    for (int64_t i = 0; i < size; ++i) mean[group[i]] += xs[i];
    for (double& m : mean) m /= static_cast<double>(block);
    for (int64_t i = 0; i < size; ++i) {
      const double d = xs[i] - mean[group[i]];
      var[group[i]] += d * d;
    }
    for (double& v : var) v /= static_cast<double>(block);
    for (int64_t i = 0; i < size; ++i) {
      double v = (xs[i] - mean[group[i]]) / std::sqrt(var[group[i]] + p.epsilon);
      if (!p.gamma.empty()) v *= static_cast<double>(p.gamma.data[inner[i]]);
      if (!p.beta.empty()) v += static_cast<double>(p.beta.data[inner[i]]);
      ys[i] = v;
    }
  }
  return y;
}

}  // namespace nnd::ref
