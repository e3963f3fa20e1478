// Convolutions (Conv1D/2D) and transposed convolutions. The strategy is chosen here: Winograd
// F(2x2, 3x3) when winograd_suits, planar on SSE4.1 when planar_conv_suits, otherwise the f32-conv
// kernel in rows mode (1x1 stride-1 over a dense output: a GEMM) or spatial mode over a padded input.
#include "core/jit/lower/lower.h"
#include "core/util/error.h"

namespace nnd::jit {

ConvSpec conv_spec(const LowerContext& cx, int64_t cin_g, int64_t cout_g) {
  ConvSpec cs;
  cs.cin_g = cin_g;
  cs.cout_g = cout_g;
  cs.blocking = conv_blocking(isa_traits(cx.isa), cout_g);
  return cs;
}

void conv_step(LowerContext& cx, const Node& n, ConvSpec cs, const Weights& kernel, const Weights& bias, int src,
               int dst, const std::string& variant, int residual) {
  std::vector<float> blob;
  pack_conv_weights(cs, cx.width, kernel.data, bias.empty() ? nullptr : &bias.data, blob);
  const int64_t off = cx.add_weights(blob);
  for (auto& o : cs.group_weight_off) o += off;
  for (auto& o : cs.group_bias_off) o += off;
  cs.residual = residual >= 0;
  cs.residual_at = cx.residual_at(n);
  std::vector<int> ins{src};
  if (cs.residual) ins.push_back(residual);
  // Rows mode is a GEMM; spatial mode runs groups >= 4 in a run-time loop (x86/kernels.cpp).
  const bool rows = cs.rows_mode;
  const std::string shape = rows ? "" : !variant.empty() ? variant : cs.groups >= 4 ? "grouped" : "direct";
  cx.add(n, rows ? "gemm" : "conv", std::move(cs), ins, dst, shape);
}

namespace {

// SSE4.1 convolutions with few input channels (planar_conv_suits): the input is rearranged into
// channel/phase planes (planar-pack), then the planar conv computes 4 pixels per vector.
void planar_conv(LowerContext& cx, const Node& n, const ConvParams& p, const Hwc& in, const Pads& pd, int src,
                 int dst, int residual) {
  const Window& w = p.window;
  PlanarPackSpec ps;
  ps.in_h = in.h;
  ps.in_w = in.w;
  ps.top = pd.top;
  ps.left = pd.left;
  ps.out = planar_layout(in.c, pd.h.out, pd.w.out, w.kernel_h, w.kernel_w, w.stride_h, w.stride_w, w.dilation_h,
                         w.dilation_w);
  ps.src_row_floats = in.w * in.c;
  ps.src_sample_floats = in.h * in.w * in.c;
  const int planes = cx.new_buffer(ps.out.sample_floats(), n.name + ":planar");
  cx.add(n, "planar-pack", ps, {src}, planes);
  // The pack supplies the zero border itself, so it can read the interior of a bordered input.
  cx.kernels.back().reads_padding = PaddedStore{in.h, in.w, in.c, pd.top, pd.bottom, pd.left, pd.right, 0.0f};
  PlanarConvSpec cs;
  cs.in = ps.out;
  cs.out_h = pd.h.out;
  cs.out_w = pd.w.out;
  cs.cout = p.filters;
  cs.kh = w.kernel_h;
  cs.kw = w.kernel_w;
  cs.sh = w.stride_h;
  cs.dh = w.dilation_h;
  cs.dw = w.dilation_w;
  cs.has_bias = !p.bias.empty();
  cs.act = act_fusable(p.activation) ? p.activation : ActivationKind::kLinear;
  cs.residual = residual >= 0;
  cs.residual_at = cx.residual_at(n);
  plan_planar_blocking(cs);
  std::vector<float> blob;
  pack_planar_conv_weights(cs, p.kernel.data, p.bias.empty() ? nullptr : &p.bias.data, blob);
  const int64_t off = cx.add_weights(blob);
  for (auto& o : cs.chunk_weight_off) o += off;
  cs.bias_off += off;
  std::vector<int> ins{planes};
  if (cs.residual) ins.push_back(residual);
  cx.add(n, "conv", std::move(cs), ins, dst, "planar");
}

// 3x3 stride-1 convolutions as Winograd F(2x2, 3x3) (winograd_suits): f32-wino-in transforms
// the padded input per 2x2 output tile, a 16-group 1x1 f32-conv multiplies each transform point
// by its transformed weights, f32-wino-out transforms back and runs the epilogue.
void winograd_conv(LowerContext& cx, const Node& n, const ConvParams& p, const Hwc& in, const Pads& pd, int src,
                   int dst, int residual) {
  Hwc padded;
  const int b = pad_step(cx, n, src, in, 1, pd, 0.0f, &padded);
  const int64_t th = pd.h.out / 2, tw = pd.w.out / 2;
  if (padded.h != 2 * th + 2 || padded.w != 2 * tw + 2) {
    throw Error(ErrorCode::kInternal, "JIT internal error: Winograd input of " + n.name + " is not 2 * tiles + 2 on each axis");
  }
  const int v = cx.new_buffer(th * tw * kWinogradPoints * in.c, n.name + ":winograd-input");
  cx.add(n, "wino-in", WinogradInSpec{th, tw, in.c}, {b}, v);
  ConvSpec cs = conv_spec(cx, in.c, p.filters);
  cs.groups = kWinogradPoints;
  cs.in_c = kWinogradPoints * in.c;
  cs.out_c = kWinogradPoints * p.filters;
  cs.in_h = cs.out_h = th;
  cs.in_w = cs.out_w = tw;
  const Weights u{{1, 1, in.c, kWinogradPoints * p.filters}, winograd_weights(p.kernel.data, in.c, p.filters)};
  const int m = cx.new_buffer(th * tw * kWinogradPoints * p.filters, n.name + ":winograd-products");
  conv_step(cx, n, cs, u, Weights{}, v, m, "winograd");
  WinogradOutSpec os;
  os.tiles_h = th;
  os.tiles_w = tw;
  os.c = p.filters;
  os.has_bias = !p.bias.empty();
  if (os.has_bias) os.bias_off = cx.add_weights(p.bias.data);
  os.act = act_fusable(p.activation) ? p.activation : ActivationKind::kLinear;
  os.residual = residual >= 0;
  os.residual_at = cx.residual_at(n);
  std::vector<int> ins{m};
  if (os.residual) ins.push_back(residual);
  cx.add(n, "wino-out", os, ins, dst);
}

}  // namespace

void lower(LowerContext& cx, const Node& n, const ConvParams& p) {
  const int dst = cx.output_buffer(n);
  const Hwc in = as_hwc(p.rank, cx.in_shape(n));
  const Pads pd = pads_for(p.window, in);
  const int64_t cin_g = in.c / p.groups, cout_g = p.filters / p.groups;
  ConvSpec cs = conv_spec(cx, cin_g, cout_g);
  const Window& w = p.window;
  cs.groups = p.groups;
  cs.out_h = pd.h.out;
  cs.out_w = pd.w.out;
  cs.in_c = in.c;
  cs.out_c = p.filters;
  cs.kh = w.kernel_h;
  cs.kw = w.kernel_w;
  cs.sh = w.stride_h;
  cs.sw = w.stride_w;
  cs.dh = w.dilation_h;
  cs.dw = w.dilation_w;
  cs.has_bias = !p.bias.empty();
  cs.act = act_fusable(p.activation) ? p.activation : ActivationKind::kLinear;
  int src = cx.in_buf(n, 0);
  const int residual = cx.residual_buf(n, p.residual);
  // Winograd only where the architecture emits its transforms (the direct kernel computes the same).
  if (winograd_suits(isa_traits(cx.isa), p.groups, in.c, p.filters, w, pd.h.out, pd.w.out) &&
      cx.emits(WinogradInSpec{}) && cx.emits(WinogradOutSpec{})) {
    winograd_conv(cx, n, p, in, pd, src, dst, residual);
  } else if (planar_conv_suits(isa_traits(cx.isa), p.groups, in.c, p.filters, w.kernel_h, w.kernel_w, pd.w.out)) {
    planar_conv(cx, n, p, in, pd, src, dst, residual);
  } else {
    if (w.kernel_h == 1 && w.kernel_w == 1 && w.stride_h == 1 && w.stride_w == 1 && p.groups == 1) {
      cs.rows_mode = true;
    } else {
      Hwc padded;
      src = pad_step(cx, n, src, in, 1, pd, 0.0f, &padded);
      cs.in_h = padded.h;
      cs.in_w = padded.w;
    }
    conv_step(cx, n, cs, p.kernel, p.bias, src, dst, "", residual);
  }
  if (!act_fusable(p.activation)) activation_step(cx, n, dst, p.activation, cx.out_count(n), p.filters);
}

// A transposed convolution is a forward convolution (stride 1, flipped kernel) over the
// zero-inserted, padded input U, built by an index-map gather: input pixel i sits at U position
// i * s + P with P = (k - 1) * d - pad_before.
void lower(LowerContext& cx, const Node& n, const ConvTransposeParams& p) {
  const int dst = cx.output_buffer(n);
  const Dims& in_shape = cx.in_shape(n);
  const Dims& out_shape = cx.out_shape(n);
  const Hwc in = as_hwc(p.rank, in_shape), out = as_hwc(p.rank, out_shape);
  const Window& w = p.window;
  const auto th = transpose_window_h(w, in.h, p.rank == 1 ? -1 : p.output_padding_h);
  const auto tw = transpose_window_w(w, in.w, p.output_padding_w);
  const int64_t ph = (w.kernel_h - 1) * w.dilation_h - th.pad_before;
  const int64_t pw = (w.kernel_w - 1) * w.dilation_w - tw.pad_before;
  const int64_t uh = out.h + (w.kernel_h - 1) * w.dilation_h, uw = out.w + (w.kernel_w - 1) * w.dilation_w;
  std::vector<int64_t> map(static_cast<size_t>(uh * uw * in.c), -1);
  for (int64_t ih = 0; ih < in.h; ++ih) {
    const int64_t y = ih * w.stride_h + ph;
    if (y < 0 || y >= uh) continue;
    for (int64_t iw = 0; iw < in.w; ++iw) {
      const int64_t x = iw * w.stride_w + pw;
      if (x < 0 || x >= uw) continue;
      for (int64_t c = 0; c < in.c; ++c) map[static_cast<size_t>((y * uw + x) * in.c + c)] = (ih * in.w + iw) * in.c + c;
    }
  }
  const int ub = cx.new_buffer(uh * uw * in.c, n.name + ":upsampled");
  gather_step(cx, n, map, in.h * in.w * in.c, cx.in_buf(n, 0), ub, "gather-zeroinsert");
  // Kernel (kh, kw, filters, Cin) -> flipped (kh, kw, Cin, filters).
  Weights k;
  k.shape = {w.kernel_h, w.kernel_w, in.c, p.filters};
  k.data.resize(static_cast<size_t>(w.kernel_h * w.kernel_w * in.c * p.filters));
  for (int64_t a = 0; a < w.kernel_h; ++a) {
    for (int64_t b = 0; b < w.kernel_w; ++b) {
      for (int64_t f = 0; f < p.filters; ++f) {
        for (int64_t c = 0; c < in.c; ++c) {
          const int64_t srci = ((a * w.kernel_w + b) * p.filters + f) * in.c + c;
          const int64_t dsti = (((w.kernel_h - 1 - a) * w.kernel_w + (w.kernel_w - 1 - b)) * in.c + c) * p.filters + f;
          k.data[static_cast<size_t>(dsti)] = p.kernel.data[static_cast<size_t>(srci)];
        }
      }
    }
  }
  ConvSpec cs = conv_spec(cx, in.c, p.filters);
  cs.in_h = uh;
  cs.in_w = uw;
  cs.in_c = in.c;
  cs.out_h = out.h;
  cs.out_w = out.w;
  cs.out_c = p.filters;
  cs.kh = w.kernel_h;
  cs.kw = w.kernel_w;
  cs.dh = w.dilation_h;
  cs.dw = w.dilation_w;
  cs.has_bias = !p.bias.empty();
  cs.act = act_fusable(p.activation) ? p.activation : ActivationKind::kLinear;
  conv_step(cx, n, cs, k, p.bias, ub, dst, "");
  if (!act_fusable(p.activation)) activation_step(cx, n, dst, p.activation, cx.out_count(n), p.filters);
}

}  // namespace nnd::jit
