// Element-wise layers: activations (vectorised, fast math or helper calls), ReLU, ELU,
// ThresholdedReLU, PReLU and Softmax, and the activation step other units append when their
// epilogue cannot fuse an activation.
#include <cmath>

#include "core/ir/broadcast.h"
#include "core/jit/lower/lower.h"

namespace nnd::jit {

void activation_step(LowerContext& cx, const Node& n, int b, ActivationKind act, int64_t count, int64_t last_dim) {
  if (act == ActivationKind::kLinear) return;
  unary_step(cx, n, b, b, act, count, last_dim);
}

void unary_step(LowerContext& cx, const Node& n, int src, int dst, ActivationKind act, int64_t count,
                int64_t last_dim) {
  if (fast_step(cx, n, src, dst, act, 1.0f, count, last_dim)) return;
  if (activation_is_softmax_like(act)) {
    helper_step(cx, n, src, dst, act == ActivationKind::kSoftmax ? HelperTag::kSoftmax : HelperTag::kLogSoftmax,
                {static_cast<float>(last_dim), 1.0f, 0.0f}, count, "softmax");
  } else if (unary_vectorised(act)) {
    UnarySpec us;
    us.count = count;
    us.act = act;
    cx.add(n, std::string("vact-") + activation_name(act), us, {src}, dst);
  } else {
    helper_step(cx, n, src, dst, HelperTag::kActivation, {static_cast<float>(static_cast<int>(act)), 0, 0}, count,
                std::string("act-") + activation_name(act));
  }
}

bool fast_step(LowerContext& cx, const Node& n, int src, int dst, ActivationKind act, float alpha, int64_t count,
               int64_t last_dim) {
  if (!fast_kernel_serves(act, cx.math, activation_is_softmax_like(act) ? last_dim : 0)) return false;
  // Where the architecture has no f32-fast-* kernels yet, the float64 helpers serve both modes.
  if (!cx.emits(FastUnarySpec{}) || !cx.emits(FastSoftmaxSpec{})) return false;
  if (act == ActivationKind::kSoftmax) {
    cx.add(n, "fast-softmax", FastSoftmaxSpec{count / last_dim, last_dim}, {src}, dst);
    return true;
  }
  FastUnarySpec fs;
  fs.count = count;
  fs.act = act;
  fs.alpha = alpha;
  cx.add(n, std::string("fast-") + activation_name(act), fs, {src}, dst);
  return true;
}

void helper_step(LowerContext& cx, const Node& n, int src, int dst, HelperTag tag, std::array<float, 3> params,
                 int64_t count, const std::string& what) {
  const int64_t off = cx.add_weights({static_cast<float>(static_cast<int>(tag)), params[0], params[1], params[2]});
  cx.add(n, "call-" + what, HelperCallSpec{kHelperUnary, count, off}, {src}, dst);
}

void param_step(LowerContext& cx, const Node& n, ParamOp op, const std::vector<float>& a, const std::vector<float>* b,
                int src, int dst) {
  ParamEltSpec ps;
  ps.op = op;
  ps.count = static_cast<int64_t>(a.size());
  ps.a_off = cx.add_weights(a);
  ps.b_off = b ? cx.add_weights(*b) : ps.a_off;
  cx.add(n, op == ParamOp::kPRelu ? "vprelu" : "vaffine", ps, {src}, dst);
}

void lower(LowerContext& cx, const Node& n, const ActivationParams& p) {
  const int dst = cx.output_buffer(n);
  unary_step(cx, n, cx.in_buf(n, 0), dst, p.activation, cx.out_count(n), cx.in_shape(n).back());
}

void lower(LowerContext& cx, const Node& n, const ReluParams& p) {
  const int dst = cx.output_buffer(n);
  const int64_t count = cx.out_count(n);
  if (p.threshold == 0.0) {
    UnarySpec us;
    us.count = count;
    us.relu_layer = true;
    us.negative_slope = static_cast<float>(p.negative_slope);
    us.has_max = std::isfinite(p.max_value);
    us.max_value = us.has_max ? static_cast<float>(p.max_value) : 0.0f;
    cx.add(n, "vrelu", us, {cx.in_buf(n, 0)}, dst);
  } else {
    helper_step(cx, n, cx.in_buf(n, 0), dst, HelperTag::kRelu,
                {static_cast<float>(p.max_value), static_cast<float>(p.negative_slope), static_cast<float>(p.threshold)},
                count, "relu");
  }
}

void lower(LowerContext& cx, const Node& n, const EluParams& p) {
  const int dst = cx.output_buffer(n);
  const int64_t count = cx.out_count(n);
  if (fast_step(cx, n, cx.in_buf(n, 0), dst, ActivationKind::kElu, static_cast<float>(p.alpha), count, 1)) return;
  helper_step(cx, n, cx.in_buf(n, 0), dst, HelperTag::kElu, {static_cast<float>(p.alpha), 0, 0}, count, "elu");
}

void lower(LowerContext& cx, const Node& n, const ThresholdedReluParams& p) {
  const int dst = cx.output_buffer(n);
  helper_step(cx, n, cx.in_buf(n, 0), dst, HelperTag::kThresholdedRelu, {static_cast<float>(p.theta), 0, 0},
              cx.out_count(n), "thresholded-relu");
}

void lower(LowerContext& cx, const Node& n, const PReluParams& p) {
  const int dst = cx.output_buffer(n);
  const std::vector<int64_t> map = broadcast_map(cx.in_shape(n), p.alpha.shape);
  std::vector<float> a(map.size());
  for (size_t i = 0; i < map.size(); ++i) a[i] = p.alpha.data[static_cast<size_t>(map[i])];
  param_step(cx, n, ParamOp::kPRelu, a, nullptr, cx.in_buf(n, 0), dst);
}

void lower(LowerContext& cx, const Node& n, const SoftmaxParams& p) {
  const int dst = cx.output_buffer(n);
  const Dims& in_shape = cx.in_shape(n);
  const int64_t count = cx.out_count(n);
  const int64_t len = in_shape[static_cast<size_t>(p.axis)];
  int64_t inner = 1;
  for (size_t i = static_cast<size_t>(p.axis) + 1; i < in_shape.size(); ++i) inner *= in_shape[i];
  if (inner == 1 && fast_step(cx, n, cx.in_buf(n, 0), dst, ActivationKind::kSoftmax, 1.0f, count, len)) return;
  helper_step(cx, n, cx.in_buf(n, 0), dst, HelperTag::kSoftmax, {static_cast<float>(len), static_cast<float>(inner), 0},
              count, "softmax");
}

}  // namespace nnd::jit
