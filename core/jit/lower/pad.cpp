// ZeroPadding layers, and the pad kernels window layers (conv, depthwise, pooling) read from.
#include "core/jit/lower/lower.h"

namespace nnd::jit {

int pad_step(LowerContext& cx, const Node& n, int src, const Hwc& in, int64_t dm, const Pads& pd, float value,
             Hwc* padded) {
  *padded = {in.h + pd.top + pd.bottom, in.w + pd.left + pd.right, in.c * dm};
  if (pd.top == 0 && pd.bottom == 0 && pd.left == 0 && pd.right == 0 && dm == 1) return src;
  const int b = cx.new_buffer(padded->h * padded->w * padded->c, n.name + ":padded");
  PadSpec ps{in.h, in.w, in.c, dm, pd.top, pd.bottom, pd.left, pd.right, value, false};
  cx.add(n, "pad", ps, {src}, b);
  // Replicating channels (dm > 1) is more than a border: only a plain pad may become a border fill.
  if (dm == 1) cx.kernels.back().reads_padding = PaddedStore{in.h, in.w, in.c, pd.top, pd.bottom, pd.left, pd.right, value};
  return b;
}

void lower(LowerContext& cx, const Node& n, const ZeroPaddingParams& p) {
  const int dst = cx.output_buffer(n);
  const Hwc in = as_hwc(p.rank, cx.in_shape(n));
  PadSpec ps{in.h, in.w, in.c, 1, p.rank == 1 ? 0 : p.top, p.rank == 1 ? 0 : p.bottom, p.left, p.right, 0.0f, false};
  cx.add(n, "pad", ps, {cx.in_buf(n, 0)}, dst);
}

}  // namespace nnd::jit
