// Graphs whose file fixes the batch to 1 and then moves the single sample across axis 0 (tf2onnx
// writes Reshape [1, T, F] -> [T, 1, F] where a Transpose moves only axes of length 1): they load,
// and batch N is served as N samples of the file's batch of one. Checked on the fixture files made
// by tools/onnx_fixtures (sample by sample against batch-1 runs, both engines), on small graphs
// against index arithmetic, and the refusals that remain name the node, operator and reason.
#include <cmath>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "core/io/model_file.h"
#include "core/io/model_inputs.h"
#include "tests/io/onnx_graph_builder.h"

namespace nnd::test {
namespace {

namespace fs = std::filesystem;

TEST(OnnxFixedBatch, FixtureFilesServeBatchNAsNSamples) {
  for (const char* name : {"tf_lstm_fixed_batch_reshape", "lstm_fixed_batch_time_major", "mha_batch1",
                           "transformer_encoder_batch1_opset14", "torchvision_swin_batch1_opset17"}) {
    SCOPED_TRACE(name);
    const Graph g = load_model((fs::path(NND_TEST_DATA_DIR) / "onnx" / (std::string(name) + ".onnx")).string());
    expect_batch_is_samples(g);
  }
}

// [1, 3, 4] -> [3, 1, 4] (time-major, the batch on axis 1) -> [1, 12] (batch first again).
TEST(OnnxFixedBatch, ReshapeAcrossAxisZeroMovesTheBatchToAnAxisOfLengthOne) {
  OnnxGraph m(13);
  m.fixed_input("x", {1, 3, 4}).ints("tm", {3, 1, 4}).ints("flat", {1, 12}).output("y");
  m.node("Reshape", {"x", "tm"}, {"t"});
  m.node("Relu", {"t"}, {"r"});
  m.node("Reshape", {"r", "flat"}, {"y"});
  const Graph g = m.load();
  EXPECT_EQ(g.values[static_cast<size_t>(g.outputs[0])].shape, (Dims{12}));
  expect_outputs(g, 2, [](size_t, const std::vector<float>& x) {
    std::vector<float> y;
    for (float v : x) y.push_back(std::max(v, 0.0f));
    return y;
  });
  expect_batch_is_samples(g);
}

// Unsqueeze(0) and Squeeze(0) of a fixed batch of 1: the batch moves to another axis of length 1.
TEST(OnnxFixedBatch, SqueezeAndUnsqueezeOfAxisZero) {
  OnnxGraph m(13);
  m.fixed_input("x", {1, 6}).ints("zero", {0}).ints("one", {1}).scalar("two", 2.0f).output("y");
  m.node("Unsqueeze", {"x", "zero"}, {"u"});  // [1, 1, 6], the batch on axis 1
  m.node("Squeeze", {"u", "one"}, {"s"});     // [1, 6]: the batch moves to axis 0 first
  m.node("Mul", {"s", "two"}, {"y"});
  const Graph g = m.load();
  expect_outputs(g, 3, [](size_t, const std::vector<float>& x) {
    std::vector<float> y;
    for (float v : x) y.push_back(2.0f * v);
    return y;
  });
}

TEST(OnnxFixedBatch, FullRangeSliceOfTheBatchAxisIsNoSlice) {
  for (int64_t end : {int64_t{2147483647}, int64_t{9223372036854775807}}) {
    OnnxGraph m(13);
    m.input("x", {6, 8}).ints("starts", {0, 1}).ints("ends", {end, 5}).ints("axes", {0, 1}).output("y");
    m.node("Slice", {"x", "starts", "ends", "axes"}, {"y"});
    const Graph g = m.load();
    EXPECT_EQ(g.values[static_cast<size_t>(g.outputs[0])].shape, (Dims{4, 8}));
  }
}

TEST(OnnxFixedBatch, Refusals) {
  {  // A real slice of the batch axis.
    OnnxGraph m(13);
    m.input("x", {6, 8}).ints("starts", {1}).ints("ends", {2147483647}).ints("axes", {0}).output("y");
    m.node("Slice", {"x", "starts", "ends", "axes"}, {"y"}, "cut");
    const std::string e = m.refusal();
    EXPECT_NE(e.find("node 'cut' (Slice)"), std::string::npos) << e;
    EXPECT_NE(e.find("slicing the batch axis (start 1, end 2147483647, step 1)"), std::string::npos) << e;
  }
  {  // A free batch: a reshape across it stays refused.
    OnnxGraph m(13);
    m.input("x", {3, 4}).ints("tm", {3, 1, 4}).output("y");
    m.node("Reshape", {"x", "tm"}, {"y"}, "r");
    const std::string e = m.refusal();
    EXPECT_NE(e.find("node 'r' (Reshape)"), std::string::npos) << e;
    EXPECT_NE(e.find("moves data across the batch axis"), std::string::npos) << e;
  }
  {  // The batch moved to axis 1 and axis 0 is data: a max pool needs the batch first.
    OnnxGraph m(13);
    m.fixed_input("x", {1, 3, 4}).ints("tm", {3, 1, 4}).output("y");
    m.node("Reshape", {"x", "tm"}, {"t"});
    auto& pool = m.node("MaxPool", {"t"}, {"y"}, "pool");
    OnnxGraph::attr(pool, "kernel_shape", std::vector<int64_t>{2});
    const std::string e = m.refusal();
    EXPECT_NE(e.find("node 'pool' (MaxPool)"), std::string::npos) << e;
    EXPECT_NE(e.find("batch of 1 moved there, and axis 0 has length 3"), std::string::npos) << e;
  }
  {  // The single sample as a whole reaches an operator that does not take it.
    OnnxGraph m(13);
    m.fixed_input("x", {1, 6, 4}).ints("t", {2, 3, 4}).output("y");
    m.node("Reshape", {"x", "t"}, {"r"});
    auto& pool = m.node("MaxPool", {"r"}, {"y"}, "pool");
    OnnxGraph::attr(pool, "kernel_shape", std::vector<int64_t>{2});
    const std::string e = m.refusal();
    EXPECT_NE(e.find("node 'pool' (MaxPool)"), std::string::npos) << e;
    EXPECT_NE(e.find("is the file's single sample as a whole"), std::string::npos) << e;
  }
  {  // A file that fixes its batch above 1 and fails both ways: the batch-first reading's error.
    OnnxGraph m(13);
    m.fixed_input("x", {3, 2, 4, 4}).ints("axes", {0}).output("y");
    auto& mean = m.node("ReduceMean", {"x"}, {"m"}, "mean");  // [3, 2, 4, 4] -> [2, 4, 4]
    OnnxGraph::attr(mean, "axes", std::vector<int64_t>{0});
    OnnxGraph::attr(mean, "keepdims", int64_t{0});
    auto& pool = m.node("MaxPool", {"m"}, {"y"}, "pool");  // no axis of length 1 for a batch
    OnnxGraph::attr(pool, "kernel_shape", std::vector<int64_t>{2});
    const std::string e = m.refusal();
    EXPECT_NE(e.find("node 'mean' (ReduceMean)"), std::string::npos) << e;
    EXPECT_NE(e.find("reducing over the batch axis is not supported"), std::string::npos) << e;
  }
}

// Where no axis of length 1 is left to carry the file's batch of 1 ([1, 6, 4] -> [2, 3, 4], as
// nn.MultiheadAttention merges the batch with the heads), the tensor is the single sample as a
// whole: the reshape keeps each sample's elements, and an output without an axis of length 1 is
// served with the file's whole shape per sample.
TEST(OnnxFixedBatch, NoAxisLeftForTheBatchReadsTheTensorAsOneSample) {
  OnnxGraph m(13);
  m.fixed_input("x", {1, 6, 4}).ints("t", {2, 3, 4}).output("y");
  m.node("Reshape", {"x", "t"}, {"r"});
  m.node("Softmax", {"r"}, {"y"});
  const Graph g = m.load();
  EXPECT_EQ(g.values[static_cast<size_t>(g.inputs[0])].shape, (Dims{6, 4}));
  EXPECT_EQ(g.values[static_cast<size_t>(g.outputs[0])].shape, (Dims{2, 3, 4}));
  expect_outputs(g, 2, [](size_t, const std::vector<float>& x) {
    std::vector<float> y(x.size());
    for (size_t row = 0; row < x.size() / 4; ++row) {
      double sum = 0;
      for (size_t i = 0; i < 4; ++i) sum += std::exp(static_cast<double>(x[row * 4 + i]));
      for (size_t i = 0; i < 4; ++i) y[row * 4 + i] = static_cast<float>(std::exp(static_cast<double>(x[row * 4 + i])) / sum);
    }
    return y;
  });
  expect_batch_is_samples(g);
}

// After the single sample as a whole, an operator that needs the batch on an axis (a pool, a
// Conv after attention) gets it back on an axis of length 1: [1, 6, 4] -> [2, 3, 4] (whole) ->
// [1, 4, 2, 3] -> a 1x1 max pool, the identity.
TEST(OnnxFixedBatch, AxisOfLengthOneCarriesTheBatchAgainForAPool) {
  OnnxGraph m(13);
  m.fixed_input("x", {1, 6, 4}).ints("t", {2, 3, 4}).ints("nchw", {1, 4, 2, 3}).output("y");
  m.node("Reshape", {"x", "t"}, {"r"});
  m.node("Reshape", {"r", "nchw"}, {"q"});
  auto& pool = m.node("MaxPool", {"q"}, {"y"});
  OnnxGraph::attr(pool, "kernel_shape", std::vector<int64_t>{1, 1});
  const Graph g = m.load();
  EXPECT_EQ(g.values[static_cast<size_t>(g.outputs[0])].shape, (Dims{4, 2, 3}));
  expect_outputs(g, 2, [](size_t, const std::vector<float>& x) { return x; });
  expect_batch_is_samples(g);
}

// The batch moved to axis 1 with axis 0 data ([3, 1, 4]): a softmax over the last axis runs on the
// single sample as a whole, and the output's axis of length 1 carries the batch again.
TEST(OnnxFixedBatch, PerSampleOperatorTakesAxisZeroAsData) {
  OnnxGraph m(13);
  m.fixed_input("x", {1, 3, 4}).ints("tm", {3, 1, 4}).output("y");
  m.node("Reshape", {"x", "tm"}, {"t"});
  m.node("Softmax", {"t"}, {"y"});
  const Graph g = m.load();
  EXPECT_EQ(g.values[static_cast<size_t>(g.outputs[0])].shape, (Dims{3, 4}));
  expect_outputs(g, 2, [](size_t, const std::vector<float>& x) {
    std::vector<float> y(x.size());
    for (size_t row = 0; row < x.size() / 4; ++row) {
      double sum = 0;
      for (size_t i = 0; i < 4; ++i) sum += std::exp(static_cast<double>(x[row * 4 + i]));
      for (size_t i = 0; i < 4; ++i) y[row * 4 + i] = static_cast<float>(std::exp(static_cast<double>(x[row * 4 + i])) / sum);
    }
    return y;
  });
  expect_batch_is_samples(g);
}

// A file that fixes its batch above 1 and reduces over axis 0: refused batch-first, it loads as
// whole samples ([3, 4] per sample, the mean over its rows), and its output stays whole.
TEST(OnnxFixedBatch, FixedBatchAboveOneUsingAxisZeroAsDataLoadsAsWholeSamples) {
  OnnxGraph m(13);
  m.fixed_input("x", {3, 4}).output("y");
  auto& mean = m.node("ReduceMean", {"x"}, {"y"});
  OnnxGraph::attr(mean, "axes", std::vector<int64_t>{0});
  const Graph g = m.load();
  EXPECT_EQ(g.values[static_cast<size_t>(g.inputs[0])].shape, (Dims{3, 4}));
  EXPECT_EQ(g.values[static_cast<size_t>(g.outputs[0])].shape, (Dims{1, 4}));
  expect_outputs(g, 2, [](size_t, const std::vector<float>& x) {
    std::vector<float> y;
    for (size_t s = 0; s < x.size() / 12; ++s) {
      for (size_t c = 0; c < 4; ++c) y.push_back((x[s * 12 + c] + x[s * 12 + 4 + c] + x[s * 12 + 8 + c]) / 3.0f);
    }
    return y;
  });
  expect_batch_is_samples(g);
}

}  // namespace
}  // namespace nnd::test
