#include "core/jit/kernel_config.h"

#include <algorithm>

#include "core/util/checked_math.h"

namespace nnd::jit {

int kernel_vector_regs(const IsaTraits& t) { return t.vector_regs - 1; }

MatMulBlocking matmul_blocking(const IsaTraits& t, int64_t m, int64_t n) {
  // As many vectors of columns as the row needs, up to 2 with 16 registers and 4 with 32 (B's
  // row is reloaded per step, so wider tiles only save broadcasts of A); then as many rows as the
  // remaining registers hold, at most 8 (attention's matrices are a few dozen rows).
  const int usable = kernel_vector_regs(t);
  const int64_t columns = (n + t.f32_lanes - 1) / t.f32_lanes;
  MatMulBlocking b;
  b.vectors = static_cast<int>(std::min<int64_t>(columns, usable >= 31 ? 4 : 2));
  b.rows = static_cast<int>(std::min<int64_t>({m, (usable - b.vectors - 1) / b.vectors, 8}));
  return b;
}

ConvBlocking conv_blocking(const IsaTraits& t, int64_t cout_g) {
  ConvBlocking b;
  const int usable = kernel_vector_regs(t);
  // SSE streams its weights (see IsaTraits::streams_weights): a product costs a load, a mulps and
  // an addps, so the only other cost per tap is one broadcast per position, amortised over V
  // products; V = 4 (16 channels) with 3 positions measured best on bop/ball-penalty. With FMA
  // the register form is one instruction; streaming it measured 2x slower on Zen 5 (AVX2).
  b.stream_weights = t.streams_weights;
  // Weights in registers cost V of them: with 16 registers (AVX2) V = 2, with 32 (AVX-512) V = 4.
  const int vmax_isa = t.streams_weights || t.vector_regs >= 32 ? 4 : 2;
  b.vmax = static_cast<int>(std::min<int64_t>(vmax_isa, ceil_div(cout_g, t.f32_lanes)));
  if (t.fma_by_element) {
    // FMLA by element (NEON): a tile holds R accumulators per vector, one register of 4 input
    // channels per position and the V weight vectors of the lane being multiplied: (V + 1) R + V
    // registers. V = 4 gives 5 x 4 (20 accumulators, 4 FMAs per weight load of the channel, 20 per
    // input load of 4 channels); narrower blocks take more positions, up to 9 (V = 2, 18 accs).
    b.rows = std::max(1, (usable - b.vmax) / (b.vmax + 1));
    return b;
  }
  if (b.stream_weights) {
    b.broadcast_regs = b.vmax >= 2 ? 2 : 3;
    b.pipeline_regs = 3;
  }
  // GEMM row tiles: with 32 registers (AVX-512) up to 16 rows, which measured 1-4% faster than 8
  // on the real networks' pointwise layers; 16-register ISAs are limited by registers first.
  b.rows = std::max(1, std::min(usable > 16 ? 16 : 8, (usable - b.fixed_regs()) / b.vmax));
  return b;
}

bool conv_caches_broadcasts(const IsaTraits& t, const ConvBlocking& b, int64_t kw) {
  // Register weights, 32 registers (AVX-512), one output vector per block and a kernel wider than
  // 1. Measured 8-12% faster on all four real networks at AVX-512; with 16 registers (AVX2) the
  // smaller tiles it forces made field-boundary and referee 6-24% slower.
  // FMLA by element (NEON) takes its broadcasts from input registers already.
  return !t.fma_by_element && !b.stream_weights && b.vmax == 1 && kw > 1 && kernel_vector_regs(t) >= 31;
}

namespace {

// Up to 4 channel vectors per block with 32 registers, 2 with 16.
int window_vmax(const IsaTraits& t, int64_t channels) {
  return static_cast<int>(std::min<int64_t>(t.vector_regs >= 32 ? 4 : 2, ceil_div(channels, t.f32_lanes)));
}

}  // namespace

WindowBlocking pool_blocking(const IsaTraits& t, int64_t channels) {
  WindowBlocking b;
  b.vmax = window_vmax(t, channels);
  // Besides the accumulators: the input register and, where loads run ahead of their max/add
  // (SSE, window_tile), 2 more, so each input is loaded two operations early. Silvermont model,
  // cycles per max: 7x2v with one input register 2.0, 6x2v loading two ahead 1.04.
  const int pipeline_regs = t.streams_weights ? 2 : 0;
  b.rows = std::min(8, (kernel_vector_regs(t) - 1 - pipeline_regs) / b.vmax);
  return b;
}

WindowBlocking depthwise_blocking(const IsaTraits& t, int64_t channels) {
  WindowBlocking b;
  b.vmax = window_vmax(t, channels);
  // Besides the accumulators: the weight vectors, the input register and, where the products are
  // pipelined (SSE), 2 more temporaries, so 4 with the input register and scratch (lag 3, ahead
  // 1). Silvermont model, block cycles per product: 6x2v with 2 temporaries 3.51, 5x2v with 4 2.91.
  const int pipeline_regs = t.streams_weights ? 2 : 0;
  b.rows = std::min(8, (kernel_vector_regs(t) - b.vmax - 1 - pipeline_regs) / b.vmax);
  return b;
}

std::vector<int> planar_conv_chunks(int64_t cout) {
  const int64_t quads = cout / 4, nchunks = ceil_div(quads, 3);
  std::vector<int> chunks;
  for (int64_t i = 0; i < nchunks; ++i) chunks.push_back(static_cast<int>(4 * (quads / nchunks + (i < quads % nchunks ? 1 : 0))));
  return chunks;
}

bool planar_conv_suits(const IsaTraits& t, int64_t groups, int64_t cin, int64_t cout, int64_t kh, int64_t kw,
                       int64_t out_w) {
  // The planar kernels emit SSE shuffles directly (x86, 4 lanes), and the layout pays where
  // products stream their weights from memory: it saves the broadcasts, not the products.
  // Measured (Zen 5, side by side): bop 2122 -> 2029 us, referee 1100 -> 1077, field-boundary
  // 232 -> 228, ball-penalty 27.9 -> 27.3; every layer that switched got faster.
  if (t.arch != Arch::kX86_64 || t.f32_lanes != 4 || !t.streams_weights) return false;
  if (groups != 1 || cout <= 0 || cout % 4 != 0 || kh * kw < 2 || out_w < 4) return false;
  // The pack is a pass over the input: worth it while each input value feeds many products
  // (allowing 16 input channels made field-boundary 22% slower).
  if (cin > 8) return false;
  // One chunk's weights (16 bytes per weight) within 16 KiB, well inside the Atom's 24 KiB L1D:
  // bop's 7x7 stem (2 channels, chunks of 8) needs 12.25 KiB.
  const std::vector<int> chunks = planar_conv_chunks(cout);
  return cin * kh * kw * *std::max_element(chunks.begin(), chunks.end()) * 16 <= 16 * 1024;
}

bool winograd_suits(const IsaTraits& t, int64_t groups, int64_t cin, int64_t cout, const Window& w, int64_t out_h,
                    int64_t out_w) {
  if (groups != 1 || w.kernel_h != 3 || w.kernel_w != 3 || w.stride_h != 1 || w.stride_w != 1 || w.dilation_h != 1 ||
      w.dilation_w != 1) {
    return false;
  }
  if (out_h < 2 || out_w < 2 || out_h % 2 != 0 || out_w % 2 != 0) return false;
  // Measured (Zen 5, side by side, minimum us): ball-penalty 26.9 -> 20.3 (sse4.1), 12.0 -> 8.8
  // (avx2), 6.8 -> 6.1 (avx512); field-boundary's 4 -> 8 channel convs got 3-4% slower on AVX2 and
  // AVX-512 (the transforms move as much data as the products then save), so both sides need 8.
  if (cin < 8 || cout < 8) return false;
  // The transforms move 24 loads and 20 stores per tile and chunk: with masked-move tails
  // (TailMoves::kMaskedMoves, AVX2) only whole vectors of channels. Narrow moves (SSE) and mask
  // registers (AVX-512) take channel tails.
  if (t.tails == TailMoves::kMaskedMoves && (cin % t.f32_lanes != 0 || cout % t.f32_lanes != 0)) return false;
  return true;
}

ChannelBlocks channel_blocks(int64_t channels, int vmax, int lanes) {
  ChannelBlocks b;
  b.block_channels = int64_t{vmax} * lanes;
  b.count = ceil_div(channels, b.block_channels);
  const int64_t last = channels - (b.count - 1) * b.block_channels;
  b.last_vectors = static_cast<int>(ceil_div(last, lanes));
  b.last_lanes = static_cast<int>(last - int64_t{b.last_vectors - 1} * lanes);
  return b;
}

}  // namespace nnd::jit
