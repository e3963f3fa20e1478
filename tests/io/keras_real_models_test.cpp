// Loads the four real robot networks (../shared/models) and every generated fixture model listed
// in tests/data/fixtures/manifest.json, checking input/output names and shapes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/io/keras_hdf5.h"
#include "core/io/model_file.h"
#include "core/util/error.h"
#include "tests/support/required_files.h"

namespace nnd {
namespace {

namespace fs = std::filesystem;

std::string shared_model(const std::string& file) {
  return std::string(NND_SHARED_MODELS_DIR) + "/" + file;
}

const Dims& value_shape(const Graph& g, ValueId v) { return g.values.at(static_cast<size_t>(v)).shape; }

TEST(KerasRealModels, Bop) {
  const std::string path = shared_model("bop.h5");
  NND_REQUIRE_FILE(path);
  Graph g = load_keras_h5(path);
  EXPECT_EQ(g.format_version, "2.6.0");
  ASSERT_EQ(g.input_names, std::vector<std::string>{"input"});
  ASSERT_EQ(g.output_names, std::vector<std::string>{"conv2d_3"});
  EXPECT_EQ(value_shape(g, g.inputs[0]), (Dims{240, 320, 2}));
  EXPECT_EQ(value_shape(g, g.outputs[0]).size(), 3u);
  // Every weight came from the file: a SeparableConv2D has both kernels.
  int separable = 0;
  for (const Node& n : g.nodes) {
    if (auto* p = std::get_if<SeparableConvParams>(&n.params)) {
      ++separable;
      EXPECT_FALSE(p->depthwise_kernel.empty()) << n.name;
      EXPECT_FALSE(p->pointwise_kernel.empty()) << n.name;
    }
  }
  EXPECT_EQ(separable, 12);
}

TEST(KerasRealModels, BallPenaltyMultihead) {
  const std::string path = shared_model("ball-penalty-multihead.h5");
  NND_REQUIRE_FILE(path);
  Graph g = load_keras_h5(path);
  EXPECT_EQ(g.format_version, "3.4.1");
  ASSERT_EQ(g.input_names, std::vector<std::string>{"Input_Layer"});
  ASSERT_EQ(g.output_names, std::vector<std::string>{"concatenate"});
  EXPECT_EQ(value_shape(g, g.inputs[0]), (Dims{32, 32, 1}));
  EXPECT_EQ(value_shape(g, g.outputs[0]), (Dims{6}));
  // Dense layers without bias (use_bias false) load with an empty bias.
  for (const Node& n : g.nodes) {
    if (n.name == "First_Classi_Dense") {
      auto* p = std::get_if<DenseParams>(&n.params);
      ASSERT_NE(p, nullptr);
      EXPECT_TRUE(p->bias.empty());
      EXPECT_EQ(p->kernel.shape, (Dims{128, 32}));
    }
  }
}

TEST(KerasRealModels, FieldBoundary) {
  const std::string path = shared_model("field-boundary.h5");
  NND_REQUIRE_FILE(path);
  Graph g = load_keras_h5(path);  // Keras 2.4: fixed-length string attributes
  EXPECT_EQ(g.format_version, "2.4.0");
  ASSERT_EQ(g.input_names, std::vector<std::string>{"input"});
  ASSERT_EQ(g.output_names, std::vector<std::string>{"reshape"});
  EXPECT_EQ(value_shape(g, g.inputs[0]), (Dims{30, 40, 3}));
  EXPECT_EQ(value_shape(g, g.outputs[0]), (Dims{40, 2}));
}

TEST(KerasRealModels, RefereeGesture) {
  const std::string path = shared_model("referee-gesture.h5");
  NND_REQUIRE_FILE(path);
  Graph g = load_keras_h5(path);
  EXPECT_EQ(g.format_version, "3.8.0");
  ASSERT_EQ(g.input_names, (std::vector<std::string>{"input_layer", "distance_input"}));
  ASSERT_EQ(g.output_names, std::vector<std::string>{"Output_Layer"});
  EXPECT_EQ(value_shape(g, g.inputs[0]), (Dims{256, 256, 3}));
  EXPECT_EQ(value_shape(g, g.inputs[1]), (Dims{1}));
  EXPECT_EQ(value_shape(g, g.outputs[0]), (Dims{3}));
}

// Every model of the generated fixture set loads, with the manifest's input/output names.
TEST(KerasFixtureModels, ManifestModelsLoad) {
  const fs::path dir = fs::path(NND_TEST_DATA_DIR) / "fixtures";
  const fs::path manifest = dir / "manifest.json";
  NND_REQUIRE_FILE(manifest);
  std::ifstream in(manifest);
  nlohmann::json m = nlohmann::json::parse(in);
  int loaded = 0;
  for (const auto& c : m.at("cases")) {
    const std::string name = c.at("name").get<std::string>();
    std::vector<std::string> ins, outs;
    for (const auto& i : c.at("inputs")) ins.push_back(i.at("name").get<std::string>());
    for (const auto& o : c.at("outputs")) outs.push_back(o.at("name").get<std::string>());
    for (const auto& [flavour, file] : c.at("models").items()) {
      const fs::path p = dir / file.get<std::string>();
      SCOPED_TRACE(name + " (" + flavour + "): " + p.string());
      if (!fs::exists(p)) {
        ADD_FAILURE() << "listed in the manifest but missing";
        continue;
      }
      try {
        Graph g = load_model(p.string());  // .h5 or .keras
        EXPECT_EQ(g.input_names, ins);
        EXPECT_EQ(g.output_names, outs);
        for (ValueId v : g.outputs) EXPECT_FALSE(value_shape(g, v).empty());
        ++loaded;
      } catch (const Error& e) {
        ADD_FAILURE() << e.what();
      }
    }
  }
  EXPECT_GT(loaded, 0);
}

}  // namespace
}  // namespace nnd
