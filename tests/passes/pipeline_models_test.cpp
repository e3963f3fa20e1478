// The whole default pipeline on every Keras fixture and the real networks: reference(optimised)
// vs reference(original), and JIT (which runs the pipeline itself) vs reference(original) on every
// ISA this CPU has. Prints node counts before/after for the real networks.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include <unistd.h>

#include "core/io/keras_hdf5.h"
#include "core/io/model_file.h"
#include "core/jit/jit_engine.h"
#include "core/passes/pass.h"
#include "tests/passes/passes_test_util.h"
#include "tests/support/required_files.h"

namespace nnd::passes::test {
namespace {

namespace fs = std::filesystem;

std::vector<jit::Isa> host_isas() {
  const jit::CpuFeatures f = jit::detect_cpu_features();
  std::vector<jit::Isa> out;
  for (jit::Isa i : jit::all_isas()) {
    if (f.has(i)) out.push_back(i);
  }
  return out;
}

std::vector<std::vector<float>> run_engine(Engine& e, const Graph& g, const std::vector<std::vector<float>>& inputs,
                                           int64_t batch) {
  std::vector<InputView> views;
  for (const auto& in : inputs) views.push_back(InputView{DType::kFloat32, in.data()});
  std::vector<std::vector<float>> out;
  std::vector<float*> ptrs;
  for (ValueId v : g.outputs) out.emplace_back(static_cast<size_t>(batch * count_of(g.values[v].shape)), NAN);
  for (auto& o : out) ptrs.push_back(o.data());
  e.run(batch, views, ptrs);
  return out;
}

// Checks one model; returns {nodes before, nodes after}.
std::pair<size_t, size_t> check_model(const Graph& original, const std::string& name, int64_t batch) {
  Graph opt = original;
  make_default_pipeline("").run(opt);
  const auto in = random_inputs(original, batch, 99);
  const auto want = run_reference(original, in, batch);
  const double w = worst_scaled(run_reference(opt, in, batch), want);
  EXPECT_LE(w, 1e-5) << name << ": reference(optimised) vs reference(original)\n" << dump_graph(opt);
  if (jit::jit_unsupported_layers(original).empty()) {
    for (jit::Isa isa : host_isas()) {
      EngineOptions o;
      o.engine = EngineKind::kJit;
      o.isa = isa;
      auto jit = jit::make_jit_engine(original, o);
      const double wj = worst_scaled(run_engine(*jit, original, in, batch), want);
      EXPECT_LE(wj, 1e-5) << name << ": JIT(optimised) " << jit::isa_id(isa) << " vs reference(original)";
    }
  }
  return {original.nodes.size(), opt.nodes.size()};
}

TEST(PipelineModels, KerasFixtures) {
  const fs::path dir = fs::path(NND_TEST_DATA_DIR) / "fixtures";
  std::ifstream in(dir / "manifest.json");
  ASSERT_TRUE(in) << (dir / "manifest.json") << " is missing: " << nnd::test::kRequiredFileHint;
  const nlohmann::json m = nlohmann::json::parse(in);
  int models = 0, changed = 0;
  for (const auto& c : m.at("cases")) {
    for (const auto& [layout, file] : c.at("models").items()) {
      const std::string name = c.at("name").get<std::string>() + "/" + layout;
      const Graph g = load_model((dir / file.get<std::string>()).string());
      const auto [before, after] = check_model(g, name, 2);
      ++models;
      if (before != after) ++changed;
    }
  }
  std::printf("[ pipeline ] %d fixture models checked, %d rewritten\n", models, changed);
  // 219 models in the manifest, 63 of which the passes rewrite: an empty list, or passes that
  // never fire, must not pass.
  EXPECT_GE(models, 200);
  EXPECT_GT(changed, 0);
}

TEST(PipelineModels, RealNetworks) {
  const fs::path models = NND_SHARED_MODELS_DIR;
  for (const char* f : {"bop.h5", "ball-penalty-multihead.h5", "field-boundary.h5", "referee-gesture.h5"}) {
    if (!nnd::test::require_file(models / f)) continue;
    const Graph g = load_keras_h5((models / f).string());
    const auto [before, after] = check_model(g, f, 2);
    std::printf("[ nodes ] %s: %zu before, %zu after the passes\n", f, before, after);
    EXPECT_LT(after, before) << f << ": the passes rewrite every robot network";
  }
}

TEST(PipelineModels, DumpWritesTheIrAfterEachPass) {
  Builder b(31);
  const ValueId x = b.input({4, 4, 2});
  ValueId v = b.add(b.conv(3, 2, 3), {x});
  v = b.add(b.bn(3), {v});
  v = b.add(Builder::relu(), {v});
  b.output(b.add(IdentityParams{}, {v}), "out");
  Graph g = b.finish();
  const fs::path dir = fs::temp_directory_path() / ("nnd-passes-dump-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  make_default_pipeline(dir.string()).run(g);
  for (const char* f : {"ir-00-input.txt", "ir-01-expand_recurrent.txt", "ir-02-drop_identity.txt",
                        "ir-03-fold_batchnorm.txt", "ir-04-fuse_add.txt", "ir-05-fuse_activation.txt"}) {
    EXPECT_TRUE(fs::exists(dir / f)) << f;
  }
  std::ifstream last(dir / "ir-05-fuse_activation.txt");
  const std::string text((std::istreambuf_iterator<char>(last)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("Conv(%0)"), std::string::npos) << text;
  EXPECT_NE(text.find(" relu"), std::string::npos) << text;
  EXPECT_NE(text.find("output 'out'"), std::string::npos) << text;
  EXPECT_EQ(g.nodes.size(), 1u);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace nnd::passes::test
