// The kernel plan of a lowered graph: per kernel, what to generate (a spec), which buffers it reads
// and writes, and its name. Lowering (core/jit/lower/) builds it without generating any code; the
// engine compiles it afterwards, kernel by kernel in plan order, through emit_kernel() (the one
// place where lowering meets an instruction set: core/jit/x86/emit_kernel.h).
//
// The spec structs are plain, architecture-neutral data declared in core/jit/specs/ (KernelSpec:
// specs/kernel_spec.h), so another architecture's emitter compiles the same plans.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/jit/kernel_name.h"
#include "core/jit/padded_store.h"
#include "core/jit/specs/kernel_spec.h"

namespace nnd::jit {

// A tensor buffer of the plan. Sizes are per sample, in floats.
struct PlanBuffer {
  enum Kind { kArena, kInput, kOutput } kind = kArena;
  int index = 0;                  // graph input / output slot
  int64_t floats = 0;             // per sample
  int64_t first = -1, last = -1;  // kernels using it (memory_plan.h)
  int64_t offset = 0;             // arena offset per sample (floats)
  std::string name;
  // Set when the producer writes the interior of this bordered buffer (padded_storage.h): its
  // consumer fills the border instead of copying.
  std::optional<PaddedStore> placed;
};

// A graph input's buffers.
struct GraphInputBuffers {
  int input = -1;  // the caller's float32 data
  int u8 = -1;     // the arena buffer its uint8 conversion writes, which then stands in for it
};

struct PlannedKernel {
  KernelName kernel;
  std::string name;  // "<node>: <kernel>", as listings and dumps show it
  KernelSpec spec;
  std::vector<int> in;  // buffers read, in the order the kernel's input pointers take them
  int out = -1;         // buffer written
  int node = -1;        // index in Graph::nodes (-1: an input's uint8 conversion)
  // Declared by lowering (property "reads padding"): the kernel reads its first input, a tensor of
  // (h, w, c) per sample, as the interior of a bordered tensor with this border and fill; it is
  // the pad copy or planar pack in front of a window layer. Padded storage (padded_storage.h) may
  // then give that input a bordered buffer (read_bordered_input).
  std::optional<PaddedStore> reads_padding;
};

// ---- kernel properties the planning passes rely on ----

// Element-wise: reads element i of every input before writing element i of its output, all of one
// size, so the output may overwrite an input (in_place.h).
bool runs_in_place(const KernelSpec& spec);

// Accepts an output placement: the kernel can write its whole output, a tensor of store's (h, w, c)
// per sample, through an OutPlacement into the interior of a `store` buffer (padded_storage.h), and
// nothing it reads has the output's layout (a fused residual would have to be bordered as well).
// The spatial conv, depthwise and pooling windows, the planar conv and the Winograd output kernel
// write through a placement; a GEMM (rows mode) whose rows are the store's pixels becomes the same
// 1x1 spatial conv (same weights) to do so.
bool accepts_output_placement(const KernelSpec& spec, const PaddedStore& store);

// Rewrites k (accepts_output_placement(k.spec, store)) to write the interior of a `store` buffer;
// a GEMM becomes a 1x1 conv and is renamed.
void place_output(PlannedKernel& k, const PaddedStore& store);

// Rewrites k (which reads padding: k.reads_padding) to read its input from a bordered buffer whose
// interior its producer wrote: a pad copy becomes a border fill in place ("padborder"; the caller
// points its output at the input buffer), a planar pack reads the interior through strides.
void read_bordered_input(PlannedKernel& k);

// The name of a kernel computing `spec` as `op`: epilogue and tile come from the spec.
KernelName kernel_name(const std::string& op, const KernelSpec& spec, Isa isa, const std::string& variant = "");

}  // namespace nnd::jit
