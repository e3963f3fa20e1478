// The memory plan of a kernel plan: each buffer's lifetime (the first and last kernel using it)
// and, for arena buffers, an offset in the per-sample arena such that buffers alive at the same
// time never overlap (first fit, lowest free offset, in buffer order).
#pragma once

#include <cstdint>
#include <vector>

#include "core/jit/kernel_plan.h"

namespace nnd::jit {

// Fills first/last/offset of every buffer; returns the arena size per sample in floats.
// live_to_end: buffers read after the last kernel (copied to graph outputs by the run loop).
int64_t plan_memory(std::vector<PlanBuffer>& buffers, const std::vector<PlannedKernel>& kernels,
                    const std::vector<GraphInputBuffers>& inputs, const std::vector<int>& live_to_end);

}  // namespace nnd::jit
