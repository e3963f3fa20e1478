// The NEON generators of the window kernels, fast math, layer normalisation, gather and transpose
// (f32-maxpool / f32-avgpool / f32-dwconv, f32-fast-*, f32-fast-softmax, f32-layernorm,
// f32-gather, f32-transpose): each emits the
// body of `void kernel(const KernelArgs*)` with the arguments in x0 through NeonEmitter and the
// frame's loops (arm64/neon_emitter.h, arm64/regs_p.h: registers, hooks, recorded loops),
// the same computation as the x86 generator of the same spec, to the same error bounds (fast
// math: the functions are core/jit/generators/fast_math.h, written once for both architectures).
#pragma once

#include <cstdint>

#include "core/jit/arm64/neon_emitter.h"
#include "core/jit/specs/data_movement.h"
#include "core/jit/specs/elementwise.h"
#include "core/jit/specs/layernorm.h"
#include "core/jit/specs/matmul.h"
#include "core/jit/specs/window.h"

namespace nnd::jit::neon {

// f32-dwconv / f32-maxpool / f32-avgpool (WindowSpec; rows and vmax from kernel_config).
void emit_window(arm64::NeonEmitter& ve, const WindowSpec& s);

// f32-fast-<act>: y = act(x) over batch * count floats (fast_math_kind kinds).
void emit_fast_unary(arm64::NeonEmitter& ve, const FastUnarySpec& s);

// f32-fast-softmax: softmax over rows of `len` contiguous floats, rows_per_sample per sample.
void emit_fast_softmax(arm64::NeonEmitter& ve, int64_t rows_per_sample, int64_t len);

// f32-layernorm (LayerNormSpec): two-pass mean and variance in float32, as x86's.
void emit_layernorm(arm64::NeonEmitter& ve, const LayerNormSpec& s);

// f32-gather (GatherSpec): per sample, the optional zero fill, then each run of the copy table
// (1 tap: a copy; 2-4 taps: a weighted sum of the taps' runs).
void emit_gather(arm64::NeonEmitter& ve, const GatherSpec& s);

// f32-transpose (TransposeSpec): x86's blocks and loops, a scalar load and store per element.
void emit_transpose(arm64::NeonEmitter& ve, const TransposeSpec& s);

// f32-matmul (MatMulSpec): the product of two computed tensors, the architecture-neutral generator
// (core/jit/generators/matmul.h) through arm64/generator_target_p.h (arm64/neon_generic.cpp).
void emit_matmul(arm64::NeonEmitter& ve, const MatMulSpec& s);

// f32-const (ConstantFillSpec): the IR Constant layer (core/jit/generators/constant_fill.h).
void emit_constant_fill(arm64::NeonEmitter& ve, const ConstantFillSpec& s);

// f32-merge (MergeSpec): the architecture-neutral generator (core/jit/generators/merge.h).
void emit_merge(arm64::NeonEmitter& ve, const MergeSpec& s);

}  // namespace nnd::jit::neon
