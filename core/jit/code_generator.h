// The build architecture's code generator as the architecture-neutral files see it: two functions
// each architecture folder defines (x86/emit_kernel.cpp, arm64/emit_kernel.cpp), so KernelModule,
// lowering and the engine include no architecture's header.
#pragma once

#include <asmjit/core.h>

#include <cstddef>

#include "core/jit/isa.h"
#include "core/jit/loop_record.h"
#include "core/jit/specs/kernel_spec.h"

namespace nnd::jit {

// Emits the whole function of one kernel (frame, body, return, constant pool) for `isa` into
// `code`, whose environment is the architecture's; records its loops when `loops` is not null.
// Returns the size in bytes of the instructions (the constant pool follows them).
size_t emit_kernel_function(asmjit::CodeHolder& code, Isa isa, const KernelSpec& spec, LoopRecorder* loops);

// Whether the architecture's generators emit `spec` for `isa`. Lowering plans only kernels they
// emit: it skips optional forms they lack (Winograd, fast math: the plain kernels compute the
// same), and a layer that needs one they lack is kUnsupported (LowerContext::add).
bool generator_emits(Isa isa, const KernelSpec& spec);

}  // namespace nnd::jit
