// The architecture-neutral generators (core/jit/generators/) on x86, every ISA, through
// X86GeneratorTarget: f32-matmul, f32-const, f32-merge.
#include "core/jit/generators/constant_fill.h"
#include "core/jit/generators/matmul.h"
#include "core/jit/generators/merge.h"
#include "core/jit/x86/generator_target_p.h"
#include "core/jit/x86/kernels.h"

namespace nnd::jit {

void emit_matmul(VecEmitter& ve, const MatMulSpec& s) {
  X86GeneratorTarget t(ve, "f32-matmul");
  generators::emit_matmul(t, s);
}

void emit_constant_fill(VecEmitter& ve, const ConstantFillSpec& s) {
  X86GeneratorTarget t(ve, "f32-const");
  generators::emit_constant_fill(t, s);
}

void emit_merge(VecEmitter& ve, const MergeSpec& s) {
  X86GeneratorTarget t(ve, "f32-merge");
  generators::emit_merge(t, s);
}

}  // namespace nnd::jit
