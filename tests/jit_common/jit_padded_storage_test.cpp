// Padded storage (core/jit/padded_storage.h): which values get a bordered buffer, and chains of
// window layers whose producers write straight into their consumer's border, JIT vs reference on
// every ISA with odd sizes, channel tails, strides, dilations and batches.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "core/jit/lower/lower.h"
#include "core/jit/padded_storage.h"
#include "tests/support/layer_params.h"
#include "tests/jit_common/jit_test_util.h"

namespace nnd::jit::test {
namespace {

ConvParams conv(Rng& r, int64_t cin, int64_t filters, int64_t k, int64_t stride = 1, int64_t dilation = 1,
                ActivationKind act = ActivationKind::kRelu, Padding pad = Padding::kSame) {
  ConvParams c;
  c.window.kernel_h = c.window.kernel_w = k;
  c.window.stride_h = c.window.stride_w = stride;
  c.window.dilation_h = c.window.dilation_w = dilation;
  c.window.padding = pad;
  c.filters = filters;
  c.kernel = r.weights({k, k, cin, filters}, 0.3f);
  c.bias = r.weights({filters});
  c.activation = act;
  return c;
}

ConvParams conv1d(Rng& r, int64_t cin, int64_t filters, int64_t k, int64_t stride = 1) {
  ConvParams c = conv(r, cin, filters, k, stride);
  c.rank = 1;
  c.window.kernel_h = c.window.stride_h = 1;
  c.kernel = r.weights({1, k, cin, filters}, 0.3f);
  return c;
}

DepthwiseConvParams depthwise(Rng& r, int64_t c, int64_t k, int64_t stride = 1, int64_t dm = 1) {
  DepthwiseConvParams d;
  d.window.kernel_h = d.window.kernel_w = k;
  d.window.stride_h = d.window.stride_w = stride;
  d.window.padding = Padding::kSame;
  d.depth_multiplier = dm;
  d.kernel = r.weights({k, k, c, dm});
  d.bias = r.weights({c * dm});
  d.activation = ActivationKind::kRelu6;
  return d;
}

SeparableConvParams separable(Rng& r, int64_t cin, int64_t filters, int64_t k, int64_t dilation = 1) {
  SeparableConvParams s;
  s.window.kernel_h = s.window.kernel_w = k;
  s.window.dilation_h = s.window.dilation_w = dilation;
  s.window.padding = Padding::kSame;
  s.filters = filters;
  s.depthwise_kernel = r.weights({k, k, cin, 1});
  s.pointwise_kernel = r.weights({1, 1, cin, filters}, 0.3f);
  s.bias = r.weights({filters});
  s.activation = ActivationKind::kRelu;
  return s;
}

PoolParams pool(PoolKind kind, int64_t k, int64_t stride, Padding pad = Padding::kSame) {
  return nnd::test::pool2d(kind, k, stride, pad);
}

// Per value: the bordered storage the kernel plan gives it for `isa` (lowering only, no code).
std::vector<std::optional<PaddedStore>> bordered_values(const Graph& g, Isa isa) {
  LowerContext cx(g, isa, MathMode::kExact);
  lower_graph(cx);
  std::vector<std::optional<PaddedStore>> out(g.values.size());
  for (size_t v = 0; v < g.values.size(); ++v) {
    const int b = cx.value_buf[v];
    if (b >= 0) out[v] = cx.buffers[static_cast<size_t>(b)].placed;
  }
  return out;
}

int bordered_buffers(const Graph& g, Isa isa) {
  LowerContext cx(g, isa, MathMode::kExact);
  lower_graph(cx);
  return static_cast<int>(std::count_if(cx.buffers.begin(), cx.buffers.end(), [](const PlanBuffer& b) { return b.placed.has_value(); }));
}

const std::optional<PaddedStore>& plan_of(const std::vector<std::optional<PaddedStore>>& plan, ValueId v) {
  return plan[static_cast<size_t>(v)];
}

// ---- which values qualify ----

TEST(PaddedStorage, ConvIntoSameConvGetsTheConsumersBorder) {
  Rng r(1);
  GraphBuilder gb("t");
  const ValueId x = gb.input("x", {7, 9, 3});
  const ValueId a = gb.node("a", conv(r, 3, 5, 3), {x});
  const ValueId b = gb.node("b", conv(r, 5, 4, 5, 1, 2), {a});  // 5x5 dilated 2: 4 on each side
  const Graph g = gb.finish({b});
  for (Isa isa : all_isas()) {
    SCOPED_TRACE(isa_id(isa));
    const auto plan = bordered_values(g, isa);
    EXPECT_FALSE(plan_of(plan, x)) << "graph inputs are the caller's memory";
    ASSERT_TRUE(plan_of(plan, a));
    EXPECT_EQ(*plan_of(plan, a), (PaddedStore{7, 9, 5, 4, 4, 4, 4, 0.0f}));
    EXPECT_FALSE(plan_of(plan, b)) << "graph outputs are the caller's memory";
  }
}

TEST(PaddedStorage, MaxPoolBorderIsMinusInfinityAndOnlyWhereNeeded) {
  Rng r(2);
  GraphBuilder gb("t");
  const ValueId x = gb.input("x", {8, 6, 2});
  const ValueId a = gb.node("a", depthwise(r, 2, 3), {x});
  const ValueId p = gb.node("p", pool(PoolKind::kMax, 3, 2), {a});  // same on 8x6: bottom/right 1
  const ValueId o = gb.node("o", conv(r, 2, 3, 1), {p});
  const Graph g = gb.finish({o});
  for (Isa isa : all_isas()) {
    SCOPED_TRACE(isa_id(isa));
    const auto plan = bordered_values(g, isa);
    ASSERT_TRUE(plan_of(plan, a));
    EXPECT_EQ(*plan_of(plan, a), (PaddedStore{8, 6, 2, 0, 1, 0, 1, -std::numeric_limits<float>::infinity()}));
    EXPECT_FALSE(plan_of(plan, p)) << "a 1x1 consumer needs no border";
  }
}

TEST(PaddedStorage, ValuesThatCannotBeBordered) {
  Rng r(3);
  GraphBuilder gb("t");
  const ValueId x = gb.input("x", {6, 6, 4});
  const ValueId shared = gb.node("shared", conv(r, 4, 4, 3), {x});
  const ValueId c1 = gb.node("c1", conv(r, 4, 4, 3), {shared});
  const ValueId twice = gb.node("twice", conv(r, 4, 4, 3), {x});
  const ValueId plus = gb.node("plus", MergeParams{MergeOp::kAdd}, {twice, shared});  // reads twice first
  const ValueId after = gb.node("after", conv(r, 4, 4, 3), {twice});                 // and pads it last
  const ValueId sum = gb.node("sum", MergeParams{MergeOp::kAdd}, {c1, plus});        // shared: second reader
  const ValueId sig = gb.node("sig", conv(r, 4, 4, 3, 1, 1, ActivationKind::kSigmoid), {sum});
  const ValueId c2 = gb.node("c2", conv(r, 4, 4, 3), {sig});  // producer runs a separate sigmoid step
  ConvParams res = conv(r, 4, 4, 3);
  res.residual = true;
  const ValueId fused = gb.node("fused", res, {c2, after});
  const ValueId c3 = gb.node("c3", conv(r, 4, 4, 3), {fused});  // producer adds a residual
  const ValueId avg = gb.node("avg", pool(PoolKind::kAverage, 3, 1), {c3});  // rescales over padding
  const ValueId dm2 = gb.node("dm2", depthwise(r, 4, 3, 1, 2), {avg});  // replicates channels
  const ValueId avgv = gb.node("avgv", pool(PoolKind::kAverage, 2, 1, Padding::kValid), {dm2});
  const ValueId last = gb.node("last", conv(r, 8, 2, 3), {avgv});
  const Graph g = gb.finish({last});
  for (Isa isa : all_isas()) {
    SCOPED_TRACE(isa_id(isa));
    const auto plan = bordered_values(g, isa);
    EXPECT_FALSE(plan_of(plan, shared)) << "two readers";
    EXPECT_FALSE(plan_of(plan, twice)) << "two readers, the padded one last";
    EXPECT_FALSE(plan_of(plan, sum)) << "merges write densely";
    EXPECT_FALSE(plan_of(plan, sig));
    EXPECT_FALSE(plan_of(plan, fused));
    EXPECT_TRUE(plan_of(plan, c2)) << "a conv with a fused residual reads its first input like any conv";
    EXPECT_TRUE(plan_of(plan, c3)) << "average pooling reads a zero border";
    EXPECT_FALSE(plan_of(plan, avg)) << "the depth-multiplier consumer pads by replicating channels";
    EXPECT_TRUE(plan_of(plan, avgv)) << "valid average pooling writes its output in one step";
  }
}

// Decided on kernel properties, not layer kinds: any producer whose one kernel writes through an
// output placement qualifies (a Dense's GEMM becomes a 1x1 conv), but only for the shape it
// writes, and a graph output read back from the buffer never is bordered.
TEST(PaddedStorage, KernelPropertiesNotLayerKinds) {
  Rng r(4);
  GraphBuilder gb("t");
  const ValueId x = gb.input("x", {5, 6, 3});
  DenseParams d;
  d.units = 7;
  d.kernel = r.weights({3, 7});
  d.bias = r.weights({7});
  d.activation = ActivationKind::kRelu;
  const ValueId dense = gb.node("dense", d, {x});
  const ValueId c1 = gb.node("c1", conv(r, 7, 4, 3), {dense});
  const ValueId swapped = gb.node("swapped", ReshapeParams{{6, 5, 4}}, {c1});  // same floats, other rows
  const ValueId c2 = gb.node("c2", conv(r, 4, 4, 3), {swapped});
  const ValueId pw = gb.node("pw", conv(r, 4, 4, 1), {c2});  // a GEMM: its rows are any pixels
  const ValueId flat = gb.node("flat", ReshapeParams{{30, 4}}, {pw});
  const ValueId c3 = gb.node("c3", conv1d(r, 4, 2, 3), {flat});
  const ValueId c4 = gb.node("c4", conv(r, 4, 3, 3), {c2});
  const ValueId shown = gb.node("shown", ReshapeParams{{6, 5, 3}}, {c4});  // an output in c4's buffer
  const ValueId c5 = gb.node("c5", conv(r, 3, 3, 3), {c4});
  const Graph g = gb.finish({c3, shown, c5});
  for (Isa isa : all_isas()) {
    SCOPED_TRACE(isa_id(isa));
    const auto plan = bordered_values(g, isa);
    ASSERT_TRUE(plan_of(plan, dense)) << "a Dense's GEMM writes through a placement as a 1x1 conv";
    EXPECT_EQ(*plan_of(plan, dense), (PaddedStore{5, 6, 7, 1, 1, 1, 1, 0.0f}));
    EXPECT_FALSE(plan_of(plan, c1)) << "c2 reads c1 as 6x5, the conv writes 5x6";
    ASSERT_TRUE(plan_of(plan, pw)) << "the GEMM's 30 rows are the 1x30 pixels c3 reads";
    EXPECT_EQ(*plan_of(plan, pw), (PaddedStore{1, 30, 4, 0, 0, 1, 1, 0.0f}));
    EXPECT_FALSE(plan_of(plan, c4)) << "its buffer is copied to a graph output after the run";
  }
}

// ---- JIT vs reference on chains ----

int count_kernels(const JitEngine& e, const std::string& what) {
  int n = 0;
  for (const CompiledKernel& k : e.kernels()) n += k.name.find(what) != std::string::npos;
  return n;
}

struct Chain {
  const char* name;
  std::function<Graph(Rng&, int64_t h, int64_t w, int64_t c)> build;
};

std::vector<Chain> chains() {
  return {
      {"conv-conv-strided", [](Rng& r, int64_t h, int64_t w, int64_t c) {
         GraphBuilder gb("conv-conv");
         const ValueId x = gb.input("x", {h, w, c});
         const ValueId a = gb.node("a", conv(r, c, c + 2, 3), {x});
         return gb.finish({gb.node("b", conv(r, c + 2, 5, 3, 2), {a})});
       }},
      {"conv1x1-depthwise-conv", [](Rng& r, int64_t h, int64_t w, int64_t c) {
         GraphBuilder gb("pointwise-dw");
         const ValueId x = gb.input("x", {h, w, c});
         const ValueId a = gb.node("a", conv(r, c, 9, 1), {x});  // GEMM form turned spatial
         const ValueId d = gb.node("d", depthwise(r, 9, 5, 2), {a});
         return gb.finish({gb.node("b", conv(r, 9, 3, 3, 1, 2), {d})});
       }},
      {"separable-separable", [](Rng& r, int64_t h, int64_t w, int64_t c) {
         GraphBuilder gb("sep-sep");
         const ValueId x = gb.input("x", {h, w, c});
         const ValueId a = gb.node("a", separable(r, c, 17, 3), {x});
         const ValueId b = gb.node("b", separable(r, 17, 6, 3, 2), {a});
         return gb.finish({gb.node("o", separable(r, 6, 4, 3), {b})});
       }},
      {"conv-maxpool-conv", [](Rng& r, int64_t h, int64_t w, int64_t c) {
         GraphBuilder gb("pool");
         const ValueId x = gb.input("x", {h, w, c});
         const ValueId a = gb.node("a", conv(r, c, 13, 3, 1, 1, ActivationKind::kLinear), {x});  // negatives
         const ValueId p = gb.node("p", pool(PoolKind::kMax, 3, 2), {a});
         return gb.finish({gb.node("b", conv(r, 13, 4, 3), {p})});
       }},
      {"depthwise-avgpool-conv", [](Rng& r, int64_t h, int64_t w, int64_t c) {
         GraphBuilder gb("avg");
         const ValueId x = gb.input("x", {h, w, c});
         const ValueId d = gb.node("d", depthwise(r, c, 3), {x});
         const ValueId p = gb.node("p", pool(PoolKind::kAverage, 3, 1), {d});
         const ValueId q = gb.node("q", pool(PoolKind::kMax, 2, 1), {p});
         return gb.finish({gb.node("b", conv(r, c, 7, 3), {q})});
       }},
      {"dense-conv", [](Rng& r, int64_t h, int64_t w, int64_t c) {
         GraphBuilder gb("dense");
         const ValueId x = gb.input("x", {h, w, c});
         DenseParams d;
         d.units = 11;
         d.kernel = r.weights({c, 11});
         d.bias = r.weights({11});
         d.activation = ActivationKind::kRelu6;
         const ValueId a = gb.node("a", d, {x});
         return gb.finish({gb.node("b", conv(r, 11, 5, 3), {a})});
       }},
      {"pointwise-reshape-conv1d", [](Rng& r, int64_t h, int64_t w, int64_t c) {
         GraphBuilder gb("reshaped");
         const ValueId x = gb.input("x", {h, w, c});
         const ValueId a = gb.node("a", conv(r, c, 6, 1), {x});
         const ValueId f = gb.node("f", ReshapeParams{{h * w, 6}}, {a});
         return gb.finish({gb.node("b", conv1d(r, 6, 3, 5), {f})});
       }},
      {"conv1d-conv1d", [](Rng& r, int64_t h, int64_t w, int64_t c) {
         GraphBuilder gb("conv1d");
         const ValueId x = gb.input("x", {h * w, c});
         const ValueId a = gb.node("a", conv1d(r, c, 6, 5), {x});
         return gb.finish({gb.node("b", conv1d(r, 6, 3, 3, 2), {a})});
       }},
  };
}

class PaddedChains : public ::testing::TestWithParam<Isa> {};

TEST_P(PaddedChains, MatchReferenceAndFillBordersInsteadOfCopying) {
  const Isa isa = GetParam();
  NND_SKIP_WITHOUT(isa);
  Rng sizes(11);
  for (const Chain& ch : chains()) {
    for (int trial = 0; trial < 4; ++trial) {
      const int64_t h = sizes.range(1, 11), w = sizes.range(1, 12), c = sizes.range(1, 19);
      Rng r(static_cast<uint32_t>(100 + trial));
      const Graph g = ch.build(r, h, w, c);
      EngineOptions o;
      o.engine = EngineKind::kJit;
      o.isa = isa;
      const auto e = make_jit_engine(g, o);
      const int bordered = bordered_buffers(g, isa);
      EXPECT_GE(bordered, 1) << ch.name;
      EXPECT_EQ(count_kernels(*e, "f32-padborder"), bordered) << ch.name << " " << h << "x" << w << "x" << c;
      for (int64_t batch : {1, 2, 5}) {
        std::string where;
        const double err = jit_vs_reference(g, isa, batch, static_cast<uint32_t>(trial * 7 + batch), false, &where);
        EXPECT_LE(err, kTol) << ch.name << " " << h << "x" << w << "x" << c << " batch " << batch << ": " << where;
      }
    }
  }
}

NND_ISA_SUITE(PaddedChains);

}  // namespace
}  // namespace nnd::jit::test
