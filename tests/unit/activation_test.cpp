// Activation functions and layers, Softmax, normalisation.
#include <limits>

#include "core/ref/activation_math.h"
#include "tests/unit/test_util.h"

namespace nnd::test {
namespace {

std::vector<float> act(ActivationKind k, const std::vector<float>& x) {
  ActivationParams p;
  p.activation = k;
  return run1(p, {{static_cast<int64_t>(x.size())}}, {x});
}

double at(ActivationKind k, double x) { return act(k, {static_cast<float>(x)})[0]; }

TEST(Activation, ValuesAtPoints) {
  using K = ActivationKind;
  const double e = std::exp(1.0);
  EXPECT_NEAR(at(K::kLinear, -3.5), -3.5, 1e-7);
  EXPECT_NEAR(at(K::kRelu, -2), 0, 1e-7);
  EXPECT_NEAR(at(K::kRelu, 2), 2, 1e-7);
  EXPECT_NEAR(at(K::kRelu6, 7), 6, 1e-7);
  EXPECT_NEAR(at(K::kRelu6, 5), 5, 1e-7);
  EXPECT_NEAR(at(K::kLeakyRelu, -2), -0.4, 1e-7);
  EXPECT_NEAR(at(K::kSigmoid, 1), e / (1 + e), 1e-7);
  EXPECT_NEAR(at(K::kHardSigmoidK2, 1), 0.7, 1e-7);
  EXPECT_NEAR(at(K::kHardSigmoidK2, 2), 0.9, 1e-7);
  EXPECT_NEAR(at(K::kHardSigmoidK2, 3), 1.0, 1e-7);
  EXPECT_NEAR(at(K::kHardSigmoidK3, 1), 4.0 / 6, 1e-7);
  EXPECT_NEAR(at(K::kHardSigmoidK3, 2), 5.0 / 6, 1e-7);
  EXPECT_NEAR(at(K::kHardSigmoidK3, -2.6), 0.4 / 6, 1e-7);
  EXPECT_NEAR(at(K::kHardSigmoidK2, -2.6), 0, 1e-7);
  EXPECT_NEAR(at(K::kHardSwish, 1), 4.0 / 6, 1e-7);
  EXPECT_NEAR(at(K::kHardSwish, -1), -2.0 / 6, 1e-7);
  EXPECT_NEAR(at(K::kHardSwish, 4), 4, 1e-7);
  EXPECT_NEAR(at(K::kTanh, 0.5), (e - 1) / (e + 1), 1e-7);
  EXPECT_NEAR(at(K::kSoftsign, 3), 0.75, 1e-7);
  EXPECT_NEAR(at(K::kSoftsign, -1), -0.5, 1e-7);
  EXPECT_NEAR(at(K::kSoftplus, 0), std::log(2.0), 1e-7);
  EXPECT_NEAR(at(K::kSoftplus, 1), std::log(1 + e), 1e-7);
  EXPECT_NEAR(at(K::kElu, -1), 1 / e - 1, 1e-7);
  EXPECT_NEAR(at(K::kElu, 2), 2, 1e-7);
  EXPECT_NEAR(at(K::kSelu, 1), 1.0507009873554805, 1e-7);
  EXPECT_NEAR(at(K::kSelu, -1), -1.1113307378125628, 1e-7);
  EXPECT_NEAR(at(K::kSwish, 1), e / (1 + e), 1e-7);
  EXPECT_NEAR(at(K::kGeluErf, 1), 0.8413447460685429, 1e-7);
  EXPECT_NEAR(at(K::kGeluErf, -1), -0.15865525393145707, 1e-7);
  EXPECT_NEAR(at(K::kGeluTanh, 1), 0.8411919906082768, 1e-7);
  EXPECT_NEAR(at(K::kGeluTanh, -1), -0.15880800939172324, 1e-7);
  EXPECT_NEAR(at(K::kExponential, 2), e * e, 1e-6);
  EXPECT_NEAR(at(K::kMish, 1), 0.8650983882673103, 1e-7);
  EXPECT_NEAR(at(K::kMish, -1), -0.3034014613392426, 1e-7);
}

TEST(Activation, LargeMagnitudesStayFinite) {
  using K = ActivationKind;
  struct Case {
    K k;
    double at_minus, at_plus;
  };
  const Case cases[] = {{K::kSigmoid, 0, 1},
                        {K::kSoftplus, 0, 1e30},
                        {K::kElu, -1, 1e30},
                        {K::kSelu, -1.0507009873554805 * 1.6732632423543772, 1.0507009873554805 * 1e30},
                        {K::kSwish, 0, 1e30},
                        {K::kMish, 0, 1e30},
                        {K::kGeluErf, 0, 1e30},
                        {K::kGeluTanh, 0, 1e30},
                        {K::kTanh, -1, 1},
                        {K::kSoftsign, -1, 1},
                        {K::kHardSigmoidK2, 0, 1},
                        {K::kHardSigmoidK3, 0, 1},
                        {K::kHardSwish, 0, 1e30}};
  for (const Case& c : cases) {
    const auto y = act(c.k, {-1e30f, -1000.f, 1000.f, 1e30f});
    for (float v : y) EXPECT_TRUE(std::isfinite(v)) << activation_name(c.k) << " gave " << v;
    EXPECT_NEAR(y[0], c.at_minus, 1e-6 * std::max(1.0, std::fabs(c.at_minus))) << activation_name(c.k);
    EXPECT_NEAR(y[3], c.at_plus, 1e-6 * std::max(1.0, std::fabs(c.at_plus))) << activation_name(c.k);
  }
  EXPECT_NEAR(at(K::kSoftplus, 1000), 1000, 1e-4);
  EXPECT_NEAR(at(K::kSoftplus, -50), std::exp(-50.0), 1e-7 * std::exp(-50.0));
  EXPECT_NEAR(ref::sigmoid(-745), 0, 1e-300);
  EXPECT_TRUE(std::isfinite(ref::softplus(-1e308)) && std::isfinite(ref::softplus(1e308)));
}

TEST(Activation, SoftmaxAndLogSoftmaxLastAxisLargeValues) {
  ActivationParams p;
  p.activation = ActivationKind::kSoftmax;
  auto y = run1(p, {{2, 3}}, {{1000, 1001, 1002, -5, -5, -5}});
  const double z = 1 + std::exp(1.0) + std::exp(2.0);
  EXPECT_VALUES_NEAR(y, (std::vector<double>{1 / z, std::exp(1.0) / z, std::exp(2.0) / z, 1 / 3., 1 / 3., 1 / 3.}),
                     1e-6);
  p.activation = ActivationKind::kLogSoftmax;
  y = run1(p, {{3}}, {{1, 2, 3}});
  EXPECT_VALUES_NEAR(y, (std::vector<double>{-2 - std::log(z) + 2, -1 - std::log(z) + 2, -std::log(z) + 2}), 1e-6);
}

TEST(Softmax, NonLastAxis) {
  SoftmaxParams p;
  p.keras_axis = 1;  // first per-sample axis of (2, 3)
  auto y = run1(p, {{2, 3}}, {{0, 1, 2, 1, 1, 0}});
  const double a = 1 / (1 + std::exp(1.0)), b = 1 - a, c = 1 / (1 + std::exp(2.0)), d = 1 - c;
  // column 0: (0, 1); column 1: (1, 1); column 2: (2, 0)
  EXPECT_VALUES_NEAR(y, (std::vector<double>{a, 0.5, d, b, 0.5, c}), 1e-6);
  p.keras_axis = -2;
  auto y2 = run1(p, {{2, 3}}, {{0, 1, 2, 1, 1, 0}});
  EXPECT_VALUES_NEAR(y2, y, 0);
}

TEST(ReluLayer, KerasClippingOrder) {
  ReluParams p;
  p.max_value = 6;
  p.negative_slope = 0.5;
  p.threshold = 2;
  // x > 2: clip(x, 0, 6); x <= 2: -0.5 * (2 - x); x == threshold gives 0 as in Keras.
  auto y = run1(p, {{6}}, {{-1, 1, 2, 3, 6, 9}});
  EXPECT_VALUES_NEAR(y, (std::vector<double>{-1.5, -0.5, 0, 3, 6, 6}), 1e-7);
  ReluParams leaky;
  leaky.negative_slope = 0.3;
  y = run1(leaky, {{3}}, {{-2, 0, 5}});
  EXPECT_VALUES_NEAR(y, (std::vector<double>{-0.6, 0, 5}), 1e-7);
  ReluParams thr;
  thr.threshold = 1.5;
  y = run1(thr, {{4}}, {{-3, 1, 1.5, 2}});
  EXPECT_VALUES_NEAR(y, (std::vector<double>{0, 0, 0, 2}), 1e-7);
  ReluParams maxonly;
  maxonly.max_value = 1;
  y = run1(maxonly, {{4}}, {{-3, 0.5, 1, 2}});
  EXPECT_VALUES_NEAR(y, (std::vector<double>{0, 0.5, 1, 1}), 1e-7);
  ReluParams slope_max;
  slope_max.max_value = 1;
  slope_max.negative_slope = 0.1f;
  y = run1(slope_max, {{3}}, {{-3, 0.5, 2}});
  EXPECT_VALUES_NEAR(y, (std::vector<double>{-0.3, 0.5, 1}), 1e-7);
}

TEST(EluLayers, AlphaThresholdedPRelu) {
  EluParams e;
  e.alpha = 0.5;
  auto y = run1(e, {{3}}, {{-1, 0, 2}});
  EXPECT_VALUES_NEAR(y, (std::vector<double>{0.5 * (std::exp(-1.0) - 1), 0, 2}), 1e-7);
  y = run1(e, {{1}}, {{-1e30f}});
  EXPECT_NEAR(y[0], -0.5, 1e-7);
  ThresholdedReluParams t;
  t.theta = 1;
  y = run1(t, {{4}}, {{-1, 1, 1.5, 0.5}});
  EXPECT_VALUES_NEAR(y, (std::vector<double>{0, 0, 1.5, 0}), 1e-7);
  // PReLU with shared axes 1 and 2 on (2, 2, 3): alpha (1, 1, 3).
  PReluParams pr;
  pr.alpha = W({1, 1, 3}, {0.1f, 0.2f, 0.3f});
  std::vector<float> x(12, -1.f);
  x[4] = 7;
  y = run1(pr, {{2, 2, 3}}, {x});
  EXPECT_VALUES_NEAR(y, (std::vector<double>{-0.1, -0.2, -0.3, -0.1, 7, -0.3, -0.1, -0.2, -0.3, -0.1, -0.2, -0.3}),
                     1e-6);
  // Unshared: alpha has the full shape.
  pr.alpha = W({2, 2}, {1, 2, 3, 4});
  y = run1(pr, {{2, 2}}, {{-1, -1, -1, 5}});
  EXPECT_VALUES_NEAR(y, (std::vector<double>{-1, -2, -3, 5}), 1e-7);
}

TEST(Normalization, BatchNormLastAndMiddleAxis) {
  BatchNormParams p;
  p.epsilon = 0.01;
  p.gamma = W({2}, {2, 3});
  p.beta = W({2}, {1, -1});
  p.moving_mean = W({2}, {0.5f, -2});
  p.moving_variance = W({2}, {3.99f, 0.24f});
  auto y = run1(p, {{2, 2}}, {{0.5f, 0, 4.5f, 1}});
  // ch0: (x - 0.5) / 2 * 2 + 1; ch1: (x + 2) / 0.5 * 3 - 1
  EXPECT_VALUES_NEAR(y, (std::vector<double>{1, 11, 5, 17}), 1e-6);
  p.keras_axis = 1;  // first per-sample axis of (2, 2)
  y = run1(p, {{2, 2}}, {{0.5f, 0, 4.5f, 1}});
  EXPECT_VALUES_NEAR(y, (std::vector<double>{1, 0.5, 38, 17}), 1e-6);
}

TEST(Normalization, LayerNormLastAxisAndTwoAxes) {
  LayerNormParams p;
  p.keras_axes = {-1};
  p.epsilon = 1e-3;
  p.gamma = W({4}, {1, 2, 1, 1});
  p.beta = W({4}, {0, 0, 0, 10});
  auto y = run1(p, {{4}}, {{1, 2, 3, 6}});
  // mean 3, var (4 + 1 + 0 + 9) / 4 = 3.5
  const double s = std::sqrt(3.5 + 1e-3);
  EXPECT_VALUES_NEAR(y, (std::vector<double>{-2 / s, -2 / s, 0, 3 / s + 10}), 1e-6);
  // Axes (1, 3) of (2, 3, 2) per sample -> keras axes 2 and 3 (batch counted); per row of axis 0
  // normalise its 3x2 block; gamma (3, 2).
  LayerNormParams q;
  q.keras_axes = {3, 2};
  q.epsilon = 0;
  q.gamma = Iota({3, 2});
  q.beta = W({3, 2}, std::vector<float>(6, 0.f));
  const auto x = seq(12);
  y = run1(q, {{2, 3, 2}}, {x});
  std::vector<double> e;
  for (int r = 0; r < 2; ++r) {
    double m = 0, v = 0;
    for (int i = 0; i < 6; ++i) m += x[r * 6 + i] / 6.0;
    for (int i = 0; i < 6; ++i) v += (x[r * 6 + i] - m) * (x[r * 6 + i] - m) / 6.0;
    for (int i = 0; i < 6; ++i) e.push_back((x[r * 6 + i] - m) / std::sqrt(v) * (i + 1));
  }
  EXPECT_VALUES_NEAR(y, e, 1e-6);
}

TEST(Normalization, LayerNormNonContiguousAxes) {
  // (2, 2, 2) normalised over per-sample axes 0 and 2: groups are the positions of axis 1.
  LayerNormParams p;
  p.keras_axes = {1, 3};
  p.epsilon = 0;
  auto y = run1(p, {{2, 2, 2}}, {{1, 10, 3, 20, 5, 30, 7, 40}});
  // group axis1=0: {1, 3, 5, 7} at flat 0,1,4,5 -> wait: flat index (a, b, c) = 4a + 2b + c.
  // b=0: flat 0,1,4,5 = {1, 10, 5, 30}; b=1: flat 2,3,6,7 = {3, 20, 7, 40}
  auto norm = [](std::vector<double> v) {
    double m = 0, s = 0;
    for (double x : v) m += x / v.size();
    for (double x : v) s += (x - m) * (x - m) / v.size();
    for (double& x : v) x = (x - m) / std::sqrt(s);
    return v;
  };
  const auto g0 = norm({1, 10, 5, 30}), g1 = norm({3, 20, 7, 40});
  EXPECT_VALUES_NEAR(y, (std::vector<double>{g0[0], g0[1], g1[0], g1[1], g0[2], g0[3], g1[2], g1[3]}), 1e-6);
}

}  // namespace
}  // namespace nnd::test
