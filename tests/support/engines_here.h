// The engines a test can compare in this build on a graph: the reference engine everywhere, the
// JIT where the ISA table has rows for the build's architecture and its generators compile every
// layer of the graph (jit_unsupported_layers(): a recurrent layer over more than 4096 steps, on
// any architecture). Tests that check a loader's result on both engines run the JIT part only
// where it compiles the graph. The JIT's own tests run on every ISA of the build
// (tests/jit_common; tests/jit is x86's generators).
#pragma once

#include <vector>

#include "core/engine/engine_options.h"
#include "core/ir/graph.h"
#include "core/jit/isa.h"
#include "core/jit/jit_engine.h"

namespace nnd::test {

inline std::vector<EngineKind> engines_here(const Graph& g) {
  if (!jit::jit_unsupported_layers(g).empty()) return {EngineKind::kReference};
  return {EngineKind::kReference, EngineKind::kJit};
}

}  // namespace nnd::test
