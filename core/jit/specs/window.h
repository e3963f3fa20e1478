// f32-dwconv / f32-maxpool / f32-avgpool: the window generator's spec and the depthwise weight
// layout (packing depends only on the vector width).
#pragma once

#include <cstdint>
#include <vector>

#include "core/ir/activation.h"
#include "core/jit/specs/out_placement.h"

namespace nnd::jit {

// Depthwise (depth multiplier already expanded: output channel c reads input channel c), max or
// sum (average) pooling, over an already padded input.
enum class WindowOp : uint8_t { kDepthwise, kMax, kSum };
struct WindowSpec {
  WindowOp op = WindowOp::kDepthwise;
  int64_t in_h = 1, in_w = 1, c = 1;
  int64_t out_h = 1, out_w = 1;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  bool has_bias = false;
  ActivationKind act = ActivationKind::kLinear;
  bool residual = false;           // kDepthwise: add in[1] (output layout) before or after `act`
  ResidualAt residual_at = ResidualAt::kBeforeActivation;
  OutPlacement out_place;
  float scale = 1.0f;              // kSum: constant factor (valid average pooling)
  int64_t weight_off = 0, bias_off = 0, recip_off = -1;  // recip: per-output-pixel factor map
  int vmax = 1, rows = 1;
};
void pack_depthwise_weights(WindowSpec& spec, int width, const std::vector<float>& kernel_expanded,
                            const std::vector<float>* bias, std::vector<float>& blob);

}  // namespace nnd::jit
