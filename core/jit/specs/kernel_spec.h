// KernelSpec: what to generate for one planned kernel, one alternative per generator. The spec
// structs are plain, architecture-neutral data (shapes, offsets into the weight blob, fused
// epilogues), one header per generator family in this folder; each architecture's emit_kernel()
// (x86/emit_kernel.h) visits them and calls its generators.
#pragma once

#include <variant>

#include "core/jit/specs/conv.h"
#include "core/jit/specs/data_movement.h"
#include "core/jit/specs/elementwise.h"
#include "core/jit/specs/layernorm.h"
#include "core/jit/specs/matmul.h"
#include "core/jit/specs/pad.h"
#include "core/jit/specs/planar.h"
#include "core/jit/specs/window.h"
#include "core/jit/specs/winograd.h"

namespace nnd::jit {

using KernelSpec =
    std::variant<ConvSpec, WindowSpec, PadSpec, UnarySpec, FastUnarySpec, FastSoftmaxSpec, HelperCallSpec,
                 MergeSpec, ConcatSpec, PositionScaleSpec, PlanarPackSpec, PlanarConvSpec, WinogradInSpec,
                 WinogradOutSpec, GatherSpec, TransposeSpec, ParamEltSpec, LayerNormSpec, MatMulSpec,
                 ConstantFillSpec>;

}  // namespace nnd::jit
