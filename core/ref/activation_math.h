// Scalar float64 formulas of the element-wise activations, shared by the reference engine and
// tests. Each is written to avoid overflow for large |x| (no inf/NaN from exp of a big argument).
#pragma once

#include <cstdint>

#include "core/ir/activation.h"

namespace nnd::ref {

// f(x) for an element-wise kind. Must not be called with softmax-like kinds.
double activation_scalar(ActivationKind k, double x);

// Softmax (or log-softmax) over `len` elements spaced `stride` apart, in place.
void softmax_inplace(double* v, int64_t len, int64_t stride, bool log);

double sigmoid(double x);
double softplus(double x);

inline constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
inline constexpr double kSeluScale = 1.0507009873554804934193349852946;

}  // namespace nnd::ref
