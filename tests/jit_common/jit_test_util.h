// Helpers of the JIT tests of every architecture (tests/jit_common; tests/jit, x86's own, uses them
// too): one-node graphs, random data, and JIT-vs-reference comparison for an ISA (skipped where
// the CPU lacks it). Suites are parametrised over all_isas(), the build's rows (SSE4.1, AVX2 and
// AVX-512 on x86-64, NEON on AArch64); where a build has none, NND_ISA_SUITE instantiates nothing
// and JitBuild.ListsTheIsasTheTestsRunOn (jit_build_isas_test.cpp) says so as a skip.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/engine/engine_options.h"
#include "core/ir/graph.h"
#include "core/ir/shape_inference.h"
#include "core/jit/jit_engine.h"
#include "core/ref/reference_engine.h"
#include "tests/support/one_node_graph.h"

namespace nnd::jit::test {

// Every ISA is jit::all_isas() (core/jit/isa.h); an Isa converts to an IsaChoice.

// Test-name suffix of an ISA parameter ("sse41", "avx2", "avx512", "neon"): for
// INSTANTIATE_TEST_SUITE_P(Isa, Suite, ::testing::ValuesIn(all_isas()), isa_param_name).
inline std::string isa_param_name(const ::testing::TestParamInfo<Isa>& info) {
  std::string s = isa_id(info.param);
  s.erase(std::remove(s.begin(), s.end(), '.'), s.end());
  return s;
}

inline const CpuFeatures& host() {
  static const CpuFeatures f = detect_cpu_features();
  return f;
}

#define NND_SKIP_WITHOUT(isa)                                                                  \
  do {                                                                                         \
    if (!::nnd::jit::test::host().has(isa)) {                                                  \
      GTEST_SKIP() << "this CPU lacks " << ::nnd::jit::isa_id(isa) << ": its JIT path is not tested here"; \
    }                                                                                          \
  } while (0)

// Instantiates the parametrised Suite once per ISA of the build (test names Isa/Suite.Test/<isa>).
#define NND_ISA_SUITE(Suite)                                                                             \
  INSTANTIATE_TEST_SUITE_P(Isa, Suite, ::testing::ValuesIn(::nnd::jit::all_isas()),                      \
                           ::nnd::jit::test::isa_param_name)

// The first ISA of the build (SSE4.1, NEON): for checks of choices every ISA makes alike (the
// lowering's buffer reuse, errors for what is not compiled).
inline Isa first_isa() { return all_isas().front(); }

class Rng {
 public:
  explicit Rng(uint32_t seed) : e_(seed) {}
  int64_t range(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(e_); }
  float uniform(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(e_); }
  bool coin() { return range(0, 1) == 1; }
  std::vector<float> vec(int64_t n, float lo = -1.0f, float hi = 1.0f) {
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& x : v) x = uniform(lo, hi);
    return v;
  }
  Weights weights(Dims shape, float scale = 0.5f) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return Weights{std::move(shape), vec(n, -scale, scale)};
  }

 private:
  std::mt19937 e_;
};

inline Graph one_node(LayerParams params, const std::vector<Dims>& input_shapes, DType dtype = DType::kFloat32,
                      const std::string& source_op = "Test") {
  Graph g = nnd::test::one_node_graph(std::move(params), input_shapes, dtype, {"jit-test", "layer", source_op});
  infer_shapes(g);
  return g;
}

// Builds a graph node by node (values named after their producers), for chains and small DAGs.
class GraphBuilder {
 public:
  explicit GraphBuilder(std::string source) { g_.source = std::move(source); }
  ValueId input(const std::string& name, Dims shape, DType dtype = DType::kFloat32) {
    const ValueId v = value(name, std::move(shape));
    g_.values[static_cast<size_t>(v)].dtype = dtype;
    g_.inputs.push_back(v);
    g_.input_names.push_back(name);
    return v;
  }
  ValueId node(const std::string& name, LayerParams p, std::vector<ValueId> in) {
    Node n;
    n.name = name;
    n.source_op = layer_kind_name(p);
    n.params = std::move(p);
    n.inputs = std::move(in);
    n.output = value(name);
    g_.values[static_cast<size_t>(n.output)].producer = static_cast<NodeId>(g_.nodes.size());
    g_.nodes.push_back(std::move(n));
    return g_.nodes.back().output;
  }
  // Marks the outputs and infers every shape.
  Graph finish(const std::vector<ValueId>& outputs) {
    for (ValueId v : outputs) {
      g_.outputs.push_back(v);
      g_.output_names.push_back(g_.values[static_cast<size_t>(v)].name);
    }
    infer_shapes(g_);
    return std::move(g_);
  }

