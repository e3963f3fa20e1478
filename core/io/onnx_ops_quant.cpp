// ONNX quantized operators: QuantizeLinear, DequantizeLinear, QLinearConv, QLinearMatMul,
// ConvInteger, MatMulInteger, and the QDQ form (DequantizeLinear -> Conv / MatMul / Gemm ->
// [Relu / Clip] -> QuantizeLinear) lowered to the same integer layers (core/ir/layers.h QConv,
// QDense). The arithmetic is core/ir/quant; docs/int8.md says where it equals ONNX Runtime's.
//
// How QDQ becomes integer layers. DequantizeLinear of a constant keeps the integers next to the
// dequantized values (Symbol::quantized); of a computed tensor it is an IR Dequantize node. A
// Conv / MatMul / Gemm whose input comes from a Dequantize node and whose weights are a
// dequantized constant lowers to an integer layer with an int32 accumulator output, followed by a
// Dequantize by x_scale * w_scale: exactly the float result ONNX defines, up to the float
// rounding of the sum. A QuantizeLinear that then reads that result (directly, or through one
// Relu / Clip(0, b)) is folded into the integer layer, which requantizes instead: the fused
// integer operation ONNX Runtime runs for the same pattern. Nodes left unread are dropped at the
// end of the import. Everything else between DequantizeLinear and QuantizeLinear runs in float.
#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/io/onnx_ops.h"
#include "core/ir/quant/requantize.h"
#include "core/util/error.h"

