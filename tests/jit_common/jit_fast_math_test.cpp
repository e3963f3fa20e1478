// Math mode fast (core/jit/generators/fast_math.h): the documented error bound, measured per ISA over a dense
// sweep of x in [-30, 30] plus edge values, against the float64 reference engine. Relative error
// |jit - ref| / |ref| where |ref| >= 1e-30, absolute error below. Prints the measured figures.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "core/io/keras_hdf5.h"
#include "core/jit/specs/elementwise.h"

#include "tests/jit_common/jit_test_util.h"
#include "tests/support/required_files.h"

namespace nnd::jit::test {
namespace {

std::vector<float> sweep(bool huge) {
  std::vector<float> x;
  for (int i = -60000; i <= 60000; ++i) x.push_back(static_cast<float>(i) * 5e-4f + 1.234e-5f);  // off-grid
  for (float e : {0.0f, -0.0f, 1e-30f, 1e-20f, 1e-7f, 1e-4f, 0.3f, 0.625f, 1.0f, 7.9f, 8.0f, 9.0f, 30.0f, 50.0f,
                  80.0f, 87.0f, 87.5f, 88.0f}) {
    x.push_back(e);
    x.push_back(-e);
  }
  if (huge) {
    for (float e : {100.0f, 1000.0f, 1e4f}) {
      x.push_back(e);
      x.push_back(-e);
    }
  }
  return x;
}

struct Measured {
  double worst = 0;
  float at = 0;
};

// The float64 reference computes both gelu forms as 0.5 x (1 + erf/tanh(..)), which cancels for
// x < -6; the sweep compares them with the equivalent 0.5 x erfc(-x / sqrt 2) and
// x / (1 + exp(-2 z)) instead.
// `scaled`: exact mode's own measure instead, |jit - ref| / max(1, |ref|).
Measured measure(const Graph& g, Isa isa, const std::vector<float>& x, ActivationKind accurate = ActivationKind::kLinear,
                 MathMode math = MathMode::kFast, bool scaled = false) {
  auto ref = make_reference_engine(g);
  EngineOptions o;
  o.engine = EngineKind::kJit;
  o.isa = isa;
  o.math = math;
  auto jit = make_jit_engine(g, o);
  std::vector<float> r(x.size()), j(x.size());
  const InputView in{DType::kFloat32, x.data()};
  float* pr = r.data();
  float* pj = j.data();
  ref->run(1, std::span<const InputView>(&in, 1), std::span<float* const>(&pr, 1));
  jit->run(1, std::span<const InputView>(&in, 1), std::span<float* const>(&pj, 1));
  for (size_t i = 0; i < x.size(); ++i) {
    const double v = x[i];
    if (accurate == ActivationKind::kGeluErf) r[i] = static_cast<float>(0.5 * v * std::erfc(-v / std::sqrt(2.0)));
    if (accurate == ActivationKind::kGeluTanh) {
      const double z = std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v);
      r[i] = static_cast<float>(v / (1.0 + std::exp(-2.0 * z)));
    }
  }
  Measured m;
  for (size_t i = 0; i < x.size(); ++i) {
    const double a = std::fabs(static_cast<double>(r[i]));
    double e = std::fabs(static_cast<double>(j[i]) - r[i]);
    if (scaled) e /= std::max(1.0, a);
    else if (a >= 1e-30) e /= a;
    else e = e <= 1e-30 ? 0 : e;
    if (!std::isfinite(j[i]) && std::isfinite(r[i])) e = INFINITY;
    if (e > m.worst) {
      m.worst = e;
      m.at = x[i];
    }
  }
  return m;
}

class JitFastMath : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override { NND_SKIP_WITHOUT(GetParam()); }
};

