// Lowering of the layer kinds built from the data-movement, per-element-parameter and
// normalisation kernels (x86/kernels_shape.h) plus the conv kernel: Conv1D/2DTranspose,
// LayerNormalization, PReLU, Permute, RepeatVector, UpSampling1D/2D, Cropping1D/2D, merges with
// broadcasting and BatchNormalization on a non-last axis. The engine passes its step/buffer/weight
// primitives in LowerHooks, so this file needs nothing of the engine's internals.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "core/jit/x86/kernels.h"

namespace nnd::jit {

struct LowerHooks {
  Isa isa = Isa::kSse41;
  std::function<int(int64_t floats, const std::string& name)> new_buffer;
  std::function<int64_t(const std::vector<float>&)> add_weights;
  // kernel: the XNNPACK-style name without the ISA ("f32-gather").
  std::function<void(const std::string& kernel, std::vector<int> in, int out, std::function<void(VecEmitter&)>)>
      add_step;
  std::function<void(ConvSpec cs, const Weights& kernel, const Weights& bias, int src, int dst, const std::string& what)>
      conv_step;
  std::function<void(int buf, ActivationKind act, int64_t count, int64_t last_dim)> activation;  // in place
};

// Lowers n into steps when it is one of the kinds above (returns true); false leaves it to the
// engine's own lowering (e.g. BatchNormalization on the last axis, merges of equal shapes).
bool lower_extra_node(const Graph& g, const Node& n, const std::vector<int>& in_bufs, int dst, LowerHooks& h);

// Why the JIT cannot compile n, for the kinds of this file (nullopt: it can, or not one of them).
std::optional<std::string> extra_unsupported_reason(const Graph& g, const Node& n);

// True for the kinds lower_extra_node() handles in every configuration.
bool is_extra_kind(const LayerParams& p);

}  // namespace nnd::jit
