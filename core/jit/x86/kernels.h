// The x86 kernel generators; their specs are architecture-neutral (core/jit/specs/). Each emits the
// body of one kernel function (the frame is added by KernelModule) through the VecEmitter hooks, so
// the same generator serves every x86 ISA. Shapes are compile-time constants; only the batch is
// read at run time (KernelArgs::batch).
//
// Kernels are named by lowering (core/jit/kernel_name.h): "f32-conv-bias+relu-4x3v-avx2-direct".
#pragma once

#include <cstdint>
#include <vector>

#include "core/jit/specs/conv.h"
#include "core/jit/specs/data_movement.h"
#include "core/jit/specs/elementwise.h"
#include "core/jit/specs/matmul.h"
#include "core/jit/specs/pad.h"
#include "core/jit/specs/window.h"
#include "core/jit/x86/vec_emitter.h"

namespace nnd::jit {

// f32-conv / f32-gemm.
void emit_conv(VecEmitter& ve, const ConvSpec& s);

// f32-matmul: the product of two computed tensors (core/jit/generators/matmul.h, written once for
// every architecture; x86/kernels_generic.cpp).
void emit_matmul(VecEmitter& ve, const MatMulSpec& s);

// f32-const: the IR Constant layer (core/jit/generators/constant_fill.h; x86/kernels_generic.cpp).
void emit_constant_fill(VecEmitter& ve, const ConstantFillSpec& s);

// f32-dwconv / f32-maxpool / f32-avgpool (no weights) over an already padded input.
void emit_window(VecEmitter& ve, const WindowSpec& s);

// f32-pad / f32-padborder.
void emit_pad(VecEmitter& ve, const PadSpec& s);

// f32-vact-* / f32-vrelu / f32-affine.
void emit_unary(VecEmitter& ve, const UnarySpec& s);

// Helper call: out = helper(in) over batch*count floats with a parameter block.
void emit_helper_call(VecEmitter& ve, int helper_index, int64_t count, int64_t params_off);

// f32-merge: y = x0 op x1 op ... over batch*count floats (same shapes; core/jit/generators/merge.h,
// x86/kernels_generic.cpp).
void emit_merge(VecEmitter& ve, const MergeSpec& s);

// f32-concat: per outer index, copies inner[i] floats of each input in turn.
void emit_concat(VecEmitter& ve, int64_t outer, const std::vector<int64_t>& inner);

// Per-position scale (average pooling with padding): y[n, p, c] *= map[p].
void emit_position_scale(VecEmitter& ve, int64_t positions, int64_t channels, int64_t map_off);

}  // namespace nnd::jit
