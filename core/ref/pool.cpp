// Pooling, global pooling, up-sampling and resizing.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/ir/conv_geometry.h"
#include "core/ir/resize.h"
#include "core/ref/ref_ops.h"

namespace nnd::ref {

// Max pooling ignores padded positions; average pooling divides by the number of real (not
// padded) positions in the window, as TensorFlow does.
Tensor pool(const PoolParams& p, const Tensor& x, const Dims& out_shape) {
  Tensor y(out_shape, x.batch);
  const Hwc in = as_hwc(p.rank, x.shape), out = as_hwc(p.rank, out_shape);
  const Window& win = p.window;
  const AxisGeometry gh = window_h(win, in.h);  // pooling windows have dilation 1
  const AxisGeometry gw = window_w(win, in.w);
  std::vector<double> acc(static_cast<size_t>(in.c));
  for (int64_t n = 0; n < x.batch; ++n) {
    const double* xs = x.sample(n);
    double* ys = y.sample(n);
    for (int64_t oh = 0; oh < out.h; ++oh) {
      for (int64_t ow = 0; ow < out.w; ++ow) {
        const int64_t h0 = std::max<int64_t>(oh * win.stride_h - gh.pad_before, 0);
        const int64_t h1 = std::min<int64_t>(oh * win.stride_h - gh.pad_before + win.kernel_h, in.h);
        const int64_t w0 = std::max<int64_t>(ow * win.stride_w - gw.pad_before, 0);
        const int64_t w1 = std::min<int64_t>(ow * win.stride_w - gw.pad_before + win.kernel_w, in.w);
        const bool is_max = p.kind == PoolKind::kMax;
        std::fill(acc.begin(), acc.end(), is_max ? -std::numeric_limits<double>::infinity() : 0.0);
        for (int64_t ih = h0; ih < h1; ++ih) {
          for (int64_t iw = w0; iw < w1; ++iw) {
            const double* xp = xs + (ih * in.w + iw) * in.c;
            for (int64_t c = 0; c < in.c; ++c) acc[c] = is_max ? std::max(acc[c], xp[c]) : acc[c] + xp[c];
          }
        }
        const int64_t count = std::max<int64_t>(h1 - h0, 0) * std::max<int64_t>(w1 - w0, 0);
        double* yp = ys + (oh * out.w + ow) * out.c;
        for (int64_t c = 0; c < in.c; ++c) {
          // count == 0 cannot happen with TensorFlow's padding; guard anyway.
          yp[c] = count == 0 ? 0.0 : (is_max ? acc[c] : acc[c] / static_cast<double>(count));
        }
      }
    }
  }
  return y;
}

Tensor global_pool(const GlobalPoolParams& p, const Tensor& x, const Dims& out_shape) {
  Tensor y(out_shape, x.batch);
  const int64_t c = x.shape.back();
  const int64_t positions = x.sample_size / c;
  for (int64_t n = 0; n < x.batch; ++n) {
    const double* xs = x.sample(n);
    double* ys = y.sample(n);
    for (int64_t k = 0; k < c; ++k) {
      double acc = p.kind == PoolKind::kMax ? -std::numeric_limits<double>::infinity() : 0.0;
      for (int64_t i = 0; i < positions; ++i) {
        acc = p.kind == PoolKind::kMax ? std::max(acc, xs[i * c + k]) : acc + xs[i * c + k];
      }
      ys[k] = p.kind == PoolKind::kMax ? acc : acc / static_cast<double>(positions);
    }
  }
  return y;
}

namespace {

// tf.image.resize bilinear with half_pixel_centers=True (TF2 / Keras 3 UpSampling2D), from
// TensorFlow's compute_interpolation_weights: src = (dst + 0.5) * (in / out) - 0.5,
// lower = max(floor(src), 0), upper = min(ceil(src), in - 1), lerp = src - floor(src).
struct Lerp {
  int64_t lo, hi;
  double t;
};

std::vector<Lerp> bilinear_weights(int64_t in, int64_t out) {
  std::vector<Lerp> v(static_cast<size_t>(out));
  const double scale = static_cast<double>(in) / static_cast<double>(out);
  for (int64_t i = 0; i < out; ++i) {
    const double src = (static_cast<double>(i) + 0.5) * scale - 0.5;
    const double f = std::floor(src);
    v[i].lo = std::max<int64_t>(static_cast<int64_t>(f), 0);
    v[i].hi = std::min<int64_t>(static_cast<int64_t>(std::ceil(src)), in - 1);
    v[i].t = src - f;
  }
  return v;
}

}  // namespace

Tensor upsampling(const UpSamplingParams& p, const Tensor& x, const Dims& out_shape) {
  Tensor y(out_shape, x.batch);
  const Hwc in = as_hwc(p.rank, x.shape), out = as_hwc(p.rank, out_shape);
  const int64_t c = in.c;
  if (p.interpolation == Interpolation::kNearest) {
    for (int64_t n = 0; n < x.batch; ++n) {
      const double* xs = x.sample(n);
      double* ys = y.sample(n);
      for (int64_t oh = 0; oh < out.h; ++oh) {
        for (int64_t ow = 0; ow < out.w; ++ow) {
          const double* xp = xs + ((oh / p.size_h) * in.w + ow / p.size_w) * c;
          std::copy(xp, xp + c, ys + (oh * out.w + ow) * c);
        }
      }
    }
    return y;
  }
  const std::vector<Lerp> wh = bilinear_weights(in.h, out.h), ww = bilinear_weights(in.w, out.w);
  for (int64_t n = 0; n < x.batch; ++n) {
    const double* xs = x.sample(n);
    double* ys = y.sample(n);
    for (int64_t oh = 0; oh < out.h; ++oh) {
      const Lerp& a = wh[oh];
      for (int64_t ow = 0; ow < out.w; ++ow) {
        const Lerp& b = ww[ow];
        const double* tl = xs + (a.lo * in.w + b.lo) * c;
        const double* tr = xs + (a.lo * in.w + b.hi) * c;
        const double* bl = xs + (a.hi * in.w + b.lo) * c;
        const double* br = xs + (a.hi * in.w + b.hi) * c;
        double* yp = ys + (oh * out.w + ow) * c;
        for (int64_t k = 0; k < c; ++k) {
          const double top = tl[k] + (tr[k] - tl[k]) * b.t;
          const double bottom = bl[k] + (br[k] - bl[k]) * b.t;
          yp[k] = top + (bottom - top) * a.t;
        }
      }
    }
  }
  return y;
}

// Each output element from the (up to) four input elements its taps name, interpolated along the
// width, then along the height.
Tensor resize(const ResizeParams& p, const Tensor& x, const Dims& out_shape) {
  Tensor y(out_shape, x.batch);
  const ResizeTaps r = resize_taps(p, x.shape);
  const int64_t c = r.channels;
  for (int64_t n = 0; n < x.batch; ++n) {
    const double* xs = x.sample(n);
    double* ys = y.sample(n);
    for (int64_t oh = 0; oh < r.out_h; ++oh) {
      const ResizeTap& a = r.h[static_cast<size_t>(oh)];
      for (int64_t ow = 0; ow < r.out_w; ++ow) {
        const ResizeTap& b = r.w[static_cast<size_t>(ow)];
        const double* tl = xs + (a.lo * r.in_w + b.lo) * c;
        const double* tr = xs + (a.lo * r.in_w + b.hi) * c;
        const double* bl = xs + (a.hi * r.in_w + b.lo) * c;
        const double* br = xs + (a.hi * r.in_w + b.hi) * c;
        double* yp = ys + (oh * r.out_w + ow) * c;
        if (r.nearest) {  // a copy, also of infinities
          std::copy(tl, tl + c, yp);
          continue;
        }
        for (int64_t k = 0; k < c; ++k) {
          const double top = tl[k] + (tr[k] - tl[k]) * b.t;
          const double bottom = bl[k] + (br[k] - bl[k]) * b.t;
          yp[k] = top + (bottom - top) * a.t;
        }
      }
    }
  }
  return y;
}

}  // namespace nnd::ref
