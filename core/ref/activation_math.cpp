#include "core/ref/activation_math.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace nnd::ref {

double sigmoid(double x) {
  // Never exponentiate a positive argument: exp(-|x|) is in (0, 1].
  if (x >= 0) return 1.0 / (1.0 + std::exp(-x));
  const double e = std::exp(x);
  return e / (1.0 + e);
}

double softplus(double x) {
  // log(1 + exp(x)) = max(x, 0) + log1p(exp(-|x|)).
  return std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x)));
}

static double relu6(double x) { return std::min(std::max(x, 0.0), 6.0); }

double activation_scalar(ActivationKind k, double x) {
  switch (k) {
    case ActivationKind::kLinear: return x;
    case ActivationKind::kRelu: return x > 0 ? x : 0.0;
    case ActivationKind::kRelu6: return relu6(x);
    case ActivationKind::kLeakyRelu: return x > 0 ? x : 0.2 * x;
    case ActivationKind::kSigmoid: return sigmoid(x);
    case ActivationKind::kHardSigmoidK2: return std::min(std::max(0.2 * x + 0.5, 0.0), 1.0);
    case ActivationKind::kHardSigmoidK3: return relu6(x + 3.0) / 6.0;
    case ActivationKind::kHardSwish: return x * relu6(x + 3.0) / 6.0;
    case ActivationKind::kTanh: return std::tanh(x);
    case ActivationKind::kSoftsign: return x / (1.0 + std::fabs(x));
    case ActivationKind::kSoftplus: return softplus(x);
    case ActivationKind::kElu: return x > 0 ? x : std::expm1(x);
    case ActivationKind::kSelu: return kSeluScale * (x > 0 ? x : kSeluAlpha * std::expm1(x));
    case ActivationKind::kSwish: return x * sigmoid(x);
    case ActivationKind::kGeluErf: return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case ActivationKind::kGeluTanh: {
      const double c = std::sqrt(2.0 / M_PI);
      return 0.5 * x * (1.0 + std::tanh(c * (x + 0.044715 * x * x * x)));
    }
    case ActivationKind::kExponential: return std::exp(x);
    case ActivationKind::kMish: return x * std::tanh(softplus(x));
    case ActivationKind::kReciprocal: return 1.0 / x;
    case ActivationKind::kSqrt: return std::sqrt(x);
    case ActivationKind::kAbs: return std::fabs(x);
    case ActivationKind::kSoftmax:
    case ActivationKind::kLogSoftmax: break;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

void softmax_inplace(double* v, int64_t len, int64_t stride, bool log) {
  double m = -std::numeric_limits<double>::infinity();
  for (int64_t i = 0; i < len; ++i) m = std::max(m, v[i * stride]);
  double sum = 0;
  for (int64_t i = 0; i < len; ++i) sum += std::exp(v[i * stride] - m);
  if (log) {
    const double ls = std::log(sum);
    for (int64_t i = 0; i < len; ++i) v[i * stride] = v[i * stride] - m - ls;
  } else {
    for (int64_t i = 0; i < len; ++i) v[i * stride] = std::exp(v[i * stride] - m) / sum;
  }
}

}  // namespace nnd::ref
