// The planar convolution's layout, blocking and weight layout (specs/planar.h).
#include "core/jit/specs/planar.h"

#include <algorithm>

#include "core/jit/kernel_config.h"
#include "core/util/checked_math.h"
#include "core/util/error.h"

namespace nnd::jit {

PlanarLayout planar_layout(int64_t c, int64_t out_h, int64_t out_w, int64_t kh, int64_t kw, int64_t sh,
                           int64_t sw, int64_t dh, int64_t dw) {
  PlanarLayout l;
  l.c = c;
  l.phases = sw;
  l.plane_h = (out_h - 1) * sh + (kh - 1) * dh + 1;
  l.plane_w = ceil_div(out_w, 4) * 4 + ((kw - 1) * dw) / sw;
  return l;
}

void plan_planar_blocking(PlanarConvSpec& s) {
  if (s.cout % 4 != 0 || s.cout <= 0) throw Error(ErrorCode::kInternal, "JIT internal error: f32-conv-planar needs whole groups of 4 channels");
  s.chunks = planar_conv_chunks(s.cout);
  const int kmax = *std::max_element(s.chunks.begin(), s.chunks.end());
  // Registers 0..14 (15 is the hooks' scratch): G*K accumulators plus G inputs in the loop, and
  // two transpose temporaries in the epilogue.
  s.groups = static_cast<int>(std::clamp<int64_t>(15 / (kmax + 1), 1, ceil_div(s.out_w, 4)));
}

void pack_planar_conv_weights(PlanarConvSpec& s, const std::vector<float>& kernel, const std::vector<float>* bias,
                              std::vector<float>& blob) {
  auto align = [&] { blob.resize((blob.size() + 15) / 16 * 16, 0.0f); };
  s.chunk_weight_off.clear();
  int64_t c0 = 0;
  for (int k : s.chunks) {
    align();
    s.chunk_weight_off.push_back(static_cast<int64_t>(blob.size()));
    for (int64_t ci = 0; ci < s.in.c; ++ci) {
      for (int64_t ky = 0; ky < s.kh; ++ky) {
        for (int64_t kx = 0; kx < s.kw; ++kx) {
          for (int64_t c = 0; c < k; ++c) {
            const float w = kernel[static_cast<size_t>(((ky * s.kw + kx) * s.in.c + ci) * s.cout + c0 + c)];
            blob.insert(blob.end(), 4, w);
          }
        }
      }
    }
    c0 += k;
  }
  align();
  s.bias_off = static_cast<int64_t>(blob.size());
  for (int64_t c = 0; c < s.cout; ++c) blob.insert(blob.end(), 4, bias ? (*bias)[static_cast<size_t>(c)] : 0.0f);
}

}  // namespace nnd::jit
