// Tile shapes of the direct-convolution micro-kernel (emit_conv: x86/kernels.cpp, arm64/kernels_conv.cpp; spatial mode).
//
// A tile is a block of output positions computed together: every weight vector loaded in the
// channel loop is multiplied into each position of the tile, so a bigger tile reuses each weight
// load more often. The engine's NHWC buffers hold a chunk's samples back to back, so the input
// window of "the same pixel one sample later" is a constant byte distance away, exactly like the
// next pixel or the next output row. A tile may therefore span samples x output rows x output columns with
// constant displacements. That matters for late layers whose rows are narrower than the register
// budget (a 4x4 map with 8 accumulators per block): one row alone leaves registers idle, while
// two rows, or the same pixels of several samples, fill them.
//
// The kernel has two loop nests: a batched one over groups of `batched.samples` samples (only when
// that beats one sample at a time) and a one-sample nest for the remaining samples, so a call with
// batch 1 runs exactly the one-sample nest.
#pragma once

#include <cstdint>
#include <vector>

#include "core/jit/specs/conv.h"

namespace nnd::jit {

struct ConvTile {
  int samples = 1, rows = 1, cols = 1;
  int size() const { return samples * rows * cols; }
};

struct ConvTileProblem {
  int64_t out_h = 1, out_w = 1;
  int64_t taps = 1;      // kh * kw * cin_g: channel-loop iterations per tile and block
  int vectors = 1;       // output-channel vectors per block (ConvBlocking::vmax)
  int max_tile = 1;      // accumulator budget in positions (ConvBlocking::rows)
  // Byte distances between tile positions: next sample, next output row, next output column.
  int64_t in_sample = 0, out_sample = 0, in_row = 0, out_row = 0, in_col = 0, out_col = 0;
};

struct ConvTilePlan {
  ConvTile single;   // samples == 1
  ConvTile batched;  // samples == 1: no batched nest
};

// The problem of a spatial conv (ConvSpec: its geometry and output placement), with an accumulator
// budget of max_tile positions: what the architecture's registers allow (x86/kernels.cpp,
// arm64/kernels_conv.cpp).
ConvTileProblem conv_tile_problem(const ConvSpec& s, int max_tile);

// Picks both tiles by a cost model of the emitted instructions per sample (FMAs, input
// broadcasts, weight loads, epilogue), keeping every displacement well inside an x86 disp32.
// Ties keep the plain one-row tile of out_w columns or fewer (the historical shape).
ConvTilePlan plan_conv_tiles(const ConvTileProblem& p);

// Byte displacements of a tile's positions from its first input pixel (in) and output pixel
// (out), in the order the kernels hold their accumulators: what the conv, GEMM and window
// generators of every architecture address a tile by.
struct TileLayout {
  std::vector<int64_t> in, out;
};

// The positions of tile t: samples x rows x cols, columns fastest.
TileLayout tile_layout(const ConvTile& t, const ConvTileProblem& p);

// R consecutive positions ps_in / ps_out bytes apart (GEMM rows, one output row of pixels).
TileLayout strided_layout(int R, int64_t ps_in, int64_t ps_out);

}  // namespace nnd::jit
