// ONNX convolutions: Conv (grouped and depthwise) and ConvTranspose.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/io/onnx_ops.h"
#include "core/util/error.h"

namespace nnd::onnx_import {
namespace {

// An ONNX convolution weight (M, C/group, kh, kw) as the IR's (kh, kw, C/group, M).
Weights filters_last(const Constant& wc, int64_t m, int64_t cin_g, int64_t kh, int64_t kw) {
  Weights k{{kh, kw, cin_g, m}, std::vector<float>(static_cast<size_t>(kh * kw * cin_g * m))};
  for (int64_t o = 0; o < m; ++o)
    for (int64_t c = 0; c < cin_g; ++c)
      for (int64_t y = 0; y < kh; ++y)
        for (int64_t z = 0; z < kw; ++z)
          k.data[static_cast<size_t>(((y * kw + z) * cin_g + c) * m + o)] =
              static_cast<float>(wc.real_at(((o * cin_g + c) * kh + y) * kw + z));
  return k;
}

void lower_conv(Importer& im, const Node_& node, Attributes& a) {
  if (lower_qdq_conv(im, node, a)) return;  // DequantizeLinear inputs: an integer convolution
  Symbol& x = im.dynamic_input(node, 0);
  check_conv_rank(im, x);
  const Constant& wc = im.const_input(node, 1, "W");
  const size_t sp = x.rank() - 2;
  if (wc.dims.size() != x.rank()) im.fail("W has shape " + list_text(wc.dims) + ", expected rank " + std::to_string(x.rank()));
  const int64_t m = wc.dims[0], cin_g = wc.dims[1];
  const int64_t kh = sp == 2 ? wc.dims[2] : 1, kw = wc.dims.back();
  const int64_t cin = x.dims[1];
  const int64_t group = a.i("group", 1);
  if (group < 1 || cin % group || cin / group != cin_g || m % group) {
    im.fail("group " + std::to_string(group) + " does not fit " + std::to_string(cin) + " input channels and W of shape " +
            list_text(wc.dims));
  }
  const WindowAttrs wa = read_window(im, a, sp, std::vector<int64_t>(wc.dims.begin() + 2, wc.dims.end()));
  const Window win = make_window(im, wa, spatial_dims(x));
  Weights bias;
  if (im.has_input(node, 2)) {
    const Constant& b = im.const_input(node, 2, "B");
    if (b.size() != m) im.fail("B has " + std::to_string(b.size()) + " values for " + std::to_string(m) + " filters");
    bias = weights_of(b, {m});
  }
  const Perm perm = channels_last_perm(x.rank());
  const ValueId in = im.in_layout(x, perm);
  const int rank = static_cast<int>(sp);
  if (group == cin && cin_g == 1 && group > 1) {
    // Depthwise: ONNX filter o = c * dm + j reads channel c; the IR kernel is (kh, kw, C, dm).
    const int64_t dm = m / cin;
    DepthwiseConvParams p;
    p.rank = rank;
    p.depth_multiplier = dm;
    p.window = win;
    // Filter o = c * dm + j is output channel (c, j) in the IR's (C, dm) order too: the grouped
    // relayout with one input channel per group is already (kh, kw, C, dm) in memory.
    p.kernel = filters_last(wc, m, 1, kh, kw);
    p.kernel.shape = {kh, kw, cin, dm};
    p.bias = bias;
    im.emit(node, 0, p, {in}, perm);
    return;
  }
  ConvParams p;
  p.rank = rank;
  p.filters = m;
  p.groups = group;
  p.window = win;
  p.kernel = filters_last(wc, m, cin_g, kh, kw);
  p.bias = bias;
  im.emit(node, 0, p, {in}, perm);
}

void lower_conv_transpose(Importer& im, const Node_& node, Attributes& a) {
  Symbol& x = im.dynamic_input(node, 0);
  check_conv_rank(im, x);
  const Constant& wc = im.const_input(node, 1, "W");
  const size_t sp = x.rank() - 2;
  if (wc.dims.size() != x.rank()) im.fail("W has shape " + list_text(wc.dims) + ", expected rank " + std::to_string(x.rank()));
  const int64_t groups = a.i("group", 1);
  if (a.has("output_shape")) im.fail(ErrorCode::kUnsupported, "attribute 'output_shape' is not supported (give pads and output_padding)");
  const int64_t cin = wc.dims[0], m = wc.dims[1];  // m output channels per group
  const int64_t kh = sp == 2 ? wc.dims[2] : 1, kw = wc.dims.back();
  if (cin != x.dims[1]) im.fail("W has " + std::to_string(cin) + " input channels, the input " + std::to_string(x.dims[1]));
  if (groups < 1 || cin % groups != 0) im.fail("group " + std::to_string(groups) + " does not divide the input channels " + std::to_string(cin));
  if (groups > 4096) im.fail(ErrorCode::kLimit, "group " + std::to_string(groups) + " is more than the 4096 groups nnd splits a ConvTranspose into");
  const int64_t cg = cin / groups;  // input channels per group
  const WindowAttrs wa = read_window(im, a, sp, std::vector<int64_t>(wc.dims.begin() + 2, wc.dims.end()));
  const std::vector<int64_t> opad = a.ints("output_padding").value_or(std::vector<int64_t>(sp, 0));
  if (opad.size() != sp) im.fail("output_padding does not match the input rank");
  if (wa.auto_pad != "NOTSET" && wa.auto_pad != "VALID") im.fail(ErrorCode::kUnsupported, "auto_pad '" + wa.auto_pad + "' is not supported for ConvTranspose");
  ConvTransposeParams p;
  p.rank = static_cast<int>(sp);
  p.filters = m;
  WindowAttrs no_pads = wa;
  no_pads.auto_pad = "VALID";
  p.window = make_window(im, no_pads, spatial_dims(x));
  p.window.padding = Padding::kExplicit;
  if (sp == 2) {
    p.window.pad_top = wa.pads[0];
    p.window.pad_bottom = wa.pads[2];
    p.output_padding_h = opad[0];
  }
  p.window.pad_left = wa.pads[sp - 1];
  p.window.pad_right = wa.pads[2 * sp - 1];
  p.output_padding_w = opad[sp - 1];
  if (wa.auto_pad == "VALID") p.window.pad_top = p.window.pad_bottom = p.window.pad_left = p.window.pad_right = 0;
  std::optional<Weights> bias;
  if (im.has_input(node, 2)) bias = weights_of(im.const_input(node, 2, "B"), {m * groups});
  const Perm perm = channels_last_perm(x.rank());
  const ValueId in = im.in_layout(x, perm);
  // Group k: input channels [k cg, (k+1) cg) -> output channels [k m, (k+1) m). The IR layer has no
  // groups: each group is its own ConvTranspose on a channel crop, and a Concat joins them.
  auto group_layer = [&](int64_t k) {
    ConvTransposeParams g = p;
    g.kernel.shape = {kh, kw, m, cg};
    g.kernel.data.resize(static_cast<size_t>(kh * kw * m * cg));
    for (int64_t c = 0; c < cg; ++c)
      for (int64_t o = 0; o < m; ++o)
        for (int64_t y = 0; y < kh; ++y)
          for (int64_t z = 0; z < kw; ++z)
            g.kernel.data[static_cast<size_t>(((y * kw + z) * m + o) * cg + c)] =
                static_cast<float>(wc.real_at((((k * cg + c) * m + o) * kh + y) * kw + z));
    if (bias) {
      const auto first = bias->data.begin() + static_cast<std::ptrdiff_t>(k * m);
      g.bias = Weights{{m}, std::vector<float>(first, first + static_cast<std::ptrdiff_t>(m))};
    }
    return g;
  };
  if (groups == 1) {
    im.emit(node, 0, group_layer(0), {in}, perm);
    return;
  }
  const Dims shape = im.ir_shape(in);  // {spatial..., cin}
  int64_t positions = 1;  // a shape inference checked: the product fits
  for (size_t j = 0; j + 1 < shape.size(); ++j) positions *= shape[j];
  const std::string& name = node.output(0);
  const ValueId view = im.emit_internal(name + ":channels", ReshapeParams{Dims{positions, cin, 1}}, {in});
  std::vector<ValueId> outs;
  for (int64_t k = 0; k < groups; ++k) {
    CroppingParams crop;  // 2-D over (positions, channels) of the view, channels cropped
    crop.rank = 2;
    crop.left = k * cg;
    crop.right = cin - (k + 1) * cg;
    const ValueId part = im.emit_internal(name + ":group", crop, {view});
    Dims back(shape.begin(), shape.end() - 1);
    back.push_back(cg);
    const ValueId gin = im.emit_internal(name + ":group", ReshapeParams{back}, {part});
    outs.push_back(im.emit_internal(name + ":group", group_layer(k), {gin}));
  }
  im.emit(node, 0, ConcatParams{-1, -1}, std::move(outs), perm);
}

}  // namespace

void add_conv_lowerings(LoweringTable& t) {
  t.add("Conv", lower_conv);
  t.add("ConvTranspose", lower_conv_transpose);
}

}  // namespace nnd::onnx_import
