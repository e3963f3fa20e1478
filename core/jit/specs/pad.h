// f32-pad / f32-padborder: the pad generator's spec.
#pragma once

#include <cstdint>

namespace nnd::jit {

// Copies (H, W, C) into (H+top+bottom, W+left+right, C*dm) filled with `value`, replicating each
// channel dm times (depthwise multiplier). Also converts uint8 input.
struct PadSpec {
  int64_t h = 1, w = 1, c = 1, dm = 1;
  int64_t top = 0, bottom = 0, left = 0, right = 0;
  float value = 0.0f;
  bool u8 = false;
  // Fill only the border of an already bordered buffer (in place; its interior was written by the
  // producer, see padded_storage.h). dm must be 1.
  bool border_only = false;
};

}  // namespace nnd::jit
