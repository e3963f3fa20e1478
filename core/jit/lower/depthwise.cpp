// Depthwise and separable convolutions: the f32-dwconv window kernel over a padded input (channels
// replicated by the pad kernel when the depth multiplier is above 1); a separable convolution adds
// the pointwise f32-gemm.
#include <algorithm>

#include "core/jit/lower/lower.h"
#include "core/util/checked_math.h"

namespace nnd::jit {

void depthwise_step(LowerContext& cx, const Node& n, const Window& win, const Weights& kernel, const Weights* bias,
                    int64_t dm, ActivationKind act, int src, int dst, const Hwc& in, const Pads& pd, int residual) {
  Hwc padded;
  const int b = pad_step(cx, n, src, in, dm, pd, 0.0f, &padded);
  WindowSpec ws = window_geometry(WindowOp::kDepthwise, win, padded, padded.c, pd);
  ws.dh = win.dilation_h;
  ws.dw = win.dilation_w;
  ws.has_bias = bias != nullptr;
  ws.act = act_fusable(act) ? act : ActivationKind::kLinear;
  const WindowBlocking wb = depthwise_blocking(isa_traits(cx.isa), ws.c);
  ws.vmax = wb.vmax;
  ws.rows = wb.rows;
  std::vector<float> blob;
  pack_depthwise_weights(ws, cx.width, kernel.data, bias ? &bias->data : nullptr, blob);
  const int64_t off = cx.add_weights(blob);
  ws.weight_off += off;
  ws.bias_off += off;
  ws.residual = residual >= 0;
  ws.residual_at = cx.residual_at(n);
  std::vector<int> ins{b};
  if (ws.residual) ins.push_back(residual);
  cx.add(n, "dwconv", ws, ins, dst);
  if (!act_fusable(act)) activation_step(cx, n, dst, act, pd.h.out * pd.w.out * padded.c, padded.c);
}

void lower(LowerContext& cx, const Node& n, const DepthwiseConvParams& p) {
  const int dst = cx.output_buffer(n);
  const Hwc in = as_hwc(p.rank, cx.in_shape(n));
  depthwise_step(cx, n, p.window, p.kernel, p.bias.empty() ? nullptr : &p.bias, p.depth_multiplier, p.activation,
                 cx.in_buf(n, 0), dst, in, pads_for(p.window, in), cx.residual_buf(n, p.residual));
}

void lower(LowerContext& cx, const Node& n, const SeparableConvParams& p) {
  const int dst = cx.output_buffer(n);
  const Hwc in = as_hwc(p.rank, cx.in_shape(n));
  const Pads pd = pads_for(p.window, in);
  const int64_t mid_c = in.c * p.depth_multiplier;
  const int mid = cx.new_buffer(pd.h.out * pd.w.out * mid_c, n.name + ":depthwise");
  depthwise_step(cx, n, p.window, p.depthwise_kernel, nullptr, p.depth_multiplier, ActivationKind::kLinear,
                 cx.in_buf(n, 0), mid, in, pd);
  ConvSpec cs = conv_spec(cx, mid_c, p.filters);
  cs.in_c = mid_c;
  cs.out_c = p.filters;
  cs.rows_mode = true;  // padded storage may make it a 1x1 spatial conv (kernel_plan.h: place_output)
  cs.out_w = pd.h.out * pd.w.out;
  cs.has_bias = !p.bias.empty();
  cs.act = act_fusable(p.activation) ? p.activation : ActivationKind::kLinear;
  conv_step(cx, n, cs, p.pointwise_kernel, p.bias, mid, dst, "", cx.residual_buf(n, p.residual));
  if (!act_fusable(p.activation)) activation_step(cx, n, dst, p.activation, cx.out_count(n), p.filters);
}

}  // namespace nnd::jit
