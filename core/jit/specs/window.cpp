// The depthwise weight layout (specs/window.h).
#include "core/jit/specs/window.h"

#include <algorithm>

#include "core/util/checked_math.h"

namespace nnd::jit {

void pack_depthwise_weights(WindowSpec& s, int width, const std::vector<float>& kernel, const std::vector<float>* bias,
                            std::vector<float>& blob) {
  const int64_t cw = int64_t{s.vmax} * width, nb = ceil_div(s.c, cw);
  auto align = [&] { blob.resize((blob.size() + 15) / 16 * 16, 0.0f); };
  align();
  s.weight_off = static_cast<int64_t>(blob.size());
  for (int64_t b = 0; b < nb; ++b) {
    const int64_t vb = std::min<int64_t>(s.vmax, ceil_div(s.c - b * cw, width));
    for (int64_t t = 0; t < s.kh * s.kw; ++t) {
      for (int64_t j = 0; j < vb * width; ++j) {
        const int64_t c = b * cw + j;
        blob.push_back(c < s.c ? kernel[static_cast<size_t>(t * s.c + c)] : 0.0f);
      }
    }
  }
  align();
  s.bias_off = static_cast<int64_t>(blob.size());
  for (int64_t j = 0; j < nb * cw; ++j) blob.push_back(bias && j < s.c ? (*bias)[static_cast<size_t>(j)] : 0.0f);
}

}  // namespace nnd::jit
