// Window geometry of convolutions, pooling and transposed convolutions along one spatial axis,
// shared by shape inference and the engines so they agree on output sizes and padding.
//
// All inputs are assumed validated (sizes >= 1 and <= kMaxElements, so products fit in int64_t).
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/ir/layers.h"

namespace nnd {

struct AxisGeometry {
  int64_t out = 0;         // output length; < 1 means the input is too small (valid padding)
  int64_t pad_before = 0;  // implicit padding before the first input element
  int64_t kernel_eff = 1;  // (k - 1) * dilation + 1
};

inline int64_t effective_kernel(int64_t k, int64_t dilation) { return (k - 1) * dilation + 1; }

// Forward convolution / pooling along one axis, with TensorFlow's padding rules:
//   valid:  out = floor((in - k_eff) / s) + 1, no padding
//   same:   out = ceil(in / s); total = max((out - 1) * s + k_eff - in, 0);
//           pad_before = total / 2 (the odd extra goes to the end)
//   causal: pad_before = k_eff - 1, then as valid (so out = ceil(in / s))
//   explicit: the given pads, then as valid over in + before + after
// Callers with a Window use window_h / window_w below.
inline AxisGeometry conv_axis(int64_t in, int64_t k, int64_t stride, int64_t dilation,
                              Padding padding, int64_t explicit_before = 0,
                              int64_t explicit_after = 0) {
  AxisGeometry g;
  g.kernel_eff = effective_kernel(k, dilation);
  switch (padding) {
    case Padding::kValid:
      g.out = in >= g.kernel_eff ? (in - g.kernel_eff) / stride + 1 : 0;
      break;
    case Padding::kSame: {
      g.out = (in + stride - 1) / stride;
      const int64_t total = std::max<int64_t>((g.out - 1) * stride + g.kernel_eff - in, 0);
      g.pad_before = total / 2;
      break;
    }
    case Padding::kCausal:
      g.pad_before = g.kernel_eff - 1;
      g.out = (in - 1) / stride + 1;
      break;
    case Padding::kExplicit: {
      const int64_t padded = in + explicit_before + explicit_after;
      g.pad_before = explicit_before;
      g.out = padded >= g.kernel_eff ? (padded - g.kernel_eff) / stride + 1 : 0;
      break;
    }
  }
  return g;
}

// The geometry of a window's vertical (h) and horizontal (w) axis over an input of that length.
inline AxisGeometry window_h(const Window& win, int64_t in) {
  return conv_axis(in, win.kernel_h, win.stride_h, win.dilation_h, win.padding, win.pad_top,
                   win.pad_bottom);
}
inline AxisGeometry window_w(const Window& win, int64_t in) {
  return conv_axis(in, win.kernel_w, win.stride_w, win.dilation_w, win.padding, win.pad_left,
                   win.pad_right);
}

// Transposed convolution along one axis, as Keras computes it
// (keras.utils.conv_utils.deconv_output_length, then tf.nn.conv2d_transpose):
//   output_padding absent (-1): valid: in * s + max(k_eff - s, 0);  same: in * s
//   output_padding p:           (in - 1) * s + k_eff - 2 * pad + p, pad = same ? k_eff / 2 : 0
// TensorFlow then treats the op as the gradient of a forward convolution whose INPUT has the
// output length: the padding is that forward convolution's (conv_axis(out, ...)), whose output
// length must equal `in` (`forward_out` reports it so callers can reject a mismatch). Input
// element i contributes to output position i * s - pad_before + kk * dilation for kernel tap kk.
// Explicit padding (ONNX ConvTranspose `pads`) uses the same placement with the given pads:
//   out = (in - 1) * s + k_eff - before - after + max(output_padding, 0), pad_before = before.
struct TransposeAxisGeometry {
  int64_t out = 0;
  int64_t pad_before = 0;
  int64_t forward_out = 0;  // conv_axis(out).out, must equal the input length
};

inline TransposeAxisGeometry conv_transpose_axis(int64_t in, int64_t k, int64_t stride,
                                                 int64_t dilation, Padding padding,
                                                 int64_t output_padding,
                                                 int64_t explicit_before = 0,
                                                 int64_t explicit_after = 0) {
  TransposeAxisGeometry t;
  const int64_t k_eff = effective_kernel(k, dilation);
  if (padding == Padding::kExplicit) {
    t.out = (in - 1) * stride + k_eff - explicit_before - explicit_after +
            std::max<int64_t>(output_padding, 0);
    t.pad_before = explicit_before;
    t.forward_out = in;
    return t;
  }
  if (output_padding < 0) {
    t.out = padding == Padding::kSame ? in * stride : in * stride + std::max<int64_t>(k_eff - stride, 0);
  } else {
    const int64_t pad = padding == Padding::kSame ? k_eff / 2 : 0;
    t.out = (in - 1) * stride + k_eff - 2 * pad + output_padding;
  }
  if (t.out >= 1) {
    const AxisGeometry f = conv_axis(t.out, k, stride, dilation, padding);
    t.pad_before = f.pad_before;
    t.forward_out = f.out;
  }
  return t;
}

// conv_transpose_axis for a Window's h and w axes with their output_padding (-1: none).
inline TransposeAxisGeometry transpose_window_h(const Window& win, int64_t in, int64_t output_padding) {
  return conv_transpose_axis(in, win.kernel_h, win.stride_h, win.dilation_h, win.padding,
                             output_padding, win.pad_top, win.pad_bottom);
}
inline TransposeAxisGeometry transpose_window_w(const Window& win, int64_t in, int64_t output_padding) {
  return conv_transpose_axis(in, win.kernel_w, win.stride_w, win.dilation_w, win.padding,
                             output_padding, win.pad_left, win.pad_right);
}

}  // namespace nnd
