// Where each output element of a resize reads: the per-axis coordinate maps of ONNX Resize, of
// which Keras' UpSampling (whole-number repeat or half-pixel bilinear) and Resizing are special
// cases. Both engines build their index tables from here, so they agree on the index arithmetic
// by construction; the formulas themselves are checked against ONNX Runtime by the ONNX fixtures
// and against TensorFlow.js by the Keras fixtures.
#pragma once

#include <cstdint>
#include <vector>

#include "core/ir/layers.h"
#include "core/ir/tensor.h"

namespace nnd {

// Output element x along one axis is in[lo] + (in[hi] - in[lo]) * t (nearest: lo == hi, t == 0).
struct ResizeTap {
  int64_t lo = 0, hi = 0;
  double t = 0;
};

// The taps of one axis resized from n_in to n_out elements; `scale` 0 means n_out / n_in.
std::vector<ResizeTap> resize_axis_taps(int64_t n_in, int64_t n_out, double scale, ResizeCoordinates coordinates,
                                        Interpolation interpolation, NearestRounding rounding);

// Both spatial axes of a resize of a channels-last (h, w, c) or (w, c) sample; a 1-D resize has
// one row (h == {{0, 0, 0}}).
struct ResizeTaps {
  int64_t in_h = 1, in_w = 1, out_h = 1, out_w = 1, channels = 1;
  std::vector<ResizeTap> h, w;
  bool nearest = true;
};
ResizeTaps resize_taps(const ResizeParams& p, const Dims& in_shape);
ResizeTaps resize_taps(const UpSamplingParams& p, const Dims& in_shape);

}  // namespace nnd
