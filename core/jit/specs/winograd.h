// Winograd F(2x2, 3x3) specs (the method: x86/kernels_winograd.h): f32-wino-in, the 16-group 1x1
// f32-conv between them (a ConvSpec), f32-wino-out, and the transformed weights G g G^T.
#pragma once

#include <cstdint>
#include <vector>

#include "core/ir/activation.h"
#include "core/jit/specs/out_placement.h"

namespace nnd::jit {

inline constexpr int kWinogradPoints = 16;

// Whether a convolution runs as F(2x2, 3x3): winograd_suits() (core/jit/kernel_config.h).

struct WinogradInSpec {
  int64_t tiles_h = 1, tiles_w = 1, c = 1;  // the input is (2*tiles_h + 2) x (2*tiles_w + 2) x c, dense
};

struct WinogradOutSpec {
  int64_t tiles_h = 1, tiles_w = 1, c = 1;  // output channels
  bool has_bias = false;
  int64_t bias_off = 0;                          // floats from KernelArgs::weights
  ActivationKind act = ActivationKind::kLinear;  // act_fusable() kinds only
  bool residual = false;                         // in[1]: the output's (dense) layout
  ResidualAt residual_at = ResidualAt::kBeforeActivation;  // added before or after act
  OutPlacement out_place;
};

// The transformed weights as a Keras grouped 1x1 kernel (1, 1, cin, 16 * cout): filter p * cout + co
// of group p holds (G g G^T)[p / 4][p % 4] for input channel ci and output channel co, computed in
// double precision. `kernel` is the Keras (3, 3, cin, cout) kernel.
std::vector<float> winograd_weights(const std::vector<float>& kernel, int64_t cin, int64_t cout);

}  // namespace nnd::jit
