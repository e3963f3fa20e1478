// Overflow-checked size arithmetic for shape inference and buffer sizing.
//
// Model files are untrusted: a dimension of 2^40 or a product of many large dimensions must be
// rejected with a clear error, never wrap around and lead to a short allocation.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/util/error.h"

namespace nnd {

// The largest element count nnd accepts for any one tensor (per sample or whole batch): 2^31.
// Far above any robot network, small enough that element counts times sizeof(double) stay in
// range of int64_t and size_t.
inline constexpr int64_t kMaxElements = int64_t{1} << 31;

// ceil(a / b) for a >= 0, b > 0 (sizes already validated: no overflow check).
inline constexpr int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// a * b, throwing nnd::Error naming `what` if either is negative (kFormat) or the product exceeds
// kMaxElements (kLimit). `what` is a view so that a string literal costs no allocation: these
// checks run on warm inference paths too, and the message is built only when they fail.
inline int64_t checked_mul(int64_t a, int64_t b, std::string_view what) {
  if (a < 0 || b < 0) throw Error(ErrorCode::kFormat, std::string(what) + ": negative size");
  if (a != 0 && b > kMaxElements / a) {
    throw Error(ErrorCode::kLimit, std::string(what) + ": size " + std::to_string(a) + " x " + std::to_string(b) +
                " exceeds the limit of " + std::to_string(kMaxElements) + " elements");
  }
  return a * b;
}

// a + b with the same rules.
inline int64_t checked_add(int64_t a, int64_t b, std::string_view what) {
  if (a < 0 || b < 0) throw Error(ErrorCode::kFormat, std::string(what) + ": negative size");
  if (a > kMaxElements - b) {
    throw Error(ErrorCode::kLimit, std::string(what) + ": size " + std::to_string(a) + " + " + std::to_string(b) +
                " exceeds the limit of " + std::to_string(kMaxElements) + " elements");
  }
  return a + b;
}

}  // namespace nnd
