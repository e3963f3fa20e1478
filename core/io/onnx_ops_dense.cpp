// ONNX dense layers and normalisation: Gemm, MatMul (with a constant matrix: Dense; of two computed
// tensors: MatMul), BatchNormalization, LayerNormalization.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/io/onnx_ops.h"
#include "core/util/error.h"

namespace nnd::onnx_import {
namespace {

void lower_gemm(Importer& im, const Node_& node, Attributes& a) {
  if (im.input(node, 0).is_const() && !im.input(node, 1).is_const()) {
    // A · B with the samples in B puts the batch on the result's axis 1 (the output is (M, N)),
    // which nnd's batch-first IR cannot hold.
    im.fail("A is a constant and B the computed tensor: the result would have the batch on axis 1, not 0");
  }
  Symbol& x = im.dynamic_input(node, 0);
  // With the file's single sample as a whole, A is (M, K) per sample: a Dense over its last axis.
  if (x.rank() != 2) {
    im.fail(std::string("A must have rank 2 (") + (x.batch_outside() ? "rows" : "batch") + ", features), got rank " +
            std::to_string(x.rank()));
  }
  if (a.i("transA", 0)) im.fail(ErrorCode::kUnsupported, "transA = 1 would transpose across the batch axis");
  const bool trans_b = a.i("transB", 0) != 0;
  a.ignore("broadcast");  // opset < 7
  const double alpha = a.f("alpha", 1.0), beta = a.f("beta", 1.0);
  if (beta == 1.0 && lower_qdq_dense(im, node, trans_b, alpha, 2)) return;  // DequantizeLinear inputs: integer
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
    if (c.dims.size() == 2 && c.dims[0] != 1) im.fail(ErrorCode::kUnsupported, "C varies along the rows of A");
    p.bias = filled(n, 0.0f);
    for (int64_t j = 0; j < n; ++j) {
      p.bias.data[static_cast<size_t>(j)] = static_cast<float>(beta * c.real_at(c.size() == 1 ? 0 : j));
    }
  }
  const Perm perm = onnx_order(x);
  im.emit(node, 0, p, {im.in_layout(x, perm)}, perm);
}

// A · B of two computed tensors (attention's Q·Kᵀ and weights·V, stacks over the leading axes): an
// IR MatMul in a layout with the batch first, the other leading axes in ONNX order and the two
// matrix axes last. Both operands carry the batch on the same leading axis; a batch the file fixes
// to 1 may move to one of length 1.
void lower_matmul_computed(Importer& im, const Node_& node) {
  Symbol& a = im.dynamic_input(node, 0);
  Symbol& b = im.dynamic_input(node, 1);
  if (a.rank() != b.rank()) {
    im.fail(ErrorCode::kUnsupported, "two computed operands of ranks " + std::to_string(a.rank()) + " and " +
                                         std::to_string(b.rank()) + " (broadcasting would pair one's batch with the other's data)");
  }
  const int r = static_cast<int>(a.rank());
  if (a.batch_outside() || b.batch_outside()) {
    // The file's single sample as a whole: the product as ONNX states it, per sample, the leading
    // axes in ONNX order (MatMulParams broadcasts those of length 1).
    const Symbol sa = im.batch_like(a, true, "A");
    if (r < 2) im.fail(ErrorCode::kUnsupported, "operands of rank 1 (vector products) are not supported");
    const Perm perm = onnx_order(sa);
    Symbol ma = sa;
    const ValueId av = im.in_layout(ma, perm);
    const ValueId bv = merge_operand(im, b, perm);
    im.emit(node, 0, MatMulParams{}, {av, bv}, perm);
    return;
  }
  if (r < 3) {
    im.fail(ErrorCode::kUnsupported, "two computed operands of rank 2: the product would pair the samples of one "
                                     "with the rows of the other");
  }
  Symbol moved = a;
  for (int axis = 0; moved.perm[0] >= r - 2 && axis < r - 2; ++axis) {
    if (auto m = im.with_batch_on(a, axis)) moved = std::move(*m);
  }
  if (moved.perm[0] >= r - 2) {
    im.fail(ErrorCode::kUnsupported, "A carries the batch on ONNX axis " + std::to_string(a.perm[0]) +
                                         ", one of the two matrix axes the product works on");
  }
  Perm perm{moved.perm[0]};
  for (int k = 0; k < r; ++k) {
    if (k != moved.perm[0]) perm.push_back(k);
  }
  const ValueId av = im.in_layout(moved, perm);
  const ValueId bv = merge_operand(im, b, perm);
  im.emit(node, 0, MatMulParams{}, {av, bv}, perm);
}

void lower_matmul(Importer& im, const Node_& node, Attributes&) {
  if (lower_qdq_dense(im, node, false, 1.0, -1)) return;  // DequantizeLinear inputs: integer
  if (!im.input(node, 0).is_const() && !im.input(node, 1).is_const()) {
    lower_matmul_computed(im, node);
    return;
  }
  Symbol& x = im.dynamic_input(node, 0);
  if (x.rank() < 2) im.fail("the input needs an axis besides the batch");
  const Perm perm = dense_layout(im, x);
  const Constant& b = im.const_input(node, 1, "B");
  if (b.dims.size() != 2) im.fail("B must be a 2-D constant, got shape " + list_text(b.dims));
  const int64_t k = b.dims[0], n = b.dims[1];
  if (x.dims.back() != k) im.fail("B " + list_text(b.dims) + " does not fit the input's last axis");
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
  if (axis == 0 && !x.batch_outside()) im.fail(ErrorCode::kUnsupported, "normalising over the batch axis is not supported");
  a.ignore("stash_type");
  LayerNormParams p;
  p.epsilon = a.f("epsilon", 1e-5);
  int64_t count = 1;
  const Perm perm = onnx_order(x);
  for (int64_t k = axis; k < static_cast<int64_t>(x.rank()); ++k) {
    p.keras_axes.push_back(static_cast<int>(k) + (x.batch_outside() ? 1 : 0));  // the IR axis in `perm`
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
  im.emit(node, 0, p, {im.in_layout(x, perm)}, perm);
}

}  // namespace

void add_dense_lowerings(LoweringTable& t) {
  t.add("BatchNormalization", lower_batch_norm);
  t.add("Gemm", lower_gemm);
  t.add("LayerNormalization", lower_layer_norm);
  t.add("MatMul", lower_matmul);
}

}  // namespace nnd::onnx_import
