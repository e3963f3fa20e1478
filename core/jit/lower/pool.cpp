// Max and average pooling, global pooling: the f32-maxpool / f32-avgpool window kernels over a
// padded input; average pooling over padding rescales each position by its valid count after.
#include <algorithm>
#include <limits>

#include "core/jit/lower/lower.h"
#include "core/util/checked_math.h"

namespace nnd::jit {

namespace {

void lower_pool(LowerContext& cx, const Node& n, PoolKind kind, const Window& win, const Hwc& in, const Pads& pd,
                int dst) {
  const bool padded_any = pd.top || pd.bottom || pd.left || pd.right;
  Hwc padded;
  const float fill = kind == PoolKind::kMax ? -std::numeric_limits<float>::infinity() : 0.0f;
  const int src = pad_step(cx, n, cx.in_buf(n, 0), in, 1, pd, fill, &padded);
  WindowSpec ws = window_geometry(kind == PoolKind::kMax ? WindowOp::kMax : WindowOp::kSum, win, padded, in.c, pd);
  const WindowBlocking wb = pool_blocking(isa_traits(cx.isa), in.c);
  ws.vmax = wb.vmax;
  ws.rows = wb.rows;
  if (kind == PoolKind::kAverage && !padded_any) {
    ws.scale = static_cast<float>(1.0 / static_cast<double>(win.kernel_h * win.kernel_w));
  }
  cx.add(n, kind == PoolKind::kMax ? "maxpool" : "avgpool", ws, {src}, dst);
  if (kind == PoolKind::kAverage && padded_any) {
    // Average over the valid (unpadded) positions of each window, as TensorFlow does.
    std::vector<float> map(static_cast<size_t>(pd.h.out * pd.w.out));
    for (int64_t oh = 0; oh < pd.h.out; ++oh) {
      const int64_t h0 = oh * win.stride_h - pd.top;
      const int64_t hn = std::min(h0 + win.kernel_h, in.h) - std::max<int64_t>(h0, 0);
      for (int64_t ow = 0; ow < pd.w.out; ++ow) {
        const int64_t w0 = ow * win.stride_w - pd.left;
        const int64_t wn = std::min(w0 + win.kernel_w, in.w) - std::max<int64_t>(w0, 0);
        map[static_cast<size_t>(oh * pd.w.out + ow)] = static_cast<float>(1.0 / static_cast<double>(hn * wn));
      }
    }
    const int64_t off = cx.add_weights(map);
    cx.add(n, "posscale", PositionScaleSpec{pd.h.out * pd.w.out, in.c, off}, {dst}, dst);
  }
}

}  // namespace

void lower(LowerContext& cx, const Node& n, const PoolParams& p) {
  const int dst = cx.output_buffer(n);
  const Hwc in = as_hwc(p.rank, cx.in_shape(n));
  lower_pool(cx, n, p.kind, p.window, in, pads_for(p.window, in), dst);
}

void lower(LowerContext& cx, const Node& n, const GlobalPoolParams& p) {
  const int dst = cx.output_buffer(n);
  const Hwc in = as_hwc(p.rank, cx.in_shape(n));
  Window w;
  w.kernel_h = in.h;
  w.kernel_w = in.w;
  lower_pool(cx, n, p.kind, w, in, pads_for(w, in), dst);
}

}  // namespace nnd::jit
