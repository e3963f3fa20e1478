#include "tools/cost_model/code_blocks.h"

#include <algorithm>
#include <string>

#include "core/util/error.h"

namespace nnd::cost {

namespace {

// [begin, end) less the children's ranges, in ascending order.
std::vector<std::pair<size_t, size_t>> subtract(size_t begin, size_t end, std::vector<std::pair<size_t, size_t>> holes) {
  std::sort(holes.begin(), holes.end());
  std::vector<std::pair<size_t, size_t>> out;
  size_t at = begin;
  for (const auto& [b, e] : holes) {
    if (b > at) out.emplace_back(at, b);
    at = std::max(at, e);
  }
  if (at < end) out.emplace_back(at, end);
  return out;
}

}  // namespace

std::vector<CodeBlock> code_blocks(const std::vector<jit::LoopRecord>& loops, size_t code_size) {
  const size_t n = loops.size();
  std::vector<std::vector<std::pair<size_t, size_t>>> children(n + 1);  // [n]: the outside
  std::vector<CodeBlock> blocks(n + 1);
  for (size_t i = 0; i < n; ++i) {
    const jit::LoopRecord& r = loops[i];
    const bool in_parent = r.parent < 0 || (r.parent < static_cast<int>(i) &&
                                            loops[static_cast<size_t>(r.parent)].begin <= r.begin &&
                                            r.end <= loops[static_cast<size_t>(r.parent)].end);
    if (r.begin >= r.end || r.end > code_size || !in_parent || r.trips < 0) {
      std::string m = "cost model: loop record ";
      m += std::to_string(i);
      m += " is not inside its parent and the code";
      throw Error(ErrorCode::kInternal, m);
    }
    children[r.parent < 0 ? n : static_cast<size_t>(r.parent)].emplace_back(r.begin, r.end);
    CodeBlock& b = blocks[i + 1];
    b.record = static_cast<int>(i);
    const CodeBlock& parent = blocks[r.parent < 0 ? 0 : static_cast<size_t>(r.parent) + 1];
    b.runs = parent.runs * r.trips;
    b.depth = parent.depth + 1;
  }
  blocks[0].ranges = subtract(0, code_size, children[n]);
  for (size_t i = 0; i < n; ++i) blocks[i + 1].ranges = subtract(loops[i].begin, loops[i].end, children[i]);
  return blocks;
}

double weighted_cycles(const std::vector<CodeBlock>& blocks, const std::vector<double>& cycles_per_run) {
  double total = 0;
  for (size_t i = 0; i < blocks.size() && i < cycles_per_run.size(); ++i) {
    total += static_cast<double>(blocks[i].runs) * cycles_per_run[i];
  }
  return total;
}

}  // namespace nnd::cost
