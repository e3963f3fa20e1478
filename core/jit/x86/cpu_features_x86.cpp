// The x86-64 CPU probe: CPUID and XGETBV, which decide the ISAs of the table the CPU and the OS
// (saved register state) support.
#include <cpuid.h>

#include <cstring>
#include <string>

#include "core/jit/cpu_features.h"

namespace nnd::jit {

namespace {

uint64_t xgetbv0() {
  uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

// "GenuineIntel 6.55.8": the family and model as the SDM and AMD's manuals combine them (the
// extended fields count only for family 15 and, for the model, families 6 and 15).
std::string model_of(const char* vendor, unsigned leaf1_eax) {
  const unsigned base_family = (leaf1_eax >> 8) & 0xF, base_model = (leaf1_eax >> 4) & 0xF;
  const unsigned family = base_family == 0xF ? base_family + ((leaf1_eax >> 20) & 0xFF) : base_family;
  const unsigned model = (base_family == 0x6 || base_family == 0xF) ? base_model | (((leaf1_eax >> 16) & 0xF) << 4) : base_model;
  std::string s = vendor;
  s += ' ';
  s += std::to_string(family);
  s += '.';
  s += std::to_string(model);
  s += '.';
  s += std::to_string(leaf1_eax & 0xF);
  return s;
}

}  // namespace

// Each CPUID traps to the hypervisor in a VM (tens of microseconds for all of them), so
// detect_cpu_features() runs this once per process.
CpuFeatures probe_cpu_features() {
  CpuFeatures f;
  unsigned a = 0, b = 0, c = 0, d = 0;
  const unsigned max_leaf = __get_cpuid_max(0, nullptr);
  if (max_leaf < 1) return f;
  __cpuid(0, a, b, c, d);
  char vendor[13] = {};
  std::memcpy(vendor, &b, 4);
  std::memcpy(vendor + 4, &d, 4);
  std::memcpy(vendor + 8, &c, 4);
  __cpuid(1, a, b, c, d);
  f.model = model_of(vendor, a);
  const bool sse41 = (c & bit_SSE4_1) != 0;
  const bool fma = (c & bit_FMA) != 0;
  const bool osxsave = (c & bit_OSXSAVE) != 0;
  const bool avx = (c & bit_AVX) != 0;
  uint64_t xcr0 = 0;
  if (osxsave) xcr0 = xgetbv0();
  const bool os_ymm = (xcr0 & 0x6) == 0x6;            // SSE and AVX state
  const bool os_zmm = (xcr0 & 0xE6) == 0xE6;          // + opmask, ZMM_Hi256, Hi16_ZMM
  bool avx2_ok = false, avx512_ok = false;
  if (max_leaf >= 7) {
    __cpuid_count(7, 0, a, b, c, d);
    const bool avx2 = (b & bit_AVX2) != 0;
    const bool f512 = (b & bit_AVX512F) != 0, dq = (b & bit_AVX512DQ) != 0;
    const bool bw = (b & bit_AVX512BW) != 0, vl = (b & bit_AVX512VL) != 0;
    avx2_ok = sse41 && avx && avx2 && fma && os_ymm;
    avx512_ok = avx2_ok && f512 && dq && bw && vl && os_zmm;
  }
  if (sse41) f.add(Isa::kSse41);
  if (avx2_ok) f.add(Isa::kAvx2);
  if (avx512_ok) f.add(Isa::kAvx512);
  char brand[49] = {};
  // Cast: gcc's cpuid.h returns unsigned, clang's returns int.
  if (static_cast<unsigned>(__get_cpuid_max(0x80000000u, nullptr)) >= 0x80000004u) {
    for (unsigned i = 0; i < 3; ++i) {
      __cpuid(0x80000002u + i, a, b, c, d);
      std::memcpy(brand + 16 * i, &a, 4);
      std::memcpy(brand + 16 * i + 4, &b, 4);
      std::memcpy(brand + 16 * i + 8, &c, 4);
      std::memcpy(brand + 16 * i + 12, &d, 4);
    }
  }
  f.brand = brand;
  while (!f.brand.empty() && f.brand.back() == ' ') f.brand.pop_back();
  return f;
}

}  // namespace nnd::jit
