#include "core/ir/broadcast.h"

namespace nnd {

std::vector<int64_t> broadcast_map(const Dims& out, const Dims& in) {
  int64_t size = 1;
  for (int64_t d : out) size *= d;
  std::vector<int64_t> map(static_cast<size_t>(size));
  const size_t off = out.size() - in.size();
  for (int64_t i = 0; i < size; ++i) {
    // Walk the output index from the last axis; axes of `in` that are 1 contribute nothing.
    int64_t rem = i, src = 0, mul = 1;
    for (size_t a = out.size(); a-- > 0;) {
      const int64_t idx = rem % out[a];
      rem /= out[a];
      if (a >= off) {
        const int64_t d = in[a - off];
        if (d != 1) src += idx * mul;
        mul *= d;
      }
    }
    map[static_cast<size_t>(i)] = src;
  }
  return map;
}

}  // namespace nnd
