#include "core/passes/fold_batchnorm.h"

#include "tests/passes/passes_test_util.h"

namespace nnd::passes::test {
namespace {

// Producer-side folding for every producer kind.
TEST(FoldBatchNorm, IntoConvDepthwiseSeparableDense) {
  Builder b(3);
  const ValueId x = b.input({7, 9, 4});
  ValueId v = b.add(b.conv(3, 4, 6, Padding::kSame, 2), {x});
  v = b.add(b.bn(6), {v});
  v = b.add(b.depthwise(3, 6, 2), {v});
  v = b.add(b.bn(12), {v});
  v = b.add(b.separable(3, 12, 5), {v});
  v = b.add(b.bn(5), {v});
  v = b.add(b.conv(3, 5, 4, Padding::kValid, 1, ActivationKind::kLinear, /*groups=*/1), {v});
  v = b.add(b.bn(4), {v});
  v = b.add(FlattenParams{}, {v});
  v = b.add(b.dense(2 * 3 * 4, 3), {v});
  v = b.add(b.bn(3), {v}, "last_bn");
  b.output(v, "last_bn");
  const Graph g = b.finish();
  const Graph r = rewritten_by<FoldBatchNorm>(g);
  EXPECT_EQ(count<BatchNormParams>(r), 0) << dump_graph(r);
  EXPECT_EQ(r.nodes.size(), 6u);
  EXPECT_EQ(r.output_names, std::vector<std::string>{"last_bn"});
  expect_same_function(g, r);
}

TEST(FoldBatchNorm, GroupedConvAndConvWithoutBias) {
  Builder b(4);
  const ValueId x = b.input({5, 5, 6});
  ConvParams c = b.conv(3, 6, 9, Padding::kSame, 1, ActivationKind::kLinear, 3);
  c.bias = Weights{};
  ValueId v = b.add(c, {x});
  v = b.add(b.bn(9), {v});
  b.output(v, "out");
  const Graph g = b.finish();
  const Graph r = rewritten_by<FoldBatchNorm>(g);
  EXPECT_EQ(r.nodes.size(), 1u);
  expect_same_function(g, r);
}

TEST(FoldBatchNorm, NotIntoAProducerWithTwoReaders) {
  Builder b(5);
  const ValueId x = b.input({6, 6, 3});
  const ValueId c = b.add(b.conv(3, 3, 4), {x});
  const ValueId n = b.add(b.bn(4), {c});
  b.output(n, "bn");
  b.output(c, "conv");  // the conv output is also a graph output
  const Graph g = b.finish();
  bool changed = true;
  const Graph r = rewritten_by<FoldBatchNorm>(g, &changed);
  EXPECT_FALSE(changed);
  EXPECT_EQ(count<BatchNormParams>(r), 1);
}

TEST(FoldBatchNorm, NotIntoAProducerWithActivation) {
  Builder b(6);
  const ValueId x = b.input({6, 6, 3});
  const ValueId c = b.add(b.conv(3, 3, 4, Padding::kSame, 1, ActivationKind::kRelu), {x});
  b.output(b.add(b.bn(4), {c}), "bn");
  const Graph g = b.finish();
  const Graph r = rewritten_by<FoldBatchNorm>(g);
  EXPECT_EQ(count<BatchNormParams>(r), 1);
}

// Conv -> ReLU -> BN -> Conv(valid): forward fold into the next conv.
TEST(FoldBatchNorm, ForwardIntoValidConvAndDense) {
  Builder b(7);
  const ValueId x = b.input({8, 8, 3});
  ValueId v = b.add(b.conv(3, 3, 4, Padding::kSame, 1, ActivationKind::kRelu), {x});
  v = b.add(b.bn(4), {v});
  v = b.add(b.conv(3, 4, 5, Padding::kValid, 2), {v});  // 3x3 x 5
  v = b.add(Builder::relu(), {v});
  v = b.add(b.bn(5), {v});
  v = b.add(FlattenParams{}, {v});  // BN over the last axis of (3,3,5) then flatten: not into dense
  v = b.add(b.dense(45, 4, ActivationKind::kRelu), {v});
  v = b.add(b.bn(4), {v});
  v = b.add(b.dense(4, 2), {v});
  b.output(v, "out");
  const Graph g = b.finish();
  const Graph r = rewritten_by<FoldBatchNorm>(g);
  // The first BN folds into the valid conv, the last into the dense; the middle one (read by
  // Flatten) stays.
  EXPECT_EQ(count<BatchNormParams>(r), 1) << dump_graph(r);
  expect_same_function(g, r);
}

TEST(FoldBatchNorm, ForwardIntoSamePaddedConvOnlyWithZeroShift) {
  for (bool zero_shift : {false, true}) {
    Builder b(8);
    const ValueId x = b.input({6, 6, 3});
    ValueId v = b.add(b.conv(3, 3, 4, Padding::kSame, 1, ActivationKind::kRelu), {x});
    v = b.add(b.bn(4, zero_shift), {v});
    v = b.add(b.conv(3, 4, 5, Padding::kSame), {v});
    b.output(v, "out");
    const Graph g = b.finish();
    const Graph r = rewritten_by<FoldBatchNorm>(g);
    EXPECT_EQ(count<BatchNormParams>(r), zero_shift ? 0 : 1) << "zero shift " << zero_shift;
    expect_same_function(g, r);
  }
}

TEST(FoldBatchNorm, ForwardNotWhenTheBnOutputHasTwoReaders) {
  Builder b(9);
  const ValueId x = b.input({6, 6, 3});
  ValueId v = b.add(b.conv(3, 3, 4, Padding::kSame, 1, ActivationKind::kRelu), {x});
  const ValueId n = b.add(b.bn(4), {v});
  const ValueId c1 = b.add(b.conv(1, 4, 2, Padding::kValid), {n});
  const ValueId c2 = b.add(b.conv(1, 4, 2, Padding::kValid), {n});
  b.output(b.add(MergeParams{MergeOp::kAdd}, {c1, c2}), "out");
  const Graph g = b.finish();
  const Graph r = rewritten_by<FoldBatchNorm>(g);
  EXPECT_EQ(count<BatchNormParams>(r), 1);
  expect_same_function(g, r);
}

TEST(FoldBatchNorm, SamePaddingThatReadsNoPadding) {
  Window w;
  w.kernel_h = w.kernel_w = 1;
  w.padding = Padding::kSame;
  EXPECT_TRUE(conv_reads_no_padding(w, 5, 5));
  w.kernel_h = w.kernel_w = 3;
  EXPECT_FALSE(conv_reads_no_padding(w, 5, 5));
  w.padding = Padding::kValid;
  EXPECT_TRUE(conv_reads_no_padding(w, 5, 5));
}

}  // namespace
}  // namespace nnd::passes::test
