// libnnd's C API (nnd.h) and C++ wrapper (nnd.hpp): models opened with config-entry options,
// their inputs and outputs, runs into caller buffers, and every error as a code with a message.
// The results are compared bit for bit with the engine nnd_core makes for the same options.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "core/engine/engine_options.h"
#include "core/engine_factory/engine_factory.h"
#include "core/io/model_file.h"
#include "core/io/npy.h"
#include "core/jit/cpu_features.h"
#include "core/libnnd/nnd.h"
#include "core/libnnd/nnd.hpp"

namespace {

namespace fs = std::filesystem;

std::string example_model(const char* file) {
  return (fs::path(NND_SOURCE_DIR) / "examples" / "models" / file).string();
}

// The most capable ISA of this CPU, named: an explicit choice, so both sides of a comparison compile the
// same code (isa auto measures, and a near-tie may go either way).
std::string some_isa() { return nnd::jit::isa_id(nnd::jit::detect_cpu_features().best()); }

// Deterministic input bytes for `bytes` bytes of float32 (values in [0, 1]) or uint8.
std::vector<unsigned char> pattern(size_t bytes, bool is_uint8) {
  std::vector<unsigned char> v(bytes);
  if (is_uint8) {
    for (size_t i = 0; i < bytes; ++i) v[i] = static_cast<unsigned char>((i * 37) % 256);
  } else {
    for (size_t i = 0; i < bytes / 4; ++i) {
      const float f = static_cast<float>((i * 37) % 256) / 255.f;
      std::memcpy(&v[i * 4], &f, 4);
    }
  }
  return v;
}

struct Opened {
  nnd_model_t* m = nullptr;
  ~Opened() { nnd_model_close(m); }
};

nnd_options_t* options(std::initializer_list<std::pair<const char*, const char*>> kv) {
  nnd_options_t* o = nullptr;
  EXPECT_EQ(nnd_options_new(&o), NND_OK);
  for (const auto& [k, v] : kv) EXPECT_EQ(nnd_options_set(o, k, v), NND_OK) << k << ": " << nnd_last_error();
  return o;
}

TEST(LibnndApi, OpensAModelAndDescribesItsTensors) {
  Opened m;
  ASSERT_EQ(nnd_model_open(example_model("ball_patch.h5").c_str(), nullptr, &m.m), NND_OK) << nnd_last_error();
  ASSERT_EQ(nnd_model_num_inputs(m.m), 1u);
  ASSERT_EQ(nnd_model_num_outputs(m.m), 1u);
  nnd_tensor_info_t in{}, out{};
  in.struct_size = sizeof in;
  out.struct_size = sizeof out;
  ASSERT_EQ(nnd_model_input(m.m, 0, &in), NND_OK);
  ASSERT_EQ(nnd_model_output(m.m, 0, &out), NND_OK);
  EXPECT_STREQ(in.name, "patch");
  EXPECT_EQ(in.dtype, NND_FLOAT32);
  ASSERT_EQ(in.rank, 3u);
  EXPECT_EQ(in.dims[0], 32);
  EXPECT_EQ(in.dims[1], 32);
  EXPECT_EQ(in.dims[2], 1);
  EXPECT_EQ(in.sample_elements, 1024u);
  EXPECT_EQ(in.sample_bytes, 4096u);
  EXPECT_STREQ(out.name, "classes");
  EXPECT_EQ(out.sample_elements, 3u);
  EXPECT_EQ(std::string(nnd_model_engine(m.m)).rfind("jit-", 0), 0u) << nnd_model_engine(m.m);
  EXPECT_NE(std::string(nnd_model_summary(m.m)).find("isa "), std::string::npos) << nnd_model_summary(m.m);
  EXPECT_STREQ(nnd_version(), "1.0.0");
}

// The same bytes out as the engine nnd_core makes for the same options, at several batch sizes,
// with the engine that runs the daemon's models.
void expect_same_as_core(const std::string& path, const std::vector<std::pair<std::string, std::string>>& kv,
                         bool uint8_input) {
  nnd_options_t* o = options({});
  for (const auto& [k, v] : kv) ASSERT_EQ(nnd_options_set(o, k.c_str(), v.c_str()), NND_OK) << nnd_last_error();
  Opened m;
  ASSERT_EQ(nnd_model_open(path.c_str(), o, &m.m), NND_OK) << nnd_last_error();
  nnd_options_free(o);

  nnd::Graph g = nnd::load_model(path);
  if (uint8_input) g.values[static_cast<size_t>(g.inputs[0])].dtype = nnd::DType::kUInt8;
  nnd::EngineOptions eo;
  eo.engine = nnd::EngineKind::kJit;
  for (const auto& [k, v] : kv) {
    if (k == "isa") eo.isa = *nnd::parse_isa(v);
    if (k == "math") eo.math = *nnd::parse_math_mode(v);
    if (k == "threads") eo.threads = *nnd::parse_threads(v);
    if (k == "engine") eo.engine = *nnd::parse_engine_kind(v);
  }
  const auto engine = nnd::make_engine(g, eo);
  EXPECT_EQ(engine->name(), nnd_model_engine(m.m));

  nnd_tensor_info_t in{}, out{};
  in.struct_size = out.struct_size = sizeof in;
  ASSERT_EQ(nnd_model_input(m.m, 0, &in), NND_OK);
  ASSERT_EQ(nnd_model_output(m.m, 0, &out), NND_OK);
  EXPECT_EQ(in.dtype, uint8_input ? NND_UINT8 : NND_FLOAT32);
  for (uint32_t batch : {1u, 3u}) {
    const std::vector<unsigned char> x = pattern(batch * in.sample_bytes, uint8_input);
    std::vector<float> y(batch * out.sample_elements, -1.f), want(y.size(), -2.f);
    const void* ins[] = {x.data()};
    void* outs[] = {y.data()};
    ASSERT_EQ(nnd_model_run(m.m, batch, ins, outs), NND_OK) << nnd_last_error();
    const nnd::InputView view{uint8_input ? nnd::DType::kUInt8 : nnd::DType::kFloat32, x.data()};
    float* want_ptr = want.data();
    engine->run(batch, std::span<const nnd::InputView>(&view, 1), std::span<float* const>(&want_ptr, 1));
    EXPECT_EQ(std::memcmp(y.data(), want.data(), y.size() * 4), 0) << path << " batch " << batch;
  }
}

TEST(LibnndApi, RunsGiveTheBytesOfTheCoreEngineForTheSameOptions) {
  expect_same_as_core(example_model("ball_patch.h5"), {{"isa", some_isa()}}, false);
  expect_same_as_core(example_model("field_boundary.h5"), {{"isa", some_isa()}, {"math", "fast"}}, false);
  expect_same_as_core(example_model("ball_patch.h5"), {{"engine", "reference"}}, false);
}

TEST(LibnndApi, AnInputDeclaredUint8TakesCameraBytes) {
  expect_same_as_core(example_model("detector.h5"), {{"isa", some_isa()}, {"inputs.input", "uint8"}}, true);
}

TEST(LibnndApi, ThreadsGiveTheSameBytes) {
  expect_same_as_core(example_model("detector.h5"), {{"isa", some_isa()}, {"threads", "2"}}, false);
}

TEST(LibnndApi, ConcurrentRunsOnOneModelDoNotInterfere) {
  Opened m;
  ASSERT_EQ(nnd_model_open(example_model("ball_patch.h5").c_str(), nullptr, &m.m), NND_OK);
  const std::vector<unsigned char> x = pattern(8 * 4096, false);
  std::vector<float> want(8 * 3);
  {
    const void* ins[] = {x.data()};
    void* outs[] = {want.data()};
    ASSERT_EQ(nnd_model_run(m.m, 8, ins, outs), NND_OK);
  }
  std::vector<std::thread> threads;
  std::vector<int> same(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::vector<float> y(want.size());
      const void* ins[] = {x.data()};
      void* outs[] = {y.data()};
      bool ok = true;
      for (int r = 0; r < 50; ++r) ok = ok && nnd_model_run(m.m, 8, ins, outs) == NND_OK && y == want;
      same[t] = ok;
    });
  }
  for (auto& t : threads) t.join();
  for (int t = 0; t < 4; ++t) EXPECT_TRUE(same[t]) << "thread " << t;
}

