// isa auto by measurement (core/jit/isa_calibration.h, isa_calibration_cache.h and
// make_jit_engine): the measuring loop and the choice with made-up timings (never real ones), the
// calibration cache file, and the engine factory's paths (one ISA: no measuring; several:
// measured, then read back from the cache; a corrupt cache: a warning, measured again).
// Candidate engines are compiled but, with the timing hook, never run: the forced ISAs need not
// exist on the machine running the test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "core/io/keras_hdf5.h"
#include "core/ir/content_hash.h"
#include "core/jit/isa_calibration_cache.h"
#include "core/jit/isa_calibration_standin.h"
#include "tests/jit_common/jit_test_util.h"
#include "tests/support/test_temp_dir.h"
#include "tests/support/required_files.h"

namespace nnd::jit::test {
namespace {

namespace fs = std::filesystem;

// A fake machine: each ISA's run costs a fixed number of microseconds; records every call.
struct FakeTimer {
  std::map<Isa, double> us_per_run;
  std::vector<std::pair<Isa, int>> calls;
  double operator()(Isa isa, int runs) {
    calls.emplace_back(isa, runs);
    return us_per_run.at(isa) * runs;
  }
};

std::vector<IsaTiming> timings(std::initializer_list<std::pair<Isa, double>> l) {
  std::vector<IsaTiming> v;
  for (auto [isa, us] : l) v.push_back({isa, us, us, 5});
  return v;
}

const std::vector<Isa> kThree = {Isa::kSse41, Isa::kAvx2, Isa::kAvx512};

TEST(JitIsaAuto, ChoosesTheFastest) {
  EXPECT_EQ(choose_isa(timings({{Isa::kSse41, 2200}, {Isa::kAvx2, 900}, {Isa::kAvx512, 600}}), 0.03), Isa::kAvx512);
  EXPECT_EQ(choose_isa(timings({{Isa::kSse41, 2200}, {Isa::kAvx2, 480}, {Isa::kAvx512, 650}}), 0.03), Isa::kAvx2);
  EXPECT_EQ(choose_isa(timings({{Isa::kSse41, 20}, {Isa::kAvx2, 30}}), 0.03), Isa::kSse41);
  EXPECT_THROW(choose_isa(std::vector<IsaTiming>{}, 0.03), Error);
}

TEST(JitIsaAuto, NearTiesGoToTheNarrowerIsa) {
  // AVX-512 2% faster than AVX2 (bop on Zen 4 the other way round): within 3%, AVX2 stays.
  EXPECT_EQ(choose_isa(timings({{Isa::kSse41, 2200}, {Isa::kAvx2, 900}, {Isa::kAvx512, 882}}), 0.03), Isa::kAvx2);
  // Exactly at the margin is still a tie; beyond it the wider ISA wins.
  EXPECT_EQ(choose_isa(timings({{Isa::kAvx2, 103}, {Isa::kAvx512, 100}}), 0.03), Isa::kAvx2);
  EXPECT_EQ(choose_isa(timings({{Isa::kAvx2, 103.5}, {Isa::kAvx512, 100}}), 0.03), Isa::kAvx512);
  // The narrowest within the margin of the fastest, even past a middle one that is also close.
  EXPECT_EQ(choose_isa(timings({{Isa::kSse41, 102}, {Isa::kAvx2, 101}, {Isa::kAvx512, 100}}), 0.03), Isa::kSse41);
  // Without a margin, only an exact tie goes narrow.
  EXPECT_EQ(choose_isa(timings({{Isa::kAvx2, 100.5}, {Isa::kAvx512, 100}}), 0.0), Isa::kAvx512);
  EXPECT_EQ(choose_isa(timings({{Isa::kAvx2, 100}, {Isa::kAvx512, 100}}), 0.0), Isa::kAvx2);
}

TEST(JitIsaAuto, MeasuresInterleavedRoundsWithinTheBudget) {
  FakeTimer fake{{{Isa::kSse41, 2000}, {Isa::kAvx2, 900}, {Isa::kAvx512, 920}}, {}};
  IsaCalibrationPolicy p;
  p.min_rounds = 3;
  p.max_rounds = 10;
  p.budget_us = 10000;
  p.warmup_ratio = 1e9;  // SSE4.1 stays in past its warm-up (WarmUpFarBehindIsNotTimed)
  const std::vector<IsaTiming> t =
      measure_isas(kThree, [&](size_t k, int runs) { return fake(kThree[k], runs); }, p);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_DOUBLE_EQ(t[0].min_us, 2000);
  EXPECT_DOUBLE_EQ(t[1].min_us, 900);
  EXPECT_DOUBLE_EQ(t[2].median_us, 920);
  // Warm-up of each (not counted against the budget), then 3 full rounds in rotated order.
  ASSERT_GE(fake.calls.size(), 12u);
  const std::vector<Isa> first12 = {Isa::kSse41, Isa::kAvx2, Isa::kAvx512,   // warm-up
                                    Isa::kSse41, Isa::kAvx2, Isa::kAvx512,   // round 0
                                    Isa::kAvx2, Isa::kAvx512, Isa::kSse41,   // round 1
                                    Isa::kAvx512, Isa::kSse41, Isa::kAvx2};  // round 2
  for (size_t i = 0; i < first12.size(); ++i) EXPECT_EQ(fake.calls[i].first, first12[i]) << "call " << i;
  // The three minimum rounds took 3 x 3820 us, past the 10 ms budget: no fourth round.
  EXPECT_EQ(fake.calls.size(), 12u);
  EXPECT_EQ(t[0].samples, 3);
  EXPECT_EQ(t[1].samples, 3);
  // A larger budget: the two contenders get more rounds, up to max_rounds; SSE4.1, more than
  // 1.25x the fastest after the minimum rounds, is no longer timed.
  fake.calls.clear();
  p.budget_us = 1e9;
  const std::vector<IsaTiming> t2 =
      measure_isas(kThree, [&](size_t k, int runs) { return fake(kThree[k], runs); }, p);
  EXPECT_EQ(t2[0].samples, 3);
  EXPECT_EQ(t2[1].samples, 10);
  EXPECT_EQ(t2[2].samples, 10);
}

// A candidate more than warmup_ratio behind the fastest in its warm-up run is not timed again:
// on a large network that was most of the calibration (SSE4.1 timed three more times).
TEST(JitIsaAuto, WarmUpFarBehindIsNotTimed) {
  FakeTimer fake{{{Isa::kSse41, 23000}, {Isa::kAvx2, 9000}, {Isa::kAvx512, 13000}}, {}};
  IsaCalibrationPolicy p;  // warmup_ratio 1.5: 23 and 13 ms against 9 (past warmup_min_us)
  const std::vector<IsaTiming> t =
      measure_isas(kThree, [&](size_t k, int runs) { return fake(kThree[k], runs); }, p);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].samples, 0);
  EXPECT_DOUBLE_EQ(t[0].min_us, 23000);  // the warm-up, reported as measured
  EXPECT_GE(t[1].samples, 1);
  EXPECT_GE(t[2].samples, 3);  // 1.44x: within the warm-up ratio, timed; out after min_rounds
  EXPECT_EQ(std::count_if(fake.calls.begin(), fake.calls.end(), [](auto& c) { return c.first == Isa::kSse41; }), 1);
  EXPECT_EQ(choose_isa(t, p.tie_margin), Isa::kAvx2);
  IsaSelection sel;
  sel.source = IsaSelection::Source::kMeasured;
  sel.isa = Isa::kAvx2;
  sel.timings = t;
  EXPECT_NE(sel.summary().find("sse4.1 23000.0 us (warm-up only)"), std::string::npos) << sel.summary();
  // A short network: its first run is one-time costs (a 512-bit unit powering up, page faults),
  // so nobody is dropped there; the rounds decide.
  FakeTimer quick{{{Isa::kSse41, 230}, {Isa::kAvx2, 90}, {Isa::kAvx512, 130}}, {}};
  const std::vector<IsaTiming> q =
      measure_isas(kThree, [&](size_t k, int runs) { return quick(kThree[k], runs); }, p);
  EXPECT_GE(q[0].samples, 3);
  EXPECT_GE(q[2].samples, 3);
}

