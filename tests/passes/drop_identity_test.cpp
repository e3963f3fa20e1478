#include "core/passes/drop_identity.h"

#include "tests/passes/passes_test_util.h"

namespace nnd::passes::test {
namespace {

TEST(DropIdentity, RemovesDropoutLinearActivationAndNoOpReshapes) {
  Builder b;
  const ValueId x = b.input({6, 6, 3});
  ValueId v = b.add(b.conv(3, 3, 4), {x});
  v = b.add(IdentityParams{}, {v}, "dropout");
  v = b.add(Builder::act(ActivationKind::kLinear), {v}, "linear");
  v = b.add(ReshapeParams{{6, 6, 4}}, {v}, "same_reshape");
  v = b.add(b.conv(1, 4, 2), {v});
  v = b.add(FlattenParams{}, {v}, "flatten");  // changes the shape: stays
  v = b.add(IdentityParams{}, {v}, "final_dropout");
  b.output(v, "final_dropout");
  const Graph g = b.finish();
  bool changed = false;
  const Graph r = rewritten_by<DropIdentity>(g, &changed);
  EXPECT_TRUE(changed);
  EXPECT_EQ(r.nodes.size(), 3u);
  EXPECT_EQ(count<IdentityParams>(r), 0);
  EXPECT_EQ(count<FlattenParams>(r), 1);
  EXPECT_EQ(count<ReshapeParams>(r), 0);
  EXPECT_EQ(r.output_names, std::vector<std::string>{"final_dropout"});
  expect_same_function(g, r);
}

TEST(DropIdentity, OutputThatIsAnInputAndSharedOutputs) {
  Builder b;
  const ValueId x = b.input({5});
  const ValueId d = b.add(IdentityParams{}, {x}, "dropout");
  const ValueId y = b.add(b.dense(5, 3), {d});
  b.output(d, "passthrough");
  b.output(y, "dense");
  const Graph g = b.finish();
  const Graph r = rewritten_by<DropIdentity>(g);
  EXPECT_EQ(r.nodes.size(), 1u);
  EXPECT_EQ(r.outputs[0], r.inputs[0]);
  EXPECT_EQ(r.output_names, (std::vector<std::string>{"passthrough", "dense"}));
  expect_same_function(g, r);
}

TEST(DropIdentity, NothingToDo) {
  Builder b;
  const ValueId x = b.input({4});
  b.output(b.add(Builder::act(ActivationKind::kTanh), {x}), "tanh");
  const Graph g = b.finish();
  bool changed = true;
  const Graph r = rewritten_by<DropIdentity>(g, &changed);
  EXPECT_FALSE(changed);
  EXPECT_EQ(r.nodes.size(), 1u);
}

}  // namespace
}  // namespace nnd::passes::test
