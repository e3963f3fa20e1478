// The element-wise kernels' specs: activations (vectorised, fast math, helper calls), per-element
// parameters, merges and the position scale of average pooling, and which activations the
// generators compute themselves (the same set on every architecture).
#pragma once

#include <cstdint>

#include "core/ir/activation.h"

namespace nnd::jit {

// f32-vact-* / f32-vrelu / f32-affine: y = f(x) over batch*count floats, or over (outer, C) with
// per-channel scale/shift (BatchNorm). Kinds the generator cannot vectorise exactly call a helper
// (see kernel_helpers.h).
struct UnarySpec {
  int64_t count = 1;  // per sample
  bool u8 = false;    // input is uint8 (conversion kernel)
  ActivationKind act = ActivationKind::kLinear;
  // ReLU layer parameters (used when relu_layer is true): see ReluParams.
  bool relu_layer = false;
  float max_value = 0, negative_slope = 0;
  bool has_max = false;
  // Per-channel affine y = x * scale[c] + shift[c] before the activation (BatchNorm), C = channels.
  int64_t channels = 0;
  int64_t scale_off = -1, shift_off = -1;
};
// Kinds the vectorised unary kernel computes exactly.
bool unary_vectorised(ActivationKind k);

// f32-fast-<act> (math mode fast): y = act(x) over batch*count floats; alpha parametrises kElu.
struct FastUnarySpec {
  int64_t count = 1;
  ActivationKind act = ActivationKind::kSigmoid;
  float alpha = 1.0f;
};
// Kinds the fast-math kernels approximate (error bounds: x86/math.h).
bool fast_math_kind(ActivationKind k);

// f32-fast-softmax: softmax over rows of `len` contiguous floats.
struct FastSoftmaxSpec {
  int64_t rows = 1, len = 1;
};

// f32-call-*: out = helper(in) over batch*count floats, parameters at params_off in the weights.
struct HelperCallSpec {
  int helper = 0;  // kernel_helpers.h
  int64_t count = 1;
  int64_t params_off = 0;
};

// f32-vprelu / f32-vaffine: per sample, y[i] = prelu(x[i], a[i]) or y[i] = x[i] * a[i] + b[i] with
// per-element parameter vectors a, b of `count` floats (broadcast parameters expanded at compile time).
enum class ParamOp : uint8_t { kPRelu, kAffine };
struct ParamEltSpec {
  ParamOp op = ParamOp::kAffine;
  int64_t count = 1;
  int64_t a_off = 0, b_off = 0;
};

// f32-merge: y = x0 op x1 op ... over batch*count floats (same shapes), divided by `divisor`.
enum class BinOp : uint8_t { kAdd, kSub, kMul, kMax, kMin };
struct MergeSpec {
  BinOp op = BinOp::kAdd;
  int inputs = 2;
  int64_t count = 1;
  float divisor = 1.0f;  // Average: the number of inputs
};

// f32-posscale: y[n, p, c] *= map[p] (average pooling over padding).
struct PositionScaleSpec {
  int64_t positions = 1, channels = 1, map_off = 0;
};

}  // namespace nnd::jit
