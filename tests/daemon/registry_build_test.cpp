// The model registry builder: parallel compile, reuse on reload, version and signature rules, and
// a broken model leaving the served set alone.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "core/engine/engine_options.h"
#include "core/engine_factory/engine_factory.h"
#include "core/io/model_file.h"
#include "core/ir/cost.h"
#include "core/jit/cpu_features.h"
#include "core/jit/isa.h"
#include "core/util/error.h"
#include "daemon/registry/model_memory.h"
#include "daemon/registry/model_table.h"
#include "daemon/registry/registry_builder.h"

namespace fs = std::filesystem;
using namespace nnd::daemon;

namespace {

const fs::path kModels = fs::path(NND_SOURCE_DIR) / "examples" / "models";

class RegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("nnd_registry_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    for (const char* f : {"ball_patch.h5", "field_boundary.h5", "detector.h5"}) {
      fs::copy_file(kModels / f, dir_ / f, fs::copy_options::overwrite_existing);
    }
  }
  void TearDown() override { fs::remove_all(dir_); }

  ModelSettings model(const std::string& name, const std::string& file) {
    ModelSettings s;
    s.name = name;
    s.path = (dir_ / file).string();
    s.options.engine_auto = true;
    return s;
  }

  std::vector<ModelSettings> examples() {
    std::vector<ModelSettings> v = {model("ball", "ball_patch.h5"),
                                    model("field_boundary", "field_boundary.h5"),
                                    model("detector", "detector.h5")};
    v[0].max_batch = 64;
    v[2].options.input_dtypes = {{"input", nnd::DType::kUInt8}};
    return v;
  }

  // Gives the file a new modification time without changing its bytes.
  void touch(const std::string& file) {
    const fs::path p = dir_ / file;
    fs::last_write_time(p, fs::last_write_time(p) + std::chrono::seconds(2));
  }

  BuildOptions opts() {
    BuildOptions o;
    o.compile_threads = 2;
    return o;
  }

  // Build options whose log lines (any level) are collected in `lines`.
  struct Logs {
    std::mutex mu;
    std::vector<std::string> lines;
  };
  BuildOptions opts_logging_to(Logs& logs) {
    BuildOptions o = opts();
    o.log = [&logs](LogLevel, const std::string& m) {
      std::lock_guard<std::mutex> lk(logs.mu);
      logs.lines.push_back(m);
    };
    return o;
  }

  fs::path dir_;
};

}  // namespace

TEST_F(RegistryTest, BuildsEveryModelWithOneEngineWhateverTheWorkerCount) {
  BuildStats st;
  auto set = build_model_set(examples(), nullptr, opts(), &st);
  EXPECT_EQ(set->generation, 1u);
  ASSERT_EQ(set->models.size(), 3u);
  EXPECT_EQ(st.compiled, 3u);
  EXPECT_EQ(st.reused, 0u);
  for (const auto& m : set->models) {
    EXPECT_EQ(m->version, 1u);
    ASSERT_TRUE(m->engine);  // one engine serves all three workers
    EXPECT_EQ(m->engine_name, m->engine->name());
    EXPECT_NE(m->signature, 0u);
    EXPECT_FALSE(m->engine_name.empty());
    EXPECT_GT(m->compile_ms, 0.0);
    EXPECT_GT(m->parameters, 0);
    EXPECT_GT(m->flops_per_sample, 0);
    EXPECT_NE(m->file_hash, 0u);
  }
  const auto ball = set->find("ball");
  ASSERT_TRUE(ball);
  EXPECT_EQ(ball->settings.max_batch, 64u);
  ASSERT_EQ(ball->input_sample_bytes.size(), 1u);
  EXPECT_EQ(ball->input_sample_bytes[0], 32u * 32u * 1u * 4u);  // float32 (32, 32, 1)
  ASSERT_EQ(ball->output_sample_bytes.size(), 1u);
  EXPECT_EQ(ball->output_sample_bytes[0], 3u * 4u);
  const auto det = set->find("detector");
  ASSERT_TRUE(det);
  ASSERT_EQ(det->input_dtypes.size(), 1u);
  EXPECT_EQ(det->input_dtypes[0], nnd::DType::kUInt8);          // the config's override
  EXPECT_EQ(det->input_sample_bytes[0], 240u * 320u * 2u);      // one byte per element
  EXPECT_EQ(det->output_sample_bytes[0], 15u * 20u * 3u * 4u);
  EXPECT_EQ(set->find("nope"), nullptr);

  // The --check table lists every model.
  const std::string table = format_model_table(*set);
  for (const char* s : {"MODEL", "ball", "field_boundary", "detector", "patch(32,32,1)",
                        "input(240,320,2):u8", "COMPILE_MS", "CODE_BYTES", "FLOPS", "PARAMS"}) {
    EXPECT_NE(table.find(s), std::string::npos) << s << "\n" << table;
  }
}

