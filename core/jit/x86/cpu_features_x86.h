// x86-64's CPU probe, split so that its decisions can be tested without the CPU: the CPUID and
// XGETBV words the probe reads, and the ISA rows (isa.h) they offer.
#pragma once

#include <cstdint>

#include "core/jit/cpu_features.h"

namespace nnd::jit::x86cpu {

struct CpuidWords {
  uint32_t leaf1_ecx = 0;    // CPUID.1:ECX (SSE4.1, FMA, OSXSAVE, AVX)
  bool has_leaf7 = false;    // CPUID.0:EAX >= 7
  uint32_t leaf7_ebx = 0;    // CPUID.(7,0):EBX (AVX2, AVX-512 F/DQ/BW/VL)
  uint32_t leaf7_ecx = 0;    // CPUID.(7,0):ECX (AVX512_VNNI)
  uint32_t leaf7_1_eax = 0;  // CPUID.(7,1):EAX (AVX-VNNI); 0 where subleaf 1 does not exist
  uint64_t xcr0 = 0;         // XGETBV(0): the register state the OS saves; 0 without OSXSAVE
};

// The rows a CPU with these words offers. A row needs the instructions and the OS's saving of the
// registers it uses (YMM for AVX2 and AVX-VNNI, opmask and ZMM for AVX-512): a VM or kernel that
// disables AVX state gets SSE4.1 only. An extension row needs the row it extends.
CpuFeatures decode_isas(const CpuidWords& w);

}  // namespace nnd::jit::x86cpu