// Long runs (a large network): no new round once max_spent_us went by, even before min_rounds.
TEST(JitIsaAuto, LongRunsStopAtTheSpendingCap) {
  FakeTimer fake{{{Isa::kAvx2, 60000}, {Isa::kAvx512, 40000}}, {}};
  IsaCalibrationPolicy p;  // max_spent_us 100 ms, min_rounds 3
  const std::vector<Isa> two = {Isa::kAvx2, Isa::kAvx512};
  const std::vector<IsaTiming> t = measure_isas(two, [&](size_t k, int runs) { return fake(two[k], runs); }, p);
  EXPECT_EQ(t[0].samples, 1);  // round 0: 100 ms spent
  EXPECT_EQ(t[1].samples, 1);
  EXPECT_EQ(fake.calls.size(), 4u);  // two warm-ups, one round
  EXPECT_EQ(choose_isa(t, p.tie_margin), Isa::kAvx512);
}

TEST(JitIsaAuto, ShortRunsAreTimedInGroups) {
  FakeTimer fake{{{Isa::kSse41, 20}, {Isa::kAvx2, 9}}, {}};
  IsaCalibrationPolicy p;
  p.min_sample_us = 100;
  p.warmup_ratio = 1e9;
  const std::vector<Isa> two = {Isa::kSse41, Isa::kAvx2};
  const std::vector<IsaTiming> t = measure_isas(two, [&](size_t k, int runs) { return fake(two[k], runs); }, p);
  EXPECT_DOUBLE_EQ(t[0].min_us, 20);  // per run, not per sample
  EXPECT_DOUBLE_EQ(t[1].min_us, 9);
  ASSERT_GE(fake.calls.size(), 4u);
  EXPECT_EQ(fake.calls[0].second, 1);  // warm-up: one run
  EXPECT_EQ(fake.calls[2].second, 5);   // 100 us / 20 us
  EXPECT_EQ(fake.calls[3].second, 12);  // ceil(100 / 9)
}

