// Pooling, global pooling, up-sampling.
#include "tests/support/layer_params.h"
#include "tests/unit/test_util.h"

namespace nnd::test {
namespace {

TEST(Pool, AverageSameExcludesPadding) {
  auto y = run1(pool2d(PoolKind::kAverage, 3, 1, Padding::kSame), {{3, 3, 1}}, {seq(9)});
  EXPECT_VALUES_NEAR(y, (std::vector<double>{(1 + 2 + 4 + 5) / 4.0, (1 + 2 + 3 + 4 + 5 + 6) / 6.0,
                                             (2 + 3 + 5 + 6) / 4.0, (1 + 2 + 4 + 5 + 7 + 8) / 6.0, 5.0,
                                             (2 + 3 + 5 + 6 + 8 + 9) / 6.0, (4 + 5 + 7 + 8) / 4.0,
                                             (4 + 5 + 6 + 7 + 8 + 9) / 6.0, (5 + 6 + 8 + 9) / 4.0}),
                     1e-7);
}

TEST(Pool, AverageSameStride2EvenKeepsPaddingAtEnd) {
  // 4x4, 3x3, stride 2: out 2x2, pad 0 before, 1 after.
  auto y = run1(pool2d(PoolKind::kAverage, 3, 2, Padding::kSame), {{4, 4, 1}}, {seq(16)});
  EXPECT_VALUES_NEAR(y, (std::vector<double>{54 / 9.0, 45 / 6.0, 72 / 6.0, 54 / 4.0}), 1e-7);
}

TEST(Pool, MaxSameIgnoresPadding) {
  // All-negative input: zero padding would win if it were counted.
  auto y = run1(pool2d(PoolKind::kMax, 3, 2, Padding::kSame), {{5, 5, 1}}, {seq(25, -1, -1)});
  // out 3x3, pad 1 before: window rows/cols -1..1, 1..3, 3..5
  EXPECT_VALUES_NEAR(y, (std::vector<double>{-1, -2, -4, -6, -7, -9, -16, -17, -19}), 1e-7);
}

TEST(Pool, MaxValidDropsRemainderAndKeepsChannels) {
  Dims shape;
  std::vector<float> x(5 * 5 * 2);
  for (int i = 0; i < 25; ++i) {
    x[2 * i] = static_cast<float>(i);
    x[2 * i + 1] = static_cast<float>(-i);
  }
  auto y = run1(pool2d(PoolKind::kMax, 2, 2, Padding::kValid), {{5, 5, 2}}, {x}, &shape);
  EXPECT_EQ(shape, (Dims{2, 2, 2}));
  EXPECT_VALUES_NEAR(y, (std::vector<double>{6, 0, 8, -2, 16, -10, 18, -12}), 1e-7);
}

TEST(Pool, NonSquareWindowAndStride) {
  PoolParams p = pool2d(PoolKind::kAverage, 1, 1, Padding::kValid);
  p.window.kernel_h = 2;
  p.window.kernel_w = 3;
  p.window.stride_h = 1;
  p.window.stride_w = 3;
  Dims shape;
  auto y = run1(p, {{3, 6, 1}}, {seq(18)}, &shape);
  EXPECT_EQ(shape, (Dims{2, 2, 1}));
  EXPECT_VALUES_NEAR(y, (std::vector<double>{(1 + 2 + 3 + 7 + 8 + 9) / 6.0, (4 + 5 + 6 + 10 + 11 + 12) / 6.0,
                                             (7 + 8 + 9 + 13 + 14 + 15) / 6.0, (10 + 11 + 12 + 16 + 17 + 18) / 6.0}),
                     1e-7);
}

TEST(Pool, AveragePooling1DSame) {
  PoolParams p;
  p.kind = PoolKind::kAverage;
  p.rank = 1;
  p.window.kernel_w = 2;
  p.window.stride_w = 2;
  p.window.padding = Padding::kSame;
  Dims shape;
  auto y = run1(p, {{5, 1}}, {seq(5)}, &shape);
  EXPECT_EQ(shape, (Dims{3, 1}));
  EXPECT_VALUES_NEAR(y, (std::vector<double>{1.5, 3.5, 5}), 1e-7);
}

TEST(GlobalPool, AverageAndMaxKeepdims) {
  GlobalPoolParams p;
  p.kind = PoolKind::kAverage;
  Dims shape;
  auto y = run1(p, {{2, 2, 2}}, {{1, -1, 2, -2, 3, -3, 4, -10}}, &shape);
  EXPECT_EQ(shape, (Dims{2}));
  EXPECT_VALUES_NEAR(y, (std::vector<double>{2.5, -4}), 1e-7);
  p.kind = PoolKind::kMax;
  p.keepdims = true;
  y = run1(p, {{2, 2, 2}}, {{1, -1, 2, -2, 3, -3, 4, -10}}, &shape);
  EXPECT_EQ(shape, (Dims{1, 1, 2}));
  EXPECT_VALUES_NEAR(y, (std::vector<double>{4, -1}), 1e-7);
  p.rank = 1;
  y = run1(p, {{3, 1}}, {{-5, -7, -6}}, &shape);
  EXPECT_EQ(shape, (Dims{1, 1}));
  EXPECT_VALUES_NEAR(y, (std::vector<double>{-5}), 1e-7);
}

TEST(UpSampling, Nearest2DAnd1D) {
  UpSamplingParams p;
  p.size_h = 2;
  p.size_w = 3;
  Dims shape;
  auto y = run1(p, {{2, 1, 1}}, {{1, 2}}, &shape);
  EXPECT_EQ(shape, (Dims{4, 3, 1}));
  EXPECT_VALUES_NEAR(y, (std::vector<double>{1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2}), 1e-7);
  UpSamplingParams q;
  q.rank = 1;
  q.size_w = 2;
  y = run1(q, {{2, 2}}, {{1, 2, 3, 4}}, &shape);
  EXPECT_EQ(shape, (Dims{4, 2}));
  EXPECT_VALUES_NEAR(y, (std::vector<double>{1, 2, 1, 2, 3, 4, 3, 4}), 1e-7);
}

TEST(UpSampling, BilinearHalfPixelCentersFactor2) {
  UpSamplingParams p;
  p.size_h = p.size_w = 2;
  p.interpolation = Interpolation::kBilinear;
  Dims shape;
  auto y = run1(p, {{2, 2, 1}}, {{0, 1, 2, 3}}, &shape);
  EXPECT_EQ(shape, (Dims{4, 4, 1}));
  // Per axis the source coordinate is clamp((d + 0.5) / 2 - 0.5) -> 0, 0.25, 0.75, 1; value = 2 r + c.
  const double r[4] = {0, 0.25, 0.75, 1};
  std::vector<double> e;
  for (double a : r)
    for (double b : r) e.push_back(2 * a + b);
  EXPECT_VALUES_NEAR(y, e, 1e-7);
}

TEST(UpSampling, BilinearFactor3NonSquareTwoChannels) {
  UpSamplingParams p;
  p.size_h = 1;
  p.size_w = 3;
  p.interpolation = Interpolation::kBilinear;
  Dims shape;
  auto y = run1(p, {{1, 2, 2}}, {{0, 10, 3, -20}}, &shape);
  EXPECT_EQ(shape, (Dims{1, 6, 2}));
  // src = (d + 0.5) / 3 - 0.5: -1/3, 0, 1/3, 2/3, 1, 4/3 -> t = 0, 0, 1/3, 2/3, 1, 1 (edge-clamped)
  const double t[6] = {0, 0, 1 / 3.0, 2 / 3.0, 1, 1};
  std::vector<double> e;
  for (double v : t) {
    e.push_back(0 + 3 * v);
    e.push_back(10 - 30 * v);
  }
  EXPECT_VALUES_NEAR(y, e, 1e-6);
}

}  // namespace
}  // namespace nnd::test
