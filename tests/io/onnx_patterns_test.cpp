// The operator chains the ONNX loader lowers as one IR layer (core/io/onnx_patterns.h): the
// variants other exporters emit load and compute the function; any deviation is refused with a
// message naming the node at fault, never lowered to something else.
#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "core/ir/layers.h"
#include "tests/io/onnx_graph_builder.h"

namespace nnd::test {
namespace {

float gelu(float x) { return static_cast<float>(0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)))); }
float softsign(float x) { return x / (1.0f + std::fabs(x)); }

std::vector<float> map(const std::vector<float>& x, float (*f)(float)) {
  std::vector<float> y;
  for (float v : x) y.push_back(f(v));
  return y;
}

// The only layer of `g`, which must be an Activation of `kind`.
void expect_single_activation(const Graph& g, ActivationKind kind) {
  ASSERT_EQ(g.nodes.size(), 1u);
  const auto* a = std::get_if<ActivationParams>(&g.nodes[0].params);
  ASSERT_NE(a, nullptr) << layer_kind_name(g.nodes[0].params);
  EXPECT_EQ(a->activation, kind);
}

void expect_contains(const std::string& message, const std::string& part) {
  EXPECT_NE(message.find(part), std::string::npos) << "message: " << message << "\nexpected to contain: " << part;
}

// PyTorch's form: Div(x, sqrt 2) -> Erf -> Add 1 -> Mul x -> Mul 0.5, scoped node names.
OnnxGraph torch_gelu(float divisor = 1.4142135f) {
  OnnxGraph m(13);
  m.input("x", {4, 5}).output("y").scalar("sqrt2", divisor).scalar("one", 1.0f).scalar("half", 0.5f);
  m.node("Div", {"x", "sqrt2"}, {"d"}, "/mlp/act/Div");
  m.node("Erf", {"d"}, {"e"}, "/mlp/act/Erf");
  m.node("Add", {"e", "one"}, {"a"}, "/mlp/act/Add");
  m.node("Mul", {"x", "a"}, {"m"}, "/mlp/act/Mul");
  m.node("Mul", {"m", "half"}, {"y"}, "/mlp/act/Mul_1");
  return m;
}

TEST(OnnxPatterns, TorchGeluIsOneActivationNamedAfterItsScope) {
  const Graph g = torch_gelu().load();
  expect_single_activation(g, ActivationKind::kGeluErf);
  EXPECT_EQ(g.nodes[0].name, "/mlp/act/Gelu");
  EXPECT_EQ(g.nodes[0].source_op, "Gelu");
  expect_outputs(g, 2, [](size_t, const std::vector<float>& x) { return map(x, gelu); });
}

TEST(OnnxPatterns, GeluByOneOverSqrt2WithConstantsOnTheLeftAndHalfFirst) {
  OnnxGraph m(13);
  m.input("x", {6}).output("y").scalar("r", 0.70710677f).scalar("one", 1.0f).scalar("half", 0.5f);
  m.node("Mul", {"r", "x"}, {"d"});
  m.node("Erf", {"d"}, {"e"});
  m.node("Add", {"one", "e"}, {"a"});
  m.node("Mul", {"half", "a"}, {"m"});
  m.node("Mul", {"m", "x"}, {"y"});
  const Graph g = m.load();
  expect_single_activation(g, ActivationKind::kGeluErf);
  EXPECT_EQ(g.nodes[0].name, "Gelu_4");  // unnamed nodes: the function and the last node's index
  expect_outputs(g, 3, [](size_t, const std::vector<float>& x) { return map(x, gelu); });
}

TEST(OnnxPatterns, GeluWithHalfTheInputComputedFirst) {
  OnnxGraph m(13);
  m.input("x", {6}).output("y").scalar("sqrt2", 1.4142135f).scalar("one", 1.0f).scalar("half", 0.5f);
  m.node("Mul", {"x", "half"}, {"h"});  // tf2onnx-style 0.5 * x, before the erf branch
  m.node("Div", {"x", "sqrt2"}, {"d"});
  m.node("Erf", {"d"}, {"e"});
  m.node("Add", {"e", "one"}, {"a"});
  m.node("Mul", {"a", "h"}, {"y"});
  const Graph g = m.load();
  expect_single_activation(g, ActivationKind::kGeluErf);
  expect_outputs(g, 2, [](size_t, const std::vector<float>& x) { return map(x, gelu); });
}

