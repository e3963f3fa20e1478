// Kernel names, printed as
//   <dtype>-<op>[-<epilogue>][-<tile>]-<isa>[-<variant>]
// dtype     f32 (u8 for the input conversion)
// op        conv, gemm, dwconv, maxpool, avgpool, pad, padborder, merge-add, concat, vact-sigmoid,
//           vrelu, affine, gather, ... (the operation, not the layer kind)
// epilogue  the fused parts in the order the kernel applies them, joined by '+':
//           bias, add (a fused residual), then the activation (relu, relu6, sigmoid, ...); a
//           residual added after the activation comes last ("bias+relu+add")
// tile      <positions>x<vectors>v for register-blocked kernels: output positions (pixels or rows)
//           by vectors of output channels held in registers per tile
// isa       sse41, avx2, avx512, neon
// variant   where one op has several code shapes: conv has direct (spatial), grouped (run-time
//           loop over >= 4 groups), winograd (the 16-point products) and planar (SSE4.1
//           pixels-in-lanes); gemm is conv's rows mode
// e.g. "f32-conv-bias+relu6-3x4v-sse41-planar". Listings prefix the node: "conv2d: f32-...".
// Used in dumps (NND_JIT_DUMP file names, plan.txt), the perf map (NND_PERF_MAP) and nninfo --kernels.
#pragma once

#include <string>
#include <vector>

#include "core/jit/cpu_features.h"

namespace nnd::jit {

struct KernelName {
  std::string dtype = "f32";
  std::string op;
  std::vector<std::string> epilogue;
  int tile_positions = 0, tile_vectors = 0;  // 0: not a register-blocked kernel
  Isa isa = Isa::kSse41;
  std::string variant;

  std::string str() const;
};

// The ISA as a name component: "sse41", "avx2", "avx512", "neon".
const char* isa_token(Isa isa);

}  // namespace nnd::jit
