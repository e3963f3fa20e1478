// One call on several threads (EngineOptions::threads, kernel_parts.h, worker_pool.h): outputs
// bit-identical to the single-thread engine on the real robot networks, and the worker pool's
// barrier and its one-job-at-a-time rule.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <thread>
#include <vector>

#include "core/io/model_file.h"
#include "core/jit/worker_pool.h"
#include "tests/jit_common/jit_test_util.h"
#include "tests/support/required_files.h"

namespace nnd::jit::test {
namespace {

namespace fs = std::filesystem;

class JitThreads : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override { NND_SKIP_WITHOUT(GetParam()); }
};

TEST_P(JitThreads, RealNetworksBitIdentical) {
  const fs::path dir = NND_SHARED_MODELS_DIR;
  for (const char* name : {"bop.h5", "ball-penalty-multihead.h5", "field-boundary.h5", "referee-gesture.h5"}) {
    if (!::nnd::test::require_file(dir / name)) continue;
    const Graph g = load_model((dir / name).string());
    // Batch 1: bands of the big kernels; batch 3 and 8: groups of samples (with 4 threads, batch 3
    // runs bands again).
    for (int threads : {2, 3, 4}) {
      for (int64_t batch : {1, 3, 8}) {
        int split = 0;
        const std::string diff = threads_mismatch(g, GetParam(), batch, 11, threads, false, &split);
        EXPECT_EQ(diff, "") << name << ", " << threads << " threads, batch " << batch;
        EXPECT_GT(split, 0) << name << ": no kernel split";
      }
    }
  }
}

// The default split threshold: bop splits its big kernels only, and a threads = 1 engine compiles
// exactly the single-thread code (the golden hashes pin it).
TEST_P(JitThreads, DefaultThresholdAndSingleThreadCode) {
  const fs::path bop = fs::path(NND_SHARED_MODELS_DIR) / "bop.h5";
  NND_REQUIRE_FILE(bop);
  const Graph g = load_model(bop.string());
  EngineOptions o;
  o.engine = EngineKind::kJit;
  o.isa = GetParam();
  const auto one = make_jit_engine(g, o);
  o.threads = 2;
  const auto two = make_jit_engine(g, o);
  EXPECT_EQ(one->threads(), 1);
  EXPECT_EQ(two->threads(), 2);
  int whole = 0, parts = 0;
  for (const CompiledKernel& k : two->kernels()) (k.name.find("[part ") == std::string::npos ? whole : parts)++;
  ASSERT_EQ(static_cast<size_t>(whole), one->kernels().size());
  for (size_t i = 0; i < one->kernels().size(); ++i) EXPECT_EQ(one->kernels()[i].bytes, two->kernels()[i].bytes);
  EXPECT_GT(parts, 0);
  EXPECT_LT(parts, 2 * whole);  // small kernels (pads, adds) stay whole
}

// A model no kernel of which pays for bands still splits a batch by samples when one sample per
// thread pays: it keeps a pool (threads() == 2) and is bit-identical; below the threshold it
// stays one thread.
TEST_P(JitThreads, SmallModelSplitsBatchesBySamples) {
  const fs::path ball = fs::path(NND_SHARED_MODELS_DIR) / "ball-penalty-multihead.h5";
  NND_REQUIRE_FILE(ball);
  const Graph g = load_model(ball.string());
  EngineOptions o;
  o.engine = EngineKind::kJit;
  o.isa = GetParam();
  o.threads = 2;
  JitConfig cfg;
  cfg.min_split_flops = 1'000'000;  // above every kernel of ball-penalty, below one sample (1.26 MFLOP)
  const auto two = make_jit_engine(g, o, cfg);
  EXPECT_EQ(two->threads(), 2);
  for (const CompiledKernel& k : two->kernels()) EXPECT_EQ(k.name.find("[part "), std::string::npos) << k.name;
  cfg.min_split_flops = 2'000'000;  // not even one sample pays
  EXPECT_EQ(make_jit_engine(g, o, cfg)->threads(), 1);
  for (int64_t batch : {2, 5, 16}) {
    EXPECT_EQ(threads_mismatch(g, GetParam(), batch, 3, 2, false, nullptr, 1'000'000), "") << "batch " << batch;
    EXPECT_EQ(threads_mismatch(g, GetParam(), batch, 4, 2, true, nullptr, 1'000'000), "") << "uint8, batch " << batch;
  }
}

NND_ISA_SUITE(JitThreads);

// A job whose participants claim work items: every item runs exactly once whoever turns up, the
// caller always takes part, helpers have indices 1..n-1, and when try_run returns no participant
// is still inside (each leaves a mark on its way out that must be complete on return).
TEST(WorkerPool, ClaimedWorkRunsOnceAndCompletes) {
  for (int n : {2, 3, 4}) {
    WorkerPool pool(n);
    ASSERT_EQ(pool.participants(), n);
    constexpr int kItems = 500;
    struct Ctx {
      int n;
      std::atomic<int> next{0}, inside{0}, bad_index{0}, caller_ran{0};
      std::vector<std::atomic<int>> runs = std::vector<std::atomic<int>>(kItems);
    };
    for (int job = 0; job < 20; ++job) {
      Ctx ctx;
      ctx.n = n;
      ASSERT_TRUE(pool.try_run(
          [](void* c, int p) {
            auto& x = *static_cast<Ctx*>(c);
            x.inside.fetch_add(1);
            if (p < 0 || p >= x.n) x.bad_index.fetch_add(1);
            if (p == 0) x.caller_ran.fetch_add(1);
            for (int i; (i = x.next.fetch_add(1)) < kItems;) x.runs[static_cast<size_t>(i)].fetch_add(1);
            x.inside.fetch_sub(1);
          },
          &ctx));
      EXPECT_EQ(ctx.inside.load(), 0) << n << " participants: a helper still inside after try_run";
      EXPECT_EQ(ctx.caller_ran.load(), 1);
      EXPECT_EQ(ctx.bad_index.load(), 0);
      for (int i = 0; i < kItems; ++i) ASSERT_EQ(ctx.runs[static_cast<size_t>(i)].load(), 1) << "item " << i;
    }
  }
}

// While one job holds the pool, another caller's try_run fails at once (it then runs alone).
TEST(WorkerPool, OneJobAtATime) {
  WorkerPool pool(2);
  struct Ctx {
    WorkerPool* pool;
    std::atomic<bool> inner_ran{false}, inner_refused{false};
  } ctx{&pool, {}, {}};
  ASSERT_TRUE(pool.try_run(
      [](void* c, int p) {
        auto& x = *static_cast<Ctx*>(c);
        if (p != 0) return;
        std::thread other([&x] {
          const bool ran = x.pool->try_run([](void* cc, int) { static_cast<Ctx*>(cc)->inner_ran = true; }, &x);
          x.inner_refused = !ran;
        });
        other.join();
      },
      &ctx));
  EXPECT_TRUE(ctx.inner_refused.load());
  EXPECT_FALSE(ctx.inner_ran.load());
  EXPECT_TRUE(pool.try_run([](void*, int) {}, nullptr));  // free again afterwards
}

// Concurrent calls of one threaded engine: one gets the pool, the others run alone; every result
// is the single-thread one. Batch 1 runs bands, batch 4 groups of samples (each participant in an
// arena of its own); the calls mix both.
TEST(JitThreadsConcurrency, ConcurrentCallsBitIdentical) {
  const fs::path fb = fs::path(NND_SHARED_MODELS_DIR) / "field-boundary.h5";
  NND_REQUIRE_FILE(fb);
  const Graph g = load_model(fb.string());
  if (g.inputs.size() != 1 || g.outputs.size() != 1) GTEST_SKIP() << "one input and one output expected";
  EngineOptions o;
  o.engine = EngineKind::kJit;
  o.isa = all_isas().front();  // one ISA for both engines (auto could measure differently)
  JitConfig cfg;
  cfg.min_split_flops = 0;
  const auto one = make_jit_engine(g, o, cfg);
  o.threads = 2;
  const auto two = make_jit_engine(g, o, cfg);
  constexpr int64_t kBatch = 4;
  const int64_t in_n = count_of(g.values[g.inputs[0]].shape), out_n = count_of(g.values[g.outputs[0]].shape);
  const std::vector<float> x = Rng(5).vec(in_n * kBatch, 0.0f, 1.0f);
  const InputView view{DType::kFloat32, x.data()};
  std::vector<float> want(static_cast<size_t>(out_n * kBatch));
  float* want_ptr = want.data();
  one->run(kBatch, {&view, 1}, {&want_ptr, 1});
  std::atomic<int> bad{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 3; ++t) {
    callers.emplace_back([&, t] {
      std::vector<float> got(want.size());
      float* p = got.data();
      for (int r = 0; r < 20; ++r) {
        const int64_t batch = (r + t) % 2 ? kBatch : 1;
        two->run(batch, {&view, 1}, {&p, 1});
        if (std::memcmp(got.data(), want.data(), static_cast<size_t>(out_n * batch) * sizeof(float)) != 0) bad.fetch_add(1);
      }
    });
  }
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(bad.load(), 0);
}

}  // namespace
}  // namespace nnd::jit::test
