// The cost model on NEON kernels (the arm64 generators are built into this test on the x86 host;
// skipped without LLVM's tools). The hot loop of the conv and GEMM tiles (per four input
// channels: R input loads, 4V weight loads, 4RV FMLA by element) must reach 80% of the model's
// FMA peak, measured on the same model with a block of independent FMLAs. The A78 has two 128-bit
// FMA pipes (16 FLOP per cycle); LLVM 14, Debian 12's, prices -mcpu=neoverse-n1 (and cortex-a76,
// cortex-a78) with its Cortex-A57 model, one FMLA .4s per cycle (8 FLOP per cycle), so against the
// A78's real peak these figures are half of what they print as a share of the model's.
#include <gtest/gtest.h>

#include <asmjit/core.h>

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "core/jit/arm64/emit_function.h"
#include "core/jit/kernel_config.h"
#include "core/jit/specs/conv.h"
#include "core/util/error.h"
#include "tests/support/neon_conv_spec.h"
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

jit::ConvSpec conv_spec(int64_t h, int64_t w, int64_t cin, int64_t cout, int64_t k, bool rows) {
  return test::neon_conv_spec(h, w, cin, cout, k, rows, ActivationKind::kRelu, 0.0f);
}

jit::CompiledKernel neon_kernel(const std::string& name, const jit::ConvSpec& s) {
  asmjit::CodeHolder code;
  code.init(asmjit::Environment(asmjit::Arch::kAArch64));
  jit::LoopRecorder loops(1);
  jit::CompiledKernel k;
  k.name = name;
  k.code_size = jit::arm64::emit_function(code, s, &loops);
  code.flatten();
  code.resolveUnresolvedLinks();
  const asmjit::CodeBuffer& b = code.textSection()->buffer();
  k.bytes.assign(b.data(), b.data() + b.size());
  k.loops = loops.records(name);
  return k;
}

TEST(CostModelNeon, HotConvAndGemmLoopsReachEightyPercentOfTheFmaPeak) {
  const std::optional<LlvmTools> t = tools();
  if (!t) GTEST_SKIP() << "llvm-mc, llvm-mca or llc missing (Debian `llvm`, scripts/install-deps.sh)";
  const CostModel model(*t, CpuModel{"neoverse-n1", jit::Arch::kAarch64, {}});
  // The model's peak: 12 independent FMLA .4s per block.
  std::vector<std::string> fmlas;
  for (int i = 0; i < 12; ++i) {
    std::string f = "fmla v";
    f += std::to_string(i);
    f += ".4s, v20.4s, v21.4s";
    fmlas.push_back(f);
  }
  const double peak = 12 * 8 / model.price({fmlas}, {100})[0];
  std::printf("[ neoverse-n1 ] model FMA peak %.1f FLOP/cycle (the A78: 16)\n", peak);
  struct Case {
    std::string name;
    jit::ConvSpec spec;
  };
  // bop- and ball-like shapes: 3x3 convs of 16 -> 32 and 32 -> 16 channels on small maps, a
  // pointwise GEMM of 64 -> 64, and a narrow 8-channel output (V = 2, 9 positions).
  const std::vector<Case> cases = {
      {"conv 3x3 16->32", conv_spec(10, 10, 16, 32, 3, false)},
      {"conv 3x3 32->16", conv_spec(8, 15, 32, 16, 3, false)},
      {"gemm 64->64", conv_spec(12, 12, 64, 64, 1, true)},
      {"conv 3x3 16->8", conv_spec(9, 18, 16, 8, 3, false)},
  };
  for (const Case& c : cases) {
    const std::vector<KernelCost> costs = model.kernel_costs({neon_kernel(c.name, c.spec)});
    ASSERT_EQ(costs.size(), 1u);
    const KernelCost& k = costs[0];
    // The hot block is the four-channel group: 4 channels x R positions x V vectors x 4 lanes x 2.
    const int R = c.spec.blocking.rows, V = c.spec.blocking.vmax;
    const double flop = 2.0 * 4 * 4 * R * V;
    const double per_cycle = flop / k.hot_cycles_per_run;
    std::printf("[ neoverse-n1 ] %-16s tile %dx%dv: hot block %.1f cycles per run (bound %.1f, %s), %.1f FLOP/cycle "
                "= %.0f%% of the model's peak, %.0f%% of 16\n",
                c.name.c_str(), R, V, k.hot_cycles_per_run, k.hot_bound, k.bottleneck.c_str(), per_cycle,
                100 * per_cycle / peak, 100 * per_cycle / 16);
    EXPECT_GE(per_cycle, 0.8 * peak) << c.name << ": " << k.bottleneck;
  }
}

// A tile of one row (Dense at batch 1: the remainder tile is the whole call) reads each weight
// vector for one FMLA: 4V weight loads and one input load per 4V FMLAs, so the load unit bounds
// it (17 loads per 16 FMLAs for V = 4); it must still stay within 80% of the FMA peak (measured
// 86%: the FMLA chains of its V accumulators are not what limits it).
TEST(CostModelNeon, OneRowGemmTilesStayNearTheFmaPeak) {
  const std::optional<LlvmTools> t = tools();
  if (!t) GTEST_SKIP() << "llvm-mc, llvm-mca or llc missing (Debian `llvm`, scripts/install-deps.sh)";
  const CostModel model(*t, CpuModel{"neoverse-n1", jit::Arch::kAarch64, {}});
  std::vector<std::string> fmlas;
  for (int i = 0; i < 12; ++i) {
    std::string f = "fmla v";
    f += std::to_string(i);
    f += ".4s, v20.4s, v21.4s";
    fmlas.push_back(f);
  }
  const double peak = 12 * 8 / model.price({fmlas}, {100})[0];
  const jit::ConvSpec s = conv_spec(1, 1, 256, 16, 1, true);
  const std::vector<KernelCost> costs = model.kernel_costs({neon_kernel("dense 256->16", s)});
  ASSERT_EQ(costs.size(), 1u);
  const double per_cycle = 2.0 * 4 * 4 * s.blocking.vmax / costs[0].hot_cycles_per_run;
  std::printf("[ neoverse-n1 ] dense 256->16 at batch 1, tile 1x%dv: hot block %.1f cycles per run (%s), "
              "%.1f FLOP/cycle = %.0f%% of the model's peak\n",
              s.blocking.vmax, costs[0].hot_cycles_per_run, costs[0].bottleneck.c_str(), per_cycle, 100 * per_cycle / peak);
  EXPECT_GE(per_cycle, 0.8 * peak) << costs[0].bottleneck;
}

}  // namespace
}  // namespace nnd::cost
