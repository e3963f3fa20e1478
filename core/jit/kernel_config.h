// The kernel configuration: the ONE place that maps (operator, shape class, ISA traits) to a kernel
// variant and its register blocking. Lowering asks it which kernel a node gets; weight packers and
// generators read the blocking it chose. Every choice here is written against IsaTraits (isa.h),
// never against an Isa value, so a new table row gets choices without edits here unless it needs
// a kernel variant of its own.
#pragma once

#include <cstdint>
#include <vector>

#include "core/ir/layers.h"
#include "core/jit/isa.h"

namespace nnd::jit {

// Vector registers a kernel may allocate: all but the emitter's scratch (VecEmitter::scratch()).
int kernel_vector_regs(const IsaTraits& t);

// Register blocking of the conv/GEMM micro-kernel: V vectors of output channels per block and R
// output pixels (or rows) per tile. The weight packer and the generator must agree on it.
struct ConvBlocking {
  int vmax = 1;  // vectors per full output-channel block
  int rows = 1;  // pixels/rows per tile
  // Weights are read by the multiply-adds from memory (VecEmitter::fmadd_mem) instead of being
  // held in V registers: on SSE that replaces a register copy per product with a load, and the V
  // registers freed hold accumulators.
  bool stream_weights = false;
  // Registers the input broadcasts rotate through, and with streamed weights the product
  // pipeline's temporaries besides the emitter's scratch (x86/product_pipeline.h). SSE takes 2
  // broadcast registers (3 for V = 1) and 3 + scratch temporaries, so the next position's scalar
  // load can go ahead of the multiplies still reading the current broadcast, and every add runs 3
  // products behind its multiply. In the Silvermont model (nnbench --cpu-model silvermont, block
  // cycles per product, bound 2): 3x4v with 1 broadcast and 3 temporaries 3.08 -> 2x4v 2.25;
  // 6x2v 3.13 -> 5x2v 2.63; 12x1v 5.02 -> 9x1v 2.91.
  int broadcast_regs = 1;
  int pipeline_regs = 0;
  int weight_regs() const { return stream_weights ? 0 : vmax; }
  // Registers a tile holds besides its accumulators.
  int fixed_regs() const { return weight_regs() + broadcast_regs + pipeline_regs; }
};
// f32-conv / f32-gemm with cout_g output channels per group. With FMLA by element
// (IsaTraits::fma_by_element) a tile's positions also each hold an input register (see there).
ConvBlocking conv_blocking(const IsaTraits& t, int64_t cout_g);

// Register tile of f32-matmul (the product of two computed tensors): `rows` rows of the result by
// `vectors` vectors of its columns, each tile holding rows * vectors accumulators, the vectors of
// one row of B and one broadcast of A.
struct MatMulBlocking {
  int rows = 1;
  int vectors = 1;
};
MatMulBlocking matmul_blocking(const IsaTraits& t, int64_t m, int64_t n);

// Whether f32-conv keeps a kernel row's weights in registers and caches the broadcast inputs across
// neighbouring taps (instead of one broadcast per product).
bool conv_caches_broadcasts(const IsaTraits& t, const ConvBlocking& b, int64_t kw);

// Blocking of the window kernels (f32-maxpool, f32-avgpool, f32-dwconv): vmax vectors of channels
// per block and rows output positions per tile. Depthwise convolutions hold vmax weight vectors
// besides the accumulators.
struct WindowBlocking {
  int vmax = 1;
  int rows = 1;
};
WindowBlocking pool_blocking(const IsaTraits& t, int64_t channels);
WindowBlocking depthwise_blocking(const IsaTraits& t, int64_t channels);

// Whether a convolution runs as f32-planar-pack + f32-conv-...-planar (x86/kernels_planar.h): the
// SSE4.1 planar layout with four pixels per register. It suits one group, whole groups of 4
// output channels, few input channels (the pack costs a pass over the input, and the weights of a
// tile, pre-broadcast to 16 bytes each, must stay in L1), and a kernel wider than 1x1 (pointwise
// layers run as GEMM).
bool planar_conv_suits(const IsaTraits& t, int64_t groups, int64_t cin, int64_t cout, int64_t kh, int64_t kw,
                       int64_t out_w);
// The planar kernel's output channels per chunk: as few chunks of at most 12 channels as possible,
// sizes within 4 of each other (16 -> 8 + 8 rather than 12 + 4: the same speed on bop's stem, one
// tile shape).
std::vector<int> planar_conv_chunks(int64_t cout);

// Whether a convolution runs as Winograd F(2x2, 3x3) (x86/kernels_winograd.h): one group, a 3x3
// kernel, stride and dilation 1, an even output size (every tile whole; the padded input is then
// exactly 2 * tiles + 2 on each axis) and enough channels for the products to outweigh the two
// transforms.
bool winograd_suits(const IsaTraits& t, int64_t groups, int64_t cin, int64_t cout, const Window& w, int64_t out_h,
                    int64_t out_w);

// `channels` in blocks of `vmax` vectors of `lanes` floats, as the conv and window kernels walk
// them: `count` blocks of `block_channels`, the last of them `last_vectors` vectors, the last
// vector holding `last_lanes` lanes (1 .. lanes).
struct ChannelBlocks {
  int64_t block_channels = 0, count = 0;
  int last_vectors = 0, last_lanes = 0;
};
ChannelBlocks channel_blocks(int64_t channels, int vmax, int lanes);

}  // namespace nnd::jit
