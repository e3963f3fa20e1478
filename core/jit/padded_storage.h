// Padded storage: folds a window layer's input padding into the layer that produces that input.
//
// A convolution, depthwise convolution or pooling layer with "same" padding reads a bordered copy of
// its input. Copying the whole tensor into a bigger buffer costs as much memory traffic as a light
// layer (bop at AVX-512: 90 of 590 us were pad copies). When the input has no other reader and its
// producer is a spatial kernel that can write with strides (conv, depthwise, pooling), the producer
// writes straight into the interior of the bordered buffer instead, and the consumer only fills the
// border (a few rows and columns) before it runs.
//
// This unit only decides which values qualify; lowering (core/jit/lower/) allocates the bordered
// buffers, tells the producer kernels where to write (OutPlacement) and plans the border fills.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/ir/graph.h"

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

// The border each consumer layer needs on its first input, or nullopt (no padding, or a kind that
// pads differently: depth multipliers > 1, 1x1 stride-1 GEMM convolutions).
std::optional<PaddedStore> input_padding_of(const Graph& g, const Node& consumer);

// Per value (indexed by ValueId): the bordered storage it gets, or nullopt (dense NHWC). A value
// qualifies when its only reader is a node with input padding, it is not a graph input or output,
// and its producer writes it with a spatial kernel that takes an output placement and runs no
// separate step on it afterwards: Conv2D/1D, DepthwiseConv, SeparableConv (no fused residual, a
// fused activation the epilogue applies) and max/average pooling without padding of its own.
std::vector<std::optional<PaddedStore>> plan_padded_storage(const Graph& g);

}  // namespace nnd::jit
