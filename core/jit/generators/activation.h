// Exact activations on registers, written once for every architecture over generators/
// vector_ops.h: the activation a kernel's epilogue fuses into its accumulators (conv, GEMM,
// pooling, depthwise, Winograd, planar), and the element-wise activations of f32-vact-* and
// f32-vrelu. The approximated ones (exp, sigmoid, tanh, ...) are generators/fast_math.h.
#pragma once

#include <string>

#include "core/ir/activation.h"
#include "core/jit/generators/vector_ops.h"
#include "core/jit/specs/conv.h"
#include "core/jit/specs/elementwise.h"
#include "core/util/error.h"

namespace nnd::jit::generators {

// The epilogue's activation (an act_fusable kind: linear, relu, relu6) on the registers reg(0) ..
// reg(count - 1); `tmp` is free. Another kind is a lowering bug (nnd::Error kInternal).
template <VectorOps Ve, class RegOf>
void epilogue_activation(Ve& ve, ActivationKind act, int count, RegOf&& reg, int tmp) {
  if (!act_fusable(act)) {
    throw Error(ErrorCode::kInternal, std::string("JIT internal error: a kernel epilogue cannot fuse ") + activation_name(act));
  }
  if (act == ActivationKind::kLinear) return;
  ve.zero(tmp);
  for (int i = 0; i < count; ++i) ve.max(reg(i), reg(i), tmp);
  if (act == ActivationKind::kRelu6) {
    ve.load_const(tmp, 6.0f);
    for (int i = 0; i < count; ++i) ve.min(reg(i), reg(i), tmp);
  }
}

// The same on the registers first .. first + count - 1.
template <VectorOps Ve>
void epilogue_activation(Ve& ve, ActivationKind act, int first, int count, int tmp) {
  epilogue_activation(ve, act, count, [first](int i) { return first + i; }, tmp);
}

// x = the element-wise activation of s (a ReLU layer's slope and ceiling, or an exact
// unary_vectorised kind) on register x; t and u are free. |x| is max(x, 0 - x) on every
// architecture (the kernels' code, held by the golden hashes).
template <VectorOps Ve>
void unary_activation(Ve& ve, const UnarySpec& s, int x, int t, int u) {
  using K = ActivationKind;
  if (s.relu_layer) {
    ve.mov(u, x);
    ve.zero(t);
    ve.max(x, x, t);
    if (s.negative_slope != 0.0f) {
      ve.min(u, u, t);
      ve.load_const(t, s.negative_slope);
      ve.mul(u, u, t);
      ve.add(x, x, u);
    }
    if (s.has_max) {
      ve.load_const(t, s.max_value);
      ve.min(x, x, t);
    }
    return;
  }
  auto clamp_0_to = [&](float hi) {  // x = min(max(x, 0), hi); t holds hi after it
    ve.zero(t);
    ve.max(x, x, t);
    ve.load_const(t, hi);
    ve.min(x, x, t);
  };
  auto hard_sigmoid_k3 = [&] {  // relu6(x + 3) / 6
    ve.load_const(t, 3.0f);
    ve.add(x, x, t);
    clamp_0_to(6.0f);
    ve.div(x, x, t);
  };
  switch (s.act) {
    case K::kLinear: break;
    case K::kRelu:
    case K::kRelu6: epilogue_activation(ve, s.act, x, 1, t); break;
    case K::kLeakyRelu:
      ve.load_const(t, 0.2f);
      ve.mul(t, x, t);
      ve.max(x, x, t);
      break;
    case K::kHardSigmoidK2:  // clamp(0.2 x + 0.5, 0, 1)
      ve.load_const(t, 0.2f);
      ve.mul(x, x, t);
      ve.load_const(t, 0.5f);
      ve.add(x, x, t);
      clamp_0_to(1.0f);
      break;
    case K::kHardSigmoidK3: hard_sigmoid_k3(); break;
    case K::kHardSwish:
      ve.mov(u, x);
      hard_sigmoid_k3();
      ve.mul(x, x, u);
      break;
    case K::kSoftsign:  // x / (1 + |x|)
      ve.zero(t);
      ve.sub(t, t, x);
      ve.max(t, t, x);
      ve.load_const(u, 1.0f);
      ve.add(t, t, u);
      ve.div(x, x, t);
      break;
    case K::kReciprocal:
      ve.load_const(t, 1.0f);
      ve.div(x, t, x);
      break;
    case K::kSqrt: ve.sqrt(x, x); break;
    case K::kAbs:
      ve.zero(t);
      ve.sub(t, t, x);
      ve.max(x, x, t);  // max(x, -x)
      break;
    default:
      throw Error(ErrorCode::kInternal, std::string("JIT: activation '") + activation_name(s.act) + "' is not vectorised");
  }
}

// f32-vprelu / f32-vaffine on registers (ParamEltSpec): x = PReLU(x) with slopes a
// (max(x, 0) + a * min(x, 0)), or x = a * x + b, where load_b(t) loads the b parameters into t.
// t and neg are free.
template <VectorOps Ve, class LoadB>
void param_elt(Ve& ve, ParamOp op, int x, int a, int t, int neg, LoadB&& load_b) {
  if (op == ParamOp::kPRelu) {
    ve.zero(t);
    ve.min(neg, x, t);
    ve.max(x, x, t);
    ve.mul(neg, neg, a);
    ve.add(x, x, neg);
  } else {
    ve.mul(x, x, a);
    load_b(t);
    ve.add(x, x, t);
  }
}

}  // namespace nnd::jit::generators