TEST_P(JitFastMath, ActivationsMeetTheDocumentedBound) {
  using K = ActivationKind;
  int kinds = 0;
  for (int ki = 0; ki <= static_cast<int>(kLastActivationKind); ++ki) {
    const auto k = static_cast<K>(ki);
    if (!fast_math_kind(k)) continue;
    ++kinds;
    const std::vector<float> x = sweep(k != K::kExponential);
    ActivationParams p;
    p.activation = k;
    const Measured m = measure(one_node(p, {{static_cast<int64_t>(x.size())}}), GetParam(), x, k);
    std::printf("[ fast math ] %-8s %-12s max relative error %.3g (at x = %g)\n", isa_id(GetParam()),
                activation_name(k), m.worst, static_cast<double>(m.at));
    EXPECT_LE(m.worst, fast_kernel_error_bound(k)) << activation_name(k) << " at x = " << m.at;
    const Measured s = measure(one_node(p, {{static_cast<int64_t>(x.size())}}), GetParam(), x, k, MathMode::kFast, true);
    std::printf("[ fast math ] %-8s %-12s max scaled error %.3g (at x = %g)\n", isa_id(GetParam()), activation_name(k),
                s.worst, static_cast<double>(s.at));
    EXPECT_LE(s.worst, fast_kernel_scaled_error_bound(k)) << activation_name(k) << " at x = " << s.at;
  }
  EXPECT_EQ(kinds, 10) << "a new fast-math kind: give it a bound in fast_kernel_error_bound and a case in fast_ref";
  EluParams e;
  e.alpha = 0.7;
  const std::vector<float> x = sweep(true);
  const Measured m = measure(one_node(e, {{static_cast<int64_t>(x.size())}}), GetParam(), x);
  std::printf("[ fast math ] %-8s %-12s max relative error %.3g (at x = %g)\n", isa_id(GetParam()), "ELU(0.7)",
              m.worst, static_cast<double>(m.at));
  EXPECT_LE(m.worst, fast_kernel_error_bound(K::kElu));
}

TEST_P(JitFastMath, SoftmaxRows) {
  Rng r(77);
  double worst = 0;
  // Rows of the measured range, and rows of many terms of one magnitude (x in [-2, 2]), where the
  // float sum rounds at every add.
  for (int i = 0; i < 24; ++i) {
    const int64_t len = i < 12 ? r.range(1, 67) : i < 22 ? r.range(68, kFastSoftmaxMeasuredRow) : kFastSoftmaxMeasuredRow;
    const int64_t rows = r.range(1, 5), batch = r.range(1, 9);
    const float spread = i % 2 ? 30.0f : 2.0f;
    SoftmaxParams p;
    p.keras_axis = -1;
    const Graph g = one_node(p, {{rows, len}});
    std::vector<float> x = r.vec(batch * rows * len, -spread, spread);
    if (i == 23) x.assign(x.size(), 0.25f);  // every term equal
    auto ref = make_reference_engine(g);
    EngineOptions o;
    o.engine = EngineKind::kJit;
    o.isa = GetParam();
    o.math = MathMode::kFast;
    auto jit = make_jit_engine(g, o);
    std::vector<float> a(x.size()), b(x.size() + 16, -12345.0f);
    const InputView in{DType::kFloat32, x.data()};
    float* pa = a.data();
    float* pb = b.data();
    ref->run(batch, std::span<const InputView>(&in, 1), std::span<float* const>(&pa, 1));
    jit->run(batch, std::span<const InputView>(&in, 1), std::span<float* const>(&pb, 1));
    for (size_t k = 0; k < a.size(); ++k) {
      const double ref_v = std::fabs(static_cast<double>(a[k]));
      double e = std::fabs(static_cast<double>(b[k]) - a[k]);
      e = ref_v >= 1e-30 ? e / ref_v : (e <= 1e-30 ? 0 : e);
      worst = std::max(worst, e);
    }
    for (size_t k = a.size(); k < b.size(); ++k) EXPECT_EQ(b[k], -12345.0f) << "write past the end";
  }
  std::printf("[ fast math ] %-8s %-12s max relative error %.3g\n", isa_id(GetParam()), "softmax", worst);
  EXPECT_LE(worst, fast_kernel_error_bound(ActivationKind::kSoftmax));
}

