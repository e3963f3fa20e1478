// Winograd F(2x2, 3x3) convolution: 3x3 stride-1 convolutions with 2.25x fewer multiplications.
//
// A 2x2 block of outputs ("tile") needs a 4x4 window of the padded input d. With the transforms
//   B^T = | 1  0 -1  0 |    G = | 1    0    0   |    A^T = | 1  1  1  0 |
//         | 0  1  1  0 |        | 1/2  1/2  1/2 |          | 0  1 -1 -1 |
//         | 0 -1  1  0 |        | 1/2 -1/2  1/2 |
//         | 0  1  0 -1 |        | 0    0    1   |
// a tile is  Y = A^T [ sum over input channels of (G g G^T) .* (B^T d B) ] A,  i.e. 16 products per
// input/output channel pair instead of 36. The sum over input channels, for each of the 16
// transform points, is a matrix product (tiles x cin) x (cin x cout); written as one grouped 1x1
// convolution with 16 groups over a "tiles" image it runs on the existing f32-conv kernel.
//
// Three kernels, all written against VecEmitter (every ISA, any channel count via tail lanes):
//   f32-wino-in   padded NHWC input -> V, per sample [tile][point][cin]  (B^T d B)
//   f32-conv      V -> M, per sample [tile][point][cout], 16 groups     (the products)
//   f32-wino-out  M -> NHWC output: A^T m A, bias, fused residual and activation, placement
// The weight transform G g G^T is computed at compile time in double precision.
#pragma once

#include <cstdint>
#include <vector>

#include "core/jit/specs/winograd.h"
#include "core/jit/x86/vec_emitter.h"

namespace nnd::jit {

void emit_winograd_input(VecEmitter& ve, const WinogradInSpec& s);

void emit_winograd_output(VecEmitter& ve, const WinogradOutSpec& s);

}  // namespace nnd::jit
