// Golden code hashes: the hash and size of the machine code the JIT generates for each real robot
// network (Keras and ONNX), the kitchen-sink graph, every ISA and both math modes, against
// tests/jit/golden_code.txt. A refactor that is meant to keep the code keeps every line; a change
// that alters code shows exactly which (network, ISA, math) it touched, and the commit that changes
// the file says why.
//
// Code generation does not depend on the CPU running the test: every ISA is compiled here (with
// the CPU features forced) and only hashed, never run, so every machine checks every line.
//
// To accept new code: NND_UPDATE_GOLDEN_CODE=1 build/tests/jit/nnd_test_jit
// --gtest_filter='JitGoldenCode.*' rewrites the file in the source tree; review the diff.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "core/io/model_file.h"
#include "tests/jit_common/jit_test_util.h"
#include "tests/jit_common/kitchen_sink.h"

namespace nnd::jit::test {
namespace {

namespace fs = std::filesystem;

const fs::path kGoldenFile = fs::path(NND_TEST_SOURCE_DIR) / "golden_code.txt";

struct Network {
  std::string name;
  Graph graph;
};

std::vector<Network> networks() {
  std::vector<Network> out;
  out.push_back({"kitchen-sink", kitchen_sink()});
  for (const char* net : {"ball-penalty-multihead", "bop", "field-boundary", "referee-gesture"}) {
    for (const char* ext : {".h5", ".onnx"}) {
      const fs::path p = fs::path(NND_SHARED_MODELS_DIR) / (std::string(net) + ext);
      if (fs::exists(p)) out.push_back({p.filename().string(), load_model(p.string())});
    }
  }
  return out;
}

// "<network> <isa> <math> <hash> <bytes>" per line, sorted, for every network, ISA and math mode.
std::map<std::string, std::string> generate() {
  CpuFeatures all;
  for (Isa isa : all_isas()) all.add(isa);
  all.brand = "golden-code-test";
  JitConfig cfg;
  cfg.features = all;
  cfg.dump_dir = "";
  std::map<std::string, std::string> lines;
  for (const Network& n : networks()) {
    for (Isa isa : all_isas()) {
      for (MathMode math : {MathMode::kExact, MathMode::kFast}) {
        EngineOptions o;
        o.engine = EngineKind::kJit;
        o.isa = isa;
        o.math = math;
        auto e = make_jit_engine(n.graph, o, cfg);
        const std::string key = n.name + " " + isa_id(isa) + " " + (math == MathMode::kFast ? "fast" : "exact");
        std::ostringstream v;
        v << std::hex << e->code_hash() << std::dec << " " << e->code_bytes();
        lines[key] = v.str();
      }
    }
  }
  return lines;
}

std::map<std::string, std::string> read_golden() {
  std::map<std::string, std::string> lines;
  std::ifstream in(kGoldenFile);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream s(line);
    std::string net, isa, math, hash, bytes;
    s >> net >> isa >> math >> hash >> bytes;
    lines[net + " " + isa + " " + math] = hash + " " + bytes;
  }
  return lines;
}

TEST(JitGoldenCode, EveryNetworkIsaAndMathModeGeneratesTheRecordedCode) {
  const auto got = generate();
  ASSERT_GE(got.size(), 6u) << "no networks to hash";
  if (std::getenv("NND_UPDATE_GOLDEN_CODE")) {
    std::ofstream out(kGoldenFile);
    out << "# Golden code hashes (tests/jit/jit_golden_code_test.cpp): network isa math code-hash code-bytes.\n"
        << "# Regenerate with NND_UPDATE_GOLDEN_CODE=1 (see the test) and say in the commit why the code changed.\n";
    for (const auto& [k, v] : got) out << k << " " << v << "\n";
    std::printf("wrote %zu lines to %s\n", got.size(), kGoldenFile.c_str());
    return;
  }
  const auto want = read_golden();
  ASSERT_FALSE(want.empty()) << kGoldenFile << " is missing or empty";
  int changed = 0;
  for (const auto& [k, v] : got) {
    const auto it = want.find(k);
    if (it == want.end()) {
      ADD_FAILURE() << k << ": not in " << kGoldenFile.filename() << " (generated " << v << ")";
      ++changed;
    } else if (it->second != v) {
      ADD_FAILURE() << k << ": code changed: recorded " << it->second << ", generated " << v;
      ++changed;
    }
  }
  // A recorded network that is no longer generated (a model missing from ../shared/models) is not
  // a code change; say so instead of failing.
  for (const auto& [k, v] : want) {
    if (!got.count(k)) std::printf("[ note ] %s recorded but not generated here\n", k.c_str());
  }
  if (changed) {
    ADD_FAILURE() << changed << " of " << got.size()
                  << " (network, isa, math) generate other code than recorded; if intended, regenerate with "
                     "NND_UPDATE_GOLDEN_CODE=1 and explain the change in the commit";
  }
  std::printf("[ golden ] %zu (network, isa, math) code hashes checked\n", got.size());
}

}  // namespace
}  // namespace nnd::jit::test