TEST_F(RegistryTest, CompilesInParallel) {
  std::vector<ModelSettings> v;
  for (int i = 0; i < 8; ++i) {
    std::string name = "m";
    name += std::to_string(i);
    v.push_back(model(name, "field_boundary.h5"));
  }
  std::mutex mu;
  std::set<std::thread::id> threads;
  BuildOptions o = opts();
  o.compile_threads = 4;
  o.log = [&](LogLevel, const std::string& msg) {
    if (msg.find(": loading ") != std::string::npos) {
      std::lock_guard<std::mutex> lk(mu);
      threads.insert(std::this_thread::get_id());
    }
  };
  auto set = build_model_set(v, nullptr, o);
  ASSERT_EQ(set->models.size(), 8u);
  EXPECT_GE(threads.size(), 2u) << "models were not compiled on several threads";
  EXPECT_EQ(threads.count(std::this_thread::get_id()), 0u);
  // Same file, same settings but the name: same layout, same signature.
  EXPECT_EQ(set->models[0]->signature, set->models[7]->signature);
}

TEST_F(RegistryTest, ReloadReusesUnchangedModelsAndKeepsTheirVersion) {
  auto first = build_model_set(examples(), nullptr, opts());
  BuildStats st;
  auto second = build_model_set(examples(), first.get(), opts(), &st);
  EXPECT_EQ(second->generation, 2u);
  EXPECT_EQ(st.reused, 3u);
  EXPECT_EQ(st.compiled, 0u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(second->models[i].get(), first->models[i].get());  // the very same object
    EXPECT_EQ(second->models[i]->version, 1u);
  }
  // Order follows the new config; a new model starts at version 1; a dropped one disappears.
  auto v = examples();
  std::swap(v[0], v[2]);
  v.pop_back();                                   // drop "ball"
  v.push_back(model("ball2", "ball_patch.h5"));   // add
  auto third = build_model_set(v, second.get(), opts(), &st);
  EXPECT_EQ(st.reused, 2u);
  EXPECT_EQ(st.compiled, 1u);
  ASSERT_EQ(third->models.size(), 3u);
  EXPECT_EQ(third->models[0]->settings.name, "detector");
  EXPECT_EQ(third->models[0].get(), first->find("detector").get());
  EXPECT_EQ(third->find("ball"), nullptr);
  EXPECT_EQ(third->find("ball2")->version, 1u);
}

