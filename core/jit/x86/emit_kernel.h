// Code generation of one planned kernel on x86: visits the spec and calls its generator. Another
// architecture provides the same function over its own generators.
#pragma once

#include "core/jit/kernel_plan.h"
#include "core/jit/x86/vec_emitter.h"

namespace nnd::jit {

void emit_kernel(VecEmitter& ve, const KernelSpec& spec);

}  // namespace nnd::jit
