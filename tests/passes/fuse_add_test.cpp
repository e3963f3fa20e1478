#include "core/passes/fuse_add.h"

#include "core/ir/cost.h"
#include "core/passes/fuse_activation.h"
#include "core/passes/pass.h"
#include "tests/passes/passes_test_util.h"

namespace nnd::passes::test {
namespace {

// Keras residual block: x -> conv -> add(x) -> relu.
TEST(FuseAdd, ConvAddReluBecomesOneNode) {
  Builder b(21);
  const ValueId x = b.input({6, 6, 4});
  const ValueId c = b.add(b.conv(3, 4, 4), {x});
  const ValueId a = b.add(MergeParams{MergeOp::kAdd}, {x, c}, "add");
  b.output(b.add(Builder::relu(), {a}, "relu"), "relu");
  const Graph g = b.finish();
  const Graph r1 = rewritten_by<FuseAdd>(g);
  ASSERT_EQ(r1.nodes.size(), 2u) << dump_graph(r1);
  const auto& cp = std::get<ConvParams>(r1.nodes[0].params);
  EXPECT_TRUE(cp.residual);
  EXPECT_EQ(r1.nodes[0].inputs, (std::vector<ValueId>{x, x}));
  expect_same_function(g, r1);
  const Graph r2 = rewritten_by<FuseActivation>(r1);
  ASSERT_EQ(r2.nodes.size(), 1u) << dump_graph(r2);
  EXPECT_EQ(std::get<ConvParams>(r2.nodes[0].params).activation, ActivationKind::kRelu);
  expect_same_function(g, r2);
}

// Two branches: the later producer takes the residual; every producer kind.
TEST(FuseAdd, LaterProducerTakesTheResidual) {
  Builder b(22);
  const ValueId x = b.input({5, 7, 3});
  const ValueId c1 = b.add(b.separable(3, 3, 6), {x});
  const ValueId c2 = b.add(b.conv(1, 3, 6), {x});
  ValueId v = b.add(MergeParams{MergeOp::kAdd}, {c1, c2});
  const ValueId d = b.add(b.depthwise(3, 6, 1), {v});
  v = b.add(MergeParams{MergeOp::kAdd}, {d, v});
  v = b.add(FlattenParams{}, {v});
  const ValueId e = b.add(b.dense(5 * 7 * 6, 4), {v});
  const ValueId e2 = b.add(b.dense(5 * 7 * 6, 4), {v});
  b.output(b.add(MergeParams{MergeOp::kAdd}, {e, e2}), "sum");
  const Graph g = b.finish();
  const Graph r = rewritten_by<FuseAdd>(g);
  EXPECT_EQ(count<MergeParams>(r), 0) << dump_graph(r);
  EXPECT_TRUE(std::get<ConvParams>(r.nodes[1].params).residual);
  EXPECT_TRUE(std::get<DepthwiseConvParams>(r.nodes[2].params).residual);
  EXPECT_TRUE(std::get<DenseParams>(r.nodes[5].params).residual);
  expect_same_function(g, r);
  // The fused residual costs what the Add it replaced did: fusing does not change the FLOPs.
  EXPECT_EQ(flops_per_sample(r), flops_per_sample(g));
}

// Keras order conv -> ReLU -> Add (bop's blocks): once fuse_activation has made the ReLU the
// conv's activation, the Add goes after it; the whole default pipeline leaves one node.
TEST(FuseAdd, ReluThenAddTakesTheResidualAfterTheActivation) {
  for (const ActivationKind act : {ActivationKind::kRelu, ActivationKind::kRelu6}) {
    Builder b(24);
    const ValueId x = b.input({6, 5, 4});
    const ValueId c = b.add(b.conv(3, 4, 4), {x});
    const ValueId r = b.add(act == ActivationKind::kRelu ? Builder::relu() : Builder::relu(6.0), {c}, "relu");
    b.output(b.add(MergeParams{MergeOp::kAdd}, {r, x}, "add"), "add");
    const Graph g = b.finish();
    const Graph r1 = rewritten_by<FuseActivation>(g);
    const Graph r2 = rewritten_by<FuseAdd>(r1);
    ASSERT_EQ(r2.nodes.size(), 1u) << dump_graph(r2);
    const auto& cp = std::get<ConvParams>(r2.nodes[0].params);
    EXPECT_TRUE(cp.residual);
    EXPECT_EQ(cp.residual_at, ResidualAt::kAfterActivation);
    EXPECT_EQ(cp.activation, act);
    EXPECT_NE(dump_graph(r2).find("+residual(after act)"), std::string::npos) << dump_graph(r2);
    expect_same_function(g, r2);  // the reference engine applies the residual after the ReLU
    Graph all = g;
    make_default_pipeline("").run(all);
    EXPECT_EQ(all.nodes.size(), 1u) << dump_graph(all);
  }
}

TEST(FuseAdd, NotWithActivationTwoReadersBroadcastOrSubtract) {
  Builder b(23);
  const ValueId x = b.input({4, 4, 2});
  const ValueId y = b.input({1, 1, 2});
  const ValueId c1 = b.add(b.conv(3, 2, 2, Padding::kSame, 1, ActivationKind::kSigmoid), {x});
  const ValueId a1 = b.add(MergeParams{MergeOp::kAdd}, {c1, x});  // an activation no epilogue fuses
  const ValueId c2 = b.add(b.conv(3, 2, 2), {a1});
  const ValueId a2 = b.add(MergeParams{MergeOp::kAdd}, {c2, a1});  // c2 is also an output
  const ValueId c3 = b.add(b.conv(3, 2, 2), {a2});
  const ValueId a3 = b.add(MergeParams{MergeOp::kAdd}, {c3, y});  // broadcasting
  const ValueId c4 = b.add(b.conv(3, 2, 2), {a3});
  const ValueId a4 = b.add(MergeParams{MergeOp::kSubtract}, {c4, a3});
  b.output(a4, "out");
  b.output(c2, "c2");
  const Graph g = b.finish();
  bool changed = true;
  const Graph r = rewritten_by<FuseAdd>(g, &changed);
  EXPECT_FALSE(changed) << dump_graph(r);
}

}  // namespace
}  // namespace nnd::passes::test
