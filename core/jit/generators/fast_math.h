// Vectorised transcendental functions, written once for every architecture over the register
// vocabulary of generators/vector_ops.h and emitted inline in the kernels (no helper calls): the
// same instruction sequence, and so the same results and error bounds, on SSE4.1, AVX2, AVX-512
// and NEON. Math mode fast runs every kind here through them; exact mode the kinds whose bound in
// its own measure (|f - ref| / max(1, |ref|)) fits its budget, softmax over rows of up to 256
// (fast_kernel_serves in specs/elementwise.h, where the bounds are kept), and the float64 helpers
// (kernel_helpers.h) for the rest. The kernels around them: x86/math.cpp, arm64/neon_math.cpp.
//
// Building blocks:
//   exp      Cody-Waite range reduction (n = round(x log2 e), r = x - n ln2 in two parts), the
//            degree-7 Cephes expf polynomial, 2^n from the exponent bits. x is clamped to
//            [-87, 88]: below -87 the result stays exp(-87) ~ 1.6e-38 (absolute error < 2e-38).
//   tanh     Eigen's odd rational approximation (degree 13 / 6) on x clamped to +-7.905; relative
//            accuracy holds down to x -> 0.
//   sigmoid  1 / (1 + exp(-x)); softplus max(x, 0) + log1p(exp(-|x|)) with log1p(e) = 2 atanh(s),
//            s = e / (2 + e), as an odd series (no cancellation); elu/selu use
//            expm1(x) = 2t / (1 - t), t = tanh(x / 2) (no cancellation near 0); swish x sigmoid(x);
//            gelu (tanh form) x sigmoid(2 sqrt(2/pi) (x + 0.044715 x^3)); gelu (erf form)
//            max(x, 0) - |x| erfc(|x| / sqrt 2) / 2 with the Numerical Recipes erfc (fractional
//            error 1.2e-7); mish x tanh(softplus(x)); softmax over the last axis (max, exp, sum).
//
// Error bound (measured by tests/jit_common/jit_fast_math_test.cpp on every ISA over a dense sweep of
// x in [-30, 30] plus edge values; relative error |f - ref| / |ref| where |ref| >= 1e-30, absolute
// error below that):
//   exp, sigmoid, tanh, softplus, elu, selu, swish, mish:  <= 2e-6 relative (measured <= 4.7e-7)
//   softmax (rows of 1..256, x in [-30, 30] and [-2, 2]):   <= 5e-6 relative (measured 2.2e-6)
//   gelu, both forms:                                      <= 2e-5 relative (measured 1.7e-5),
//                                                          <= 1e-6 scaled (measured 1.6e-7)
// (gelu: for x < -6 the exp argument, -z^2 or the cubic, carries its own float rounding, which exp
// amplifies; both are compared with cancellation-free float64 forms, since the reference's
// 0.5 x (1 + erf/tanh) cancels there). Domain: |x| <= 1e4 (swish/gelu/mish lose relative accuracy
// beyond, where exp is clamped); exp itself is exact to the bound on [-87, 88].
// Not covered by fast mode (stay on the exact helpers): log_softmax, softmax over a non-last axis.
//
// Registers: d may equal x; the temporaries t[...] are distinct from d and x (each function says
// how many it uses).
#pragma once

#include <cmath>
#include <initializer_list>
#include <string>
#include <utility>

#include "core/ir/activation.h"
#include "core/jit/generators/vector_ops.h"
#include "core/util/error.h"

