// ArgMax / ArgMin (layers.h, ArgMaxParams) computed once for every engine: the reference engine
// runs it on its float64 tensors, the JIT after its kernels on their float32 output.
#pragma once

#include <cstdint>

#include "core/ir/layers.h"
#include "core/ir/tensor.h"

namespace nnd {

// x: `batch` samples of `in_shape`, batch-major, row-major; y: the indices, batch * (elements of
// in_shape / in_shape[axis]). Ties go to the first index (the last with select_last_index); a
// NaN compares false.
template <class In, class Out>
void arg_max(const ArgMaxParams& p, const Dims& in_shape, int64_t batch, const In* x, Out* y) {
  const auto axis = static_cast<size_t>(p.axis);
  int64_t outer = 1, inner = 1;
  for (size_t a = 0; a < axis; ++a) outer *= in_shape[a];
  for (size_t a = axis + 1; a < in_shape.size(); ++a) inner *= in_shape[a];
  const int64_t len = in_shape[axis];
  for (int64_t o = 0; o < batch * outer; ++o) {
    const In* row = x + o * len * inner;
    Out* out = y + o * inner;
    for (int64_t i = 0; i < inner; ++i) {
      In best = row[i];
      int64_t at = 0;
      for (int64_t k = 1; k < len; ++k) {
        const In v = row[k * inner + i];
        const bool better = p.smallest ? (p.select_last_index ? v <= best : v < best)
                                       : (p.select_last_index ? v >= best : v > best);
        if (better) {
          best = v;
          at = k;
        }
      }
      out[i] = static_cast<Out>(at);
    }
  }
}

}  // namespace nnd
