// The SSE4.1 planar convolution (core/jit/x86/kernels_planar.h): when it is chosen, its layout and
// blocking, and randomized convolutions, residual chains and bordered inputs/outputs compared with
// the reference engine. Every case asserts that the planar conv (f32-conv-...-sse41-planar) really
// ran, so a change of the selection rule cannot turn these into tests of the NHWC kernel.
#include <gtest/gtest.h>

#include <numeric>
#include <string>

#include "core/jit/kernel_config.h"
#include "core/jit/x86/kernels_planar.h"
#include "tests/jit_common/jit_test_util.h"

namespace nnd::jit::test {
namespace {

struct ConvCase {
  int64_t h, w, cin, cout, kh, kw, sh, sw, dh, dw;
  Padding pad;
  bool bias;
  ActivationKind act;
};

ConvParams conv_of(Rng& r, const ConvCase& c) {
  ConvParams p;
  p.window.kernel_h = c.kh;
  p.window.kernel_w = c.kw;
  p.window.stride_h = c.sh;
  p.window.stride_w = c.sw;
  p.window.dilation_h = c.dh;
  p.window.dilation_w = c.dw;
  p.window.padding = c.pad;
  p.filters = c.cout;
  p.kernel = r.weights({c.kh, c.kw, c.cin, c.cout}, 0.3f);
  if (c.bias) p.bias = r.weights({c.cout});
  p.activation = c.act;
  return p;
}

std::string describe(const ConvCase& c) {
  return std::to_string(c.h) + "x" + std::to_string(c.w) + "x" + std::to_string(c.cin) + " -> " +
         std::to_string(c.cout) + ", kernel " + std::to_string(c.kh) + "x" + std::to_string(c.kw) + " stride " +
         std::to_string(c.sh) + "x" + std::to_string(c.sw) + " dilation " + std::to_string(c.dh) + "x" +
         std::to_string(c.dw) + (c.pad == Padding::kSame ? " same" : " valid") + (c.bias ? " bias" : "") + " act " +
         activation_name(c.act);
}

void expect_planar_matches(const Graph& g, int planar_convs, const std::string& what, uint32_t seed) {
  ASSERT_EQ(kernels_named(g, "-sse41-planar", Isa::kSse41), planar_convs) << what;
  ASSERT_EQ(kernels_named(g, "f32-planar-pack", Isa::kSse41), planar_convs) << what;
  for (int64_t batch : {1, 3}) {
    std::string where;
    const double err = jit_vs_reference(g, Isa::kSse41, batch, seed, false, &where);
    EXPECT_LT(err, 2e-5) << what << ", batch " << batch << ": " << where;
  }
}

TEST(PlanarConv, ChosenOnlyForSseConvsWithFewInputChannelsAndWholeChannelQuads) {
  // bop's and referee's stems.
  EXPECT_TRUE(planar_conv_suits(isa_traits(Isa::kSse41), 1, 2, 16, 7, 7, 160));
  EXPECT_TRUE(planar_conv_suits(isa_traits(Isa::kSse41), 1, 3, 8, 5, 5, 128));
  EXPECT_FALSE(planar_conv_suits(isa_traits(Isa::kAvx2), 1, 2, 16, 7, 7, 160));
  EXPECT_FALSE(planar_conv_suits(isa_traits(Isa::kAvx512), 1, 3, 8, 5, 5, 128));
  EXPECT_FALSE(planar_conv_suits(isa_traits(Isa::kSse41), 2, 2, 16, 3, 3, 64));   // grouped
  EXPECT_FALSE(planar_conv_suits(isa_traits(Isa::kSse41), 1, 2, 18, 3, 3, 64));   // 18 channels: not quads
  EXPECT_FALSE(planar_conv_suits(isa_traits(Isa::kSse41), 1, 16, 16, 3, 3, 64));  // too many input channels
  EXPECT_FALSE(planar_conv_suits(isa_traits(Isa::kSse41), 1, 2, 16, 1, 1, 64));   // pointwise: GEMM
  EXPECT_FALSE(planar_conv_suits(isa_traits(Isa::kSse41), 1, 2, 16, 3, 3, 3));    // narrower than one vector
  EXPECT_FALSE(planar_conv_suits(isa_traits(Isa::kSse41), 1, 8, 32, 7, 7, 64));   // a chunk's weights exceed 16 KiB
}

TEST(PlanarConv, LayoutCoversEveryColumnAndRowTheKernelReads) {
  // bop's stem: 240x320 input, 7x7 stride 2 same padding, 120x160 output.
  const PlanarLayout l = planar_layout(2, 120, 160, 7, 7, 2, 2, 1, 1);
  EXPECT_EQ(l.phases, 2);
  EXPECT_EQ(l.plane_h, 119 * 2 + 6 + 1);
  EXPECT_EQ(l.plane_w, 160 + 3);  // taps reach 3 columns further in each phase
  EXPECT_EQ(l.sample_floats(), 2 * 2 * l.plane_h * l.plane_w);
  // A ragged width reads whole groups of four; dilation 3, stride 2: taps reach (2*3)/2 = 3.
  const PlanarLayout r = planar_layout(1, 5, 9, 3, 3, 1, 2, 1, 3);
  EXPECT_EQ(r.plane_w, 12 + 3);
}

TEST(PlanarConv, BlockingUsesAtMostTwelveAccumulatorsAndFifteenRegisters) {
  for (int64_t cout = 4; cout <= 64; cout += 4) {
    PlanarConvSpec s;
    s.cout = cout;
    s.out_w = 100;
    plan_planar_blocking(s);
    EXPECT_EQ(std::accumulate(s.chunks.begin(), s.chunks.end(), int64_t{0}), cout);
    for (int k : s.chunks) {
      EXPECT_EQ(k % 4, 0);
      EXPECT_LE(k, 12);
      EXPECT_LE(s.groups * k + s.groups, 15) << "cout " << cout;
      EXPECT_LE(s.groups * k + 2, 15) << "cout " << cout;
    }
  }
  PlanarConvSpec narrow;
  narrow.cout = 4;
  narrow.out_w = 5;  // two groups of four pixels cover it
  plan_planar_blocking(narrow);
  EXPECT_EQ(narrow.groups, 2);
}

TEST(PlanarConv, RandomConvolutionsMatchReference) {
  Rng r(20261123);
  const ActivationKind acts[] = {ActivationKind::kLinear, ActivationKind::kRelu, ActivationKind::kRelu6};
  int tested = 0;
  for (int i = 0; i < 60; ++i) {
    ConvCase c;
    c.h = r.range(1, 19);
    c.w = r.range(4, 37);
    c.cin = r.range(1, 8);
    c.cout = 4 * r.range(1, 9);
    c.kh = r.range(1, 7);
    c.kw = r.range(1, 7);
    c.sh = r.range(1, 3);
    c.sw = r.range(1, 3);
    c.dh = r.coin() ? 1 : 2;
    c.dw = r.coin() ? 1 : 2;
    c.pad = r.coin() ? Padding::kSame : Padding::kValid;
    c.bias = r.coin();
    c.act = acts[r.range(0, 2)];
    if (c.pad == Padding::kValid && ((c.kh - 1) * c.dh + 1 > c.h || (c.kw - 1) * c.dw + 1 > c.w)) continue;
    const Graph g = one_node(conv_of(r, c), {{c.h, c.w, c.cin}});
    const Dims& out = g.values[g.outputs[0]].shape;
    if (!planar_conv_suits(isa_traits(Isa::kSse41), 1, c.cin, c.cout, c.kh, c.kw, out[1])) continue;
    expect_planar_matches(g, 1, describe(c), static_cast<uint32_t>(i));
    ++tested;
  }
  EXPECT_GE(tested, 30) << "too few random cases qualified for the planar kernel";
}

TEST(PlanarConv, Conv1DMatchesReference) {
  Rng r(7);
  ConvParams p = conv_of(r, {1, 23, 3, 8, 1, 5, 1, 2, 1, 1, Padding::kSame, true, ActivationKind::kRelu});
  p.rank = 1;
  p.kernel = r.weights({1, 5, 3, 8}, 0.3f);
  const Graph g = one_node(p, {{23, 3}});
  expect_planar_matches(g, 1, "conv1d 23x3 -> 8, kernel 5 stride 2", 7);
}

TEST(PlanarConv, ResidualBorderedInputAndBorderedOutputMatchReference) {
  Rng r(11);
  GraphBuilder gb("planar-chain");
  const ValueId x = gb.input("x", {13, 17, 3});
  // a: planar, its output is the bordered input of b (b is its only reader and pads it).
  const ValueId a = gb.node("a", conv_of(r, {13, 17, 3, 8, 3, 3, 1, 1, 1, 1, Padding::kSame, true,
                                             ActivationKind::kRelu}), {x});
  // b: planar, reads a's interior, 3x3 with dilation 2.
  const ValueId b = gb.node("b", conv_of(r, {13, 17, 8, 8, 3, 3, 1, 1, 2, 2, Padding::kSame, false,
                                             ActivationKind::kLinear}), {a});
  // s = b + a: the add is b's only reader and b is linear, so it fuses into b's epilogue as a
  // residual read from a. a then has two readers and stays dense.
  const ValueId s = gb.node("s", MergeParams{MergeOp::kAdd}, {b, a});
  const ValueId y = gb.node("y", conv_of(r, {13, 17, 8, 4, 3, 2, 2, 1, 1, 1, Padding::kSame, true,
                                             ActivationKind::kRelu6}), {s});
  // y writes into the border of the pool's input (the pool only fills the border).
  PoolParams pool;
  pool.kind = PoolKind::kMax;
  pool.window.kernel_h = pool.window.kernel_w = 3;
  pool.window.stride_h = pool.window.stride_w = 1;
  pool.window.padding = Padding::kSame;
  const ValueId z = gb.node("z", pool, {y});
  const Graph g = gb.finish({z});
  expect_planar_matches(g, 3, "conv chain with a residual", 11);
  EXPECT_EQ(kernels_named(g, "f32-merge", Isa::kSse41), 0) << "the add should be fused into b's epilogue";
  EXPECT_EQ(kernels_named(g, "f32-padborder", Isa::kSse41), 1) << "y should write into the pool's bordered input";
}

TEST(PlanarConv, BorderedInputFromAnotherKernelMatchesReference) {
  Rng r(13);
  GraphBuilder gb("planar-bordered");
  const ValueId x = gb.input("x", {15, 15, 4});
  PoolParams pool;
  pool.kind = PoolKind::kMax;
  pool.window.kernel_h = pool.window.kernel_w = 2;
  pool.window.stride_h = pool.window.stride_w = 1;
  pool.window.padding = Padding::kValid;
  const ValueId p = gb.node("p", pool, {x});  // writes into the border of c's input
  const ValueId c = gb.node("c", conv_of(r, {14, 14, 4, 12, 3, 3, 2, 2, 1, 1, Padding::kSame, true,
                                             ActivationKind::kRelu}), {p});
  const Graph g = gb.finish({c});
  expect_planar_matches(g, 1, "pool into a strided planar conv", 13);
  // The pack reads the pool's interior and writes its own zeros: no pad copy, no border fill.
  EXPECT_EQ(kernels_named(g, "f32-pad", Isa::kSse41), 0);
}

}  // namespace
}  // namespace nnd::jit::test
