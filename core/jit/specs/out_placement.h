// Where a spatial kernel writes its output: dense NHWC by default, or the interior of a bordered
// buffer whose border a consumer needs (padded_storage.h): rows and samples further apart, and the
// first pixel `offset_floats` in.
#pragma once

#include <cstdint>

namespace nnd::jit {

struct OutPlacement {
  int64_t row_floats = 0;     // 0: dense (out_w * channels)
  int64_t sample_floats = 0;  // 0: dense (out_h * out_w * channels)
  int64_t offset_floats = 0;
  bool dense() const { return row_floats == 0 && sample_floats == 0 && offset_floats == 0; }
};

}  // namespace nnd::jit
