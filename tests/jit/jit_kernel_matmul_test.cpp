// Tester of f32-matmul (core/jit/generators/matmul.h through x86/kernels_generic.cpp), the product of
// two computed tensors: every column tail (tail_sweep) with full and partial column blocks, row
// counts below, at and above the tile's rows, one to many steps of k, several matrices per sample
// and batches 1..3, each with the tile kernel_config's matmul_blocking gives and with 1x1; float64
// reference, nothing written outside the output.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <sstream>

#include "core/jit/kernel_config.h"
#include "core/jit/x86/kernels.h"
#include "tests/jit/kernel_tester.h"

namespace nnd::jit::test {
namespace {

NND_KERNEL_TEST_SUITE(F32Matmul);

bool check_matmul(Isa isa, const MatMulSpec& s, uint32_t seed) {
  const GuardedBuffer weights = guarded_weights({});
  const KernelUnderTest k(isa, "f32-matmul", [&](VecEmitter& ve) { emit_matmul(ve, s); });
  Rng rng(seed);
  for (int64_t batch = 1; batch <= 3; ++batch) {
    const int64_t mats = batch * s.matrices;
    GuardedBuffer a(static_cast<size_t>(mats * s.m * s.k)), b(static_cast<size_t>(mats * s.k * s.n));
    GuardedBuffer c(static_cast<size_t>(mats * s.m * s.n));
    for (size_t i = 0; i < a.size(); ++i) a[i] = rng.uniform(-2.0f, 2.0f);
    for (size_t i = 0; i < b.size(); ++i) b[i] = rng.uniform(-2.0f, 2.0f);
    k.run({a.data(), b.data()}, c.data(), weights, batch);
    std::ostringstream what;
    what << isa_id(isa) << " f32-matmul " << s.matrices << " x (" << s.m << "x" << s.k << " . " << s.k << "x" << s.n
         << ") tile " << s.rows << "x" << s.vectors << "v batch " << batch;
    Checker check(what.str());
    for (int64_t p = 0; p < mats; ++p) {
      for (int64_t i = 0; i < s.m; ++i) {
        for (int64_t j = 0; j < s.n; ++j) {
          double ref = 0;
          for (int64_t t = 0; t < s.k; ++t) {
            ref += static_cast<double>(a[static_cast<size_t>((p * s.m + i) * s.k + t)]) *
                   static_cast<double>(b[static_cast<size_t>((p * s.k + t) * s.n + j)]);
          }
          const size_t o = static_cast<size_t>((p * s.m + i) * s.n + j);
          // float32 accumulation over k products of up to 4 in magnitude: rounding grows with
          // sqrt(k); a wrong element is off by about 1.
          check.near(o, c[o], ref, 1e-5 * std::sqrt(static_cast<double>(s.k)));
        }
      }
    }
    check.guards(c, "output");
    check.guards(a, "A");
    check.guards(b, "B");
    if (!check.ok()) return false;
  }
  return true;
}

TEST_P(F32Matmul, TilesTailsAndStacks) {
  uint32_t seed = 900;
  for (int64_t n : tail_sweep(width(), 4)) {
    for (int64_t m : {1, 2, 5, 9, 17}) {
      for (int64_t k : {1, 3, 8}) {
        MatMulSpec s;
        s.matrices = 1 + (m + k) % 3;
        s.m = m;
        s.k = k;
        s.n = n;
        const MatMulBlocking b = matmul_blocking(isa_traits(isa()), m, n);
        s.rows = b.rows;
        s.vectors = b.vectors;
        ASSERT_TRUE(check_matmul(isa(), s, seed++));
        s.rows = s.vectors = 1;
        ASSERT_TRUE(check_matmul(isa(), s, seed++));
      }
    }
  }
}

// The largest tile the blocking gives must fit the registers, with attention's shapes (k = 64,
// scores of 197 tokens).
TEST_P(F32Matmul, AttentionShapes) {
  uint32_t seed = 1900;
  for (const auto& [m, k, n] : {std::array<int64_t, 3>{197, 64, 197}, {197, 197, 64}, {49, 32, 49}, {16, 8, 3}}) {
    MatMulSpec s;
    s.matrices = 2;
    s.m = m;
    s.k = k;
    s.n = n;
    const MatMulBlocking b = matmul_blocking(isa_traits(isa()), m, n);
    s.rows = b.rows;
    s.vectors = b.vectors;
    ASSERT_TRUE(check_matmul(isa(), s, seed++));
  }
}

}  // namespace
}  // namespace nnd::jit::test
