// The Winograd F(2x2, 3x3) weight transform (specs/winograd.h).
#include "core/jit/specs/winograd.h"

#include "core/util/error.h"

namespace nnd::jit {

std::vector<float> winograd_weights(const std::vector<float>& kernel, int64_t cin, int64_t cout) {
  if (static_cast<int64_t>(kernel.size()) != 9 * cin * cout) {
    throw Error(ErrorCode::kInternal, "JIT internal error: winograd_weights: the kernel is not 3 x 3 x cin x cout");
  }
  std::vector<float> out(static_cast<size_t>(cin * kWinogradPoints * cout));
  for (int64_t ci = 0; ci < cin; ++ci) {
    for (int64_t co = 0; co < cout; ++co) {
      double g[3][3];
      for (int ky = 0; ky < 3; ++ky) {
        for (int kx = 0; kx < 3; ++kx) g[ky][kx] = kernel[static_cast<size_t>(((ky * 3 + kx) * cin + ci) * cout + co)];
      }
      // G g (4 x 3), then (G g) G^T (4 x 4).
      double gg[4][3];
      for (int kx = 0; kx < 3; ++kx) {
        gg[0][kx] = g[0][kx];
        gg[1][kx] = 0.5 * (g[0][kx] + g[1][kx] + g[2][kx]);
        gg[2][kx] = 0.5 * (g[0][kx] - g[1][kx] + g[2][kx]);
        gg[3][kx] = g[2][kx];
      }
      for (int i = 0; i < 4; ++i) {
        const double u[4] = {gg[i][0], 0.5 * (gg[i][0] + gg[i][1] + gg[i][2]), 0.5 * (gg[i][0] - gg[i][1] + gg[i][2]),
                             gg[i][2]};
        for (int j = 0; j < 4; ++j) {
          out[static_cast<size_t>(ci * kWinogradPoints * cout + (4 * i + j) * cout + co)] = static_cast<float>(u[j]);
        }
      }
    }
  }
  return out;
}

}  // namespace nnd::jit