 private:
  ValueId value(const std::string& name, Dims shape = {}) {
    Value v;
    v.name = name;
    v.shape = std::move(shape);
    g_.values.push_back(v);
    return static_cast<ValueId>(g_.values.size() - 1);
  }
  Graph g_;
};

inline int64_t count_of(const Dims& d) {
  int64_t n = 1;
  for (int64_t x : d) n *= x;
  return n;
}

// Runs g on random inputs (batch samples) with the reference engine and the JIT for `isa`;
// returns the worst scaled error |jit - ref| / max(1, |ref|) over all outputs. chunk_bytes > 0
// replaces JitConfig::chunk_bytes (small values split the batch into several chunks).
inline double jit_vs_reference(const Graph& g, Isa isa, int64_t batch, uint32_t seed, bool u8_inputs = false,
                               std::string* where = nullptr, int64_t chunk_bytes = 0) {
  Rng rng(seed);
  std::vector<std::vector<float>> in_f;
  std::vector<std::vector<uint8_t>> in_u;
  std::vector<InputView> views;
  for (ValueId v : g.inputs) {
    const int64_t n = batch * count_of(g.values[v].shape);
    if (u8_inputs) {
      std::vector<uint8_t> b(static_cast<size_t>(n));
      for (auto& x : b) x = static_cast<uint8_t>(rng.range(0, 255));
      in_u.push_back(std::move(b));
    } else {
      in_f.push_back(rng.vec(n, -2.0f, 2.0f));
    }
  }
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    views.push_back(u8_inputs ? InputView{DType::kUInt8, in_u[i].data()} : InputView{DType::kFloat32, in_f[i].data()});
  }
  auto ref = make_reference_engine(g);
  EngineOptions opt;
  opt.engine = EngineKind::kJit;
  opt.isa = isa;
  JitConfig poisoned;  // a kernel reading arena memory nobody wrote this call sees NaN
  poisoned.arena_fill = std::numeric_limits<float>::quiet_NaN();
  if (chunk_bytes > 0) poisoned.chunk_bytes = chunk_bytes;
  auto jit = make_jit_engine(g, opt, poisoned);
  // Every element in 8 bytes (room for float32 and int64 outputs), 16 guard elements after the
  // JIT's.
  constexpr int64_t kGuard = 0x5a5a5a5a5a5a5a5a;
  std::vector<std::vector<int64_t>> out_r, out_j;
  std::vector<OutputView> pr, pj;
  std::vector<size_t> counts;
  for (ValueId v : g.outputs) {
    const int64_t n = batch * count_of(g.values[v].shape);
    counts.push_back(static_cast<size_t>(n));
    out_r.emplace_back(static_cast<size_t>(n), 0);
    out_j.emplace_back(static_cast<size_t>(n + 16), kGuard);
    const DType t = output_view_dtype(g.values[v].dtype);
    if (t == DType::kFloat32) {
      std::fill_n(reinterpret_cast<float*>(out_r.back().data()), n, NAN);
      std::fill_n(reinterpret_cast<float*>(out_j.back().data()), n, -12345.0f);
    }
    pr.push_back({t, out_r.back().data()});
    pj.push_back({t, out_j.back().data()});
  }
  ref->run(batch, views, pr);
  jit->run(batch, views, pj);
  auto at = [&](const std::vector<int64_t>& o, size_t i, size_t k) -> double {
    return pr[i].dtype == DType::kInt64 ? static_cast<double>(o[k]) : reinterpret_cast<const float*>(o.data())[k];
  };
  double worst = 0;
  for (size_t i = 0; i < out_r.size(); ++i) {
    for (size_t k = 0; k < counts[i]; ++k) {
      const double r = at(out_r[i], i, k), j = at(out_j[i], i, k);
      double e = std::fabs(r - j) / std::max(1.0, std::fabs(r));
      if (std::isnan(e) || (std::isinf(r) != std::isinf(j))) e = INFINITY;
      if (std::isnan(r) && std::isnan(j)) e = 0;  // both NaN (sqrt of a negative, say): they agree
      if (std::isinf(r) && r == j) e = 0;
      if (e > worst) {
        worst = e;
        if (where) *where = "output " + std::to_string(i) + " index " + std::to_string(k) + ": ref " +
                            std::to_string(r) + " jit " + std::to_string(j);
      }
    }
    // The guard: the elements after the JIT's last one (a float32 output's second half of its
    // 8-byte elements included) are untouched.
    const size_t bytes = counts[i] * dtype_bytes(pr[i].dtype);
    const auto* raw = reinterpret_cast<const unsigned char*>(out_j[i].data());
    for (size_t b = bytes; b < out_j[i].size() * 8; ++b) {
      if (raw[b] != 0x5a) {
        worst = INFINITY;
        if (where) *where = "write past the end of output " + std::to_string(i);
        break;
      }
    }
  }
  return worst;
}

