// The geometry of a bordered tensor: a value of (h, w, c) per sample stored inside a buffer with
// `top`/`bottom` rows and `left`/`right` columns of border around it, the border holding `fill`.
// A window layer (conv, depthwise, pooling with "same" padding) reads such a tensor; padded
// storage (padded_storage.h) lets the value's producer write the interior directly.
#pragma once

#include <cstdint>

namespace nnd::jit {

struct PaddedStore {
  int64_t h = 0, w = 0, c = 0;  // the value's own (unpadded) per-sample shape
  int64_t top = 0, bottom = 0, left = 0, right = 0;
  float fill = 0.0f;  // 0 for convolutions and average pooling, -inf for max pooling

  int64_t padded_h() const { return h + top + bottom; }
  int64_t padded_w() const { return w + left + right; }
  int64_t padded_floats() const { return padded_h() * padded_w() * c; }
  int64_t row_floats() const { return padded_w() * c; }
  int64_t interior_offset() const { return (top * padded_w() + left) * c; }
  bool operator==(const PaddedStore& o) const {
    return h == o.h && w == o.w && c == o.c && top == o.top && bottom == o.bottom && left == o.left &&
           right == o.right && fill == o.fill;
  }
};

}  // namespace nnd::jit
