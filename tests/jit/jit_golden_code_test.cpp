// Golden code hashes: the hash and size of the machine code the JIT generates, against files in
// this folder. A refactor that is meant to keep the code keeps every line; a change that alters
// code shows exactly which rows it touched, and the commit that changes a file says why.
//
//   golden_code.txt       x86: per (model, ISA, math mode) the engine's whole code, for the
//                         kitchen-sink graph, the real networks and every Keras and ONNX fixture.
//   golden_code_neon.txt  NEON: per (model, math mode, kernel) one kernel's code, for the same
//                         models, assembled here on the x86 host by the arm64 folder's generators
//                         (never run): the plan is lowered for Isa::kNeon with the arm64 folder's
//                         generator_emits, so it is the AArch64 build's plan. The AArch64 build
//                         checks the same file against its engine (tests/arm64).
//
// Code generation does not depend on the CPU running the test: every ISA is compiled here (with
// the CPU features forced) and only hashed, never run, so every machine checks every line. The
// models come from tests/support/golden_code.h: a missing ../shared/models or fixture list fails.
//
// To accept new code: NND_UPDATE_GOLDEN_CODE=1 build/tests/jit/nnd_test_jit
// --gtest_filter='JitGoldenCode.*' rewrites the files in the source tree; review the diff.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <asmjit/core.h>

#include "core/ir/shape_inference.h"
#include "core/jit/arm64/emit_function.h"
#include "core/jit/index_outputs.h"
#include "core/jit/kernel_name.h"
#include "core/jit/lower/lower.h"
#include "core/jit/lower/lower_context.h"
#include "core/passes/pass.h"
#include "tests/jit_common/jit_test_util.h"
#include "tests/support/golden_code.h"

