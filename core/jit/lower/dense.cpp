// Dense layers: the f32-conv kernel in rows mode (a GEMM over batch * rows x units).
#include "core/jit/lower/lower.h"

namespace nnd::jit {

void lower(LowerContext& cx, const Node& n, const DenseParams& p) {
  const int dst = cx.output_buffer(n);
  const int64_t count = cx.out_count(n);
  const int64_t k = cx.in_shape(n).back();
  ConvSpec cs = conv_spec(cx, k, p.units);
  cs.rows_mode = true;
  cs.in_c = k;
  cs.out_c = p.units;
  cs.out_w = count / p.units;
  cs.has_bias = !p.bias.empty();
  cs.act = act_fusable(p.activation) ? p.activation : ActivationKind::kLinear;
  conv_step(cx, n, cs, p.kernel, p.bias, cx.in_buf(n, 0), dst, "", cx.residual_buf(n, p.residual));
  if (!act_fusable(p.activation)) activation_step(cx, n, dst, p.activation, count, p.units);
}

}  // namespace nnd::jit
