// f32-layernorm: the LayerNormalization kernel's spec.
#pragma once

#include <cstdint>

namespace nnd::jit {

// Rows of `block` contiguous floats (groups rows per sample), y = (x - mean) / sqrt(var + eps) *
// gamma + beta, two-pass mean and variance in float32.
struct LayerNormSpec {
  int64_t groups = 1, block = 1;
  float epsilon = 1e-3f;
  int64_t gamma_off = -1, beta_off = -1;  // -1: none
};

}  // namespace nnd::jit