inline constexpr double kTol = 1e-5;

// EngineOptions::threads: runs g (random inputs, batch samples) on a single-thread JIT engine and
// on one with `threads` threads that splits every splittable kernel (JitConfig::min_split_flops 0),
// both on NaN-poisoned arenas; returns "" when every output is bit-identical, else where they
// differ. *split_kernels: how many kernels the threaded engine split (its "[part 1/n]" kernels).
inline std::string threads_mismatch(const Graph& g, Isa isa, int64_t batch, uint32_t seed, int threads,
                                    bool u8_inputs = false, int* split_kernels = nullptr,
                                    int64_t min_split_flops = 0) {
  Rng rng(seed);
  std::vector<std::vector<float>> in_f;
  std::vector<std::vector<uint8_t>> in_u;
  std::vector<InputView> views;
  for (ValueId v : g.inputs) {
    const int64_t n = batch * count_of(g.values[v].shape);
    if (u8_inputs) {
      std::vector<uint8_t> b(static_cast<size_t>(n));
      for (auto& x : b) x = static_cast<uint8_t>(rng.range(0, 255));
      in_u.push_back(std::move(b));
    } else {
      in_f.push_back(rng.vec(n, -2.0f, 2.0f));
    }
  }
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    views.push_back(u8_inputs ? InputView{DType::kUInt8, in_u[i].data()} : InputView{DType::kFloat32, in_f[i].data()});
  }
  JitConfig cfg;
  cfg.arena_fill = std::numeric_limits<float>::quiet_NaN();
  cfg.min_split_flops = min_split_flops;
  EngineOptions one;
  one.engine = EngineKind::kJit;
  one.isa = isa;
  EngineOptions many = one;
  many.threads = threads;
  auto e1 = make_jit_engine(g, one, cfg);
  auto en = make_jit_engine(g, many, cfg);
  if (split_kernels) {
    *split_kernels = 0;
    for (const CompiledKernel& k : en->kernels()) *split_kernels += k.name.find("[part 1/") != std::string::npos;
  }
  std::vector<std::vector<float>> o1, on;
  std::vector<float*> p1, pn;
  for (ValueId v : g.outputs) {
    const auto n = static_cast<size_t>(batch * count_of(g.values[v].shape));
    o1.emplace_back(n, -1.0f);
    on.emplace_back(n, -2.0f);
  }
  for (size_t i = 0; i < o1.size(); ++i) {
    p1.push_back(o1[i].data());
    pn.push_back(on[i].data());
  }
  e1->run(batch, views, p1);
  for (int round = 0; round < 2; ++round) {  // twice: the second run reuses the warm pool
    en->run(batch, views, pn);
    for (size_t i = 0; i < o1.size(); ++i) {
      for (size_t k = 0; k < o1[i].size(); ++k) {
        if (std::memcmp(&o1[i][k], &on[i][k], sizeof(float)) != 0) {
          return "run " + std::to_string(round) + " output " + std::to_string(i) + " index " + std::to_string(k) +
                 ": 1 thread " + std::to_string(o1[i][k]) + ", " + std::to_string(threads) + " threads " +
                 std::to_string(on[i][k]);
        }
      }
    }
  }
  return "";
}

// Kernels of `g` compiled for `isa` whose name contains `what` (tests that a path was chosen).
inline int kernels_named(const Graph& g, const std::string& what, Isa isa) {
  EngineOptions opt;
  opt.engine = EngineKind::kJit;
  opt.isa = isa;
  auto jit = make_jit_engine(g, opt);
  int n = 0;
  for (const CompiledKernel& k : jit->kernels()) n += k.name.find(what) != std::string::npos ? 1 : 0;
  return n;
}

}  // namespace nnd::jit::test
