// Recurrent layers in the JIT (expanded into Dense / Merge / Cropping nodes by
// passes::ExpandRecurrent) against the reference engine's step-by-step float64 recurrence, within
// 1e-5 * max(1, |ref|): every cell, direction, output and initial-state kind, GRU's two reset
// placements, gate activations, one step and many, odd feature and unit counts (vector tails),
// batch 1..6, on every ISA this CPU has.
#include <gtest/gtest.h>

#include <variant>

#include "core/passes/expand_recurrent.h"
#include "core/util/error.h"
#include "tests/jit_common/jit_test_util.h"

namespace nnd::jit::test {
namespace {

class JitRecurrent : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override { NND_SKIP_WITHOUT(GetParam()); }
};

RecurrentParams random_layer(Rng& r, RecurrentCell cell, int64_t features, int64_t units) {
  RecurrentParams p;
  p.cell = cell;
  p.units = units;
  p.direction = static_cast<RecurrentDirection>(r.range(0, 2));
  if (p.direction == RecurrentDirection::kBidirectional && r.coin()) p.merge = static_cast<RecurrentMerge>(r.range(1, 3));
  p.output = static_cast<RecurrentOutput>(r.range(0, cell == RecurrentCell::kLstm ? 2 : 1));
  p.initial_state = static_cast<RecurrentInitialState>(r.range(0, 2));
  p.reset_after = r.coin();
  if (cell == RecurrentCell::kSimple) {
    p.activation = r.coin() ? ActivationKind::kTanh : ActivationKind::kRelu;
  } else if (r.range(0, 3) == 0) {
    p.recurrent_activation = r.coin() ? ActivationKind::kHardSigmoidK2 : ActivationKind::kHardSigmoidK3;
  }
  const int64_t cols = units * p.gates();
  for (int d = 0; d < p.direction_count(); ++d) {
    RecurrentWeights w;
    w.kernel = r.weights({features, cols}, 0.4f);
    w.recurrent_kernel = r.weights({units, cols}, 0.4f);
    if (r.range(0, 3) > 0) w.bias = r.weights({cols});
    if (r.coin()) w.recurrent_bias = r.weights({cols});
    if (p.initial_state == RecurrentInitialState::kConstant) {
      w.initial_h = r.weights({units});
      if (cell == RecurrentCell::kLstm) w.initial_c = r.weights({units});
    }
    p.directions.push_back(std::move(w));
  }
  return p;
}

std::string describe(const RecurrentParams& p, int64_t steps, int64_t features) {
  static const char* cells[] = {"simple", "lstm", "gru"};
  return std::string(cells[static_cast<int>(p.cell)]) + " steps " + std::to_string(steps) + " features " +
         std::to_string(features) + " units " + std::to_string(p.units) + " direction " +
         std::to_string(static_cast<int>(p.direction)) + " output " + std::to_string(static_cast<int>(p.output)) +
         " initial " + std::to_string(static_cast<int>(p.initial_state)) + (p.reset_after ? "" : " reset-before") +
         " merge " + std::to_string(static_cast<int>(p.merge));
}

TEST_P(JitRecurrent, MatchesTheReferenceRecurrence) {
  Rng r(2024);
  for (int i = 0; i < 36; ++i) {
    const auto cell = static_cast<RecurrentCell>(i % 3);
    const int64_t steps = i % 6 == 0 ? 1 : r.range(2, 9);
    const int64_t features = r.range(1, i % 4 == 0 ? 37 : 9);
    const int64_t units = r.range(1, i % 5 == 0 ? 33 : 12);
    const RecurrentParams p = random_layer(r, cell, features, units);
    std::vector<Dims> shapes{{steps, features}};
    if (p.initial_state == RecurrentInitialState::kInputs) {
      const int64_t width = units * p.direction_count();
      shapes.push_back({width});
      if (cell == RecurrentCell::kLstm) shapes.push_back({width});
    }
    const Graph g = one_node(p, shapes, DType::kFloat32, "LSTM");
    const int64_t batch = r.range(1, 6);
    std::string where;
    const double err = jit_vs_reference(g, GetParam(), batch, static_cast<uint32_t>(100 + i), false, &where);
    EXPECT_LE(err, kTol) << describe(p, steps, features) << " batch " << batch << " (" << isa_id(GetParam())
                         << "): " << where;
  }
}

// The expansion keeps the node's output value and name (graph outputs and consumers untouched) and
// leaves no Recurrent node behind.
TEST(ExpandRecurrent, ReplacesTheNodeAndKeepsItsOutput) {
  Rng r(7);
  RecurrentParams p = random_layer(r, RecurrentCell::kLstm, 3, 4);
  p.direction = RecurrentDirection::kBidirectional;
  p.initial_state = RecurrentInitialState::kZero;
  p.directions.resize(1);
  p.directions.push_back(p.directions[0]);
  for (auto& w : p.directions) w.initial_h = w.initial_c = Weights{};
  Graph g = one_node(p, {{5, 3}}, DType::kFloat32, "LSTM");
  const ValueId out = g.outputs[0];
  EXPECT_TRUE(passes::ExpandRecurrent().run(g));
  verify_structure(g);
  infer_shapes(g);
  EXPECT_EQ(g.outputs[0], out);
  EXPECT_EQ(g.values[static_cast<size_t>(out)].name, "layer");
  for (const Node& n : g.nodes) EXPECT_FALSE(std::holds_alternative<RecurrentParams>(n.params)) << n.name;
  EXPECT_FALSE(passes::ExpandRecurrent().run(g));
}

// Over kMaxUnrolledSteps the pass leaves the layer alone (it never fails on a valid graph: the
// fuzz targets run it on every accepted model) and the JIT refuses it by name; the reference
// engine runs it.
TEST(ExpandRecurrent, LeavesLayersOverTheStepLimitToTheReferenceEngine) {
  Rng r(8);
  RecurrentParams p = random_layer(r, RecurrentCell::kGru, 2, 3);
  p.direction = RecurrentDirection::kForward;
  p.output = RecurrentOutput::kLastHidden;
  p.initial_state = RecurrentInitialState::kZero;
  p.directions.resize(1);
  p.directions[0].initial_h = Weights{};
  const int64_t steps = passes::kMaxUnrolledSteps + 1;
  Graph g = one_node(p, {{steps, 2}}, DType::kFloat32, "GRU");
  EXPECT_FALSE(passes::ExpandRecurrent().run(g));
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<RecurrentParams>(g.nodes[0].params));
  EngineOptions opt;
  opt.engine = EngineKind::kJit;
  opt.isa = first_isa();
  try {
    make_jit_engine(g, opt);
    ADD_FAILURE() << "the JIT compiled a recurrent layer over " << steps << " steps";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not compiled by the JIT yet (a recurrent layer over 4097 steps)"),
              std::string::npos)
        << e.what();
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported) << e.what();
  }
  const std::vector<UnsupportedLayer> un = jit_unsupported_layers(g);
  ASSERT_EQ(un.size(), 1u);
  EXPECT_EQ(un[0].node, 0u);
  EXPECT_EQ(un[0].code, ErrorCode::kUnsupported);
  EXPECT_NE(un[0].message.find("layer 'layer' (GRU): not compiled by the JIT yet"), std::string::npos) << un[0].message;
  auto ref = make_reference_engine(g);
  std::vector<float> x(static_cast<size_t>(steps * 2), 0.25f), y(3);
  const InputView in{DType::kFloat32, x.data()};
  float* outs[] = {y.data()};
  ref->run(1, std::span<const InputView>(&in, 1), outs);
  for (float v : y) EXPECT_TRUE(std::isfinite(v));
}

NND_ISA_SUITE(JitRecurrent);

}  // namespace
}  // namespace nnd::jit::test
