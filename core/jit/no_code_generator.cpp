// The JIT's interface in a build whose architecture folder has no code generator yet (AArch64
// today: core/jit/arm64 holds only the CPU probe). core/CMakeLists.txt compiles this file instead
// of the engine (jit_engine.cpp and everything it generates code with), whose sources all end in
// an architecture's emit_kernel(). The answers are the ones the engine would give on a CPU the
// ISA table has no row for: kIsaUnavailable, so `engine: jit` fails with that code and
// `engine: auto` (daemon/registry) serves the reference engine with a warning.
#include "core/jit/cpu_features.h"
#include "core/jit/jit_engine.h"

namespace nnd::jit {

std::unique_ptr<JitEngine> make_jit_engine(const Graph&, const EngineOptions&, const JitConfig&) {
  throw Error(ErrorCode::kIsaUnavailable, no_isa_for_build_arch());
}

// No layer compiles, for the same reason: every node is named, with the code make_jit_engine throws.
std::vector<UnsupportedLayer> jit_unsupported_layers(const Graph& g) {
  std::vector<UnsupportedLayer> out;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    std::string message = g.node_context(g.nodes[i]);
    message += ": not compiled: no JIT for ";
    message += arch_name(kBuildArch);
    message += " yet";
    out.push_back({i, ErrorCode::kIsaUnavailable, message});
  }
  return out;
}

}  // namespace nnd::jit
