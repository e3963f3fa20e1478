// C++ helpers the generated code calls for what is not vectorised yet (exact-mode transcendental
// activations, softmax). They compute in float64 with the reference engine's scalar formulas, so
// exact mode holds by construction. Reached only through KernelArgs::helpers (no absolute
// addresses in the code).
#pragma once

#include <cstdint>

#include "core/jit/kernel_args.h"

namespace nnd::jit {

// Parameter block tags (params[0]) of kHelperUnary.
enum class HelperTag : int {
  kActivation = 0,       // params[1] = ActivationKind (element-wise kinds)
  kElu = 1,              // params[1] = alpha
  kThresholdedRelu = 2,  // params[1] = theta
  kRelu = 3,             // params[1..3] = max_value (inf = none), negative_slope, threshold
  kSoftmax = 4,          // params[1] = axis length, params[2] = inner stride
  kLogSoftmax = 5,
};

inline constexpr int kHelperUnary = 0;

// The table passed in KernelArgs::helpers.
const HelperFn* helper_table();

}  // namespace nnd::jit
