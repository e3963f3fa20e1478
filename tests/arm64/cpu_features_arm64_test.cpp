// The AArch64 CPU probe (core/jit/arm64/cpu_features_arm64.cpp): HWCAP decoding on made-up values,
// and the probe on the CPU the test runs on. Under ctest that is qemu-aarch64's CPU model, named
// with its expected extensions by NND_EXPECT_ARM64_EXTENSIONS (tests/arm64/CMakeLists.txt).
#include <asm/hwcap.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "core/jit/arm64/cpu_features_arm64.h"
#include "core/jit/cpu_features.h"
#include "core/util/error.h"

namespace nnd::jit::arm64 {
namespace {

TEST(Arm64CpuFeatures, DecodesTheHwcapBitsTheJitNeeds) {
  const Arm64Cpu a76 = decode_arm64_cpu(HWCAP_FP | HWCAP_ASIMD | HWCAP_FPHP | HWCAP_ASIMDHP | HWCAP_ASIMDDP,
                                        0x414fd0b1);
  EXPECT_EQ(a76.extensions(), "asimd fp16 dotprod");
  EXPECT_EQ(a76.describe(), "AArch64 Cortex-A76 r4p1 (asimd fp16 dotprod)");
  // FP16 needs the vector half-precision arithmetic too, not only the scalar one.
  EXPECT_EQ(decode_arm64_cpu(HWCAP_ASIMD | HWCAP_FPHP, 0).extensions(), "asimd");
  EXPECT_EQ(decode_arm64_cpu(HWCAP_ASIMD | HWCAP_ASIMDDP, 0).extensions(), "asimd dotprod");
  EXPECT_EQ(decode_arm64_cpu(0, 0).describe(), "AArch64 (none)");
  EXPECT_EQ(decode_arm64_cpu(HWCAP_ASIMD, 0x410fd421).describe(), "AArch64 Cortex-A78AE r0p1 (asimd)");
  EXPECT_EQ(decode_arm64_cpu(HWCAP_ASIMD, 0x4e0f0040).describe(),
            "AArch64 implementer 0x4e part 0x004 (asimd)");
}

// What qemu's CPU model (or the real CPU) reports. Cortex-A76 stands in for the robot's A78AE: the
// same ARMv8.2-A extensions; Cortex-A72 has no dot product.
TEST(Arm64CpuFeatures, ProbeSeesTheCpusExtensions) {
  const Arm64Cpu cpu = read_arm64_cpu();
  std::printf("[ cpu ] %s\n", cpu.describe().c_str());
  EXPECT_TRUE(cpu.asimd) << "every ARMv8-A CPU Linux runs on has Advanced SIMD";
  const char* expected = std::getenv("NND_EXPECT_ARM64_EXTENSIONS");
  if (!expected) GTEST_SKIP() << "NND_EXPECT_ARM64_EXTENSIONS not set: the CPU's extensions are not known here";
  EXPECT_EQ(cpu.extensions(), expected);
  EXPECT_EQ(detect_cpu_features().brand, cpu.describe());
}

// Advanced SIMD (every ARMv8-A CPU Linux runs on) offers the JIT its NEON row; the dot product
// (Cortex-A76, the robot's A78AE; not the A72) adds the neon-dotprod extension row, whose float
// code is NEON's.
TEST(Arm64CpuFeatures, AdvancedSimdOffersNeonAndTheDotProductItsRow) {
  const CpuFeatures f = detect_cpu_features();
  const bool dotprod = read_arm64_cpu().dotprod;
  EXPECT_EQ(f.to_string(), dotprod ? "neon neon-dotprod" : "neon");
  EXPECT_EQ(f.has(Isa::kNeonDot), dotprod);
  EXPECT_EQ(f.best(), Isa::kNeon);
  EXPECT_EQ(all_isa_rows(), (std::vector<Isa>{Isa::kNeon, Isa::kNeonDot}));
  EXPECT_EQ(isa_traits(Isa::kNeonDot).float_code, Isa::kNeon);
  EXPECT_EQ(isa_traits(Isa::kNeonDot).int8_dot, Int8Dot::kDot4);
  EXPECT_EQ(isa_traits(Isa::kNeon).int8_dot, Int8Dot::kWiden);
  EXPECT_FALSE(isa_from_id("neon-dotprod").has_value()) << "not an `isa:` choice";
}

}  // namespace
}  // namespace nnd::jit::arm64
