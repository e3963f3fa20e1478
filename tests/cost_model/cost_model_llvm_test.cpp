// The cost model end to end with LLVM's tools (skipped without them): CPU models and their ISAs,
// and a synthetic kernel whose loops' cycles are known from the scheduling model's latencies.
#include <gtest/gtest.h>

#include <optional>

#include "core/jit/kernel_module.h"
#include "core/jit/x86/emit_kernel.h"
#include "core/jit/x86/counted_loop_p.h"
#include "core/util/error.h"
#include "tools/cost_model/cost_model.h"

namespace nnd::cost {
namespace {

std::optional<LlvmTools> tools() {
  try {
    return LlvmTools::find();
  } catch (const Error&) {
    return std::nullopt;
  }
}

#define NND_NEED_LLVM_TOOLS(t)                                                                   \
  const std::optional<LlvmTools> t = tools();                                                    \
  if (!t) GTEST_SKIP() << "llvm-mc, llvm-mca or llc missing (Debian `llvm`, scripts/install-deps.sh)"

TEST(CostModelLlvm, CpuModelsHaveTheIsasOfTheirCpus) {
  NND_NEED_LLVM_TOOLS(t);
  using jit::Isa;
  const CpuModel slm = probe_cpu_model(*t, "silvermont");
  EXPECT_TRUE(slm.isas.has(Isa::kSse41));
  EXPECT_FALSE(slm.isas.has(Isa::kAvx2)) << "the Atom E3845 has no AVX";
  const CpuModel hsw = probe_cpu_model(*t, "haswell");
  EXPECT_TRUE(hsw.isas.has(Isa::kAvx2));
  EXPECT_FALSE(hsw.isas.has(Isa::kAvx512));
  const CpuModel skx = probe_cpu_model(*t, "skylake-avx512");
  EXPECT_TRUE(skx.isas.has(Isa::kAvx512));
  try {
    probe_cpu_model(*t, "no-such-cpu");
    FAIL() << "an unknown CPU model was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
  }
}

// M outer iterations, each: a chain of 8 dependent addps (Silvermont: latency 3, so 24 cycles
// per iteration in steady state) run N times in an inner loop, then one block of straight-line
// code. The kernel's cycles must be M x N x (the inner body's cycles) plus the rest once per
// outer iteration: within a few percent of M x N x 24.
TEST(CostModelLlvm, ASyntheticKernelIsWeightedByItsTripCounts) {
  NND_NEED_LLVM_TOOLS(t);
  using namespace jit;
  constexpr int64_t kOuter = 7, kInner = 300;
  KernelModule m(Isa::kSse41, false, "");
  m.record_loops(1);
  compile_body(m, "chain", [](VecEmitter& ve) {
    ve.zero(0);
    ve.zero(1);
    regs::counted_loop(ve, x86::Gp(x86::r8), kOuter, [&] {
      regs::counted_loop(ve, x86::Gp(x86::r9), kInner, [&] {
        for (int i = 0; i < 8; ++i) ve.add(0, 0, 1);
      });
      ve.add(1, 1, 0);
    });
  });
  const CostModel model(*t, probe_cpu_model(*t, "silvermont"));
  const std::vector<KernelCost> c = model.kernel_costs(m.kernels());
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].hot_runs, kOuter * kInner);
  EXPECT_NEAR(c[0].hot_cycles_per_run, 24.0, 0.5);
  EXPECT_EQ(c[0].bottleneck, "latency: register deps");
  const double expected = kOuter * kInner * 24.0;
  EXPECT_GT(c[0].cycles, expected);
  EXPECT_LT(c[0].cycles, expected * 1.03);
}

// The model's peak on Silvermont for the JIT's mul+add loop: one mulps per 2 cycles at the port
// bound (4 lanes x 2 FLOP / 2 cycles), less as llvm-mca schedules it behind the in-order queues.
TEST(CostModelLlvm, SilvermontPeakIsOneMulpsEveryTwoCycles) {
  NND_NEED_LLVM_TOOLS(t);
  const CostModel model(*t, probe_cpu_model(*t, "silvermont"));
  const CostModel::Peak p = model.peak_flop_per_cycle(jit::Isa::kSse41);
  EXPECT_NEAR(p.bound, 4.0, 0.01);
  EXPECT_LT(p.scheduled, p.bound);
  EXPECT_GT(p.scheduled, 1.0);
}

}  // namespace
}  // namespace nnd::cost
