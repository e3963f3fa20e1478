// The NEON code generator as a function of the arm64 folder (namespace arm64), apart from the
// definitions of code_generator.h (arm64/emit_kernel.cpp), so the host's tests can assemble NEON
// kernels in an x86 build and disassemble them.
#pragma once

#include <asmjit/core.h>

#include <cstddef>

#include "core/jit/isa.h"
#include "core/jit/loop_record.h"
#include "core/jit/specs/kernel_spec.h"

namespace nnd::jit::arm64 {

// The kernel families the NEON generators emit: conv/GEMM (direct, spatial and rows mode),
// pad, unary (incl. u8 conversion and per-channel affine), helper calls, merge, concat, position
// scale, per-element parameters; window (depthwise, pooling), fast math, gather and layernorm
// (arm64/neon_kernels.h). Not: planar and Winograd, optional forms of a convolution whose plain
// kernel computes the same.
bool emits(const KernelSpec& spec);

// The whole function (frame, body, return, constant pool) into `code` (an AArch64 environment);
// returns the size of the instructions. nnd::Error (kInternal) for a spec emits() declines.
size_t emit_function(asmjit::CodeHolder& code, const KernelSpec& spec, LoopRecorder* loops);

}  // namespace nnd::jit::arm64
