#include "core/jit/memory_plan.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "core/util/checked_math.h"

namespace nnd::jit {

int64_t plan_memory(std::vector<PlanBuffer>& buffers, const std::vector<PlannedKernel>& kernels,
                    const std::vector<GraphInputBuffers>& inputs, const std::vector<int>& live_to_end) {
  // Lifetimes in kernel indices; -2: never used.
  std::vector<int64_t> last(buffers.size(), -2), first(buffers.size(), std::numeric_limits<int64_t>::max());
  auto use = [&](int b, int64_t k) {
    last[static_cast<size_t>(b)] = std::max(last[static_cast<size_t>(b)], k);
    first[static_cast<size_t>(b)] = std::min(first[static_cast<size_t>(b)], k);
  };
  for (size_t k = 0; k < kernels.size(); ++k) {
    for (int b : kernels[k].in) use(b, static_cast<int64_t>(k));
    use(kernels[k].out, static_cast<int64_t>(k));
  }
  const auto end = static_cast<int64_t>(kernels.size());
  for (int b : live_to_end) last[static_cast<size_t>(b)] = end;
  for (const GraphInputBuffers& in : inputs) {
    // The conversion buffer stands in for the input: alive from before kernel 0 to the input's last use.
    const auto cb = static_cast<size_t>(in.u8), ib = static_cast<size_t>(in.input);
    first[cb] = -1;
    last[cb] = std::max<int64_t>(last[ib], 0);
    if (last[ib] == -2) last[cb] = end;  // input used only as an output
  }
  std::vector<size_t> placed;
  int64_t arena_floats = 0;
  for (size_t b = 0; b < buffers.size(); ++b) {
    PlanBuffer& bf = buffers[b];
    bf.first = first[b];
    bf.last = last[b];
    if (bf.kind != PlanBuffer::kArena || bf.last == -2) continue;
    const int64_t size = ceil_div(bf.floats, 16) * 16;
    // Lowest offset free of every placed buffer whose lifetime overlaps.
    std::vector<std::pair<int64_t, int64_t>> busy;
    for (size_t o : placed) {
      const PlanBuffer& ob = buffers[o];
      if (ob.first <= bf.last && bf.first <= ob.last) busy.push_back({ob.offset, ob.offset + ceil_div(ob.floats, 16) * 16});
    }
    std::sort(busy.begin(), busy.end());
    int64_t off = 0;
    for (const auto& [lo, hi] : busy) {
      if (off + size <= lo) break;
      off = std::max(off, hi);
    }
    bf.offset = off;
    arena_floats = std::max(arena_floats, off + size);
    placed.push_back(b);
  }
  return arena_floats;
}

}  // namespace nnd::jit
