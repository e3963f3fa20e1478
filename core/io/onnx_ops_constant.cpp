// ONNX plumbing and constants: Identity/Dropout, Constant, ConstantOfShape, Shape, Cast, and the
// operators exporters apply to shapes (unary arithmetic, Mod, Equal, Where), folded at load time.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "core/io/onnx_ops.h"
#include "core/util/error.h"

namespace nnd::onnx_import {
namespace {

void lower_identity(Importer& im, const Node_& node, Attributes& a) {
  a.ignore("seed");
  a.ignore("ratio");
  a.ignore("is_test");
  if (node.op_type() == "Dropout" && im.has_input(node, 2)) {
    const Constant& training = im.const_input(node, 2, "training_mode");
    // Training mode with a ratio of 0 drops nothing: the identity (torchvision's Swin calls
    // F.dropout(attn, p=0.0) without training=False, so its exports carry exactly that).
    const double ratio = im.has_input(node, 1) ? im.const_input(node, 1, "ratio").real_at(0) : 0.5;
    if (training.size() == 1 && training.real_at(0) != 0 && ratio != 0) {
      im.fail("training_mode is true with ratio " + num(ratio) + "; nnd runs inference");
    }
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
  const Value& v = im.graph_value(s.value);
  if (v.dtype == DType::kInt64) {  // the indices of an ArgMax (no other layer makes int64)
    if (to == onnx::TensorProto_DataType_INT64) {
      im.alias(node, 0, s, s.perm);
      return;
    }
    im.fail(ErrorCode::kUnsupported, "cast of the int64 indices of an ArgMax to type " + std::to_string(to) +
                                         ": nnd serves the indices only as an int64 graph output");
  }
  if (to != onnx::TensorProto_DataType_FLOAT) {
    im.fail(ErrorCode::kUnsupported, "cast of a computed tensor to type " + std::to_string(to) + " (only to float is supported)");
  }
  if (v.dtype != DType::kFloat32 && v.producer != kNoNode) {
    // An integer layer's output (int32 accumulator, int8, uint8) as float: its integers.
    const quant::QuantType t = v.dtype == DType::kInt8 ? quant::QuantType::kInt8 : v.dtype == DType::kUInt8 ? quant::QuantType::kUInt8 : quant::QuantType::kInt32;
    Symbol x = s;
    im.emit(node, 0, DequantizeParams{quant::QuantParams::per_tensor(t, 1.0f, 0)}, {x.value}, x.perm);
    return;
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

// Mod on constants: the shape arithmetic of padding to a multiple (torchvision's Swin pads each
// feature map to whole windows: (w - W % w) % w).
void lower_mod(Importer& im, const Node_& node, Attributes& a) {
  const bool fmod = a.i("fmod", 0) != 0;
  if (!im.input(node, 0).is_const() || !im.input(node, 1).is_const()) {
    im.fail(ErrorCode::kUnsupported, "Mod of a computed tensor is not supported (nnd folds it on constants only)");
  }
  const Constant& x = im.const_input(node, 0, "A");
  const Constant& y = im.const_input(node, 1, "B");
  im.set_constant(node, 0, fold_binary(fmod ? ConstOp::kFmod : ConstOp::kMod, x, y, im.context()));
}

// Range, Not and ScatterND on constants: torchvision's Swin builds its shifted-window attention
// mask from shapes with them (a computed input is refused by const_input, naming it).
void lower_range(Importer& im, const Node_& node, Attributes&) {
  im.set_constant(node, 0, fold_range(im.const_input(node, 0, "start"), im.const_input(node, 1, "limit"),
                                      im.const_input(node, 2, "delta"), im.context()));
}

void lower_trilu(Importer& im, const Node_& node, Attributes& a) {
  const bool upper = a.i("upper", 1) != 0;
  const Constant& x = im.const_input(node, 0, "the input (Trilu of a computed tensor is not supported)");
  int64_t k = 0;
  if (im.has_input(node, 1)) {
    const std::vector<int64_t> ks = im.const_input(node, 1, "k").as_ints(im.context() + ": k");
    if (ks.size() != 1) im.fail("k must hold one integer");
    k = ks[0];
  }
  im.set_constant(node, 0, fold_trilu(x, k, upper, im.context()));
}

void lower_not(Importer& im, const Node_& node, Attributes&) {
  im.set_constant(node, 0, fold_not(im.const_input(node, 0, "X"), im.context()));
}

void lower_scatter_nd(Importer& im, const Node_& node, Attributes& a) {
  const std::string reduction = a.s("reduction", "none");
  if (reduction != "none") im.fail(ErrorCode::kUnsupported, "reduction '" + reduction + "' is not supported (only none)");
  im.set_constant(node, 0, fold_scatter_nd(im.const_input(node, 0, "data"), im.const_input(node, 1, "indices"),
                                           im.const_input(node, 2, "updates"), im.context()));
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

}  // namespace

void add_constant_lowerings(LoweringTable& t) {
  t.add("Abs", lower_const_unary);
  t.add("Cast", lower_cast);
  t.add("Ceil", lower_const_unary);
  t.add("Constant", lower_constant);
  t.add("ConstantOfShape", lower_constant_of_shape);
  t.add("Dropout", lower_identity);
  t.add("Equal", lower_equal);
  t.add("Erf", lower_const_unary);
  t.add("Floor", lower_const_unary);
  t.add("Identity", lower_identity);
  t.add("Mod", lower_mod);
  t.add("Neg", lower_const_unary);
  t.add("Not", lower_not);
  t.add("Trilu", lower_trilu);
  t.add("Range", lower_range);
  t.add("Reciprocal", lower_const_unary);
  t.add("Shape", lower_shape);
  t.add("ScatterND", lower_scatter_nd);
  t.add("Sqrt", lower_const_unary);
  t.add("Where", lower_where);
}

}  // namespace nnd::onnx_import
