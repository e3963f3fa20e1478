// Splitting one kernel's output rows into parts that run on different threads (EngineOptions::
// threads, docs/jit.md "One call on several cores").
//
// A part is the same kernel restricted to a band of output rows: the spec with out_h set to the
// band's rows, compiled on its own, and called with its input and output pointers moved to the
// band's first row. Every output element is then computed by the same instructions, in the same
// order, as in the whole kernel (a band only changes which elements share a tile, never a sum's
// order), so a split call is bit-identical to the single-thread one. Only kernels that compute
// each output row from input rows alone split: the spatial convolution and its GEMM form, the
// planar convolution, depthwise and max/sum pooling windows; reductions (softmax, normalisation)
// and the cheap data movement between them stay whole.
//
// A part is called with batch 1 (one sample at a time, pointers moved by the buffers' per-sample
// sizes): the restricted spec's own per-sample strides are those of its band.
#pragma once

#include <cstdint>
#include <vector>

#include "core/jit/kernel_plan.h"

namespace nnd::jit {

struct KernelPart {
  KernelSpec spec;                // the kernel's spec restricted to the band
  std::vector<int64_t> in_off;    // per input buffer: floats from its sample start
  int64_t out_off = 0;            // floats from the output's sample start
};

// Multiply-adds times two (or window operations) per sample: what decides whether a kernel pays
// for a barrier. 0 for kernels split_kernel() does not split.
int64_t splittable_flops(const KernelSpec& spec);

// The kernel as `parts` bands of output rows (fewer when it has fewer rows); empty when it does
// not split (splittable_flops() == 0) or has a single row.
std::vector<KernelPart> split_kernel(const PlannedKernel& k, int parts);

}  // namespace nnd::jit