std::string open_error(const std::string& path, nnd_options_t* o, nnd_status want) {
  nnd_model_t* m = reinterpret_cast<nnd_model_t*>(1);
  const nnd_status st = nnd_model_open(path.c_str(), o, &m);
  EXPECT_EQ(st, want) << nnd_status_name(st) << ": " << nnd_last_error();
  EXPECT_EQ(m, nullptr);
  nnd_options_free(o);
  return nnd_last_error();
}

TEST(LibnndErrors, FilesThatCannotBeOpenedSayWhy) {
  const std::string missing = "/nonexistent/ball.h5";
  EXPECT_NE(open_error(missing, nullptr, NND_E_IO).find(missing), std::string::npos);
  const fs::path junk = fs::temp_directory_path() / ("libnnd_junk_" + std::to_string(::getpid()) + ".onnx");
  std::ofstream(junk) << "this is not a model";
  EXPECT_NE(open_error(junk.string(), nullptr, NND_E_FORMAT).find(junk.string()), std::string::npos);
  fs::remove(junk);
}

TEST(LibnndErrors, OptionsAreCheckedWithTheConfigsSpellings) {
  nnd_options_t* o = options({});
  EXPECT_EQ(nnd_options_set(o, "isaa", "avx2"), NND_E_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nnd_last_error()).find("did you mean 'isa'"), std::string::npos) << nnd_last_error();
  EXPECT_EQ(nnd_options_set(o, "isa", "avx3"), NND_E_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nnd_last_error()).find("unknown ISA 'avx3'"), std::string::npos) << nnd_last_error();
  EXPECT_EQ(nnd_options_set(o, "threads", "0"), NND_E_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nnd_last_error()).find("expected auto or a count 1..64"), std::string::npos);
  EXPECT_EQ(nnd_options_set(o, "engine", "fast"), NND_E_INVALID_ARGUMENT);
  EXPECT_EQ(nnd_options_set(o, "math", "approximate"), NND_E_INVALID_ARGUMENT);
  EXPECT_EQ(nnd_options_set(o, "input.input", "uint8"), NND_E_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nnd_last_error()).find("did you mean 'inputs.input'"), std::string::npos)
      << nnd_last_error();
  EXPECT_EQ(nnd_options_set(o, "inputs.input", "int8"), NND_E_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nnd_last_error()).find("expected uint8 or float32"), std::string::npos);
  EXPECT_EQ(nnd_options_set(o, "precision", "float16"), NND_E_INVALID_ARGUMENT);
  EXPECT_EQ(nnd_options_set(nullptr, "isa", "auto"), NND_E_INVALID_ARGUMENT);
  EXPECT_EQ(nnd_options_set(o, "isa", "auto"), NND_OK);
  nnd_options_free(o);
}