// ---- the cache file ----

class JitIsaCache : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = nnd::test::fresh_test_dir("nnd-isa-cache");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string path() const { return (dir_ / "isa-calibration").string(); }
  // Under a regular file: no directory can be made there, not even by root (tests run as root).
  std::string unwritable_path() const {
    std::ofstream(dir_ / "a-file") << "x";
    return (dir_ / "a-file" / "isa-calibration").string();
  }
  static IsaCalibrationEntry entry(uint64_t network, Isa isa, MathMode math = MathMode::kExact, int64_t batch = 1) {
    IsaCalibrationEntry e;
    e.key = {"GenuineIntel 6.55.8 | Atom\tE3845 | sse4.1", network, batch, math};
    e.isa = isa;
    e.timings = timings({{Isa::kSse41, 2239.1}, {Isa::kAvx2, 885}});
    return e;
  }
  fs::path dir_;
};

TEST_F(JitIsaCache, StoresAndReadsBackByKey) {
  const IsaCalibrationCache cache(path());
  std::vector<std::string> warnings;
  EXPECT_FALSE(cache.lookup(entry(1, Isa::kAvx2).key, &warnings));  // no file yet: no warning
  EXPECT_TRUE(warnings.empty());
  ASSERT_TRUE(cache.store(entry(1, Isa::kAvx2), &warnings));
  ASSERT_TRUE(cache.store(entry(2, Isa::kSse41), &warnings));
  ASSERT_TRUE(cache.store(entry(1, Isa::kSse41, MathMode::kFast), &warnings));
  ASSERT_TRUE(cache.store(entry(1, Isa::kSse41, MathMode::kExact, 16), &warnings));
  EXPECT_TRUE(warnings.empty());
  const auto hit = cache.lookup(entry(1, Isa::kAvx2).key, &warnings);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->isa, Isa::kAvx2);
  ASSERT_EQ(hit->timings.size(), 2u);
  EXPECT_NEAR(hit->timings[0].min_us, 2239.1, 1e-9);
  EXPECT_EQ(cache.lookup(entry(2, Isa::kAvx2).key, &warnings)->isa, Isa::kSse41);
  EXPECT_EQ(cache.lookup(entry(1, Isa::kAvx2, MathMode::kFast).key, &warnings)->isa, Isa::kSse41);
  EXPECT_EQ(cache.lookup(entry(1, Isa::kAvx2, MathMode::kExact, 16).key, &warnings)->isa, Isa::kSse41);
  EXPECT_FALSE(cache.lookup(entry(3, Isa::kAvx2).key, &warnings));
  IsaCalibrationKey other_cpu = entry(1, Isa::kAvx2).key;
  other_cpu.cpu = "AuthenticAMD 25.17.1 | AMD EPYC | sse4.1 avx2 avx512";
  EXPECT_FALSE(cache.lookup(other_cpu, &warnings));
  // Replacing an entry keeps one line for it.
  ASSERT_TRUE(cache.store(entry(1, Isa::kSse41), &warnings));
  EXPECT_EQ(cache.lookup(entry(1, Isa::kAvx2).key, &warnings)->isa, Isa::kSse41);
  std::ifstream in(path());
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 5) << text;  // header + 4 keys
  EXPECT_TRUE(warnings.empty());
}

