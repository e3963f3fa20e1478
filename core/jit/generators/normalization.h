// Layer normalisation's arithmetic on a register, written once for every architecture (the
// kernels' passes over memory are each architecture's: x86/kernels_shape.cpp, arm64/neon_shape.cpp).
#pragma once

#include <cstdint>

#include "core/jit/generators/vector_ops.h"

namespace nnd::jit::generators {

// acc = 1 / sqrt(acc / count + epsilon) in every lane: the inverse standard deviation from the sum
// of squared deviations of `count` elements (acc holds the sum in every lane). `tmp` is clobbered.
// Divisions, not reciprocal estimates: the result must match the reference within float rounding.
template <VectorOps Ve>
void inverse_std(Ve& ve, int acc, int tmp, int64_t count, float epsilon) {
  ve.load_const(tmp, static_cast<float>(count));
  ve.div(acc, acc, tmp);
  ve.load_const(tmp, epsilon);
  ve.add(acc, acc, tmp);
  ve.sqrt(acc, acc);
  ve.load_const(tmp, 1.0f);
  ve.div(acc, tmp, acc);
}

}  // namespace nnd::jit::generators