TEST(OnnxPatterns, GeluWithAnotherDivisorIsRefusedNamingTheNode) {
  const std::string e = torch_gelu(1.5f).refusal();
  expect_contains(e, "(Gelu pattern)");
  expect_contains(e, "the divisor (sqrt 2) (input 'sqrt2' of node '/mlp/act/Div') is 1.5, not 1.41421356");
}

TEST(OnnxPatterns, GeluWhoseIntermediateIsReadElsewhereIsRefusedNamingTheReader) {
  OnnxGraph m = torch_gelu();
  m.output("a");  // 1 + erf(...) is also a graph output
  const std::string e = m.refusal();
  expect_contains(e, "node '/mlp/act/Erf' (Erf)");
  expect_contains(e, "not lowered as PyTorch's exact GELU");
  expect_contains(e, "the output 'a' of node '/mlp/act/Add' is read by node '/mlp/act/Mul', the graph output");
}

TEST(OnnxPatterns, GeluWithAComputedOneIsRefused) {
  OnnxGraph m(13);
  m.input("x", {6}).output("y").scalar("sqrt2", 1.4142135f).scalar("half", 0.5f);
  m.node("Div", {"x", "sqrt2"}, {"d"});
  m.node("Erf", {"d"}, {"e"});
  m.node("Add", {"e", "x"}, {"a"});  // erf + x, not erf + 1
  m.node("Mul", {"x", "a"}, {"m"});
  m.node("Mul", {"m", "half"}, {"y"});
  expect_contains(m.refusal(), "the 1 added to erf (input 'x' of node 'Add_2') is not a single constant value");
}

TEST(OnnxPatterns, GeluMultipliedByAnotherTensorIsRefused) {
  OnnxGraph m(13);
  m.input("x", {6}).output("y").scalar("sqrt2", 1.4142135f).scalar("one", 1.0f).scalar("half", 0.5f);
  m.node("Div", {"x", "sqrt2"}, {"d"});
  m.node("Erf", {"d"}, {"e"});
  m.node("Add", {"e", "one"}, {"a"});
  m.node("Mul", {"a", "half"}, {"m"});
  m.node("Mul", {"m", "d"}, {"y"});  // times x / sqrt 2, not x
  const std::string e = m.refusal();
  expect_contains(e, "node 'Erf_1' (Erf): 'Erf' of a computed tensor is not supported");
  expect_contains(e, "not lowered as PyTorch's exact GELU");
}

TEST(OnnxPatterns, GeluOfAConstantFolds) {
  OnnxGraph m(13);
  m.input("x", {3}).output("y").floats("c", {3}, {-1.0f, 0.25f, 2.0f});
  m.scalar("sqrt2", 1.4142135f).scalar("one", 1.0f).scalar("half", 0.5f);
  m.node("Div", {"c", "sqrt2"}, {"d"});
  m.node("Erf", {"d"}, {"e"});
  m.node("Add", {"e", "one"}, {"a"});
  m.node("Mul", {"c", "a"}, {"g"});
  m.node("Mul", {"g", "half"}, {"k"});
  m.node("Add", {"x", "k"}, {"y"});
  const Graph g = m.load();
  expect_outputs(g, 2, [](size_t, const std::vector<float>& x) {
    const float c[3] = {gelu(-1.0f), gelu(0.25f), gelu(2.0f)};
    std::vector<float> y = x;
    for (size_t i = 0; i < y.size(); ++i) y[i] += c[i % 3];
    return y;
  });
}

TEST(OnnxPatterns, SoftsignWithTheOneOnTheLeft) {
  OnnxGraph m(11);
  m.input("x", {2, 3}).output("y").scalar("one", 1.0f);
  m.node("Abs", {"x"}, {"b"}, "/Abs");
  m.node("Add", {"one", "b"}, {"a"}, "/Add");
  m.node("Div", {"x", "a"}, {"y"}, "/Div");
  const Graph g = m.load();
  expect_single_activation(g, ActivationKind::kSoftsign);
  EXPECT_EQ(g.nodes[0].name, "/Softsign");
  expect_outputs(g, 2, [](size_t, const std::vector<float>& x) { return map(x, softsign); });
}

TEST(OnnxPatterns, SoftsignWithAnotherConstantIsRefused) {
  OnnxGraph m(11);
  m.input("x", {4}).output("y").scalar("two", 2.0f);
  m.node("Abs", {"x"}, {"b"});
  m.node("Add", {"b", "two"}, {"a"});
  m.node("Div", {"x", "a"}, {"y"});
  expect_contains(m.refusal(), "the 1 added to |x| (input 'two' of node 'Add_1') is 2, not 1");
}

