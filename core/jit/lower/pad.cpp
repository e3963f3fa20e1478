// ZeroPadding layers, and the pad kernels window layers (conv, depthwise, pooling) read from.
#include "core/jit/lower/lower.h"

namespace nnd::jit {

int pad_step(LowerContext& cx, const Node& n, int src, const Hwc& in, int64_t dm, const Pads& pd, float value,
             Hwc* padded) {
  *padded = {in.h + pd.top + pd.bottom, in.w + pd.left + pd.right, in.c * dm};
  if (pd.top == 0 && pd.bottom == 0 && pd.left == 0 && pd.right == 0 && dm == 1) return src;
  const std::optional<PaddedStore>& placed = cx.buffers[static_cast<size_t>(src)].placed;
  if (dm == 1 && placed && *placed == PaddedStore{in.h, in.w, in.c, pd.top, pd.bottom, pd.left, pd.right, value}) {
    // The producer wrote the interior already: fill the border in place.
    PadSpec ps{in.h, in.w, in.c, 1, pd.top, pd.bottom, pd.left, pd.right, value, false, true};
    cx.add(n, "padborder", ps, {src}, src);
    return src;
  }
  const int b = cx.new_buffer(padded->h * padded->w * padded->c, n.name + ":padded");
  PadSpec ps{in.h, in.w, in.c, dm, pd.top, pd.bottom, pd.left, pd.right, value, false};
  cx.add(n, "pad", ps, {src}, b);
  return b;
}

void lower(LowerContext& cx, const Node& n, const ZeroPaddingParams& p) {
  const int dst = cx.output_buffer(n);
  const Hwc in = as_hwc(p.rank, cx.in_shape(n));
  PadSpec ps{in.h, in.w, in.c, 1, p.rank == 1 ? 0 : p.top, p.rank == 1 ? 0 : p.bottom, p.left, p.right, 0.0f, false};
  cx.add(n, "pad", ps, {cx.in_buf(n, 0)}, dst);
}

}  // namespace nnd::jit
