// What a loaded graph says about its file: the format, its version and the producer, for tools
// and logs, and node messages worded for the format ("layer" in Keras, "node" in ONNX).
#include <string>

#include <gtest/gtest.h>

#include "core/io/model_file.h"
#include "core/ir/graph.h"

namespace nnd {
namespace {

const std::string kData = NND_TEST_DATA_DIR;

TEST(ModelFormat, OnnxGraphNamesOpsetAndProducer) {
  const Graph g = load_model(kData + "/onnx/conv_stride2.onnx");
  EXPECT_EQ(g.format, ModelFormat::kOnnx);
  EXPECT_EQ(g.format_version, "13");
  EXPECT_EQ(g.producer, "pytorch 1.13.0");
  EXPECT_EQ(g.format_description(), "ONNX opset 13, pytorch 1.13.0");
  ASSERT_FALSE(g.nodes.empty());
  EXPECT_EQ(g.nodes[0].source_op, "Conv");
  EXPECT_EQ(g.node_context(g.nodes[0]), kData + "/onnx/conv_stride2.onnx: node '" + g.nodes[0].name + "' (Conv)");
}

TEST(ModelFormat, KerasGraphNamesVersionAndBackend) {
  const Graph g = load_model(kData + "/fixtures/act_relu.k2.h5");
  EXPECT_EQ(g.format, ModelFormat::kKeras);
  EXPECT_FALSE(g.format_version.empty());
  EXPECT_EQ(g.format_description(), "Keras " + g.format_version + ", tensorflow");
  ASSERT_FALSE(g.nodes.empty());
  EXPECT_EQ(g.node_context(g.nodes[0]).find(kData + "/fixtures/act_relu.k2.h5: layer '"), 0u);
}

TEST(ModelFormat, KerasArchiveHasNoBackend) {
  const Graph g = load_model(kData + "/fixtures/act_relu.keras");
  EXPECT_EQ(g.format, ModelFormat::kKeras);
  EXPECT_EQ(g.format_description(), "Keras " + g.format_version);
}

TEST(ModelFormat, DescriptionOfAGraphWithoutVersion) {
  Graph g;
  g.format = ModelFormat::kKeras;
  EXPECT_EQ(g.format_description(), "Keras (version not recorded)");
  g.format = ModelFormat::kUnknown;
  EXPECT_EQ(g.format_description(), "unknown format");
}

}  // namespace
}  // namespace nnd
