// Tensors whose batch is not ONNX axis 0: PyTorch's sequence-first layouts ([T, N, E], as
// nn.MultiheadAttention and seq-first RNNs keep them) read by MatMul with a constant B (nn.Linear),
// by element-wise operators, and by Slice, Split and Gather along the other axes. Checked against index arithmetic on both engines, batch 2; and
// the refusals that remain name the node, the operator and the reason.
#include <string>

#include <gtest/gtest.h>

#include "tests/io/onnx_graph_builder.h"

namespace nnd::test {
namespace {

void expect_contains(const std::string& message, const std::string& part) {
  EXPECT_NE(message.find(part), std::string::npos) << "message: " << message << "\nexpected to contain: " << part;
}

constexpr int64_t kT = 3, kF = 4, kU = 5;

std::vector<float> weights(int64_t n, double phase) { return wavy(n, phase); }

// y = Transpose(relu(h) + h * c_t) with h = Transpose(x) · W + b over [T, N, F]: a Linear, a
// bias folded into it, a constant that varies along axis 0 (the time, here a data axis), a merge
// of two computed tensors with the batch on axis 1, and the way back to batch-first.
TEST(OnnxBatchAxis, SequenceFirstLinearAndElementWise) {
  const std::vector<float> w = weights(kF * kU, 0.3), b = weights(kU, 1.1), c = {0.5f, -1.0f, 2.0f};
  OnnxGraph m(13);
  m.input("x", {kT, kF}).floats("w", {kF, kU}, w).floats("b", {kU}, b).floats("c", {kT, 1, 1}, c);
  m.output("y");
  auto& to_tm = m.node("Transpose", {"x"}, {"tm"});
  OnnxGraph::attr(to_tm, "perm", std::vector<int64_t>{1, 0, 2});
  m.node("MatMul", {"tm", "w"}, {"mm"});
  m.node("Add", {"mm", "b"}, {"h"});
  m.node("Relu", {"h"}, {"r"});
  m.node("Mul", {"h", "c"}, {"hc"});
  m.node("Add", {"r", "hc"}, {"s"});
  auto& back = m.node("Transpose", {"s"}, {"y"});
  OnnxGraph::attr(back, "perm", std::vector<int64_t>{1, 0, 2});
  const Graph g = m.load();
  EXPECT_EQ(g.values[static_cast<size_t>(g.outputs[0])].shape, (Dims{kT, kU}));
  expect_outputs(g, 2, [&](size_t, const std::vector<float>& x) {
    std::vector<float> y;
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t t = 0; t < kT; ++t)
        for (int64_t u = 0; u < kU; ++u) {
          double h = b[static_cast<size_t>(u)];
          for (int64_t f = 0; f < kF; ++f) {
            h += static_cast<double>(x[static_cast<size_t>((n * kT + t) * kF + f)]) * w[static_cast<size_t>(f * kU + u)];
          }
          y.push_back(static_cast<float>(std::max(h, 0.0) + h * c[static_cast<size_t>(t)]));
        }
    return y;
  });
}

// x [N, 3, 4] as [3, N, 4] (PyTorch's stacked q, k, v of [3, N, ...]) taken apart along the other
// axes: Split and Gather of axis 0, a Slice of axes 0 and 2 split again, a backward Slice
// (torch.flip) and a strided one of axis 2.
TEST(OnnxBatchAxis, SliceSplitAndGatherAroundTheBatch) {
  OnnxGraph m(13);
  m.input("x", {kT, kF}).ints("zero", {0}).ints("two", {2});
  m.ints("starts", {1, 1}).ints("ends", {3, 4}).ints("axes", {0, 2});
  m.ints("rstart", {-1}).ints("rend", {-9223372036854775807}).ints("rstep", {-1});
  m.ints("sstart", {0}).ints("send", {4}).ints("saxis", {2}).ints("sstep", {2});
  for (const char* y : {"y1", "y2", "y3", "y4"}) m.output(y);
  auto& t = m.node("Transpose", {"x"}, {"tm"});
  OnnxGraph::attr(t, "perm", std::vector<int64_t>{1, 0, 2});
  auto& split = m.node("Split", {"tm"}, {"a", "b", "c"});
  OnnxGraph::attr(split, "axis", int64_t{0});
  m.node("Squeeze", {"a", "zero"}, {"sa"});
  m.node("Gather", {"tm", "two"}, {"g"});  // indices [2]: keeps axis 0 with length 1
  m.node("Squeeze", {"g", "zero"}, {"sg"});
  m.node("Add", {"sa", "sg"}, {"y1"});
  m.node("Slice", {"tm", "starts", "ends", "axes"}, {"s"});  // [2, N, 3]
  auto& halves = m.node("Split", {"s"}, {"s0", "s1"});          // the sliced length decides the parts
  OnnxGraph::attr(halves, "axis", int64_t{0});
  m.node("Add", {"s0", "s1"}, {"ss"});
  m.node("Squeeze", {"ss", "zero"}, {"y2"});
  m.node("Slice", {"tm", "rstart", "rend", "zero", "rstep"}, {"r"});
  m.node("Slice", {"tm", "sstart", "send", "saxis", "sstep"}, {"st"});
  const char* back[][2] = {{"r", "y3"}, {"st", "y4"}};
  for (const auto& [from, to] : back) {
    auto& n = m.node("Transpose", {from}, {to});
    OnnxGraph::attr(n, "perm", std::vector<int64_t>{1, 0, 2});
  }
  const Graph g = m.load();
  expect_outputs(g, 2, [&](size_t k, const std::vector<float>& x) {
    auto at = [&](int64_t n, int64_t t, int64_t f) { return x[static_cast<size_t>((n * kT + t) * kF + f)]; };
    std::vector<float> y;
    for (int64_t n = 0; n < 2; ++n) {
      if (k == 0) {
        for (int64_t f = 0; f < kF; ++f) y.push_back(at(n, 0, f) + at(n, 2, f));
      } else if (k == 1) {
        for (int64_t f = 1; f < 4; ++f) y.push_back(at(n, 1, f) + at(n, 2, f));
      } else if (k == 2) {
        for (int64_t t = 0; t < kT; ++t)
          for (int64_t f = 0; f < kF; ++f) y.push_back(at(n, kT - 1 - t, f));
      } else {
        for (int64_t t = 0; t < kT; ++t)
          for (int64_t f = 0; f < kF; f += 2) y.push_back(at(n, t, f));
      }
    }
    return y;
  });
}

TEST(OnnxBatchAxis, Refusals) {
  {  // A constant that varies along the batch's axis (axis 1 here).
    OnnxGraph m(13);
    m.input("x", {kT, kF}).floats("c", {1, 2, 1}, {1.0f, 2.0f}).output("y");
    auto& t = m.node("Transpose", {"x"}, {"tm"});
    OnnxGraph::attr(t, "perm", std::vector<int64_t>{1, 0, 2});
    m.node("Mul", {"tm", "c"}, {"y"}, "scale");
    const std::string e = m.refusal();
    expect_contains(e, "node 'scale' (Mul)");
    expect_contains(e, "the constant operand varies along the batch axis");
  }
  {  // The batch on the axis the product contracts.
    OnnxGraph m(13);
    m.input("x", {kT, kF}).floats("w", {2, kU}, weights(2 * kU, 0.0)).output("y");
    auto& t = m.node("Transpose", {"x"}, {"last"});
    OnnxGraph::attr(t, "perm", std::vector<int64_t>{1, 2, 0});
    m.node("MatMul", {"last", "w"}, {"y"}, "proj");
    const std::string e = m.refusal();
    expect_contains(e, "node 'proj' (MatMul)");
    expect_contains(e, "the batch is on the last axis, the one the product contracts");
  }
  {  // Splitting the batch's axis (axis 1 here).
    OnnxGraph m(13);
    m.input("x", {kT, kF}).output("y").output("z");
    auto& t = m.node("Transpose", {"x"}, {"tm"});
    OnnxGraph::attr(t, "perm", std::vector<int64_t>{1, 0, 2});
    auto& split = m.node("Split", {"tm"}, {"y", "z"}, "halves");
    OnnxGraph::attr(split, "axis", int64_t{1});
    const std::string e = m.refusal();
    expect_contains(e, "node 'halves' (Split)");
    expect_contains(e, "splitting the batch axis is not supported");
  }
  {  // Two computed operands with the batch on different axes.
    OnnxGraph m(13);
    m.input("x", {kT, kT}).output("y");
    auto& t = m.node("Transpose", {"x"}, {"tm"});
    OnnxGraph::attr(t, "perm", std::vector<int64_t>{1, 0, 2});
    m.node("Add", {"x", "tm"}, {"y"}, "sum");
    const std::string e = m.refusal();
    expect_contains(e, "node 'sum' (Add)");
    expect_contains(e, "the operands carry the batch on different axes (0 and 1)");
  }
}

}  // namespace
}  // namespace nnd::test
