// Shared test helpers: layer parameter builders used by several test trees.
#pragma once

#include <cstdint>

#include "core/ir/layers.h"

namespace nnd::test {

// MaxPooling2D / AveragePooling2D with a square window and stride.
inline PoolParams pool2d(PoolKind kind, int64_t k, int64_t stride, Padding pad) {
  PoolParams p;
  p.kind = kind;
  p.window.kernel_h = p.window.kernel_w = k;
  p.window.stride_h = p.window.stride_w = stride;
  p.window.padding = pad;
  return p;
}

}  // namespace nnd::test
