// The fast-math kernels on x86 (every ISA): f32-fast-<act> and f32-fast-softmax, whose loops,
// tails and horizontal reductions are x86's own; the functions they evaluate, with their
// algorithms and error bounds, are written once for every architecture in
// core/jit/generators/fast_math.h.
#pragma once

#include <cstdint>

#include "core/jit/specs/elementwise.h"
#include "core/jit/x86/vec_emitter.h"

namespace nnd::jit {

// f32-fast-<act>: y = act(x) over batch*count floats (FastUnarySpec, fast_math_kind kinds).
void emit_fast_unary(VecEmitter& ve, const FastUnarySpec& s);

// f32-fast-softmax: softmax over rows of `len` contiguous floats (rows_per_sample per sample).
void emit_fast_softmax(VecEmitter& ve, int64_t rows_per_sample, int64_t len);

}  // namespace nnd::jit
