// The NEON generators of the window kernels, fast math, layer normalisation and gather
// (f32-maxpool / f32-avgpool / f32-dwconv, f32-fast-*, f32-fast-softmax, f32-layernorm,
// f32-gather): each emits the
// body of `void kernel(const KernelArgs*)` with the arguments in x0 (conventions: neon_asm_p.h),
// the same computation as the x86 generator of the same spec, to the same error bounds (fast
// math: x86/math.h documents the algorithms and bounds; the NEON code follows them step by step).
#pragma once

#include <asmjit/arm/a64assembler.h>

#include <cstdint>
#include <type_traits>

#include "core/ir/activation.h"
#include "core/jit/arm64/neon_emitter.h"
#include "core/jit/specs/data_movement.h"
#include "core/jit/specs/elementwise.h"
#include "core/jit/specs/layernorm.h"
#include "core/jit/specs/window.h"

namespace nnd::jit::neon {

// f32-dwconv / f32-maxpool / f32-avgpool (WindowSpec; rows and vmax from kernel_config).
void emit_window(arm64::NeonEmitter& ve, const WindowSpec& s);

// f32-fast-<act>: y = act(x) over batch * count floats (fast_math_kind kinds).
void emit_fast_unary(asmjit::a64::Assembler& a, const FastUnarySpec& s);

// f32-fast-softmax: softmax over rows of `len` contiguous floats, rows_per_sample per sample.
void emit_fast_softmax(asmjit::a64::Assembler& a, int64_t rows_per_sample, int64_t len);

// Register-level fast activations (vector register numbers; d may equal x; the temporaries t[0..7]
// are distinct from d and x), as x86/math.h's emit_activation_fast.
void emit_activation_fast(asmjit::a64::Assembler& a, ActivationKind k, float alpha, int d, int x, const int* t);

// f32-layernorm (LayerNormSpec): two-pass mean and variance in float32, as x86's.
void emit_layernorm(asmjit::a64::Assembler& a, const LayerNormSpec& s);

// f32-gather (GatherSpec): per sample, the optional zero fill, then each run of the copy table
// (1 tap: a copy; 2-4 taps: a weighted sum of the taps' runs).
void emit_gather(asmjit::a64::Assembler& a, const GatherSpec& s);

// The specs these generators emit, and emit() for each: what arm64/emit_function.cpp registers
// (one line in its emits() and one in its visit).
template <class Spec>
constexpr bool emits() {
  return std::is_same_v<Spec, WindowSpec> || std::is_same_v<Spec, FastUnarySpec> ||
         std::is_same_v<Spec, FastSoftmaxSpec> || std::is_same_v<Spec, LayerNormSpec> ||
         std::is_same_v<Spec, GatherSpec>;
}
inline void emit(arm64::NeonEmitter& ve, const WindowSpec& s) { emit_window(ve, s); }
inline void emit(arm64::NeonEmitter& ve, const FastUnarySpec& s) { emit_fast_unary(ve.as(), s); }
inline void emit(arm64::NeonEmitter& ve, const FastSoftmaxSpec& s) { emit_fast_softmax(ve.as(), s.rows, s.len); }
inline void emit(arm64::NeonEmitter& ve, const LayerNormSpec& s) { emit_layernorm(ve.as(), s); }
inline void emit(arm64::NeonEmitter& ve, const GatherSpec& s) { emit_gather(ve.as(), s); }

}  // namespace nnd::jit::neon
