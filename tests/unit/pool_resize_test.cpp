// Pooling, global pooling, up-sampling, resize coordinate maps.
#include "core/ir/resize.h"
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

// The coordinate maps of core/ir/resize.h at points worked out by hand from ONNX's definitions.
std::vector<int64_t> nearest_of(int64_t in, int64_t out, double scale, ResizeCoordinates c, NearestRounding r) {
  std::vector<int64_t> v;
  for (const ResizeTap& t : resize_axis_taps(in, out, scale, c, Interpolation::kNearest, r)) {
    EXPECT_EQ(t.lo, t.hi);
    EXPECT_EQ(t.t, 0.0);
    v.push_back(t.lo);
  }
  return v;
}

TEST(ResizeTaps, NearestRoundingAndCoordinateMaps) {
  using C = ResizeCoordinates;
  using R = NearestRounding;
  // half_pixel, 4 -> 8: x / 2 - 0.25 = -0.25, 0.25, 0.75, 1.25, ...; ties never occur.
  EXPECT_EQ(nearest_of(4, 8, 0, C::kHalfPixel, R::kRoundPreferFloor), (std::vector<int64_t>{0, 0, 1, 1, 2, 2, 3, 3}));
  // asymmetric, 4 -> 6 by scale 1.5: x / 1.5 = 0, 0.67, 1.33, 2, 2.67, 3.33.
  EXPECT_EQ(nearest_of(4, 6, 1.5, C::kAsymmetric, R::kFloor), (std::vector<int64_t>{0, 0, 1, 2, 2, 3}));
  EXPECT_EQ(nearest_of(4, 6, 1.5, C::kAsymmetric, R::kCeil), (std::vector<int64_t>{0, 1, 2, 2, 3, 3}));
  // asymmetric, 5 -> 2 by scale 0.4: x / 0.4 = 0, 2.5; the tie goes down or up.
  EXPECT_EQ(nearest_of(5, 2, 0.4, C::kAsymmetric, R::kRoundPreferFloor), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(nearest_of(5, 2, 0.4, C::kAsymmetric, R::kRoundPreferCeil), (std::vector<int64_t>{0, 3}));
  // tf_half_pixel_for_nn, 3 -> 7: (x + 0.5) * 3 / 7 = 0.21, 0.64, 1.07, 1.5, 1.93, 2.36, 2.79.
  EXPECT_EQ(nearest_of(3, 7, 0, C::kTfHalfPixelForNn, R::kFloor), (std::vector<int64_t>{0, 0, 1, 1, 1, 2, 2}));
  // align_corners maps the ends onto the ends; with one output element it reads element 0.
  EXPECT_EQ(nearest_of(5, 3, 0, C::kAlignCorners, R::kRoundPreferFloor), (std::vector<int64_t>{0, 2, 4}));
  EXPECT_EQ(nearest_of(5, 1, 0, C::kAlignCorners, R::kRoundPreferFloor), (std::vector<int64_t>{0}));
  // Coordinates past the end are clamped to the last element.
  EXPECT_EQ(nearest_of(2, 5, 0.5, C::kAsymmetric, R::kCeil), (std::vector<int64_t>{0, 1, 1, 1, 1}));
}

TEST(ResizeTaps, LinearClampsToTheInput) {
  // half_pixel, 2 -> 4: x / 2 - 0.25 = -0.25 (clamped to 0), 0.25, 0.75, 1.25 (clamped to 1).
  const auto t = resize_axis_taps(2, 4, 0, ResizeCoordinates::kHalfPixel, Interpolation::kBilinear,
                                  NearestRounding::kFloor);
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[0].lo, 0);
  EXPECT_EQ(t[0].t, 0.0);
  EXPECT_EQ(t[1].lo, 0);
  EXPECT_EQ(t[1].hi, 1);
  EXPECT_DOUBLE_EQ(t[1].t, 0.25);
  EXPECT_DOUBLE_EQ(t[2].t, 0.75);
  EXPECT_EQ(t[3].lo, 1);
  EXPECT_EQ(t[3].hi, 1);
  // pytorch_half_pixel to one element reads element 0; align_corners 3 -> 5 steps by 0.5.
  EXPECT_EQ(resize_axis_taps(4, 1, 0, ResizeCoordinates::kPytorchHalfPixel, Interpolation::kBilinear,
                             NearestRounding::kFloor)[0].lo, 0);
  const auto ac = resize_axis_taps(3, 5, 0, ResizeCoordinates::kAlignCorners, Interpolation::kBilinear,
                                   NearestRounding::kFloor);
  EXPECT_EQ(ac[3].lo, 1);
  EXPECT_DOUBLE_EQ(ac[3].t, 0.5);
  EXPECT_EQ(ac[4].lo, 2);
  EXPECT_EQ(ac[4].t, 0.0);
}

}  // namespace
}  // namespace nnd::test