TEST_F(JitIsaCache, KeepsTheMostRecentEntries) {
  const IsaCalibrationCache cache(path());
  std::vector<std::string> warnings;
  for (uint64_t n = 0; n < IsaCalibrationCache::kMaxEntries + 5; ++n) ASSERT_TRUE(cache.store(entry(n, Isa::kAvx2), &warnings));
  EXPECT_FALSE(cache.lookup(entry(4, Isa::kAvx2).key, &warnings));
  EXPECT_TRUE(cache.lookup(entry(5, Isa::kAvx2).key, &warnings));
  EXPECT_TRUE(cache.lookup(entry(IsaCalibrationCache::kMaxEntries + 4, Isa::kAvx2).key, &warnings));
}

TEST_F(JitIsaCache, CorruptCacheIsAWarning) {
  const IsaCalibrationCache cache(path());
  std::vector<std::string> warnings;
  { std::ofstream(path()) << "\x7f" "ELF garbage\n"; }
  EXPECT_FALSE(cache.lookup(entry(1, Isa::kAvx2).key, &warnings));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("not a calibration cache"), std::string::npos) << warnings[0];
  // The next store replaces it with a valid file.
  warnings.clear();
  ASSERT_TRUE(cache.store(entry(1, Isa::kAvx2), &warnings));
  EXPECT_EQ(cache.lookup(entry(1, Isa::kAvx2).key, &warnings)->isa, Isa::kAvx2);
  EXPECT_TRUE(warnings.empty());
  // A malformed line is skipped with a warning naming it; the good lines still count.
  { std::ofstream(path(), std::ios::app) << "half a line\twith\ttabs\n" << "cpu\t00000000000000zz\t1\texact\tavx2\tavx2=1\n"; }
  EXPECT_EQ(cache.lookup(entry(1, Isa::kAvx2).key, &warnings)->isa, Isa::kAvx2);
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[0].find(":3: malformed entry"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[1].find(":4: malformed entry"), std::string::npos) << warnings[1];
  // An unknown ISA id in the choice (a cache written by a newer nnd) is malformed too.
  { std::ofstream(path()) << "nnd-isa-calibration 1\ncpu\t0000000000000001\t1\texact\tavx10\tavx2=1\n"; }
  warnings.clear();
  EXPECT_FALSE(cache.lookup({"cpu", 1, 1, MathMode::kExact}, &warnings));
  EXPECT_EQ(warnings.size(), 1u);
}

TEST_F(JitIsaCache, UnwritableCacheIsAWarning) {
  const IsaCalibrationCache cache(unwritable_path());
  std::vector<std::string> warnings;
  EXPECT_FALSE(cache.store(entry(1, Isa::kAvx2), &warnings));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("cannot be written"), std::string::npos) << warnings[0];
}

// ---- the engine factory ----

