// The Engine thread-safety contract (core/engine/engine.h): one engine of each kind runs the same
// requests from several threads at once, and every result equals the single-threaded one bit for
// bit. The daemon depends on it: one engine per model serves every worker. This file is in the
// ThreadSanitizer subset of scripts/test.sh (label `daemon`), which checks the engines' own code
// (the JIT's arena pool, the reference engine); TSan does not see into JIT-generated code, whose
// only writes go to the arena and the outputs of the call.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/engine/engine_options.h"
#include "core/engine_factory/engine_factory.h"
#include "core/io/model_file.h"
#include "core/ir/graph.h"
#include "core/util/error.h"

namespace nnd {
namespace {

std::string example(const char* file) { return std::string(NND_SOURCE_DIR) + "/examples/models/" + file; }

// One call: `batch` samples of every input (float32 or uint8 as the graph says) with its own
// output buffers.
struct Call {
  int64_t batch = 1;
  std::vector<std::vector<unsigned char>> in;
  std::vector<InputView> views;
  std::vector<std::vector<float>> out;
  std::vector<float*> out_ptrs;

  Call(const Graph& g, int64_t b, uint32_t seed) : batch(b) {
    uint32_t x = seed * 2654435761u + 1;
    for (ValueId id : g.inputs) {
      const Value& v = g.values[static_cast<size_t>(id)];
      const size_t n = static_cast<size_t>(element_count(v.shape, v.name) * batch);
      std::vector<unsigned char> bytes(n * (v.dtype == DType::kUInt8 ? 1 : 4));
      if (v.dtype == DType::kUInt8) {
        for (auto& c : bytes) c = static_cast<unsigned char>((x = x * 1103515245u + 12345u) >> 24);
      } else {
        auto* f = reinterpret_cast<float*>(bytes.data());
        for (size_t i = 0; i < n; ++i) f[i] = static_cast<float>(static_cast<int>((x = x * 1103515245u + 12345u) >> 20) % 2001 - 1000) / 500.0f;
      }
      in.push_back(std::move(bytes));
      views.push_back({v.dtype, in.back().data()});
    }
    for (size_t i = 0; i < views.size(); ++i) views[i].data = in[i].data();
    for (ValueId id : g.outputs) {
      const Value& v = g.values[static_cast<size_t>(id)];
      out.emplace_back(static_cast<size_t>(element_count(v.shape, v.name) * batch), -1.0f);
    }
    for (auto& o : out) out_ptrs.push_back(o.data());
  }
  void run(Engine& e) { e.run(batch, views, out_ptrs); }
};

// Runs `calls` once each on one thread (the expected results), then `threads` threads each run
// every call `rounds` times in a different order on the same engine; every output must equal the
// expected one exactly.
void expect_concurrent_runs_match(Engine& e, int threads, int rounds) {
  const Graph& g = e.graph();
  const int64_t batches[] = {1, 3, 7, 2, 5};
  std::vector<std::vector<std::vector<float>>> expected;
  for (size_t k = 0; k < std::size(batches); ++k) {
    Call c(g, batches[k], static_cast<uint32_t>(k));
    c.run(e);
    expected.push_back(c.out);
  }
  std::vector<int> mismatches(static_cast<size_t>(threads), 0);
  std::vector<std::string> errors(static_cast<size_t>(threads));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      try {
        for (int r = 0; r < rounds; ++r) {
          for (size_t j = 0; j < std::size(batches); ++j) {
            const size_t k = (j + static_cast<size_t>(t) + static_cast<size_t>(r)) % std::size(batches);
            Call c(g, batches[k], static_cast<uint32_t>(k));
            c.run(e);
            for (size_t o = 0; o < c.out.size(); ++o) {
              if (std::memcmp(c.out[o].data(), expected[k][o].data(), c.out[o].size() * sizeof(float)) != 0) {
                ++mismatches[static_cast<size_t>(t)];
              }
            }
          }
        }
      } catch (const std::exception& ex) {
        errors[static_cast<size_t>(t)] = ex.what();
      }
    });
  }
  for (auto& th : pool) th.join();
  for (int t = 0; t < threads; ++t) {
    EXPECT_EQ(errors[static_cast<size_t>(t)], "") << "thread " << t;
    EXPECT_EQ(mismatches[static_cast<size_t>(t)], 0) << "thread " << t << " got outputs that differ";
  }
}

// Both engines exist on every architecture the build accepts: a failure to compile fails the test.
std::unique_ptr<Engine> engine_of(const Graph& g, EngineKind kind) {
  EngineOptions o;
  o.engine = kind;
  return make_engine(g, o);
}

TEST(EngineConcurrency, ReferenceEngineRunsConcurrently) {
  const Graph g = load_model(example("ball_patch.h5"));
  auto e = engine_of(g, EngineKind::kReference);
  ASSERT_TRUE(e);
  expect_concurrent_runs_match(*e, 4, 2);
}

TEST(EngineConcurrency, JitEngineRunsConcurrently) {
  for (const char* file : {"ball_patch.h5", "field_boundary.h5"}) {
    SCOPED_TRACE(file);
    const Graph g = load_model(example(file));
    auto e = engine_of(g, EngineKind::kJit);
    ASSERT_TRUE(e);
    expect_concurrent_runs_match(*e, 4, 4);
  }
}

TEST(EngineConcurrency, JitEngineWithUint8InputRunsConcurrently) {
  // The detector fed uint8 camera bytes, as the default config serves it: the JIT converts the
  // input into its per-call arena.
  Graph g = load_model(example("detector.h5"));
  g.values[static_cast<size_t>(g.inputs[0])].dtype = DType::kUInt8;
  auto e = engine_of(g, EngineKind::kJit);
  ASSERT_TRUE(e);
  expect_concurrent_runs_match(*e, 3, 2);
}

}  // namespace
}  // namespace nnd
