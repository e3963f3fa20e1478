#include "core/ir/resize.h"

#include <algorithm>
#include <cmath>

namespace nnd {
namespace {

// ONNX Resize's coordinate_transformation_mode: the input coordinate output element x reads.
double input_coordinate(double x, int64_t n_in, int64_t n_out, double scale, ResizeCoordinates c) {
  const double in = static_cast<double>(n_in), out = static_cast<double>(n_out);
  switch (c) {
    case ResizeCoordinates::kHalfPixel: return (x + 0.5) / scale - 0.5;
    case ResizeCoordinates::kPytorchHalfPixel: return n_out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
    case ResizeCoordinates::kAlignCorners: return n_out > 1 ? x * (in - 1.0) / (out - 1.0) : 0.0;
    case ResizeCoordinates::kAsymmetric: return x / scale;
    case ResizeCoordinates::kTfHalfPixelForNn: return (x + 0.5) / scale;
  }
  return 0.0;
}

int64_t nearest_index(double s, NearestRounding r) {
  switch (r) {
    case NearestRounding::kFloor: return static_cast<int64_t>(std::floor(s));
    case NearestRounding::kCeil: return static_cast<int64_t>(std::ceil(s));
    case NearestRounding::kRoundPreferFloor:
      return static_cast<int64_t>(s - std::floor(s) == 0.5 ? std::floor(s) : std::round(s));
    case NearestRounding::kRoundPreferCeil:
      return static_cast<int64_t>(s - std::floor(s) == 0.5 ? std::ceil(s) : std::round(s));
  }
  return 0;
}

}  // namespace

std::vector<ResizeTap> resize_axis_taps(int64_t n_in, int64_t n_out, double scale, ResizeCoordinates coordinates,
                                        Interpolation interpolation, NearestRounding rounding) {
  if (scale <= 0) scale = static_cast<double>(n_out) / static_cast<double>(n_in);
  std::vector<ResizeTap> taps(static_cast<size_t>(n_out));
  const double last = static_cast<double>(n_in - 1);
  for (int64_t i = 0; i < n_out; ++i) {
    double s = input_coordinate(static_cast<double>(i), n_in, n_out, scale, coordinates);
    if (std::isnan(s)) s = 0.0;  // unreachable with the scales shape inference admits
    ResizeTap& t = taps[static_cast<size_t>(i)];
    if (interpolation == Interpolation::kNearest) {
      // Clamped after rounding, as ONNX Runtime does.
      const double r = static_cast<double>(nearest_index(std::clamp(s, -1.0, last + 1.0), rounding));
      t.lo = t.hi = static_cast<int64_t>(std::clamp(r, 0.0, last));
    } else {
      const double c = std::clamp(s, 0.0, last);
      t.lo = static_cast<int64_t>(std::floor(c));
      t.hi = std::min<int64_t>(t.lo + 1, n_in - 1);
      t.t = c - static_cast<double>(t.lo);
    }
  }
  return taps;
}

namespace {

ResizeTaps spatial(int rank, const Dims& in_shape) {
  ResizeTaps r;
  r.in_h = rank == 2 ? in_shape[0] : 1;
  r.in_w = in_shape[rank == 2 ? 1 : 0];
  r.channels = in_shape.back();
  r.h = {ResizeTap{}};
  return r;
}

}  // namespace

ResizeTaps resize_taps(const ResizeParams& p, const Dims& in_shape) {
  ResizeTaps r = spatial(p.rank, in_shape);
  r.nearest = p.interpolation == Interpolation::kNearest;
  r.out_h = p.rank == 2 ? p.out_h : 1;
  r.out_w = p.out_w;
  if (p.rank == 2) {
    r.h = resize_axis_taps(r.in_h, r.out_h, p.scale_h, p.coordinates, p.interpolation, p.rounding);
  }
  r.w = resize_axis_taps(r.in_w, r.out_w, p.scale_w, p.coordinates, p.interpolation, p.rounding);
  return r;
}

ResizeTaps resize_taps(const UpSamplingParams& p, const Dims& in_shape) {
  // Nearest is a whole-number repeat: floor(x / size). Bilinear is TF2's half-pixel map.
  ResizeParams q;
  q.rank = p.rank;
  q.scale_h = static_cast<double>(p.size_h);
  q.scale_w = static_cast<double>(p.size_w);
  q.out_h = p.rank == 2 ? in_shape[0] * p.size_h : 1;
  q.out_w = in_shape[p.rank == 2 ? 1 : 0] * p.size_w;
  q.interpolation = p.interpolation;
  q.coordinates = p.interpolation == Interpolation::kNearest ? ResizeCoordinates::kAsymmetric : ResizeCoordinates::kHalfPixel;
  q.rounding = NearestRounding::kFloor;
  return resize_taps(q, in_shape);
}

}  // namespace nnd
