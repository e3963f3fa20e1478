// Graphs with a free batch that compute with the batch size (nn.MultiheadAttention's N * heads,
// its out-projection's T * N rows): refused batch-first, they load read as a batch of one, one
// sample at a time, once the batch trace (core/io/onnx_batch_trace.h) has followed the batch
// through every node. Checked on the fixture files made by tools/onnx_fixtures (sample by sample
// against one-sample runs, both engines), on small graphs against index arithmetic, and on the
// graphs the trace must refuse because they do mix samples: each refusal names the node, keeps
// the batch-first reading's error and adds the trace's reason.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "core/io/model_file.h"
#include "tests/io/onnx_graph_builder.h"

namespace nnd::test {
namespace {

namespace fs = std::filesystem;

// The batch size as the exporters compute it: Gather(Shape(x), [0]), a 1-D tensor of one element.
void batch_size(OnnxGraph& m, const std::string& x, const std::string& out) {
  m.ints("first", {0});
  m.node("Shape", {x}, {x + ":shape"});
  m.node("Gather", {x + ":shape", "first"}, {out});
}

TEST(OnnxFreeBatch, FixtureFilesLoadAndServeBatchNAsNSamples) {
  for (const char* name : {"mha_free_batch", "mha_seq_first_free_batch_opset14", "transformer_encoder_free_batch_opset14",
                           "torchvision_vit_free_batch_opset17", "torchvision_swin_free_batch_opset17",
                           "sdpa_torch2_causal_free_batch"}) {
    SCOPED_TRACE(name);
    const Graph g = load_model((fs::path(NND_TEST_DATA_DIR) / "onnx" / (std::string(name) + ".onnx")).string());
    expect_batch_is_samples(g);
  }
}

// [N, 2, 6, 2] -> [N * 2, 6, 2] (the heads inside the batch axis) -> softmax over the last axis ->
// [N, 2, 6, 2]: each pair of neighbours is a softmax of its own.
TEST(OnnxFreeBatch, HeadsMergedIntoTheBatchAxis) {
  OnnxGraph m(13);
  m.input("x", {2, 6, 2}).ints("two", {2}).ints("six", {6}).output("y");
  batch_size(m, "x", "n");
  m.node("Mul", {"n", "two"}, {"nh"});
  OnnxGraph::attr(m.node("Concat", {"nh", "six", "two"}, {"merged_shape"}), "axis", int64_t{0});
  m.node("Reshape", {"x", "merged_shape"}, {"merged"}, "merge");
  m.node("Softmax", {"merged"}, {"s"});
  auto& back_shape = m.node("Concat", {"n", "two", "six", "two"}, {"back_shape"});
  OnnxGraph::attr(back_shape, "axis", int64_t{0});
  m.node("Reshape", {"s", "back_shape"}, {"y"}, "split");
  const Graph g = m.load();
  EXPECT_EQ(g.values[static_cast<size_t>(g.outputs[0])].shape, (Dims{2, 6, 2}));
  expect_outputs(g, 3, [](size_t, const std::vector<float>& x) {
    std::vector<float> y(x.size());
    for (size_t i = 0; i < x.size(); i += 2) {
      const double a = std::exp(static_cast<double>(x[i])), b = std::exp(static_cast<double>(x[i + 1]));
      y[i] = static_cast<float>(a / (a + b));
      y[i + 1] = static_cast<float>(b / (a + b));
    }
    return y;
  });
  expect_batch_is_samples(g);
}

// [N, 3, 4] -> [3, N, 4] -> [3 * N, 4] (the time steps outside the batch, as the out-projection of
// a sequence-first attention) -> Gemm -> [3, N, 4] -> [N, 3, 4]: a Dense per row.
TEST(OnnxFreeBatch, TimeStepsMergedAroundTheBatchForAGemm) {
  OnnxGraph m(13);
  std::vector<float> w(16), c{0.5f, -0.5f, 0.25f, 0.0f};
  for (size_t o = 0; o < 4; ++o) {
    for (size_t i = 0; i < 4; ++i) w[o * 4 + i] = 0.1f * static_cast<float>(o + 1) - 0.05f * static_cast<float>(i);
  }
  m.input("x", {3, 4}).floats("w", {4, 4}, w).floats("c", {4}, c).ints("four", {4}).ints("second", {1}).output("y");
  auto& t = m.node("Transpose", {"x"}, {"t"});
  OnnxGraph::attr(t, "perm", std::vector<int64_t>{1, 0, 2});
  batch_size(m, "t", "steps");  // axis 0 of [T, N, E]: a number, not the batch
  m.node("Gather", {"t:shape", "second"}, {"n"});
  m.node("Mul", {"steps", "n"}, {"rows"});
  OnnxGraph::attr(m.node("Concat", {"rows", "four"}, {"rows_shape"}), "axis", int64_t{0});
  m.node("Reshape", {"t", "rows_shape"}, {"r"}, "rows");
  auto& gemm = m.node("Gemm", {"r", "w", "c"}, {"d"}, "dense");
  OnnxGraph::attr(gemm, "transB", int64_t{1});
  OnnxGraph::attr(m.node("Concat", {"steps", "n", "four"}, {"tn_shape"}), "axis", int64_t{0});
  m.node("Reshape", {"d", "tn_shape"}, {"u"}, "unrows");
  OnnxGraph::attr(m.node("Transpose", {"u"}, {"y"}), "perm", std::vector<int64_t>{1, 0, 2});
  const Graph g = m.load();
  EXPECT_EQ(g.values[static_cast<size_t>(g.outputs[0])].shape, (Dims{3, 4}));
  expect_outputs(g, 2, [&](size_t, const std::vector<float>& x) {
    std::vector<float> y(x.size());
    for (size_t row = 0; row < x.size() / 4; ++row) {
      for (size_t o = 0; o < 4; ++o) {
        double s = c[o];
        for (size_t i = 0; i < 4; ++i) s += static_cast<double>(x[row * 4 + i]) * w[o * 4 + i];
        y[row * 4 + o] = static_cast<float>(s);
      }
    }
    return y;
  });
  expect_batch_is_samples(g);
}

// Quantize/dequantize after the heads went back out of the batch axis: element-wise, per tensor.
TEST(OnnxFreeBatch, QuantizeDequantizeAfterTheMergedAxis) {
  OnnxGraph m(13);
  m.input("x", {2, 4}).ints("two", {2}).ints("four", {4}).ints("eight", {8}).scalar("scale", 0.25f).output("y");
  batch_size(m, "x", "n");
  m.node("Mul", {"n", "two"}, {"nh"});
  OnnxGraph::attr(m.node("Concat", {"nh", "four"}, {"s"}), "axis", int64_t{0});
  m.node("Reshape", {"x", "s"}, {"r"});
  m.node("Relu", {"r"}, {"a"});
  OnnxGraph::attr(m.node("Concat", {"n", "eight"}, {"back"}), "axis", int64_t{0});
  m.node("Reshape", {"a", "back"}, {"b"});
  m.node("QuantizeLinear", {"b", "scale"}, {"q"});
  m.node("DequantizeLinear", {"q", "scale"}, {"y"});
  const Graph g = m.load();
  expect_outputs(g, 2, [](size_t, const std::vector<float>& x) {
    std::vector<float> y(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      const float q = std::min(255.0f, std::nearbyint(std::max(0.0f, x[i]) / 0.25f));  // uint8, zero point 0
      y[i] = q * 0.25f;
    }
    return y;
  });
  expect_batch_is_samples(g);
}

// Graphs that do mix the samples of a batch, or compute with its size in ways that depend on it:
// the batch-first error stands, with the trace's reason for the node at fault added.
TEST(OnnxFreeBatch, RefusalsNameTheNodeThatWouldMixSamples) {
  const auto expect_refusal = [](const OnnxGraph& m, const std::string& node, const std::string& why) {
    const std::string e = m.refusal();
    EXPECT_NE(e.find("read one sample at a time instead: node '" + node + "'"), std::string::npos) << e;
    EXPECT_NE(e.find(why), std::string::npos) << e;
  };
  {  // [N, 3, 4] -> [3, N, 4] by a Reshape, not a Transpose: samples exchange rows.
    OnnxGraph m(13);
    m.input("x", {3, 4}).ints("three", {3}).ints("four", {4}).output("y");
    batch_size(m, "x", "n");
    OnnxGraph::attr(m.node("Concat", {"three", "n", "four"}, {"s"}), "axis", int64_t{0});
    m.node("Reshape", {"x", "s"}, {"r"}, "mix");
    m.node("Relu", {"r"}, {"y"});
    expect_refusal(m, "mix", "the Reshape of [1, 3, 4] (batch on axis 0) to [3, N, 4] moves data across samples");
  }
  {  // A mean over the axis that holds the batch merged with the heads.
    OnnxGraph m(13);
    m.input("x", {2, 4}).ints("two", {2}).ints("four", {4}).output("y");
    batch_size(m, "x", "n");
    m.node("Mul", {"n", "two"}, {"nh"});
    OnnxGraph::attr(m.node("Concat", {"nh", "four"}, {"s"}), "axis", int64_t{0});
    m.node("Reshape", {"x", "s"}, {"r"});
    auto& mean = m.node("ReduceMean", {"r"}, {"y"}, "mean");
    OnnxGraph::attr(mean, "axes", std::vector<int64_t>{0});
    expect_refusal(m, "mean", "ReduceMean runs over the axis that carries the batch");
  }
  {  // N * N.
    OnnxGraph m(13);
    m.input("x", {4}).ints("four", {4}).output("y");
    batch_size(m, "x", "n");
    m.node("Mul", {"n", "n"}, {"nn"}, "square");
    OnnxGraph::attr(m.node("Concat", {"nn", "four"}, {"s"}), "axis", int64_t{0});
    m.node("Reshape", {"x", "s"}, {"y"});
    expect_refusal(m, "square", "the batch size is multiplied by itself");
  }
  {  // 3 * N / 2 is no multiple of N for odd N.
    OnnxGraph m(13);
    m.input("x", {2, 3}).ints("two", {2}).ints("three", {3}).output("y");
    batch_size(m, "x", "n");
    m.node("Mul", {"n", "three"}, {"n3"});
    m.node("Div", {"n3", "two"}, {"half"}, "half");
    OnnxGraph::attr(m.node("Concat", {"half", "two"}, {"s"}), "axis", int64_t{0});
    m.node("Reshape", {"x", "s"}, {"y"});
    expect_refusal(m, "half", "divided by a number that does not divide it evenly");
  }
  {  // The batch size added to the data: every batch size would give other numbers.
    OnnxGraph m(13);
    m.input("x", {4}).ints("one", {1}).output("y");
    batch_size(m, "x", "n");
    m.node("Mul", {"n", "one"}, {"n1"});
    auto& cast = m.node("Cast", {"n1"}, {"nf"});
    OnnxGraph::attr(cast, "to", int64_t{onnx::TensorProto_DataType_FLOAT});
    m.node("Add", {"x", "nf"}, {"y"}, "plus");
    expect_refusal(m, "plus", "input 1 ('nf') of 'Add' is computed from the batch size");
  }
  {  // x · xᵀ: every sample times every other.
    OnnxGraph m(13);
    m.input("x", {4}).output("y");
    auto& t = m.node("Transpose", {"x"}, {"xt"});
    OnnxGraph::attr(t, "perm", std::vector<int64_t>{1, 0});
    m.node("MatMul", {"x", "xt"}, {"y"}, "gram");
    const std::string e = m.refusal();
    EXPECT_NE(e.find("node 'gram' (MatMul)"), std::string::npos) << e;
  }
  {  // The batch merged with the heads at a graph output: nnd serves a batch on an axis of its own.
    OnnxGraph m(13);
    m.input("x", {2, 4}).ints("two", {2}).ints("four", {4}).output("y");
    batch_size(m, "x", "n");
    m.node("Mul", {"n", "two"}, {"nh"});
    OnnxGraph::attr(m.node("Concat", {"nh", "four"}, {"s"}), "axis", int64_t{0});
    m.node("Reshape", {"x", "s"}, {"r"});
    m.node("Relu", {"r"}, {"y"});
    const std::string e = m.refusal();
    EXPECT_NE(e.find("arithmetic on the batch size cannot be folded"), std::string::npos) << e;
    EXPECT_NE(e.find("output 'y': with its free batch read one sample at a time, the output holds the batch merged with other data on axis 0 "
                     "(length 2 times the batch size)"), std::string::npos) << e;
  }
}

}  // namespace
}  // namespace nnd::test
