// ISA-neutral kernel generators. Each emits the body of one kernel function (the frame is added by
// KernelModule) through the VecEmitter hooks, so the same generator serves every ISA. Shapes are
// compile-time constants; only the batch is read at run time (KernelArgs::batch).
//
// Kernels are named by lowering (core/jit/kernel_name.h): "f32-conv-bias+relu-4x3v-avx2-direct".
#pragma once

#include <cstdint>
#include <vector>

#include "core/ir/activation.h"
#include "core/jit/kernel_config.h"
#include "core/jit/x86/vec_emitter.h"

namespace nnd::jit {

// Where a spatial kernel writes its output: dense NHWC by default, or the interior of a bordered
// buffer whose border a consumer needs (padded_storage.h): rows and samples further apart, and the
// first pixel `offset_floats` in.
struct OutPlacement {
  int64_t row_floats = 0;     // 0: dense (out_w * channels)
  int64_t sample_floats = 0;  // 0: dense (out_h * out_w * channels)
  int64_t offset_floats = 0;
  bool dense() const { return row_floats == 0 && sample_floats == 0 && offset_floats == 0; }
};

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
  // accumulators after the bias, before `act`.
  bool residual = false;
  OutPlacement out_place;  // spatial mode only
  ConvBlocking blocking;
  std::vector<int64_t> group_weight_off;  // per group, in floats from KernelArgs::weights
  std::vector<int64_t> group_bias_off;
};
// Packs a Keras kernel (kh, kw, cin_g, filters) and bias into `blob` for `spec` (fills the offsets).
void pack_conv_weights(ConvSpec& spec, int width, const std::vector<float>& kernel,
                       const std::vector<float>* bias, std::vector<float>& blob);
void emit_conv(VecEmitter& ve, const ConvSpec& s);

// f32-dwconv: depthwise (depth multiplier already expanded: output channel c reads input channel c)
// and f32-maxpool / f32-avgpool (no weights) over an already padded input.
enum class WindowOp : uint8_t { kDepthwise, kMax, kSum };
struct WindowSpec {
  WindowOp op = WindowOp::kDepthwise;
  int64_t in_h = 1, in_w = 1, c = 1;
  int64_t out_h = 1, out_w = 1;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  bool has_bias = false;
  ActivationKind act = ActivationKind::kLinear;
  bool residual = false;           // kDepthwise: add in[1] (output layout) before `act`
  OutPlacement out_place;
  float scale = 1.0f;              // kSum: constant factor (valid average pooling)
  int64_t weight_off = 0, bias_off = 0, recip_off = -1;  // recip: per-output-pixel factor map
  int vmax = 1, rows = 1;
};
void pack_depthwise_weights(WindowSpec& spec, int width, const std::vector<float>& kernel_expanded,
                            const std::vector<float>* bias, std::vector<float>& blob);
void emit_window(VecEmitter& ve, const WindowSpec& s);

// f32-pad: copies (H, W, C) into (H+top+bottom, W+left+right, C*dm) filled with `value`,
// replicating each channel dm times (depthwise multiplier). Also converts uint8 input.
struct PadSpec {
  int64_t h = 1, w = 1, c = 1, dm = 1;
  int64_t top = 0, bottom = 0, left = 0, right = 0;
  float value = 0.0f;
  bool u8 = false;
  // Fill only the border of an already bordered buffer (in place; its interior was written by the
  // producer, see padded_storage.h). dm must be 1.
  bool border_only = false;
};
void emit_pad(VecEmitter& ve, const PadSpec& s);

// f32-vact-* / f32-vrelu / f32-affine: y = f(x) over batch*count floats, or over (outer, C) with
// per-channel scale/shift (BatchNorm). Kinds the generator cannot vectorise exactly call a helper (see kernel_helpers.h).
struct UnarySpec {
  int64_t count = 1;  // per sample
  bool u8 = false;    // input is uint8 (conversion kernel)
  ActivationKind act = ActivationKind::kLinear;
  // ReLU layer parameters (used when relu_layer is true): see ReluParams.
  bool relu_layer = false;
  float max_value = 0, negative_slope = 0;
  bool has_max = false;
  // Per-channel affine y = x * scale[c] + shift[c] before the activation (BatchNorm), C = channels.
  int64_t channels = 0;
  int64_t scale_off = -1, shift_off = -1;
};
void emit_unary(VecEmitter& ve, const UnarySpec& s);
bool unary_vectorised(ActivationKind k);

// Helper call: out = helper(in) over batch*count floats with a parameter block.
void emit_helper_call(VecEmitter& ve, int helper_index, int64_t count, int64_t params_off);

// f32-merge: y = x0 op x1 op ... over batch*count floats (same shapes).
enum class BinOp : uint8_t { kAdd, kSub, kMul, kMax, kMin };
void emit_merge(VecEmitter& ve, BinOp op, int inputs, int64_t count, float post_scale);

// f32-concat: per outer index, copies inner[i] floats of each input in turn.
void emit_concat(VecEmitter& ve, int64_t outer, const std::vector<int64_t>& inner);

// Per-position scale (average pooling with padding): y[n, p, c] *= map[p].
void emit_position_scale(VecEmitter& ve, int64_t positions, int64_t channels, int64_t map_off);

}  // namespace nnd::jit
