// nnrun and nninfo as a user meets them: exit codes, messages and written files.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/io/npy.h"
#include "nnd_version.h"

namespace nnd::test {
namespace {

namespace fs = std::filesystem;
const fs::path kTools = fs::path(NND_BINARY_DIR) / "tools" / "cli";
const fs::path kFixtures = fs::path(NND_TEST_DATA_DIR) / "fixtures";

struct Result {
  int status = -1;
  std::string output;  // stdout and stderr together
};

Result run(const std::string& args) {
  Result r;
  const std::string cmd = args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

// The first fixture model of the manifest and its first input's name and file.
struct AnyFixture {
  std::string model, input_name, input_file, output_name;
};
AnyFixture any_fixture() {
  std::ifstream in(kFixtures / "manifest.json");
  const auto m = nlohmann::json::parse(in);
  const auto& c = m.at("cases").at(0);
  const auto& models = c.at("models");
  const std::string file = models.contains("keras2") ? models.at("keras2").get<std::string>()
                                                     : models.begin()->get<std::string>();
  return {(kFixtures / file).string(), c.at("inputs")[0].at("name").get<std::string>(),
          (kFixtures / c.at("inputs")[0].at("file").get<std::string>()).string(),
          c.at("outputs")[0].at("name").get<std::string>()};
}

const std::string nnrun() { return (kTools / "nnrun").string(); }
const std::string nninfo() { return (kTools / "nninfo").string(); }

TEST(Cli, NnrunHelpDocumentsTheContract) {
  Result r = run(nnrun() + " --help");
  EXPECT_EQ(r.status, 0);
  for (const char* flag : {"--engine", "--isa", "--math", "--input", "--output-dir", "--batch"}) {
    EXPECT_NE(r.output.find(flag), std::string::npos) << flag;
  }
  EXPECT_NE(r.output.find("(j*37 + k*101) mod 256"), std::string::npos);
  EXPECT_NE(r.output.find("jit (default"), std::string::npos) << r.output;
}

// Without --engine nnrun runs the JIT, as nnd does (the float64 reference engine is ~50x slower
// and only asked for by name); a model the JIT cannot take is refused exactly as with
// --engine jit, naming the JIT.
TEST(Cli, NnrunDefaultsToTheJit) {
  const AnyFixture f = any_fixture();
  Result def = run(nnrun() + " " + f.model + " --batch 2");
  Result jit = run(nnrun() + " " + f.model + " --batch 2 --engine jit");
  EXPECT_EQ(def.status, jit.status) << def.output << "\n---\n" << jit.output;
  if (def.status == 0) {
    EXPECT_NE(def.output.find(", engine jit-"), std::string::npos) << def.output;
  } else {
    EXPECT_NE(def.output.find("JIT"), std::string::npos) << def.output;
  }
  Result ref = run(nnrun() + " " + f.model + " --batch 2 --engine reference");
  ASSERT_EQ(ref.status, 0) << ref.output;
  EXPECT_NE(ref.output.find(", engine reference"), std::string::npos) << ref.output;
}

// Every tool answers --version with "<tool> <project version> (git <revision>)" and exit 0, so a
// bug report can say which build it came from. The tool list comes from CMake (the tools this
// build has).
TEST(Cli, EveryToolPrintsTheProjectVersion) {
  std::vector<std::string> tools;
  const std::string list = NND_VERSION_TOOLS;
  for (size_t b = 0; b < list.size();) {
    const size_t e = std::min(list.find(',', b), list.size());
    tools.push_back(list.substr(b, e - b));
    b = e + 1;
  }
  ASSERT_GE(tools.size(), 2u) << list;  // nnrun and nninfo at least
  for (const std::string& path : tools) {
    const std::string name = fs::path(path).filename().string();
    Result r = run(path + " --version");
    EXPECT_EQ(r.status, 0) << path << ": " << r.output;
    EXPECT_EQ(r.output, name + " " NND_VERSION_STRING " (git " NND_GIT_REVISION ")\n") << path;
  }
}

TEST(Cli, NnrunMissingModelFailsWithTheFileName) {
  Result r = run(nnrun() + " /nonexistent/model.h5");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find("/nonexistent/model.h5"), std::string::npos) << r.output;
}

TEST(Cli, NnrunRejectsUnknownEngineAndIsa) {
  EXPECT_NE(run(nnrun() + " x.h5 --engine magic").status, 0);
  EXPECT_NE(run(nnrun() + " x.h5 --isa avx9").status, 0);
  EXPECT_NE(run(nnrun() + " x.h5 --input nofile").status, 0);
}

// --engine jit either runs and agrees with the reference engine, or refuses with a message that
// names the JIT (a layer it does not compile, an ISA this CPU lacks): never a silent fallback.
TEST(Cli, NnrunJitAgreesWithReferenceOrSaysWhy) {
  const AnyFixture f = any_fixture();
  const fs::path dir = fs::temp_directory_path() / ("nnd_cli_jit_" + std::to_string(::getpid()));
  const std::string common = " " + f.model + " --input " + f.input_name + "=" + f.input_file;
  Result ref = run(nnrun() + common + " --engine reference --output-dir " + (dir / "ref").string());
  ASSERT_EQ(ref.status, 0) << ref.output;
  Result jit = run(nnrun() + common + " --engine jit --output-dir " + (dir / "jit").string());
  if (jit.status != 0) {
    EXPECT_EQ(jit.status, 1) << jit.output;
    EXPECT_NE(jit.output.find("JIT"), std::string::npos) << jit.output;
  } else {
    const NpyArray a = read_npy((dir / "ref" / (f.output_name + ".npy")).string());
    const NpyArray b = read_npy((dir / "jit" / (f.output_name + ".npy")).string());
    ASSERT_EQ(a.shape, b.shape);
    for (int64_t i = 0; i < a.element_count(); ++i) {
      ASSERT_NEAR(b.f32()[i], a.f32()[i], 1e-5 * std::max(1.0f, std::fabs(a.f32()[i]))) << i;
    }
  }
  fs::remove_all(dir);
}

TEST(Cli, NnrunWritesOutputsNamedByKerasLayer) {
  const AnyFixture f = any_fixture();
  const fs::path dir = fs::temp_directory_path() / ("nnd_cli_" + std::to_string(::getpid()));
  Result r = run(nnrun() + " " + f.model + " --input " + f.input_name + "=" + f.input_file +
                 " --output-dir " + dir.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("input  " + f.input_name), std::string::npos) << r.output;
  const fs::path out = dir / (f.output_name + ".npy");
  ASSERT_TRUE(fs::exists(out)) << r.output;
  const NpyArray a = read_npy(out.string());
  EXPECT_EQ(a.dtype, DType::kFloat32);
  EXPECT_EQ(a.shape[0], read_npy(f.input_file).shape[0]);  // batch first, same batch
  fs::remove_all(dir);
}

// A classifier's label (an ONNX ArgMax) is printed as int64 and written as an int64 .npy.
TEST(Cli, NnrunWritesArgMaxIndicesAsInt64) {
  const fs::path onnx = fs::path(NND_TEST_DATA_DIR) / "onnx";
  const fs::path dir = fs::temp_directory_path() / ("nnd_cli_i8_" + std::to_string(::getpid()));
  Result r = run(nnrun() + " " + (onnx / "argmax_classifier.onnx").string() + " --input x=" +
                 (onnx / "argmax_classifier.in.0.npy").string() + " --output-dir " + dir.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("output label: (3,) int64"), std::string::npos) << r.output;
  const NpyArray got = read_npy((dir / "label.npy").string());
  const NpyArray want = read_npy((onnx / "argmax_classifier.out.1.npy").string());
  ASSERT_EQ(got.dtype, DType::kInt64);
  EXPECT_EQ(got.shape, want.shape);
  EXPECT_EQ(got.bytes, want.bytes);
  fs::remove_all(dir);
}

TEST(Cli, NnrunPatternBatch) {
  const AnyFixture f = any_fixture();
  Result r = run(nnrun() + " " + f.model + " --batch 5");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("(5, "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("from pattern"), std::string::npos) << r.output;
}

TEST(Cli, NninfoPrintsTotals) {
  const AnyFixture f = any_fixture();
  Result r = run(nninfo() + " " + f.model);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("parameters"), std::string::npos);
  EXPECT_NE(r.output.find("FLOPs per sample"), std::string::npos);
  EXPECT_EQ(run(nninfo() + " /nonexistent.h5").status, 1);
}

}  // namespace
}  // namespace nnd::test
