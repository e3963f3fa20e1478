// Every IR layer kind has its traits: a name, a cost, a dump and a reference implementation.
// At compile time layer_kind_traits.h rejects a kind without a LayerKindTraits specialisation and
// every per-kind visitor that misses one; at run time one node of every kind
// (tests/support/layer_kind_examples.h) goes through each of them.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "core/io/model_inputs.h"
#include "core/ir/cost.h"
#include "core/ir/dump.h"
#include "core/ir/layer_kind_traits.h"
#include "core/ref/reference_engine.h"
#include "tests/support/layer_kind_examples.h"

namespace nnd {
namespace {

// The compile-time half, spelled out: a catch-all or a missing kind is not a per-kind visitor.
struct OneKindOnly {
  int operator()(const DenseParams&) const { return 0; }
};
struct CatchAll {
  int operator()(const auto&) const { return 0; }
};
static_assert(!ExhaustiveLayerVisitor<OneKindOnly>);
static_assert(!ExhaustiveLayerVisitor<CatchAll>);
static_assert(ExhaustiveLayerVisitor<KindsReturning<
                  0, DenseParams, ConvParams, DepthwiseConvParams, SeparableConvParams, ConvTransposeParams,
                  BatchNormParams, LayerNormParams, ActivationParams, ReluParams, EluParams, ThresholdedReluParams,
                  PReluParams, SoftmaxParams, PoolParams, GlobalPoolParams, FlattenParams, ReshapeParams,
                  PermuteParams, RepeatVectorParams, IdentityParams, ZeroPaddingParams, CroppingParams,
                  UpSamplingParams, MergeParams, ConcatParams, RecurrentParams, ResizeParams, GatherParams,
                  ArgMaxParams, MatMulParams, ConstantParams, QuantizeParams, DequantizeParams, QConvParams, QDenseParams>>);

TEST(LayerKinds, OneExampleOfEveryKind) {
  std::set<size_t> kinds;
  for (const auto& x : test::layer_kind_examples()) {
    EXPECT_TRUE(kinds.insert(x.params.index()).second) << layer_kind_name(x.params) << " has two examples";
  }
  EXPECT_EQ(kinds.size(), std::variant_size_v<LayerParams>)
      << "tests/support/layer_kind_examples.h needs an example of every LayerParams alternative";
}

TEST(LayerKinds, NamesAreDistinctAndNonEmpty) {
  std::set<std::string> names;
  for (const auto& x : test::layer_kind_examples()) {
    const std::string name = layer_kind_name(x.params);
    EXPECT_FALSE(name.empty());
    EXPECT_TRUE(names.insert(name).second) << name << " names two kinds";
  }
}

TEST(LayerKinds, CostCountsArithmeticAndWeights) {
  for (const auto& x : test::layer_kind_examples()) {
    const Graph g = test::layer_kind_graph(x);
    const Node& n = g.nodes[0];
    SCOPED_TRACE(layer_kind_name(n.params));
    if (x.arithmetic) {
      EXPECT_GT(flops_per_sample(g, n), 0) << "computes but costs nothing";
    } else {
      EXPECT_EQ(flops_per_sample(g, n), 0) << "moves data only";
    }
    EXPECT_EQ(parameter_count(n), x.parameters);
  }
}

TEST(LayerKinds, DumpNamesTheKindAndItsParameters) {
  for (const auto& x : test::layer_kind_examples()) {
    const Graph g = test::layer_kind_graph(x);
    SCOPED_TRACE(layer_kind_name(x.params));
    EXPECT_EQ(describe_params(x.params).empty(), !x.has_dump_text) << "'" << describe_params(x.params) << "'";
    EXPECT_NE(dump_graph(g).find(std::string(" ") + layer_kind_name(x.params) + "("), std::string::npos)
        << dump_graph(g);
  }
}

TEST(LayerKinds, ReferenceRunsEveryKind) {
  for (const auto& x : test::layer_kind_examples()) {
    const Graph g = test::layer_kind_graph(x);
    SCOPED_TRACE(layer_kind_name(x.params));
    const int64_t batch = 2;
    std::vector<std::vector<float>> in;
    std::vector<InputView> views;
    for (ValueId v : g.inputs) {
      std::vector<float> d(static_cast<size_t>(batch * element_count(g.values[v].shape, "input")));
      for (size_t i = 0; i < d.size(); ++i) d[i] = 0.3f + 0.17f * static_cast<float>((i * 5) % 9) - 0.6f;
      in.push_back(std::move(d));
    }
    for (const auto& d : in) views.push_back({DType::kFloat32, d.data()});
    ModelOutputs out = allocate_outputs(g, batch);
    make_reference_engine(g)->run(batch, views, out.views());
    bool any_nonzero = false;
    for (size_t k = 0; k < out.size(0); ++k) {
      ASSERT_TRUE(std::isfinite(out.value(0, k)));
      any_nonzero = any_nonzero || out.value(0, k) != 0.0;
    }
    EXPECT_TRUE(any_nonzero) << "the reference wrote only zeros";
  }
}

}  // namespace
}  // namespace nnd
