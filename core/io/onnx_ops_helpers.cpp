// Helpers the ONNX lowering families share (declared, with their contracts, in onnx_ops.h).
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "core/io/onnx_ops.h"
#include "core/util/error.h"

namespace nnd::onnx_import {

std::string list_text(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + (v[i] == kBatchMarker ? std::string("N") : std::to_string(v[i]));
  return s + "]";
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

Weights weights_of(const Constant& c, Dims shape) {
  Weights w;
  w.shape = std::move(shape);
  w.data.reserve(static_cast<size_t>(c.size()));
  for (int64_t i = 0; i < c.size(); ++i) w.data.push_back(static_cast<float>(c.real_at(i)));
  return w;
}

Weights filled(int64_t n, float v) {
  if (n > kMaxMadeUpParameters) {
    throw Error(ErrorCode::kLimit, "a per-axis parameter vector of " + std::to_string(n) + " elements exceeds the limit of " +
                std::to_string(kMaxMadeUpParameters));
  }
  return Weights::filled(n, v);
}

std::optional<std::vector<int64_t>> ints_from(Importer& im, const Node_& node, Attributes& a,
                                              const std::string& attr, int n) {
  if (auto v = a.ints(attr)) return v;
  if (im.has_input(node, n)) return im.const_input(node, n, attr).as_ints(im.context() + ": " + attr);
  return std::nullopt;
}

AxisVector axis_vector(Importer& im, const Symbol& x, const Constant& c) {
  if (c.dims.size() > x.rank()) im.fail("the constant operand has more axes than the tensor");
  AxisVector v;
  const size_t off = x.rank() - c.dims.size();
  for (size_t k = 0; k < c.dims.size(); ++k) {
    const int64_t d = c.dims[k];
    if (d == 1) continue;
    const size_t axis = k + off;
    if (static_cast<int>(axis) == x.perm[0]) im.fail("the constant operand varies along the batch axis");
    if (d != x.dims[axis]) {
      im.fail("the constant operand of shape " + list_text(c.dims) + " does not broadcast to the tensor");
    }
    if (v.axis >= 0) {
      im.fail(ErrorCode::kUnsupported, "the constant operand of shape " + list_text(c.dims) +
              " varies along more than one axis (only scalars and per-axis vectors are supported)");
    }
    v.axis = static_cast<int>(axis);
  }
  for (int64_t i = 0; i < c.size(); ++i) v.values.push_back(c.real_at(i));
  return v;
}

BatchNormParams affine_params(Importer& im, const Symbol& x, int onnx_axis, std::vector<double> scale,
                              std::vector<double> shift) {
  const int axis = onnx_axis >= 0 ? onnx_axis : x.perm.back();
  const int64_t n = x.dims[static_cast<size_t>(axis)];
  if (n > kMaxMadeUpParameters) im.fail(ErrorCode::kLimit, "an element-wise constant over an axis of " + std::to_string(n) + " elements is too large");
  auto expand = [n](std::vector<double> v) {
    if (v.size() == 1) v.assign(static_cast<size_t>(n), v[0]);
    return v;
  };
  scale = expand(std::move(scale));
  shift = expand(std::move(shift));
  BatchNormParams bn;
  bn.keras_axis = im.ir_axis(x, axis);
  bn.epsilon = 0.0;
  bn.gamma = filled(n, 0.0f);
  bn.beta = filled(n, 0.0f);
  for (int64_t i = 0; i < n; ++i) {
    bn.gamma.data[static_cast<size_t>(i)] = static_cast<float>(scale[static_cast<size_t>(i)]);
    bn.beta.data[static_cast<size_t>(i)] = static_cast<float>(shift[static_cast<size_t>(i)]);
  }
  bn.moving_mean = filled(n, 0.0f);
  bn.moving_variance = filled(n, 1.0f);
  return bn;
}

Perm dense_layout(Importer& im, const Symbol& x) {
  const int last = static_cast<int>(x.rank()) - 1;
  if (x.perm[0] == last) im.fail("the batch is on the last axis, the one the product contracts");
  if (x.perm.back() == last) return x.perm;
  Perm perm{x.perm[0]};
  for (int k = 0; k <= last; ++k) {
    if (k != x.perm[0]) perm.push_back(k);
  }
  return perm;
}

ValueId merge_operand(Importer& im, Symbol& s, const Perm& perm) {
  if (s.perm[0] == perm[0]) return im.in_layout(s, perm);
  if (perm[0] == kBatchOutside) {
    Symbol outside = im.batch_like(s, true, "an operand");
    return im.in_layout(outside, perm);
  }
  std::optional<Symbol> moved = im.with_batch_on(s, perm[0]);
  if (!moved) {
    im.fail(ErrorCode::kUnsupported, "the operands carry the batch on different axes (" + std::to_string(perm[0]) +
                                         " and " + std::to_string(s.perm[0]) + ")");
  }
  return im.in_layout(*moved, perm);
}

ValueId constant_operand(Importer& im, const Constant& c, const Symbol& like, const Perm& perm, const std::string& name) {
  const size_t rank = like.rank();
  if (c.dims.size() > rank) im.fail("the constant operand " + list_text(c.dims) + " has more axes than the tensor");
  std::vector<int64_t> dims(rank - c.dims.size(), 1);
  dims.insert(dims.end(), c.dims.begin(), c.dims.end());
  if (perm[0] != kBatchOutside && dims[static_cast<size_t>(perm[0])] != 1) {
    im.fail(ErrorCode::kUnsupported, "the constant operand " + list_text(c.dims) + " varies along the batch axis");
  }
  if (c.size() > kMaxMadeUpParameters) im.fail(ErrorCode::kLimit, "a constant operand of " + std::to_string(c.size()) + " elements is too large");
  // ONNX row-major strides of c, read in the IR order perm[1..] (every ONNX axis but the batch's;
  // all of them when the batch is outside).
  std::vector<int64_t> stride(rank, 1);
  for (size_t k = rank - 1; k-- > 0;) stride[k] = stride[k + 1] * dims[k + 1];
  const size_t axes = perm.size() - 1;
  Weights w;
  for (size_t j = 1; j <= axes; ++j) w.shape.push_back(dims[static_cast<size_t>(perm[j])]);
  w.data.reserve(static_cast<size_t>(c.size()));
  std::vector<int64_t> index(axes, 0);
  for (int64_t i = 0; i < c.size(); ++i) {
    int64_t at = 0;
    for (size_t j = 1; j <= axes; ++j) at += index[j - 1] * stride[static_cast<size_t>(perm[j])];
    w.data.push_back(static_cast<float>(c.real_at(at)));
    for (size_t j = axes; j-- > 0;) {  // next IR index, last axis fastest
      if (++index[j] < w.shape[j]) break;
      index[j] = 0;
    }
  }
  return im.emit_internal(name, ConstantParams{std::move(w)}, {like.value});
}

void emit_affine(Importer& im, const Node_& node, Symbol& x, int onnx_axis, std::vector<double> scale,
                 std::vector<double> shift) {
  const Perm perm = x.perm;
  im.emit(node, 0, affine_params(im, x, onnx_axis, std::move(scale), std::move(shift)), {x.value}, perm);
}

void emit_activation(Importer& im, const Node_& node, LayerParams params) {
  Symbol& x = im.dynamic_input(node, 0);
  const Perm perm = x.perm;
  im.emit(node, 0, std::move(params), {x.value}, perm);
}

ValueId emit_internal_steps(Importer& im, const std::string& name, ValueId v, Steps steps) {
  for (auto& [suffix, params] : steps) v = im.emit_internal(name + ":" + suffix, std::move(params), {v});
  return v;
}

void emit_steps(Importer& im, const Node_& node, int out, Symbol result, ValueId v, Steps steps) {
  if (steps.empty()) {
    result.value = v;
    im.alias(node, out, result, result.perm);
    return;
  }
  LayerParams last = std::move(steps.back().second);
  steps.pop_back();
  v = emit_internal_steps(im, node.output(out), v, std::move(steps));
  im.emit(node, out, std::move(last), {v}, result.perm);
}

WindowAttrs read_window(Importer& im, Attributes& a, size_t spatial, const std::vector<int64_t>& kernel_from_w) {
  WindowAttrs w;
  w.kernel = a.ints("kernel_shape").value_or(kernel_from_w);
  if (w.kernel.size() != spatial) im.fail("kernel_shape " + list_text(w.kernel) + " does not match the input rank");
  w.strides = a.ints("strides").value_or(std::vector<int64_t>(spatial, 1));
  w.dilations = a.ints("dilations").value_or(std::vector<int64_t>(spatial, 1));
  w.pads = a.ints("pads").value_or(std::vector<int64_t>(2 * spatial, 0));
  w.auto_pad = a.s("auto_pad", "NOTSET");
  if (w.strides.size() != spatial || w.dilations.size() != spatial || w.pads.size() != 2 * spatial) {
    im.fail("strides, dilations or pads do not match the input rank");
  }
  for (const auto* v : {&w.kernel, &w.strides, &w.dilations, &w.pads}) {
    for (int64_t x : *v) {
      if (x > (int64_t{1} << 24) || x < -(int64_t{1} << 24)) im.fail("window size " + std::to_string(x) + " is out of range");
    }
  }
  return w;
}

Window make_window(Importer& im, const WindowAttrs& wa, const std::vector<int64_t>& in) {
  const size_t n = in.size();
  Window w;
  auto at = [&](const std::vector<int64_t>& v, size_t k) { return v[k]; };
  const size_t h = n == 2 ? 0 : SIZE_MAX;  // index of the height axis, if any
  const size_t x = n - 1;
  if (h != SIZE_MAX) {
    w.kernel_h = at(wa.kernel, h);
    w.stride_h = at(wa.strides, h);
    w.dilation_h = at(wa.dilations, h);
  }
  w.kernel_w = at(wa.kernel, x);
  w.stride_w = at(wa.strides, x);
  w.dilation_w = at(wa.dilations, x);
  for (int64_t v : wa.kernel) {
    if (v < 1) im.fail("kernel_shape " + list_text(wa.kernel) + " has a non-positive size");
  }
  for (int64_t v : wa.strides) {
    if (v < 1) im.fail("strides " + list_text(wa.strides) + " has a non-positive stride");
  }
  for (int64_t v : wa.dilations) {
    if (v < 1) im.fail("dilations " + list_text(wa.dilations) + " has a non-positive dilation");
  }
  std::vector<int64_t> begin(n), end(n);
  for (size_t k = 0; k < n; ++k) {
    const int64_t k_eff = (wa.kernel[k] - 1) * wa.dilations[k] + 1;
    if (wa.auto_pad == "NOTSET") {
      begin[k] = wa.pads[k];
      end[k] = wa.pads[k + n];
      if (wa.ceil_mode) {
        // The last window may start past the end, as long as it starts inside input + begin pad.
        const int64_t span = in[k] + begin[k] + end[k] - k_eff;
        if (span >= 0) {
          int64_t out = (span + wa.strides[k] - 1) / wa.strides[k] + 1;
          if ((out - 1) * wa.strides[k] >= in[k] + begin[k]) --out;
          end[k] = std::max<int64_t>(end[k], (out - 1) * wa.strides[k] + k_eff - in[k] - begin[k]);
        }
      }
    } else if (wa.auto_pad == "VALID") {
      begin[k] = end[k] = 0;
    } else if (wa.auto_pad == "SAME_UPPER" || wa.auto_pad == "SAME_LOWER") {
      const int64_t out = (in[k] + wa.strides[k] - 1) / wa.strides[k];
      const int64_t total = std::max<int64_t>((out - 1) * wa.strides[k] + k_eff - in[k], 0);
      const int64_t small = total / 2;
      begin[k] = wa.auto_pad == "SAME_UPPER" ? small : total - small;
      end[k] = total - begin[k];
    } else {
      im.fail("auto_pad '" + wa.auto_pad + "' is not one of NOTSET, VALID, SAME_UPPER, SAME_LOWER");
    }
    if (begin[k] < 0 || end[k] < 0) im.fail(ErrorCode::kUnsupported, "negative pads " + list_text(wa.pads) + " are not supported");
  }
  const bool any = std::any_of(begin.begin(), begin.end(), [](int64_t v) { return v; }) ||
                   std::any_of(end.begin(), end.end(), [](int64_t v) { return v; });
  w.padding = any ? Padding::kExplicit : Padding::kValid;
  if (h != SIZE_MAX) {
    w.pad_top = begin[h];
    w.pad_bottom = end[h];
  }
  w.pad_left = begin[x];
  w.pad_right = end[x];
  return w;
}

std::vector<int64_t> spatial_dims(const Symbol& x) {
  return std::vector<int64_t>(x.dims.begin() + 2, x.dims.end());
}

void check_conv_rank(Importer& im, const Symbol& x) {
  if (x.rank() != 3 && x.rank() != 4) {
    im.fail("input of rank " + std::to_string(x.rank()) + ": 1-D (N, C, W) and 2-D (N, C, H, W) are supported");
  }
}

}  // namespace nnd::onnx_import
