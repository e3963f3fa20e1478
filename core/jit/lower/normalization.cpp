// BatchNormalization (folded into a per-channel affine over the last axis, a per-element affine
// over any other) and LayerNormalization (permuted so the normalised axes are contiguous).
#include <cmath>

#include "core/jit/lower/lower.h"
#include "core/util/checked_math.h"

namespace nnd::jit {

void lower(LowerContext& cx, const Node& n, const BatchNormParams& p) {
  const int dst = cx.output_buffer(n);
  const Dims& in_shape = cx.in_shape(n);
  const int64_t count = cx.out_count(n);
  auto scale_of = [&](size_t ch) {
    return static_cast<double>(p.gamma.data[ch]) / std::sqrt(static_cast<double>(p.moving_variance.data[ch]) + p.epsilon);
  };
  auto shift_of = [&](size_t ch, double s) {
    return static_cast<float>(static_cast<double>(p.beta.data[ch]) - static_cast<double>(p.moving_mean.data[ch]) * s);
  };
  if (p.axis != static_cast<int>(in_shape.size()) - 1) {
    int64_t inner = 1;
    for (size_t i = static_cast<size_t>(p.axis) + 1; i < in_shape.size(); ++i) inner *= in_shape[i];
    const int64_t c = in_shape[static_cast<size_t>(p.axis)];
    std::vector<float> scale(static_cast<size_t>(count)), shift(scale.size());
    for (int64_t i = 0; i < count; ++i) {
      const auto ch = static_cast<size_t>((i / inner) % c);
      const double s = scale_of(ch);
      scale[static_cast<size_t>(i)] = static_cast<float>(s);
      shift[static_cast<size_t>(i)] = shift_of(ch, s);
    }
    param_step(cx, n, ParamOp::kAffine, scale, &shift, cx.in_buf(n, 0), dst);
    activation_step(cx, n, dst, p.activation, count, in_shape.back());
    return;
  }
  const int64_t c = in_shape.back();
  std::vector<float> scale(static_cast<size_t>(ceil_div(c, 16) * 16), 0.0f), shift(scale.size(), 0.0f);
  for (int64_t i = 0; i < c; ++i) {
    const double s = scale_of(static_cast<size_t>(i));
    scale[static_cast<size_t>(i)] = static_cast<float>(s);
    shift[static_cast<size_t>(i)] = shift_of(static_cast<size_t>(i), s);
  }
  UnarySpec us;
  us.count = count;
  us.channels = c;
  us.scale_off = cx.add_weights(scale);
  us.shift_off = cx.add_weights(shift);
  // A fused activation (graph passes) runs inside the affine kernel when vectorised.
  if (unary_vectorised(p.activation)) us.act = p.activation;
  cx.add(n, "affine", us, {cx.in_buf(n, 0)}, dst);
  if (!unary_vectorised(p.activation)) activation_step(cx, n, dst, p.activation, count, c);
}

void lower(LowerContext& cx, const Node& n, const LayerNormParams& p) {
  const int dst = cx.output_buffer(n);
  const int src = cx.in_buf(n, 0);
  const Dims& shape = cx.in_shape(n);
  const size_t rank = shape.size();
  std::vector<bool> norm(rank, false);
  for (int a : p.axes) norm[static_cast<size_t>(a)] = true;
  std::vector<int> perm;
  for (size_t a = 0; a < rank; ++a) if (!norm[a]) perm.push_back(static_cast<int>(a));
  for (size_t a = 0; a < rank; ++a) if (norm[a]) perm.push_back(static_cast<int>(a));
  int64_t block = 1;
  for (int a : p.axes) block *= shape[static_cast<size_t>(a)];
  const int64_t count = cx.out_count(n);
  bool identity = true;
  for (size_t a = 0; a < rank; ++a) identity = identity && perm[a] == static_cast<int>(a);
  LayerNormSpec ls;
  ls.block = block;
  ls.groups = count / block;
  ls.epsilon = static_cast<float>(p.epsilon);
  if (!p.gamma.empty()) ls.gamma_off = cx.add_weights(p.gamma.data);
  if (!p.beta.empty()) ls.beta_off = cx.add_weights(p.beta.data);
  if (identity) {
    cx.add(n, "layernorm", ls, {src}, dst);
    return;
  }
  Dims pshape;
  const std::vector<int64_t> fwd = permute_map(shape, perm, &pshape);
  std::vector<int64_t> back(fwd.size());
  for (size_t i = 0; i < fwd.size(); ++i) back[static_cast<size_t>(fwd[i])] = static_cast<int64_t>(i);
  const int t0 = cx.new_buffer(count, n.name + ":permuted");
  const int t1 = cx.new_buffer(count, n.name + ":normalised");
  gather_step(cx, n, fwd, count, src, t0, "permute");
  cx.add(n, "layernorm", ls, {t0}, t1);
  gather_step(cx, n, back, count, t1, dst, "permute");
}

}  // namespace nnd::jit
