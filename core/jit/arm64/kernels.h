// The NEON kernel generators; their specs are architecture-neutral (core/jit/specs/). Each emits
// the body of one kernel function (the frame is added by emit_function, arm64/emit_function.h)
// through NeonEmitter. Shapes are compile-time constants; only the batch is read at run time.
#pragma once

#include <cstdint>
#include <vector>

#include "core/jit/arm64/neon_emitter.h"
#include "core/jit/specs/conv.h"
#include "core/jit/specs/elementwise.h"
#include "core/jit/specs/pad.h"

namespace nnd::jit::arm64 {

// f32-conv / f32-gemm: tiles of R positions x V vectors of output channels, FMLA by element (four
// input channels of a position in one register, each lane multiplied into V weight vectors).
void emit_conv(NeonEmitter& ve, const ConvSpec& s);

// f32-pad / f32-padborder.
void emit_pad(NeonEmitter& ve, const PadSpec& s);
// f32-vact-* / f32-vrelu / f32-affine (and the u8 input conversion).
void emit_unary(NeonEmitter& ve, const UnarySpec& s);
// f32-call-*: out = helper(in) over batch*count floats (kernel_helpers.h).
void emit_helper_call(NeonEmitter& ve, int helper_index, int64_t count, int64_t params_off);
// f32-concat.
void emit_concat(NeonEmitter& ve, int64_t outer, const std::vector<int64_t>& inner);
// f32-posscale.
void emit_position_scale(NeonEmitter& ve, int64_t positions, int64_t channels, int64_t map_off);
// f32-vprelu / f32-vaffine.
void emit_param_elt(NeonEmitter& ve, const ParamEltSpec& s);

}  // namespace nnd::jit::arm64
