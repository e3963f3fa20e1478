// Data-movement layers: Flatten/Reshape/identity, Permute, RepeatVector, ZeroPadding, Cropping,
// Concatenate.
#include <algorithm>
#include <vector>

#include "core/ref/ref_ops.h"

namespace nnd::ref {

Tensor reshape_copy(const Tensor& x, const Dims& out_shape) {
  Tensor y = x;
  y.shape = out_shape;
  return y;
}

// Output axis i is input axis dims[i] - 1.
Tensor permute(const PermuteParams& p, const Tensor& x, const Dims& out_shape) {
  Tensor y(out_shape, x.batch);
  const size_t rank = x.shape.size();
  std::vector<int64_t> in_stride(rank, 1);
  for (size_t a = rank - 1; a-- > 0;) in_stride[a] = in_stride[a + 1] * x.shape[a + 1];
  std::vector<int64_t> map(static_cast<size_t>(y.sample_size));
  for (int64_t i = 0; i < y.sample_size; ++i) {
    int64_t rem = i, src = 0;
    for (size_t a = rank; a-- > 0;) {
      src += (rem % out_shape[a]) * in_stride[p.dims[a] - 1];
      rem /= out_shape[a];
    }
    map[i] = src;
  }
  for (int64_t n = 0; n < x.batch; ++n) {
    const double* xs = x.sample(n);
    double* ys = y.sample(n);
    for (int64_t i = 0; i < y.sample_size; ++i) ys[i] = xs[map[i]];
  }
  return y;
}

Tensor repeat_vector(const RepeatVectorParams& p, const Tensor& x, const Dims& out_shape) {
  Tensor y(out_shape, x.batch);
  for (int64_t n = 0; n < x.batch; ++n) {
    for (int64_t r = 0; r < p.n; ++r) std::copy(x.sample(n), x.sample(n) + x.sample_size, y.sample(n) + r * x.sample_size);
  }
  return y;
}

namespace {

// Copies the H x W x C input into the output at offset (dh, dw) (negative: cropping).
void place(const Tensor& x, const Hwc& in, const Hwc& out, int64_t dh, int64_t dw, Tensor& y) {
  for (int64_t n = 0; n < x.batch; ++n) {
    const double* xs = x.sample(n);
    double* ys = y.sample(n);
    for (int64_t oh = 0; oh < out.h; ++oh) {
      const int64_t ih = oh - dh;
      if (ih < 0 || ih >= in.h) continue;
      for (int64_t ow = 0; ow < out.w; ++ow) {
        const int64_t iw = ow - dw;
        if (iw < 0 || iw >= in.w) continue;
        std::copy(xs + (ih * in.w + iw) * in.c, xs + (ih * in.w + iw + 1) * in.c, ys + (oh * out.w + ow) * out.c);
      }
    }
  }
}

}  // namespace

Tensor zero_padding(const ZeroPaddingParams& p, const Tensor& x, const Dims& out_shape) {
  Tensor y(out_shape, x.batch);
  place(x, as_hwc(p.rank, x.shape), as_hwc(p.rank, out_shape), p.rank == 2 ? p.top : 0, p.left, y);
  return y;
}

Tensor cropping(const CroppingParams& p, const Tensor& x, const Dims& out_shape) {
  Tensor y(out_shape, x.batch);
  place(x, as_hwc(p.rank, x.shape), as_hwc(p.rank, out_shape), p.rank == 2 ? -p.top : 0, -p.left, y);
  return y;
}

Tensor constant(const ConstantParams& p, const Tensor& x) {
  Tensor y(p.value.shape, x.batch);
  for (int64_t n = 0; n < y.batch; ++n) std::copy(p.value.data.begin(), p.value.data.end(), y.sample(n));
  return y;
}

Tensor gather(const GatherParams& p, const Tensor& x, const Dims& out_shape) {
  Tensor y(out_shape, x.batch);
  const auto axis = static_cast<size_t>(p.axis);
  int64_t outer = 1, inner = 1;
  for (size_t a = 0; a < axis; ++a) outer *= x.shape[a];
  for (size_t a = axis + 1; a < x.shape.size(); ++a) inner *= x.shape[a];
  const int64_t len = x.shape[axis], kept = static_cast<int64_t>(p.indices.size());
  for (int64_t n = 0; n < x.batch; ++n) {
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < kept; ++i) {
        const double* from = x.sample(n) + (o * len + p.indices[static_cast<size_t>(i)]) * inner;
        std::copy(from, from + inner, y.sample(n) + (o * kept + i) * inner);
      }
    }
  }
  return y;
}

Tensor concat(const ConcatParams& p, const std::vector<const Tensor*>& xs, const Dims& out_shape) {
  Tensor y(out_shape, xs[0]->batch);
  int64_t inner = 1;
  for (size_t a = p.axis + 1; a < out_shape.size(); ++a) inner *= out_shape[a];
  int64_t outer = 1;
  for (int a = 0; a < p.axis; ++a) outer *= out_shape[a];
  const int64_t out_chunk = out_shape[p.axis] * inner;
  for (int64_t n = 0; n < y.batch; ++n) {
    double* ys = y.sample(n);
    int64_t offset = 0;
    for (const Tensor* x : xs) {
      const int64_t chunk = x->shape[p.axis] * inner;
      const double* s = x->sample(n);
      for (int64_t o = 0; o < outer; ++o) std::copy(s + o * chunk, s + (o + 1) * chunk, ys + o * out_chunk + offset);
      offset += chunk;
    }
  }
  return y;
}

}  // namespace nnd::ref
