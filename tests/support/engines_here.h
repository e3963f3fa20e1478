// The engines a test can compare in this build: the reference engine everywhere, the JIT where the
// ISA table has rows for the build's architecture (x86-64; not AArch64 until its NEON backend).
// Tests that check a loader's result on both engines run the JIT part only where it exists; the
// JIT's own tests (tests/jit) are built for x86 only.
#pragma once

#include <vector>

#include "core/engine/engine_options.h"
#include "core/jit/isa.h"

namespace nnd::test {

inline std::vector<EngineKind> engines_here() {
  if (jit::all_isas().empty()) return {EngineKind::kReference};
  return {EngineKind::kReference, EngineKind::kJit};
}

}  // namespace nnd::test
