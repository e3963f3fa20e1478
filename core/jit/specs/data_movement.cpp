// Gather tables from index maps (specs/data_movement.h).
#include "core/jit/specs/data_movement.h"

#include <bit>
#include <cstdint>
#include <limits>
#include <string>

#include "core/util/error.h"

namespace nnd::jit {

namespace {

// A table entry (a float offset) as the int32 the gather kernel reads.
int32_t table_entry(int64_t v) {
  if (v > std::numeric_limits<int32_t>::max()) {
    std::string msg = "JIT: a gather offset of ";
    msg += std::to_string(v);
    msg += " floats does not fit the int32 table";
    throw Error(ErrorCode::kLimit, msg);
  }
  return static_cast<int32_t>(v);
}

}  // namespace

void gather_from_map(const std::vector<int64_t>& map, int64_t in_count, GatherSpec& s, std::vector<float>& table) {
  const auto count = static_cast<int64_t>(map.size());
  s.in_count = in_count;
  s.out_count = count;
  s.taps = 1;
  auto ok = [&](int64_t len) {
    for (int64_t r = 0; r < count; r += len) {
      const int64_t base = map[static_cast<size_t>(r)];
      for (int64_t j = 1; j < len; ++j) {
        const int64_t v = map[static_cast<size_t>(r + j)];
        if (base < 0 ? v >= 0 : v != base + j) return false;
      }
    }
    return true;
  };
  int64_t len = 1;
  for (int64_t d = count; d > 1; --d) {
    if (count % d == 0 && ok(d)) {
      len = d;
      break;
    }
  }
  s.len = len;
  s.runs = 0;
  s.zero_fill = false;
  for (int64_t r = 0; r < count; r += len) {
    const int64_t src = map[static_cast<size_t>(r)];
    if (src < 0) {
      s.zero_fill = true;
      continue;
    }
    table.push_back(std::bit_cast<float>(table_entry(src)));
    table.push_back(std::bit_cast<float>(table_entry(r)));
    ++s.runs;
  }
}

TransposePlan transpose_plan(const TransposeSpec& s) {
  const bool rows_short = s.rows <= s.cols;
  const int64_t short_n = rows_short ? s.rows : s.cols;
  TransposePlan p;
  p.long_n = rows_short ? s.cols : s.rows;
  p.full_blocks = short_n / TransposePlan::kBlock;
  p.rest = short_n % TransposePlan::kBlock;
  p.in_k = rows_short ? s.cols * 4 : 4;
  p.out_k = rows_short ? 4 : s.rows * 4;
  p.in_step = rows_short ? 4 : s.cols * 4;
  p.out_step = rows_short ? s.rows * 4 : 4;
  p.matrix_bytes = s.rows * s.cols * 4;
  return p;
}

std::optional<TransposeSpec> permute_as_transpose(const std::vector<int64_t>& in_shape, const std::vector<int>& perm) {
  const int r = static_cast<int>(in_shape.size());
  if (static_cast<int>(perm.size()) != r) return std::nullopt;
  int a = 0;
  while (a < r && perm[static_cast<size_t>(a)] == a) ++a;
  if (a == r) return std::nullopt;  // the identity
  // Output axis a holds input axis m, the first of the group moved to the front.
  const int m = perm[static_cast<size_t>(a)];
  if (m <= a) return std::nullopt;
  for (int k = 0; k < r - m; ++k) {
    if (perm[static_cast<size_t>(a + k)] != m + k) return std::nullopt;
  }
  for (int k = 0; k < m - a; ++k) {
    if (perm[static_cast<size_t>(a + (r - m) + k)] != a + k) return std::nullopt;
  }
  TransposeSpec t;
  for (int k = 0; k < a; ++k) t.outer *= in_shape[static_cast<size_t>(k)];
  for (int k = a; k < m; ++k) t.rows *= in_shape[static_cast<size_t>(k)];
  for (int k = m; k < r; ++k) t.cols *= in_shape[static_cast<size_t>(k)];
  if (t.rows == 1 || t.cols == 1) return std::nullopt;
  return t;
}

}  // namespace nnd::jit
