// Which activations the element-wise generators compute themselves (specs/elementwise.h).
#include "core/jit/specs/elementwise.h"

namespace nnd::jit {

bool unary_vectorised(ActivationKind k) {
  using K = ActivationKind;
  switch (k) {
    case K::kLinear: case K::kRelu: case K::kRelu6: case K::kLeakyRelu: case K::kHardSigmoidK2:
    case K::kHardSigmoidK3: case K::kHardSwish: case K::kSoftsign: case K::kReciprocal: case K::kSqrt:
    case K::kAbs:
      return true;
    default:
      return false;
  }
}

bool fast_math_kind(ActivationKind k) {
  using K = ActivationKind;
  switch (k) {
    case K::kSigmoid: case K::kTanh: case K::kSoftplus: case K::kElu: case K::kSelu: case K::kSwish:
    case K::kGeluErf: case K::kGeluTanh: case K::kExponential: case K::kMish:
      return true;
    default:
      return false;
  }
}

double fast_kernel_error_bound(ActivationKind k) {
  using K = ActivationKind;
  if (k == K::kSoftmax) return 5e-6;
  if (!fast_math_kind(k)) return 0;
  return k == K::kGeluErf || k == K::kGeluTanh ? 2e-5 : 2e-6;
}

double fast_kernel_scaled_error_bound(ActivationKind k) {
  if (k == ActivationKind::kGeluErf || k == ActivationKind::kGeluTanh) return 1e-6;
  return fast_kernel_error_bound(k);
}

bool fast_kernel_serves(ActivationKind k, MathMode math, int64_t row) {
  if (fast_kernel_error_bound(k) == 0) return false;
  if (math == MathMode::kFast) return true;
  // exp itself clamps its argument to [-87, 88], where float's exp goes on to 3.4e38 at 88.72 and
  // then to infinity: the helper keeps that range. (Inside sigmoid, softplus, swish and the others
  // the clamp only bites where their result is below 1e-30 or saturated.)
  if (k == ActivationKind::kExponential) return false;
  if (k == ActivationKind::kSoftmax && (row < 1 || row > kFastSoftmaxMeasuredRow)) return false;
  return fast_kernel_scaled_error_bound(k) <= kExactActivationBudget;
}

}  // namespace nnd::jit