Graph small_dense() {
  Rng rng(3);
  DenseParams d;
  d.units = 8;
  d.kernel = rng.weights({16, 8});
  d.bias = rng.weights({8});
  return one_node(d, {{16}});
}

CpuFeatures forced(std::initializer_list<Isa> isas) {
  CpuFeatures f;
  for (Isa isa : isas) f.add(isa);
  f.brand = "test CPU";
  f.model = "TestVendor 1.2.3";
  return f;
}

std::unique_ptr<JitEngine> auto_engine(const Graph& g, const CpuFeatures& f, FakeTimer* fake, const std::string& cache = "") {
  EngineOptions o;
  o.engine = EngineKind::kJit;
  o.isa_cache = cache;
  JitConfig cfg;
  cfg.features = f;
  cfg.isa_time_runs = [fake](Isa isa, int runs) { return (*fake)(isa, runs); };
  return make_jit_engine(g, o, cfg);
}

TEST(JitIsaAuto, OneIsaCpuMeasuresNothing) {
  FakeTimer fake{{{Isa::kSse41, 10}}, {}};
  const auto e = auto_engine(small_dense(), forced({Isa::kSse41}), &fake);
  EXPECT_EQ(e->isa(), Isa::kSse41);
  EXPECT_TRUE(fake.calls.empty());
  EXPECT_EQ(e->isa_selection().source, IsaSelection::Source::kOnlyCandidate);
  EXPECT_NE(e->isa_selection().summary().find("only ISA"), std::string::npos);
}

TEST(JitIsaAuto, ExplicitIsaMeasuresNothing) {
  FakeTimer fake{{}, {}};
  EngineOptions o;
  o.engine = EngineKind::kJit;
  o.isa = Isa::kSse41;
  JitConfig cfg;
  cfg.features = forced({Isa::kSse41, Isa::kAvx2, Isa::kAvx512});
  cfg.isa_time_runs = [&fake](Isa isa, int runs) { return fake(isa, runs); };
  const auto e = make_jit_engine(small_dense(), o, cfg);
  EXPECT_EQ(e->isa(), Isa::kSse41);
  EXPECT_EQ(e->isa_selection().source, IsaSelection::Source::kRequested);
  EXPECT_TRUE(fake.calls.empty());
}

TEST_F(JitIsaCache, EngineMeasuresOnceThenReadsTheCache) {
  const Graph g = small_dense();
  const CpuFeatures f = forced({Isa::kSse41, Isa::kAvx2, Isa::kAvx512});
  FakeTimer fake{{{Isa::kSse41, 300}, {Isa::kAvx2, 100}, {Isa::kAvx512, 99}}, {}};
  const auto first = auto_engine(g, f, &fake, path());
  EXPECT_EQ(first->isa(), Isa::kAvx2);  // AVX-512 1% faster: a near-tie
  EXPECT_EQ(first->isa_selection().source, IsaSelection::Source::kMeasured);
  EXPECT_TRUE(first->isa_selection().warnings.empty());
  EXPECT_FALSE(fake.calls.empty());
  ASSERT_EQ(first->isa_selection().timings.size(), 3u);
  EXPECT_NE(first->isa_selection().summary().find("avx512 99.0 us"), std::string::npos) << first->isa_selection().summary();

  // A restart: the machine now claims AVX-512 is much faster, but the cached choice stands.
  fake = FakeTimer{{{Isa::kSse41, 300}, {Isa::kAvx2, 100}, {Isa::kAvx512, 50}}, {}};
  const auto second = auto_engine(g, f, &fake, path());
  EXPECT_EQ(second->isa(), Isa::kAvx2);
  EXPECT_EQ(second->isa_selection().source, IsaSelection::Source::kCache);
  EXPECT_TRUE(fake.calls.empty());

  // Another CPU (other ISAs), or another network: measured afresh.
  const auto other_cpu = auto_engine(g, forced({Isa::kSse41, Isa::kAvx2}), &fake, path());
  EXPECT_EQ(other_cpu->isa_selection().source, IsaSelection::Source::kMeasured);
  EXPECT_EQ(other_cpu->isa(), Isa::kAvx2);
  fake.calls.clear();
  Graph retrained = g;
  std::get<DenseParams>(retrained.nodes[0].params).bias.data[0] += 1.0f;
  const auto other_net = auto_engine(retrained, f, &fake, path());
  EXPECT_EQ(other_net->isa(), Isa::kAvx512);
  EXPECT_FALSE(fake.calls.empty());
}