namespace nnd::onnx_import {
namespace {

using quant::QuantParams;
using quant::QuantType;

std::optional<QuantType> quant_type_of(int onnx_type) {
  if (onnx_type == onnx::TensorProto_DataType_INT8) return QuantType::kInt8;
  if (onnx_type == onnx::TensorProto_DataType_UINT8) return QuantType::kUInt8;
  if (onnx_type == onnx::TensorProto_DataType_INT32) return QuantType::kInt32;
  return std::nullopt;
}

QuantType dtype_quant_type(Importer& im, DType d, const std::string& role) {
  if (d == DType::kInt8) return QuantType::kInt8;
  if (d == DType::kUInt8) return QuantType::kUInt8;
  if (d == DType::kInt32) return QuantType::kInt32;
  im.fail(ErrorCode::kUnsupported, role + " is float32, expected a quantized (int8, uint8 or int32) tensor");
}

// Scale (input `scale_in`) and zero point (input `zp_in`, optional: 0 of `default_type`) as
// QuantParams; per axis when the scale is a 1-D tensor of more than one value (`axis` then names
// the ONNX axis, `channels` its length).
QuantParams read_params(Importer& im, const Node_& node, int scale_in, int zp_in, QuantType default_type, const std::string& role,
                        int64_t channels = 1, int onnx_axis = -1) {
  QuantParams q;
  const Constant& s = im.const_input(node, scale_in, role + " scale");
  if (s.is_int) im.fail(role + " scale must be a float tensor");
  if (s.dims.size() > 1) im.fail(role + " scale must be a scalar or 1-D, got shape " + list_text(s.dims));
  q.type = default_type;
  q.scales.clear();
  for (int64_t i = 0; i < s.size(); ++i) q.scales.push_back(static_cast<float>(s.real_at(i)));
  q.zero_points.assign(q.scales.size(), 0);
  if (im.has_input(node, zp_in)) {
    const Constant& z = im.const_input(node, zp_in, role + " zero point");
    const std::optional<QuantType> t = quant_type_of(z.elem_type);
    if (!z.is_int || !t) im.fail(ErrorCode::kUnsupported, role + " zero point must be int8, uint8 or int32");
    if (z.size() != s.size()) im.fail(role + " zero point has " + std::to_string(z.size()) + " values, the scale " + std::to_string(s.size()));
    q.type = *t;
    for (int64_t i = 0; i < z.size(); ++i) q.zero_points[static_cast<size_t>(i)] = static_cast<int32_t>(z.int_at(i));
  }
  if (q.scales.size() > 1) {
    if (static_cast<int64_t>(q.scales.size()) != channels) {
      im.fail(role + " has " + std::to_string(q.scales.size()) + " scales for " + std::to_string(channels) + " channels along axis " +
              std::to_string(onnx_axis));
    }
    q.axis = onnx_axis < 0 ? 0 : onnx_axis;  // callers re-express it in the IR layout
  }
  quant::validate(q, im.context() + ": " + role);
  return q;
}

// The integers of a quantized constant (its own element type).
QuantType const_type(Importer& im, const Constant& c, const std::string& role) {
  const std::optional<QuantType> t = quant_type_of(c.elem_type);
  if (!c.is_int || !t || *t == QuantType::kInt32) im.fail(ErrorCode::kUnsupported, role + " must be an int8 or uint8 tensor");
  return *t;
}

// ONNX conv weights (M, C/g, [kh,] kw) -> the IR's (kh, kw, C/g, M) integers.
IntWeights conv_kernel(const Constant& w, int64_t m, int64_t cin_g, int64_t kh, int64_t kw) {
  IntWeights k{{kh, kw, cin_g, m}, std::vector<int32_t>(static_cast<size_t>(kh * kw * cin_g * m))};
  for (int64_t o = 0; o < m; ++o)
    for (int64_t c = 0; c < cin_g; ++c)
      for (int64_t y = 0; y < kh; ++y)
        for (int64_t z = 0; z < kw; ++z)
          k.data[static_cast<size_t>(((y * kw + z) * cin_g + c) * m + o)] = static_cast<int32_t>(w.int_at(((o * cin_g + c) * kh + y) * kw + z));
  return k;
}

// A matrix constant (K, N) (or its transpose) -> the IR's (K, N) integers.
IntWeights dense_kernel(const Constant& b, bool trans) {
  const int64_t k = trans ? b.dims[1] : b.dims[0], n = trans ? b.dims[0] : b.dims[1];
  IntWeights w{{k, n}, std::vector<int32_t>(static_cast<size_t>(k * n))};
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < n; ++j) w.data[static_cast<size_t>(i * n + j)] = static_cast<int32_t>(b.int_at(trans ? j * k + i : i * n + j));
  return w;
}

std::vector<int32_t> int32_bias(Importer& im, const Constant& b, int64_t n, const std::string& role) {
  if (!b.is_int || quant_type_of(b.elem_type) != QuantType::kInt32) im.fail(ErrorCode::kUnsupported, role + " must be an int32 tensor");
  if (b.size() != n) im.fail(role + " has " + std::to_string(b.size()) + " values for " + std::to_string(n) + " outputs");
  std::vector<int32_t> out;
  for (int64_t i = 0; i < n; ++i) out.push_back(static_cast<int32_t>(b.int_at(i)));
  return out;
}

// Weight parameters re-expressed on the IR kernel's output axis (QConv 3, QDense 1).
QuantParams on_output_axis(QuantParams w, int ir_axis) {
  if (w.per_channel()) w.axis = ir_axis;
  return w;
}

// The geometry of an ONNX Conv-like node for an input x and weight dims.
struct ConvShape {
  int rank;
  int64_t m, cin_g, kh, kw, group;
  Window window;
};

ConvShape conv_shape(Importer& im, Attributes& a, const Symbol& x, const std::vector<int64_t>& wdims) {
  check_conv_rank(im, x);
  const size_t sp = x.rank() - 2;
  if (wdims.size() != x.rank()) im.fail("W has shape " + list_text(wdims) + ", expected rank " + std::to_string(x.rank()));
  ConvShape c;
  c.rank = static_cast<int>(sp);
  c.m = wdims[0];
  c.cin_g = wdims[1];
  c.kh = sp == 2 ? wdims[2] : 1;
  c.kw = wdims.back();
  c.group = a.i("group", 1);
  const int64_t cin = x.dims[1];
  if (c.group < 1 || cin % c.group || cin / c.group != c.cin_g || c.m % c.group) {
    im.fail("group " + std::to_string(c.group) + " does not fit " + std::to_string(cin) + " input channels and W of shape " + list_text(wdims));
  }
  const WindowAttrs wa = read_window(im, a, sp, std::vector<int64_t>(wdims.begin() + 2, wdims.end()));
  c.window = make_window(im, wa, spatial_dims(x));
  return c;
}

QConvParams qconv_params(const ConvShape& c, const Constant& w) {
  QConvParams p;
  p.rank = c.rank;
  p.filters = c.m;
  p.groups = c.group;
  p.window = c.window;
  p.kernel = conv_kernel(w, c.m, c.cin_g, c.kh, c.kw);
  return p;
}

// ---------------------------------------------------------------- QuantizeLinear / DequantizeLinear

// ONNX axis `axis` (negative from the end) of a constant or computed tensor.
int64_t axis_of(Importer& im, const Symbol& x, int64_t axis) {
  if (!x.is_const()) return im.onnx_axis(x, axis);
  const auto rank = static_cast<int64_t>(x.constant->dims.size());
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) im.fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return a;
}

