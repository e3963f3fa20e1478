// The x86-64 CPU probe: CPUID and XGETBV, which decide the ISAs of the table the CPU and the OS
// (saved register state) support (decode_isas, cpu_features_x86.h).
#include <cpuid.h>

#include <cstring>
#include <string>

#include "core/jit/x86/cpu_features_x86.h"

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

namespace x86cpu {

CpuFeatures decode_isas(const CpuidWords& w) {
  // The bits by number (Intel SDM vol. 2A, CPUID): clang's cpuid.h lacks some of gcc's names.
  constexpr uint32_t kSse41 = 1u << 19, kFma = 1u << 12, kOsxsave = 1u << 27, kAvx = 1u << 28;  // leaf 1 ECX
  constexpr uint32_t kAvx2 = 1u << 5, kAvx512F = 1u << 16, kAvx512Dq = 1u << 17, kAvx512Bw = 1u << 30,
                     kAvx512Vl = 1u << 31;  // leaf 7 EBX
  constexpr uint32_t kAvx512Vnni = 1u << 11;  // leaf 7 ECX
  constexpr uint32_t kAvxVnni = 1u << 4;      // leaf 7 subleaf 1 EAX
  CpuFeatures f;
  const bool sse41 = (w.leaf1_ecx & kSse41) != 0;
  const uint64_t xcr0 = (w.leaf1_ecx & kOsxsave) ? w.xcr0 : 0;
  const bool os_ymm = (xcr0 & 0x6) == 0x6;    // SSE and AVX state
  const bool os_zmm = (xcr0 & 0xE6) == 0xE6;  // + opmask, ZMM_Hi256, Hi16_ZMM
  const auto all = [](uint32_t word, uint32_t bits) { return (word & bits) == bits; };
  const bool avx2 = w.has_leaf7 && sse41 && all(w.leaf1_ecx, kAvx | kFma) && all(w.leaf7_ebx, kAvx2) && os_ymm;
  const bool avx512 = avx2 && all(w.leaf7_ebx, kAvx512F | kAvx512Dq | kAvx512Bw | kAvx512Vl) && os_zmm;
  if (sse41) f.add(Isa::kSse41);
  if (avx2) f.add(Isa::kAvx2);
  if (avx512) f.add(Isa::kAvx512);
  if (avx2 && (w.leaf7_1_eax & kAvxVnni)) f.add(Isa::kAvxVnni);
  if (avx512 && (w.leaf7_ecx & kAvx512Vnni)) f.add(Isa::kAvx512Vnni);
  return f;
}

}  // namespace x86cpu

// Each CPUID traps to the hypervisor in a VM (tens of microseconds for all of them), so
// detect_cpu_features() runs this once per process.
CpuFeatures probe_cpu_features() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  const unsigned max_leaf = __get_cpuid_max(0, nullptr);
  if (max_leaf < 1) return CpuFeatures{};
  __cpuid(0, a, b, c, d);
  char vendor[13] = {};
  std::memcpy(vendor, &b, 4);
  std::memcpy(vendor + 4, &d, 4);
  std::memcpy(vendor + 8, &c, 4);
  __cpuid(1, a, b, c, d);
  const std::string model = model_of(vendor, a);
  x86cpu::CpuidWords w;
  w.leaf1_ecx = c;
  if (c & bit_OSXSAVE) w.xcr0 = xgetbv0();
  if (max_leaf >= 7) {
    w.has_leaf7 = true;
    __cpuid_count(7, 0, a, b, c, d);
    w.leaf7_ebx = b;
    w.leaf7_ecx = c;
    const unsigned max_subleaf = a;
    if (max_subleaf >= 1) {
      __cpuid_count(7, 1, a, b, c, d);
      w.leaf7_1_eax = a;
    }
  }
  CpuFeatures f = x86cpu::decode_isas(w);
  f.model = model;
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
