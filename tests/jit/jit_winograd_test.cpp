// Winograd F(2x2, 3x3) convolutions (core/jit/x86/kernels_winograd.h): the selection rule, the
// weight transform's values and layout, and randomized convolutions, fused residuals, activations
// the epilogue cannot fuse and bordered outputs compared with the reference engine on every ISA.
// Every case asserts that f32-wino-in/-out really ran, so a change of the selection rule cannot
// turn these into tests of the direct kernels.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "core/jit/kernel_config.h"
#include "core/jit/x86/kernels_winograd.h"
#include "tests/jit_common/jit_test_util.h"

namespace nnd::jit::test {
namespace {

Window three_by_three(Padding pad, int64_t stride = 1, int64_t dilation = 1) {
  Window w;
  w.kernel_h = w.kernel_w = 3;
  w.stride_h = w.stride_w = stride;
  w.dilation_h = w.dilation_w = dilation;
  w.padding = pad;
  return w;
}

ConvParams conv3x3(Rng& r, int64_t cin, int64_t cout, Padding pad, bool bias, ActivationKind act) {
  ConvParams p;
  p.window = three_by_three(pad);
  p.filters = cout;
  p.kernel = r.weights({3, 3, cin, cout}, 1.0f / std::sqrt(static_cast<float>(9 * cin)));
  if (bias) p.bias = r.weights({cout});
  p.activation = act;
  return p;
}

class Winograd : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override { NND_SKIP_WITHOUT(GetParam()); }