TEST_F(RegistryTest, ReuseIsDecidedByContentAndSchedulingChangesDoNotRecompile) {
  auto first = build_model_set(examples(), nullptr, opts());
  const auto ball1 = first->find("ball");
  const auto fb1 = first->find("field_boundary");

  // Same bytes, newer file: nothing to recompile, the same objects.
  touch("ball_patch.h5");
  BuildStats st;
  auto second = build_model_set(examples(), first.get(), opts(), &st);
  EXPECT_EQ(st.compiled, 0u);
  EXPECT_EQ(st.reused, 3u);
  EXPECT_EQ(second->find("ball").get(), ball1.get());

  // A different network under the same name, its modification time kept (`cp -p`): version 2,
  // new signature.
  const auto mtime = fs::last_write_time(dir_ / "ball_patch.h5");
  fs::copy_file(dir_ / "field_boundary.h5", dir_ / "ball_patch.h5", fs::copy_options::overwrite_existing);
  fs::last_write_time(dir_ / "ball_patch.h5", mtime);
  auto third = build_model_set(examples(), second.get(), opts(), &st);
  EXPECT_EQ(st.compiled, 1u);
  const auto ball3 = third->find("ball");
  EXPECT_EQ(ball3->version, 2u);
  EXPECT_NE(ball3->signature, ball1->signature);
  EXPECT_EQ(third->find("field_boundary").get(), fb1.get());

  // Scheduling settings only: the same engine in a new ServedModel, same version; max_batch is
  // part of the signature (clients must re-read it), batch_delay_us and priority are not.
  auto v = examples();
  v[1].batch_delay_us = 700;
  v[1].priority = 5;
  auto fourth = build_model_set(v, third.get(), opts(), &st);
  EXPECT_EQ(st.compiled, 0u);
  EXPECT_EQ(st.rescheduled, 1u);
  const auto fb4 = fourth->find("field_boundary");
  EXPECT_NE(fb4.get(), fb1.get());
  EXPECT_EQ(fb4->engine.get(), fb1->engine.get());
  EXPECT_EQ(fb4->version, 1u);
  EXPECT_EQ(fb4->signature, fb1->signature);
  EXPECT_EQ(fb4->settings.batch_delay_us, 700u);
  v[1].max_batch = 3;
  auto fifth = build_model_set(v, fourth.get(), opts(), &st);
  EXPECT_EQ(st.compiled, 0u);
  EXPECT_EQ(fifth->find("field_boundary")->engine.get(), fb1->engine.get());
  EXPECT_NE(fifth->find("field_boundary")->signature, fb1->signature);

  // An input dtype override changes what is compiled and the layout.
  v[1].options.input_dtypes = {{"input", nnd::DType::kUInt8}};
  auto sixth = build_model_set(v, fifth.get(), opts(), &st);
  EXPECT_EQ(st.compiled, 1u);
  EXPECT_EQ(sixth->find("field_boundary")->version, 2u);
  EXPECT_NE(sixth->find("field_boundary")->signature, fifth->find("field_boundary")->signature);
}

// A served model keeps its interface only: the engine holds the network and its weights.
TEST_F(RegistryTest, ServedModelsKeepNoWeights) {
  auto set = build_model_set(examples(), nullptr, opts());
  for (const auto& m : set->models) {
    EXPECT_TRUE(m->graph.nodes.empty()) << m->settings.name;
    EXPECT_EQ(m->graph.inputs.size(), m->engine->graph().inputs.size());
    EXPECT_EQ(m->graph.outputs.size(), m->engine->graph().outputs.size());
    EXPECT_GT(m->parameters, 0);
  }
}