TEST(OnnxPatterns, AbsDividingAnotherTensorIsNoSoftsignButRunsOpByOp) {
  OnnxGraph m(11);
  m.input("x", {4}).output("y").scalar("one", 1.0f).scalar("three", 3.0f);
  m.node("Mul", {"x", "three"}, {"t"});
  m.node("Abs", {"x"}, {"b"});
  m.node("Add", {"b", "one"}, {"a"});
  m.node("Div", {"t", "a"}, {"y"});
  const Graph g = m.load();
  for (const Node& n : g.nodes) {
    const auto* act = std::get_if<ActivationParams>(&n.params);
    EXPECT_FALSE(act && act->activation == ActivationKind::kSoftsign) << n.name;
  }
  expect_outputs(g, 2, [](size_t, const std::vector<float>& x) {
    std::vector<float> y;
    for (float v : x) y.push_back(3.0f * v / (std::fabs(v) + 1.0f));
    return y;
  });
}

// PyTorch's LayerNorm before opset 17 over `axes` of x (N, 3, 4, 5), with optional variants.
struct LayerNormChain {
  std::vector<int64_t> axes = {-1};
  std::vector<int64_t> var_axes = {-1};
  bool square_by_mul = false;  // Mul(d, d) instead of Pow(d, 2)
  float exponent = 2.0f;
  int64_t keepdims = 1;
  bool gamma_left = false;
  std::vector<int64_t> affine_dims = {5};
  bool extra_reader_of_d = false;

  OnnxGraph build() const {
    OnnxGraph m(13);
    m.input("x", {3, 4, 5}).output("y").scalar("eps", 1e-5f).scalar("p", exponent);
    const int64_t n = count_of(affine_dims);
    std::vector<float> gamma, beta;
    for (int64_t i = 0; i < n; ++i) {
      gamma.push_back(0.5f + 0.1f * static_cast<float>(i % 7));
      beta.push_back(-0.3f + 0.05f * static_cast<float>(i % 5));
    }
    m.floats("gamma", affine_dims, gamma).floats("beta", affine_dims, beta);
    auto& r1 = m.node("ReduceMean", {"x"}, {"mean"}, "/ln/ReduceMean");
    OnnxGraph::attr(r1, "axes", axes);
    m.node("Sub", {"x", "mean"}, {"d"}, "/ln/Sub");
    if (square_by_mul) {
      m.node("Mul", {"d", "d"}, {"sq"}, "/ln/Mul_sq");
    } else {
      m.node("Pow", {"d", "p"}, {"sq"}, "/ln/Pow");
    }
    auto& r2 = m.node("ReduceMean", {"sq"}, {"var"}, "/ln/ReduceMean_1");
    OnnxGraph::attr(r2, "axes", var_axes);
    if (keepdims != 1) OnnxGraph::attr(r2, "keepdims", keepdims);
    m.node("Add", {"eps", "var"}, {"ve"}, "/ln/Add");
    m.node("Sqrt", {"ve"}, {"sd"}, "/ln/Sqrt");
    m.node("Div", {"d", "sd"}, {"q"}, "/ln/Div");
    m.node("Mul", gamma_left ? std::vector<std::string>{"gamma", "q"} : std::vector<std::string>{"q", "gamma"}, {"s"},
           "/ln/Mul");
    m.node("Add", {"s", "beta"}, {"y"}, "/ln/Add_1");
    if (extra_reader_of_d) m.output("d");
    return m;
  }
};