int64_t channels_along(Importer& im, const Symbol& x, int64_t axis) {
  const int64_t a = axis_of(im, x, axis);
  return x.is_const() ? x.constant->dims[static_cast<size_t>(a)] : x.dims[static_cast<size_t>(a)];
}

void lower_quantize(Importer& im, const Node_& node, Attributes& a) {
  a.ignore("saturate");  // opset 19+, float8 only
  Symbol& x = im.input(node, 0);
  const int64_t axis = a.i("axis", 1);
  const Constant& sc = im.const_input(node, 1, "y_scale");
  const bool per_axis = sc.dims.size() == 1 && sc.size() > 1;
  const int64_t oa = per_axis ? axis_of(im, x, axis) : -1;
  QuantParams q = read_params(im, node, 1, 2, QuantType::kUInt8, "y", per_axis ? channels_along(im, x, axis) : 1, static_cast<int>(oa));
  if (q.type == QuantType::kInt32) im.fail(ErrorCode::kUnsupported, "quantizing to int32 is not supported");
  if (x.is_const()) {
    // Weights stored as float and quantized in the graph: fold to the integers.
    const Constant& c = *x.constant;
    Constant out;
    out.dims = c.dims;
    out.is_int = true;
    out.elem_type = q.type == QuantType::kInt8 ? onnx::TensorProto_DataType_INT8 : onnx::TensorProto_DataType_UINT8;
    int64_t inner = 1;
    if (per_axis) for (size_t d = static_cast<size_t>(oa) + 1; d < c.dims.size(); ++d) inner *= c.dims[d];
    for (int64_t i = 0; i < c.size(); ++i) {
      const size_t ch = per_axis ? static_cast<size_t>((i / inner) % c.dims[static_cast<size_t>(oa)]) : 0;
      out.ints.push_back(quant::quantize(static_cast<float>(c.real_at(i)), q.scales[ch], q.zero_points[ch], q.type));
    }
    im.set_constant(node, 0, std::move(out));
    return;
  }
  if (per_axis) im.fail(ErrorCode::kUnsupported, "per-axis quantization of a computed tensor is not supported (one y_scale)");
  Symbol& xd = im.dynamic_input(node, 0);
  if (fold_quantize_into_producer(im, node, xd, q)) return;
  im.emit(node, 0, QuantizeParams{q}, {xd.value}, xd.perm);
}

