// load_keras_h5_image (the fuzz target's entry point: an .h5 file's bytes in memory) must give
// the same graph as load_keras_h5 on the file, and the same clear errors for the broken corpus.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/io/keras_hdf5.h"
#include "core/ir/cost.h"
#include "core/ir/dump.h"
#include "core/util/error.h"

namespace nnd {
namespace {

namespace fs = std::filesystem;

const fs::path kData = fs::path(NND_TEST_DATA_DIR);
// Messages start with this name (any name works, an existing file's path too).
const std::string kName = "/nonexistent/image.h5";

std::vector<char> read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + p.string());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The dump without its first line, which names the source.
std::string dump_body(const Graph& g) {
  std::string d = dump_graph(g);
  return d.substr(d.find('\n') + 1);
}

TEST(KerasH5Image, SameGraphAsTheFileForFixtures) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(kData / "fixtures")) {
    if (e.path().extension() == ".h5") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  int checked = 0;
  // Every third fixture (both Keras layouts, most layer kinds) keeps this short under ASan.
  for (size_t i = 0; i < files.size(); i += 3) {
    const fs::path& p = files[i];
    SCOPED_TRACE(p.string());
    const Graph from_file = load_keras_h5(p.string());
    const std::vector<char> bytes = read_bytes(p);
    const Graph from_image = load_keras_h5_image(bytes.data(), bytes.size(), kName);
    EXPECT_EQ(dump_body(from_file), dump_body(from_image));
    EXPECT_EQ(parameter_count(from_file), parameter_count(from_image));
    EXPECT_EQ(from_file.input_names, from_image.input_names);
    EXPECT_EQ(from_file.output_names, from_image.output_names);
    ++checked;
  }
  EXPECT_GE(checked, 30);
}

TEST(KerasH5Image, BrokenFilesGiveTheirMessagesUnderTheImageName) {
  std::ifstream in(kData / "broken" / "expected.json");
  ASSERT_TRUE(in);
  const nlohmann::json expected = nlohmann::json::parse(in);
  for (const auto& [file, substring] : expected.items()) {
    SCOPED_TRACE(file);
    const std::vector<char> bytes = read_bytes(kData / "broken" / file);
    try {
      load_keras_h5_image(bytes.data(), bytes.size(), kName);
      ADD_FAILURE() << "loaded without error";
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.rfind(kName + ": ", 0), 0u) << msg;
      EXPECT_NE(msg.find(substring.get<std::string>()), std::string::npos) << msg;
    }
  }
}

TEST(KerasH5Image, EmptyAndTinyInputsAreNotHdf5) {
  const char bytes[4] = {'\x89', 'H', 'D', 'F'};
  for (size_t n : {size_t{0}, size_t{4}}) {
    try {
      load_keras_h5_image(bytes, n, kName);
      ADD_FAILURE() << "accepted " << n << " bytes";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("not an HDF5 file"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace nnd
