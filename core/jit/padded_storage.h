// Padded storage: folds a window layer's input padding into the kernel that produces that input.
//
// A convolution, depthwise convolution or pooling layer with "same" padding reads a bordered copy of
// its input. Copying the whole tensor into a bigger buffer costs as much memory traffic as a light
// layer (bop at AVX-512: 90 of 590 us were pad copies). When the producer can write straight into
// the interior of the bordered buffer, the consumer only fills the border (a few rows and columns).
//
// Decided on the kernel plan, after lowering and in-place reuse (lower_graph), from the kernels'
// properties (kernel_plan.h), not from layer kinds. Lowering plans every output dense; a buffer then
// becomes bordered when
//   - exactly one kernel writes it (the producer runs no separate step on it afterwards: an
//     activation its epilogue cannot fuse, average pooling's rescaling, an in-place layer),
//   - that kernel accepts an output placement of the buffer's shape (accepts_output_placement:
//     conv, GEMM, depthwise, pooling, planar and Winograd output kernels without a fused residual),
//   - exactly one kernel reads it, and that kernel reads padding (PlannedKernel::reads_padding: the
//     pad copy or planar pack in front of a window layer, declared by lowering), and
//   - it is an arena buffer that no graph output is read from.
// The rewrite keeps every kernel, its order and the weight blob: the producer gets its placement
// (place_output), the reader reads the bordered buffer (read_bordered_input: a pad copy becomes a
// border fill in place and its private buffer disappears).
#pragma once

#include "core/jit/lower/lower_context.h"

namespace nnd::jit {

// Rewrites cx's kernels and buffers as above; returns how many buffers got a border.
int plan_padded_storage(LowerContext& cx);

}  // namespace nnd::jit