// Reference LayerNorm of x (batch, 3, 4, 5) over the ONNX axes in `norm` (booleans for 1..3),
// with gamma/beta as built above broadcast by numpy rules from `affine_dims`.
std::vector<float> layer_norm_ref(const std::vector<float>& x, const LayerNormChain& c, const bool norm[4]) {
  const int64_t dims[4] = {static_cast<int64_t>(x.size()) / 60, 3, 4, 5};
  std::vector<int64_t> ad(4, 1);
  for (size_t k = 0; k < c.affine_dims.size(); ++k) ad[4 - c.affine_dims.size() + k] = c.affine_dims[k];
  std::vector<float> y(x.size());
  auto flat = [&](const int64_t i[4]) { return ((i[0] * 3 + i[1]) * 4 + i[2]) * 5 + i[3]; };
  int64_t i[4];
  for (i[0] = 0; i[0] < dims[0]; ++i[0])
    for (i[1] = 0; i[1] < 3; ++i[1])
      for (i[2] = 0; i[2] < 4; ++i[2])
        for (i[3] = 0; i[3] < 5; ++i[3]) {
          double sum = 0, sq = 0;
          int64_t cnt = 0, j[4];
          for (j[0] = i[0], j[1] = 0; j[1] < 3; ++j[1])
            for (j[2] = 0; j[2] < 4; ++j[2])
              for (j[3] = 0; j[3] < 5; ++j[3]) {
                bool same = true;
                for (int a = 1; a < 4; ++a) same = same && (norm[a] || j[a] == i[a]);
                if (!same) continue;
                sum += x[static_cast<size_t>(flat(j))];
                ++cnt;
              }
          const double mean = sum / static_cast<double>(cnt);
          for (j[0] = i[0], j[1] = 0; j[1] < 3; ++j[1])
            for (j[2] = 0; j[2] < 4; ++j[2])
              for (j[3] = 0; j[3] < 5; ++j[3]) {
                bool same = true;
                for (int a = 1; a < 4; ++a) same = same && (norm[a] || j[a] == i[a]);
                if (same) sq += (x[static_cast<size_t>(flat(j))] - mean) * (x[static_cast<size_t>(flat(j))] - mean);
              }
          int64_t gi = 0;
          for (int a = 1; a < 4; ++a) gi = gi * ad[static_cast<size_t>(a)] + (ad[static_cast<size_t>(a)] == 1 ? 0 : i[a]);
          const double g = 0.5 + 0.1 * static_cast<double>(gi % 7), b = -0.3 + 0.05 * static_cast<double>(gi % 5);
          const double v = (x[static_cast<size_t>(flat(i))] - mean) / std::sqrt(sq / static_cast<double>(cnt) + 1e-5);
          y[static_cast<size_t>(flat(i))] = static_cast<float>(v * g + b);
        }
  return y;
}

TEST(OnnxPatterns, LayerNormOverTheLastAxisWithSquareByMulAndGammaOnTheLeft) {
  LayerNormChain c;
  c.square_by_mul = true;
  c.gamma_left = true;
  const Graph g = c.build().load();
  ASSERT_EQ(g.nodes.size(), 1u);
  const auto* ln = std::get_if<LayerNormParams>(&g.nodes[0].params);
  ASSERT_NE(ln, nullptr);
  EXPECT_EQ(g.nodes[0].name, "/ln/LayerNormalization");
  EXPECT_FLOAT_EQ(static_cast<float>(ln->epsilon), 1e-5f);
  const bool norm[4] = {false, false, false, true};
  expect_outputs(g, 2, [&](size_t, const std::vector<float>& x) { return layer_norm_ref(x, c, norm); });
}

TEST(OnnxPatterns, LayerNormOverTheChannelAxisOfAChannelsLastTensorMovesNoData) {
  // x -> 1x1 Conv (identity weights: the IR holds it channels last) -> LayerNorm over ONNX axis 1.
  LayerNormChain c;
  c.axes = c.var_axes = {1};
  c.affine_dims = {3, 1, 1};
  std::vector<float> eye(9, 0.0f);
  for (int k = 0; k < 3; ++k) eye[static_cast<size_t>(k * 4)] = 1.0f;
  OnnxGraph fresh(13);
  fresh.input("x_in", {3, 4, 5}).output("y").scalar("eps", 1e-5f).scalar("p", 2.0f);
  fresh.floats("w", {3, 3, 1, 1}, eye);
  std::vector<float> gamma, beta;
  for (int i = 0; i < 3; ++i) {
    gamma.push_back(0.5f + 0.1f * static_cast<float>(i % 7));
    beta.push_back(-0.3f + 0.05f * static_cast<float>(i % 5));
  }
  fresh.floats("gamma", {3, 1, 1}, gamma).floats("beta", {3, 1, 1}, beta);
  fresh.node("Conv", {"x_in", "w"}, {"x"}, "/conv/Conv");
  OnnxGraph::attr(fresh.node("ReduceMean", {"x"}, {"mean"}, "/ln/ReduceMean"), "axes", std::vector<int64_t>{1});
  fresh.node("Sub", {"x", "mean"}, {"d"}, "/ln/Sub");
  fresh.node("Pow", {"d", "p"}, {"sq"}, "/ln/Pow");
  OnnxGraph::attr(fresh.node("ReduceMean", {"sq"}, {"var"}, "/ln/ReduceMean_1"), "axes", std::vector<int64_t>{1});
  fresh.node("Add", {"var", "eps"}, {"ve"}, "/ln/Add");
  fresh.node("Sqrt", {"ve"}, {"sd"}, "/ln/Sqrt");
  fresh.node("Div", {"d", "sd"}, {"q"}, "/ln/Div");
  fresh.node("Mul", {"q", "gamma"}, {"s"}, "/ln/Mul");
  fresh.node("Add", {"beta", "s"}, {"y"}, "/ln/Add_1");
  const Graph g = fresh.load();
  int layer_norms = 0, moves = 0;
  for (const Node& n : g.nodes) {
    if (const auto* ln = std::get_if<LayerNormParams>(&n.params)) {
      ++layer_norms;
      EXPECT_EQ(ln->axes, std::vector<int>{2});  // the channel axis, last in the IR's (H, W, C)
    }
    moves += std::holds_alternative<PermuteParams>(n.params);
  }
  EXPECT_EQ(layer_norms, 1);
  EXPECT_EQ(moves, 2);  // only the conv's input to channels last and the graph output back to NCHW
  const bool norm[4] = {false, true, false, false};
  expect_outputs(g, 2, [&](size_t, const std::vector<float>& x) { return layer_norm_ref(x, c, norm); });
}