void lower_dequantize(Importer& im, const Node_& node, Attributes& a) {
  Symbol& x = im.input(node, 0);
  const int64_t axis = a.i("axis", 1);
  const Constant& sc = im.const_input(node, 1, "x_scale");
  const bool per_axis = sc.dims.size() == 1 && sc.size() > 1;
  const int64_t oa = per_axis ? axis_of(im, x, axis) : -1;
  QuantType default_type = QuantType::kUInt8;
  if (x.is_const()) {
    const std::optional<QuantType> t = quant_type_of(x.constant->elem_type);
    if (!x.constant->is_int || !t) im.fail(ErrorCode::kUnsupported, "x must be an int8, uint8 or int32 tensor");
    default_type = *t;
  } else {
    default_type = dtype_quant_type(im, x.dtype, "x");
  }
  QuantParams q = read_params(im, node, 1, 2, default_type, "x", per_axis ? channels_along(im, x, axis) : 1, static_cast<int>(oa));
  if (x.is_const()) {
    const Constant& c = *x.constant;
    if (!c.is_int || quant_type_of(c.elem_type) != q.type) {
      im.fail("x and x_zero_point have different element types (x " + std::to_string(c.elem_type) + ")");
    }
    Constant out;
    out.dims = c.dims;
    int64_t inner = 1;
    if (per_axis) for (size_t d = static_cast<size_t>(oa) + 1; d < c.dims.size(); ++d) inner *= c.dims[d];
    for (int64_t i = 0; i < c.size(); ++i) {
      const size_t ch = per_axis ? static_cast<size_t>((i / inner) % c.dims[static_cast<size_t>(oa)]) : 0;
      out.reals.push_back(static_cast<double>(quant::dequantize(c.int_at(i), q.scales[ch], q.zero_points[ch])));
    }
    im.set_constant(node, 0, std::move(out));
    im.tensor(node.output(0)).quantized = QuantizedConstant{c, q};
    return;
  }
  if (q.type != dtype_quant_type(im, x.dtype, "x")) {
    im.fail("x is " + std::string(dtype_name(x.dtype)) + " but x_zero_point is " + quant::quant_type_name(q.type));
  }
  if (per_axis) q.axis = im.ir_axis(x, axis) - 1;
  im.emit(node, 0, DequantizeParams{q}, {x.value}, x.perm);
}

// ---------------------------------------------------------------- QLinear* and *Integer operators

// Reads x (computed, quantized), checks its type against its zero point's.
Symbol& quantized_input(Importer& im, const Node_& node, int n, const QuantParams& q, const std::string& role) {
  Symbol& x = im.dynamic_input(node, n);
  const QuantType t = dtype_quant_type(im, x.dtype, role);
  if (t != q.type) im.fail(role + " is " + dtype_name(x.dtype) + " but its zero point is " + quant::quant_type_name(q.type));
  return x;
}

void emit_qconv(Importer& im, const Node_& node, Attributes& a, int x_in, const QuantParams& xq, int w_in, int ws_in, int wzp_in,
                bool scaled, std::optional<QuantParams> yq, int bias_in) {
  Symbol& x = quantized_input(im, node, x_in, xq, "x");
  const Constant& w = im.const_input(node, w_in, "w");
  const ConvShape cs = conv_shape(im, a, x, w.dims);
  const QuantType wt = const_type(im, w, "w");
  QuantParams wq = QuantParams::per_tensor(wt, 1.0f, 0);
  if (scaled) {
    wq = read_params(im, node, ws_in, wzp_in, wt, "w", cs.m, 0);
  } else if (im.has_input(node, wzp_in)) {
    // ConvInteger: zero points only (scale 1); one per output channel allowed.
    const Constant& z = im.const_input(node, wzp_in, "w_zero_point");
    if (quant_type_of(z.elem_type) != wt) im.fail("w and w_zero_point have different element types");
    wq.scales.assign(static_cast<size_t>(z.size()), 1.0f);
    wq.zero_points.clear();
    for (int64_t i = 0; i < z.size(); ++i) wq.zero_points.push_back(static_cast<int32_t>(z.int_at(i)));
    if (z.size() > 1) {
      if (z.size() != cs.m) im.fail("w_zero_point has " + std::to_string(z.size()) + " values for " + std::to_string(cs.m) + " filters");
      wq.axis = 0;
    }
    quant::validate(wq, im.context() + ": w");
  }
  if (wq.type != wt) im.fail("w is " + std::string(quant::quant_type_name(wt)) + " but w_zero_point is " + quant::quant_type_name(wq.type));
  QConvParams p = qconv_params(cs, w);
  p.input = xq;
  p.weights = on_output_axis(wq, 3);
  if (bias_in >= 0 && im.has_input(node, bias_in)) p.bias = int32_bias(im, im.const_input(node, bias_in, "B"), cs.m, "B");
  if (yq) p.out.output = *yq;
  const Perm perm = channels_last_perm(x.rank());
  im.emit(node, 0, p, {im.in_layout(x, perm)}, perm);
}

