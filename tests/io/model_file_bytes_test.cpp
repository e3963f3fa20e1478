// load_model_bytes (a model file's bytes already in memory; the daemon loads the bytes its
// validator child checked) gives the same graph and the same errors as load_model on the file,
// for every format, also when the name it is given is the path of the existing file.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <functional>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/io/model_file.h"
#include "core/ir/dump.h"
#include "core/util/error.h"

namespace nnd {
namespace {

namespace fs = std::filesystem;

const fs::path kData = fs::path(NND_TEST_DATA_DIR);

std::vector<char> read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ModelFileBytes, SameGraphAsTheFileInEveryFormat) {
  for (const fs::path& p : {kData / "fixtures" / "act_elu.k2.h5", kData / "fixtures" / "act_elu.keras",
                            kData / "onnx" / "act_elu.onnx"}) {
    SCOPED_TRACE(p.string());
    const Graph from_file = load_model(p.string());
    const std::vector<char> bytes = read_bytes(p);
    // Named by the file's own path: HDF5's core driver would refuse an image of that name, so
    // the loader must open it under a name of its own.
    const Graph from_bytes = load_model_bytes(bytes.data(), bytes.size(), p.string());
    EXPECT_EQ(dump_graph(from_file), dump_graph(from_bytes));
    EXPECT_EQ(from_bytes.source, from_file.source);
  }
}

TEST(ModelFileBytes, SameErrorsAsTheFile) {
  const fs::path dir = fs::temp_directory_path() / ("nnd_model_bytes_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::vector<std::pair<std::string, std::string>> files = {
      {"empty.h5", ""},
      {"junk.h5", "junk that is no model"},
      {"lfs.h5", "version https://git-lfs.github.com/spec/v1\noid sha256:00\nsize 1\n"},
  };
  for (const auto& [name, content] : files) {
    const fs::path p = dir / name;
    std::ofstream(p) << content;
    SCOPED_TRACE(p.string());
    const std::string from_file = error_of([&] { load_model(p.string()); });
    const std::string from_bytes =
        error_of([&] { load_model_bytes(content.data(), content.size(), p.string()); });
    EXPECT_EQ(from_file, from_bytes);
    EXPECT_EQ(from_bytes.rfind(p.string() + ": ", 0), 0u) << from_bytes;
  }
  const fs::path broken = kData / "broken" / "invalid_json.h5";
  const std::vector<char> bytes = read_bytes(broken);
  EXPECT_EQ(error_of([&] { load_model(broken.string()); }),
            error_of([&] { load_model_bytes(bytes.data(), bytes.size(), broken.string()); }));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace nnd