namespace nnd::jit::test {
namespace {

namespace fs = std::filesystem;
namespace golden = nnd::test::golden;

const fs::path kGoldenFile = fs::path(NND_TEST_SOURCE_DIR) / "golden_code.txt";

const fs::path kGoldenNeonFile = fs::path(NND_TEST_SOURCE_DIR) / "golden_code_neon.txt";

const std::vector<golden::Model>& models() {
  static const std::vector<golden::Model> m = golden::models(true);
  return m;
}

const char* math_name(MathMode math) { return math == MathMode::kFast ? "fast" : "exact"; }

// "<network> <isa> <math> <hash> <bytes>" per line, sorted, for every network, ISA and math mode.
std::map<std::string, std::string> generate() {
  CpuFeatures all;
  for (Isa isa : all_isas()) all.add(isa);
  all.brand = "golden-code-test";
  JitConfig cfg;
  cfg.features = all;
  cfg.dump_dir = "";
  std::map<std::string, std::string> lines;
  for (const golden::Model& n : models()) {
    for (Isa isa : all_isas()) {
      for (MathMode math : {MathMode::kExact, MathMode::kFast}) {
        EngineOptions o;
        o.engine = EngineKind::kJit;
        o.isa = isa;
        o.math = math;
        auto e = make_jit_engine(n.graph, o, cfg);
        const std::string key = n.name + " " + isa_id(isa) + " " + math_name(math);
        std::ostringstream v;
        v << std::hex << e->code_hash() << std::dec << " " << e->code_bytes();
        lines[key] = v.str();
      }
    }
  }
  return lines;
}

// ---- NEON ----

// The AArch64 engine's kernels for `graph` (JitEngineImpl's order: the uint8 conversion of each
// input, then the plan), assembled into AArch64 code holders: name and bytes of each.
std::vector<std::pair<std::string, std::vector<uint8_t>>> neon_kernels(const Graph& graph, MathMode math) {
  Graph g = graph;
  verify_structure(g);
  infer_shapes(g);
  passes::make_default_pipeline("").run(g);
  g = split_index_outputs(g).body;
  LowerContext cx(g, Isa::kNeon, math);
  cx.generator_emits = [](Isa, const KernelSpec& spec) { return arm64::emits(spec); };
  lower_graph(cx);
  std::vector<std::pair<std::string, KernelSpec>> specs;
  for (ValueId v : g.inputs) {
    UnarySpec us;
    us.count = element_count(g.values[v].shape, g.values[v].name);
    us.u8 = true;
    KernelName kn;
    kn.dtype = "u8";
    kn.op = "to-f32";
    kn.isa = Isa::kNeon;
    specs.emplace_back(g.values[v].name + ": " + kn.str(), us);
  }
  for (const PlannedKernel& k : cx.kernels) specs.emplace_back(k.name, k.spec);
  std::vector<std::pair<std::string, std::vector<uint8_t>>> out;
  for (const auto& [name, spec] : specs) {
    asmjit::CodeHolder code;
    code.init(asmjit::Environment(asmjit::Arch::kAArch64));
    arm64::emit_function(code, spec, nullptr);
    code.flatten();
    code.resolveUnresolvedLinks();
    const asmjit::CodeBuffer& b = code.textSection()->buffer();
    out.emplace_back(name, std::vector<uint8_t>(b.data(), b.data() + b.size()));
  }
  return out;
}

// "<model> neon <math> <kernel index>" -> "<hash> <bytes> <kernel name>"; a model NEON does not
// compile has one row "<model> neon <math> -" -> "unsupported: <why>".
std::map<std::string, std::string> generate_neon() {
  std::map<std::string, std::string> rows;
  for (const golden::Model& n : models()) {
    for (MathMode math : {MathMode::kExact, MathMode::kFast}) {
      const std::string key = n.name + " neon " + math_name(math) + " ";
      try {
        const auto kernels = neon_kernels(n.graph, math);
        for (size_t i = 0; i < kernels.size(); ++i) {
          char index[24];
          std::snprintf(index, sizeof index, "%03zu", i);
          rows[key + index] = golden::hash_and_size(kernels[i].second) + " " + kernels[i].first;
        }
      } catch (const Error& e) {
        if (e.code() != ErrorCode::kUnsupported) throw;
        rows[key + "-"] = std::string("unsupported: ") + e.what();
      }
    }
  }
  return rows;
}

// Rows per ISA (the second field of the key), for the log.
std::string rows_per_isa(const std::map<std::string, std::string>& rows) {
  std::map<std::string, int> n;
  for (const auto& [k, v] : rows) {
    const size_t a = k.find(' ') + 1;
    ++n[k.substr(a, k.find(' ', a) - a)];
  }
  std::string s;
  for (const auto& [isa, count] : n) s += (s.empty() ? "" : ", ") + isa + " " + std::to_string(count);
  return s;
}

void check(const std::map<std::string, std::string>& got, const fs::path& file, int key_fields,
           const std::string& header, const char* what) {
  if (std::getenv("NND_UPDATE_GOLDEN_CODE")) {
    golden::write_rows(file, header, got);
    return;
  }
  const auto want = golden::read_rows(file, key_fields);
  ASSERT_FALSE(want.empty()) << file << " is missing or empty";
  const int changed = golden::compare_rows(got, want, file);
  if (changed) {
    ADD_FAILURE() << changed << " of " << got.size() << " " << what
                  << " rows differ from the recorded ones; if intended, regenerate with "
                     "NND_UPDATE_GOLDEN_CODE=1 and explain the change in the commit";
  }
  std::printf("[ golden ] %zu %s code hashes checked (%s)\n", got.size(), what, rows_per_isa(got).c_str());
}

TEST(JitGoldenCode, EveryModelIsaAndMathModeGeneratesTheRecordedCode) {
  check(generate(), kGoldenFile, 3,
        "# Golden code hashes (tests/jit/jit_golden_code_test.cpp): model isa math code-hash code-bytes.\n"
        "# Regenerate with NND_UPDATE_GOLDEN_CODE=1 (see the test) and say in the commit why the code changed.\n",
        "(model, x86 isa, math)");
}

TEST(JitGoldenCode, EveryNeonKernelOfEveryModelIsTheRecordedCode) {
  check(generate_neon(), kGoldenNeonFile, 4,
        "# Golden NEON code hashes (tests/jit/jit_golden_code_test.cpp, tests/arm64/neon_golden_code_test.cpp):\n"
        "# model neon math kernel-index code-hash code-bytes kernel-name.\n"
        "# Regenerate with NND_UPDATE_GOLDEN_CODE=1 (see the test) and say in the commit why the code changed.\n",
        "(model, neon, math, kernel)");
}

}  // namespace
}  // namespace nnd::jit::test