void lower_qlinear_conv(Importer& im, const Node_& node, Attributes& a) {
  const QuantType xt = dtype_quant_type(im, im.dynamic_input(node, 0).dtype, "x");
  const QuantParams xq = read_params(im, node, 1, 2, xt, "x");
  const QuantParams yq = read_params(im, node, 6, 7, xt, "y");
  if (yq.type == QuantType::kInt32) im.fail(ErrorCode::kUnsupported, "y must be int8 or uint8");
  emit_qconv(im, node, a, 0, xq, 3, 4, 5, true, yq, 8);
}

void lower_conv_integer(Importer& im, const Node_& node, Attributes& a) {
  Symbol& x0 = im.dynamic_input(node, 0);
  QuantParams xq = QuantParams::per_tensor(dtype_quant_type(im, x0.dtype, "x"), 1.0f, 0);
  if (im.has_input(node, 2)) {
    const Constant& z = im.const_input(node, 2, "x_zero_point");
    if (z.size() != 1) im.fail(ErrorCode::kUnsupported, "x_zero_point must be a scalar");
    xq.zero_points = {static_cast<int32_t>(z.int_at(0))};
    if (quant_type_of(z.elem_type) != xq.type) im.fail("x and x_zero_point have different element types");
    quant::validate(xq, im.context() + ": x");
  }
  emit_qconv(im, node, a, 0, xq, 1, -1, 3, false, std::nullopt, -1);
}

void emit_qdense(Importer& im, const Node_& node, Symbol& x, const QuantParams& xq, const Constant& b, bool trans, QuantParams wq,
                 std::vector<int32_t> bias, std::optional<QuantParams> yq) {
  if (b.dims.size() != 2) im.fail("B must be a 2-D constant, got shape " + list_text(b.dims));
  const int64_t k = trans ? b.dims[1] : b.dims[0], n = trans ? b.dims[0] : b.dims[1];
  if (x.rank() < 2 || x.dims.back() != k) im.fail("B " + list_text(b.dims) + " does not fit the input's last axis");
  Perm perm = x.perm;
  if (perm.back() != static_cast<int>(x.rank()) - 1) perm = identity_perm(x.rank());
  QDenseParams p;
  p.units = n;
  p.input = xq;
  p.weights = on_output_axis(std::move(wq), 1);
  p.kernel = dense_kernel(b, trans);
  p.bias = std::move(bias);
  if (yq) p.out.output = *yq;
  im.emit(node, 0, p, {im.in_layout(x, perm)}, perm);
}

// Per-column weight parameters of a (K, N) matrix: the scale is scalar or (N).
QuantParams matrix_params(Importer& im, const Node_& node, int s_in, int z_in, QuantType t, const Constant& b, const std::string& role) {
  if (b.dims.size() != 2) im.fail("B must be a 2-D constant, got shape " + list_text(b.dims));
  return read_params(im, node, s_in, z_in, t, role, b.dims[1], 1);
}

