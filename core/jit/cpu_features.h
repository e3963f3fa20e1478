// CPU feature detection for the JIT: the ONE place that executes CPUID/XGETBV and decides which
// instruction set the generated code may use. Kernels and the engine never test CPU flags; they
// receive an Isa chosen here.
#pragma once

#include <cstdint>
#include <string>

#include "core/engine/engine_options.h"

namespace nnd::jit {

// Instruction sets the JIT generates code for, in increasing order of capability.
enum class Isa : uint8_t {
  kSse41,   // SSE4.1, 16 xmm registers, no VEX/EVEX encoding (the robot's Atom)
  kAvx2,    // AVX2 + FMA3, 16 ymm registers (VEX)
  kAvx512,  // AVX-512 F/BW/DQ/VL, 32 zmm registers and k-masks (EVEX)
};

const char* isa_id(Isa isa);  // "sse4.1", "avx2", "avx512"

struct CpuFeatures {
  bool sse41 = false;
  bool avx2 = false;     // AVX2 and FMA3 and the OS saves ymm state
  bool avx512 = false;   // F, BW, DQ, VL and the OS saves zmm/k state
  std::string brand;     // CPUID brand string, for logs

  bool has(Isa isa) const;
  Isa best() const;      // the most capable ISA available; throws nnd::Error if not even SSE4.1
  std::string to_string() const;  // "sse4.1 avx2 avx512"
};

// Reads CPUID and XGETBV of the calling CPU, once per process (later calls return the first
// answer: the queries trap to the hypervisor in a VM).
CpuFeatures detect_cpu_features();

// Resolves an option to an ISA: kAuto picks features.best(); an explicit request the CPU lacks is
// an nnd::Error naming the ISA and the available ones.
Isa resolve_isa(IsaChoice choice, const CpuFeatures& features);

}  // namespace nnd::jit
