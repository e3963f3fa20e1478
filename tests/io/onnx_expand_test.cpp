// ONNX Expand that repeats axes (an IR UpSampling in a layout that keeps an unrepeated axis
// last) and the Equal / Where folding of constant shape arithmetic.
#include <string>

#include <gtest/gtest.h>

#include "core/ir/layers.h"
#include "tests/io/onnx_graph_builder.h"

namespace nnd::test {
namespace {

void expect_contains(const std::string& message, const std::string& part) {
  EXPECT_NE(message.find(part), std::string::npos) << "message: " << message << "\nexpected to contain: " << part;
}

TEST(OnnxExpand, RepeatsTwoAxesAroundAKeptOne) {
  OnnxGraph m(13);
  m.input("x", {1, 3, 1}).output("y").ints("shape", {1, 4, 3, 5});
  m.node("Expand", {"x", "shape"}, {"y"});
  const Graph g = m.load();
  int upsamplings = 0;
  for (const Node& n : g.nodes) upsamplings += std::holds_alternative<UpSamplingParams>(n.params);
  EXPECT_EQ(upsamplings, 1);
  expect_outputs(g, 2, [](size_t, const std::vector<float>& x) {
    std::vector<float> y;
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t c = 0; c < 4; ++c)
        for (int64_t h = 0; h < 3; ++h)
          for (int64_t w = 0; w < 5; ++w) y.push_back(x[static_cast<size_t>(b * 3 + h)]);
    return y;
  });
}

TEST(OnnxExpand, RepeatingEveryAxisIsRefused) {
  OnnxGraph m(13);
  m.input("x", {1, 1}).output("y").ints("shape", {1, 2, 3});
  m.node("Expand", {"x", "shape"}, {"y"}, "/Expand");
  expect_contains(m.refusal(), "node '/Expand' (Expand): Expand to [1, 2, 3] repeats every non-batch axis");
}

TEST(OnnxExpand, EqualAndWhereFoldOnConstants) {
  OnnxGraph m(13);
  m.input("x", {3}).output("y").ints("p", {1, 2, 3}).ints("q", {1, 0, 3});
  m.floats("a", {3}, {10.0f, 20.0f, 30.0f}).floats("b", {3}, {-1.0f, -2.0f, -3.0f});
  m.node("Equal", {"p", "q"}, {"c"});
  m.node("Where", {"c", "a", "b"}, {"w"});
  m.node("Add", {"x", "w"}, {"y"});
  const Graph g = m.load();
  expect_outputs(g, 2, [](size_t, const std::vector<float>& x) {
    const float w[3] = {10.0f, -2.0f, 30.0f};
    std::vector<float> y = x;
    for (size_t i = 0; i < y.size(); ++i) y[i] += w[i % 3];
    return y;
  });
}

// PyTorch's x.expand(-1, 3) as ONNX: Where(Equal(shape, [-1, 3]), [1, 1], shape). The batch size is
// at least 1, so it is not -1 (and the batch equals itself): the comparison folds.
TEST(OnnxExpand, ComparingTheBatchSizeWithANumberBelowOneFolds) {
  OnnxGraph m(13);
  m.input("x", {3}).output("y").ints("want", {-1, 3}).ints("one", {1, 1});
  m.node("Shape", {"x"}, {"s"});
  m.node("Equal", {"s", "want"}, {"c"});
  m.node("Equal", {"s", "s"}, {"same"});
  m.node("Where", {"c", "one", "s"}, {"shape0"});
  m.node("Where", {"same", "shape0", "one"}, {"shape"});
  m.node("Expand", {"x", "shape"}, {"y"});
  const Graph g = m.load();
  expect_outputs(g, 3, [](size_t, const std::vector<float>& x) { return x; });
}

TEST(OnnxExpand, ComparingTheBatchSizeWithAPositiveNumberIsRefused) {
  OnnxGraph m(13);
  m.input("x", {3}).output("y").ints("want", {4, 3}).ints("one", {1, 1});
  m.node("Shape", {"x"}, {"s"});
  m.node("Equal", {"s", "want"}, {"c"}, "/Equal");
  m.node("Where", {"c", "one", "s"}, {"shape"});
  m.node("Expand", {"x", "shape"}, {"y"});
  expect_contains(m.refusal(), "node '/Equal' (Equal): comparing the batch size with 4 cannot be folded at load time");
}

TEST(OnnxExpand, WhereOnAComputedTensorIsRefused) {
  OnnxGraph m(13);
  m.input("x", {3}).output("y").ints("c", {1, 0, 1}).floats("b", {3}, {0.0f, 0.0f, 0.0f});
  m.node("Where", {"c", "x", "b"}, {"y"}, "/Where");
  expect_contains(m.refusal(), "node '/Where' (Where): X (input 'x') must be a constant");
}

}  // namespace
}  // namespace nnd::test