TEST_F(JitIsaCache, EngineWithCorruptCacheWarnsAndMeasures) {
  { std::ofstream(path()) << "garbage\n"; }
  FakeTimer fake{{{Isa::kSse41, 300}, {Isa::kAvx2, 100}}, {}};
  const auto e = auto_engine(small_dense(), forced({Isa::kSse41, Isa::kAvx2}), &fake, path());
  EXPECT_EQ(e->isa(), Isa::kAvx2);
  EXPECT_EQ(e->isa_selection().source, IsaSelection::Source::kMeasured);
  ASSERT_EQ(e->isa_selection().warnings.size(), 1u);
  EXPECT_NE(e->isa_selection().warnings[0].find("not a calibration cache"), std::string::npos);
  // ... and repaired it.
  fake.calls.clear();
  const auto again = auto_engine(small_dense(), forced({Isa::kSse41, Isa::kAvx2}), &fake, path());
  EXPECT_EQ(again->isa_selection().source, IsaSelection::Source::kCache);
  EXPECT_TRUE(again->isa_selection().warnings.empty());
  EXPECT_TRUE(fake.calls.empty());
}

TEST_F(JitIsaCache, EngineWithUnwritableCacheWarnsAndServes) {
  FakeTimer fake{{{Isa::kSse41, 300}, {Isa::kAvx2, 100}}, {}};
  const auto e = auto_engine(small_dense(), forced({Isa::kSse41, Isa::kAvx2}), &fake, unwritable_path());
  EXPECT_EQ(e->isa(), Isa::kAvx2);
  ASSERT_EQ(e->isa_selection().warnings.size(), 1u);
  EXPECT_NE(e->isa_selection().warnings[0].find("cannot be written"), std::string::npos);
}

// A reload in the same process serves the ISA it served before even when no file keeps the
// choice (unwritable here; "off" is the same path): the machine now claims AVX-512 is twice as
// fast, but nothing is measured again.
TEST_F(JitIsaCache, ReloadWithoutAFileRemembersTheChoice) {
  const Graph g = small_dense();
  const CpuFeatures f = forced({Isa::kSse41, Isa::kAvx2, Isa::kAvx512});
  FakeTimer fake{{{Isa::kSse41, 300}, {Isa::kAvx2, 100}, {Isa::kAvx512, 99}}, {}};
  const auto first = auto_engine(g, f, &fake, unwritable_path());
  EXPECT_EQ(first->isa(), Isa::kAvx2);
  EXPECT_EQ(first->isa_selection().source, IsaSelection::Source::kMeasured);
  for (int reload = 0; reload < 10; ++reload) {
    fake = FakeTimer{{{Isa::kSse41, 300}, {Isa::kAvx2, 100}, {Isa::kAvx512, reload % 2 ? 50 : 99}}, {}};
    const auto again = auto_engine(g, f, &fake, unwritable_path());
    EXPECT_EQ(again->isa(), Isa::kAvx2) << "reload " << reload;
    EXPECT_EQ(again->isa_selection().source, IsaSelection::Source::kRemembered);
    EXPECT_TRUE(fake.calls.empty()) << "reload " << reload << " measured again";
    EXPECT_NE(again->isa_selection().summary().find("chosen earlier in this process"), std::string::npos)
        << again->isa_selection().summary();
  }
  // Another file, another process's view of the machine: its own measurement.
  const auto elsewhere = auto_engine(g, f, &fake, path());
  EXPECT_EQ(elsewhere->isa_selection().source, IsaSelection::Source::kMeasured);
  EXPECT_EQ(elsewhere->isa(), Isa::kAvx512);
}

