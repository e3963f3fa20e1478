// Shared test helpers: comparing engine outputs against expected .npy arrays with nnd's fixture
// tolerance, and reading the fixture manifests.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/io/model_inputs.h"
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

// The int64 indices of an ArgMax agree only when equal: an index off by one is as wrong as any
// other, so every difference counts whole (max_scaled = max_abs), past any float tolerance.
inline Agreement compare_indices(const int64_t* actual, const int64_t* expected, int64_t n) {
  Agreement a;
  for (int64_t i = 0; i < n; ++i) {
    const double d = std::fabs(static_cast<double>(actual[i]) - static_cast<double>(expected[i]));
    if (d > a.max_abs) {
      a.max_abs = a.max_scaled = d;
      a.worst_index = i;
    }
  }
  return a;
}

// Output `i` of an engine run against an expected .npy, or against another run, by dtype: float32
// within the scaled error, int64 exactly. A dtype or size that differs fails the test here.
inline Agreement compare(const ModelOutputs& got, size_t i, const NpyArray& expected) {
  EXPECT_EQ(dtype_name(got.dtypes[i]), dtype_name(expected.dtype)) << "output " << i << " dtype";
  EXPECT_EQ(got.size(i), static_cast<size_t>(expected.element_count())) << "output " << i << " size";
  if (got.dtypes[i] != expected.dtype || got.size(i) != static_cast<size_t>(expected.element_count())) {
    return {1e300, 1e300, -1, 0};
  }
  if (expected.dtype == DType::kInt64) return compare_indices(got.indices[i].data(), expected.i64(), expected.element_count());
  return compare(got.buffers[i].data(), expected.f32(), expected.element_count());
}
inline Agreement compare(const ModelOutputs& got, const ModelOutputs& want, size_t i) {
  EXPECT_EQ(got.dtypes[i], want.dtypes[i]) << "output " << i << " dtype";
  EXPECT_EQ(got.size(i), want.size(i)) << "output " << i << " size";
  if (got.dtypes[i] != want.dtypes[i] || got.size(i) != want.size(i)) return {1e300, 1e300, -1, 0};
  const auto n = static_cast<int64_t>(want.size(i));
  if (want.dtypes[i] == DType::kInt64) return compare_indices(got.indices[i].data(), want.indices[i].data(), n);
  return compare(got.buffers[i].data(), want.buffers[i].data(), n);
}

inline constexpr double kFixtureTolerance = 1e-5;  // max abs error <= 1e-5 * max(1, |expected|)

}  // namespace nnd::test
