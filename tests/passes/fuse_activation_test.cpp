#include "core/passes/fuse_activation.h"

#include "core/ir/cost.h"
#include "tests/passes/passes_test_util.h"

namespace nnd::passes::test {
namespace {

TEST(FuseActivation, ReluRelu6AndActivationIntoProducers) {
  Builder b(11);
  const ValueId x = b.input({6, 7, 3});
  ValueId v = b.add(b.conv(3, 3, 4), {x});
  v = b.add(Builder::relu(), {v});
  v = b.add(b.depthwise(3, 4, 1), {v});
  v = b.add(Builder::relu(6.0), {v});
  v = b.add(b.separable(3, 4, 5), {v});
  v = b.add(Builder::act(ActivationKind::kSigmoid), {v});
  v = b.add(b.bn(5), {v});
  v = b.add(Builder::relu(), {v});
  v = b.add(FlattenParams{}, {v});
  v = b.add(b.dense(6 * 7 * 5, 4), {v});
  v = b.add(Builder::act(ActivationKind::kTanh), {v}, "tanh");
  b.output(v, "tanh");
  const Graph g = b.finish();
  const Graph r = rewritten_by<FuseActivation>(g);
  EXPECT_EQ(count<ReluParams>(r), 0) << dump_graph(r);
  EXPECT_EQ(count<ActivationParams>(r), 0) << dump_graph(r);
  EXPECT_EQ(r.nodes.size(), 6u);
  EXPECT_EQ(std::get<ConvParams>(r.nodes[0].params).activation, ActivationKind::kRelu);
  EXPECT_EQ(std::get<DepthwiseConvParams>(r.nodes[1].params).activation, ActivationKind::kRelu6);
  EXPECT_EQ(std::get<BatchNormParams>(r.nodes[3].params).activation, ActivationKind::kRelu);
  expect_same_function(g, r);
  // A fused activation (BatchNorm's too) costs what its layer did.
  EXPECT_EQ(flops_per_sample(r), flops_per_sample(g));
}

TEST(FuseActivation, NotWhenTheProducerHasAnotherReaderOrActivation) {
  Builder b(12);
  const ValueId x = b.input({5, 5, 2});
  const ValueId c = b.add(b.conv(3, 2, 3), {x});
  const ValueId r1 = b.add(Builder::relu(), {c});
  const ValueId c2 = b.add(b.conv(3, 3, 3, Padding::kSame, 1, ActivationKind::kRelu), {r1});
  const ValueId r2 = b.add(Builder::relu(6.0), {c2});
  b.output(r2, "out");
  b.output(c, "conv");
  const Graph g = b.finish();
  const Graph r = rewritten_by<FuseActivation>(g);
  EXPECT_EQ(r.nodes.size(), 4u);
  expect_same_function(g, r);
}

TEST(FuseActivation, LeakyAndCappedReluVariantsStay) {
  Builder b(13);
  const ValueId x = b.input({4, 4, 2});
  ValueId v = b.add(b.conv(3, 2, 3), {x});
  v = b.add(Builder::relu(INFINITY, 0.1), {v});
  v = b.add(b.conv(3, 3, 3), {v});
  v = b.add(Builder::relu(4.0), {v});
  v = b.add(b.bn(3), {v});
  v = b.add(Builder::act(ActivationKind::kSigmoid), {v});  // not into a BN
  b.output(v, "out");
  const Graph g = b.finish();
  bool changed = true;
  const Graph r = rewritten_by<FuseActivation>(g, &changed);
  EXPECT_FALSE(changed);
  EXPECT_EQ(r.nodes.size(), 6u);
}

TEST(FuseActivation, ActivationOfNode) {
  Node n;
  n.inputs = {0};
  n.params = ReluParams{6.0, 0.0, 0.0};
  EXPECT_EQ(activation_of_node(n), ActivationKind::kRelu6);
  n.params = ReluParams{INFINITY, 0.0, 0.5};
  EXPECT_EQ(activation_of_node(n), std::nullopt);
  n.params = ActivationParams{ActivationKind::kSwish};
  EXPECT_EQ(activation_of_node(n), ActivationKind::kSwish);
}

}  // namespace
}  // namespace nnd::passes::test