// The file is what processes share, so it wins over this process's memory; a deleted file gets
// the remembered choice back.
TEST_F(JitIsaCache, DeletedFileGetsTheRememberedChoiceBack) {
  const Graph g = small_dense();
  const CpuFeatures f = forced({Isa::kSse41, Isa::kAvx2});
  FakeTimer fake{{{Isa::kSse41, 300}, {Isa::kAvx2, 100}}, {}};
  EXPECT_EQ(auto_engine(g, f, &fake, path())->isa(), Isa::kAvx2);
  fs::remove(path());
  fake = FakeTimer{{{Isa::kSse41, 50}, {Isa::kAvx2, 100}}, {}};
  const auto again = auto_engine(g, f, &fake, path());
  EXPECT_EQ(again->isa(), Isa::kAvx2);
  EXPECT_EQ(again->isa_selection().source, IsaSelection::Source::kRemembered);
  EXPECT_TRUE(fake.calls.empty());
  std::vector<std::string> warnings;
  const std::optional<IsaCalibrationEntry> back =
      IsaCalibrationCache(path()).lookup({f.identity(), graph_content_hash(g), 1, MathMode::kExact}, &warnings);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->isa, Isa::kAvx2);
}

// Issue 35's "ten reloads" with real timing on a real network: bop (two runs of nnrun once chose
// avx512, then avx2) compiled ten times in one process with no cache file serves one ISA, and its
// outputs are bit-identical. (tests/perf/isa_choice_repeatable.sh does ten nnrun processes.)
TEST(JitIsaAuto, TenReloadsOfBopServeOneIsaBitForBit) {
  const fs::path bop = fs::path(NND_SHARED_MODELS_DIR) / "bop.h5";
  NND_REQUIRE_FILE(bop);
  const Graph g = load_keras_h5(bop.string());
  EngineOptions o;
  o.engine = EngineKind::kJit;
  Rng rng(35);
  std::vector<std::vector<float>> in;
  std::vector<InputView> views;
  for (ValueId v : g.inputs) {
    in.push_back(rng.vec(count_of(g.values[v].shape), 0.0f, 1.0f));
    views.push_back({DType::kFloat32, in.back().data()});
  }
  std::optional<Isa> isa;
  std::vector<std::vector<float>> first;
  for (int reload = 0; reload < 10; ++reload) {
    const auto e = make_jit_engine(g, o);
    std::vector<std::vector<float>> out;
    std::vector<float*> ptrs;
    for (ValueId v : g.outputs) out.emplace_back(static_cast<size_t>(count_of(g.values[v].shape)), -1.0f);
    for (auto& b : out) ptrs.push_back(b.data());
    e->run(1, views, ptrs);
    if (!isa) {
      isa = e->isa();
      first = out;
      continue;
    }
    EXPECT_EQ(e->isa(), *isa) << "reload " << reload << ": " << e->isa_selection().summary();
    const bool several = std::count_if(all_isas().begin(), all_isas().end(), [](Isa i) { return host().has(i); }) > 1;
    if (several) {
      EXPECT_EQ(e->isa_selection().source, IsaSelection::Source::kRemembered);
    }
    for (size_t i = 0; i < out.size(); ++i) {
      ASSERT_EQ(out[i].size(), first[i].size());
      EXPECT_EQ(std::memcmp(out[i].data(), first[i].data(), out[i].size() * sizeof(float)), 0)
          << "reload " << reload << " output " << i << " differs";
    }
  }
}

// ---- large networks: the stand-in ----

Graph wide_dense(float bias0) {  // 1.05 M weights: past kStandinMinParameters
  DenseParams d;
  d.units = 1024;
  d.kernel = Weights{{1024, 1024}, std::vector<float>(1024 * 1024, 0.001f)};
  d.bias = Weights::filled(1024, bias0);
  return one_node(d, {{1024}});
}

