// Element-wise activation functions, as used both by the `Activation` layer and by the fused
// `activation=` argument of Dense/Conv layers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace nnd {

// Each kind is one exact formula. Where Keras 2 and Keras 3 give the same name different
// formulas, the loader maps the name to the kind of the version that wrote the file.
enum class ActivationKind : uint8_t {
  kLinear,         // x
  kRelu,           // max(x, 0)
  kRelu6,          // min(max(x, 0), 6)
  kLeakyRelu,      // x > 0 ? x : 0.2 x  (Keras 3 "leaky_relu" string; default negative_slope 0.2)
  kSigmoid,        // 1 / (1 + exp(-x))
  kHardSigmoidK2,  // clip(0.2 x + 0.5, 0, 1)            (Keras 2 "hard_sigmoid")
  kHardSigmoidK3,  // relu6(x + 3) / 6                   (Keras 3 "hard_sigmoid")
  kHardSwish,      // x * relu6(x + 3) / 6               (Keras 3 "hard_silu" / "hard_swish")
  kTanh,           // tanh(x)
  kSoftmax,        // softmax over the last axis
  kLogSoftmax,     // log(softmax) over the last axis
  kSoftsign,       // x / (1 + |x|)
  kSoftplus,       // log(1 + exp(x))
  kElu,            // x > 0 ? x : exp(x) - 1
  kSelu,           // scale * (x > 0 ? x : alpha (exp(x) - 1)), alpha 1.67326324, scale 1.05070098
  kSwish,          // x * sigmoid(x)                     ("swish", Keras 3 "silu")
  kGeluErf,        // 0.5 x (1 + erf(x / sqrt 2))        ("gelu" in Keras 2 and Keras 3)
  kGeluTanh,       // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))  (tf.nn.gelu approximate)
  kExponential,    // exp(x)
  kMish,           // x * tanh(softplus(x))
  kReciprocal,     // 1 / x                              (ONNX Reciprocal; c / x and x / y)
  kSqrt,           // sqrt(x), NaN below 0               (ONNX Sqrt, Pow(x, 0.5), ReduceL2)
  kAbs,            // |x|                                (ONNX Abs, ReduceL1)
};

// The last kind, for loops over all of them.
constexpr ActivationKind kLastActivationKind = ActivationKind::kAbs;

const char* activation_name(ActivationKind k);

// Where a fused residual (layers.h) is added relative to the layer's activation:
//   kBeforeActivation  y = activation(layer(x) + bias + r)   (Keras conv -> Add -> ReLU)
//   kAfterActivation   y = activation(layer(x) + bias) + r   (Keras conv -> ReLU -> Add)
enum class ResidualAt : uint8_t { kBeforeActivation, kAfterActivation };

// True for the kinds that are not element-wise (they normalise over the last axis).
inline bool activation_is_softmax_like(ActivationKind k) {
  return k == ActivationKind::kSoftmax || k == ActivationKind::kLogSoftmax;
}

}  // namespace nnd
