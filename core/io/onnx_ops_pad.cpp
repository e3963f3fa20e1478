// ONNX Pad in every mode (constant, reflect, edge, wrap).
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/io/onnx_ops.h"
#include "core/util/error.h"

namespace nnd::onnx_import {
namespace {

// Pad modes other than zeros are built from the tensor's own elements, one spatial axis at a
// time (as numpy and ONNX define them): the pieces before and after it are crops of it, repeated
// by nearest upsampling where one element fills several, and a Concat joins them.
//   edge     the border element, repeated
//   reflect  the elements next to the border, mirrored (the border itself is not repeated)
//   wrap     the elements from the other end
//   constant a border crop scaled by 0 plus the value (exact for finite inputs), repeated
constexpr int64_t kMaxMirroredPad = 64;  // reflect: one crop per element

struct PadPieces {
  Importer& im;
  const std::string& base;  // value names start with it
  int spatial_rank;
  double value;

  // Elements [begin, end) of spatial axis j (1-based) of `v`.
  ValueId crop(ValueId v, int j, int64_t begin, int64_t end) const {
    const int64_t n = im.ir_shape(v)[static_cast<size_t>(j - 1)];
    CroppingParams c;
    c.rank = spatial_rank;
    (spatial_rank == 2 && j == 1 ? c.top : c.left) = begin;
    (spatial_rank == 2 && j == 1 ? c.bottom : c.right) = n - end;
    return im.emit_internal(base + ":piece", c, {v});
  }
  ValueId repeat(ValueId v, int j, int64_t times) const {
    if (times == 1) return v;
    UpSamplingParams u;
    u.rank = spatial_rank;
    (spatial_rank == 2 && j == 1 ? u.size_h : u.size_w) = times;
    return im.emit_internal(base + ":repeat", u, {v});
  }
  ValueId constant(ValueId border) const {
    const int64_t c = im.ir_shape(border).back();
    BatchNormParams bn;
    bn.keras_axis = -1;
    bn.epsilon = 0.0;
    bn.gamma = filled(c, 0.0f);
    bn.beta = filled(c, static_cast<float>(value));
    bn.moving_mean = filled(c, 0.0f);
    bn.moving_variance = filled(c, 1.0f);
    return im.emit_internal(base + ":value", bn, {border});
  }

