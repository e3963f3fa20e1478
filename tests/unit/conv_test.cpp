// Convolution family: hand-computed values and an independent naive convolution with explicit,
// hand-written padding.
#include "tests/unit/test_util.h"

namespace nnd::test {
namespace {

ConvParams conv2d(int64_t filters, int64_t kh, int64_t kw, int64_t s, Padding pad, Weights k, Weights b = {}) {
  ConvParams p;
  p.filters = filters;
  p.window.kernel_h = kh;
  p.window.kernel_w = kw;
  p.window.stride_h = p.window.stride_w = s;
  p.window.padding = pad;
  p.kernel = std::move(k);
  p.bias = std::move(b);
  return p;
}

// Naive grouped 2-D convolution; padding given explicitly (top, left), output size given.
std::vector<double> naive_conv(const std::vector<float>& x, int64_t H, int64_t Wd, int64_t C, const Weights& k,
                               int64_t groups, int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t pt,
                               int64_t pl, int64_t OH, int64_t OW, const Weights& bias) {
  const int64_t KH = k.shape[0], KW = k.shape[1], CG = k.shape[2], F = k.shape[3];
  std::vector<double> y(OH * OW * F, 0.0);
  for (int64_t oh = 0; oh < OH; ++oh)
    for (int64_t ow = 0; ow < OW; ++ow)
      for (int64_t f = 0; f < F; ++f) {
        double s = bias.empty() ? 0.0 : bias.data[f];
        const int64_t g = f / (F / groups);
        for (int64_t a = 0; a < KH; ++a)
          for (int64_t b = 0; b < KW; ++b)
            for (int64_t c = 0; c < CG; ++c) {
              const int64_t ih = oh * sh + a * dh - pt, iw = ow * sw + b * dw - pl;
              if (ih < 0 || iw < 0 || ih >= H || iw >= Wd) continue;
              s += double(x[(ih * Wd + iw) * C + g * CG + c]) * k.data[((a * KW + b) * CG + c) * F + f];
            }
        y[(oh * OW + ow) * F + f] = s;
      }
  return y;
}

TEST(Conv, SameStride2EvenInput) {
  // 4x4 input 1..16, 3x3 ones, stride 2: out 2x2, total pad 1 -> 0 before, 1 after.
  Dims shape;
  auto y = run1(conv2d(1, 3, 3, 2, Padding::kSame, W({3, 3, 1, 1}, std::vector<float>(9, 1.f))), {{4, 4, 1}},
                {seq(16)}, &shape);
  EXPECT_EQ(shape, (Dims{2, 2, 1}));
  EXPECT_VALUES_NEAR(y, (std::vector<double>{54, 45, 72, 54}), 1e-7);
}

TEST(Conv, SameStride2OddInput) {
  // 5x5 input 1..25, 3x3 ones, stride 2: out 3x3, pad 1 before and 1 after.
  Dims shape;
  auto y = run1(conv2d(1, 3, 3, 2, Padding::kSame, W({3, 3, 1, 1}, std::vector<float>(9, 1.f))), {{5, 5, 1}},
                {seq(25)}, &shape);
  EXPECT_EQ(shape, (Dims{3, 3, 1}));
  EXPECT_NEAR(y[0], 1 + 2 + 6 + 7, 1e-6);
  EXPECT_NEAR(y[4], 7 + 8 + 9 + 12 + 13 + 14 + 17 + 18 + 19, 1e-6);
  EXPECT_NEAR(y[8], 19 + 20 + 24 + 25, 1e-6);
  EXPECT_NEAR(y[2], 4 + 5 + 9 + 10, 1e-6);
}

TEST(Conv, SameEvenKernelPadsAfter) {
  // 4x4, 2x2 ones, stride 1: total pad 1, all of it after.
  auto y = run1(conv2d(1, 2, 2, 1, Padding::kSame, W({2, 2, 1, 1}, std::vector<float>(4, 1.f))), {{4, 4, 1}},
                {seq(16)});
  ASSERT_EQ(y.size(), 16u);
  EXPECT_NEAR(y[0], 1 + 2 + 5 + 6, 1e-6);
  EXPECT_NEAR(y[3], 4 + 8, 1e-6);
  EXPECT_NEAR(y[15], 16, 1e-6);
}

TEST(Conv, NonSquareKernelValidWithBiasAndChannels) {
  const Weights k = Iota({2, 3, 2, 3}, 0.1f), b = W({3}, {0.5f, -1.f, 2.f});
  const auto x = pseudo_random(4 * 5 * 2, 1);
  Dims shape;
  auto y = run1(conv2d(3, 2, 3, 1, Padding::kValid, k, b), {{4, 5, 2}}, {x}, &shape);
  EXPECT_EQ(shape, (Dims{3, 3, 3}));
  EXPECT_VALUES_NEAR(y, naive_conv(x, 4, 5, 2, k, 1, 1, 1, 1, 1, 0, 0, 3, 3, b), 1e-6);
}

TEST(Conv, NonSquareStridesSame) {
  ConvParams p = conv2d(2, 3, 2, 1, Padding::kSame, Iota({3, 2, 1, 2}, 0.5f));
  p.window.stride_h = 2;
  p.window.stride_w = 3;
  const auto x = pseudo_random(7 * 8, 2);
  Dims shape;
  auto y = run1(p, {{7, 8, 1}}, {x}, &shape);
  // H: out 4, total (3*2+3-7)=2 -> top 1. W: out 3, total (2*3+2-8)=0 -> left 0.
  EXPECT_EQ(shape, (Dims{4, 3, 2}));
  EXPECT_VALUES_NEAR(y, naive_conv(x, 7, 8, 1, p.kernel, 1, 2, 3, 1, 1, 1, 0, 4, 3, {}), 1e-6);
}

TEST(Conv, Dilation2D) {
  ConvParams p = conv2d(2, 3, 3, 1, Padding::kSame, Iota({3, 3, 2, 2}, 0.05f, -8.f));
  p.window.dilation_h = 2;
  p.window.dilation_w = 3;
  const auto x = pseudo_random(6 * 9 * 2, 3);
  Dims shape;
  auto y = run1(p, {{6, 9, 2}}, {x}, &shape);
  // k_eff 5x7: total pad 4 (top 2), 6 (left 3).
  EXPECT_EQ(shape, (Dims{6, 9, 2}));
  EXPECT_VALUES_NEAR(y, naive_conv(x, 6, 9, 2, p.kernel, 1, 1, 1, 2, 3, 2, 3, 6, 9, {}), 1e-6);
}

TEST(Conv, Conv1DDilationHandComputed) {
  ConvParams p;
  p.rank = 1;
  p.filters = 1;
  p.window.kernel_w = 3;
  p.window.dilation_w = 2;
  p.kernel = W({3, 1, 1}, {1, 10, 100});  // 1-D file layout (kw, cin, filters)
  Dims shape;
  auto y = run1(p, {{7, 1}}, {seq(7)}, &shape);
  EXPECT_EQ(shape, (Dims{3, 1}));
  EXPECT_VALUES_NEAR(y, (std::vector<double>{531, 642, 753}), 1e-7);
}

TEST(Conv, Conv1DCausal) {
  ConvParams p;
  p.rank = 1;
  p.filters = 1;
  p.window.kernel_w = 3;
  p.window.padding = Padding::kCausal;
  p.kernel = W({1, 3, 1, 1}, {1, 10, 100});
  auto y = run1(p, {{4, 1}}, {seq(4)});
  EXPECT_VALUES_NEAR(y, (std::vector<double>{100, 210, 321, 432}), 1e-7);
}

TEST(Conv, Conv1DCausalDilatedStrided) {
  ConvParams p;
  p.rank = 1;
  p.filters = 1;
  p.window.kernel_w = 2;
  p.window.dilation_w = 2;
  p.window.padding = Padding::kCausal;
  p.kernel = W({2, 1, 1}, {1, 10});
  auto y = run1(p, {{5, 1}}, {seq(5)});
  // pad 2 on the left: y[i] = x[i-2] + 10 x[i]
  EXPECT_VALUES_NEAR(y, (std::vector<double>{10, 20, 31, 42, 53}), 1e-7);
}

TEST(Conv, GroupsHandComputed) {
  ConvParams p = conv2d(2, 1, 1, 1, Padding::kValid, W({1, 1, 2, 2}, {1, 10, 100, 1000}));
  p.groups = 2;
  auto y = run1(p, {{1, 1, 4}}, {{1, 2, 3, 4}});
  // filter 0 sees channels 0,1 (K[c][0]); filter 1 sees channels 2,3 (K[c][1]).
  EXPECT_VALUES_NEAR(y, (std::vector<double>{1 * 1 + 2 * 100, 3 * 10 + 4 * 1000}), 1e-7);
}

TEST(Conv, GroupsSpatial) {
  ConvParams p = conv2d(6, 3, 2, 2, Padding::kSame, Iota({3, 2, 2, 6}, 0.01f, -20.f), Iota({6}, 0.1f));
  p.groups = 3;
  const auto x = pseudo_random(5 * 5 * 6, 4);
  Dims shape;
  auto y = run1(p, {{5, 5, 6}}, {x}, &shape);
  // H: out 3, total 2*2+3-5 = 2 -> top 1. W: out 3, total 2*2+2-5 = 1 -> left 0.
  EXPECT_EQ(shape, (Dims{3, 3, 6}));
  EXPECT_VALUES_NEAR(y, naive_conv(x, 5, 5, 6, p.kernel, 3, 2, 2, 1, 1, 1, 0, 3, 3, p.bias), 1e-6);
}

TEST(Conv, FusedActivation) {
  ConvParams p = conv2d(1, 1, 1, 1, Padding::kValid, W({1, 1, 1, 1}, {1}), W({1}, {-2}));
  p.activation = ActivationKind::kRelu;
  auto y = run1(p, {{1, 3, 1}}, {{1, 2, 3}});
  EXPECT_VALUES_NEAR(y, (std::vector<double>{0, 0, 1}), 1e-7);
}

TEST(Depthwise, DepthMultiplierChannelOrder) {
  DepthwiseConvParams p;
  p.depth_multiplier = 2;
  p.kernel = W({1, 1, 2, 2}, {1, 2, 3, 4});
  p.bias = W({4}, {0, 0, 0, 0.5f});
  auto y = run1(p, {{1, 1, 2}}, {{10, 100}});
  // out channel c*dm + m = x[c] * K[c][m]
  EXPECT_VALUES_NEAR(y, (std::vector<double>{10, 20, 300, 400.5}), 1e-7);
}

TEST(Depthwise, SpatialSameStride2) {
  DepthwiseConvParams p;
  p.depth_multiplier = 3;
  p.window.kernel_h = 2;
  p.window.kernel_w = 3;
  p.window.stride_h = p.window.stride_w = 2;
  p.window.padding = Padding::kSame;
  p.kernel = Iota({2, 3, 2, 3}, 0.1f, -10.f);
  const auto x = pseudo_random(4 * 5 * 2, 5);
  Dims shape;
  auto y = run1(p, {{4, 5, 2}}, {x}, &shape);
  EXPECT_EQ(shape, (Dims{2, 3, 6}));
  // Equivalent to a grouped conv with groups = Cin and filters = Cin*dm: K'[a][b][0][c*dm+m] = K[a][b][c][m].
  // H: total (1*2+2-4)=0; W: total (2*2+3-5)=2 -> left 1.
  const auto ref = naive_conv(x, 4, 5, 2, W({2, 3, 1, 6}, p.kernel.data), 2, 2, 2, 1, 1, 0, 1, 2, 3, {});
  EXPECT_VALUES_NEAR(y, ref, 1e-6);
}

TEST(Separable, DepthwiseThenPointwiseWithBiasAndActivation) {
  SeparableConvParams p;
  p.filters = 2;
  p.depth_multiplier = 2;
  p.window.kernel_h = p.window.kernel_w = 3;
  p.window.padding = Padding::kSame;
  p.activation = ActivationKind::kTanh;
  p.depthwise_kernel = Iota({3, 3, 2, 2}, 0.03f, -15.f);
  p.pointwise_kernel = Iota({1, 1, 4, 2}, 0.2f, -3.f);
  p.bias = W({2}, {0.25f, -0.5f});
  const auto x = pseudo_random(3 * 4 * 2, 6);
  Dims shape;
  auto y = run1(p, {{3, 4, 2}}, {x}, &shape);
  EXPECT_EQ(shape, (Dims{3, 4, 2}));
  const auto mid = naive_conv(x, 3, 4, 2, W({3, 3, 1, 4}, p.depthwise_kernel.data), 2, 1, 1, 1, 1, 1, 1, 3, 4, {});
  std::vector<double> ref;
  for (int pos = 0; pos < 12; ++pos)
    for (int f = 0; f < 2; ++f) {
      double s = p.bias.data[f];
      for (int j = 0; j < 4; ++j) s += mid[pos * 4 + j] * p.pointwise_kernel.data[j * 2 + f];
      ref.push_back(std::tanh(s));
    }
  EXPECT_VALUES_NEAR(y, ref, 1e-6);
}

ConvTransposeParams transpose(int64_t filters, int64_t kh, int64_t kw, int64_t s, Padding pad, Weights k) {
  ConvTransposeParams p;
  p.filters = filters;
  p.window.kernel_h = kh;
  p.window.kernel_w = kw;
  p.window.stride_h = p.window.stride_w = s;
  p.window.padding = pad;
  p.kernel = std::move(k);
  return p;
}

TEST(ConvTranspose, ImpulseGivesKernelInOrder) {
  ConvTransposeParams p = transpose(1, 1, 3, 2, Padding::kValid, W({1, 3, 1, 1}, {1, 10, 100}));
  p.window.stride_h = 1;
  Dims shape;
  auto y = run1(p, {{1, 2, 1}}, {{1, 2}}, &shape);
  EXPECT_EQ(shape, (Dims{1, 5, 1}));  // 2*2 + max(3-2, 0)
  EXPECT_VALUES_NEAR(y, (std::vector<double>{1, 10, 102, 20, 200}), 1e-7);
}

TEST(ConvTranspose, KernelLayoutFiltersThenInputChannels) {
  // kernel (kh, kw, filters, Cin): out[f] = sum_c x[c] K[f][c]
  auto y = run1(transpose(2, 1, 1, 1, Padding::kValid, W({1, 1, 2, 2}, {1, 2, 10, 20})), {{1, 1, 2}}, {{1, 100}});
  EXPECT_VALUES_NEAR(y, (std::vector<double>{201, 2010}), 1e-7);
}

// x = [[1,2],[3,4]], 3x3 ones kernel, stride 2: out[oh][ow] = sum over the inputs feeding it.
std::vector<double> ones_transpose_expected(const std::vector<std::vector<int>>& feeds) {
  const double x[2][2] = {{1, 2}, {3, 4}};
  std::vector<double> out;
  for (const auto& a : feeds)
    for (const auto& b : feeds) {
      double s = 0;
      for (int i : a)
        for (int j : b) s += x[i][j];
      out.push_back(s);
    }
  return out;
}

TEST(ConvTranspose, ValidStride2) {
  Dims shape;
  auto y = run1(transpose(1, 3, 3, 2, Padding::kValid, W({3, 3, 1, 1}, std::vector<float>(9, 1))), {{2, 2, 1}},
                {{1, 2, 3, 4}}, &shape);
  EXPECT_EQ(shape, (Dims{5, 5, 1}));
  EXPECT_VALUES_NEAR(y, ones_transpose_expected({{0}, {0}, {0, 1}, {1}, {1}}), 1e-7);
}

TEST(ConvTranspose, SameStride2) {
  Dims shape;
  auto y = run1(transpose(1, 3, 3, 2, Padding::kSame, W({3, 3, 1, 1}, std::vector<float>(9, 1))), {{2, 2, 1}},
                {{1, 2, 3, 4}}, &shape);
  EXPECT_EQ(shape, (Dims{4, 4, 1}));  // forward conv 4 -> 2 pads 0 before
  EXPECT_VALUES_NEAR(y, ones_transpose_expected({{0}, {0}, {0, 1}, {1}}), 1e-7);
}

TEST(ConvTranspose, ValidOutputPadding) {
  ConvTransposeParams p = transpose(1, 3, 3, 2, Padding::kValid, W({3, 3, 1, 1}, std::vector<float>(9, 1)));
  p.output_padding_h = p.output_padding_w = 1;
  p.bias = W({1}, {0.5f});
  Dims shape;
  auto y = run1(p, {{2, 2, 1}}, {{1, 2, 3, 4}}, &shape);
  EXPECT_EQ(shape, (Dims{6, 6, 1}));  // (2-1)*2 + 3 + 1
  auto e = ones_transpose_expected({{0}, {0}, {0, 1}, {1}, {1}, {}});
  for (double& v : e) v += 0.5;
  EXPECT_VALUES_NEAR(y, e, 1e-7);
}

TEST(ConvTranspose, SameOutputPaddingZeroShiftsByPadBefore) {
  ConvTransposeParams p = transpose(1, 3, 3, 2, Padding::kSame, W({3, 3, 1, 1}, std::vector<float>(9, 1)));
  p.output_padding_h = p.output_padding_w = 0;
  Dims shape;
  auto y = run1(p, {{2, 2, 1}}, {{1, 2, 3, 4}}, &shape);
  // out = (2-1)*2 + 3 - 2*1 + 0 = 3; forward conv 3 -> 2 pads 1 before.
  EXPECT_EQ(shape, (Dims{3, 3, 1}));
  EXPECT_VALUES_NEAR(y, ones_transpose_expected({{0}, {0, 1}, {1}}), 1e-7);
}

TEST(ConvTranspose, Conv1DTransposeSameFileLayout) {
  ConvTransposeParams p;
  p.rank = 1;
  p.filters = 1;
  p.window.kernel_w = 2;
  p.window.stride_w = 2;
  p.window.padding = Padding::kSame;
  p.kernel = W({2, 1, 1}, {1, 10});
  Dims shape;
  auto y = run1(p, {{3, 1}}, {{1, 2, 3}}, &shape);
  EXPECT_EQ(shape, (Dims{6, 1}));
  EXPECT_VALUES_NEAR(y, (std::vector<double>{1, 10, 2, 20, 3, 30}), 1e-7);
}

TEST(Dense, HandComputedRank1AndRank2) {
  DenseParams p;
  p.units = 2;
  p.kernel = W({3, 2}, {1, 2, 3, 4, 5, 6});
  p.bias = W({2}, {0.5f, -0.5f});
  auto y = run1(p, {{3}}, {{1, 10, 100}});
  EXPECT_VALUES_NEAR(y, (std::vector<double>{1 + 30 + 500 + 0.5, 2 + 40 + 600 - 0.5}), 1e-7);
  Dims shape;
  auto y2 = run1(p, {{2, 3}}, {{1, 10, 100, 0, 1, 0}}, &shape);
  EXPECT_EQ(shape, (Dims{2, 2}));
  EXPECT_VALUES_NEAR(y2, (std::vector<double>{531.5, 641.5, 3.5, 3.5}), 1e-7);
}

}  // namespace
}  // namespace nnd::test
