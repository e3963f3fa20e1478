// The AArch64 CPU probe. Linux reports the CPU's extensions in the AT_HWCAP auxiliary vector
// (arch/arm64/include/uapi/asm/hwcap.h); user space cannot read the ID registers itself unless
// the kernel emulates it, which HWCAP_CPUID says.
#include "core/jit/arm64/cpu_features_arm64.h"

#include <asm/hwcap.h>
#include <sys/auxv.h>

#include <cstdio>

#include "core/jit/cpu_features.h"

namespace nnd::jit {

namespace arm64 {

namespace {

// Arm Ltd. cores (implementer 0x41) by MIDR part number: the robot's and those qemu emulates.
const char* arm_core_name(uint32_t part) {
  switch (part) {
    case 0xd03: return "Cortex-A53";
    case 0xd05: return "Cortex-A55";
    case 0xd07: return "Cortex-A57";
    case 0xd08: return "Cortex-A72";
    case 0xd0b: return "Cortex-A76";
    case 0xd0c: return "Neoverse-N1";
    case 0xd41: return "Cortex-A78";
    case 0xd42: return "Cortex-A78AE";  // the Jetson Orin's (Booster T1/K1)
    case 0xd4b: return "Cortex-A78C";
    default: return nullptr;
  }
}

}  // namespace

Arm64Cpu decode_arm64_cpu(uint64_t hwcap, uint64_t midr) {
  Arm64Cpu cpu;
  cpu.asimd = (hwcap & HWCAP_ASIMD) != 0;
  // FP16 kernels need both the scalar (fphp) and the vector (asimdhp) half-precision arithmetic.
  cpu.fp16 = (hwcap & HWCAP_FPHP) != 0 && (hwcap & HWCAP_ASIMDHP) != 0;
  cpu.dotprod = (hwcap & HWCAP_ASIMDDP) != 0;
  cpu.midr = midr;
  return cpu;
}

std::string Arm64Cpu::extensions() const {
  std::string s;
  for (const auto& [present, name] : {std::pair{asimd, "asimd"}, {fp16, "fp16"}, {dotprod, "dotprod"}}) {
    if (!present) continue;
    if (!s.empty()) s += ' ';
    s += name;
  }
  return s.empty() ? "none" : s;
}

std::string Arm64Cpu::describe() const {
  std::string s = "AArch64";
  if (midr != 0) {
    const uint32_t implementer = static_cast<uint32_t>(midr >> 24) & 0xff;
    const uint32_t part = static_cast<uint32_t>(midr >> 4) & 0xfff;
    const char* name = implementer == 0x41 ? arm_core_name(part) : nullptr;
    char text[64];
    if (name) {
      std::snprintf(text, sizeof text, " %s r%up%u", name, static_cast<unsigned>(midr >> 20) & 0xf,
                    static_cast<unsigned>(midr) & 0xf);
    } else {
      std::snprintf(text, sizeof text, " implementer 0x%02x part 0x%03x", implementer, part);
    }
    s += text;
  }
  s += " (";
  s += extensions();
  s += ')';
  return s;
}

Arm64Cpu read_arm64_cpu() {
  const uint64_t hwcap = getauxval(AT_HWCAP);
  uint64_t midr = 0;
  if (hwcap & HWCAP_CPUID) __asm__("mrs %0, MIDR_EL1" : "=r"(midr));
  return decode_arm64_cpu(hwcap, midr);
}

}  // namespace arm64

CpuFeatures probe_cpu_features() {
  CpuFeatures f;
  const arm64::Arm64Cpu cpu = arm64::read_arm64_cpu();
  if (cpu.asimd) f.add(Isa::kNeon);
  if (cpu.asimd && cpu.dotprod) f.add(Isa::kNeonDot);
  f.brand = cpu.describe();
  return f;
}

}  // namespace nnd::jit
