// The state lowering builds up: buffers, planned kernels, the weight blob, and the planning
// decisions taken on them (in-place reuse). Each operator's lowering unit (lower.h) adds to
// it through these primitives and knows nothing else of the engine.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/engine/engine_options.h"
#include "core/ir/conv_geometry.h"
#include "core/ir/graph.h"
#include "core/jit/kernel_config.h"
#include "core/jit/kernel_plan.h"

namespace nnd::jit {

// A layer's spatial view of its input: (h, w, c) per sample, rank-1 layers as h = 1.
struct Hwc {
  int64_t h, w, c;
};
Hwc as_hwc(int rank, const Dims& s);

// The padding a window needs on each side, and its geometry per axis.
struct Pads {
  int64_t top, bottom, left, right;
  AxisGeometry h, w;
};
Pads pads_for(const Window& win, const Hwc& in);

// The geometry of a window kernel (depthwise or pooling) over an input already padded to
// `padded` with `channels` per pixel: sizes, kernel and strides. Dilation, blocking and the
// epilogue are the caller's (pooling has no dilation; the loaders refuse dilated pools).
WindowSpec window_geometry(WindowOp op, const Window& win, const Hwc& padded, int64_t channels, const Pads& pd);

class LowerContext {
 public:
  LowerContext(const Graph& graph, Isa isa, MathMode math);

  const Graph& g;
  const Isa isa;
  const MathMode math;
  const int width;  // floats per vector

  std::vector<PlanBuffer> buffers;
  std::vector<PlannedKernel> kernels;
  std::vector<float> weights;
  std::vector<int> value_buf;                       // per value: its buffer
  std::vector<int> reused_input;                    // per node: input whose storage it took (in_place.h), or -1
  std::vector<GraphInputBuffers> inputs;            // per graph input
  // A kernel the architecture's generators do not emit (generator_emits()) is kUnsupported: thrown
  // by add(), or, when this is set (jit_unsupported_layers), recorded here and planned anyway.
  struct Unsupported {
    size_t node;
    std::string message;
  };
  std::vector<Unsupported>* unsupported = nullptr;
  // Which kernels the generators emit: the build's generator_emits() (code_generator.h). The
  // NEON golden-code test of an x86 build plans with the arm64 folder's instead (tests/jit), so
  // its plans are those of an AArch64 build.
  using GeneratorEmits = bool (*)(Isa, const KernelSpec&);
  GeneratorEmits generator_emits;
  bool emits(const KernelSpec& spec) const { return generator_emits(isa, spec); }

  int new_buffer(int64_t floats, const std::string& name);
  // Appends w to the weight blob, 64-byte aligned; returns its offset in floats.
  int64_t add_weights(const std::vector<float>& w);
  // Plans a kernel of node n computing `op` (kernel_name.h: "conv", "dwconv", "vact-sigmoid", ...).
  void add(const Node& n, const std::string& op, KernelSpec spec, std::vector<int> in, int out,
           const std::string& variant = "");

  int in_buf(const Node& n, size_t i) const { return value_buf[static_cast<size_t>(n.inputs[i])]; }
  // The buffer of a fused residual input (layers.h: the node's second input), or -1.
  int residual_buf(const Node& n, bool residual) const { return residual ? in_buf(n, 1) : -1; }
  // Where n's fused residual goes relative to its activation (layers.h). After it only with an
  // activation the kernels fuse (act_fusable): the residual comes after the epilogue's activation.
  ResidualAt residual_at(const Node& n) const;
  const Dims& in_shape(const Node& n, size_t i = 0) const { return g.values[n.inputs[i]].shape; }
  const Dims& out_shape(const Node& n) const { return g.values[n.output].shape; }
  int64_t out_count(const Node& n) const;

  // The buffer n writes its output to: the caller's output slot, or a new dense arena buffer
  // (padded storage may border it later). Sets value_buf.
  int output_buffer(const Node& n);
  // Layers whose output is their input's storage (Flatten, Reshape, Identity).
  void alias_output(const Node& n) { value_buf[static_cast<size_t>(n.output)] = in_buf(n, 0); }
};

}  // namespace nnd::jit
