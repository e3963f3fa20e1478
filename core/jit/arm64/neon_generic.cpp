// The architecture-neutral generators (core/jit/generators/) on AArch64 through
// NeonGeneratorTarget: f32-matmul, f32-const, f32-merge.
#include "core/jit/arm64/generator_target_p.h"
#include "core/jit/arm64/neon_kernels.h"
#include "core/jit/generators/constant_fill.h"
#include "core/jit/generators/matmul.h"
#include "core/jit/generators/merge.h"

namespace nnd::jit::neon {

void emit_matmul(arm64::NeonEmitter& ve, const MatMulSpec& s) {
  arm64::NeonGeneratorTarget t(ve, "f32-matmul");
  generators::emit_matmul(t, s);
}

void emit_constant_fill(arm64::NeonEmitter& ve, const ConstantFillSpec& s) {
  arm64::NeonGeneratorTarget t(ve, "f32-const");
  generators::emit_constant_fill(t, s);
}

void emit_merge(arm64::NeonEmitter& ve, const MergeSpec& s) {
  arm64::NeonGeneratorTarget t(ve, "f32-merge");
  generators::emit_merge(t, s);
}

}  // namespace nnd::jit::neon
