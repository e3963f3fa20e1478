// The kernel configuration (core/jit/kernel_config.h): the blocking it picks for a few shapes per
// ISA, pinned to the values the engine used before the choices moved there (the golden code
// hashes check the same end to end). Planar and Winograd choices: jit_planar_conv_test.cpp and
// jit_winograd_test.cpp.
#include <gtest/gtest.h>

#include "core/jit/isa.h"
#include "core/jit/kernel_config.h"

namespace nnd::jit {
namespace {

struct Case {
  Isa isa;
  int64_t channels;
  int vmax, rows;
};

TEST(KernelConfig, KernelsMayUseAllVectorRegistersButTheScratch) {
  EXPECT_EQ(kernel_vector_regs(isa_traits(Isa::kSse41)), 15);
  EXPECT_EQ(kernel_vector_regs(isa_traits(Isa::kAvx2)), 15);
  EXPECT_EQ(kernel_vector_regs(isa_traits(Isa::kAvx512)), 31);
}

TEST(KernelConfig, ConvBlocking) {
  // SSE streams weights (V = 4; besides the accumulators 2 broadcast registers, 3 for V = 1, and 3
  // pipeline temporaries); AVX2 holds V = 2 weight vectors in its 16 registers, AVX-512 V = 4 in
  // 32, with GEMM rows up to 16.
  const Case cases[] = {
      {Isa::kSse41, 16, 4, 2},  {Isa::kSse41, 8, 2, 5},   {Isa::kSse41, 4, 1, 8},   {Isa::kSse41, 100, 4, 2},
      {Isa::kAvx2, 16, 2, 6},   {Isa::kAvx2, 8, 1, 8},    {Isa::kAvx2, 3, 1, 8},    {Isa::kAvx2, 64, 2, 6},
      {Isa::kAvx512, 64, 4, 6}, {Isa::kAvx512, 32, 2, 14}, {Isa::kAvx512, 16, 1, 16}, {Isa::kAvx512, 1, 1, 16},
  };
  for (const Case& c : cases) {
    const ConvBlocking b = conv_blocking(isa_traits(c.isa), c.channels);
    EXPECT_EQ(b.vmax, c.vmax) << isa_id(c.isa) << " " << c.channels;
    EXPECT_EQ(b.rows, c.rows) << isa_id(c.isa) << " " << c.channels;
    EXPECT_EQ(b.stream_weights, c.isa == Isa::kSse41) << isa_id(c.isa);
    EXPECT_EQ(b.weight_regs(), b.stream_weights ? 0 : b.vmax);
    EXPECT_EQ(b.broadcast_regs, !b.stream_weights ? 1 : b.vmax == 1 ? 3 : 2) << isa_id(c.isa) << " " << c.channels;
    EXPECT_EQ(b.pipeline_regs, b.stream_weights ? 3 : 0) << isa_id(c.isa);
    EXPECT_LE(b.rows * b.vmax + b.fixed_regs(), kernel_vector_regs(isa_traits(c.isa))) << isa_id(c.isa) << " " << c.channels;
  }
}

TEST(KernelConfig, BroadcastCachingNeedsThirtyTwoRegistersAndOneVectorOfRegisterWeights) {
  const IsaTraits& avx512 = isa_traits(Isa::kAvx512);
  EXPECT_TRUE(conv_caches_broadcasts(avx512, conv_blocking(avx512, 16), 7));   // bop's stem
  EXPECT_FALSE(conv_caches_broadcasts(avx512, conv_blocking(avx512, 16), 1));  // pointwise
  EXPECT_FALSE(conv_caches_broadcasts(avx512, conv_blocking(avx512, 32), 3));  // V = 2
  const IsaTraits& avx2 = isa_traits(Isa::kAvx2);
  EXPECT_FALSE(conv_caches_broadcasts(avx2, conv_blocking(avx2, 8), 7));
  const IsaTraits& sse = isa_traits(Isa::kSse41);
  EXPECT_FALSE(conv_caches_broadcasts(sse, conv_blocking(sse, 4), 7));  // streamed weights
}

// Besides the accumulators: the input register and, on SSE, 2 more for loading inputs ahead.
TEST(KernelConfig, PoolBlocking) {
  const Case cases[] = {
      {Isa::kSse41, 16, 2, 6},  {Isa::kSse41, 3, 1, 8},   {Isa::kAvx2, 32, 2, 7},
      {Isa::kAvx2, 8, 1, 8},    {Isa::kAvx512, 64, 4, 7}, {Isa::kAvx512, 48, 3, 8}, {Isa::kAvx512, 16, 1, 8},
  };
  for (const Case& c : cases) {
    const WindowBlocking b = pool_blocking(isa_traits(c.isa), c.channels);
    EXPECT_EQ(b.vmax, c.vmax) << isa_id(c.isa) << " " << c.channels;
    EXPECT_EQ(b.rows, c.rows) << isa_id(c.isa) << " " << c.channels;
  }
}

// Besides the accumulators: V weight vectors, the input register and, on SSE, 2 more temporaries
// for the product pipeline.
TEST(KernelConfig, DepthwiseBlockingLeavesRoomForItsWeights) {
  const Case cases[] = {
      {Isa::kSse41, 16, 2, 5}, {Isa::kSse41, 4, 1, 8},   {Isa::kAvx2, 16, 2, 6},
      {Isa::kAvx2, 8, 1, 8},   {Isa::kAvx512, 64, 4, 6}, {Isa::kAvx512, 32, 2, 8},
  };
  for (const Case& c : cases) {
    const WindowBlocking b = depthwise_blocking(isa_traits(c.isa), c.channels);
    EXPECT_EQ(b.vmax, c.vmax) << isa_id(c.isa) << " " << c.channels;
    EXPECT_EQ(b.rows, c.rows) << isa_id(c.isa) << " " << c.channels;
  }
}

TEST(KernelConfig, PlanarChunksAreEvenQuadsOfAtMostTwelve) {
  EXPECT_EQ(planar_conv_chunks(4), (std::vector<int>{4}));
  EXPECT_EQ(planar_conv_chunks(12), (std::vector<int>{12}));
  EXPECT_EQ(planar_conv_chunks(16), (std::vector<int>{8, 8}));
  EXPECT_EQ(planar_conv_chunks(28), (std::vector<int>{12, 8, 8}));
}

}  // namespace
}  // namespace nnd::jit
