// The real robot networks in ../shared/models (saved by Keras 2.4, 2.6, 3.4 and 3.8) run in the
// reference engine and are compared with ONNX Runtime's outputs on their ONNX twins
// (tests/data/real, made by tools/onnx_reference). Skipped, with a message, where ../shared is
// absent.
#include <filesystem>
#include <fstream>
#include <map>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/engine/engine_options.h"
#include "core/io/model_file.h"
#include "core/io/model_inputs.h"
#include "tests/support/compare.h"
#include "tests/support/run_listed_inputs.h"
#include "tests/support/required_files.h"

namespace nnd::test {
namespace {

namespace fs = std::filesystem;
const fs::path kData = fs::path(NND_TEST_DATA_DIR) / "real";
const fs::path kModels = NND_SHARED_MODELS_DIR;

// One manifest entry; a struct of our own so PrintTo keeps ctest's test list readable.
struct RealCase {
  nlohmann::json spec;
};
void PrintTo(const RealCase& c, std::ostream* os) { *os << c.spec.value("model", "?"); }

std::vector<RealCase> load_cases() {
  std::vector<RealCase> cases;
  std::ifstream in(kData / "manifest.json");
  if (!in) return cases;  // no cases: GoogleTest fails the uninstantiated suite
  const nlohmann::json manifest = nlohmann::json::parse(in);  // named: the loop must not
  for (const auto& c : manifest.at("cases")) cases.push_back({c});  // iterate a dead temporary
  return cases;
}

class RealNetwork : public ::testing::TestWithParam<RealCase> {};

TEST(RealNetworks, ManifestListsFourNetworks) { EXPECT_EQ(load_cases().size(), 4u); }

// Runs `model` in the reference engine on the manifest's inputs (named by `name_key`: "name" for
// the .h5 file, "onnx_name" for its ONNX twin) and compares each output (named by the same key)
// with ONNX Runtime's.
void check_against_onnx_runtime(const nlohmann::json& spec, const fs::path& model, const char* name_key) {
  Graph g = load_model(model.string());
  const test::ListedRun listed = test::run_listed_inputs(g, spec.at("inputs"), kData, name_key);
  const ModelOutputs& outputs = listed.outputs;

  ASSERT_EQ(g.outputs.size(), spec.at("outputs").size());
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    const auto& out = spec.at("outputs")[i];
    EXPECT_EQ(g.output_names[i], out.at(name_key).get<std::string>());
    const NpyArray expected = read_npy((kData / out.at("file").get<std::string>()).string());
    ASSERT_EQ(static_cast<size_t>(expected.element_count()), outputs.buffers[i].size());
    const Agreement a =
        compare(outputs.buffers[i].data(), expected.f32(), expected.element_count());
    std::printf("[ agreement ] %s %s vs ONNX Runtime: max abs %.3g, max scaled %.3g\n",
                model.filename().c_str(), g.output_names[i].c_str(), a.max_abs, a.max_scaled);
    EXPECT_EQ(a.nonfinite, 0);
    // ONNX Runtime accumulates in float32; the reference engine in float64. The fixture rule
    // (1e-5 of max(1, |expected|)) holds with margin (measured figures are printed above).
    EXPECT_LE(a.max_scaled, kFixtureTolerance) << "worst at flat index " << a.worst_index;
  }
}

TEST_P(RealNetwork, ReferenceEngineAgreesWithOnnxRuntime) {
  const nlohmann::json& spec = GetParam().spec;
  const fs::path model = kModels / spec.at("model").get<std::string>();
  NND_REQUIRE_FILE(model);
  check_against_onnx_runtime(spec, model, "name");
}

// The ONNX twin of each network, loaded by content, against ONNX Runtime's outputs on that very
// file (the manifest's "onnx_name" fields name its inputs and outputs).
TEST_P(RealNetwork, OnnxTwinAgreesWithOnnxRuntime) {
  const nlohmann::json& spec = GetParam().spec;
  const fs::path model = kModels / spec.at("onnx").get<std::string>();
  NND_REQUIRE_FILE(model);
  check_against_onnx_runtime(spec, model, "onnx_name");
}

std::string case_name(const ::testing::TestParamInfo<RealCase>& info) {
  std::string s = info.param.spec.at("model").get<std::string>();
  s = s.substr(0, s.find('.'));
  for (char& c : s) {
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return s;
}

INSTANTIATE_TEST_SUITE_P(Shared, RealNetwork, ::testing::ValuesIn(load_cases()), case_name);

}  // namespace
}  // namespace nnd::test
