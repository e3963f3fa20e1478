// fuse_activation: an element-wise activation node whose input is produced by a
// Conv/DepthwiseConv/SeparableConv/Dense (linear activation, possibly with a fused residual:
// the activation then applies after the add, as layers.h defines) or by a BatchNorm (linear),
// with that node's output read only by the activation, moves into the producer's `activation`.
//
// Which activation nodes qualify (activation_of_node):
//   - Activation(kind) for any kind into Conv/Depthwise/Separable/Dense (the engines apply the
//     layer's own activation the same way; softmax-like kinds act over the last axis in both);
//   - ReLU layers with threshold 0 and slope 0: max_value inf -> relu, max_value 6 -> relu6;
//     other ReLU variants (leaky, thresholded, other caps) stay separate nodes;
//   - into a BatchNorm over the last axis only relu and relu6 (what the JIT's per-channel affine
//     kernel applies inline).
#pragma once

#include <optional>

#include "core/passes/pass.h"

namespace nnd::passes {

// The ActivationKind a node computes when it is a fusable element-wise activation node.
std::optional<ActivationKind> activation_of_node(const Node& n);

class FuseActivation final : public Pass {
 public:
  std::string name() const override { return "fuse_activation"; }
  bool run(Graph& g) override;
};

}  // namespace nnd::passes
