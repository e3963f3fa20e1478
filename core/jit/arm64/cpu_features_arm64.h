// What the AArch64 CPU probe reads (cpu_features_arm64.cpp): the Linux HWCAP bits the JIT's NEON
// kernels will depend on, and the core's MIDR_EL1 for logs. Split from the probe so the decoding
// is tested on made-up values, not only on the CPU (or qemu model) the tests run on.
#pragma once

#include <cstdint>
#include <string>

namespace nnd::jit::arm64 {

struct Arm64Cpu {
  bool asimd = false;    // Advanced SIMD (NEON): ARMv8-A's baseline, what a NEON row needs
  bool fp16 = false;     // half-precision arithmetic, scalar and vector (HWCAP fphp + asimdhp)
  bool dotprod = false;  // SDOT/UDOT (HWCAP asimddp): int8 dot products, ARMv8.2-A optional
  uint64_t midr = 0;     // MIDR_EL1 (0: the kernel does not expose it)

  // "Cortex-A76 r4p1 (asimd fp16 dotprod)": the CpuFeatures brand, for logs and messages.
  std::string describe() const;
  // "asimd fp16 dotprod": the extensions present, in that order; "none".
  std::string extensions() const;
};

// Decodes the kernel's AT_HWCAP word and a MIDR_EL1 value.
Arm64Cpu decode_arm64_cpu(uint64_t hwcap, uint64_t midr);

// The calling CPU: getauxval(AT_HWCAP), and MIDR_EL1 when HWCAP says the kernel emulates reads of
// the ID registers (HWCAP_CPUID).
Arm64Cpu read_arm64_cpu();

}  // namespace nnd::jit::arm64
