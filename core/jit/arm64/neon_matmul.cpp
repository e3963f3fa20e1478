// f32-matmul on AArch64: the architecture-neutral generator through NeonGeneratorTarget.
#include "core/jit/arm64/generator_target_p.h"
#include "core/jit/arm64/neon_kernels.h"
#include "core/jit/generators/matmul.h"

namespace nnd::jit::neon {

void emit_matmul(arm64::NeonEmitter& ve, const MatMulSpec& s) {
  arm64::NeonGeneratorTarget t(ve, "f32-matmul");
  generators::emit_matmul(t, s);
}

}  // namespace nnd::jit::neon
