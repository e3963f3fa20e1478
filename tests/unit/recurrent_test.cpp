// The reference engine's recurrent layer against the formulas written out by hand for one unit
// and a few steps (core/ir/layers.h RecurrentParams): every cell, both GRU reset placements,
// reverse and bidirectional order, the three outputs, constant and input initial states; and
// shape inference's refusals. The PyTorch and Keras fixtures check the same layer on real
// exports; the JIT is tested against this engine (tests/jit_common/jit_recurrent_test.cpp).
#include <cmath>

#include "tests/unit/test_util.h"

namespace nnd::test {
namespace {

double sig(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// One unit, one feature: scalar weights per gate.
RecurrentWeights scalar_weights(std::vector<float> w, std::vector<float> r, std::vector<float> b,
                                std::vector<float> rb = {}) {
  RecurrentWeights rw;
  const auto g = static_cast<int64_t>(w.size());
  rw.kernel = W({1, g}, std::move(w));
  rw.recurrent_kernel = W({1, g}, std::move(r));
  rw.bias = W({g}, std::move(b));
  if (!rb.empty()) rw.recurrent_bias = W({g}, std::move(rb));
  return rw;
}

RecurrentParams params(RecurrentCell cell, std::vector<RecurrentWeights> dirs,
                       RecurrentDirection dir = RecurrentDirection::kForward,
                       RecurrentOutput out = RecurrentOutput::kSequence) {
  RecurrentParams p;
  p.cell = cell;
  p.units = 1;
  p.direction = dir;
  p.output = out;
  p.directions = std::move(dirs);
  return p;
}

TEST(Recurrent, SimpleRnnSteps) {
  const std::vector<float> x{0.5f, -1.0f, 2.0f};
  auto p = params(RecurrentCell::kSimple, {scalar_weights({0.7f}, {-0.4f}, {0.1f}, {0.05f})});
  double h = 0;
  std::vector<double> want;
  for (float xt : x) {
    h = std::tanh(0.7 * xt + 0.1 + -0.4 * h + 0.05);
    want.push_back(h);
  }
  EXPECT_VALUES_NEAR(run1(p, {{3, 1}}, {x}), want, 1e-6);
  p.activation = ActivationKind::kRelu;
  h = 0;
  want.clear();
  for (float xt : x) {
    h = std::max(0.0, 0.7 * xt + 0.1 + -0.4 * h + 0.05);
    want.push_back(h);
  }
  EXPECT_VALUES_NEAR(run1(p, {{3, 1}}, {x}), want, 1e-6);
}

TEST(Recurrent, LstmStepsAndStates) {
  const std::vector<float> x{0.3f, -0.8f, 1.5f, 0.2f};
  // Keras gate order i, f, c, o.
  const RecurrentWeights w = scalar_weights({0.5f, -0.3f, 0.8f, 0.2f}, {0.1f, 0.4f, -0.6f, 0.3f},
                                            {0.0f, 1.0f, 0.1f, -0.2f});
  double h = 0, c = 0;
  std::vector<double> seq;
  for (float xt : x) {
    const double i = sig(0.5 * xt + 0.1 * h), f = sig(-0.3 * xt + 0.4 * h + 1.0);
    const double g = std::tanh(0.8 * xt - 0.6 * h + 0.1), o = sig(0.2 * xt + 0.3 * h - 0.2);
    c = f * c + i * g;
    h = o * std::tanh(c);
    seq.push_back(h);
  }
  EXPECT_VALUES_NEAR(run1(params(RecurrentCell::kLstm, {w}), {{4, 1}}, {x}), seq, 1e-6);
  EXPECT_VALUES_NEAR(run1(params(RecurrentCell::kLstm, {w}, RecurrentDirection::kForward, RecurrentOutput::kLastHidden),
                          {{4, 1}}, {x}),
                     std::vector<double>{h}, 1e-6);
  EXPECT_VALUES_NEAR(run1(params(RecurrentCell::kLstm, {w}, RecurrentDirection::kForward, RecurrentOutput::kLastCell),
                          {{4, 1}}, {x}),
                     std::vector<double>{c}, 1e-6);
}

TEST(Recurrent, GruResetBeforeAndAfter) {
  const std::vector<float> x{1.0f, -0.5f, 0.25f};
  // z, r, h gates; recurrent biases make the two reset placements differ.
  const RecurrentWeights w = scalar_weights({0.4f, -0.7f, 0.9f}, {0.6f, 0.2f, -0.5f}, {0.1f, 0.2f, -0.1f},
                                            {0.3f, -0.2f, 0.4f});
  for (bool after : {true, false}) {
    double h = 0;
    std::vector<double> want;
    for (float xt : x) {
      const double z = sig(0.4 * xt + 0.1 + 0.6 * h + 0.3), r = sig(-0.7 * xt + 0.2 + 0.2 * h - 0.2);
      const double n = after ? std::tanh(0.9 * xt - 0.1 + r * (-0.5 * h + 0.4))
                             : std::tanh(0.9 * xt - 0.1 + -0.5 * (r * h) + 0.4);
      h = (1 - z) * n + z * h;
      want.push_back(h);
    }
    auto p = params(RecurrentCell::kGru, {w});
    p.reset_after = after;
    SCOPED_TRACE(after ? "reset_after" : "reset before");
    EXPECT_VALUES_NEAR(run1(p, {{3, 1}}, {x}), want, 1e-6);
  }
}

TEST(Recurrent, BackwardDirectionWritesStatesInTimeOrder) {
  const std::vector<float> x{0.5f, -1.0f, 2.0f};
  const RecurrentWeights fw = scalar_weights({0.7f}, {-0.4f}, {0.1f});
  const RecurrentWeights bw = scalar_weights({-0.2f}, {0.9f}, {0.3f});
  std::vector<double> f(3), b(3);
  double h = 0;
  for (int t = 0; t < 3; ++t) f[t] = h = std::tanh(0.7 * x[t] + 0.1 - 0.4 * h);
  h = 0;
  for (int t = 2; t >= 0; --t) b[t] = h = std::tanh(-0.2 * x[t] + 0.3 + 0.9 * h);
  EXPECT_VALUES_NEAR(run1(params(RecurrentCell::kSimple, {bw}, RecurrentDirection::kReverse), {{3, 1}}, {x}), b, 1e-6);
  // Bidirectional: row t = [forward h_t, backward h_t]; the last states are forward's step 2 and
  // backward's step 0.
  EXPECT_VALUES_NEAR(run1(params(RecurrentCell::kSimple, {fw, bw}, RecurrentDirection::kBidirectional), {{3, 1}}, {x}),
                     (std::vector<double>{f[0], b[0], f[1], b[1], f[2], b[2]}), 1e-6);
  EXPECT_VALUES_NEAR(run1(params(RecurrentCell::kSimple, {fw, bw}, RecurrentDirection::kBidirectional,
                                 RecurrentOutput::kLastHidden),
                          {{3, 1}}, {x}),
                     (std::vector<double>{f[2], b[0]}), 1e-6);
  // Keras merge modes join the directions element-wise: one column per step.
  auto merged = [&](RecurrentMerge m, RecurrentOutput out) {
    auto p = params(RecurrentCell::kSimple, {fw, bw}, RecurrentDirection::kBidirectional, out);
    p.merge = m;
    return run1(p, {{3, 1}}, {x});
  };
  EXPECT_VALUES_NEAR(merged(RecurrentMerge::kSum, RecurrentOutput::kSequence),
                     (std::vector<double>{f[0] + b[0], f[1] + b[1], f[2] + b[2]}), 1e-6);
  EXPECT_VALUES_NEAR(merged(RecurrentMerge::kMultiply, RecurrentOutput::kSequence),
                     (std::vector<double>{f[0] * b[0], f[1] * b[1], f[2] * b[2]}), 1e-6);
  EXPECT_VALUES_NEAR(merged(RecurrentMerge::kAverage, RecurrentOutput::kLastHidden),
                     (std::vector<double>{(f[2] + b[0]) / 2}), 1e-6);
}

TEST(Recurrent, InitialStatesFromConstantsAndInputs) {
  const std::vector<float> x{0.5f, -1.0f};
  RecurrentWeights w = scalar_weights({0.5f, -0.3f, 0.8f, 0.2f}, {0.1f, 0.4f, -0.6f, 0.3f}, {0, 0, 0, 0});
  auto expected = [&](double h, double c) {
    for (float xt : x) {
      const double i = sig(0.5 * xt + 0.1 * h), f = sig(-0.3 * xt + 0.4 * h);
      const double g = std::tanh(0.8 * xt - 0.6 * h), o = sig(0.2 * xt + 0.3 * h);
      c = f * c + i * g;
      h = o * std::tanh(c);
    }
    return std::vector<double>{h};
  };
  auto p = params(RecurrentCell::kLstm, {w}, RecurrentDirection::kForward, RecurrentOutput::kLastHidden);
  p.initial_state = RecurrentInitialState::kInputs;
  EXPECT_VALUES_NEAR(run1(p, {{2, 1}, {1}, {1}}, {x, {0.7f}, {-1.2f}}), expected(0.7, -1.2), 1e-6);
  p.initial_state = RecurrentInitialState::kConstant;
  p.directions[0].initial_h = W({1}, {-0.3f});
  p.directions[0].initial_c = W({1}, {2.0f});
  EXPECT_VALUES_NEAR(run1(p, {{2, 1}}, {x}), expected(-0.3, 2.0), 1e-6);
}

TEST(Recurrent, ShapeInferenceRefusesInconsistentLayers) {
  const RecurrentWeights w = scalar_weights({0.5f, -0.3f, 0.8f, 0.2f}, {0.1f, 0.4f, -0.6f, 0.3f}, {0, 0, 0, 0});
  auto infer = [](RecurrentParams p, std::vector<Dims> shapes) {
    Graph g = one_node(std::move(p), std::move(shapes));
    infer_shapes(g);
  };
  expect_error([&] { infer(params(RecurrentCell::kLstm, {w}), {{3, 2}}); }, {"kernel", "expected shape (2, 4)"});
  expect_error([&] { infer(params(RecurrentCell::kLstm, {w}), {{3, 1, 1}}); }, {"{steps, features}"});
  expect_error([&] { infer(params(RecurrentCell::kLstm, {w}, RecurrentDirection::kBidirectional), {{3, 1}}); },
               {"directions", "expected 2"});
  expect_error([&] { infer(params(RecurrentCell::kGru, {w}, RecurrentDirection::kForward, RecurrentOutput::kLastCell), {{3, 1}}); },
               {"only an LSTM has a cell state"});
  auto p = params(RecurrentCell::kLstm, {w});
  p.initial_state = RecurrentInitialState::kInputs;
  expect_error([&] { infer(p, {{3, 1}, {1}}); }, {"expected 3 input(s)"});
  expect_error([&] { infer(p, {{3, 1}, {2}, {1}}); }, {"initial state", "expected (1,)"});
}

}  // namespace
}  // namespace nnd::test
