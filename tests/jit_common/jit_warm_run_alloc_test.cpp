// Warm JIT runs make no heap allocation: after the first calls have sized an engine's arena, every
// further run() on the same thread must reach the kernels without operator new (the daemon's
// workers call it per batch; an allocation there is a lock in the allocator and a latency spike).
//
// This translation unit replaces the global operator new / delete with versions that count the
// calls made while the calling thread's `tl_counting` flag is set; everywhere else (the rest of
// this test binary) they only forward to malloc / free. The counters are plain thread-locals, so
// the replacement itself never allocates.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <new>
#include <string>
#include <vector>

#include "core/io/model_file.h"
#include "tests/jit_common/jit_test_util.h"
#include "tests/jit_common/kitchen_sink.h"
#include "tests/support/required_files.h"

namespace {

thread_local bool tl_counting = false;
thread_local long tl_allocations = 0;

void* counted_alloc(std::size_t n, std::size_t align) {
  if (tl_counting) ++tl_allocations;
  if (n == 0) n = 1;
  void* p = nullptr;
  if (align <= alignof(std::max_align_t)) {
    p = std::malloc(n);
  } else if (posix_memalign(&p, align, n) != 0) {
    p = nullptr;
  }
  return p;
}

}  // namespace

// GCC pairs the replaced operator new with free() below and warns; both sides are malloc / free.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

void* operator new(std::size_t n) {
  if (void* p = counted_alloc(n, 0)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
  if (void* p = counted_alloc(n, 0)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t n, std::align_val_t a) {
  if (void* p = counted_alloc(n, static_cast<std::size_t>(a))) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n, std::align_val_t a) {
  if (void* p = counted_alloc(n, static_cast<std::size_t>(a))) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return counted_alloc(n, 0); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return counted_alloc(n, 0); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace nnd::jit::test {
namespace {

// Heap allocations made by `f` on this thread.
template <class F>
long allocations_during(F&& f) {
  tl_allocations = 0;
  tl_counting = true;
  f();
  tl_counting = false;
  return tl_allocations;
}

// Zero inputs and output buffers for `batch` samples of `g`, made before counting starts.
struct Io {
  std::vector<std::vector<unsigned char>> in;
  std::vector<InputView> views;
  std::vector<std::vector<float>> out;
  std::vector<float*> ptrs;

  Io(const Graph& g, int64_t batch) {
    for (ValueId v : g.inputs) {
      const Value& val = g.values[static_cast<size_t>(v)];
      const size_t bytes = val.dtype == DType::kUInt8 ? 1 : 4;
      in.emplace_back(static_cast<size_t>(count_of(val.shape) * batch) * bytes, 0);
      views.push_back({val.dtype, in.back().data()});
    }
    for (ValueId v : g.outputs) {
      out.emplace_back(static_cast<size_t>(count_of(g.values[static_cast<size_t>(v)].shape) * batch));
      ptrs.push_back(out.back().data());
    }
  }
};

// Runs `g` on every ISA of this CPU, on one thread and split on three (every splittable kernel,
// EngineOptions::threads): two calls to warm the engine, then 100 counted ones.
void expect_warm_runs_allocate_nothing(const std::string& name, const Graph& g, int64_t batch) {
  for (Isa isa : all_isas()) {
   for (int threads : {1, 3}) {
    if (!host().has(isa)) continue;
    EngineOptions o;
    o.engine = EngineKind::kJit;
    o.isa = isa;
    o.threads = threads;
    JitConfig cfg;
    cfg.min_split_flops = 0;
    auto engine = make_jit_engine(g, o, cfg);
    Io io(g, batch);
    engine->run(batch, io.views, io.ptrs);
    engine->run(batch, io.views, io.ptrs);
    const long n = allocations_during([&] {
      for (int i = 0; i < 100; ++i) engine->run(batch, io.views, io.ptrs);
    });
    EXPECT_EQ(n, 0) << name << " on " << isa_id(isa) << ", " << threads << " thread(s), batch " << batch << ": " << n
                    << " heap allocation(s) in 100 warm runs";
   }
  }
}

// The counter sees what it must see: without this, a broken replacement would pass every test.
TEST(JitWarmRun, AllocationCounterCounts) {
  const long n = allocations_during([] {
    std::vector<int> v(3);
    std::string s(100, 'x');
    v.push_back(static_cast<int>(s.size()));
  });
  EXPECT_GE(n, 2);
}

TEST(JitWarmRun, GeneratedGraphAllocatesNothing) {
  const Graph g = kitchen_sink();
  expect_warm_runs_allocate_nothing("kitchen-sink", g, 1);
  expect_warm_runs_allocate_nothing("kitchen-sink", g, 3);
}

TEST(JitWarmRun, RealNetworksAllocateNothing) {
  const std::filesystem::path dir = NND_SHARED_MODELS_DIR;
  for (const char* net : {"bop", "ball-penalty-multihead", "field-boundary", "referee-gesture"}) {
    const std::filesystem::path file = dir / (std::string(net) + ".h5");
    if (!::nnd::test::require_file(file)) continue;
    expect_warm_runs_allocate_nothing(net, load_model(file.string()), 1);
  }
}

}  // namespace
}  // namespace nnd::jit::test
