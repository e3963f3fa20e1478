// ISA-neutral generators for data movement and normalisation (x86/kernels_shape.cpp): the layers
// that are index maps (Permute, as a transpose where it is one, RepeatVector, Cropping, UpSampling, broadcasting, the zero-inserted
// input of a transposed convolution), per-element parameter maps (PReLU, BatchNormalization on a
// non-last axis) and LayerNormalization. Written only against the VecEmitter hooks.
#pragma once

#include <cstdint>
#include <vector>

#include "core/jit/specs/data_movement.h"
#include "core/jit/specs/elementwise.h"
#include "core/jit/specs/layernorm.h"
#include "core/jit/x86/vec_emitter.h"

namespace nnd::jit {

// f32-gather.
void emit_gather(VecEmitter& ve, const GatherSpec& s);

// f32-transpose: general-purpose register copies, the same code on every ISA.
void emit_transpose(VecEmitter& ve, const TransposeSpec& s);

// f32-vprelu / f32-vaffine.
void emit_param_elt(VecEmitter& ve, const ParamEltSpec& s);

// f32-layernorm.
void emit_layernorm(VecEmitter& ve, const LayerNormSpec& s);

}  // namespace nnd::jit
