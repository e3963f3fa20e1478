// f32-conv / f32-gemm: what lowering asks of the convolution generator, and the weight layout it
// reads (packing depends only on the vector width, so every architecture's generator shares it).
#pragma once

#include <cstdint>
#include <vector>

#include "core/ir/activation.h"
#include "core/jit/kernel_config.h"
#include "core/jit/specs/out_placement.h"

namespace nnd::jit {

// Activations the conv/GEMM epilogue applies on its accumulators; others run as a separate
// element-wise kernel.
bool act_fusable(ActivationKind k);

// f32-conv: Conv2D/Conv1D/Dense/pointwise over an already padded NHWC input.
struct ConvSpec {
  int64_t in_h = 1, in_w = 1, in_c = 1;    // input buffer (padded) per sample; in_c = pixel stride
  int64_t out_h = 1, out_w = 1, out_c = 1; // output per sample; out_c = pixel stride
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t groups = 1, cin_g = 1, cout_g = 1;
  bool rows_mode = false;  // GEMM over batch*out_h*out_w rows (1x1, stride 1, groups 1; Dense)
  bool has_bias = false;
  ActivationKind act = ActivationKind::kLinear;  // act_fusable() kinds only
  // Fused residual: the kernel's second input (in[1]) has the output's layout and is added to the
  // accumulators after the bias, before `act` (or after it, residual_at).
  bool residual = false;
  ResidualAt residual_at = ResidualAt::kBeforeActivation;
  OutPlacement out_place;  // spatial mode only
  ConvBlocking blocking;
  std::vector<int64_t> group_weight_off;  // per group, in floats from KernelArgs::weights
  std::vector<int64_t> group_bias_off;
};
// Whether the groups' weight and bias blocks are evenly spaced (as pack_conv_weights lays them
// out), so that one copy of the group's code can loop over them at run time.
bool uniform_groups(const ConvSpec& s);
// Packs a Keras kernel (kh, kw, cin_g, filters) and bias into `blob` for `spec` (fills the offsets).
void pack_conv_weights(ConvSpec& spec, int width, const std::vector<float>& kernel,
                       const std::vector<float>* bias, std::vector<float>& blob);

}  // namespace nnd::jit
