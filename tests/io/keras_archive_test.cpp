// Keras 3 .keras archives beyond the fixture models (which tests/fixtures runs in every layout):
// the damaged archives of tests/data/broken_keras (made by tools/fixtures/write_keras_archive.py)
// are each rejected with their message, from a file and from memory; the valid edge cases load
// and reproduce the outputs of the fixture they were made from.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/engine/engine_options.h"
#include "core/io/keras_archive.h"
#include "core/io/model_file.h"
#include "core/io/model_inputs.h"
#include "core/io/npy.h"
#include "core/util/error.h"
#include "tests/support/compare.h"
#include "tests/support/run_listed_inputs.h"

namespace nnd {
namespace {

namespace fs = std::filesystem;

const fs::path kData = NND_TEST_DATA_DIR;
const fs::path kDir = kData / "broken_keras";

nlohmann::json read_json(const fs::path& p) {
  std::ifstream in(p);
  if (!in) throw std::runtime_error("cannot open " + p.string());
  return nlohmann::json::parse(in);
}

std::vector<char> read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(KerasArchive, EachDamagedArchiveIsRejectedWithItsMessage) {
  const nlohmann::json expected = read_json(kDir / "expected.json");
  ASSERT_GE(expected.size(), 10u);
  for (const auto& [file, substring] : expected.items()) {
    const fs::path p = kDir / file;
    SCOPED_TRACE(p.string());
    ASSERT_TRUE(fs::exists(p));
    // Through load_model (recognised by content, whatever the extension) and from memory.
    try {
      Graph g = load_model(p.string());
      ADD_FAILURE() << "loaded without error (" << g.nodes.size() << " nodes)";
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(substring.get<std::string>()), std::string::npos)
          << "message: " << msg << "\nexpected to contain: " << substring.get<std::string>();
      EXPECT_EQ(msg.rfind(p.string(), 0), 0u) << "message does not start with the file: " << msg;
    }
    const std::vector<char> bytes = read_bytes(p);
    try {
      load_keras_archive_bytes(bytes.data(), bytes.size(), "in-memory.keras");
      ADD_FAILURE() << "loaded from memory without error";
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(substring.get<std::string>()), std::string::npos) << msg;
      EXPECT_EQ(msg.rfind("in-memory.keras", 0), 0u) << msg;
    }
  }
}

// Every archive in the folder has an expectation (a new damaged file cannot be forgotten).
TEST(KerasArchive, DamagedCorpusIsComplete) {
  const nlohmann::json expected = read_json(kDir / "expected.json");
  int files = 0;
  for (const auto& entry : fs::directory_iterator(kDir)) {
    if (!entry.is_regular_file() || entry.path().filename() == "expected.json") continue;
    EXPECT_TRUE(expected.contains(entry.path().filename().string())) << entry.path();
    ++files;
  }
  EXPECT_EQ(files, static_cast<int>(expected.size()));
}

TEST(KerasArchive, MissingFileIsAnError) {
  const std::string p = (kDir / "does_not_exist.keras").string();
  try {
    load_keras_archive(p);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("does_not_exist.keras"), std::string::npos) << e.what();
  }
}

// An edge-case archive computes what the fixture it was made from computes.
TEST(KerasArchive, EdgeCasesReproduceTheirFixture) {
  const nlohmann::json valid = read_json(kDir / "valid" / "valid.json");
  const nlohmann::json manifest = read_json(kData / "fixtures" / "manifest.json");
  ASSERT_FALSE(valid.empty());
  for (const auto& [file, spec] : valid.items()) {
    SCOPED_TRACE(file);
    const std::string fixture = spec.at("fixture").get<std::string>();
    const nlohmann::json* c = nullptr;
    for (const auto& e : manifest.at("cases")) {
      if (e.at("name") == fixture) c = &e;
    }
    ASSERT_NE(c, nullptr) << "fixture " << fixture << " not in the manifest";
    Graph g = load_model((kDir / "valid" / file).string());
    if (spec.at("outputs").is_array()) {
      EXPECT_EQ(g.output_names, spec.at("outputs").get<std::vector<std::string>>());
    }
    const test::ListedRun listed = test::run_listed_inputs(g, c->at("inputs"), kData / "fixtures");
    const ModelOutputs& outputs = listed.outputs;
    ASSERT_EQ(g.outputs.size(), c->at("outputs").size());
    for (size_t i = 0; i < g.outputs.size(); ++i) {
      const NpyArray expected =
          read_npy((kData / "fixtures" / c->at("outputs")[i].at("file").get<std::string>()).string());
      ASSERT_EQ(outputs.buffers[i].size(), expected.element_count());
      const test::Agreement a = test::compare(outputs.buffers[i].data(), expected.f32(), expected.element_count());
      EXPECT_LE(a.max_scaled, 1e-5) << "output " << i << ": max abs " << a.max_abs;
    }
  }
}

}  // namespace
}  // namespace nnd
