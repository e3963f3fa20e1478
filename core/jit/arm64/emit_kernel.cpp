// The AArch64 definitions of code_generator.h: the NEON generators (arm64/emit_function.h). Its
// existence makes core/CMakeLists.txt build the whole engine for aarch64.
#include "core/jit/arm64/emit_function.h"
#include "core/jit/code_generator.h"
#include "core/util/error.h"

namespace nnd::jit {

size_t emit_kernel_function(asmjit::CodeHolder& code, Isa isa, const KernelSpec& spec, LoopRecorder* loops) {
  if (isa != Isa::kNeon) throw Error(ErrorCode::kInternal, std::string("JIT internal error: no AArch64 generator for ") + isa_id(isa));
  return arm64::emit_function(code, spec, loops);
}

bool generator_emits(Isa isa, const KernelSpec& spec) { return isa == Isa::kNeon && arm64::emits(spec); }

}  // namespace nnd::jit