void lower_qlinear_matmul(Importer& im, const Node_& node, Attributes&) {
  const QuantType at = dtype_quant_type(im, im.dynamic_input(node, 0).dtype, "a");
  const QuantParams aq = read_params(im, node, 1, 2, at, "a");
  Symbol& x = quantized_input(im, node, 0, aq, "a");
  const Constant& b = im.const_input(node, 3, "b");
  const QuantParams bq = matrix_params(im, node, 4, 5, const_type(im, b, "b"), b, "b");
  const QuantParams yq = read_params(im, node, 6, 7, at, "y");
  if (yq.type == QuantType::kInt32) im.fail(ErrorCode::kUnsupported, "y must be int8 or uint8");
  emit_qdense(im, node, x, aq, b, false, bq, {}, yq);
}

void lower_matmul_integer(Importer& im, const Node_& node, Attributes&) {
  Symbol& x0 = im.dynamic_input(node, 0);
  QuantParams aq = QuantParams::per_tensor(dtype_quant_type(im, x0.dtype, "A"), 1.0f, 0);
  if (im.has_input(node, 2)) {
    const Constant& z = im.const_input(node, 2, "a_zero_point");
    if (z.size() != 1) im.fail(ErrorCode::kUnsupported, "a_zero_point must be a scalar (per-row zero points are not supported)");
    if (quant_type_of(z.elem_type) != aq.type) im.fail("A and a_zero_point have different element types");
    aq.zero_points = {static_cast<int32_t>(z.int_at(0))};
    quant::validate(aq, im.context() + ": A");
  }
  Symbol& x = quantized_input(im, node, 0, aq, "A");
  const Constant& b = im.const_input(node, 1, "B");
  const QuantType bt = const_type(im, b, "B");
  QuantParams bq = QuantParams::per_tensor(bt, 1.0f, 0);
  if (im.has_input(node, 3)) {
    const Constant& z = im.const_input(node, 3, "b_zero_point");
    if (quant_type_of(z.elem_type) != bt) im.fail("B and b_zero_point have different element types");
    bq.scales.assign(static_cast<size_t>(z.size()), 1.0f);
    bq.zero_points.clear();
    for (int64_t i = 0; i < z.size(); ++i) bq.zero_points.push_back(static_cast<int32_t>(z.int_at(i)));
    if (z.size() > 1) bq.axis = 1;
    quant::validate(bq, im.context() + ": B");
  }
  emit_qdense(im, node, x, aq, b, false, bq, {}, std::nullopt);
}

}  // namespace

// ---------------------------------------------------------------- QDQ (called by Conv, MatMul, Gemm)

