// ONNX ReduceMean / ReduceMax / ReduceMin / ReduceSum (and ReduceL1 / ReduceL2 / ReduceSumSquare,
// which sum |x| or x·x) over any set of non-batch axes: a Dense with
// one unit when the reduced axes are innermost in memory, else global pooling on a view with the
// reduced axes first. Checked against plain index arithmetic in both engines; and the refusals.
#include <algorithm>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "core/ir/layers.h"
#include "tests/io/onnx_graph_builder.h"

namespace nnd::test {
namespace {

enum class Op { kSum, kMean, kMax, kMin, kL1, kL2, kSumSquare };

const char* op_name(Op op) {
  switch (op) {
    case Op::kSum: return "ReduceSum";
    case Op::kMean: return "ReduceMean";
    case Op::kMax: return "ReduceMax";
    case Op::kMin: return "ReduceMin";
    case Op::kL1: return "ReduceL1";
    case Op::kL2: return "ReduceL2";
    case Op::kSumSquare: return "ReduceSumSquare";
  }
  return "";
}

// `op` of x (C order, dims = batch + `dims`) over ONNX `axes`; C order of the result, which
// keepdims does not change.
std::vector<float> reduce(const std::vector<float>& x, std::vector<int64_t> dims, const std::vector<int64_t>& axes, Op op) {
  dims.insert(dims.begin(), static_cast<int64_t>(x.size()) / count_of(Dims(dims)));
  std::vector<bool> reduced(dims.size(), false);
  const auto rank = static_cast<int64_t>(dims.size());
  for (int64_t a : axes) reduced[static_cast<size_t>(a < 0 ? a + rank : a)] = true;
  std::vector<int64_t> out_dims = dims, stride(dims.size(), 1), out_stride(dims.size(), 1);
  for (size_t a = 0; a < dims.size(); ++a) {
    if (reduced[a]) out_dims[a] = 1;
  }
  for (size_t a = dims.size() - 1; a > 0; --a) {
    stride[a - 1] = stride[a] * dims[a];
    out_stride[a - 1] = out_stride[a] * out_dims[a];
  }
  const int64_t out_n = count_of(Dims(out_dims));
  const double start = op == Op::kMax ? -std::numeric_limits<double>::infinity()
                       : op == Op::kMin ? std::numeric_limits<double>::infinity()
                                        : 0.0;
  std::vector<double> acc(static_cast<size_t>(out_n), start);
  int64_t count = 1;
  for (size_t a = 0; a < dims.size(); ++a) count *= reduced[a] ? dims[a] : 1;
  for (size_t i = 0; i < x.size(); ++i) {
    int64_t o = 0;
    for (size_t a = 0; a < dims.size(); ++a) {
      const int64_t idx = static_cast<int64_t>(i) / stride[a] % dims[a];
      if (!reduced[a]) o += idx * out_stride[a];
    }
    double& v = acc[static_cast<size_t>(o)];
    const double xi = x[i];
    switch (op) {
      case Op::kMax: v = std::max(v, xi); break;
      case Op::kMin: v = std::min(v, xi); break;
      case Op::kL1: v += std::fabs(xi); break;
      case Op::kL2: case Op::kSumSquare: v += xi * xi; break;
      default: v += xi;
    }
  }
  std::vector<float> y;
  for (double v : acc) {
    y.push_back(static_cast<float>(op == Op::kMean ? v / static_cast<double>(count) : op == Op::kL2 ? std::sqrt(v) : v));
  }
  return y;
}

void expect_contains(const std::string& message, const std::string& part) {
  EXPECT_NE(message.find(part), std::string::npos) << "message: " << message << "\nexpected to contain: " << part;
}

int count_kind(const Graph& g, const char* kind) {
  int n = 0;
  for (const Node& node : g.nodes) n += std::string(layer_kind_name(node.params)) == kind;
  return n;
}

// A graph reducing its input (N, dims...) over `axes`; with `conv_first` a 1x1 conv (identity
// weights) first, which leaves the tensor channels last in memory as PyTorch models have it.
OnnxGraph reducer(Op op, const std::vector<int64_t>& dims, const std::vector<int64_t>& axes, bool keepdims,
                  bool conv_first = false, int opset = 13) {
  OnnxGraph m(opset);
  m.input("x", dims).output("y");
  std::string in = "x";
  if (conv_first) {
    const int64_t c = dims[0];
    std::vector<float> eye(static_cast<size_t>(c * c), 0.0f);
    for (int64_t k = 0; k < c; ++k) eye[static_cast<size_t>(k * (c + 1))] = 1.0f;
    std::vector<int64_t> wdims{c, c};
    wdims.insert(wdims.end(), dims.size() - 1, 1);
    m.floats("w", wdims, eye);
    m.node("Conv", {"x", "w"}, {"c"}, "/conv/Conv");
    in = "c";
  }
  std::vector<std::string> inputs{in};
  const bool axes_input = op == Op::kSum ? opset >= 13 : opset >= 18;
  if (axes_input) {
    m.ints("axes", axes);
    inputs.push_back("axes");
  }
  auto& n = m.node(op_name(op), inputs, {"y"}, "/Reduce");
  if (!axes_input) OnnxGraph::attr(n, "axes", axes);
  OnnxGraph::attr(n, "keepdims", int64_t{keepdims ? 1 : 0});
  return m;
}

void expect_reduction(Op op, const std::vector<int64_t>& dims, const std::vector<int64_t>& axes, bool keepdims,
                      bool conv_first = false) {
  SCOPED_TRACE(testing::Message() << op_name(op) << (keepdims ? " keepdims" : "") << (conv_first ? " after a conv" : ""));
  const Graph g = reducer(op, dims, axes, keepdims, conv_first).load();
  expect_outputs(g, 2, [&](size_t, const std::vector<float>& x) { return reduce(x, dims, axes, op); });
}

TEST(OnnxReduce, ChannelSumOfAChannelsLastTensorIsADenseWithoutPermute) {
  // CBAM's channel pooling: x.sum(dim=1, keepdim=True) on a conv output, stored (N, H, W, C).
  const Graph g = reducer(Op::kSum, {5, 3, 4}, {1}, true, true).load();
  EXPECT_EQ(count_kind(g, "Dense"), 1);
  EXPECT_EQ(count_kind(g, "Permute"), 1);  // only the conv's input, from NCHW
  for (bool keepdims : {true, false}) {
    expect_reduction(Op::kSum, {5, 3, 4}, {1}, keepdims, true);
    expect_reduction(Op::kMean, {5, 3, 4}, {1}, keepdims, true);
  }
}

TEST(OnnxReduce, ChannelMaxAndMinPoolAView) {
  for (Op op : {Op::kMax, Op::kMin}) {
    for (bool keepdims : {true, false}) {
      expect_reduction(op, {5, 3, 4}, {1}, keepdims, true);
      expect_reduction(op, {5, 3, 4}, {1}, keepdims, false);
    }
  }
}

TEST(OnnxReduce, AnyAxesOfAnyRank) {
  for (Op op : {Op::kSum, Op::kMean, Op::kMax, Op::kMin, Op::kL1, Op::kL2, Op::kSumSquare}) {
    expect_reduction(op, {3, 4, 5}, {2}, false);          // a middle axis
    expect_reduction(op, {3, 4, 5}, {1, 3}, false);       // two axes apart
    expect_reduction(op, {3, 4, 5}, {1, 2, 3}, true);     // everything but the batch
    expect_reduction(op, {3, 4, 5}, {-1, -2}, true);      // negative axes, innermost
    expect_reduction(op, {2, 3, 4, 5}, {2, 4}, false);    // rank 5
    expect_reduction(op, {7}, {1}, true);                 // rank 2
    expect_reduction(op, {4, 6}, {2}, false);             // rank 3, the last axis
  }
}

TEST(OnnxReduce, SpatialMeanStaysAGlobalPool) {
  const Graph g = reducer(Op::kMean, {5, 3, 4}, {2, 3}, true, true).load();
  EXPECT_EQ(count_kind(g, "GlobalPool"), 1);
  EXPECT_EQ(count_kind(g, "Permute"), 1);  // only the conv's input; (N, 1, 1, C) -> (N, C, 1, 1) is a Reshape
  expect_reduction(Op::kMean, {5, 3, 4}, {2, 3}, true, true);
}

TEST(OnnxReduce, AxesAttributeBeforeOpset13) {
  const Graph g = reducer(Op::kSum, {3, 4}, {1}, false, false, 11).load();
  expect_outputs(g, 2, [](size_t, const std::vector<float>& x) { return reduce(x, {3, 4}, {1}, Op::kSum); });
}

TEST(OnnxReduce, L2NormalizeAsPyTorchExportsIt) {
  // F.normalize(x, dim=1): x / max(ReduceL2(x, axes 1, keepdims), eps), the divisor Expanded.
  OnnxGraph m(13);
  m.input("x", {4, 3}).output("y").scalar("eps", 1e-12f).ints("shape", {1, 4, 3});
  auto& l2 = m.node("ReduceL2", {"x"}, {"n"}, "/ReduceL2");
  OnnxGraph::attr(l2, "axes", std::vector<int64_t>{1});
  m.node("Clip", {"n", "eps"}, {"c"}, "/Clip");
  m.node("Expand", {"c", "shape"}, {"e"}, "/Expand");
  m.node("Div", {"x", "e"}, {"y"}, "/Div");
  const Graph g = m.load();
  expect_outputs(g, 2, [](size_t, const std::vector<float>& x) {
    const std::vector<float> n = reduce(x, {4, 3}, {1}, Op::kL2);
    std::vector<float> y(x.size());
    for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] / std::max(n[i / 12 * 3 + i % 3], 1e-12f);
    return y;
  });
}

TEST(OnnxPow, ExponentsThatAreProductsOrRoots) {
  for (float e : {0.5f, 1.0f, 2.0f, 3.0f, -1.0f, -0.5f, -2.0f}) {
    SCOPED_TRACE(testing::Message() << "exponent " << e);
    OnnxGraph m(13);
    m.input("x", {5}).output("y").scalar("e", e).scalar("q", 0.25f);
    m.node("Abs", {"x"}, {"b"});
    m.node("Add", {"b", "q"}, {"a"});  // > 0: no infinities for the negative exponents
    m.node("Pow", {"a", "e"}, {"y"});
    expect_outputs(m.load(), 2, [e](size_t, const std::vector<float>& x) {
      std::vector<float> y;
      for (float v : x) y.push_back(static_cast<float>(std::pow(std::fabs(static_cast<double>(v)) + 0.25, e)));
      return y;
    });
  }
  OnnxGraph m(13);
  m.input("x", {5}).output("y").scalar("e", 1.5f);
  m.node("Pow", {"x", "e"}, {"y"}, "/Pow");
  expect_contains(m.refusal(), "node '/Pow' (Pow): the exponent 1.500000 (only 0.5, 1, 2, 3 and their negatives");
}

TEST(OnnxReduce, Refusals) {
  expect_contains(reducer(Op::kMean, {3, 4}, {0}, true).refusal(),
                  "node '/Reduce' (ReduceMean): reducing over the batch axis is not supported");
  expect_contains(reducer(Op::kMax, {3, 4}, {1, 2}, false).refusal(),
                  "axes [1, 2]: the result would have no axis besides the batch");
  OnnxGraph all(13);
  all.input("x", {3}).output("y");
  all.node("ReduceMean", {"x"}, {"y"}, "/all");
  expect_contains(all.refusal(), "reducing over every axis (the batch included) is not supported");
}

}  // namespace
}  // namespace nnd::test
