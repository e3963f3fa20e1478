// The x86 probe's decisions (x86/cpu_features_x86.h) from CPUID and XGETBV words, for CPUs and OS
// states this machine is not: each row needs its instructions, the register state the OS saves,
// and the row it extends.
#include <gtest/gtest.h>

#include <cstdio>

#include "core/jit/x86/cpu_features_x86.h"

namespace nnd::jit::x86cpu {
namespace {

constexpr uint32_t kSse41 = 1u << 19, kFma = 1u << 12, kOsxsave = 1u << 27, kAvx = 1u << 28;
constexpr uint32_t kAvx2 = 1u << 5, kAvx512 = (1u << 16) | (1u << 17) | (1u << 30) | (1u << 31);  // F DQ BW VL
constexpr uint32_t kAvx512Vnni = 1u << 11, kAvxVnni = 1u << 4;
constexpr uint64_t kYmmState = 0x6, kZmmState = 0xE6;

CpuidWords silvermont() {  // the NAO's Atom: SSE4.2, no AVX
  CpuidWords w;
  w.leaf1_ecx = kSse41;
  w.has_leaf7 = true;
  return w;
}

CpuidWords zen4(uint64_t xcr0 = kZmmState) {  // AVX-512 with VNNI, no AVX-VNNI
  CpuidWords w;
  w.leaf1_ecx = kSse41 | kFma | kOsxsave | kAvx;
  w.has_leaf7 = true;
  w.leaf7_ebx = kAvx2 | kAvx512;
  w.leaf7_ecx = kAvx512Vnni;
  w.xcr0 = xcr0;
  return w;
}

TEST(X86CpuProbe, EachRowNeedsItsInstructions) {
  EXPECT_EQ(decode_isas(CpuidWords{}).to_string(), "none");
  EXPECT_EQ(decode_isas(silvermont()).to_string(), "sse4.1");
  EXPECT_EQ(decode_isas(zen4()).to_string(), "sse4.1 avx2 avx512 avx512-vnni");
  CpuidWords alder_lake = zen4(kYmmState);  // AVX2 and AVX-VNNI, AVX-512 fused off
  alder_lake.leaf7_ebx = kAvx2;
  alder_lake.leaf7_ecx = 0;
  alder_lake.leaf7_1_eax = kAvxVnni;
  EXPECT_EQ(decode_isas(alder_lake).to_string(), "sse4.1 avx2 avx-vnni");
  CpuidWords zen5 = zen4();
  zen5.leaf7_1_eax = kAvxVnni;
  EXPECT_EQ(decode_isas(zen5).to_string(), "sse4.1 avx2 avx512 avx-vnni avx512-vnni");
  CpuidWords no_fma = zen4();
  no_fma.leaf1_ecx &= ~kFma;
  EXPECT_EQ(decode_isas(no_fma).to_string(), "sse4.1") << "AVX2 without FMA3 is no AVX2 row";
}

TEST(X86CpuProbe, RowsNeedTheRegisterStateTheOsSaves) {
  EXPECT_EQ(decode_isas(zen4(kYmmState)).to_string(), "sse4.1 avx2") << "no ZMM state: no AVX-512, so no VNNI";
  EXPECT_EQ(decode_isas(zen4(0x3)).to_string(), "sse4.1") << "no YMM state";
  CpuidWords no_osxsave = zen4();
  no_osxsave.leaf1_ecx &= ~kOsxsave;
  EXPECT_EQ(decode_isas(no_osxsave).to_string(), "sse4.1") << "XGETBV's answer counts only with OSXSAVE";
}

TEST(X86CpuProbe, AnExtensionNeedsTheRowItExtends) {
  CpuidWords w = silvermont();
  w.leaf7_ecx = kAvx512Vnni;
  w.leaf7_1_eax = kAvxVnni;
  EXPECT_EQ(decode_isas(w).to_string(), "sse4.1");
}

// The probe of this machine agrees with the decoder's rules: every extension it reports comes with
// the row it extends.
TEST(X86CpuProbe, ThisMachinesExtensionsComeWithTheirRows) {
  const CpuFeatures f = detect_cpu_features();
  std::printf("[ cpu ] %s: %s\n", f.brand.c_str(), f.to_string().c_str());
  for (Isa isa : all_isa_rows()) {
    if (f.has(isa)) {
      EXPECT_TRUE(f.has(isa_traits(isa).float_code)) << isa_id(isa);
    }
  }
}

}  // namespace
}  // namespace nnd::jit::x86cpu