TEST(LibnndErrors, AnInputNameTheModelLacksIsNamedWithTheRealOnes) {
  const std::string msg =
      open_error(example_model("detector.h5"), options({{"inputs.image", "uint8"}}), NND_E_INVALID_ARGUMENT);
  EXPECT_NE(msg.find("no input named 'image' (its inputs: input)"), std::string::npos) << msg;
}

TEST(LibnndErrors, Int8PrecisionIsRefusedClearlyUntilTheBuildHasIt) {
  const std::string msg =
      open_error(example_model("ball_patch.h5"), options({{"precision", "int8"}}), NND_E_UNSUPPORTED);
  EXPECT_NE(msg.find("precision int8 is not available in this build"), std::string::npos) << msg;
}

TEST(LibnndErrors, MisuseOfAModelIsAnInvalidArgument) {
  Opened m;
  ASSERT_EQ(nnd_model_open(example_model("ball_patch.h5").c_str(), nullptr, &m.m), NND_OK);
  nnd_tensor_info_t info{};
  info.struct_size = sizeof info;
  EXPECT_EQ(nnd_model_input(m.m, 1, &info), NND_E_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nnd_last_error()).find("index 1, the model has 1 input"), std::string::npos);
  info.struct_size = 8;
  EXPECT_EQ(nnd_model_output(m.m, 0, &info), NND_E_INVALID_ARGUMENT);
  EXPECT_EQ(nnd_model_input(m.m, 0, nullptr), NND_E_INVALID_ARGUMENT);
  std::vector<float> x(4096 / 4), y(3);
  const void* ins[] = {x.data()};
  void* outs[] = {y.data()};
  EXPECT_EQ(nnd_model_run(m.m, 0, ins, outs), NND_E_INVALID_ARGUMENT);
  EXPECT_EQ(nnd_model_run(m.m, 1, nullptr, outs), NND_E_INVALID_ARGUMENT);
  const void* null_in[] = {nullptr};
  EXPECT_EQ(nnd_model_run(m.m, 1, null_in, outs), NND_E_INVALID_ARGUMENT);
  EXPECT_EQ(nnd_model_run(nullptr, 1, ins, outs), NND_E_INVALID_ARGUMENT);
  nnd_model_t* other = nullptr;  // not m.m: a failed open sets its out-pointer to NULL
  EXPECT_EQ(nnd_model_open(nullptr, nullptr, &other), NND_E_INVALID_ARGUMENT);
  EXPECT_EQ(other, nullptr);
  EXPECT_EQ(nnd_model_num_inputs(nullptr), 0u);
  nnd_model_close(nullptr);
  EXPECT_STREQ(nnd_status_name(static_cast<nnd_status>(99)), "NND_E_UNKNOWN_STATUS");
  EXPECT_STREQ(nnd_status_name(NND_E_ISA_UNAVAILABLE), "NND_E_ISA_UNAVAILABLE");
}

