// Quantized layers of the reference engine: exact integer arithmetic through core/ir/quant (the
// definitions in docs/int8.md). Integer tensors are held as doubles with integer values (every
// int8, uint8 and int32 is exact in a double); float tensors entering Quantize are rounded to
// float32 first, as the IR's float32 tensors are.
#include <cstdint>
#include <vector>

#include "core/ir/conv_geometry.h"
#include "core/ir/quant/requantize.h"
#include "core/ref/ref_ops.h"
#include "core/util/error.h"

namespace nnd::ref {

namespace {

// Index along per-sample axis `axis` of element k of a sample of shape s.
int64_t axis_index(const Dims& s, int axis, int64_t k) {
  int64_t inner = 1;
  for (size_t d = static_cast<size_t>(axis) + 1; d < s.size(); ++d) inner *= s[d];
  return (k / inner) % s[static_cast<size_t>(axis)];
}

// The output stage of an integer layer for output channel c: requantization, or the accumulator.
class OutputStage {
 public:
  OutputStage(const quant::QuantParams& x, const quant::QuantParams& w, const IntegerOutput& out, int64_t channels) {
    raw_ = out.output.type == quant::QuantType::kInt32;
    if (!raw_) requant_ = quant::make_requantizer(x, w, out.output, static_cast<size_t>(channels), "reference engine", out.act_lo, out.act_hi);
  }
  double operator()(int64_t acc, int64_t c) const {
    // Shape inference proved |acc| <= 2^31 - 1 (quant::check_accumulator); int64 only holds it.
    const auto a = static_cast<int32_t>(acc);
    return raw_ ? static_cast<double>(a) : static_cast<double>(requant_(a, static_cast<size_t>(c)));
  }

 private:
  bool raw_ = true;
  quant::Requantizer requant_;
};

}  // namespace

Tensor quantize(const QuantizeParams& p, const Tensor& x) {
  Tensor y(x.shape, x.batch);
  const float s = p.output.scale(0);
  const int32_t z = p.output.zero_point(0);
  for (size_t k = 0; k < x.data.size(); ++k) {
    y.data[k] = static_cast<double>(quant::quantize(static_cast<float>(x.data[k]), s, z, p.output.type));
  }
  return y;
}

Tensor dequantize(const DequantizeParams& p, const Tensor& x) {
  Tensor y(x.shape, x.batch);
  for (int64_t n = 0; n < x.batch; ++n) {
    const double* xs = x.sample(n);
    double* ys = y.sample(n);
    for (int64_t k = 0; k < x.sample_size; ++k) {
      const auto c = static_cast<size_t>(p.input.per_channel() ? axis_index(x.shape, p.input.axis, k) : 0);
      ys[k] = static_cast<double>(quant::dequantize(static_cast<int64_t>(xs[k]), p.input.scale(c), p.input.zero_point(c)));
    }
  }
  return y;
}

Tensor qconv(const QConvParams& p, const Tensor& x, const Dims& out_shape) {
  Tensor y(out_shape, x.batch);
  const Hwc in = as_hwc(p.rank, x.shape), out = as_hwc(p.rank, out_shape);
  const Window& win = p.window;
  const AxisGeometry gh = window_h(win, in.h), gw = window_w(win, in.w);
  const int64_t cin_g = in.c / p.groups, f_g = p.filters / p.groups;
  const int64_t x_zp = p.input.zero_point(0);
  const OutputStage stage(p.input, p.weights, p.out, p.filters);
  for (int64_t n = 0; n < x.batch; ++n) {
    const double* xs = x.sample(n);
    double* ys = y.sample(n);
    for (int64_t oh = 0; oh < out.h; ++oh) {
      for (int64_t ow = 0; ow < out.w; ++ow) {
        for (int64_t f = 0; f < p.filters; ++f) {
          const int64_t g = f / f_g;
          const int64_t w_zp = p.weights.zero_point(static_cast<size_t>(f));
          int64_t acc = p.bias.empty() ? 0 : p.bias[static_cast<size_t>(f)];
          for (int64_t kh = 0; kh < win.kernel_h; ++kh) {
            const int64_t ih = oh * win.stride_h - gh.pad_before + kh * win.dilation_h;
            if (ih < 0 || ih >= in.h) continue;  // padding holds x_zp: (x - x_zp) = 0
            for (int64_t kw = 0; kw < win.kernel_w; ++kw) {
              const int64_t iw = ow * win.stride_w - gw.pad_before + kw * win.dilation_w;
              if (iw < 0 || iw >= in.w) continue;
              const double* xp = xs + (ih * in.w + iw) * in.c + g * cin_g;
              const int32_t* kp = p.kernel.data.data() + ((kh * win.kernel_w + kw) * cin_g) * p.filters + f;
              for (int64_t c = 0; c < cin_g; ++c) {
                acc += (static_cast<int64_t>(xp[c]) - x_zp) * (static_cast<int64_t>(kp[c * p.filters]) - w_zp);
              }
            }
          }
          ys[(oh * out.w + ow) * p.filters + f] = stage(acc, f);
        }
      }
    }
  }
  return y;
}

Tensor qdense(const QDenseParams& p, const Tensor& x, const Dims& out_shape) {
  Tensor y(out_shape, x.batch);
  const int64_t in = x.shape.back(), units = p.units;
  const int64_t rows = x.batch * (x.sample_size / in);
  const int64_t x_zp = p.input.zero_point(0);
  const OutputStage stage(p.input, p.weights, p.out, units);
  for (int64_t r = 0; r < rows; ++r) {
    const double* xp = x.data.data() + r * in;
    double* yp = y.data.data() + r * units;
    for (int64_t u = 0; u < units; ++u) {
      const int64_t w_zp = p.weights.zero_point(static_cast<size_t>(u));
      int64_t acc = p.bias.empty() ? 0 : p.bias[static_cast<size_t>(u)];
      for (int64_t i = 0; i < in; ++i) {
        acc += (static_cast<int64_t>(xp[i]) - x_zp) * (static_cast<int64_t>(p.kernel.data[static_cast<size_t>(i * units + u)]) - w_zp);
      }
      yp[u] = stage(acc, u);
    }
  }
  return y;
}

}  // namespace nnd::ref