// Exact mode runs the f32-fast-* kernels for the kinds whose bound fits its budget and the float64
// helpers for the rest, and every kind stays within exact mode's 1e-5 of the reference engine.
TEST_P(JitFastMath, ExactModeTakesTheKernelsWithinItsBudget) {
  using K = ActivationKind;
  const auto kernel_family = [&](const Graph& g, MathMode math) {
    EngineOptions o;
    o.engine = EngineKind::kJit;
    o.isa = GetParam();
    o.math = math;
    const auto jit = make_jit_engine(g, o);
    std::string names;
    for (const CompiledKernel& k : jit->kernels()) {
      if (k.name.find("f32-fast-") != std::string::npos) return std::string("fast");
      if (k.name.find("f32-call-") != std::string::npos) return std::string("call");
      names += k.name + "; ";
    }
    return names;
  };
  const std::vector<float> x = sweep(true);
  int served = 0;
  for (int ki = 0; ki <= static_cast<int>(kLastActivationKind); ++ki) {
    const auto k = static_cast<K>(ki);
    if (!fast_math_kind(k)) continue;
    ActivationParams p;
    p.activation = k;
    const Graph g = one_node(p, {{static_cast<int64_t>(x.size())}});
    const bool fits = fast_kernel_scaled_error_bound(k) <= kExactActivationBudget && k != K::kExponential;
    EXPECT_EQ(kernel_family(g, MathMode::kExact), fits ? "fast" : "call") << activation_name(k);
    EXPECT_EQ(kernel_family(g, MathMode::kFast), "fast") << activation_name(k);
    if (!fits) continue;
    ++served;
    const Measured m = measure(g, GetParam(), x, k, MathMode::kExact, true);
    EXPECT_LE(m.worst, 1e-5) << activation_name(k) << " at x = " << m.at;
  }
  EXPECT_EQ(served, 9) << "sigmoid, tanh, softplus, elu, selu, swish, mish, both gelu forms (exp's clamped range keeps its helper)";
  // Beyond the kernel's clamp at 88 float's exp still has finite values: exact mode keeps them.
  const std::vector<float> big = {88.25f, 88.5f, 88.7f, 80.0f};
  ActivationParams e;
  e.activation = K::kExponential;
  const Measured m = measure(one_node(e, {{4}}), GetParam(), big, K::kLinear, MathMode::kExact);
  EXPECT_LE(m.worst, 1e-5) << "exp in exact mode at x = " << m.at;
  // Softmax's float sum grows its error with the row: exact mode takes the kernel over the rows its
  // bound was measured on and keeps the float64 helper beyond.
  SoftmaxParams sp;
  sp.keras_axis = -1;
  for (int64_t row : {int64_t{1}, int64_t{10}, kFastSoftmaxMeasuredRow, kFastSoftmaxMeasuredRow + 1}) {
    const Graph g = one_node(sp, {{3, row}});
    EXPECT_EQ(kernel_family(g, MathMode::kExact), row <= kFastSoftmaxMeasuredRow ? "fast" : "call") << "softmax of " << row;
    EXPECT_EQ(kernel_family(g, MathMode::kFast), "fast") << "softmax of " << row;
  }
}

// Whole networks in fast mode: the real robot networks against the reference,
// scaled error |jit - ref| / max(1, |ref|) within 1e-4.
TEST_P(JitFastMath, RealNetworksWithinFastTolerance) {
  const std::filesystem::path dir = NND_SHARED_MODELS_DIR;
  for (const char* m : {"bop.h5", "ball-penalty-multihead.h5", "field-boundary.h5", "referee-gesture.h5"}) {
    if (!::nnd::test::require_file(dir / m)) continue;
    const Graph g = load_keras_h5((dir / m).string());
    Rng r(5);
    std::vector<std::vector<float>> in;
    std::vector<InputView> views;
    for (ValueId v : g.inputs) in.push_back(r.vec(count_of(g.values[v].shape), 0.0f, 1.0f));
    for (auto& x : in) views.push_back({DType::kFloat32, x.data()});
    auto ref = make_reference_engine(g);
    EngineOptions o;
    o.engine = EngineKind::kJit;
    o.isa = GetParam();
    o.math = MathMode::kFast;
    auto jit = make_jit_engine(g, o);
    std::vector<std::vector<float>> a, b;
    std::vector<float*> pa, pb;
    for (ValueId v : g.outputs) {
      a.emplace_back(static_cast<size_t>(count_of(g.values[v].shape)));
      b.emplace_back(a.back().size());
    }
    for (size_t i = 0; i < a.size(); ++i) {
      pa.push_back(a[i].data());
      pb.push_back(b[i].data());
    }
    ref->run(1, views, pa);
    jit->run(1, views, pb);
    double worst = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      for (size_t k = 0; k < a[i].size(); ++k) {
        worst = std::max(worst, std::fabs(static_cast<double>(b[i][k]) - a[i][k]) / std::max(1.0, std::fabs(double{a[i][k]})));
      }
    }
    std::printf("[ fast math ] %-8s %-26s scaled error vs reference %.3g\n", isa_id(GetParam()), m, worst);
    EXPECT_LE(worst, 1e-4) << m;
  }
}

NND_ISA_SUITE(JitFastMath);

}  // namespace
}  // namespace nnd::jit::test