  void expect_matches(const Graph& g, int wino_convs, const std::string& what, uint32_t seed) {
    ASSERT_EQ(kernels_named(g, "f32-wino-in", GetParam()), wino_convs) << what;
    ASSERT_EQ(kernels_named(g, "f32-wino-out", GetParam()), wino_convs) << what;
    for (int64_t batch : {1, 3}) {
      std::string where;
      const double err = jit_vs_reference(g, GetParam(), batch, seed, false, &where);
      EXPECT_LE(err, kTol) << what << ", batch " << batch << " (" << isa_id(GetParam()) << "): " << where;
    }
  }
};

TEST(WinogradRule, ChoosesThreeByThreeStrideOneWithEvenOutputsAndEnoughChannels) {
  const Window same = three_by_three(Padding::kSame);
  EXPECT_TRUE(winograd_suits(isa_traits(Isa::kSse41), 1, 8, 16, same, 16, 16));   // ball-penalty's second conv
  EXPECT_TRUE(winograd_suits(isa_traits(Isa::kAvx512), 1, 16, 32, same, 4, 4));   // and its fourth
  EXPECT_TRUE(winograd_suits(isa_traits(Isa::kSse41), 1, 67, 9, same, 2, 30));   // SSE and AVX-512 take channel tails
  EXPECT_TRUE(winograd_suits(isa_traits(Isa::kAvx512), 1, 67, 9, same, 2, 30));
  EXPECT_TRUE(winograd_suits(isa_traits(Isa::kAvx2), 1, 24, 8, same, 2, 30));
  EXPECT_FALSE(winograd_suits(isa_traits(Isa::kAvx2), 1, 12, 16, same, 16, 16));  // AVX2: whole vectors only
  EXPECT_FALSE(winograd_suits(isa_traits(Isa::kAvx2), 1, 16, 12, same, 16, 16));
  EXPECT_FALSE(winograd_suits(isa_traits(Isa::kSse41), 1, 4, 8, same, 30, 40));   // field-boundary: too few channels
  EXPECT_FALSE(winograd_suits(isa_traits(Isa::kSse41), 1, 16, 4, same, 30, 40));
  EXPECT_FALSE(winograd_suits(isa_traits(Isa::kSse41), 1, 16, 16, same, 15, 40));  // odd output rows
  EXPECT_FALSE(winograd_suits(isa_traits(Isa::kSse41), 1, 16, 16, same, 16, 1));   // one column
  EXPECT_FALSE(winograd_suits(isa_traits(Isa::kSse41), 2, 16, 16, same, 16, 16));  // grouped
  EXPECT_FALSE(winograd_suits(isa_traits(Isa::kSse41), 1, 16, 16, three_by_three(Padding::kSame, 2), 8, 8));
  EXPECT_FALSE(winograd_suits(isa_traits(Isa::kSse41), 1, 16, 16, three_by_three(Padding::kSame, 1, 2), 16, 16));
  Window five = same;
  five.kernel_h = five.kernel_w = 5;
  EXPECT_FALSE(winograd_suits(isa_traits(Isa::kSse41), 1, 16, 16, five, 16, 16));
}

TEST(WinogradRule, WeightTransformIsGgGtInGroupedKernelLayout) {
  // cin 2, cout 3; only weight (ky 1, kx 1, ci 1, co 2) is 1. G's middle column is (0, 1/2, -1/2,
  // 0), so U = outer(that, that) for that pair and 0 everywhere else.
  const int64_t cin = 2, cout = 3;
  std::vector<float> k(static_cast<size_t>(9 * cin * cout), 0.0f);
  k[static_cast<size_t>(((1 * 3 + 1) * cin + 1) * cout + 2)] = 1.0f;
  const std::vector<float> u = winograd_weights(k, cin, cout);
  ASSERT_EQ(u.size(), static_cast<size_t>(cin * 16 * cout));
  const double col[4] = {0, 0.5, -0.5, 0};
  for (int64_t ci = 0; ci < cin; ++ci) {
    for (int p = 0; p < 16; ++p) {
      for (int64_t co = 0; co < cout; ++co) {
        const double want = ci == 1 && co == 2 ? col[p / 4] * col[p % 4] : 0.0;
        EXPECT_EQ(u[static_cast<size_t>(ci * 16 * cout + p * cout + co)], static_cast<float>(want))
            << "ci " << ci << " point " << p << " co " << co;
      }
    }
  }
  // A corner weight reaches only the points its row and column of G touch: g[0][0] -> G[:,0] = (1, 1/2, 1/2, 0).
  std::fill(k.begin(), k.end(), 0.0f);
  k[0] = 2.0f;  // ky 0, kx 0, ci 0, co 0
  const std::vector<float> v = winograd_weights(k, cin, cout);
  const double c0[4] = {1, 0.5, 0.5, 0};
  for (int p = 0; p < 16; ++p) EXPECT_EQ(v[static_cast<size_t>(p * cout)], static_cast<float>(2 * c0[p / 4] * c0[p % 4]));
}

TEST_P(Winograd, RandomConvolutionsMatchReference) {
  Rng r(61);
  const ActivationKind acts[] = {ActivationKind::kLinear, ActivationKind::kRelu, ActivationKind::kRelu6,
                                 ActivationKind::kSigmoid};
  for (int i = 0; i < 24; ++i) {
    // Channels 8..67 hit full vectors and tails of every width (AVX2 takes whole vectors only);
    // sizes from one tile up.
    int64_t cin = r.range(8, i % 3 == 0 ? 67 : 20), cout = r.range(8, i % 3 == 1 ? 67 : 20);
    if (GetParam() == Isa::kAvx2) {
      cin = (cin + 7) / 8 * 8;
      cout = (cout + 7) / 8 * 8;
    }
    const Padding pad = r.coin() ? Padding::kSame : Padding::kValid;
    const int64_t oh = 2 * r.range(1, 9), ow = 2 * r.range(1, 11);
    const int64_t ih = pad == Padding::kSame ? oh : oh + 2, iw = pad == Padding::kSame ? ow : ow + 2;
    const bool bias = r.range(0, 3) != 0;
    const ActivationKind act = acts[r.range(0, 3)];
    const Graph g = one_node(conv3x3(r, cin, cout, pad, bias, act), {{ih, iw, cin}});
    expect_matches(g, 1,
                   std::to_string(ih) + "x" + std::to_string(iw) + "x" + std::to_string(cin) + " -> " +
                       std::to_string(cout) + (pad == Padding::kSame ? " same" : " valid") + (bias ? " bias" : "") +
                       " act " + activation_name(act),
                   static_cast<uint32_t>(6100 + i));
  }
}

// Long sums: the transforms add up to 4 inputs before and 9 products after the multiplications,
// so rounding grows faster with the channel count than in a direct convolution; 256 input
// channels must still meet the exact mode's bound.
TEST_P(Winograd, ManyInputChannelsStayWithinTolerance) {
  Rng r(63);
  for (int64_t cin : {64, 256}) {
    const Graph g = one_node(conv3x3(r, cin, 32, Padding::kSame, true, ActivationKind::kLinear), {{8, 10, cin}});
    expect_matches(g, 1, std::to_string(cin) + " input channels", static_cast<uint32_t>(6300 + cin));
    const double err = jit_vs_reference(g, GetParam(), 2, static_cast<uint32_t>(6400 + cin));
    std::printf("[ winograd ] %s, %lld input channels: worst scaled error %.2g (bound %.0e)\n", isa_id(GetParam()),
                static_cast<long long>(cin), err, kTol);
  }
}

// Camera bytes straight into a valid-padded Winograd conv: it reads the converted input buffer.
// Weights scaled for 0..255 inputs, as a first layer's are (with weights for inputs near 1, the
// sums cancel from hundreds down to about 1 and float32 itself misses 1e-5, direct or not).
TEST_P(Winograd, Uint8InputMatchesReference) {
  Rng r(64);
  ConvParams p = conv3x3(r, 8, 16, Padding::kValid, true, ActivationKind::kRelu);
  for (float& w : p.kernel.data) w /= 128.0f;
  const Graph g = one_node(p, {{10, 12, 8}}, DType::kUInt8);
  ASSERT_EQ(kernels_named(g, "f32-wino-in", GetParam()), 1);
  std::string where;
  const double err = jit_vs_reference(g, GetParam(), 2, 64, /*u8_inputs=*/true, &where);
  EXPECT_LE(err, kTol) << where;
}

TEST_P(Winograd, ResidualAndBorderedOutputMatchReference) {
  Rng r(62);
  GraphBuilder gb("winograd-chain");
  const ValueId x = gb.input("x", {12, 10, 8});
  // a writes into the border of b's padded input (b is its only reader).
  const ValueId a = gb.node("a", conv3x3(r, 8, 16, Padding::kSame, true, ActivationKind::kRelu), {x});
  const ValueId b = gb.node("b", conv3x3(r, 16, 16, Padding::kSame, false, ActivationKind::kLinear), {a});
  // s = b + x2 with x2 = a 1x1 conv of x: the add fuses into b's epilogue as a residual.
  ConvParams pw;
  pw.filters = 16;
  pw.kernel = r.weights({1, 1, 8, 16}, 0.3f);
  const ValueId x2 = gb.node("x2", pw, {x});
  const ValueId s = gb.node("s", MergeParams{MergeOp::kAdd}, {b, x2});
  ReluParams relu;
  const ValueId t = gb.node("t", relu, {s});
  const ValueId y = gb.node("y", conv3x3(r, 16, 24, Padding::kValid, true, ActivationKind::kRelu6), {t});
  const Graph g = gb.finish({y});
  expect_matches(g, 3, "3x3 chain with a bordered output and a fused residual", 62);
  EXPECT_EQ(kernels_named(g, "f32-merge", GetParam()), 0) << "the add should be fused into b's epilogue";
  EXPECT_EQ(kernels_named(g, "f32-padborder", GetParam()), 1) << "a should write into b's bordered input";
}

INSTANTIATE_TEST_SUITE_P(Isa, Winograd, ::testing::ValuesIn(all_isas()), isa_param_name);

}  // namespace
}  // namespace nnd::jit::test