  // The pieces of axis j padded by (before, after): [pieces before..., v, pieces after...].
  std::vector<ValueId> around(ValueId v, int j, int64_t before, int64_t after, const std::string& mode) const {
    const int64_t n = im.ir_shape(v)[static_cast<size_t>(j - 1)];
    std::vector<ValueId> head, tail;
    if (mode == "constant" || mode == "edge") {
      auto side = [&](int64_t pad, int64_t at) {
        if (pad == 0) return std::vector<ValueId>{};
        ValueId b = crop(v, j, at, at + 1);
        if (mode == "constant") b = constant(b);
        return std::vector<ValueId>{repeat(b, j, pad)};
      };
      head = side(before, 0);
      tail = side(after, n - 1);
    } else if (mode == "wrap") {
      if (before > n || after > n) im.fail(ErrorCode::kUnsupported, "wrap pads longer than the axis (" + std::to_string(n) + ") are not supported");
      if (before > 0) head.push_back(crop(v, j, n - before, n));
      if (after > 0) tail.push_back(crop(v, j, 0, after));
    } else {  // reflect
      if (before > n - 1 || after > n - 1) {
        im.fail("reflect pads must be shorter than the axis (" + std::to_string(n) + ")");
      }
      if (before + after > kMaxMirroredPad) {
        im.fail(ErrorCode::kLimit, "reflect pads of more than " + std::to_string(kMaxMirroredPad) + " elements per axis are not supported");
      }
      for (int64_t k = before; k >= 1; --k) head.push_back(crop(v, j, k, k + 1));
      for (int64_t k = n - 2; k >= n - 1 - after; --k) tail.push_back(crop(v, j, k, k + 1));
    }
    head.push_back(v);
    head.insert(head.end(), tail.begin(), tail.end());
    return head;
  }
};

void lower_pad(Importer& im, const Node_& node, Attributes& a) {
  const std::string mode = a.s("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap") {
    im.fail("mode '" + mode + "' is not one of constant, reflect, edge, wrap");
  }
  std::vector<int64_t> pads;
  double value = a.f("value", 0.0);
  if (auto p = a.ints("pads")) {
    pads = *p;
  } else if (auto p2 = a.ints("paddings")) {
    pads = *p2;
  } else {
    pads = im.const_input(node, 1, "pads").as_ints(im.context() + ": pads");
    if (im.has_input(node, 2)) value = im.const_input(node, 2, "constant_value").real_at(0);
  }
  if (im.has_input(node, 3)) im.fail(ErrorCode::kUnsupported, "the axes input is not supported");
  if (!std::isfinite(value)) im.fail(ErrorCode::kUnsupported, "constant_value " + num(value) + " is not supported (a finite value is)");
  Symbol& x = im.dynamic_input(node, 0);
  const size_t r = x.rank();
  if (pads.size() != 2 * r) im.fail("pads " + list_text(pads) + " do not match rank " + std::to_string(r));
  // No padding at all (torchvision's Swin pads each map to whole windows, often by 0): the identity.
  if (std::all_of(pads.begin(), pads.end(), [](int64_t p) { return p == 0; })) {
    im.alias(node, 0, x, x.perm);
    return;
  }
  if (x.batch_outside()) {
    im.fail(ErrorCode::kUnsupported, "padding the file's single sample as a whole (its batch merged into another axis) is not supported");
  }
  if (r != 3 && r != 4) im.fail(ErrorCode::kUnsupported, "padding a tensor of rank " + std::to_string(r) + " is not supported");
  for (int64_t p : pads) {
    if (p < 0) im.fail(ErrorCode::kUnsupported, "negative pads (cropping) are not supported");
    if (p > (int64_t{1} << 20)) im.fail(ErrorCode::kLimit, "pads " + list_text(pads) + " are too large");
  }
  auto padded = [&](size_t ax) { return pads[ax] != 0 || pads[ax + r] != 0; };
  if (padded(0)) im.fail("pads " + list_text(pads) + " pad the batch axis");
  // The IR pads the spatial axes of a channels-last tensor: the channel is an unpadded axis, the
  // one already last in the IR if it is unpadded, else ONNX axis 1 (NCHW).
  int channel = x.perm.back();
  if (padded(static_cast<size_t>(channel))) channel = 1;
  if (padded(static_cast<size_t>(channel))) {
    im.fail("pads " + list_text(pads) + " pad every non-batch axis; at most " + std::to_string(r - 2) +
            " spatial axes can be padded");
  }
  Perm perm{0};
  for (int ax : x.perm) {
    if (ax != 0 && ax != channel) perm.push_back(ax);
  }
  perm.push_back(channel);
  const ValueId in = im.in_layout(x, perm);
  const int spatial_rank = static_cast<int>(r) - 2;
  if (mode == "constant" && value == 0.0) {
    ZeroPaddingParams zp;
    zp.rank = spatial_rank;
    for (size_t j = 1; j + 1 < r; ++j) {
      const size_t ax = static_cast<size_t>(perm[j]);
      const bool first_spatial = zp.rank == 2 && j == 1;
      (first_spatial ? zp.top : zp.left) = pads[ax];
      (first_spatial ? zp.bottom : zp.right) = pads[ax + r];
    }
    im.emit(node, 0, zp, {in}, perm);
    return;
  }
  std::vector<int> axes;  // IR spatial axes (1-based) to pad
  for (size_t j = 1; j + 1 < r; ++j) {
    if (padded(static_cast<size_t>(perm[j]))) axes.push_back(static_cast<int>(j));
  }
  if (axes.empty()) {
    im.alias(node, 0, x, x.perm);
    return;
  }
  const PadPieces pieces{im, node.output(0), spatial_rank, value};
  ValueId v = in;
  for (size_t k = 0; k < axes.size(); ++k) {
    const int j = axes[k];
    const size_t ax = static_cast<size_t>(perm[static_cast<size_t>(j)]);
    std::vector<ValueId> parts = pieces.around(v, j, pads[ax], pads[ax + r], mode);
    const ConcatParams join{j, -1};
    if (k + 1 < axes.size()) {
      v = im.emit_internal(node.output(0) + ":padded", join, std::move(parts));
    } else {
      im.emit(node, 0, join, std::move(parts), perm);
    }
  }
}

}  // namespace

void add_pad_lowerings(LoweringTable& t) {
  t.add("Pad", lower_pad);
}

}  // namespace nnd::onnx_import
