// The element-wise kernels' specs: activations (vectorised, fast math, helper calls), per-element
// parameters, merges and the position scale of average pooling, and which activations the
// generators compute themselves (the same set on every architecture).
#pragma once

#include <cstdint>

#include "core/engine/engine_options.h"
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

// f32-fast-<act>: y = act(x) over batch*count floats, vectorised (polynomial and rational forms,
// x86/math.h); alpha parametrises kElu. Math mode fast runs every fast_math_kind through them,
// exact mode those whose error bound fits its budget (fast_kernel_serves).
struct FastUnarySpec {
  int64_t count = 1;
  ActivationKind act = ActivationKind::kSigmoid;
  float alpha = 1.0f;
};
// Kinds the f32-fast-* kernels compute.
bool fast_math_kind(ActivationKind k);

// f32-fast-softmax: softmax over rows of `len` contiguous floats.
struct FastSoftmaxSpec {
  int64_t rows = 1, len = 1;
};

// The relative error bound of the f32-fast-* kernels for kind k against float64 (generators/fast_math.h; the
// NEON kernels share the algorithms and constants), which jit_fast_math_test measures on every ISA
// over a dense sweep. kSoftmax is f32-fast-softmax's over the rows that test draws (1 to kFastSoftmaxMeasuredRow floats).
// 0 for kinds they do not compute.
double fast_kernel_error_bound(ActivationKind k);

// Exact mode keeps every output within 1e-5 relative of the float64 reference (DESIGN.md). An
// activation may spend half of it; the layers before it keep the other half.
inline constexpr double kExactActivationBudget = 5e-6;

// The same kernels' bound in exact mode's own measure, |f - ref| / max(1, |ref|) (what DESIGN.md and
// every test hold exact mode to), measured by jit_fast_math_test on every ISA. It is the relative
// bound except for gelu: its relative error reaches 2e-5 only where |gelu(x)| < 1e-8 (x < -6, the
// exp argument's own rounding), its scaled error is 1e-6 (measured 1.6e-7). Softmax's outputs are
// at most 1, so its relative bound is also its scaled one.
double fast_kernel_scaled_error_bound(ActivationKind k);

// f32-fast-softmax's bound is measured over rows of 1 to this many floats (jit_fast_math_test, x
// in [-30, 30] and in [-2, 2]: many terms of one size); its float sum's error grows with the row
// beyond. (The sum of a row's positive terms in one vector accumulator, then across the lanes, is
// within (len / lanes + log2 lanes) float roundings, 3e-6 for 256 floats on SSE, plus the exp
// kernel's measured 1.2e-7 on each side of the quotient.)
inline constexpr int64_t kFastSoftmaxMeasuredRow = 256;

// Whether math mode `math` computes activation k with the f32-fast-* kernels instead of the float64
// helpers (f32-call-*); `row` is softmax's row length. Fast: every kind they compute. Exact: the
// kinds whose scaled bound is within kExactActivationBudget (sigmoid, tanh, softplus, elu, selu,
// swish, mish, both gelu forms), and softmax over rows of at most kFastSoftmaxMeasuredRow (exp's
// clamp to [-87, 88] does not matter there: after the row's maximum is subtracted, a clamped term
// is below 1.6e-38 against a sum of at least 1). Longer softmax rows and exp itself, whose argument
// the kernel clamps where float's exp still has values, stay on the helpers.
bool fast_kernel_serves(ActivationKind k, MathMode math, int64_t row = 0);

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
