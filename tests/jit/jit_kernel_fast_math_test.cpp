// Testers of math mode fast's kernels (x86/math.h): f32-fast-<act> (emit_fast_unary, every kind
// fast_math_kind accepts) and f32-fast-softmax (emit_fast_softmax), over every tail length of
// their vector loops, softmax rows of 1..3 vectors plus every tail, and batches 1..3. The error
// bounds are math.h's documented ones (the dense accuracy sweep is jit_fast_math_test.cpp; here
// the point is that every lane of every tail and row is computed, and nothing else is touched).
#include <gtest/gtest.h>

#include <sstream>

#include "core/jit/x86/math.h"
#include "tests/jit/kernel_tester.h"

namespace nnd::jit::test {
namespace {

NND_KERNEL_TEST_SUITE(F32Fast);
NND_KERNEL_TEST_SUITE(F32FastSoftmax);

double fast_ref(ActivationKind k, double x, double alpha) {
  using K = ActivationKind;
  const double sig = 1 / (1 + std::exp(-x));
  const double softplus = std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x)));
  switch (k) {
    case K::kSigmoid: return sig;
    case K::kTanh: return std::tanh(x);
    case K::kSoftplus: return softplus;
    case K::kElu: return x > 0 ? x : alpha * std::expm1(x);
    case K::kSelu: return 1.05070098 * (x > 0 ? x : 1.67326324 * std::expm1(x));
    case K::kSwish: return x * sig;
    case K::kGeluErf: return 0.5 * x * std::erfc(-x / std::sqrt(2.0));
    case K::kGeluTanh: return x / (1 + std::exp(-2 * std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
    case K::kExponential: return std::exp(x);
    case K::kMish: return x * std::tanh(softplus);
    default: throw std::logic_error("fast_ref: not a fast-math kind");
  }
}

// math.h's bounds, relative (fast_kernel_error_bound); checked as the scaled error max(1, |ref|) of
// kernel_tester.h, which is no looser for |ref| >= 1 and absolute below.
double fast_tol(ActivationKind k) { return fast_kernel_error_bound(k); }

TEST_P(F32Fast, EveryKindEveryTail) {
  const GuardedBuffer none = guarded_weights({});
  uint32_t seed = 1;
  for (int ki = 0; ki <= static_cast<int>(kLastActivationKind); ++ki) {
    const auto act = static_cast<ActivationKind>(ki);
    if (!fast_math_kind(act)) continue;
    std::vector<int64_t> counts = tail_sweep(width(), 4);
    counts.push_back(1);
    for (int64_t count : counts) {
      FastUnarySpec s;
      s.count = count;
      s.act = act;
      s.alpha = act == ActivationKind::kElu ? 0.7f : 1.0f;
      check_unary_kernel(isa(), std::string("f32-fast-") + activation_name(act),
                         [&](VecEmitter& ve) { emit_fast_unary(ve, s); }, none, count, -10.0f, 10.0f, seed++,
                         [&](int64_t, float x) { return fast_ref(act, x, s.alpha); }, fast_tol(act));
    }
  }
}

TEST_P(F32FastSoftmax, RowsAndTails) {
  const GuardedBuffer none = guarded_weights({});
  uint32_t seed = 100;
  std::vector<int64_t> lens = tail_sweep(width(), 3);
  lens.push_back(1);
  for (int64_t len : lens) {
    for (int64_t rows : {1, 3}) {
      const KernelUnderTest k(isa(), "f32-fast-softmax", [&](VecEmitter& ve) { emit_fast_softmax(ve, rows, len); });
      Rng rng(seed++);
      for (int64_t batch = 1; batch <= 3; ++batch) {
        const size_t n = static_cast<size_t>(batch * rows * len);
        GuardedBuffer in(n), out(n);
        for (size_t i = 0; i < n; ++i) in[i] = rng.uniform(-30.0f, 30.0f);
        k.run({in.data()}, out.data(), none, batch);
        std::ostringstream what;
        what << isa_id(isa()) << " f32-fast-softmax rows " << rows << " len " << len << " batch " << batch;
        Checker check(what.str());
        for (size_t r = 0; r < n / static_cast<size_t>(len); ++r) {
          const float* x = in.data() + r * static_cast<size_t>(len);
          double mx = -INFINITY, sum = 0;
          for (int64_t j = 0; j < len; ++j) mx = std::max<double>(mx, x[j]);
          for (int64_t j = 0; j < len; ++j) sum += std::exp(x[j] - mx);
          for (int64_t j = 0; j < len; ++j) {
            const size_t o = r * static_cast<size_t>(len) + static_cast<size_t>(j);
            check.near(o, out[o], std::exp(x[j] - mx) / sum, fast_kernel_error_bound(ActivationKind::kSoftmax));
          }
        }
        check.guards(out, "output");
        check.guards(in, "input");
        if (!check.ok()) break;
      }
    }
  }
}

}  // namespace
}  // namespace nnd::jit::test