namespace {

// The Dequantize node x comes from, or nullptr.
const DequantizeParams* dequantized_from(Importer& im, const Symbol& x, ValueId* source) {
  if (x.is_const()) return nullptr;
  Node* p = im.producer_of(x.value);
  if (!p) return nullptr;
  const auto* d = std::get_if<DequantizeParams>(&p->params);
  if (!d || d->input.per_channel() || d->input.type == QuantType::kInt32) return nullptr;
  *source = p->inputs[0];
  return d;
}

// The integer layer's accumulator, dequantized to the float the QDQ graph defines: per output
// channel scale fl(x_scale * w_scale[c]), zero point 0.
DequantizeParams accumulator_dequantize(const QuantParams& xq, const QuantParams& wq, int channel_axis) {
  DequantizeParams d;
  d.input.type = QuantType::kInt32;
  d.input.scales.clear();
  for (size_t c = 0; c < wq.channels(); ++c) d.input.scales.push_back(xq.scale(0) * wq.scales[c]);
  d.input.zero_points.assign(d.input.scales.size(), 0);
  d.input.axis = wq.per_channel() ? channel_axis : -1;
  return d;
}

// The bias of a QDQ layer: DequantizeLinear of int32 with scale x_scale * w_scale (per channel)
// and zero point 0, as ONNX Runtime's quantizer writes it; anything else is refused.
std::vector<int32_t> qdq_bias(Importer& im, const Symbol& b, const QuantParams& xq, const QuantParams& wq, int64_t n) {
  const std::string why = "the bias of a quantized (QDQ) layer must be DequantizeLinear of an int32 constant with scale "
                          "x_scale * w_scale and zero point 0 (what ONNX Runtime's quantizer writes)";
  if (!b.quantized || b.quantized->params.type != QuantType::kInt32) im.fail(ErrorCode::kUnsupported, why);
  const QuantParams& bq = b.quantized->params;
  for (int64_t c = 0; c < n; ++c) {
    const float expected = xq.scale(0) * wq.scale(static_cast<size_t>(c));
    if (bq.scale(static_cast<size_t>(c)) != expected || bq.zero_point(static_cast<size_t>(c)) != 0) {
      im.fail(ErrorCode::kUnsupported, why + "; channel " + std::to_string(c) + " has scale " + num(bq.scale(static_cast<size_t>(c))) +
                                           " and zero point " + std::to_string(bq.zero_point(static_cast<size_t>(c))) + ", expected " +
                                           num(expected) + " and 0");
    }
  }
  return int32_bias(im, b.quantized->ints, n, "B");
}

}  // namespace

bool lower_qdq_conv(Importer& im, const Node_& node, Attributes& a) {
  Symbol& x = im.input(node, 0);
  Symbol& w = im.input(node, 1);
  ValueId source = -1;
  const DequantizeParams* dx = dequantized_from(im, x, &source);
  if (!dx || !w.is_const() || !w.quantized || w.quantized->params.type == QuantType::kInt32) return false;
  const QuantParams xq = dx->input;
  const Constant& wi = w.quantized->ints;
  const ConvShape cs = conv_shape(im, a, x, wi.dims);
  QuantParams wq = w.quantized->params;
  if (wq.per_channel() && wq.axis != 0) im.fail(ErrorCode::kUnsupported, "per-channel weights must be quantized along axis 0 (the filters)");
  QConvParams p = qconv_params(cs, wi);
  p.input = xq;
  p.weights = on_output_axis(wq, 3);
  if (im.has_input(node, 2)) p.bias = qdq_bias(im, im.input(node, 2), xq, wq, cs.m);
  const Perm perm = channels_last_perm(x.rank());
  Symbol xs = x;  // the integer tensor in x's layout
  xs.value = source;
  xs.dtype = quant_dtype(xq.type);
  const ValueId acc = im.emit_internal(node.output(0) + ":int32", p, {im.in_layout(xs, perm)});
  im.emit(node, 0, accumulator_dequantize(xq, p.weights, static_cast<int>(x.rank()) - 2), {acc}, perm);
  return true;
}

