// The NEON golden code hashes against the AArch64 build's own engine: tests/jit records every NEON
// kernel of every model (tests/support/golden_code.h) by assembling the arm64 folder's generators
// on the x86 host, after lowering for Isa::kNeon with the arm64 folder's generator_emits. Here the
// real NEON engine compiles the same models and every kernel must match its row: so the host's
// rows are the code the robot runs, and a refactor that keeps them keeps the AArch64 engine's code.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include "core/jit/jit_engine.h"
#include "core/util/error.h"
#include "tests/support/golden_code.h"

namespace nnd::jit::test {
namespace {

namespace golden = nnd::test::golden;

TEST(NeonGoldenCode, TheEngineGeneratesTheKernelsRecordedOnTheHost) {
  const std::filesystem::path file = NND_GOLDEN_NEON_FILE;
  const auto want = golden::read_rows(file, 4);
  ASSERT_FALSE(want.empty()) << file << " is missing or empty";
  CpuFeatures neon;
  neon.add(Isa::kNeon);
  neon.brand = "golden-code-test";
  JitConfig cfg;
  cfg.features = neon;
  cfg.dump_dir = "";
  std::map<std::string, std::string> got;
  for (const golden::Model& m : golden::models(true)) {
    for (MathMode math : {MathMode::kExact, MathMode::kFast}) {
      const std::string key = m.name + " neon " + (math == MathMode::kFast ? "fast" : "exact") + " ";
      EngineOptions o;
      o.engine = EngineKind::kJit;
      o.isa = Isa::kNeon;
      o.math = math;
      o.threads = 1;
      try {
        const auto e = make_jit_engine(m.graph, o, cfg);
        for (size_t i = 0; i < e->kernels().size(); ++i) {
          char index[24];
          std::snprintf(index, sizeof index, "%03zu", i);
          const CompiledKernel& k = e->kernels()[i];
          got[key + index] = golden::hash_and_size(k.bytes) + " " + k.name;
        }
      } catch (const Error& e) {
        if (e.code() != ErrorCode::kUnsupported) throw;
        got[key + "-"] = std::string("unsupported: ") + e.what();
      }
    }
  }
  const int changed = golden::compare_rows(got, want, file);
  EXPECT_EQ(changed, 0) << "the AArch64 engine's code differs from the rows tests/jit records on the host";
  std::printf("[ golden ] %zu NEON kernel rows of the engine checked against %s\n", got.size(), file.c_str());
}

}  // namespace
}  // namespace nnd::jit::test
