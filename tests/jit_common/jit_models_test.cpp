// Whole models: every Keras fixture whose layers the JIT compiles (JIT vs Keras' outputs and vs
// the reference engine) and the real robot networks in ../shared/models (JIT vs reference), on
// every ISA this CPU has.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>

#include "core/io/keras_hdf5.h"
#include "core/io/model_file.h"
#include "core/io/model_inputs.h"
#include "core/io/npy.h"
#include "core/util/error.h"
#include "tests/jit_common/jit_test_util.h"
#include "tests/support/compare.h"
#include "tests/support/listed_arrays.h"
#include "tests/support/required_files.h"

namespace nnd::jit::test {
namespace {

namespace fs = std::filesystem;

struct Loaded {
  Graph g;
  ModelInputs inputs;
};

// `name_key` names the manifest field holding each input's name in this model file ("name" for
// the .h5 files, "onnx_name" for their ONNX twins).
Loaded load(const fs::path& model, const fs::path& dir, const nlohmann::json& spec,
            const char* name_key = "name") {
  Loaded l{load_model(model.string()), {}};
  l.inputs = nnd::test::prepare_listed_inputs(l.g, spec.at("inputs"), dir, name_key);
  return l;
}

ModelOutputs run(Engine& e, const Loaded& l) {
  ModelOutputs out = allocate_outputs(l.g, l.inputs.batch);
  const auto views = l.inputs.views();
  const auto outs = out.views();
  e.run(l.inputs.batch, views, outs);
  return out;
}

// The JIT's outputs for `l` on every ISA this CPU runs, after the reference engine's `want`:
// calls check(isa, got) per ISA. Returns false (after a failure) when the JIT cannot compile it.
template <class Check>
bool run_jit_on_every_isa(const std::string& name, const Loaded& l, ModelOutputs& want, Check&& check) {
  if (const auto un = jit_unsupported_layers(l.g); !un.empty()) {
    ADD_FAILURE() << name << ": " << un.front().message;  // an uncompiled layer is a failure, never a skip
    return false;
  }
  auto ref = make_reference_engine(l.g);
  want = run(*ref, l);
  for (Isa isa : all_isas()) {
    if (!host().has(isa)) continue;
    EngineOptions o;
    o.engine = EngineKind::kJit;
    o.isa = isa;
    auto jit = make_jit_engine(l.g, o);
    check(isa, run(*jit, l));
  }
  return true;
}

// Runs a loaded fixture in the JIT on every ISA of this CPU and compares each output with the
// file's expected values (`oracle` names them in messages) and with the reference engine, within
// `tol` of max(1, |expected|). Returns false (after a failure) when the JIT does not compile it.
bool check_jit_on_every_isa(const std::string& name, const Loaded& l, const fs::path& dir,
                            const nlohmann::json& outputs, const std::string& oracle, double tol) {
  ModelOutputs want;
  return run_jit_on_every_isa(name, l, want, [&](Isa isa, const ModelOutputs& got) {
    for (size_t i = 0; i < got.dtypes.size(); ++i) {
      const NpyArray expected = nnd::test::read_listed_npy(dir, outputs[i]);
      const nnd::test::Agreement file = nnd::test::compare(got, i, expected);
      const nnd::test::Agreement refa = nnd::test::compare(got, want, i);
      if (tol > kTol) {
        std::printf("[ float32-limited ] %s %s: %.3g of max(1,|expected|) (fixture tolerance 1e-5)\n",
                    name.c_str(), isa_id(isa), file.max_scaled);
      }
      EXPECT_LE(file.max_scaled, tol) << name << " " << isa_id(isa) << " vs " << oracle;
      EXPECT_LE(refa.max_scaled, tol) << name << " " << isa_id(isa) << " vs reference";
      EXPECT_EQ(file.nonfinite, 0) << name;
    }
  });
}

TEST(JitModels, KerasFixtures) {
  const fs::path dir = fs::path(NND_TEST_DATA_DIR) / "fixtures";
  std::ifstream in(dir / "manifest.json");
  ASSERT_TRUE(in) << (dir / "manifest.json") << " is missing: " << ::nnd::test::kRequiredFileHint;
  const nlohmann::json m = nlohmann::json::parse(in);
  int compiled = 0, skipped = 0;
  for (const auto& c : m.at("cases")) {
    for (const auto& [layout, file] : c.at("models").items()) {
      const std::string name = c.at("name").get<std::string>() + "/" + layout;
      Loaded l = load(dir / file.get<std::string>(), dir, c);
      // A fixture whose note says float32 inference itself (tfjs) misses the tolerance (uint8
      // inputs: cancellation of 0..255 products) is held to 2x; its figure is printed.
      const bool f32_limited = c.contains("oracle_note") &&
                               c.at("oracle_note").get<std::string>().find("float32 rounding") != std::string::npos;
      if (check_jit_on_every_isa(name, l, dir, c.at("outputs"), "Keras", f32_limited ? 2 * kTol : kTol)) {
        ++compiled;
      } else {
        ++skipped;
      }
    }
  }
  std::printf("[ fixtures ] %d fixture models compiled and checked on every ISA, %d not compiled (failures)\n",
              compiled, skipped);
  // The manifest lists 219 models: an empty or unreadable case list must not pass as "all good".
  EXPECT_GE(compiled, 200);
}

// Every ONNX fixture the loader accepts (tests/fixtures/onnx_fixtures_test.cpp lists the ones it
// refuses), JIT against the file's expected outputs and against the reference engine.
TEST(JitModels, OnnxFixtures) {
  const fs::path dir = fs::path(NND_TEST_DATA_DIR) / "onnx";
  std::ifstream in(dir / "manifest.json");
  ASSERT_TRUE(in) << (dir / "manifest.json") << " is missing: " << ::nnd::test::kRequiredFileHint;
  const nlohmann::json m = nlohmann::json::parse(in);
  int compiled = 0;
  for (const auto& c : m.at("cases")) {
    const std::string name = c.at("name").get<std::string>();
    Loaded l;
    try {
      l = load(dir / c.at("model").get<std::string>(), dir, c);
    } catch (const Error&) {
      continue;  // a refusal, checked by the fixtures test
    }
    if (check_jit_on_every_isa(name, l, dir, c.at("outputs"), c.at("expected_from").get<std::string>(), kTol)) {
      ++compiled;
    }
  }
  std::printf("[ onnx ] %d fixtures compiled and compared on every ISA of this CPU\n", compiled);
  EXPECT_GT(compiled, 60);
}

TEST(JitModels, RealNetworks) {
  const fs::path data = fs::path(NND_TEST_DATA_DIR) / "real";
  const fs::path models = NND_SHARED_MODELS_DIR;
  std::ifstream in(data / "manifest.json");
  ASSERT_TRUE(in) << (data / "manifest.json") << " is missing: " << ::nnd::test::kRequiredFileHint;
  const nlohmann::json manifest = nlohmann::json::parse(in);
  ASSERT_FALSE(manifest.at("cases").empty());
  for (const auto& [c, model_key, name_key] :
       [&] {
         std::vector<std::tuple<nlohmann::json, const char*, const char*>> runs;
         for (const auto& c : manifest.at("cases")) {
           runs.emplace_back(c, "model", "name");      // the Keras .h5 file
           runs.emplace_back(c, "onnx", "onnx_name");  // its ONNX twin
         }
         return runs;
       }()) {
    const std::string model = c.at(model_key).get<std::string>();
    if (!::nnd::test::require_file(models / model)) continue;
    Loaded l = load(models / model, data, c, name_key);
    ModelOutputs want;
    run_jit_on_every_isa(model, l, want, [&](Isa isa, const ModelOutputs& got) {
      for (size_t i = 0; i < got.dtypes.size(); ++i) {
        const nnd::test::Agreement a = nnd::test::compare(got, want, i);
        std::printf("[ agreement ] %s %s %s: max abs %.3g, max scaled %.3g\n", model.c_str(), isa_id(isa),
                    l.g.output_names[i].c_str(), a.max_abs, a.max_scaled);
        EXPECT_LE(a.max_scaled, kTol) << model << " " << isa_id(isa) << " output " << i;
        EXPECT_EQ(a.nonfinite, 0);
      }
    });
  }
}

}  // namespace
}  // namespace nnd::jit::test