bool lower_qdq_dense(Importer& im, const Node_& node, bool trans_b, double alpha, int bias_in) {
  Symbol& x = im.input(node, 0);
  Symbol& w = im.input(node, 1);
  ValueId source = -1;
  const DequantizeParams* dx = dequantized_from(im, x, &source);
  if (!dx || !w.is_const() || !w.quantized || w.quantized->params.type == QuantType::kInt32) return false;
  if (alpha != 1.0) im.fail(ErrorCode::kUnsupported, "alpha must be 1 in a quantized (QDQ) Gemm");
  const QuantParams xq = dx->input;
  const Constant& bi = w.quantized->ints;
  if (bi.dims.size() != 2) im.fail("B must be a 2-D constant, got shape " + list_text(bi.dims));
  QuantParams wq = w.quantized->params;
  // Per-column scales run along the output axis: ONNX axis 1 of B, or 0 when transB.
  if (wq.per_channel() && wq.axis != (trans_b ? 0 : 1)) im.fail(ErrorCode::kUnsupported, "per-channel weights must be quantized along the output axis of B");
  const int64_t n = trans_b ? bi.dims[0] : bi.dims[1];
  std::vector<int32_t> bias;
  if (bias_in >= 0 && im.has_input(node, bias_in)) bias = qdq_bias(im, im.input(node, bias_in), xq, wq, n);
  Symbol xs = x;
  xs.value = source;
  xs.dtype = quant_dtype(xq.type);
  const Perm perm = dense_layout(im, xs);
  if (xs.dims.back() != (trans_b ? bi.dims[1] : bi.dims[0])) im.fail("B " + list_text(bi.dims) + " does not fit the input's last axis");
  QDenseParams p;
  p.units = n;
  p.input = xq;
  p.weights = on_output_axis(wq, 1);
  p.kernel = dense_kernel(bi, trans_b);
  p.bias = std::move(bias);
  const ValueId acc = im.emit_internal(node.output(0) + ":int32", p, {im.in_layout(xs, perm)});
  im.emit(node, 0, accumulator_dequantize(xq, p.weights, static_cast<int>(xs.rank()) - 2), {acc}, perm);
  return true;
}

// QuantizeLinear of [Relu / Clip(0, b) of] the dequantized accumulator of an integer layer: the
// layer requantizes instead. Only when every intermediate is read by this chain alone.
bool fold_quantize_into_producer(Importer& im, const Node_& node, Symbol& x, const QuantParams& yq) {
  if (yq.per_channel()) return false;
  Node* p = im.producer_of(x.value);
  if (!p || im.readers(x.origin) != 1) return false;
  double lo = -INFINITY, hi = INFINITY;
  if (const auto* act = std::get_if<ActivationParams>(&p->params)) {
    if (act->activation != ActivationKind::kRelu && act->activation != ActivationKind::kRelu6) return false;
    lo = 0.0;
    hi = act->activation == ActivationKind::kRelu6 ? 6.0 : INFINITY;
  } else if (const auto* r = std::get_if<ReluParams>(&p->params)) {
    if (r->negative_slope != 0.0 || r->threshold != 0.0) return false;
    lo = 0.0;
    hi = r->max_value;
  }
  const bool activation = std::isfinite(lo);
  if (activation) {
    // The activation reads the Dequantize node's value, which only it may read (in the file and
    // among the IR nodes made so far).
    p = im.producer_of(p->inputs[0]);
    if (!p || im.value_readers(p->output) != 1 || im.readers(im.graph_value(p->output).name) != 1) return false;
  }
  const auto* d = std::get_if<DequantizeParams>(&p->params);
  if (!d || d->input.type != QuantType::kInt32) return false;
  Node* layer = im.producer_of(p->inputs[0]);
  if (!layer || im.value_readers(layer->output) != 1) return false;
  IntegerOutput out;
  out.output = yq;
  out.act_lo = lo;
  out.act_hi = hi;
  if (auto* c = std::get_if<QConvParams>(&layer->params)) {
    if (c->out.output.type != QuantType::kInt32) return false;
    c->out = out;
  } else if (auto* m = std::get_if<QDenseParams>(&layer->params)) {
    if (m->out.output.type != QuantType::kInt32) return false;
    m->out = out;
  } else {
    return false;
  }
  im.reinfer(*layer);
  Symbol y = x;
  y.value = layer->output;
  y.dtype = quant_dtype(yq.type);
  im.alias(node, 0, y, x.perm);
  return true;
}

void add_quant_lowerings(LoweringTable& t) {
  t.add("QuantizeLinear", lower_quantize);
  t.add("DequantizeLinear", lower_dequantize);
  t.add("QLinearConv", lower_qlinear_conv);
  t.add("QLinearMatMul", lower_qlinear_matmul);
  t.add("ConvInteger", lower_conv_integer);
  t.add("MatMulInteger", lower_matmul_integer);
}

}  // namespace nnd::onnx_import