TEST(OnnxPatterns, LayerNormWithAComputedScaleKeepsTheMulAsANode) {
  OnnxGraph m(13);
  m.input("x", {3, 4, 5}).output("y").scalar("eps", 1e-5f).scalar("p", 2.0f);
  OnnxGraph::attr(m.node("ReduceMean", {"x"}, {"mean"}), "axes", std::vector<int64_t>{2, 3});
  m.node("Sub", {"x", "mean"}, {"d"});
  m.node("Pow", {"d", "p"}, {"sq"});
  OnnxGraph::attr(m.node("ReduceMean", {"sq"}, {"var"}), "axes", std::vector<int64_t>{-1, -2});
  m.node("Add", {"var", "eps"}, {"ve"});
  m.node("Sqrt", {"ve"}, {"sd"});
  m.node("Div", {"d", "sd"}, {"q"});
  m.node("Mul", {"q", "x"}, {"y"});  // scaled by x itself: not a LayerNorm gamma
  const Graph g = m.load();
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_TRUE(std::holds_alternative<LayerNormParams>(g.nodes[0].params));
  EXPECT_TRUE(std::holds_alternative<MergeParams>(g.nodes[1].params));
  LayerNormChain plain;
  plain.affine_dims = {1};  // the reference's gamma 0.5 / beta -0.3 undone below
  const bool norm[4] = {false, false, true, true};
  expect_outputs(g, 2, [&](size_t, const std::vector<float>& x) {
    std::vector<float> y = layer_norm_ref(x, plain, norm);
    for (size_t i = 0; i < y.size(); ++i) y[i] = (y[i] + 0.3f) / 0.5f * x[i];
    return y;
  });
}

TEST(OnnxPatterns, LayerNormWithDifferentAxesIsRefused) {
  LayerNormChain c;
  c.var_axes = {-2};
  expect_contains(c.build().refusal(),
                  "node '/ln/ReduceMean_1' averages over axes [2], node '/ln/ReduceMean' over [3]");
}

TEST(OnnxPatterns, LayerNormWithAnotherExponentIsRefused) {
  LayerNormChain c;
  c.exponent = 3.0f;
  expect_contains(c.build().refusal(), "the exponent 2 (input 'p' of node '/ln/Pow') is 3, not 2");
}

TEST(OnnxPatterns, LayerNormDroppingTheAveragedAxisIsRefused) {
  LayerNormChain c;
  c.keepdims = 0;
  expect_contains(c.build().refusal(), "node '/ln/ReduceMean_1' drops the averaged axes (keepdims 0)");
}

TEST(OnnxPatterns, LayerNormWhoseCentredInputIsReadElsewhereRunsOpByOp) {
  // Not one LayerNorm (x - mean is a graph output too), so each node lowers alone: the means,
  // Pow(d, 2) as d·d, Sqrt, and the division by a computed tensor.
  LayerNormChain c;
  c.extra_reader_of_d = true;
  const Graph g = c.build().load();
  for (const Node& n : g.nodes) EXPECT_FALSE(std::holds_alternative<LayerNormParams>(n.params)) << n.name;
  const bool norm[4] = {false, false, false, true};
  expect_outputs(g, 2, [&](size_t k, const std::vector<float>& x) {
    if (k == 0) return layer_norm_ref(x, c, norm);
    std::vector<float> d(x.size());
    for (size_t row = 0; row < x.size() / 5; ++row) {
      double mean = 0;
      for (size_t j = 0; j < 5; ++j) mean += x[row * 5 + j] / 5.0;
      for (size_t j = 0; j < 5; ++j) d[row * 5 + j] = static_cast<float>(x[row * 5 + j] - mean);
    }
    return d;
  });
}

}  // namespace
}  // namespace nnd::test
