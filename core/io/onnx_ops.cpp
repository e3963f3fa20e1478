// One lowering per ONNX operator onto the graph IR (see onnx_import.h for layouts and batch).
// A lowering reads its node's inputs and attributes, folds what is constant, and emits IR nodes;
// anything it cannot express exactly is refused with a message naming the attribute or input.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <utility>

#include "core/io/onnx_import.h"
#include "core/ir/resize.h"
#include "core/util/error.h"

namespace nnd::onnx_import {
namespace {

using Node_ = onnx::NodeProto;

std::string list_text(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
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

// Parameters the loader makes up (affine maps, biases) are per-axis vectors; an axis this long
// is no real model, and refusing it keeps a hostile file from allocating gigabytes.
constexpr int64_t kMaxMadeUpParameters = int64_t{1} << 24;

Weights filled(int64_t n, float v) {
  if (n > kMaxMadeUpParameters) {
    throw Error(ErrorCode::kLimit, "a per-axis parameter vector of " + std::to_string(n) + " elements exceeds the limit of " +
                std::to_string(kMaxMadeUpParameters));
  }
  return Weights::filled(n, v);
}

// Integer list from an attribute, or from constant input `n` when the opset moved it there.
std::optional<std::vector<int64_t>> ints_from(Importer& im, const Node_& node, Attributes& a,
                                              const std::string& attr, int n) {
  if (auto v = a.ints(attr)) return v;
  if (im.has_input(node, n)) return im.const_input(node, n, attr).as_ints(im.context() + ": " + attr);
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// A constant operand of an element-wise operation on a tensor `x`: a scalar, or a vector along one
// ONNX axis of x (numpy broadcasting).
struct AxisVector {
  int axis = -1;  // ONNX axis, -1 for a scalar
  std::vector<double> values;
};

AxisVector axis_vector(Importer& im, const Symbol& x, const Constant& c) {
  if (c.dims.size() > x.rank()) im.fail("the constant operand has more axes than the tensor");
  AxisVector v;
  const size_t off = x.rank() - c.dims.size();
  for (size_t k = 0; k < c.dims.size(); ++k) {
    const int64_t d = c.dims[k];
    if (d == 1) continue;
    const size_t axis = k + off;
    if (axis == 0) im.fail("the constant operand varies along the batch axis");
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

// y = x * scale + shift along the axis of `scale`/`shift` (an IR BatchNormalization with mean 0,
// variance 1, epsilon 0). Both vectors have one value (scalar) or the axis length.
BatchNormParams affine_params(Importer& im, const Symbol& x, int onnx_axis, std::vector<double> scale,
                              std::vector<double> shift) {
  const int axis = onnx_axis >= 1 ? onnx_axis : static_cast<int>(x.perm[x.rank() - 1]);
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

void emit_affine(Importer& im, const Node_& node, Symbol& x, int onnx_axis, std::vector<double> scale,
                 std::vector<double> shift) {
  const Perm perm = x.perm;
  im.emit(node, 0, affine_params(im, x, onnx_axis, std::move(scale), std::move(shift)), {x.value}, perm);
}

// The element-wise layer `params` on the node's one computed input.
void emit_activation(Importer& im, const Node_& node, LayerParams params) {
  Symbol& x = im.dynamic_input(node, 0);
  const Perm perm = x.perm;
  im.emit(node, 0, std::move(params), {x.value}, perm);
}

// Adds a per-channel bias to the Dense or Conv node producing `x` when that node has none yet and
// `x` is read only here (MatMul + Add from tf2onnx, Conv without bias + Add). Returns whether it did.
bool fold_bias_into_producer(Importer& im, const Node_& node, const std::string& x_name, Symbol& x,
                             const AxisVector& bias) {
  // Only a tensor its producer emitted under this name (not an alias of another, which may have
  // other readers) and that nothing else reads.
  if (im.readers(x_name) != 1 || x.origin != x_name) return false;
  Node* p = im.producer_of(x.value);
  if (!p) return false;
  const int last = x.perm.back();
  if (bias.axis >= 0 && bias.axis != last) return false;
  return std::visit(
      [&](auto& params) {
        using T = std::decay_t<decltype(params)>;
        if constexpr (std::is_same_v<T, DenseParams> || std::is_same_v<T, ConvParams> ||
                      std::is_same_v<T, DepthwiseConvParams> || std::is_same_v<T, ConvTransposeParams>) {
          if (!params.bias.empty() || params.activation != ActivationKind::kLinear) return false;
          if constexpr (!std::is_same_v<T, ConvTransposeParams>) {
            if (params.residual) return false;
          }
          const int64_t n = x.dims[static_cast<size_t>(last)];
          params.bias = filled(n, 0.0f);
          for (int64_t i = 0; i < n; ++i) {
            params.bias.data[static_cast<size_t>(i)] =
                static_cast<float>(bias.values[bias.values.size() == 1 ? 0 : static_cast<size_t>(i)]);
          }
          Symbol same = x;
          im.alias(node, 0, same, same.perm);
          return true;
        } else {
          return false;
        }
      },
      p->params);
}

// ---------------------------------------------------------------------------------------------
// Plumbing and constants

void lower_identity(Importer& im, const Node_& node, Attributes& a) {
  a.ignore("seed");
  a.ignore("ratio");
  a.ignore("is_test");
  if (node.op_type() == "Dropout" && im.has_input(node, 2)) {
    const Constant& training = im.const_input(node, 2, "training_mode");
    if (training.size() == 1 && training.real_at(0) != 0) im.fail("training_mode is true; nnd runs inference");
  }
  const Symbol& s = im.input(node, 0);
  im.alias(node, 0, s, s.perm);
}

void lower_constant(Importer& im, const Node_& node, Attributes& a) {
  Constant c;
  if (const auto* t = a.t("value")) {
    c = decode_tensor(*t, im.context() + ": value");
  } else if (a.has("value_float")) {
    c.reals = {a.f("value_float", 0)};
  } else if (a.has("value_int")) {
    c.is_int = true;
    c.ints = {a.i("value_int", 0)};
  } else if (auto fs = a.floats("value_floats")) {
    c.dims = {static_cast<int64_t>(fs->size())};
    c.reals = *fs;
  } else if (auto is = a.ints("value_ints")) {
    c.is_int = true;
    c.dims = {static_cast<int64_t>(is->size())};
    c.ints = *is;
  } else {
    im.fail(ErrorCode::kUnsupported, "has no value attribute nnd reads (value, value_float(s), value_int(s))");
  }
  im.set_constant(node, 0, std::move(c), /*from_file=*/true);
}

void lower_constant_of_shape(Importer& im, const Node_& node, Attributes& a) {
  const std::vector<int64_t> dims = im.const_input(node, 0, "shape").as_ints(im.context() + ": shape");
  Constant fill;
  fill.reals = {0.0};
  if (const auto* t = a.t("value")) fill = decode_tensor(*t, im.context() + ": value");
  if (fill.size() != 1) im.fail("value must hold one element");
  Constant c;
  c.is_int = fill.is_int;
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d == kBatchMarker) {
      // Zeros of shape [.., N, ..] (PyTorch's initial RNN state): the values repeat over the
      // batch, so length 1 there is exact for every reader that broadcasts.
      c.batch_broadcast = true;
      c.dims.push_back(1);
      continue;
    }
    if (d < 0) im.fail("the shape is negative");
    c.dims.push_back(d);
  }
  check_fold_size(c.dims, im.context());
  for (int64_t d : c.dims) n *= d;
  if (c.is_int) c.ints.assign(static_cast<size_t>(n), fill.int_at(0));
  else c.reals.assign(static_cast<size_t>(n), fill.real_at(0));
  im.set_constant(node, 0, std::move(c));
}

void lower_shape(Importer& im, const Node_& node, Attributes& a) {
  const Symbol& s = im.input(node, 0);
  if (s.is_const() && s.constant->batch_broadcast) im.fail("the shape of a constant filled over the batch size is not known at load time");
  Constant c;
  c.is_int = true;
  c.ints = s.is_const() ? s.constant->dims : s.dims;
  const int64_t r = static_cast<int64_t>(c.ints.size());
  int64_t start = a.i("start", 0), end = a.i("end", r);
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = std::clamp<int64_t>(start, 0, r);
  end = std::clamp<int64_t>(end, start, r);
  c.ints = std::vector<int64_t>(c.ints.begin() + start, c.ints.begin() + end);
  c.dims = {static_cast<int64_t>(c.ints.size())};
  im.set_constant(node, 0, std::move(c));
}


bool is_integer_type(int64_t t) {
  return t == onnx::TensorProto_DataType_INT64 || t == onnx::TensorProto_DataType_INT32 ||
         t == onnx::TensorProto_DataType_INT16 || t == onnx::TensorProto_DataType_INT8 ||
         t == onnx::TensorProto_DataType_UINT8 || t == onnx::TensorProto_DataType_UINT16 ||
         t == onnx::TensorProto_DataType_UINT32 || t == onnx::TensorProto_DataType_UINT64 ||
         t == onnx::TensorProto_DataType_BOOL;
}

void lower_cast(Importer& im, const Node_& node, Attributes& a) {
  const int64_t to = a.i("to", 0);
  a.ignore("saturate");
  const Symbol& s = im.input(node, 0);
  if (s.is_const()) {
    im.set_constant(node, 0, fold_cast(*s.constant, is_integer_type(to), im.context()));
    return;
  }
  if (to != onnx::TensorProto_DataType_FLOAT) {
    im.fail(ErrorCode::kUnsupported, "cast of a computed tensor to type " + std::to_string(to) + " (only to float is supported)");
  }
  im.alias(node, 0, s, s.perm);
}

// Element-wise unary operators on constants (shape arithmetic in exported graphs).
void lower_const_unary(Importer& im, const Node_& node, Attributes&) {
  const std::string& op = node.op_type();
  if (!im.input(node, 0).is_const()) {
    Symbol& x = im.dynamic_input(node, 0);
    if (op == "Reciprocal" || op == "Sqrt" || op == "Abs") {
      emit_activation(im, node, ActivationParams{op == "Sqrt"  ? ActivationKind::kSqrt
                                                 : op == "Abs" ? ActivationKind::kAbs
                                                               : ActivationKind::kReciprocal});
    } else if (op == "Neg") {
      emit_affine(im, node, x, -1, {-1.0}, {0.0});
    } else {
      im.fail(ErrorCode::kUnsupported, "'" + op + "' of a computed tensor is not supported (nnd folds it on constants only)");
    }
    return;
  }
  const Constant& c = *im.input(node, 0).constant;
  Constant out = c;
  if (c.is_int && (op == "Neg" || op == "Abs")) {
    for (auto& v : out.ints) {
      if (v == kBatchMarker) im.fail(ErrorCode::kUnsupported, "arithmetic on the batch size cannot be folded at load time");
      v = op == "Neg" ? -v : std::abs(v);
    }
  } else {
    out = fold_cast(c, false, im.context());
    for (auto& v : out.reals) {
      if (op == "Neg") v = -v;
      else if (op == "Abs") v = std::fabs(v);
      else if (op == "Sqrt") v = std::sqrt(v);
      else if (op == "Reciprocal") v = 1.0 / v;
      else if (op == "Floor") v = std::floor(v);
      else if (op == "Ceil") v = std::ceil(v);
      else if (op == "Erf") v = std::erf(v);
    }
  }
  im.set_constant(node, 0, std::move(out));
}

// Equal and Where on constants (the shape arithmetic of some `expand` exports).
void lower_equal(Importer& im, const Node_& node, Attributes&) {
  const Constant& a = im.const_input(node, 0, "A");
  const Constant& b = im.const_input(node, 1, "B");
  im.set_constant(node, 0, fold_equal(a, b, im.context()));
}

void lower_where(Importer& im, const Node_& node, Attributes&) {
  const Constant& cond = im.const_input(node, 0, "condition");
  const Constant& x = im.const_input(node, 1, "X");
  const Constant& y = im.const_input(node, 2, "Y");
  im.set_constant(node, 0, fold_where(cond, x, y, im.context()));
}

// ---------------------------------------------------------------------------------------------
// Shape-changing operators

// Gives `x` the ONNX dims `dims` in layout `perm` without moving data (a Reshape when the IR
// shape changes).
void reshape_in_place(Importer& im, const Node_& node, Symbol& x, const std::vector<int64_t>& dims,
                      const Perm& perm) {
  Dims target;
  for (size_t j = 1; j < perm.size(); ++j) target.push_back(dims[static_cast<size_t>(perm[j])]);
  if (target == im.ir_shape(x.value)) {
    im.alias(node, 0, x, perm);
  } else {
    im.emit(node, 0, ReshapeParams{target}, {x.value}, perm);
  }
}

void lower_unsqueeze(Importer& im, const Node_& node, Attributes& a) {
  const auto axes_in = ints_from(im, node, a, "axes", 1);
  if (!axes_in) im.fail("axes are missing");
  Symbol& x = im.input(node, 0);
  const std::vector<int64_t> old_dims = x.is_const() ? x.constant->dims : x.dims;
  const int64_t r = static_cast<int64_t>(old_dims.size() + axes_in->size());
  std::vector<bool> inserted(static_cast<size_t>(r), false);
  for (int64_t ax : *axes_in) {
    const int64_t k = ax < 0 ? ax + r : ax;
    if (k < 0 || k >= r || inserted[static_cast<size_t>(k)]) im.fail("axes " + list_text(*axes_in) + " are invalid");
    inserted[static_cast<size_t>(k)] = true;
  }
  std::vector<int64_t> dims;
  std::vector<int> old_to_new;
  for (int64_t k = 0, o = 0; k < r; ++k) {
    if (inserted[static_cast<size_t>(k)]) {
      dims.push_back(1);
    } else {
      old_to_new.push_back(static_cast<int>(k));
      dims.push_back(old_dims[static_cast<size_t>(o++)]);
    }
  }
  if (x.is_const()) {
    Constant c = *x.constant;
    c.dims = dims;
    im.set_constant(node, 0, std::move(c));
    return;
  }
  if (inserted[0]) im.fail(ErrorCode::kUnsupported, "inserting an axis before the batch axis is not supported");
  // New axes sit in the IR right after the IR position of the ONNX axis before them.
  Perm perm;
  for (int old : x.perm) perm.push_back(old_to_new[static_cast<size_t>(old)]);
  for (int64_t k = 1; k < r; ++k) {
    if (!inserted[static_cast<size_t>(k)]) continue;
    const auto it = std::find(perm.begin(), perm.end(), static_cast<int>(k - 1));
    perm.insert(it + 1, static_cast<int>(k));
  }
  reshape_in_place(im, node, x, dims, perm);
}

void lower_squeeze(Importer& im, const Node_& node, Attributes& a) {
  Symbol& x = im.input(node, 0);
  const std::vector<int64_t> old_dims = x.is_const() ? x.constant->dims : x.dims;
  const int64_t r = static_cast<int64_t>(old_dims.size());
  std::vector<bool> drop(static_cast<size_t>(r), false);
  if (const auto axes = ints_from(im, node, a, "axes", 1)) {
    for (int64_t ax : *axes) {
      const int64_t k = ax < 0 ? ax + r : ax;
      if (k < 0 || k >= r) im.fail("axis " + std::to_string(ax) + " is out of range");
      if (!x.is_const() && k == x.perm[0]) im.fail(ErrorCode::kUnsupported, "squeezing the batch axis is not supported");
      if (old_dims[static_cast<size_t>(k)] != 1) im.fail("axis " + std::to_string(ax) + " does not have length 1");
      drop[static_cast<size_t>(k)] = true;
    }
  } else {
    for (int64_t k = 0; k < r; ++k) {
      const bool batch = !x.is_const() && k == x.perm[0];
      drop[static_cast<size_t>(k)] = !batch && old_dims[static_cast<size_t>(k)] == 1;
    }
  }
  std::vector<int64_t> dims;
  std::vector<int> old_to_new(static_cast<size_t>(r), -1);
  for (int64_t k = 0; k < r; ++k) {
    if (drop[static_cast<size_t>(k)]) continue;
    old_to_new[static_cast<size_t>(k)] = static_cast<int>(dims.size());
    dims.push_back(old_dims[static_cast<size_t>(k)]);
  }
  if (x.is_const()) {
    Constant c = *x.constant;
    c.dims = dims;
    im.set_constant(node, 0, std::move(c));
    return;
  }
  if (dims.size() < 2) im.fail("the result would have no axis besides the batch");
  Perm perm;
  for (int old : x.perm) {
    if (old_to_new[static_cast<size_t>(old)] >= 0) perm.push_back(old_to_new[static_cast<size_t>(old)]);
  }
  reshape_in_place(im, node, x, dims, perm);
}

void lower_transpose(Importer& im, const Node_& node, Attributes& a) {
  Symbol& x = im.input(node, 0);
  std::vector<int64_t> p = a.ints("perm").value_or(std::vector<int64_t>{});
  if (x.is_const()) {
    im.set_constant(node, 0, fold_transpose(*x.constant, p, im.context()));
    return;
  }
  const size_t r = x.rank();
  if (p.empty()) {
    for (size_t k = 0; k < r; ++k) p.push_back(static_cast<int64_t>(r - 1 - k));
  }
  if (p.size() != r) im.fail("perm " + list_text(p) + " does not match rank " + std::to_string(r));
  std::vector<int> inverse(r, -1);
  for (size_t i = 0; i < r; ++i) {
    if (p[i] < 0 || p[i] >= static_cast<int64_t>(r) || inverse[static_cast<size_t>(p[i])] >= 0) {
      im.fail("perm " + list_text(p) + " is not a permutation");
    }
    inverse[static_cast<size_t>(p[i])] = static_cast<int>(i);
  }
  // The batch may move (a recurrent operator's time-major layout): IR axis 0 stays the batch, and
  // the importer refuses the tensor for operators that need the batch first (Importer::input).
  Perm perm;
  for (int old : x.perm) perm.push_back(inverse[static_cast<size_t>(old)]);
  im.alias(node, 0, x, perm);  // no data moves: only the layout's meaning changes
}

// Reshape of a tensor whose batch is ONNX axis b > 0 (time-major, around recurrent operators):
// the axes before the batch and the batch itself must be kept (0 or their own length), the axes
// after it may be regrouped. In the layout with the batch pulled to the front that is a Reshape of
// the per-sample elements, which keep their order.
void reshape_behind_batch(Importer& im, const Node_& node, Symbol& x, const std::vector<int64_t>& t) {
  const auto b = static_cast<size_t>(x.perm[0]);
  if (t.size() <= b) im.fail("the target shape " + list_text(t) + " drops the batch axis (axis " + std::to_string(b) + ")");
  std::vector<int64_t> dims;
  for (size_t k = 0; k <= b; ++k) {
    const int64_t d = t[k] == 0 ? x.dims[k] : t[k];
    if (d != x.dims[k]) {
      im.fail("the target shape " + list_text(t) + " changes axis " + std::to_string(k) + ", at or before the batch axis (" +
              std::to_string(b) + ")");
    }
    dims.push_back(d);
  }
  int64_t tail = 1, known = 1;
  for (size_t k = b + 1; k < x.rank(); ++k) tail *= x.dims[k];
  int unknown = -1;
  for (size_t k = b + 1; k < t.size(); ++k) {
    int64_t d = t[k] == 0 && k < x.rank() ? x.dims[k] : t[k];
    if (d == -1) {
      if (unknown >= 0) im.fail("the target shape has more than one -1");
      unknown = static_cast<int>(dims.size());
    } else if (d < 1 || d > tail) {
      im.fail("the target shape " + list_text(t) + " does not fit the input");
    } else {
      known *= d;
    }
    dims.push_back(d);
  }
  if (unknown >= 0) {
    if (tail % known) im.fail("the target shape " + list_text(t) + " does not fit the input");
    dims[static_cast<size_t>(unknown)] = tail / known;
  } else if (known != tail) {
    im.fail("the target shape " + list_text(t) + " does not fit the input");
  }
  const Perm perm = batch_front_perm(dims.size(), static_cast<int>(b));
  const ValueId v = im.in_layout(x, batch_front_perm(x.rank(), static_cast<int>(b)));
  Dims sample;
  for (size_t j = 1; j < perm.size(); ++j) sample.push_back(dims[static_cast<size_t>(perm[j])]);
  if (sample.empty()) im.fail("the result would have no axis besides the batch");
  if (sample == im.ir_shape(v)) {
    Symbol s = x;
    s.value = v;
    im.alias(node, 0, s, perm);
    return;
  }
  im.emit(node, 0, ReshapeParams{sample}, {v}, perm);
}

void lower_reshape(Importer& im, const Node_& node, Attributes& a) {
  const bool allow_zero = a.i("allowzero", 0) != 0;
  Symbol& x = im.input(node, 0);
  std::vector<int64_t> t = im.const_input(node, 1, "shape").as_ints(im.context() + ": shape");
  if (x.is_const()) {
    Constant c = *x.constant;
    int64_t known = 1, unknown = -1;
    for (size_t k = 0; k < t.size(); ++k) {
      if (t[k] == 0 && !allow_zero) t[k] = k < c.dims.size() ? c.dims[k] : 0;
      if (t[k] == -1) unknown = static_cast<int64_t>(k);
      else known *= t[k];
    }
    if (unknown >= 0) t[static_cast<size_t>(unknown)] = known ? c.size() / known : 0;
    int64_t count = 1;
    for (int64_t d : t) {
      if (d < 0 || (d != 0 && count > c.size() / d)) im.fail("the target shape " + list_text(t) + " does not fit the constant");
      count *= d;
    }
    if (count != c.size()) im.fail("the target shape " + list_text(t) + " does not fit the constant");
    c.dims = t;
    im.set_constant(node, 0, std::move(c));
    return;
  }
  if (t.empty()) im.fail("the target shape is empty");
  if (allow_zero && std::count(t.begin(), t.end(), 0)) im.fail("allowzero with a 0 in the shape");
  if (x.perm[0] != 0) {
    reshape_behind_batch(im, node, x, t);
    return;
  }
  int64_t per_sample = 1;
  for (size_t k = 1; k < x.rank(); ++k) per_sample *= x.dims[k];
  std::vector<int64_t> sample;
  int unknown = -1;
  int64_t known = 1;
  for (size_t k = 1; k < t.size(); ++k) {
    int64_t d = t[k];
    if (d == 0) d = k < x.rank() ? x.dims[k] : 0;
    if (d == kBatchMarker) im.fail("the target shape " + list_text(t) + " puts the batch size on axis " + std::to_string(k));
    if (d == -1) {
      if (unknown >= 0) im.fail("the target shape has more than one -1");
      unknown = static_cast<int>(sample.size());
    } else if (d < 1 || d > per_sample) {
      im.fail("the target shape " + list_text(t) + " has a dimension " + std::to_string(d) +
              " that does not fit " + std::to_string(per_sample) + " elements per sample");
    } else {
      known *= d;
    }
    sample.push_back(d);
  }
  if (unknown >= 0) {
    if (known == 0 || per_sample % known) im.fail("the target shape " + list_text(t) + " does not fit the input");
    sample[static_cast<size_t>(unknown)] = per_sample / known;
    known = per_sample;
  }
  // Axis 0 must be the batch: the marker, 0 (copy), -1 or a literal batch with the rest fitting.
  if (known != per_sample || (t[0] == -1 && unknown >= 0)) {
    im.fail("the target shape " + list_text(t) + " moves data across the batch axis (input " +
            std::to_string(per_sample) + " elements per sample)");
  }
  if (sample.empty()) im.fail("the result would have no axis besides the batch");
  const ValueId v = im.in_layout(x, identity_perm(x.rank()));
  std::vector<int64_t> dims{kBatchMarker};
  dims.insert(dims.end(), sample.begin(), sample.end());
  if (Dims(sample) == im.ir_shape(v)) {
    Symbol s = x;
    s.value = v;
    s.perm = identity_perm(x.rank());
    im.alias(node, 0, s, s.perm);
    return;
  }
  im.emit(node, 0, ReshapeParams{Dims(sample)}, {v}, identity_perm(dims.size()));
}

void lower_flatten(Importer& im, const Node_& node, Attributes& a) {
  Symbol& x = im.dynamic_input(node, 0);
  const int64_t axis = a.i("axis", 1);
  const int64_t r = static_cast<int64_t>(x.rank());
  const int64_t k = axis < 0 ? axis + r : axis;
  if (k < 1 || k > r) im.fail(ErrorCode::kUnsupported, "axis " + std::to_string(axis) + ": flattening into the batch axis is not supported");
  const ValueId v = im.in_layout(x, identity_perm(x.rank()));
  Dims target;
  for (int64_t i = 1; i < k; ++i) target.push_back(x.dims[static_cast<size_t>(i)]);
  int64_t rest = 1;
  for (int64_t i = k; i < r; ++i) rest *= x.dims[static_cast<size_t>(i)];
  target.push_back(rest);
  if (target == im.ir_shape(v)) {
    Symbol s = x;
    s.value = v;
    s.perm = identity_perm(x.rank());
    im.alias(node, 0, s, s.perm);
    return;
  }
  im.emit(node, 0, ReshapeParams{target}, {v}, identity_perm(target.size() + 1));
}

void lower_concat(Importer& im, const Node_& node, Attributes& a) {
  const int64_t axis = a.i("axis", 0);
  bool all_const = true, any_const = false;
  for (int k = 0; k < node.input_size(); ++k) {
    const bool c = im.input(node, k).is_const();
    all_const = all_const && c;
    any_const = any_const || c;
  }
  if (all_const) {
    std::vector<const Constant*> parts;
    for (int k = 0; k < node.input_size(); ++k) parts.push_back(&*im.input(node, k).constant);
    im.set_constant(node, 0, fold_concat(parts, axis, im.context()));
    return;
  }
  if (any_const) im.fail(ErrorCode::kUnsupported, "concatenating constants with computed tensors is not supported");
  Symbol& first = im.input(node, 0);
  const int64_t onnx_axis = im.onnx_axis(first, axis);
  if (onnx_axis == 0) im.fail(ErrorCode::kUnsupported, "concatenation along the batch axis is not supported");
  const Perm perm = first.perm;
  std::vector<ValueId> ins;
  for (int k = 0; k < node.input_size(); ++k) {
    Symbol& s = im.input(node, k);
    if (s.rank() != first.rank()) im.fail("inputs of different ranks");
    ins.push_back(im.in_layout(s, perm));
  }
  ConcatParams p;
  p.keras_axis = im.ir_axis(first, onnx_axis);
  im.emit(node, 0, p, ins, perm);
}

// IR nodes applied one after another to one value, each with the suffix naming its value.
using Steps = std::vector<std::pair<std::string, LayerParams>>;

// Emits `steps` on `v` as internal values named "<name>:<suffix>"; returns the last.
ValueId emit_internal_steps(Importer& im, const std::string& name, ValueId v, Steps steps) {
  for (auto& [suffix, params] : steps) v = im.emit_internal(name + ":" + suffix, std::move(params), {v});
  return v;
}

// Emits `steps` on `v`, the last as output `out` of `node` with the dims and layout of `result`
// (an alias of `v` when there are no steps).
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

// The steps of emit_crop's crop of `x` by one IR Cropping on a view of its memory (see there), or
// nothing when no view crops at most two axes.
std::optional<Steps> crop_steps(Importer& im, const Symbol& x, const std::vector<int64_t>& crop_begin,
                                const std::vector<int64_t>& crop_end) {
  struct Span {
    int64_t len, begin, end;
    bool cropped() const { return begin || end; }
  };
  std::vector<Span> axes;  // IR order, batch excluded
  Dims result;
  for (size_t j = 1; j < x.rank(); ++j) {
    const size_t a = static_cast<size_t>(x.perm[j]);
    axes.push_back({x.dims[a], crop_begin[a], crop_end[a]});
    result.push_back(x.dims[a] - crop_begin[a] - crop_end[a]);
  }
  const auto last_cropped = std::find_if(axes.rbegin(), axes.rend(), [](const Span& s) { return s.cropped(); });
  if (last_cropped == axes.rend()) return Steps{};
  std::vector<Span> view;
  if ((axes.size() == 2 || axes.size() == 3) && !axes.back().cropped()) {
    view = axes;  // already the shape of a Cropping1D/2D
  } else {
    const auto inner = last_cropped.base();  // the uncropped axes after the last cropped one
    for (auto it = axes.begin(); it != inner; ++it) {
      if (view.empty() || it->cropped()) {
        view.push_back(*it);
      } else {
        view.back().len *= it->len;
        view.back().begin *= it->len;
        view.back().end *= it->len;
      }
    }
    Span kept{1, 0, 0};
    for (auto it = inner; it != axes.end(); ++it) kept.len *= it->len;
    view.push_back(kept);
  }
  if (view.size() > 3) return std::nullopt;
  CroppingParams cp;
  cp.rank = static_cast<int>(view.size()) - 1;
  cp.left = view[view.size() - 2].begin;
  cp.right = view[view.size() - 2].end;
  if (cp.rank == 2) {
    cp.top = view[0].begin;
    cp.bottom = view[0].end;
  }
  Dims view_shape, cropped_shape;
  for (const Span& s : view) {
    view_shape.push_back(s.len);
    cropped_shape.push_back(s.len - s.begin - s.end);
  }
  Steps steps;
  if (view_shape != im.ir_shape(x.value)) steps.emplace_back("view", ReshapeParams{view_shape});
  steps.emplace_back("crop", cp);
  if (cropped_shape != result) steps.emplace_back("shape", ReshapeParams{result});
  return steps;
}

// Crops computed `x` by crop_begin[a] / crop_end[a] elements at the two ends of each ONNX axis a,
// as output `out` of `node`, in x's own layout. An IR Cropping crops one or two axes of a tensor
// whose last axis is kept whole, so the crop runs on a view of x's memory (free Reshapes):
// a cropped axis absorbs the uncropped axes inside it (its crop scales by their size), uncropped
// outer axes merge into one, and the uncropped inner axes become the kept last axis (of length
// 1 when the innermost axis is cropped). Only the crop itself moves data, whatever the layout.
// Where no view has at most two cropped axes (three cropped axes, or an uncropped one outside two
// cropped ones), the innermost cropped axis is cropped first, alone (the axes outside it merge
// into one), then the rest.
void emit_crop(Importer& im, const Node_& node, int out, Symbol& x, std::vector<int64_t> crop_begin,
               std::vector<int64_t> crop_end) {
  const std::string& name = node.output(out);
  Symbol part = x;  // the tensor left to crop
  for (int stage = 0;; ++stage) {
    if (std::optional<Steps> steps = crop_steps(im, part, crop_begin, crop_end)) {
      Symbol result = part;
      for (size_t a = 1; a < part.rank(); ++a) result.dims[a] -= crop_begin[a] + crop_end[a];
      emit_steps(im, node, out, result, part.value, std::move(*steps));
      return;
    }
    const auto first = static_cast<size_t>(*std::find_if(part.perm.rbegin(), part.perm.rend() - 1, [&](int a) {
      return crop_begin[static_cast<size_t>(a)] != 0 || crop_end[static_cast<size_t>(a)] != 0;
    }));
    std::vector<int64_t> begin_now(part.rank(), 0), end_now(part.rank(), 0);
    begin_now[first] = std::exchange(crop_begin[first], 0);
    end_now[first] = std::exchange(crop_end[first], 0);
    part.value = emit_internal_steps(im, name + ":" + std::to_string(stage), part.value,
                                     *crop_steps(im, part, begin_now, end_now));
    part.dims[first] -= begin_now[first] + end_now[first];
  }
}

// Constant indices along a non-batch axis of a computed tensor. One index (PyTorch's
// `out[:, -1, :]`, the last step of a recurrent layer) is a crop to that row, then the axis
// dropped (scalar index) or kept with length 1 (one-element list); a list of indices (`x[:, [2, 1,
// 0]]`, BGR <-> RGB) is an IR Gather in x's layout.
void gather_computed(Importer& im, const Node_& node, Symbol& x, const Constant& idx, int64_t axis) {
  if (idx.dims.size() > 1) {
    im.fail("indices of shape " + list_text(idx.dims) + ": gathering from a computed tensor takes one index or a list");
  }
  const int64_t a = im.onnx_axis(x, axis);
  if (a == x.perm[0]) im.fail(ErrorCode::kUnsupported, "gathering along the batch axis is not supported");
  const int64_t len = x.dims[static_cast<size_t>(a)];
  if (idx.size() > kMaxMadeUpParameters) im.fail(ErrorCode::kLimit, "too many indices");
  std::vector<int64_t> picked;
  for (int64_t k = 0; k < idx.size(); ++k) {
    const auto given = static_cast<int64_t>(idx.real_at(k));
    const int64_t i = given < 0 ? given + len : given;
    if (i < 0 || i >= len) im.fail("index " + std::to_string(given) + " is out of range for length " + std::to_string(len));
    picked.push_back(i);
  }
  if (picked.empty()) im.fail("the index list is empty");
  if (picked.size() > 1) {
    Symbol result = x;
    result.dims[static_cast<size_t>(a)] = static_cast<int64_t>(picked.size());
    emit_steps(im, node, 0, result, x.value, {{"gather", GatherParams{im.ir_axis(x, a) - 1, std::move(picked)}}});
    return;
  }
  const int64_t i = picked[0];
  std::vector<int64_t> begin(x.rank(), 0), end(x.rank(), 0);
  begin[static_cast<size_t>(a)] = i;
  end[static_cast<size_t>(a)] = len - 1 - i;
  emit_crop(im, node, 0, x, begin, end);
  if (!idx.dims.empty()) return;
  Symbol& row = im.tensor(node.output(0));
  std::vector<int64_t> dims = row.dims;
  dims.erase(dims.begin() + a);
  Perm perm;
  for (int p : row.perm) {
    if (p != a) perm.push_back(p > a ? p - 1 : p);
  }
  if (dims.size() < 2) im.fail("the result would have no axis besides the batch");
  reshape_in_place(im, node, row, dims, perm);
}

void lower_gather(Importer& im, const Node_& node, Attributes& a) {
  const int64_t axis = a.i("axis", 0);
  const Constant& idx = im.const_input(node, 1, "indices");
  Symbol& data = im.input(node, 0);
  if (!data.is_const()) {
    gather_computed(im, node, data, idx, axis);
    return;
  }
  im.set_constant(node, 0, fold_gather(*data.constant, idx, axis, im.context()));
}


// The layout in which a 1x1 max pool keeps every stride[a]-th element along each ONNX axis a of
// `x`: the strided axes spatial, an unstrided axis last (the channel; x's own last one when it
// is unstrided). Rank 3 and 4 tensors, at most rank - 2 strided axes.
Perm subsample_layout(Importer& im, const Symbol& x, const std::vector<int64_t>& stride) {
  const size_t r = x.rank();
  std::vector<int64_t> strided;
  for (size_t a = 1; a < r; ++a) {
    if (stride[a] > 1) strided.push_back(static_cast<int64_t>(a));
  }
  if ((r != 3 && r != 4) || strided.size() > r - 2) {
    im.fail(ErrorCode::kUnsupported, "a slice with steps on axes " + list_text(strided) + " of a rank-" + std::to_string(r) +
            " tensor is not supported (steps on at most rank - 2 axes of a rank 3 or 4 tensor)");
  }
  int channel = x.perm.back();  // stays last when unstrided: no layout change
  if (stride[static_cast<size_t>(channel)] > 1) {
    for (size_t a = r; a-- > 1;) {
      if (stride[a] == 1) channel = static_cast<int>(a);
    }
  }
  Perm perm{0};
  for (int a : x.perm) {
    if (a != 0 && a != channel) perm.push_back(a);
  }
  perm.push_back(channel);
  return perm;
}

// Keeps every stride[a]-th element along each ONNX axis a of `x` (output 0 of `node`, replaced).
void subsample(Importer& im, const Node_& node, Symbol& x, const std::vector<int64_t>& stride) {
  const size_t r = x.rank();
  const Perm perm = subsample_layout(im, x, stride);
  const ValueId in = im.in_layout(x, perm);
  PoolParams p;
  p.kind = PoolKind::kMax;
  p.rank = static_cast<int>(r) - 2;
  if (p.rank == 2) {
    p.window.stride_h = stride[static_cast<size_t>(perm[1])];
    p.window.stride_w = stride[static_cast<size_t>(perm[2])];
  } else {
    p.window.stride_w = stride[static_cast<size_t>(perm[1])];
  }
  im.emit(node, 0, p, {in}, perm);
}

void lower_slice(Importer& im, const Node_& node, Attributes& a) {
  std::vector<int64_t> starts, ends, axes, steps;
  if (a.has("starts")) {  // opset < 10
    starts = *a.ints("starts");
    ends = a.ints("ends").value_or(std::vector<int64_t>{});
    axes = a.ints("axes").value_or(std::vector<int64_t>{});
  } else {
    starts = im.const_input(node, 1, "starts").as_ints(im.context() + ": starts");
    ends = im.const_input(node, 2, "ends").as_ints(im.context() + ": ends");
    if (im.has_input(node, 3)) axes = im.const_input(node, 3, "axes").as_ints(im.context() + ": axes");
    if (im.has_input(node, 4)) steps = im.const_input(node, 4, "steps").as_ints(im.context() + ": steps");
  }
  Symbol& x = im.input(node, 0);
  if (x.is_const()) {
    im.set_constant(node, 0, fold_slice(*x.constant, starts, ends, axes, steps, im.context()));
    return;
  }
  if (axes.empty()) {
    for (size_t k = 0; k < starts.size(); ++k) axes.push_back(static_cast<int64_t>(k));
  }
  if (starts.size() != ends.size() || axes.size() != starts.size()) im.fail("starts, ends and axes differ in length");
  if (!steps.empty() && steps.size() != starts.size()) im.fail("steps and starts differ in length");
  const size_t r = x.rank();
  std::vector<int64_t> crop_begin(r, 0), crop_end(r, 0), stride(r, 1);
  struct Picked {
    int64_t start = 0, step = 1, count = 0;  // count 0: the axis is not sliced
  };
  std::vector<Picked> picked(r);  // the indices each axis keeps
  bool backward = false;
  for (size_t k = 0; k < axes.size(); ++k) {
    const int64_t ax = im.onnx_axis(x, axes[k]);
    const int64_t step = steps.empty() ? 1 : steps[k];
    if (step == 0) im.fail("a step of 0");
    if (ax == x.perm[0]) {
      // Exporters slice the batch axis whole: [0, INT_MAX), or [0, b) when the file fixes the
      // batch to b. Anything else depends on the batch.
      const int64_t whole = im.declared_batch() > 0 ? im.declared_batch() : int64_t{1} << 31;
      if (starts[k] == 0 && ends[k] >= whole && step == 1) continue;
      im.fail(ErrorCode::kUnsupported, "slicing the batch axis is not supported");
    }
    const int64_t dim = x.dims[static_cast<size_t>(ax)];
    // ONNX: negative starts and ends count from the end, then both are clamped, to [0, dim]
    // going forward and to [0, dim - 1] / [-1, dim - 1] going backward.
    int64_t st = starts[k] < 0 ? starts[k] + dim : starts[k];
    int64_t en = ends[k] < 0 && ends[k] > std::numeric_limits<int64_t>::min() / 2 ? ends[k] + dim : ends[k];
    st = step > 0 ? std::clamp<int64_t>(st, 0, dim) : std::clamp<int64_t>(st, 0, dim - 1);
    en = step > 0 ? std::clamp<int64_t>(en, 0, dim) : std::clamp<int64_t>(en, -1, dim - 1);
    if (step > 0 ? en <= st : en >= st) im.fail("the slice of axis " + std::to_string(ax) + " is empty");
    const int64_t kept = step > 0 ? (en - st - 1) / step + 1 : (st - en - 1) / -step + 1;
    picked[static_cast<size_t>(ax)] = {st, step, kept};
    if (step < 0) {
      backward = true;
      continue;
    }
    // A step keeps elements st, st + step, ...: crop to the last kept one, then subsample.
    crop_begin[static_cast<size_t>(ax)] = st;
    crop_end[static_cast<size_t>(ax)] = dim - (st + (kept - 1) * step + 1);
    stride[static_cast<size_t>(ax)] = kept > 1 ? step : 1;
  }
  if (backward) {
    // Backward (torch.flip, x[:, ::-1]): one IR Gather per sliced axis, in x's layout.
    Steps gathers;
    Symbol result = x;
    for (size_t a = 1; a < r; ++a) {
      const Picked& p = picked[a];
      if (p.count == 0 || (p.step == 1 && p.count == x.dims[a])) continue;  // not sliced, or whole
      if (p.count > kMaxMadeUpParameters) im.fail("a slice of " + std::to_string(p.count) + " elements is too long");
      std::vector<int64_t> indices;
      for (int64_t i = 0; i < p.count; ++i) indices.push_back(p.start + i * p.step);
      result.dims[a] = p.count;
      gathers.emplace_back("axis" + std::to_string(a), GatherParams{im.ir_axis(x, static_cast<int64_t>(a)) - 1, std::move(indices)});
    }
    emit_steps(im, node, 0, result, x.value, std::move(gathers));
    return;
  }
  if (std::all_of(stride.begin(), stride.end(), [](int64_t s) { return s == 1; })) {
    emit_crop(im, node, 0, x, crop_begin, crop_end);
    return;
  }
  // Crop in the pool's layout, where the strided (spatial) axes are cropped without a view.
  Symbol moved = x;
  moved.perm = subsample_layout(im, x, stride);
  moved.value = im.in_layout(x, moved.perm);
  emit_crop(im, node, 0, moved, crop_begin, crop_end);
  subsample(im, node, im.tensor(node.output(0)), stride);
}

// The lengths Split gives its outputs along an axis of length `dim`: the `split` attribute
// (opset < 13) or input (opset >= 13), else `num_outputs` (opset 18, the last part may be
// smaller), else equal parts, one per output.
std::vector<int64_t> split_lengths(Importer& im, const Node_& node, Attributes& a, int64_t dim) {
  const int64_t n = node.output_size();
  const int64_t num_outputs = a.i("num_outputs", 0);
  if (num_outputs && num_outputs != n) {
    im.fail("num_outputs " + std::to_string(num_outputs) + " does not match the " + std::to_string(n) + " outputs");
  }
  std::vector<int64_t> lengths;
  if (auto s = ints_from(im, node, a, "split", 1)) {
    lengths = *s;
  } else if (num_outputs) {
    const int64_t part = (dim + n - 1) / n;
    lengths.assign(static_cast<size_t>(n), part);
    lengths.back() = dim - part * (n - 1);
  } else {
    if (dim % n) im.fail("an axis of " + std::to_string(dim) + " does not split into " + std::to_string(n) + " equal parts");
    lengths.assign(static_cast<size_t>(n), dim / n);
  }
  if (static_cast<int64_t>(lengths.size()) != n) {
    im.fail("split " + list_text(lengths) + " does not give one length to each of the " + std::to_string(n) + " outputs");
  }
  int64_t total = 0;
  for (int64_t len : lengths) {
    if (len < 1) im.fail("split " + list_text(lengths) + " for an axis of " + std::to_string(dim) + " has an empty part");
  }
  for (int64_t len : lengths) {
    if (len > dim - total) im.fail("split " + list_text(lengths) + " does not add up to the axis length " + std::to_string(dim));
    total += len;
  }
  if (total != dim) im.fail("split " + list_text(lengths) + " does not add up to the axis length " + std::to_string(dim));
  return lengths;
}

// Each output of Split is a crop of the input along the axis (folded on constants).
void lower_split(Importer& im, const Node_& node, Attributes& a) {
  Symbol& x = im.input(node, 0);
  const std::vector<int64_t> dims = x.is_const() ? x.constant->dims : x.dims;
  const int64_t axis_attr = a.i("axis", 0);
  const int64_t r = static_cast<int64_t>(dims.size());
  const int64_t axis = axis_attr < 0 ? axis_attr + r : axis_attr;
  if (axis < 0 || axis >= r) im.fail("axis " + std::to_string(axis_attr) + " is out of range for rank " + std::to_string(r));
  if (axis == 0 && !x.is_const()) im.fail(ErrorCode::kUnsupported, "splitting the batch axis is not supported");
  const int64_t dim = dims[static_cast<size_t>(axis)];
  const std::vector<int64_t> lengths = split_lengths(im, node, a, dim);
  int64_t offset = 0;
  for (int k = 0; k < node.output_size(); ++k) {
    const int64_t len = lengths[static_cast<size_t>(k)];
    if (!node.output(k).empty()) {
      if (x.is_const()) {
        im.set_constant(node, k, fold_slice(*x.constant, {offset}, {offset + len}, {axis}, {1}, im.context()));
      } else {
        std::vector<int64_t> begin(dims.size(), 0), end(dims.size(), 0);
        begin[static_cast<size_t>(axis)] = offset;
        end[static_cast<size_t>(axis)] = dim - offset - len;
        emit_crop(im, node, k, x, begin, end);
      }
    }
    offset += len;
  }
}

void lower_expand(Importer& im, const Node_& node, Attributes&) {
  Symbol& x = im.input(node, 0);
  const std::vector<int64_t> shape = im.const_input(node, 1, "shape").as_ints(im.context() + ": shape");
  if (x.is_const()) im.fail(ErrorCode::kUnsupported, "Expand of a constant is not folded");
  std::vector<int64_t> want = shape;
  for (auto& d : want) {
    if (d == kBatchMarker) d = 1;
  }
  std::vector<int64_t> have = x.dims;
  have[0] = 1;
  const std::vector<int64_t> out = broadcast_dims(have, want, im.context());
  if (out == have) {
    im.alias(node, 0, x, x.perm);
    return;
  }
  // Repeating axes of length 1 is a nearest-neighbour UpSampling of those axes over a layout whose
  // last axis is one that stays (the latest such axis in x's layout, to move the least data).
  const size_t r = x.rank();
  if (out.size() != r || out[0] != 1 || (r != 3 && r != 4)) {
    im.fail(ErrorCode::kUnsupported, "Expand to " + list_text(shape) + " copies data; only repeats of up to " + std::to_string(r - 2) +
            " non-batch axes of a rank 3 or 4 tensor are supported");
  }
  int channel = -1;
  for (size_t j = r; j-- > 1 && channel < 0;) {
    if (out[static_cast<size_t>(x.perm[j])] == have[static_cast<size_t>(x.perm[j])]) channel = x.perm[j];
  }
  if (channel < 0) im.fail(ErrorCode::kUnsupported, "Expand to " + list_text(shape) + " repeats every non-batch axis; not supported");
  Perm perm{0};
  for (int ax : x.perm) {
    if (ax != 0 && ax != channel) perm.push_back(ax);
  }
  perm.push_back(channel);
  UpSamplingParams p;
  p.rank = static_cast<int>(r) - 2;
  p.interpolation = Interpolation::kNearest;
  p.size_w = out[static_cast<size_t>(perm[r - 2])] / have[static_cast<size_t>(perm[r - 2])];
  if (p.rank == 2) p.size_h = out[static_cast<size_t>(perm[1])] / have[static_cast<size_t>(perm[1])];
  im.emit(node, 0, p, {im.in_layout(x, perm)}, perm);
}

// ---------------------------------------------------------------------------------------------
// Convolution, pooling and their windows

struct WindowAttrs {
  std::vector<int64_t> kernel, strides, dilations, pads;  // pads: begins then ends
  std::string auto_pad;
  bool ceil_mode = false;
};

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

// Fills an IR Window for spatial input lengths `in` (1 or 2 of them), following ONNX's auto_pad,
// pads and ceil_mode rules.
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

void lower_pool(Importer& im, const Node_& node, Attributes& a) {
  Symbol& x = im.dynamic_input(node, 0);
  check_conv_rank(im, x);
  const bool is_max = node.op_type() == "MaxPool";
  const size_t sp = x.rank() - 2;
  WindowAttrs wa = read_window(im, a, sp, {});
  wa.ceil_mode = a.i("ceil_mode", 0) != 0;
  a.ignore("storage_order");
  const bool include_pad = !is_max && a.i("count_include_pad", 0) != 0;
  for (int64_t d : wa.dilations) {
    if (d != 1) im.fail(ErrorCode::kUnsupported, "dilations " + list_text(wa.dilations) + " are not supported for pooling");
  }
  const Perm perm = channels_last_perm(x.rank());
  ValueId in = im.in_layout(x, perm);
  std::vector<int64_t> spatial = spatial_dims(x);
  PoolParams p;
  p.kind = is_max ? PoolKind::kMax : PoolKind::kAverage;
  p.rank = static_cast<int>(sp);
  Window win = make_window(im, wa, spatial);
  if (include_pad && win.padding == Padding::kExplicit) {
    // Averages over zero padding: pad with zeros explicitly, then pool without padding. The
    // windows ceil_mode adds past the padded input would divide by fewer taps: refused.
    if (wa.ceil_mode) im.fail(ErrorCode::kUnsupported, "count_include_pad together with ceil_mode is not supported");
    ZeroPaddingParams zp;
    zp.rank = p.rank;
    zp.top = win.pad_top;
    zp.bottom = win.pad_bottom;
    zp.left = win.pad_left;
    zp.right = win.pad_right;
    in = im.emit_internal(node.output(0) + ":padded", zp, {in});
    win.padding = Padding::kValid;
    win.pad_top = win.pad_bottom = win.pad_left = win.pad_right = 0;
  }
  p.window = win;
  im.emit(node, 0, p, {in}, perm);
}

void lower_global_pool(Importer& im, const Node_& node, Attributes&) {
  Symbol& x = im.dynamic_input(node, 0);
  check_conv_rank(im, x);
  GlobalPoolParams p;
  p.kind = node.op_type() == "GlobalMaxPool" ? PoolKind::kMax : PoolKind::kAverage;
  p.rank = static_cast<int>(x.rank()) - 2;
  p.keepdims = true;
  const Perm perm = channels_last_perm(x.rank());
  im.emit(node, 0, p, {im.in_layout(x, perm)}, perm);
}

// ReduceMean / ReduceMax / ReduceMin / ReduceSum over any non-batch axes:
// - a sum or mean over x's innermost axes (in memory) is a Dense with one unit over the view
//   [N, kept, reduced]: nothing moves before it (a channel sum of an NCHW model, say);
// - otherwise the reduced axes move in front of the kept ones and are pooled away: plain global
//   pooling when one axis of a rank 3-4 tensor is kept (it is the channel), else the same pooling
//   of the view [N, reduced, kept] and a Reshape to the result.
// A pooled sum is the mean times the count; a minimum is the negated maximum of -x.
void lower_reduce(Importer& im, const Node_& node, Attributes& a) {
  Symbol& x = im.dynamic_input(node, 0);
  const std::string& op = node.op_type();
  const bool keepdims = a.i("keepdims", 1) != 0;
  if (a.i("noop_with_empty_axes", 0) != 0) im.fail(ErrorCode::kUnsupported, "noop_with_empty_axes is not supported");
  const std::vector<int64_t> axes = ints_from(im, node, a, "axes", 1).value_or(std::vector<int64_t>{});
  if (axes.empty()) im.fail(ErrorCode::kUnsupported, "reducing over every axis (the batch included) is not supported");
  const size_t r = x.rank();
  std::vector<bool> reduced(r, false);
  for (int64_t ax : axes) reduced[static_cast<size_t>(im.onnx_axis(x, ax))] = true;
  const int batch = x.perm[0];
  if (reduced[static_cast<size_t>(batch)]) im.fail(ErrorCode::kUnsupported, "reducing over the batch axis is not supported");
  Perm red, kept;  // ONNX axes, in x's IR order
  for (size_t j = 1; j < r; ++j) (reduced[static_cast<size_t>(x.perm[j])] ? red : kept).push_back(x.perm[j]);
  int64_t count = 1, kept_size = 1;
  for (int ax : red) count *= x.dims[static_cast<size_t>(ax)];
  for (int ax : kept) kept_size *= x.dims[static_cast<size_t>(ax)];

  // The result's ONNX dims and layout: the kept axes in x's IR order, after the reduced ones
  // (of length 1) with keepdims.
  Symbol result;
  if (keepdims) {
    result.dims = x.dims;
    for (int ax : red) result.dims[static_cast<size_t>(ax)] = 1;
    result.perm = {batch};
    result.perm.insert(result.perm.end(), red.begin(), red.end());
    result.perm.insert(result.perm.end(), kept.begin(), kept.end());
  } else {
    if (kept.empty()) im.fail("axes " + list_text(axes) + ": the result would have no axis besides the batch");
    const auto renumber = [&](int ax) {
      return static_cast<int>(ax - std::count(reduced.begin(), reduced.begin() + ax, true));
    };
    for (size_t k = 0; k < r; ++k) {
      if (!reduced[k]) result.dims.push_back(x.dims[k]);
    }
    result.perm = {renumber(batch)};
    for (int ax : kept) result.perm.push_back(renumber(ax));
  }
  Dims out_shape;
  for (size_t j = 1; j < result.perm.size(); ++j) {
    out_shape.push_back(result.dims[static_cast<size_t>(result.perm[j])]);
  }

  Symbol src = x;
  const std::string& name = node.output(0);
  if (op == "ReduceMin") {
    src.value = im.emit_internal(name + ":negate", affine_params(im, x, -1, {-1.0}, {0.0}), {x.value});
  } else if (op == "ReduceSumSquare" || op == "ReduceL2") {
    src.value = im.emit_internal(name + ":square", MergeParams{MergeOp::kMultiply}, {x.value, x.value});
  } else if (op == "ReduceL1") {
    src.value = im.emit_internal(name + ":abs", ActivationParams{ActivationKind::kAbs}, {x.value});
  }
  // What is left to do after those: a sum, a mean or a maximum.
  const bool sum = op == "ReduceSum" || op == "ReduceSumSquare" || op == "ReduceL2" || op == "ReduceL1";
  const bool mean = op == "ReduceMean";
  const bool innermost =
      std::equal(red.begin(), red.end(), x.perm.end() - static_cast<std::ptrdiff_t>(red.size()));
  Steps steps;
  ValueId v = -1;
  if ((sum || mean) && innermost && count <= kMaxMadeUpParameters) {
    v = src.value;
    if (im.ir_shape(v) != Dims{kept_size, count}) steps.emplace_back("view", ReshapeParams{{kept_size, count}});
    DenseParams d;
    d.units = 1;
    d.kernel = Weights::filled(count, sum ? 1.0f : static_cast<float>(1.0 / static_cast<double>(count)));
    d.kernel.shape = {count, 1};
    steps.emplace_back("sum", std::move(d));
    if (out_shape != Dims{kept_size, 1}) steps.emplace_back("shape", ReshapeParams{out_shape});
  } else {
    Perm pooling_layout{batch};
    pooling_layout.insert(pooling_layout.end(), red.begin(), red.end());
    pooling_layout.insert(pooling_layout.end(), kept.begin(), kept.end());
    v = im.in_layout(src, pooling_layout);
    GlobalPoolParams p;
    p.kind = sum || mean ? PoolKind::kAverage : PoolKind::kMax;
    if (kept.size() == 1 && (r == 3 || r == 4)) {
      p.rank = static_cast<int>(r) - 2;
      p.keepdims = keepdims;
      steps.emplace_back("pool", p);  // its shape is out_shape
    } else {
      p.rank = 1;
      if (im.ir_shape(v) != Dims{count, kept_size}) steps.emplace_back("view", ReshapeParams{{count, kept_size}});
      steps.emplace_back("pool", p);
      if (out_shape != Dims{kept_size}) steps.emplace_back("shape", ReshapeParams{out_shape});
    }
    if (sum) steps.emplace_back("sum", affine_params(im, result, -1, {static_cast<double>(count)}, {0.0}));
  }
  if (op == "ReduceMin") steps.emplace_back("min", affine_params(im, result, -1, {-1.0}, {0.0}));
  if (op == "ReduceL2") steps.emplace_back("sqrt", ActivationParams{ActivationKind::kSqrt});
  emit_steps(im, node, 0, result, v, std::move(steps));
}

// ---------------------------------------------------------------------------------------------
// Dense layers and normalisation

void lower_gemm(Importer& im, const Node_& node, Attributes& a) {
  if (im.input(node, 0).is_const() && !im.input(node, 1).is_const()) {
    // A · B with the samples in B puts the batch on the result's axis 1 (the output is (M, N)),
    // which nnd's batch-first IR cannot hold.
    im.fail("A is a constant and B the computed tensor: the result would have the batch on axis 1, not 0");
  }
  Symbol& x = im.dynamic_input(node, 0);
  if (x.rank() != 2) im.fail("A must have rank 2 (batch, features), got rank " + std::to_string(x.rank()));
  if (a.i("transA", 0)) im.fail("transA = 1 would transpose across the batch axis");
  const bool trans_b = a.i("transB", 0) != 0;
  a.ignore("broadcast");  // opset < 7
  const double alpha = a.f("alpha", 1.0), beta = a.f("beta", 1.0);
  const Constant& b = im.const_input(node, 1, "B");
  if (b.dims.size() != 2) im.fail("B must be 2-D, got " + list_text(b.dims));
  const int64_t k = trans_b ? b.dims[1] : b.dims[0], n = trans_b ? b.dims[0] : b.dims[1];
  if (k != x.dims[1]) im.fail("B " + list_text(b.dims) + " does not fit " + std::to_string(x.dims[1]) + " input features");
  DenseParams p;
  p.units = n;
  p.kernel.shape = {k, n};
  p.kernel.data.resize(static_cast<size_t>(k * n));
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < n; ++j)
      p.kernel.data[static_cast<size_t>(i * n + j)] =
          static_cast<float>(alpha * b.real_at(trans_b ? j * k + i : i * n + j));
  if (im.has_input(node, 2)) {
    const Constant& c = im.const_input(node, 2, "C");
    if (c.size() != 1 && c.size() != n) im.fail("C of shape " + list_text(c.dims) + " is not a bias of " + std::to_string(n));
    if (c.dims.size() == 2 && c.dims[0] != 1) im.fail("C varies along the batch axis");
    p.bias = filled(n, 0.0f);
    for (int64_t j = 0; j < n; ++j) {
      p.bias.data[static_cast<size_t>(j)] = static_cast<float>(beta * c.real_at(c.size() == 1 ? 0 : j));
    }
  }
  im.emit(node, 0, p, {im.in_layout(x, identity_perm(2))}, identity_perm(2));
}

void lower_matmul(Importer& im, const Node_& node, Attributes&) {
  Symbol& x = im.dynamic_input(node, 0);
  const Constant& b = im.const_input(node, 1, "B");
  if (b.dims.size() != 2) im.fail("B must be a 2-D constant, got shape " + list_text(b.dims));
  const int64_t k = b.dims[0], n = b.dims[1];
  if (x.rank() < 2 || x.dims.back() != k) im.fail("B " + list_text(b.dims) + " does not fit the input's last axis");
  // Dense works on the IR's last axis: keep x's layout when that already is the ONNX last axis.
  Perm perm = x.perm;
  if (perm.back() != static_cast<int>(x.rank()) - 1) perm = identity_perm(x.rank());
  DenseParams p;
  p.units = n;
  p.kernel = weights_of(b, {k, n});
  im.emit(node, 0, p, {im.in_layout(x, perm)}, perm);
}

void lower_batch_norm(Importer& im, const Node_& node, Attributes& a) {
  Symbol& x = im.dynamic_input(node, 0);
  if (a.i("training_mode", 0)) im.fail("training_mode = 1; nnd runs inference");
  if (a.i("spatial", 1) != 1) im.fail(ErrorCode::kUnsupported, "spatial = 0 is not supported");
  a.ignore("momentum");
  a.ignore("is_test");
  a.ignore("consumed_inputs");
  if (x.rank() < 2) im.fail("input needs a channel axis");
  const int64_t c = x.dims[1];
  BatchNormParams p;
  p.keras_axis = im.ir_axis(x, 1);
  p.epsilon = a.f("epsilon", 1e-5);
  const char* roles[] = {"scale", "B", "input_mean", "input_var"};
  Weights* dst[] = {&p.gamma, &p.beta, &p.moving_mean, &p.moving_variance};
  for (int k = 0; k < 4; ++k) {
    const Constant& w = im.const_input(node, k + 1, roles[k]);
    if (w.size() != c) im.fail(std::string(roles[k]) + " has " + std::to_string(w.size()) + " values for " + std::to_string(c) + " channels");
    *dst[k] = weights_of(w, {c});
  }
  const Perm perm = x.perm;
  im.emit(node, 0, p, {x.value}, perm);
}

void lower_layer_norm(Importer& im, const Node_& node, Attributes& a) {
  Symbol& x = im.dynamic_input(node, 0);
  const int64_t axis = im.onnx_axis(x, a.i("axis", -1));
  if (axis == 0) im.fail(ErrorCode::kUnsupported, "normalising over the batch axis is not supported");
  a.ignore("stash_type");
  LayerNormParams p;
  p.epsilon = a.f("epsilon", 1e-5);
  int64_t count = 1;
  for (int64_t k = axis; k < static_cast<int64_t>(x.rank()); ++k) {
    p.keras_axes.push_back(static_cast<int>(k));
    count *= x.dims[static_cast<size_t>(k)];
  }
  const Constant& scale = im.const_input(node, 1, "Scale");
  if (scale.size() != count) im.fail("Scale does not cover the normalised axes");
  p.gamma = weights_of(scale, {count});
  if (im.has_input(node, 2)) {
    const Constant& bias = im.const_input(node, 2, "B");
    if (bias.size() != count) im.fail("B does not cover the normalised axes");
    p.beta = weights_of(bias, {count});
  }
  const Perm perm = identity_perm(x.rank());
  im.emit(node, 0, p, {im.in_layout(x, perm)}, perm);
}

// ---------------------------------------------------------------------------------------------
// Activations

void lower_simple_activation(Importer& im, const Node_& node, Attributes&) {
  static const std::map<std::string, ActivationKind> kinds = {
      {"Relu", ActivationKind::kRelu},         {"Sigmoid", ActivationKind::kSigmoid},
      {"Tanh", ActivationKind::kTanh},         {"Softplus", ActivationKind::kSoftplus},
      {"Softsign", ActivationKind::kSoftsign}, {"Exp", ActivationKind::kExponential},
      {"HardSwish", ActivationKind::kHardSwish}, {"Mish", ActivationKind::kMish},
  };
  emit_activation(im, node, ActivationParams{kinds.at(node.op_type())});
}

void lower_gelu(Importer& im, const Node_& node, Attributes& a) {
  const std::string approx = a.s("approximate", "none");
  if (approx != "none" && approx != "tanh") im.fail(ErrorCode::kUnsupported, "approximate '" + approx + "' is not supported");
  emit_activation(im, node, ActivationParams{approx == "tanh" ? ActivationKind::kGeluTanh : ActivationKind::kGeluErf});
}

void lower_leaky_relu(Importer& im, const Node_& node, Attributes& a) {
  ReluParams p;
  p.negative_slope = a.f("alpha", 0.01);
  p.threshold = 0.0;
  emit_activation(im, node, p);
}

void lower_thresholded_relu(Importer& im, const Node_& node, Attributes& a) {
  emit_activation(im, node, ThresholdedReluParams{a.f("alpha", 1.0)});
}

void lower_elu(Importer& im, const Node_& node, Attributes& a) {
  emit_activation(im, node, EluParams{a.f("alpha", 1.0)});
}

bool close_to(double a, double b) { return std::fabs(a - b) <= 1e-6 * std::fabs(b); }

void lower_selu(Importer& im, const Node_& node, Attributes& a) {
  const double alpha = a.f("alpha", 1.67326319217681884765625), gamma = a.f("gamma", 1.05070102214813232421875);
  if (!close_to(alpha, 1.6732632423543772) || !close_to(gamma, 1.0507009873554805)) {
    im.fail(ErrorCode::kUnsupported, "alpha " + num(alpha) + " / gamma " + num(gamma) + ": only SELU's standard constants are supported");
  }
  emit_activation(im, node, ActivationParams{ActivationKind::kSelu});
}

void lower_hard_sigmoid(Importer& im, const Node_& node, Attributes& a) {
  const double alpha = a.f("alpha", 0.2), beta = a.f("beta", 0.5);
  ActivationKind k;
  if (close_to(alpha, 0.2) && close_to(beta, 0.5)) {
    k = ActivationKind::kHardSigmoidK2;
  } else if (close_to(alpha, 1.0 / 6.0) && close_to(beta, 0.5)) {
    k = ActivationKind::kHardSigmoidK3;
  } else {
    im.fail(ErrorCode::kUnsupported, "alpha " + num(alpha) + ", beta " + num(beta) + ": only (0.2, 0.5) and (1/6, 0.5) are supported");
  }
  emit_activation(im, node, ActivationParams{k});
}

void lower_clip(Importer& im, const Node_& node, Attributes& a) {
  double lo = -INFINITY, hi = INFINITY;
  if (a.has("min") || a.has("max")) {  // opset < 11
    lo = a.f("min", -INFINITY);
    hi = a.f("max", INFINITY);
  } else {
    if (im.has_input(node, 1)) lo = im.const_input(node, 1, "min").real_at(0);
    if (im.has_input(node, 2)) hi = im.const_input(node, 2, "max").real_at(0);
  }
  Symbol& x = im.dynamic_input(node, 0);
  if (lo == -INFINITY && hi == INFINITY) {
    im.alias(node, 0, x, x.perm);
    return;
  }
  if (!(hi > lo)) im.fail("min " + num(lo) + " is not below max " + num(hi));
  if (lo == 0.0) {
    ReluParams p;  // ReLU, ReLU6
    p.max_value = hi;
    emit_activation(im, node, p);
    return;
  }
  // clip(x, lo, hi) = relu(x - lo, max = hi - lo) + lo (Hardtanh and friends); with no lower
  // bound, min(x, hi) = hi - relu(hi - x).
  const bool upper_only = !std::isfinite(lo);
  const double sign = upper_only ? -1.0 : 1.0, offset = upper_only ? hi : lo;
  const ValueId shifted = im.emit_internal(node.output(0) + ":shifted",
                                           affine_params(im, x, -1, {sign}, {-sign * offset}), {x.value});
  ReluParams relu;
  relu.max_value = upper_only ? INFINITY : hi - lo;
  const ValueId clipped = im.emit_internal(node.output(0) + ":relu", relu, {shifted});
  Symbol c = x;
  c.value = clipped;
  emit_affine(im, node, c, -1, {sign}, {offset});
}

void lower_prelu(Importer& im, const Node_& node, Attributes&) {
  Symbol& x = im.dynamic_input(node, 0);
  const AxisVector slope = axis_vector(im, x, im.const_input(node, 1, "slope"));
  PReluParams p;
  const size_t r = x.rank();
  p.alpha.shape.assign(r - 1, 1);
  if (slope.axis >= 0) p.alpha.shape[static_cast<size_t>(im.ir_axis(x, slope.axis)) - 1] = x.dims[static_cast<size_t>(slope.axis)];
  for (double v : slope.values) p.alpha.data.push_back(static_cast<float>(v));
  emit_activation(im, node, p);
}

void lower_softmax(Importer& im, const Node_& node, Attributes& a) {
  Symbol& x = im.dynamic_input(node, 0);
  const int64_t axis = im.onnx_axis(x, a.i("axis", im.opset() >= 13 ? -1 : 1));
  if (axis == 0) im.fail(ErrorCode::kUnsupported, "softmax over the batch axis is not supported");
  bool trailing_ones = true;
  for (size_t k = static_cast<size_t>(axis) + 1; k < x.rank(); ++k) trailing_ones = trailing_ones && x.dims[k] == 1;
  if (im.opset() < 13 && !trailing_ones) {
    // Before opset 13 the input is flattened to 2-D at `axis` and normalised over all of
    // [axis, rank) together: reshape (memory order) to (N, prod...), normalise, reshape back.
    const ValueId flat_in = im.in_layout(x, identity_perm(x.rank()));
    int64_t outer = 1, inner = 1;
    for (size_t k = 1; k < x.rank(); ++k) (static_cast<int64_t>(k) < axis ? outer : inner) *= x.dims[k];
    const Dims flat_shape = axis == 1 ? Dims{inner} : Dims{outer, inner};
    const ValueId flat = im.emit_internal(node.output(0) + ":flat", ReshapeParams{flat_shape}, {flat_in});
    const ValueId norm = node.op_type() == "LogSoftmax"
                             ? im.emit_internal(node.output(0) + ":norm", ActivationParams{ActivationKind::kLogSoftmax}, {flat})
                             : im.emit_internal(node.output(0) + ":norm", SoftmaxParams{-1, -1}, {flat});
    Dims shape(x.dims.begin() + 1, x.dims.end());
    im.emit(node, 0, ReshapeParams{shape}, {norm}, identity_perm(x.rank()));
    return;
  }
  const int ir = im.ir_axis(x, axis);
  if (node.op_type() == "LogSoftmax") {
    if (ir != static_cast<int>(x.rank()) - 1) {
      Perm perm{0};
      for (int ax : x.perm) {
        if (ax != 0 && ax != axis) perm.push_back(ax);
      }
      perm.push_back(static_cast<int>(axis));
      const ValueId v = im.in_layout(x, perm);
      im.emit(node, 0, ActivationParams{ActivationKind::kLogSoftmax}, {v}, perm);
      return;
    }
    emit_activation(im, node, ActivationParams{ActivationKind::kLogSoftmax});
    return;
  }
  SoftmaxParams p;
  p.keras_axis = ir;
  emit_activation(im, node, p);
}

// ---------------------------------------------------------------------------------------------
// Element-wise binary operators

// x to a constant scalar power whose result is exact or within an ulp: 1, 2 and 3 are products
// of x (x·x is what Pow(x, 2) gives in float: one rounding), 0.5 a square root, negative ones the
// reciprocal of those. Other exponents are refused.
void emit_power(Importer& im, const Node_& node, Symbol& x, double exponent) {
  const double magnitude = std::fabs(exponent);
  if (magnitude != 0.5 && magnitude != 1.0 && magnitude != 2.0 && magnitude != 3.0) {
    im.fail(ErrorCode::kUnsupported, "the exponent " + std::to_string(exponent) + " (only 0.5, 1, 2, 3 and their negatives are supported)");
  }
  const std::string& name = node.output(0);
  Steps steps;
  if (magnitude == 0.5) steps.emplace_back("sqrt", ActivationParams{ActivationKind::kSqrt});
  if (exponent < 0) steps.emplace_back("reciprocal", ActivationParams{ActivationKind::kReciprocal});
  if (magnitude < 2.0) {
    emit_steps(im, node, 0, x, x.value, std::move(steps));
    return;
  }
  // Merges take two inputs, so the products come first and a reciprocal after.
  ValueId v = x.value;
  if (magnitude == 3.0) v = im.emit_internal(name + ":square", MergeParams{MergeOp::kMultiply}, {x.value, x.value});
  if (steps.empty()) {
    im.emit(node, 0, MergeParams{MergeOp::kMultiply}, {x.value, v}, x.perm);
    return;
  }
  v = im.emit_internal(name + ":power", MergeParams{MergeOp::kMultiply}, {x.value, v});
  emit_steps(im, node, 0, x, v, std::move(steps));
}

void lower_binary(Importer& im, const Node_& node, Attributes& a) {
  a.ignore("broadcast");  // opset < 7: broadcasting attributes; the shapes decide either way
  a.ignore("axis");
  a.ignore("consumed_inputs");
  const std::string& op = node.op_type();
  if (node.input_size() != 2) {
    // Sum / Max / Min / Mean of several tensors.
    std::vector<ValueId> ins;
    Symbol& first = im.dynamic_input(node, 0);
    const Perm perm = first.perm;
    for (int k = 0; k < node.input_size(); ++k) {
      Symbol& s = im.dynamic_input(node, k);
      if (s.rank() != first.rank()) im.fail("inputs of different ranks");
      ins.push_back(im.in_layout(s, perm));
    }
    const MergeOp m = op == "Max" ? MergeOp::kMaximum : op == "Min" ? MergeOp::kMinimum
                    : op == "Mean" ? MergeOp::kAverage : MergeOp::kAdd;
    im.emit(node, 0, MergeParams{m}, ins, perm);
    return;
  }
  Symbol& lhs = im.input(node, 0);
  Symbol& rhs = im.input(node, 1);
  static const std::map<std::string, ConstOp> const_ops = {
      {"Add", ConstOp::kAdd}, {"Sub", ConstOp::kSub}, {"Mul", ConstOp::kMul}, {"Div", ConstOp::kDiv},
      {"Min", ConstOp::kMin}, {"Max", ConstOp::kMax}, {"Pow", ConstOp::kPow}, {"Sum", ConstOp::kAdd}};
  if (lhs.is_const() && rhs.is_const()) {
    im.set_constant(node, 0, fold_binary(const_ops.at(op), *lhs.constant, *rhs.constant, im.context()));
    return;
  }
  if (!lhs.is_const() && !rhs.is_const()) {
    if (lhs.rank() != rhs.rank()) im.fail("operands of different ranks " + list_text(lhs.dims) + " and " + list_text(rhs.dims));
    MergeOp m;
    if (op == "Add" || op == "Sum") m = MergeOp::kAdd;
    else if (op == "Sub") m = MergeOp::kSubtract;
    else if (op == "Mul") m = MergeOp::kMultiply;
    else if (op == "Max") m = MergeOp::kMaximum;
    else if (op == "Min") m = MergeOp::kMinimum;
    else if (op == "Div") m = MergeOp::kMultiply;  // x * (1 / y), within an ulp of x / y
    else im.fail(ErrorCode::kUnsupported, "'" + op + "' of two computed tensors is not supported");
    const Perm perm = lhs.perm;
    ValueId divisor = im.in_layout(rhs, perm);
    if (op == "Div") {
      divisor = im.emit_internal(node.output(0) + ":reciprocal", ActivationParams{ActivationKind::kReciprocal}, {divisor});
    }
    im.emit(node, 0, MergeParams{m}, {lhs.value, divisor}, perm);
    return;
  }
  // One computed tensor and one constant: an affine map along one axis, or a ReLU.
  const bool const_left = lhs.is_const();
  Symbol& x = const_left ? rhs : lhs;
  const Constant& c = const_left ? *lhs.constant : *rhs.constant;
  const AxisVector v = axis_vector(im, x, c);
  std::vector<double> scale(v.values.size(), 1.0), shift(v.values.size(), 0.0);
  if (op == "Add" || op == "Sum") {
    if (fold_bias_into_producer(im, node, node.input(const_left ? 1 : 0), x, v)) return;
    shift = v.values;
  } else if (op == "Sub") {
    for (size_t i = 0; i < v.values.size(); ++i) {
      scale[i] = const_left ? -1.0 : 1.0;
      shift[i] = const_left ? v.values[i] : -v.values[i];
    }
  } else if (op == "Mul") {
    scale = v.values;
  } else if (op == "Div" && !const_left) {
    for (size_t i = 0; i < v.values.size(); ++i) scale[i] = 1.0 / v.values[i];
  } else if (op == "Div") {  // c / x = c * (1 / x)
    Symbol reciprocal = x;
    reciprocal.value = im.emit_internal(node.output(0) + ":reciprocal", ActivationParams{ActivationKind::kReciprocal}, {x.value});
    reciprocal.origin.clear();
    emit_affine(im, node, reciprocal, v.axis, v.values, std::vector<double>(v.values.size(), 0.0));
    return;
  } else if (op == "Max" && v.values.size() == 1 && v.values[0] == 0.0) {
    emit_activation(im, node, ActivationParams{ActivationKind::kRelu});
    return;
  } else if (op == "Pow" && !const_left && v.values.size() == 1) {
    emit_power(im, node, x, v.values[0]);
    return;
  } else {
    im.fail(ErrorCode::kUnsupported, "'" + op + "' with a constant " + (const_left ? "left" : "right") + " operand is not supported");
  }
  emit_affine(im, node, x, v.axis, scale, shift);
}

// ---------------------------------------------------------------------------------------------
// Padding and resizing

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

const std::map<std::string, Lowering>& lowerings() {
  static const std::map<std::string, Lowering> table = {
      {"Abs", lower_const_unary},
      {"Add", lower_binary},
      {"AveragePool", lower_pool},
      {"BatchNormalization", lower_batch_norm},
      {"Cast", lower_cast},
      {"Ceil", lower_const_unary},
      {"Clip", lower_clip},
      {"Concat", lower_concat},
      {"Constant", lower_constant},
      {"ConstantOfShape", lower_constant_of_shape},
      {"Conv", lower_conv},
      {"ConvTranspose", lower_conv_transpose},
      {"Div", lower_binary},
      {"Dropout", lower_identity},
      {"Elu", lower_elu},
      {"Equal", lower_equal},
      {"Erf", lower_const_unary},
      {"Exp", lower_simple_activation},
      {"Expand", lower_expand},
      {"Flatten", lower_flatten},
      {"Floor", lower_const_unary},
      {"Gather", lower_gather},
      {"Gelu", lower_gelu},
      {"Gemm", lower_gemm},
      {"GRU", recurrent_lowering()},
      {"GlobalAveragePool", lower_global_pool},
      {"GlobalMaxPool", lower_global_pool},
      {"HardSigmoid", lower_hard_sigmoid},
      {"HardSwish", lower_simple_activation},
      {"Identity", lower_identity},
      {"LayerNormalization", lower_layer_norm},
      {"LeakyRelu", lower_leaky_relu},
      {"LSTM", recurrent_lowering()},
      {"LogSoftmax", lower_softmax},
      {"MatMul", lower_matmul},
      {"Max", lower_binary},
      {"MaxPool", lower_pool},
      {"Mean", lower_binary},
      {"Min", lower_binary},
      {"Mish", lower_simple_activation},
      {"Mul", lower_binary},
      {"Neg", lower_const_unary},
      {"Pad", lower_pad},
      {"Pow", lower_binary},
      {"PRelu", lower_prelu},
      {"Reciprocal", lower_const_unary},
      {"ReduceMax", lower_reduce},
      {"ReduceMean", lower_reduce},
      {"ReduceMin", lower_reduce},
      {"ReduceL1", lower_reduce},
      {"ReduceL2", lower_reduce},
      {"ReduceSumSquare", lower_reduce},
      {"ReduceSum", lower_reduce},
      {"Relu", lower_simple_activation},
      {"Reshape", lower_reshape},
      {"Resize", lower_resize},
      {"RNN", recurrent_lowering()},
      {"Selu", lower_selu},
      {"Shape", lower_shape},
      {"Sigmoid", lower_simple_activation},
      {"Slice", lower_slice},
      {"Softmax", lower_softmax},
      {"Softplus", lower_simple_activation},
      {"Softsign", lower_simple_activation},
      {"Split", lower_split},
      {"Sqrt", lower_const_unary},
      {"Squeeze", lower_squeeze},
      {"Sub", lower_binary},
      {"Sum", lower_binary},
      {"Tanh", lower_simple_activation},
      {"ThresholdedRelu", lower_thresholded_relu},
      {"Transpose", lower_transpose},
      {"Unsqueeze", lower_unsqueeze},
      {"Upsample", lower_resize},
      {"Where", lower_where},
  };
  return table;
}

}  // namespace

Lowering find_lowering(const std::string& op_type) {
  const auto& t = lowerings();
  auto it = t.find(op_type);
  return it == t.end() ? nullptr : it->second;
}

std::vector<std::string> supported_operators() {
  std::vector<std::string> ops;
  for (const auto& [name, f] : lowerings()) ops.push_back(name);
  return ops;
}

}  // namespace nnd::onnx_import
