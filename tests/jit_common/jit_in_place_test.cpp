// In-place element-wise layers (core/jit/in_place.h): which nodes' plans qualify, that their outputs
// really share the input's arena storage (the arena shrinks to what the plan predicts), and that
// results still match the reference engine on every ISA.
#include <gtest/gtest.h>

#include <tuple>

#include "core/jit/in_place.h"
#include "core/jit/lower/lower.h"
#include "tests/jit_common/jit_test_util.h"

namespace nnd::jit::test {
namespace {

ConvParams conv1x1(Rng& r, int64_t cin, int64_t filters) {
  ConvParams c;
  c.filters = filters;
  c.kernel = r.weights({1, 1, cin, filters}, 0.5f);
  c.bias = r.weights({filters});
  return c;
}

BatchNormParams batch_norm(Rng& r, int64_t c) {
  BatchNormParams bn;
  bn.axis = 2;
  bn.gamma = r.weights({c});
  bn.beta = r.weights({c});
  bn.moving_mean = r.weights({c});
  bn.moving_variance = Weights{{c}, r.vec(c, 0.5f, 1.5f)};
  return bn;
}

ReluParams relu() { return ReluParams{}; }

int64_t round16(int64_t n) { return (n + 15) / 16 * 16; }

// Per node: the input whose storage the lowered plan let its output take (the build's first ISA:
// SSE4.1, NEON), or -1.
std::vector<int> reused_inputs(const Graph& g, MathMode math) {
  LowerContext cx(g, first_isa(), math);
  lower_graph(cx);
  return cx.reused_input;
}

std::unique_ptr<JitEngine> compile_unfused(const Graph& g, Isa isa) {
  EngineOptions o;
  o.engine = EngineKind::kJit;
  o.isa = isa;
  JitConfig cfg;
  cfg.run_passes = false;  // keep BatchNorm and ReLU as their own element-wise steps
  return make_jit_engine(g, o, cfg);
}

// x -> conv -> BN -> ReLU -> hard-swish -> conv -> out: the three element-wise steps reuse the
// first conv's buffer, so the arena holds that one tensor (besides the input's conversion buffer).
Graph elementwise_chain(Rng& r, int64_t h, int64_t w, int64_t c) {
  GraphBuilder gb("chain");
  const ValueId x = gb.input("x", {h, w, 3});
  const ValueId a = gb.node("a", conv1x1(r, 3, c), {x});
  const ValueId b = gb.node("bn", batch_norm(r, c), {a});
  const ValueId q = gb.node("relu", relu(), {b});
  const ValueId s = gb.node("hswish", ActivationParams{ActivationKind::kHardSwish}, {q});
  return gb.finish({gb.node("out", conv1x1(r, c, 2), {s})});
}

TEST(InPlace, PlanFollowsLivenessAndKernelKinds) {
  Rng r(5);
  GraphBuilder gb("plan");
  const ValueId x = gb.input("x", {4, 4, 3});
  const ValueId a = gb.node("a", conv1x1(r, 3, 6), {x});
  const ValueId b = gb.node("b", conv1x1(r, 3, 6), {x});
  // Node indices: a 0, b 1, bn 2, sum 3, exp 4, sm 5, c 6, flat 7, relu 8, max 9, last 10.
  const ValueId bn = gb.node("bn", batch_norm(r, 6), {a});
  const ValueId sum = gb.node("sum", MergeParams{MergeOp::kAdd}, {b, bn});
  // exp's f32-fast-* kernel clamps its argument where float's exp still has values
  // (fast_kernel_serves): a helper in exact mode.
  const ValueId e = gb.node("exp", ActivationParams{ActivationKind::kExponential}, {sum});
  const ValueId sm = gb.node("sm", ActivationParams{ActivationKind::kSoftmax}, {e});
  const ValueId c = gb.node("c", conv1x1(r, 6, 6), {b});
  const ValueId f = gb.node("flat", FlattenParams{}, {c});
  const ValueId q = gb.node("relu", relu(), {c});
  const ValueId mx = gb.node("max", MergeParams{MergeOp::kMaximum}, {q, sm});
  const ValueId out = gb.node("last", relu(), {mx});
  const Graph g = gb.finish({out, f});
  const std::vector<int> exact = reused_inputs(g, MathMode::kExact);
  ASSERT_EQ(exact.size(), g.nodes.size());
  EXPECT_EQ(exact[2], 0) << "bn over a";
  EXPECT_EQ(exact[3], 1) << "sum over bn (b is read later)";
  EXPECT_EQ(exact[4], -1) << "exp runs through a helper in exact mode";
  EXPECT_EQ(exact[5], -1) << "softmax reads a row before writing it";
  EXPECT_EQ(exact[8], -1) << "relu over c: the Flatten alias is a graph output";
  EXPECT_EQ(exact[9], 0) << "max over q";
  EXPECT_EQ(exact[10], -1) << "the graph output";
  EXPECT_EQ(reused_inputs(g, MathMode::kFast)[4], 0) << "fast exp is a vectorised kernel";
  const std::vector<int> dying = dying_inputs(g);
  EXPECT_EQ(dying[4], 0) << "sum dies at the exp, whatever its kernel";
  EXPECT_EQ(dying[8], -1) << "c is read through the Flatten alias, a graph output";
}

class JitInPlace : public ::testing::TestWithParam<Isa> {};

TEST_P(JitInPlace, ElementwiseStepsShareTheInputsArenaAndMatchReference) {
  const Isa isa = GetParam();
  NND_SKIP_WITHOUT(isa);
  for (const auto& [h, w, c] : {std::tuple<int64_t, int64_t, int64_t>{5, 7, 13}, {1, 1, 1}, {3, 9, 32}}) {
    Rng r(static_cast<uint32_t>(h * 100 + c));
    const Graph g = elementwise_chain(r, h, w, c);
    const auto e = compile_unfused(g, isa);
    // The arena also holds the input's uint8 -> float conversion buffer (alive from the start).
    EXPECT_EQ(e->arena_floats_per_sample(), round16(h * w * c) + round16(h * w * 3)) << h << "x" << w << "x" << c;
    for (int64_t batch : {1, 3}) {
      std::string where;
      EXPECT_LE(jit_vs_reference(g, isa, batch, static_cast<uint32_t>(batch), false, &where), kTol) << where;
    }
  }
}

TEST_P(JitInPlace, MergeOverwritesAnInputThatDies) {
  const Isa isa = GetParam();
  NND_SKIP_WITHOUT(isa);
  Rng r(9);
  GraphBuilder gb("merge");
  const ValueId x = gb.input("x", {6, 5, 3});
  const ValueId a = gb.node("a", conv1x1(r, 3, 11), {x});
  const ValueId b = gb.node("b", conv1x1(r, 3, 11), {x});
  const ValueId sum = gb.node("sum", MergeParams{MergeOp::kSubtract}, {a, b});
  const Graph g = gb.finish({gb.node("out", conv1x1(r, 11, 4), {sum})});
  const auto e = compile_unfused(g, isa);
  EXPECT_EQ(e->arena_floats_per_sample(), 2 * round16(6 * 5 * 11) + round16(6 * 5 * 3))
      << "a and b, the difference over a (and the input's conversion buffer)";
  for (int64_t batch : {1, 4}) {
    std::string where;
    EXPECT_LE(jit_vs_reference(g, isa, batch, 3, false, &where), kTol) << where;
  }
}

NND_ISA_SUITE(JitInPlace);

}  // namespace
}  // namespace nnd::jit::test
