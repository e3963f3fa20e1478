// Code generation on x86: the function frame around a body, the spec visitor calling the
// generators, and the x86 definitions of code_generator.h (emit_kernel_function, generator_emits).
#pragma once

#include <asmjit/x86.h>

#include <cstddef>
#include <functional>
#include <string>

#include "core/jit/kernel_module.h"
#include "core/jit/kernel_plan.h"
#include "core/jit/x86/vec_emitter.h"

namespace nnd::jit {

void emit_kernel(VecEmitter& ve, const KernelSpec& spec);

// A whole x86 function into `code`: the frame (x86/stack_frame_p.h), `body` through the ISA's
// VecEmitter, the return and the constant pool. Returns the size of the instructions.
size_t emit_x86_function(asmjit::CodeHolder& code, Isa isa, LoopRecorder* loops,
                         const std::function<void(VecEmitter&)>& body);

// An ad-hoc x86 kernel body compiled by `module` (nnbench's peak kernels, the x86 kernel tests).
KernelFn compile_body(KernelModule& module, const std::string& name, const std::function<void(VecEmitter&)>& body);

}  // namespace nnd::jit
