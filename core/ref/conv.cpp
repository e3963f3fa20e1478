// Dense and convolution layers of the reference engine. Rank-1 layers run as rank-2 layers with
// H = 1 (shape inference has canonicalised their kernels to 4-D with kernel_h = 1).
#include <algorithm>
#include <vector>

#include "core/ir/conv_geometry.h"
#include "core/ref/ref_ops.h"

namespace nnd::ref {

Tensor::Tensor(Dims s, int64_t n) : shape(std::move(s)), batch(n) {
  sample_size = 1;
  for (int64_t d : shape) sample_size *= d;  // sizes were checked by shape inference / run()
  data.assign(static_cast<size_t>(batch * sample_size), 0.0);
}

Hwc as_hwc(int rank, const Dims& s) {
  if (rank == 1) return {1, s[0], s[1]};
  return {s[0], s[1], s[2]};
}

namespace {

double bias_at(const Weights& b, int64_t i) { return b.empty() ? 0.0 : static_cast<double>(b.data[i]); }

// Geometry of a forward window over an H x W input.
struct Geo {
  AxisGeometry h, w;
};

Geo geometry(const Window& win, const Hwc& in) {
  return {window_h(win, in.h), window_w(win, in.w)};
}

// Depthwise part shared by DepthwiseConv and SeparableConv: out channel c * dm + m.
void depthwise_sample(const Window& win, const Weights& kernel, int64_t dm, const Hwc& in,
                      const Hwc& out, const Geo& geo, const double* x, double* y) {
  for (int64_t oh = 0; oh < out.h; ++oh) {
    for (int64_t ow = 0; ow < out.w; ++ow) {
      double* yp = y + (oh * out.w + ow) * out.c;
      for (int64_t kh = 0; kh < win.kernel_h; ++kh) {
        const int64_t ih = oh * win.stride_h - geo.h.pad_before + kh * win.dilation_h;
        if (ih < 0 || ih >= in.h) continue;
        for (int64_t kw = 0; kw < win.kernel_w; ++kw) {
          const int64_t iw = ow * win.stride_w - geo.w.pad_before + kw * win.dilation_w;
          if (iw < 0 || iw >= in.w) continue;
          const double* xp = x + (ih * in.w + iw) * in.c;
          const float* kp = kernel.data.data() + (kh * win.kernel_w + kw) * in.c * dm;
          for (int64_t c = 0; c < in.c; ++c) {
            for (int64_t m = 0; m < dm; ++m) yp[c * dm + m] += xp[c] * static_cast<double>(kp[c * dm + m]);
          }
        }
      }
    }
  }
}

}  // namespace

Tensor dense(const DenseParams& p, const Tensor& x, const Dims& out_shape) {
  Tensor y(out_shape, x.batch);
  const int64_t in = x.shape.back(), units = p.units;
  const int64_t rows = x.batch * (x.sample_size / in);
  for (int64_t r = 0; r < rows; ++r) {
    const double* xp = x.data.data() + r * in;
    double* yp = y.data.data() + r * units;
    for (int64_t u = 0; u < units; ++u) {
      double acc = bias_at(p.bias, u);
      for (int64_t i = 0; i < in; ++i) acc += xp[i] * static_cast<double>(p.kernel.data[i * units + u]);
      yp[u] = acc;
    }
  }
  apply_activation(p.activation, y);
  return y;
}

Tensor conv(const ConvParams& p, const Tensor& x, const Dims& out_shape) {
  Tensor y(out_shape, x.batch);
  const Hwc in = as_hwc(p.rank, x.shape), out = as_hwc(p.rank, out_shape);
  const Window& win = p.window;
  const Geo geo = geometry(win, in);
  const int64_t cin_g = in.c / p.groups, cout_g = p.filters / p.groups;
  for (int64_t n = 0; n < x.batch; ++n) {
    const double* xs = x.sample(n);
    double* ys = y.sample(n);
    for (int64_t oh = 0; oh < out.h; ++oh) {
      for (int64_t ow = 0; ow < out.w; ++ow) {
        for (int64_t f = 0; f < p.filters; ++f) {
          const int64_t g = f / cout_g;
          double acc = bias_at(p.bias, f);
          for (int64_t kh = 0; kh < win.kernel_h; ++kh) {
            const int64_t ih = oh * win.stride_h - geo.h.pad_before + kh * win.dilation_h;
            if (ih < 0 || ih >= in.h) continue;
            for (int64_t kw = 0; kw < win.kernel_w; ++kw) {
              const int64_t iw = ow * win.stride_w - geo.w.pad_before + kw * win.dilation_w;
              if (iw < 0 || iw >= in.w) continue;
              const double* xp = xs + (ih * in.w + iw) * in.c + g * cin_g;
              const float* kp = p.kernel.data.data() + (kh * win.kernel_w + kw) * cin_g * p.filters;
              for (int64_t c = 0; c < cin_g; ++c) acc += xp[c] * static_cast<double>(kp[c * p.filters + f]);
            }
          }
          ys[(oh * out.w + ow) * out.c + f] = acc;
        }
      }
    }
  }
  apply_activation(p.activation, y);
  return y;
}

Tensor depthwise_conv(const DepthwiseConvParams& p, const Tensor& x, const Dims& out_shape) {
  Tensor y(out_shape, x.batch);
  const Hwc in = as_hwc(p.rank, x.shape), out = as_hwc(p.rank, out_shape);
  const Geo geo = geometry(p.window, in);
  for (int64_t n = 0; n < x.batch; ++n) {
    double* ys = y.sample(n);
    depthwise_sample(p.window, p.kernel, p.depth_multiplier, in, out, geo, x.sample(n), ys);
    if (!p.bias.empty()) {
      for (int64_t i = 0; i < y.sample_size; ++i) ys[i] += static_cast<double>(p.bias.data[i % out.c]);
    }
  }
  apply_activation(p.activation, y);
  return y;
}

Tensor separable_conv(const SeparableConvParams& p, const Tensor& x, const Dims& out_shape) {
  Tensor y(out_shape, x.batch);
  const Hwc in = as_hwc(p.rank, x.shape), out = as_hwc(p.rank, out_shape);
  const Hwc mid{out.h, out.w, in.c * p.depth_multiplier};
  const Geo geo = geometry(p.window, in);
  std::vector<double> tmp(static_cast<size_t>(mid.h * mid.w * mid.c));
  for (int64_t n = 0; n < x.batch; ++n) {
    std::fill(tmp.begin(), tmp.end(), 0.0);
    depthwise_sample(p.window, p.depthwise_kernel, p.depth_multiplier, in, mid, geo, x.sample(n), tmp.data());
    double* ys = y.sample(n);
    for (int64_t pos = 0; pos < out.h * out.w; ++pos) {
      const double* tp = tmp.data() + pos * mid.c;
      for (int64_t f = 0; f < p.filters; ++f) {
        double acc = bias_at(p.bias, f);
        for (int64_t j = 0; j < mid.c; ++j) {
          acc += tp[j] * static_cast<double>(p.pointwise_kernel.data[j * p.filters + f]);
        }
        ys[pos * out.c + f] = acc;
      }
    }
  }
  apply_activation(p.activation, y);
  return y;
}

// TensorFlow's conv2d_transpose is the input-gradient of a forward convolution from the output
// (length `out`) to the input (length `in`) with the same kernel, stride, dilation and padding:
// input position i, kernel tap k feed output position i * s - pad_before + k * d, where
// pad_before is the forward convolution's TensorFlow padding over the output length
// (conv_transpose_axis). Kernel (kh, kw, filters, Cin); positions outside the output are dropped.
Tensor conv_transpose(const ConvTransposeParams& p, const Tensor& x, const Dims& out_shape) {
  Tensor y(out_shape, x.batch);
  const Hwc in = as_hwc(p.rank, x.shape), out = as_hwc(p.rank, out_shape);
  const Window& win = p.window;
  const auto th = transpose_window_h(win, in.h, p.rank == 1 ? -1 : p.output_padding_h);
  const auto tw = transpose_window_w(win, in.w, p.output_padding_w);
  const int64_t filters = p.filters;
  for (int64_t n = 0; n < x.batch; ++n) {
    const double* xs = x.sample(n);
    double* ys = y.sample(n);
    for (int64_t ih = 0; ih < in.h; ++ih) {
      for (int64_t iw = 0; iw < in.w; ++iw) {
        const double* xp = xs + (ih * in.w + iw) * in.c;
        for (int64_t kh = 0; kh < win.kernel_h; ++kh) {
          const int64_t oh = ih * win.stride_h - th.pad_before + kh * win.dilation_h;
          if (oh < 0 || oh >= out.h) continue;
          for (int64_t kw = 0; kw < win.kernel_w; ++kw) {
            const int64_t ow = iw * win.stride_w - tw.pad_before + kw * win.dilation_w;
            if (ow < 0 || ow >= out.w) continue;
            double* yp = ys + (oh * out.w + ow) * out.c;
            const float* kp = p.kernel.data.data() + (kh * win.kernel_w + kw) * filters * in.c;
            for (int64_t f = 0; f < filters; ++f) {
              double acc = 0;
              for (int64_t c = 0; c < in.c; ++c) acc += xp[c] * static_cast<double>(kp[f * in.c + c]);
              yp[f] += acc;
            }
          }
        }
      }
    }
    if (!p.bias.empty()) {
      for (int64_t i = 0; i < y.sample_size; ++i) ys[i] += static_cast<double>(p.bias.data[i % filters]);
    }
  }
  apply_activation(p.activation, y);
  return y;
}

}  // namespace nnd::ref
