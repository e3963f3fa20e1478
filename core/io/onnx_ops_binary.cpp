// ONNX element-wise binary and variadic operators: Add, Sub, Mul, Div, Pow, Max, Min, Sum, Mean.
// Two computed tensors are an IR Merge, a computed tensor and a constant an affine map.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "core/io/onnx_ops.h"
#include "core/util/error.h"

namespace nnd::onnx_import {
namespace {

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

// Whether constant c (numpy-aligned to x) has more than one axis of length > 1.
bool varies_along_several_axes(const Symbol& x, const Constant& c) {
  if (c.dims.size() > x.rank()) return false;  // axis_vector names the mismatch
  int varying = 0;
  for (int64_t d : c.dims) varying += d != 1;
  return varying > 1;
}

// x op c (or c op x) as a Merge of x with an IR Constant holding c (1 / c for x / c; c / x is
// c · (1 / x), within an ulp).
void merge_with_constant(Importer& im, const Node_& node, const std::string& op, Symbol& x, const Constant& c,
                         bool const_left) {
  MergeOp m;
  if (op == "Add" || op == "Sum") m = MergeOp::kAdd;
  else if (op == "Sub") m = MergeOp::kSubtract;
  else if (op == "Mul" || op == "Div") m = MergeOp::kMultiply;
  else if (op == "Max") m = MergeOp::kMaximum;
  else if (op == "Min") m = MergeOp::kMinimum;
  else im.fail(ErrorCode::kUnsupported, "'" + op + "' with a constant that varies along several axes is not supported");
  Constant k = c;
  if (op == "Div" && !const_left) {
    k.is_int = false;
    k.ints.clear();
    k.reals.clear();
    for (int64_t i = 0; i < c.size(); ++i) k.reals.push_back(1.0 / c.real_at(i));
  }
  const Perm perm = x.perm;
  const ValueId cv = constant_operand(im, k, x, perm, node.output(0) + ":constant");
  ValueId xv = x.value;
  if (op == "Div" && const_left) {
    xv = im.emit_internal(node.output(0) + ":reciprocal", ActivationParams{ActivationKind::kReciprocal}, {xv});
  }
  im.emit(node, 0, MergeParams{m}, const_left ? std::vector<ValueId>{cv, xv} : std::vector<ValueId>{xv, cv}, perm);
}

void lower_binary(Importer& im, const Node_& node, Attributes& a) {
  a.ignore("broadcast");  // opset < 7: broadcasting attributes; the shapes decide either way
  a.ignore("axis");
  a.ignore("consumed_inputs");
  const std::string& op = node.op_type();
  if (node.input_size() != 2) {
    // Sum / Max / Min / Mean of several tensors.
    std::vector<ValueId> ins;
    bool outside = false;
    for (int k = 0; k < node.input_size(); ++k) outside = outside || im.dynamic_input(node, k).batch_outside();
    const Symbol first = im.batch_like(im.dynamic_input(node, 0), outside, "input 0");
    const Perm perm = first.perm;
    for (int k = 0; k < node.input_size(); ++k) {
      Symbol& s = im.dynamic_input(node, k);
      if (s.rank() != first.rank()) im.fail("inputs of different ranks");
      ins.push_back(merge_operand(im, s, perm));
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
    // With a batch the file fixes to 1, arithmetic on the batch size is arithmetic on 1: every
    // sample sees the numbers of the file's single one (Swin's B * windows after patch merging).
    const auto batch_as_file = [&](const Constant& c) {
      Constant k = c;
      if (im.declared_batch() == 1 && k.is_int) std::replace(k.ints.begin(), k.ints.end(), kBatchMarker, int64_t{1});
      return k;
    };
    im.set_constant(node, 0, fold_binary(const_ops.at(op), batch_as_file(*lhs.constant), batch_as_file(*rhs.constant), im.context()));
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
    // When one operand is the file's single sample as a whole, the other becomes it too.
    const Symbol left = im.batch_like(lhs, lhs.batch_outside() || rhs.batch_outside(), "A");
    const Perm perm = left.perm;
    ValueId divisor = merge_operand(im, rhs, perm);
    if (op == "Div") {
      divisor = im.emit_internal(node.output(0) + ":reciprocal", ActivationParams{ActivationKind::kReciprocal}, {divisor});
    }
    im.emit(node, 0, MergeParams{m}, {left.value, divisor}, perm);
    return;
  }
  // One computed tensor and one constant: an affine map along one axis, or a ReLU; a constant that
  // varies along several axes (a position embedding) is an IR Constant merged with the tensor.
  const bool const_left = lhs.is_const();
  Symbol& x = const_left ? rhs : lhs;
  const Constant& c = const_left ? *lhs.constant : *rhs.constant;
  if (varies_along_several_axes(x, c) && op != "Pow") {
    merge_with_constant(im, node, op, x, c, const_left);
    return;
  }
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

}  // namespace

void add_binary_lowerings(LoweringTable& t) {
  t.add("Add", lower_binary);
  t.add("Div", lower_binary);
  t.add("Max", lower_binary);
  t.add("Mean", lower_binary);
  t.add("Min", lower_binary);
  t.add("Mul", lower_binary);
  t.add("Pow", lower_binary);
  t.add("Sub", lower_binary);
  t.add("Sum", lower_binary);
}

}  // namespace nnd::onnx_import