TEST_F(RegistryTest, BrokenModelKeepsTheOldSet) {
  ModelRegistry registry;
  registry.publish(build_model_set(examples(), nullptr, opts()));
  const auto served = registry.current();

  // Corrupt one file: the build fails naming that model, nothing is published.
  {
    std::ofstream f(dir_ / "detector.h5", std::ios::binary | std::ios::trunc);
    f << "this is not an HDF5 file";
  }
  touch("detector.h5");
  try {
    auto next = build_model_set(examples(), registry.current().get(), opts());
    registry.publish(next);
    FAIL() << "a broken model must fail the build";
  } catch (const BuildError& e) {
    ASSERT_EQ(e.failures().size(), 1u);
    EXPECT_NE(e.failures()[0].find("model 'detector'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("1 of 3 model(s) failed"), std::string::npos);
  }
  EXPECT_EQ(registry.current().get(), served.get());
  EXPECT_EQ(served->find("detector")->version, 1u);
  EXPECT_EQ(served->models.size(), 3u);
}

TEST_F(RegistryTest, SkipFailedLeavesOnlyTheBrokenModelOut) {
  {
    std::ofstream f(dir_ / "detector.h5", std::ios::binary | std::ios::trunc);
    f << "this is not an HDF5 file";
  }
  BuildOptions o = opts();
  o.skip_failed = true;
  BuildStats st;
  auto set = build_model_set(examples(), nullptr, o, &st);
  ASSERT_EQ(set->models.size(), 2u);
  EXPECT_NE(set->find("ball"), nullptr);
  EXPECT_EQ(set->find("detector"), nullptr);
  ASSERT_EQ(st.skipped.size(), 1u);
  EXPECT_NE(st.skipped[0].find("model 'detector'"), std::string::npos) << st.skipped[0];
  EXPECT_EQ(st.compiled, 2u);

  // A required model still fails the build.
  auto v = examples();
  for (auto& m : v) m.required = m.name == "detector";
  EXPECT_THROW(build_model_set(v, nullptr, o), BuildError);
}

TEST_F(RegistryTest, UnknownInputOverrideNamesTheInput) {
  auto v = examples();
  v[0].options.input_dtypes = {{"no_such_input", nnd::DType::kUInt8}};
  try {
    build_model_set(v, nullptr, opts());
    FAIL();
  } catch (const BuildError& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("model 'ball'"), std::string::npos) << w;
    EXPECT_NE(w.find("no input named 'no_such_input'"), std::string::npos) << w;
    EXPECT_NE(w.find("patch"), std::string::npos) << w;  // lists the real inputs
  }
}

TEST_F(RegistryTest, EngineAutoFallsBackAndSaysSo) {
  Logs log;
  auto set = build_model_set({model("ball", "ball_patch.h5")}, nullptr, opts_logging_to(log));
  const std::vector<std::string>& logs = log.lines;
  const auto& m = *set->models[0];
  if (m.engine_name == "reference") {
    bool said = false;
    for (const auto& l : logs) said |= l.find("engine auto") != std::string::npos;
    EXPECT_TRUE(said) << "auto fell back to the reference engine without logging it";
  }
  // Every compile is logged with its time and code size.
  bool compiled = false;
  for (const auto& l : logs) {
    compiled |= l.find("model 'ball' v1: compiled in") != std::string::npos &&
                l.find("code ") != std::string::npos;
  }
  EXPECT_TRUE(compiled);
}

// isa auto's choice is logged per model at info level; with a calibration cache a second build
// (a restart) reads the choice back instead of measuring; a corrupt cache is a warning, and the
// process's earlier choice serves.
TEST_F(RegistryTest, IsaChoiceIsLoggedAndCached) {
  std::vector<std::pair<LogLevel, std::string>> logs;
  std::mutex mu;
  BuildOptions o = opts();
  o.log = [&](LogLevel level, const std::string& m) {
    std::lock_guard<std::mutex> lk(mu);
    logs.emplace_back(level, m);
  };
  const fs::path cache = dir_ / "cache" / "isa-calibration";
  o.isa_cache = cache.string();
  auto said = [&](const std::string& what, LogLevel at) {
    for (const auto& [level, m] : logs) {
      if (level == at && m.find(what) != std::string::npos) return true;
    }
    return false;
  };
  std::vector<ModelSettings> ball = {model("ball", "ball_patch.h5")};
  build_model_set(ball, nullptr, o);
  // Rows with float code of their own (extension rows such as neon-dotprod are not candidates).
  const bool several_isas = std::count_if(nnd::jit::all_isas().begin(), nnd::jit::all_isas().end(), [](nnd::jit::Isa isa) {
                              return nnd::jit::detect_cpu_features().has(isa);
                            }) > 1;
  ASSERT_FALSE(said("serving the float64 reference engine", LogLevel::kWarning)) << "the JIT did not compile ball_patch.h5";
  if (!several_isas) {
    std::string only = "model 'ball': isa ";
    only += nnd::jit::isa_id(nnd::jit::all_isas().front());
    only += " (auto, the only ISA";
    EXPECT_TRUE(said(only, LogLevel::kInfo));
    EXPECT_FALSE(fs::exists(cache));
    return;
  }
  EXPECT_TRUE(said("model 'ball': isa ", LogLevel::kInfo));
  EXPECT_TRUE(said("(auto, measured: sse4.1 ", LogLevel::kInfo));
  ASSERT_TRUE(fs::exists(cache));
  logs.clear();
  auto again = build_model_set(ball, nullptr, o);
  EXPECT_TRUE(said("(auto, from the calibration cache " + cache.string(), LogLevel::kInfo));
  EXPECT_FALSE(said("measured:", LogLevel::kInfo));
  // A corrupt cache: a warning naming it, the model still served.
  std::ofstream(cache) << "not a cache\n";
  logs.clear();
  auto third = build_model_set(ball, nullptr, o);
  ASSERT_EQ(third->models.size(), 1u);
  EXPECT_TRUE(said("model 'ball': ISA calibration cache " + cache.string() + ": not a calibration cache", LogLevel::kWarning));
  // The process still knows its choice: a reload serves the same ISA instead of measuring anew.
  EXPECT_TRUE(said("(auto, as chosen earlier in this process", LogLevel::kInfo));
  EXPECT_FALSE(said("(auto, measured: ", LogLevel::kInfo));
}

// The real engines of this build: `engine: jit` compiles this model on x86-64 and AArch64 alike,
// and `engine: auto` serves the JIT too.
TEST_F(RegistryTest, EngineJitCompilesOnThisArchitecture) {
  ModelSettings jit = model("ball", "ball_patch.h5");
  jit.options.engine_auto = false;
  jit.options.engine.engine = nnd::EngineKind::kJit;
  const auto m = compile_model(jit, false, {});
  EXPECT_EQ(m->engine_name.rfind("jit-", 0), 0u) << m->engine_name;
  const auto automatic = compile_model(model("ball", "ball_patch.h5"), false, {});
  // Which ISA auto takes is measured (isa_calibration.h); that it is the JIT is what matters here.
  EXPECT_EQ(automatic->engine_name.rfind("jit-", 0), 0u) << automatic->engine_name;
}

// `precision: int8` is refused while compiling, as libnnd refuses it (make_model_engine), naming the
// model; `engine: auto` does not fall back to the reference engine for it.
TEST_F(RegistryTest, PrecisionInt8IsRefusedNamingTheModel) {
  ModelSettings m = model("ball", "ball_patch.h5");
  m.options.precision = nnd::Precision::kInt8;
  try {
    compile_model(m, false, {});
    FAIL() << "precision int8 compiled";
  } catch (const nnd::Error& e) {
    EXPECT_EQ(e.code(), nnd::ErrorCode::kUnsupported) << e.what();
    const std::string w = e.what();
    EXPECT_NE(w.find("model 'ball'"), std::string::npos) << w;
    EXPECT_NE(w.find("precision int8 is not available"), std::string::npos) << w;
  }
  // A change of precision is a change of what is compiled (a reload recompiles the model).
  ModelSettings f = model("ball", "ball_patch.h5");
  EXPECT_FALSE(compile_settings_equal(m, f));
  EXPECT_TRUE(compile_settings_equal(f, model("ball", "ball_patch.h5")));
}

// `threads: 2` reaches the engine, and the served model says how many cores one run uses (the
// dispatcher schedules it as a split model) and logs it; one thread is not a split model.
TEST_F(RegistryTest, SplitModelKnowsItsThreadsAndSaysSo) {
  Logs log;
  std::vector<ModelSettings> v = {model("split", "detector.h5"), model("whole", "detector.h5")};
  v[0].options.engine.threads = 2;
  auto set = build_model_set(v, nullptr, opts_logging_to(log));
  const std::vector<std::string>& logs = log.lines;
  EXPECT_EQ(set->find("split")->run_threads, 2);
  EXPECT_EQ(set->find("whole")->run_threads, 1);
  bool said = false, said_whole = false;
  for (const auto& l : logs) {
    said |= l.find("model 'split' v1: compiled in") != std::string::npos && l.find(" on 2 threads,") != std::string::npos;
    said_whole |= l.find("model 'whole' v1: compiled in") != std::string::npos && l.find(" threads,") != std::string::npos;
  }
  EXPECT_TRUE(said);
  EXPECT_FALSE(said_whole);
}

// An engine factory standing in for a JIT that fails with `code`; the reference engine is made.
EngineFactory jit_failing_with(nnd::ErrorCode code, std::vector<nnd::EngineKind>* asked) {
  return [code, asked](const nnd::Graph& g, const nnd::EngineOptions& o) -> std::unique_ptr<nnd::Engine> {
    asked->push_back(o.engine);
    if (o.engine == nnd::EngineKind::kJit) throw nnd::Error(code, "JIT: failing as the test asks");
    return nnd::make_engine(g, o);
  };
}

TEST_F(RegistryTest, EngineAutoFallsBackWithAWarningWhenTheCpuLacksTheIsa) {
  std::vector<std::pair<LogLevel, std::string>> logs;
  std::mutex mu;
  std::vector<nnd::EngineKind> asked;
  BuildOptions o = opts();
  o.log = [&](LogLevel level, const std::string& m) {
    std::lock_guard<std::mutex> lk(mu);
    logs.emplace_back(level, m);
  };
  o.make_engine = jit_failing_with(nnd::ErrorCode::kIsaUnavailable, &asked);
  auto set = build_model_set({model("ball", "ball_patch.h5")}, nullptr, o);
  EXPECT_EQ(set->models[0]->engine_name, "reference");
  EXPECT_EQ(asked, (std::vector<nnd::EngineKind>{nnd::EngineKind::kJit, nnd::EngineKind::kReference}));
  bool warned = false;
  for (const auto& [level, m] : logs) {
    warned |= level == LogLevel::kWarning && m.find("model 'ball': engine auto: the JIT is unavailable (isa-unavailable") !=
                                                 std::string::npos;
  }
  EXPECT_TRUE(warned) << "the fallback to the reference engine was not logged as a warning";
}

TEST_F(RegistryTest, EngineAutoDoesNotHideAJitInternalError) {
  for (nnd::ErrorCode code : {nnd::ErrorCode::kInternal, nnd::ErrorCode::kLimit}) {
    std::vector<nnd::EngineKind> asked;
    BuildOptions o = opts();
    o.make_engine = jit_failing_with(code, &asked);
    try {
      build_model_set({model("ball", "ball_patch.h5")}, nullptr, o);
      ADD_FAILURE() << nnd::error_code_name(code) << ": engine auto served the model anyway";
    } catch (const BuildError& e) {
      ASSERT_EQ(e.failures().size(), 1u);
      EXPECT_NE(e.failures()[0].find("model 'ball': engine auto: JIT: failing as the test asks"), std::string::npos)
          << e.what();
    }
    EXPECT_EQ(asked, std::vector<nnd::EngineKind>{nnd::EngineKind::kJit}) << nnd::error_code_name(code);
  }
}

// compile_model's error keeps the code of the failure under the model's name.
TEST_F(RegistryTest, CompileErrorsKeepTheirCode) {
  ModelSettings missing = model("gone", "no_such_file.h5");
  try {
    compile_model(missing, false, {});
    FAIL();
  } catch (const nnd::Error& e) {
    EXPECT_EQ(e.code(), nnd::ErrorCode::kIo) << e.what();
    EXPECT_NE(std::string(e.what()).find("model 'gone': "), std::string::npos) << e.what();
  }
  std::vector<nnd::EngineKind> asked;
  try {
    compile_model(model("ball", "ball_patch.h5"), false, {}, {}, jit_failing_with(nnd::ErrorCode::kInternal, &asked));
    FAIL();
  } catch (const nnd::Error& e) {
    EXPECT_EQ(e.code(), nnd::ErrorCode::kInternal) << e.what();
  }
}

TEST(RegistrySignature, DependsOnLayoutAndMaxBatch) {
  nnd::Graph g;
  g.values.push_back({"in", nnd::DType::kFloat32, {4, 4, 1}, nnd::kNoNode});
  g.values.push_back({"out", nnd::DType::kFloat32, {3}, 0});
  g.inputs = {0};
  g.outputs = {1};
  g.input_names = {"in"};
  g.output_names = {"out"};
  const uint64_t a = model_signature(g, {nnd::DType::kFloat32}, 16);
  EXPECT_EQ(a, model_signature(g, {nnd::DType::kFloat32}, 16));
  EXPECT_NE(a, model_signature(g, {nnd::DType::kUInt8}, 16));
  EXPECT_NE(a, model_signature(g, {nnd::DType::kFloat32}, 8));  // a client must re-read max_batch
  nnd::Graph h = g;
  h.values[1].shape = {4};
  EXPECT_NE(a, model_signature(h, {nnd::DType::kFloat32}, 16));
  h = g;
  h.output_names = {"out2"};
  EXPECT_NE(a, model_signature(h, {nnd::DType::kFloat32}, 16));
}

// The memory need is computed from the graph before any engine exists: parameters as float32,
// the peak of the tensors alive at once times max_batch, code per layer; it saturates.
TEST(RegistryMemory, NeedIsBoundedAndSaturates) {
  nnd::Graph g = nnd::load_model(std::string(NND_SOURCE_DIR) + "/examples/models/ball_patch.h5");
  const ModelMemoryNeed one = model_memory_need(g, 1);
  EXPECT_EQ(one.weights, static_cast<uint64_t>(nnd::parameter_count(g)) * 4);
  EXPECT_GE(one.activations, 32u * 32u * 4u);  // the input at least
  EXPECT_EQ(one.code, g.nodes.size() * kCodeBytesPerLayer);
  const ModelMemoryNeed many = model_memory_need(g, 64);
  EXPECT_EQ(many.activations, one.activations * 64);
  EXPECT_EQ(many.weights, one.weights);
  nnd::Graph bomb = nnd::load_model(std::string(NND_SOURCE_DIR) + "/tests/integration/fixtures/pad_bomb.onnx");
  const ModelMemoryNeed b = model_memory_need(bomb, 1);
  EXPECT_GE(b.activations, uint64_t{46341} * 46339 * 4);  // the 8 GiB tensor
  EXPECT_EQ(model_memory_need(bomb, UINT32_MAX).total(), UINT64_MAX);
  EXPECT_EQ(describe_memory_need(b).substr(0, 8), "16.0 GiB");
}

TEST_F(RegistryTest, AModelOverTheMemoryLimitIsRefusedByName) {
  try {
    compile_model(model("ball", "ball_patch.h5"), true, {}, {}, {}, 1 << 16);
    FAIL();
  } catch (const nnd::Error& e) {
    EXPECT_EQ(e.code(), nnd::ErrorCode::kLimit);
    EXPECT_NE(std::string(e.what()).find("model 'ball' ("), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("ball_patch.h5): needs "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("daemon.max_model_memory_bytes (64.0 KiB)"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(compile_model(model("ball", "ball_patch.h5"), true, {}, {}, {}, uint64_t{1} << 30));
}
