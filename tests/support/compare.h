// Shared test helpers: comparing engine outputs against expected .npy arrays with nnd's fixture
// tolerance, and reading the fixture manifests.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/io/npy.h"

namespace nnd::test {

// How far `actual` is from `expected`: the largest absolute error, and the largest ratio
// |actual - expected| / max(1, |expected|), which the fixture rule bounds by 1e-5.
struct Agreement {
  double max_abs = 0.0;
  double max_scaled = 0.0;
  int64_t worst_index = -1;
  int64_t nonfinite = 0;
};

inline Agreement compare(const float* actual, const float* expected, int64_t n) {
  Agreement a;
  for (int64_t i = 0; i < n; ++i) {
    const double e = expected[i], x = actual[i];
    if (!std::isfinite(x) || !std::isfinite(e)) {
      if (!(std::isnan(x) && std::isnan(e)) && x != e) ++a.nonfinite;
      continue;
    }
    const double d = std::fabs(x - e);
    const double s = d / std::max(1.0, std::fabs(e));
    a.max_abs = std::max(a.max_abs, d);
    if (s > a.max_scaled) {
      a.max_scaled = s;
      a.worst_index = i;
    }
  }
  return a;
}

inline constexpr double kFixtureTolerance = 1e-5;  // max abs error <= 1e-5 * max(1, |expected|)

}  // namespace nnd::test