TEST(LibnndCpp, RunsWithCheckedBuffers) {
  libnnd::Model ball(example_model("ball_patch.h5"), libnnd::Options().set("isa", some_isa()));
  EXPECT_EQ(ball.input(0).name, "patch");
  EXPECT_EQ(ball.input(0).dims, (std::vector<int64_t>{32, 32, 1}));
  std::vector<float> x(2 * ball.input(0).sample_elements, 0.5f), y(2 * ball.output(0).sample_elements);
  ball.run(2, {x}, {y});
  EXPECT_NE(y[0], 0.f);
  libnnd::Model moved = std::move(ball);
  std::vector<float> y2(y.size());
  moved.run(2, {libnnd::In(x.data(), x.size())}, {libnnd::Out(y2.data(), y2.size())});
  EXPECT_EQ(y, y2);
}

template <class F>
std::string thrown(F&& f) {
  try {
    f();
  } catch (const libnnd::Error& e) {
    EXPECT_EQ(e.status(), NND_E_INVALID_ARGUMENT);
    return e.what();
  }
  ADD_FAILURE() << "no libnnd::Error";
  return "";
}

// A classifier's label (an ONNX ArgMax output) comes out as NND_INT64, next to its float32
// logits: the indices torch computes for the fixture's samples.
TEST(LibnndCpp, AnArgMaxOutputIsInt64Indices) {
  const fs::path dir = fs::path(NND_SOURCE_DIR) / "tests" / "data" / "onnx";
  libnnd::Model m((dir / "argmax_classifier.onnx").string());
  ASSERT_EQ(m.num_outputs(), 2u);
  EXPECT_EQ(m.output(0).dtype, NND_FLOAT32);
  EXPECT_EQ(m.output(1).dtype, NND_INT64);
  EXPECT_EQ(m.output(1).sample_bytes, sizeof(int64_t));
  const nnd::NpyArray x = nnd::read_npy((dir / "argmax_classifier.in.0.npy").string());
  const nnd::NpyArray labels = nnd::read_npy((dir / "argmax_classifier.out.1.npy").string());
  const auto batch = static_cast<uint32_t>(x.shape[0]);
  std::vector<float> in(x.f32(), x.f32() + x.element_count()), logits(batch * m.output(0).sample_elements);
  std::vector<int64_t> got(batch, -1);
  m.run(batch, {in}, {libnnd::Out(logits.data(), logits.size()), libnnd::Out(got.data(), got.size())});
  EXPECT_EQ(got, std::vector<int64_t>(labels.i64(), labels.i64() + labels.element_count()));
  std::vector<float> wrong(batch);
  EXPECT_NE(thrown([&] { m.run(batch, {in}, {logits, wrong}); })
                .find("output 1 'label' is int64, the buffer holds float32"),
            std::string::npos);
}

TEST(LibnndCpp, WrongTypesAndSizesAreRefusedNotConverted) {
  libnnd::Model ball(example_model("ball_patch.h5"));
  std::vector<float> x(ball.input(0).sample_elements), y(ball.output(0).sample_elements);
  std::vector<uint8_t> bytes(ball.input(0).sample_elements);
  EXPECT_NE(thrown([&] { ball.run(1, {bytes}, {y}); }).find("input 0 'patch' is float32, the buffer holds uint8"),
            std::string::npos);
  EXPECT_NE(thrown([&] { ball.run(2, {x}, {y}); }).find("the buffer has 1024 elements, batch 2 needs 2048"),
            std::string::npos);
  EXPECT_NE(thrown([&] { ball.run(1, {x, x}, {y}); }).find("2 input buffers given, the model has 1"),
            std::string::npos);
  std::vector<int64_t> idx(3);
  EXPECT_NE(thrown([&] { ball.run(1, {x}, {idx}); }).find("output 0 'classes' is float32, the buffer holds int64"),
            std::string::npos);
  try {
    libnnd::Model nope("/nonexistent.onnx");
    ADD_FAILURE() << "opened";
  } catch (const libnnd::Error& e) {
    EXPECT_EQ(e.status(), NND_E_IO);
    EXPECT_EQ(std::string(e.what()).rfind("NND_E_IO: ", 0), 0u) << e.what();
  }
}

}  // namespace
