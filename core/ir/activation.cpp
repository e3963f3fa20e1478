#include "core/ir/activation.h"

namespace nnd {

const char* activation_name(ActivationKind k) {
  switch (k) {
    case ActivationKind::kLinear: return "linear";
    case ActivationKind::kRelu: return "relu";
    case ActivationKind::kRelu6: return "relu6";
    case ActivationKind::kLeakyRelu: return "leaky_relu";
    case ActivationKind::kSigmoid: return "sigmoid";
    case ActivationKind::kHardSigmoidK2: return "hard_sigmoid(keras2)";
    case ActivationKind::kHardSigmoidK3: return "hard_sigmoid(keras3)";
    case ActivationKind::kHardSwish: return "hard_swish";
    case ActivationKind::kTanh: return "tanh";
    case ActivationKind::kSoftmax: return "softmax";
    case ActivationKind::kLogSoftmax: return "log_softmax";
    case ActivationKind::kSoftsign: return "softsign";
    case ActivationKind::kSoftplus: return "softplus";
    case ActivationKind::kElu: return "elu";
    case ActivationKind::kSelu: return "selu";
    case ActivationKind::kSwish: return "swish";
    case ActivationKind::kGeluErf: return "gelu(erf)";
    case ActivationKind::kGeluTanh: return "gelu(tanh)";
    case ActivationKind::kExponential: return "exponential";
    case ActivationKind::kMish: return "mish";
    case ActivationKind::kReciprocal: return "reciprocal";
    case ActivationKind::kSqrt: return "sqrt";
    case ActivationKind::kAbs: return "abs";
  }
  return "?";
}

}  // namespace nnd
