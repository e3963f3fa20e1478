// f32-matmul on x86 (every ISA): the architecture-neutral generator through X86GeneratorTarget.
#include "core/jit/generators/matmul.h"
#include "core/jit/x86/generator_target_p.h"
#include "core/jit/x86/kernels.h"

namespace nnd::jit {

void emit_matmul(VecEmitter& ve, const MatMulSpec& s) {
  X86GeneratorTarget t(ve, "f32-matmul");
  generators::emit_matmul(t, s);
}

}  // namespace nnd::jit
