// CPU feature detection for the JIT: which instruction sets of the table (isa.h) the calling CPU
// and OS can run, and the choice of one. Kernels and the engine never test CPU flags; they receive
// an Isa resolved here. The architecture-specific probe is one function per architecture folder
// (probe_cpu_features(): x86/cpu_features_x86.cpp reads CPUID/XGETBV, arm64/cpu_features_arm64.cpp
// the kernel's HWCAP).
#pragma once

#include <cstdint>
#include <string>

#include "core/engine/engine_options.h"
#include "core/jit/isa.h"

namespace nnd::jit {

// The set of ISAs a CPU offers, and its name. Tests build one to force features.
struct CpuFeatures {
  uint32_t isas = 0;   // bit (1 << Isa) per available ISA
  std::string brand;   // the CPU's brand string, for logs
  std::string model;   // vendor, family, model and stepping ("AuthenticAMD 25.17.1"); "" if unknown

  CpuFeatures& add(Isa isa) {
    isas |= 1u << static_cast<unsigned>(isa);
    return *this;
  }
  bool has(Isa isa) const { return (isas >> static_cast<unsigned>(isa)) & 1u; }
  Isa best() const;      // the most capable ISA available; throws nnd::Error if none
  std::string to_string() const;  // "sse4.1 avx2 avx512"
  // What identifies this CPU for a choice measured on it (the ISA calibration cache): model,
  // brand and ISAs, "AuthenticAMD 25.17.1 | AMD EPYC 9R14 | sse4.1 avx2 avx512". Two machines
  // with the same line run the same code at the same relative speeds.
  std::string identity() const;
};

// The probe of the build's architecture, defined in its folder (x86/cpu_features_x86.cpp,
// arm64/cpu_features_arm64.cpp).
// Queries may trap to the hypervisor in a VM: call detect_cpu_features() instead.
CpuFeatures probe_cpu_features();

// The calling CPU's features, probed once per process (later calls return the first answer).
CpuFeatures detect_cpu_features();

// Resolves an option to an ISA without measuring: auto picks features.best(), the most capable
// ISA (make_jit_engine does not use this for auto: it measures which ISA is fastest, see
// jit_engine.h); an explicit request the CPU lacks is an nnd::Error naming the ISA and the
// available ones.
Isa resolve_isa(IsaChoice choice, const CpuFeatures& features);

}  // namespace nnd::jit