TEST(JitIsaAuto, LargeNetworksAreTimedOnTheStandin) {
  EXPECT_FALSE(calibrates_on_standin(small_dense()));
  EXPECT_TRUE(calibrates_on_standin(wide_dense(0)));  // by its weights
  ConvParams c;  // 3x3, 64 -> 64 at 112x112: 925 MFLOP from 37k weights, by its FLOPs
  c.filters = 64;
  c.window.kernel_h = c.window.kernel_w = 3;
  c.window.padding = Padding::kSame;
  c.kernel = Weights{{3, 3, 64, 64}, std::vector<float>(3 * 3 * 64 * 64, 0.01f)};
  EXPECT_TRUE(calibrates_on_standin(one_node(c, {{112, 112, 64}})));
  const Graph& s = isa_standin_graph();
  EXPECT_FALSE(calibrates_on_standin(s));
  EXPECT_EQ(graph_content_hash(s), graph_content_hash(isa_standin_graph()));
  const fs::path dir = fs::path(NND_SHARED_MODELS_DIR);
  for (const char* net : {"bop.h5", "ball-penalty-multihead.h5", "field-boundary.h5", "referee-gesture.h5"}) {
    if (fs::exists(dir / net)) {
      EXPECT_FALSE(calibrates_on_standin(load_keras_h5((dir / net).string()))) << net;
    }
  }
}

// The stand-in is what is timed (its own engines: the fake timer sees them), the network is
// compiled once, for the chosen ISA; a second large network on the machine reads the same entry.
TEST_F(JitIsaCache, LargeNetworksShareTheStandinsChoice) {
  const CpuFeatures f = forced({Isa::kSse41, Isa::kAvx2, Isa::kAvx512});
  FakeTimer fake{{{Isa::kSse41, 3000}, {Isa::kAvx2, 1000}, {Isa::kAvx512, 600}}, {}};
  const auto first = auto_engine(wide_dense(0), f, &fake, path());
  EXPECT_EQ(first->isa(), Isa::kAvx512);
  EXPECT_TRUE(first->isa_selection().standin);
  EXPECT_EQ(first->isa_selection().source, IsaSelection::Source::kMeasured);
  EXPECT_NE(first->isa_selection().summary().find("measured on the large-network stand-in: sse4.1"), std::string::npos)
      << first->isa_selection().summary();
  ASSERT_EQ(first->graph().outputs.size(), 1u);  // the network, not the stand-in, is served
  EXPECT_EQ(first->graph().values[static_cast<size_t>(first->graph().outputs[0])].shape, (Dims{1024}));
  std::vector<std::string> warnings;
  const auto entry = IsaCalibrationCache(path()).lookup(
      {f.identity(), graph_content_hash(isa_standin_graph()), 1, MathMode::kExact}, &warnings);
  ASSERT_TRUE(entry.has_value());
  EXPECT_EQ(entry->isa, Isa::kAvx512);
  fake.calls.clear();
  const auto other = auto_engine(wide_dense(1), f, &fake, path());  // other weights, same machine
  EXPECT_EQ(other->isa(), Isa::kAvx512);
  EXPECT_EQ(other->isa_selection().source, IsaSelection::Source::kCache);
  EXPECT_TRUE(fake.calls.empty());
}

TEST(JitIsaAuto, ContentHashIgnoresThePathButNotTheWeights) {
  Graph a = small_dense(), b = small_dense();
  b.source = "elsewhere/copy.h5";
  EXPECT_EQ(graph_content_hash(a), graph_content_hash(b));
  std::get<DenseParams>(b.nodes[0].params).kernel.data[5] *= 2;
  EXPECT_NE(graph_content_hash(a), graph_content_hash(b));
  Graph c = small_dense();
  std::get<DenseParams>(c.nodes[0].params).activation = ActivationKind::kRelu;
  EXPECT_NE(graph_content_hash(a), graph_content_hash(c));
}

TEST(JitIsaAuto, CpuIdentityNamesModelBrandAndIsas) {
  const CpuFeatures f = forced({Isa::kSse41, Isa::kAvx2});
  EXPECT_EQ(f.identity(), "TestVendor 1.2.3 | test CPU | sse4.1 avx2");
  const CpuFeatures h = host();
  EXPECT_FALSE(h.model.empty());  // CPUID leaf 0 and 1 exist on every x86-64
  EXPECT_NE(h.identity().find(h.to_string()), std::string::npos);
}

}  // namespace
}  // namespace nnd::jit::test