namespace nnd::jit::generators {

namespace fast_math_detail {

// A polynomial in x with coefficients from the highest degree down (Horner); a and b scratch.
// Returns the register holding the result (a or b).
template <VectorOps Ve>
int horner(Ve& ve, int x, std::initializer_list<float> coeffs, int a, int b) {
  auto it = coeffs.begin();
  ve.load_const(a, *it++);
  for (; it != coeffs.end(); ++it) {
    ve.load_const(b, *it);
    ve.fmadd(b, a, x);
    std::swap(a, b);
  }
  return a;
}

}  // namespace fast_math_detail

// d = exp(x); t[0..3].
template <VectorOps Ve>
void fast_exp(Ve& ve, int d, int x, const int* t) {
  using fast_math_detail::horner;
  ve.load_const(t[0], 88.0f);
  ve.min(t[1], x, t[0]);
  ve.load_const(t[0], -87.0f);
  ve.max(t[1], t[1], t[0]);
  ve.load_const(t[0], 1.44269504088896341f);
  ve.mul(t[0], t[1], t[0]);
  ve.cvt_f2i(t[2], t[0]);  // n
  ve.cvt_i2f(t[0], t[2]);
  ve.load_const(t[3], 0.693359375f);
  ve.mul(t[3], t[3], t[0]);
  ve.sub(t[1], t[1], t[3]);
  ve.load_const(t[3], -2.12194440e-4f);
  ve.mul(t[3], t[3], t[0]);
  ve.sub(t[1], t[1], t[3]);  // r
  const int p = horner(ve, t[1],
                       {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f, 4.1665795894e-2f, 1.6666665459e-1f,
                        5.0000001201e-1f},
                       t[3], t[0]);
  const int q = p == t[3] ? t[0] : t[3];
  ve.mul(p, p, t[1]);
  ve.mul(p, p, t[1]);
  ve.add(p, p, t[1]);
  ve.load_const(q, 1.0f);
  ve.add(p, p, q);
  ve.load_const_u32(q, 127u);  // 2^n: n + the exponent bias, shifted into the exponent field
  ve.add_i32(t[2], t[2], q);
  ve.shl_i32(t[2], t[2], 23);
  ve.mul(d, p, t[2]);
}

// d = tanh(x); t[0..3], d distinct from them.
template <VectorOps Ve>
void fast_tanh(Ve& ve, int d, int x, const int* t) {
  using fast_math_detail::horner;
  constexpr float kClamp = 7.90531110763549805f;
  ve.load_const(t[1], kClamp);
  ve.min(t[0], x, t[1]);
  ve.load_const(t[1], -kClamp);
  ve.max(t[0], t[0], t[1]);
  ve.mul(t[1], t[0], t[0]);
  const int p = horner(ve, t[1],
                       {-2.76076847742355e-16f, 2.00018790482477e-13f, -8.60467152213735e-11f, 5.12229709037114e-08f,
                        1.48572235717979e-05f, 6.37261928875436e-04f, 4.89352455891786e-03f},
                       t[2], t[3]);
  ve.mul(d, p, t[0]);
  const int q = horner(ve, t[1], {1.19825839466702e-06f, 1.18534705686654e-04f, 2.26843463243900e-03f,
                                  4.89352518554385e-03f},
                       t[2], t[3]);
  ve.div(d, d, q);
}

// d = 1 / (1 + exp(-x)); t[0..4].
template <VectorOps Ve>
void fast_sigmoid(Ve& ve, int d, int x, const int* t) {
  ve.neg(t[4], x, t[0]);
  fast_exp(ve, t[4], t[4], t);
  ve.load_const(t[0], 1.0f);
  ve.add(t[4], t[4], t[0]);
  ve.div(d, t[0], t[4]);
}

namespace fast_math_detail {

// d = max(x, 0) + log1p(exp(-|x|)); t[0..5].
template <VectorOps Ve>
void softplus(Ve& ve, int d, int x, const int* t) {
  ve.abs(t[4], x);
  ve.neg(t[4], t[4], t[5]);
  fast_exp(ve, t[4], t[4], t);  // e = exp(-|x|)
  ve.load_const(t[5], 2.0f);
  ve.add(t[5], t[5], t[4]);
  ve.div(t[4], t[4], t[5]);  // s = e / (2 + e)
  ve.mul(t[5], t[4], t[4]);
  const int p = horner(ve, t[5],
                       {1.0f / 15, 1.0f / 13, 1.0f / 11, 1.0f / 9, 1.0f / 7, 1.0f / 5, 1.0f / 3, 1.0f}, t[0], t[1]);
  ve.mul(p, p, t[4]);
  ve.add(p, p, p);  // log1p(e) = 2 atanh(s)
  ve.zero(t[5]);
  ve.max(t[5], x, t[5]);
  ve.add(d, t[5], p);
}

// d = alpha * expm1(min(x, 0)) + max(x, 0) via expm1(y) = 2t / (1 - t), t = tanh(y / 2); t[0..5].
template <VectorOps Ve>
void elu(Ve& ve, int d, int x, float alpha, const int* t) {
  ve.zero(t[4]);
  ve.min(t[4], x, t[4]);
  ve.load_const(t[5], 0.5f);
  ve.mul(t[4], t[4], t[5]);
  fast_tanh(ve, t[4], t[4], t);
  ve.load_const(t[5], 1.0f);
  ve.sub(t[5], t[5], t[4]);
  ve.add(t[4], t[4], t[4]);
  ve.div(t[4], t[4], t[5]);
  ve.load_const(t[5], alpha);
  ve.mul(t[4], t[4], t[5]);
  ve.zero(t[5]);
  ve.max(t[5], x, t[5]);
  ve.add(d, t[5], t[4]);
}

}  // namespace fast_math_detail

// d = k(x) for the kinds fast_math_kind() names (alpha: kElu's); t[0..7]. Any other kind is a
// lowering bug (nnd::Error kInternal).
template <VectorOps Ve>
void fast_activation(Ve& ve, ActivationKind k, float alpha, int d, int x, const int* t) {
  using fast_math_detail::horner;
  using K = ActivationKind;
  switch (k) {
    case K::kExponential: fast_exp(ve, d, x, t); break;
    case K::kSigmoid: fast_sigmoid(ve, d, x, t); break;
    case K::kTanh: fast_tanh(ve, d, x, t); break;
    case K::kSwish:
      fast_sigmoid(ve, t[5], x, t);
      ve.mul(d, x, t[5]);
      break;
    case K::kSoftplus: fast_math_detail::softplus(ve, d, x, t); break;
    case K::kElu: fast_math_detail::elu(ve, d, x, alpha, t); break;
    case K::kSelu:
      fast_math_detail::elu(ve, d, x, 1.67326324235437728f, t);
      ve.load_const(t[5], 1.05070098735548049f);
      ve.mul(d, d, t[5]);
      break;
    case K::kGeluTanh:
      ve.mul(t[5], x, x);
      ve.mul(t[5], t[5], x);
      ve.load_const(t[6], 0.044715f);
      ve.mul(t[5], t[5], t[6]);
      ve.add(t[5], t[5], x);
      ve.load_const(t[6], static_cast<float>(2.0 * std::sqrt(2.0 / M_PI)));
      ve.mul(t[5], t[5], t[6]);
      fast_sigmoid(ve, t[5], t[5], t);
      ve.mul(d, x, t[5]);
      break;
    case K::kGeluErf: {
      ve.abs(t[5], x);
      ve.load_const(t[6], static_cast<float>(1.0 / std::sqrt(2.0)));
      ve.mul(t[6], t[5], t[6]);  // z = |x| / sqrt 2
      ve.load_const(t[4], 0.5f);
      ve.mul(t[7], t[6], t[4]);
      ve.load_const(t[4], 1.0f);
      ve.add(t[7], t[7], t[4]);
      ve.div(t[7], t[4], t[7]);  // u = 1 / (1 + z / 2)
      const int p = horner(ve, t[7],
                           {0.17087277f, -0.82215223f, 1.48851587f, -1.13520398f, 0.27886807f, -0.18628806f,
                            0.09678418f, 0.37409196f, 1.00002368f, -1.26551223f},
                           t[0], t[1]);
      ve.mul(t[6], t[6], t[6]);
      ve.sub(t[4], p, t[6]);
      fast_exp(ve, t[4], t[4], t);
      ve.mul(t[4], t[4], t[7]);  // erfc(z)
      ve.load_const(t[6], 0.5f);
      ve.mul(t[4], t[4], t[6]);  // c = Phi(-|x|)
      ve.mul(t[4], t[4], t[5]);
      ve.zero(t[6]);
      ve.max(t[6], x, t[6]);
      ve.sub(d, t[6], t[4]);
      break;
    }
    case K::kMish:
      fast_math_detail::softplus(ve, t[6], x, t);
      fast_tanh(ve, t[6], t[6], t);
      ve.mul(d, x, t[6]);
      break;
    default:
      throw Error(ErrorCode::kInternal, std::string("JIT fast math: no vectorised form of ") + activation_name(k));
  }
}

}  // namespace nnd::jit::generators
