// ONNX Resize and Upsample, as an IR UpSampling where they are one, else an IR Resize.
#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/io/onnx_ops.h"
#include "core/ir/resize.h"
#include "core/util/error.h"

namespace nnd::onnx_import {
namespace {

// Resize (opset 10+) and Upsample (7-9). Whole-number enlargements that repeat pixels, or
// interpolate half-pixel bilinearly, become UpSampling; every other size and coordinate map a
// Resize layer (core/ir/resize.h). Upsample and Resize-10 know only the asymmetric map.
void lower_resize(Importer& im, const Node_& node, Attributes& a) {
  const bool upsample = node.op_type() == "Upsample";
  const bool v10 = upsample || im.opset() < 11;
  const std::string mode = a.s("mode", "nearest");
  const std::string coord = v10 ? "asymmetric" : a.s("coordinate_transformation_mode", "half_pixel");
  const std::string nearest_mode = v10 ? "" : a.s("nearest_mode", "round_prefer_floor");
  a.ignore("cubic_coeff_a");
  a.ignore("exclude_outside");
  a.ignore("extrapolation_value");
  if (a.i("antialias", 0)) im.fail(ErrorCode::kUnsupported, "antialias is not supported");
  if (a.has("axes")) im.fail(ErrorCode::kUnsupported, "attribute 'axes' is not supported");
  if (a.s("keep_aspect_ratio_policy", "stretch") != "stretch") im.fail(ErrorCode::kUnsupported, "keep_aspect_ratio_policy is not supported");
  static const std::map<std::string, ResizeCoordinates> coordinate_maps = {
      {"half_pixel", ResizeCoordinates::kHalfPixel},
      {"pytorch_half_pixel", ResizeCoordinates::kPytorchHalfPixel},
      {"align_corners", ResizeCoordinates::kAlignCorners},
      {"asymmetric", ResizeCoordinates::kAsymmetric},
      {"tf_half_pixel_for_nn", ResizeCoordinates::kTfHalfPixelForNn}};
  const auto cm = coordinate_maps.find(coord);
  if (cm == coordinate_maps.end()) im.fail(ErrorCode::kUnsupported, "coordinate_transformation_mode '" + coord + "' is not supported");
  static const std::map<std::string, NearestRounding> roundings = {
      {"round_prefer_floor", NearestRounding::kRoundPreferFloor},
      {"round_prefer_ceil", NearestRounding::kRoundPreferCeil},
      {"floor", NearestRounding::kFloor},
      {"ceil", NearestRounding::kCeil}};
  Symbol& x = im.dynamic_input(node, 0);
  check_conv_rank(im, x);
  const size_t r = x.rank();
  // Per spatial axis: the output length, and the scale the coordinate map uses (0 when the file
  // gives sizes: output / input).
  std::vector<double> scales;
  std::vector<int64_t> sizes;
  if (auto s = a.floats("scales")) {
    scales = *s;
  } else {
    const int scales_input = v10 ? 1 : 2;  // Upsample and Resize-10: (X, scales); later (X, roi, scales, sizes)
    if (im.has_input(node, scales_input) && im.const_input(node, scales_input, "scales").size() > 0) {
      const Constant& c = im.const_input(node, scales_input, "scales");
      for (int64_t i = 0; i < c.size(); ++i) scales.push_back(c.real_at(i));
    } else if (!v10 && im.has_input(node, 3)) {
      sizes = im.const_input(node, 3, "sizes").as_ints(im.context() + ": sizes");
      if (sizes.size() != r) im.fail("sizes " + list_text(sizes) + " do not match rank " + std::to_string(r));
      if (sizes[1] != x.dims[1]) im.fail(ErrorCode::kUnsupported, "resizing the channel axis is not supported");
      // The batch entry is the batch size itself (computed by Shape) or the batch the file declares.
      if (sizes[0] != kBatchMarker && (im.declared_batch() <= 0 || sizes[0] != im.declared_batch())) {
        im.fail(ErrorCode::kUnsupported, "sizes " + list_text(sizes) + " resize the batch axis; not supported");
      }
    } else {
      im.fail("neither scales nor sizes are given");
    }
  }
  std::vector<int64_t> out(r - 2);
  std::vector<double> axis_scale(r - 2, 0.0);
  if (sizes.empty()) {
    if (scales.size() != r) im.fail("scales do not match rank " + std::to_string(r));
    if (scales[1] != 1.0) im.fail(ErrorCode::kUnsupported, "resizing the channel axis is not supported");
    for (size_t k = 2; k < r; ++k) {
      const double s = scales[k];
      if (!(s > 0.0 && s <= 4096.0)) im.fail("scale " + num(s) + " is not in (0, 4096]");
      axis_scale[k - 2] = s;
      out[k - 2] = static_cast<int64_t>(std::floor(static_cast<double>(x.dims[k]) * s));
    }
  } else {
    for (size_t k = 2; k < r; ++k) out[k - 2] = sizes[k];
  }
  for (size_t k = 2; k < r; ++k) {
    if (out[k - 2] < 1 || out[k - 2] > 4096 * x.dims[k]) {
      im.fail(ErrorCode::kUnsupported, "output length " + std::to_string(out[k - 2]) + " of axis " + std::to_string(k) + " (input " +
              std::to_string(x.dims[k]) + ") is not supported");
    }
  }
  ResizeParams p;
  p.rank = static_cast<int>(r) - 2;
  p.out_w = out.back();
  p.scale_w = axis_scale.back();
  if (p.rank == 2) p.out_h = out[0], p.scale_h = axis_scale[0];
  p.coordinates = cm->second;
  if (mode == "nearest") {
    p.interpolation = Interpolation::kNearest;
    if (v10) {
      // ONNX Runtime's rounding before opset 11: floor when enlarging, ceil when shrinking.
      const bool shrinking = p.out_w < x.dims[r - 1] || (p.rank == 2 && p.out_h < x.dims[2]);
      p.rounding = shrinking ? NearestRounding::kCeil : NearestRounding::kFloor;
    } else {
      const auto rm = roundings.find(nearest_mode);
      if (rm == roundings.end()) im.fail(ErrorCode::kUnsupported, "nearest_mode '" + nearest_mode + "' is not supported");
      p.rounding = rm->second;
    }
  } else if (mode == "linear" || mode == "bilinear") {
    p.interpolation = Interpolation::kBilinear;
  } else {
    im.fail(ErrorCode::kUnsupported, "mode '" + mode + "' is not supported (nearest and linear are)");
  }
  const Perm perm = channels_last_perm(r);
  const ValueId in = im.in_layout(x, perm);
  // The same resize as an UpSampling layer where it is one: a whole-number factor per axis whose
  // taps are those UpSampling's map gives (checked, not assumed: the rounding modes and
  // coordinate maps that agree with a pixel repeat differ between nearest and linear).
  UpSamplingParams u;
  u.rank = p.rank;
  u.interpolation = p.interpolation;
  bool whole = u.interpolation == Interpolation::kNearest || p.rank == 2;
  for (size_t k = 2; k < r && whole; ++k) {
    whole = out[k - 2] % x.dims[k] == 0;
    if (whole) (p.rank == 2 && k == 2 ? u.size_h : u.size_w) = out[k - 2] / x.dims[k];
  }
  if (whole) {
    const Dims ir_in = im.ir_shape(in);
    const ResizeTaps want = resize_taps(p, ir_in), have = resize_taps(u, ir_in);
    auto same = [](const std::vector<ResizeTap>& l, const std::vector<ResizeTap>& m) {
      for (size_t i = 0; i < l.size(); ++i) {
        if (l[i].lo != m[i].lo || l[i].hi != m[i].hi || std::fabs(l[i].t - m[i].t) > 1e-12) return false;
      }
      return l.size() == m.size();
    };
    if (same(want.h, have.h) && same(want.w, have.w)) {
      im.emit(node, 0, u, {in}, perm);
      return;
    }
  }
  im.emit(node, 0, p, {in}, perm);
}

}  // namespace

void add_resize_lowerings(LoweringTable& t) {
  t.add("Resize", lower_resize);
  t.add("Upsample", lower_resize);
}

}  // namespace nnd::onnx_import
