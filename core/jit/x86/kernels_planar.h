// Planar convolution for SSE4.1 ("pixels in lanes"): f32-planar-pack and f32-conv-...-planar.
//
// Why a second conv family: SSE has no FMA and no broadcast memory operand. The NHWC conv kernel
// (x86/kernels.cpp) holds output channels in the vector lanes, so every input value must be
// broadcast (movss + shufps) before its products; with V = 2 output vectors (8 channels, referee's
// stem) that is one broadcast per two products and the loop tops out near 37 GFLOP/s, with V = 4
// near 44 (docs/jit.md). Here the lanes hold four neighbouring output pixels of one channel
// instead: the input of a tap for those pixels is one unaligned load from a planar copy of the
// input, the weight is a pre-broadcast vector read by the product itself, and each product is
// load + mulps + addps, the fastest SSE loop shape measured (47-51 GFLOP/s with 8-12 accumulators
// and one input load per tap, docs/jit.md). Only the input has to be rearranged first, which is
// cheap when it has few channels (stems of image networks).
//
// The input layout is specs/planar.h's: output pixel x at tap kx reads column x*sw + kx*dw =
// (x + kx*dw/sw)*sw + (kx*dw)%sw, so four neighbouring output pixels read four consecutive floats of
// plane (c, (kx*dw) % sw), also for strided convolutions.
//
// The planar conv accumulates K output channels x G groups of 4 pixels per tile, then transposes
// each 4 x 4 block into NHWC pixel vectors for the epilogue (residual, activation) and stores only
// the pixels that exist, so any output width works without masked stores.
#pragma once

#include <cstdint>
#include <vector>

#include "core/jit/specs/planar.h"
#include "core/jit/x86/vec_emitter.h"

namespace nnd::jit {

void emit_planar_pack(VecEmitter& ve, const PlanarPackSpec& s);

void emit_planar_conv(VecEmitter& ve, const PlanarConvSpec& s);

}  // namespace nnd::jit
