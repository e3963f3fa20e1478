// Conv tiles that span output rows and samples (core/jit/conv_tiling.h): the planner's choices,
// and JIT vs reference on small output maps, where those tiles are used, for every batch size
// 1..9 (groups of 2..8 samples with and without leftover samples) on every ISA this CPU has.
#include <gtest/gtest.h>

#include "core/jit/conv_tiling.h"
#include "tests/jit_common/jit_test_util.h"

namespace nnd::jit::test {
namespace {

ConvTileProblem problem(int64_t out_h, int64_t out_w, int64_t c, int vectors, int max_tile) {
  ConvTileProblem p;
  p.out_h = out_h;
  p.out_w = out_w;
  p.taps = 9 * c;
  p.vectors = vectors;
  p.max_tile = max_tile;
  p.in_col = c * 4;
  p.in_row = (out_w + 2) * c * 4;
  p.in_sample = (out_h + 2) * p.in_row;
  p.out_col = vectors * 16 * 4;
  p.out_row = out_w * p.out_col;
  p.out_sample = out_h * p.out_row;
  return p;
}

TEST(JitConvTiling, WideRowsKeepTheOneRowTileAndNoBatchedNest) {
  const ConvTilePlan plan = plan_conv_tiles(problem(32, 32, 8, 1, 8));
  EXPECT_EQ(plan.single.samples, 1);
  EXPECT_EQ(plan.single.rows, 1);
  EXPECT_EQ(plan.single.cols, 8);
  EXPECT_EQ(plan.batched.samples, 1) << "a full row tile gains nothing from other samples";
}

TEST(JitConvTiling, NarrowMapsFillTheTileWithRowsOrSamples) {
  // 4x4 map, 8 positions per tile: two rows of four in one sample.
  const ConvTilePlan p4 = plan_conv_tiles(problem(4, 4, 16, 2, 8));
  EXPECT_EQ(p4.single.size(), 8);
  EXPECT_EQ(p4.single.rows, 2);
  // 1x1 map (a conv head on a tiny map): only other samples can fill the tile.
  const ConvTilePlan p1 = plan_conv_tiles(problem(1, 1, 32, 1, 6));
  EXPECT_EQ(p1.single.size(), 1);
  EXPECT_EQ(p1.batched.samples, 6);
  // 3x3 map with 8 positions: rows of 3 leave a remainder; the batched tile covers samples.
  const ConvTilePlan p3 = plan_conv_tiles(problem(3, 3, 8, 1, 8));
  EXPECT_GT(p3.batched.samples, 1);
  EXPECT_LE(p3.batched.size(), 8);
}

TEST(JitConvTiling, DisplacementsStayFarInsideDisp32) {
  ConvTileProblem p = problem(1, 1, 32, 1, 8);
  p.in_sample = int64_t{1} << 29;
  const ConvTilePlan plan = plan_conv_tiles(p);
  EXPECT_LE((plan.batched.samples - 1) * p.in_sample, int64_t{1} << 30);
  p.in_sample = int64_t{1} << 31;
  EXPECT_EQ(plan_conv_tiles(p).batched.samples, 1);
}

class JitConvTiles : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override { NND_SKIP_WITHOUT(GetParam()); }

  void check_batches(const Graph& g, uint32_t seed, const std::string& what) {
    for (int64_t batch = 1; batch <= 9; ++batch) {
      std::string where;
      const double err = jit_vs_reference(g, GetParam(), batch, seed + static_cast<uint32_t>(batch), false, &where);
      EXPECT_LE(err, kTol) << what << " batch " << batch << " (" << isa_id(GetParam()) << "): " << where;
    }
  }
};

// Output maps of 1x1 .. 5x5 (strides, groups, channel counts that do and don't fill a vector).
TEST_P(JitConvTiles, SmallMapsEveryBatch) {
  Rng r(41);
  for (int i = 0; i < 10; ++i) {
    ConvParams p;
    Window& w = p.window;
    w.kernel_h = r.range(1, 3);
    w.kernel_w = r.range(1, 3);
    w.stride_h = w.stride_w = r.range(1, 2);
    // 1x1 stride-1 convs are GEMMs (rows over the batch already); keep a window here.
    if (w.kernel_h * w.kernel_w == 1 && w.stride_h == 1) w.kernel_w = 2;
    w.padding = i % 2 ? Padding::kSame : Padding::kValid;
    p.groups = i == 7 ? 2 : 1;
    const int64_t cin = p.groups * r.range(1, 20), h = r.range(w.kernel_h, 6), wd = r.range(w.kernel_w, 6);
    p.filters = p.groups * (i % 3 == 0 ? r.range(17, 40) : r.range(1, 16));
    p.kernel = r.weights({w.kernel_h, w.kernel_w, cin / p.groups, p.filters}, 0.3f);
    if (r.coin()) p.bias = r.weights({p.filters});
    p.activation = i % 3 == 1 ? ActivationKind::kRelu : ActivationKind::kLinear;
    check_batches(one_node(p, {{h, wd, cin}}), 4100 + 10 * static_cast<uint32_t>(i),
                  "Conv2D " + std::to_string(h) + "x" + std::to_string(wd) + "x" + std::to_string(cin) +
                      " f=" + std::to_string(p.filters) + " k=" + std::to_string(w.kernel_h) + "x" +
                      std::to_string(w.kernel_w) + " s=" + std::to_string(w.stride_h) + " g=" +
                      std::to_string(p.groups));
  }
}

// The fused residual reads at the same per-position displacements as the store.
TEST_P(JitConvTiles, FusedResidualOnSmallMaps) {
  Rng r(42);
  for (int i = 0; i < 3; ++i) {
    ConvParams p;
    p.window.kernel_h = p.window.kernel_w = 3;
    p.window.padding = Padding::kSame;
    const int64_t hw = 1 + i, cin = r.range(1, 12);
    p.filters = r.range(1, 40);
    p.kernel = r.weights({3, 3, cin, p.filters}, 0.3f);
    p.bias = r.weights({p.filters});
    p.activation = ActivationKind::kRelu;
    p.residual = true;
    check_batches(one_node(p, {{hw, hw, cin}, {hw, hw, p.filters}}), 4200 + 10 * static_cast<uint32_t>(i),
                  "Conv2D+residual " + std::to_string(hw) + "x" + std::to_string(hw) + " f=" +
                      std::to_string(p.filters));
  }
}

NND_ISA_SUITE(JitConvTiles);

}  // namespace
}  // namespace nnd::jit::test
