#include "core/jit/kernel_parts.h"

#include <algorithm>
#include <type_traits>

namespace nnd::jit {

namespace {

// Floats between output rows of a kernel writing `dense_row` floats per row through `place`.
int64_t out_row_floats(const OutPlacement& place, int64_t dense_row) {
  return place.row_floats ? place.row_floats : dense_row;
}

// The band [r0, r1) of `rows` for part t of n.
int64_t band_start(int64_t rows, int t, int n) { return rows * t / n; }

}  // namespace

int64_t splittable_flops(const KernelSpec& spec) {
  return std::visit(
      [](const auto& s) -> int64_t {
        using T = std::decay_t<decltype(s)>;
        if constexpr (std::is_same_v<T, ConvSpec>) {
          return 2 * s.out_h * s.out_w * s.groups * s.cout_g * s.kh * s.kw * s.cin_g;
        } else if constexpr (std::is_same_v<T, WindowSpec>) {
          // The average pooling's per-pixel factor map is indexed from the whole output's start.
          if (s.recip_off >= 0) return 0;
          return 2 * s.out_h * s.out_w * s.c * s.kh * s.kw;
        } else if constexpr (std::is_same_v<T, PlanarConvSpec>) {
          return 2 * s.out_h * s.out_w * s.cout * s.in.c * s.kh * s.kw;
        } else {
          return 0;
        }
      },
      spec);
}

std::vector<KernelPart> split_kernel(const PlannedKernel& k, int parts) {
  std::vector<KernelPart> out;
  if (parts < 2 || splittable_flops(k.spec) == 0) return out;
  // Rows of the band split and, per row, the floats the input, the output and a fused residual
  // (the output's dense layout) move.
  int64_t rows = 0, in_row = 0, out_row = 0, res_row = 0;
  std::visit(
      [&](const auto& s) {
        using T = std::decay_t<decltype(s)>;
        if constexpr (std::is_same_v<T, ConvSpec>) {
          if (s.rows_mode) {  // a GEMM over the sample's positions: split positions
            rows = s.out_h * s.out_w;
            in_row = s.in_c;
            out_row = res_row = s.out_c;
          } else {
            rows = s.out_h;
            in_row = s.sh * s.in_w * s.in_c;
            out_row = out_row_floats(s.out_place, s.out_w * s.out_c);
            res_row = s.out_w * s.out_c;
          }
        } else if constexpr (std::is_same_v<T, WindowSpec>) {
          rows = s.out_h;
          in_row = s.sh * s.in_w * s.c;
          out_row = out_row_floats(s.out_place, s.out_w * s.c);
          res_row = s.out_w * s.c;
        } else if constexpr (std::is_same_v<T, PlanarConvSpec>) {
          rows = s.out_h;
          in_row = s.sh * s.in.plane_w;  // rows within each plane; the planes keep their stride
          out_row = out_row_floats(s.out_place, s.out_w * s.cout);
          res_row = s.out_w * s.cout;
        }
      },
      k.spec);
  const int n = static_cast<int>(std::min<int64_t>(parts, rows));
  if (n < 2) return out;
  for (int t = 0; t < n; ++t) {
    const int64_t r0 = band_start(rows, t, n), r1 = band_start(rows, t + 1, n);
    KernelPart part;
    part.spec = k.spec;
    std::visit(
        [&](auto& s) {
          using T = std::decay_t<decltype(s)>;
          if constexpr (std::is_same_v<T, ConvSpec>) {
            if (s.rows_mode) {
              s.out_h = 1;
              s.out_w = r1 - r0;
            } else {
              s.out_h = r1 - r0;
            }
          } else if constexpr (std::is_same_v<T, WindowSpec> || std::is_same_v<T, PlanarConvSpec>) {
            s.out_h = r1 - r0;
          }
        },
        part.spec);
    part.in_off.assign(k.in.size(), 0);
    part.in_off[0] = r0 * in_row;
    if (k.in.size() > 1) part.in_off[1] = r0 * res_row;  // the fused residual
    part.out_off = r0 * out_row;
    out.push_back(std::move(part));
  }
  return out;
}

}  // namespace nnd::jit
