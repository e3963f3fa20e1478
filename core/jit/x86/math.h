// Vectorised transcendental functions, emitted inline in the kernels through the VecEmitter hooks
// (no helper calls), identical on SSE4.1, AVX2 and AVX-512. Math mode fast runs every kind here
// through them; exact mode the kinds whose bound in its own measure (|f - ref| / max(1, |ref|))
// fits its budget, softmax over rows of up to 256 (fast_kernel_serves in specs/elementwise.h, where
// the bounds are kept), and the float64 helpers (kernel_helpers.h) for the rest.
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
#pragma once

#include <cstdint>

#include "core/ir/activation.h"
#include "core/jit/specs/elementwise.h"
#include "core/jit/x86/vec_emitter.h"

namespace nnd::jit {

// f32-fast-<act>: y = act(x) over batch*count floats (FastUnarySpec, fast_math_kind kinds).
void emit_fast_unary(VecEmitter& ve, const FastUnarySpec& s);

// f32-fast-softmax: softmax over rows of `len` contiguous floats (rows_per_sample per sample).
void emit_fast_softmax(VecEmitter& ve, int64_t rows_per_sample, int64_t len);

// Register-level building blocks (d may equal x; temps distinct from d and x): used by the
// kernels above and available to epilogues.
void emit_exp(VecEmitter& ve, int d, int x, const int* t);      // t[0..3]
void emit_tanh(VecEmitter& ve, int d, int x, const int* t);     // t[0..3], d != t
void emit_sigmoid(VecEmitter& ve, int d, int x, const int* t);  // t[0..4]
void emit_activation_fast(VecEmitter& ve, ActivationKind k, float alpha, int d, int x, const int* t);  // t[0..7]

}  // namespace nnd::jit
