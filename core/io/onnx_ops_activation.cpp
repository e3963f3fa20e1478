// ONNX activations and softmax: one IR element-wise layer each (Clip as a ReLU between affine maps).
#include <onnx/onnx_pb.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "core/io/onnx_ops.h"
#include "core/util/error.h"

namespace nnd::onnx_import {
namespace {

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
  if (axis == 0 && !x.batch_outside()) im.fail(ErrorCode::kUnsupported, "softmax over the batch axis is not supported");
  bool trailing_ones = true;
  for (size_t k = static_cast<size_t>(axis) + 1; k < x.rank(); ++k) trailing_ones = trailing_ones && x.dims[k] == 1;
  if (im.opset() < 13 && !trailing_ones) {
    if (x.batch_outside()) {
      im.fail(ErrorCode::kUnsupported, "softmax over several axes (opset < 13) of the file's single sample as a whole is not supported");
    }
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
    if (ir != static_cast<int>(x.perm.size()) - 1) {
      Perm perm{x.perm[0]};
      for (int ax : x.perm) {
        if (ax != x.perm[0] && ax != axis) perm.push_back(ax);
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

}  // namespace

void add_activation_lowerings(LoweringTable& t) {
  t.add("Clip", lower_clip);
  t.add("Elu", lower_elu);
  t.add("Exp", lower_simple_activation);
  t.add("Gelu", lower_gelu);
  t.add("HardSigmoid", lower_hard_sigmoid);
  t.add("HardSwish", lower_simple_activation);
  t.add("LeakyRelu", lower_leaky_relu);
  t.add("LogSoftmax", lower_softmax);
  t.add("Mish", lower_simple_activation);
  t.add("PRelu", lower_prelu);
  t.add("Relu", lower_simple_activation);
  t.add("Selu", lower_selu);
  t.add("Sigmoid", lower_simple_activation);
  t.add("Softmax", lower_softmax);
  t.add("Softplus", lower_simple_activation);
  t.add("Softsign", lower_simple_activation);
  t.add("Tanh", lower_simple_activation);
  t.add("ThresholdedRelu", lower_thresholded_relu);
}

}  // namespace nnd::onnx_import
