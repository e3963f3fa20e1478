// The planar convolution's specs ("pixels in lanes", f32-planar-pack and f32-conv-...-planar; why
// and how: x86/kernels_planar.h), its input layout, blocking and weight layout.
//
// f32-planar-pack writes, per sample, for every input channel c and column phase p (0 <= p < sw)
// one plane of plane_h rows x plane_w floats: element (c, p, y, q) = input row y - top, column
// q*sw + p - left, channel c, and zero outside the input.
#pragma once

#include <cstdint>
#include <vector>

#include "core/ir/activation.h"
#include "core/jit/specs/out_placement.h"

namespace nnd::jit {

// The packed input of one sample: c * phases planes of plane_h x plane_w floats.
struct PlanarLayout {
  int64_t c = 1, phases = 1;
  int64_t plane_h = 1, plane_w = 1;
  int64_t plane_floats() const { return plane_h * plane_w; }
  int64_t sample_floats() const { return c * phases * plane_floats(); }
};

// The planes a convolution reads: rows 0 .. (out_h-1)*sh + (kh-1)*dh of the padded input, and in
// every phase the columns of ceil(out_w / 4) * 4 output pixels (the last group of four is read
// whole; its extra pixels are never stored).
PlanarLayout planar_layout(int64_t c, int64_t out_h, int64_t out_w, int64_t kh, int64_t kw, int64_t sh,
                           int64_t sw, int64_t dh, int64_t dw);

// Whether a convolution takes these kernels: planar_conv_suits() (core/jit/kernel_config.h).

struct PlanarPackSpec {
  int64_t in_h = 1, in_w = 1;  // the input's own (unpadded) rows and columns
  // Source geometry in floats: dense NHWC, or the interior of a bordered buffer whose producer
  // wrote it there (padded_storage.h); the pack reads the interior only.
  int64_t src_row_floats = 0, src_sample_floats = 0, src_offset = 0;
  int64_t top = 0, left = 0;  // zero rows / columns before the input
  PlanarLayout out;
};

struct PlanarConvSpec {
  PlanarLayout in;  // in.phases is the column stride
  int64_t out_h = 1, out_w = 1, cout = 4;
  int64_t kh = 1, kw = 1, sh = 1, dh = 1, dw = 1;
  bool has_bias = false;
  ActivationKind act = ActivationKind::kLinear;  // act_fusable() kinds only
  bool residual = false;                         // in[1]: NHWC, the output's (dense) layout
  ResidualAt residual_at = ResidualAt::kBeforeActivation;  // residual added before or after act
  OutPlacement out_place;
  // Output channels per chunk (multiples of 4, summing to cout) and groups of 4 pixels per tile.
  std::vector<int> chunks;
  int groups = 1;
  std::vector<int64_t> chunk_weight_off;  // floats from KernelArgs::weights
  int64_t bias_off = 0;                   // 4 copies of each channel's bias
};
// Picks chunks and groups for spec.cout (16 xmm registers: accumulators, the inputs of a tile and
// the product's temporary).
void plan_planar_blocking(PlanarConvSpec& s);
// Packs a Keras kernel (kh, kw, cin, cout) and bias into `blob`: per chunk, tap (ci, ky, kx) and
// channel one vector of 4 copies of the weight. Fills the offsets (relative to blob's start).
void pack_planar_conv_weights(PlanarConvSpec& s, const std::vector<float>& kernel, const std::vector<float>* bias,
                              std::vector<float>& blob);

}  // namespace nnd::jit
