#include "core/jit/cpu_features.h"

#include <cpuid.h>

#include <cstring>

#include "core/util/error.h"

namespace nnd::jit {

const char* isa_id(Isa isa) {
  switch (isa) {
    case Isa::kSse41: return "sse4.1";
    case Isa::kAvx2: return "avx2";
    case Isa::kAvx512: return "avx512";
  }
  return "?";
}

bool CpuFeatures::has(Isa isa) const {
  switch (isa) {
    case Isa::kSse41: return sse41;
    case Isa::kAvx2: return avx2;
    case Isa::kAvx512: return avx512;
  }
  return false;
}

Isa CpuFeatures::best() const {
  if (avx512) return Isa::kAvx512;
  if (avx2) return Isa::kAvx2;
  if (sse41) return Isa::kSse41;
  throw Error("JIT: this CPU lacks SSE4.1 (" + brand + "); the JIT needs at least SSE4.1");
}

std::string CpuFeatures::to_string() const {
  std::string s;
  if (sse41) s += "sse4.1";
  if (avx2) s += " avx2";
  if (avx512) s += " avx512";
  return s.empty() ? "none" : s;
}

namespace {

uint64_t xgetbv0() {
  uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

// The CPUID queries themselves. Each CPUID traps to the hypervisor in a VM (tens of microseconds
// for all of them), so detect_cpu_features() runs this once per process.
CpuFeatures probe_cpu_features() {
  CpuFeatures f;
  unsigned a = 0, b = 0, c = 0, d = 0;
  const unsigned max_leaf = __get_cpuid_max(0, nullptr);
  if (max_leaf < 1) return f;
  __cpuid(1, a, b, c, d);
  f.sse41 = (c & bit_SSE4_1) != 0;
  const bool fma = (c & bit_FMA) != 0;
  const bool osxsave = (c & bit_OSXSAVE) != 0;
  const bool avx = (c & bit_AVX) != 0;
  uint64_t xcr0 = 0;
  if (osxsave) xcr0 = xgetbv0();
  const bool os_ymm = (xcr0 & 0x6) == 0x6;            // SSE and AVX state
  const bool os_zmm = (xcr0 & 0xE6) == 0xE6;          // + opmask, ZMM_Hi256, Hi16_ZMM
  if (max_leaf >= 7) {
    __cpuid_count(7, 0, a, b, c, d);
    const bool avx2 = (b & bit_AVX2) != 0;
    const bool f512 = (b & bit_AVX512F) != 0, dq = (b & bit_AVX512DQ) != 0;
    const bool bw = (b & bit_AVX512BW) != 0, vl = (b & bit_AVX512VL) != 0;
    f.avx2 = f.sse41 && avx && avx2 && fma && os_ymm;
    f.avx512 = f.avx2 && f512 && dq && bw && vl && os_zmm;
  }
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

}  // namespace

CpuFeatures detect_cpu_features() {
  static const CpuFeatures features = probe_cpu_features();
  return features;
}

Isa resolve_isa(IsaChoice choice, const CpuFeatures& features) {
  Isa want;
  switch (choice) {
    case IsaChoice::kAuto: return features.best();
    case IsaChoice::kSse41: want = Isa::kSse41; break;
    case IsaChoice::kAvx2: want = Isa::kAvx2; break;
    case IsaChoice::kAvx512: want = Isa::kAvx512; break;
    default: throw Error("JIT: unknown ISA choice");
  }
  if (!features.has(want)) {
    throw Error(std::string("JIT: ISA '") + isa_id(want) + "' requested but this CPU (" + features.brand +
                ") supports only: " + features.to_string());
  }
  return want;
}

}  // namespace nnd::jit
