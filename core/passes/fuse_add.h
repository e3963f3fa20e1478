// fuse_add: Add(a, b) of exactly two same-shaped inputs (no broadcasting), where one input (say a)
// is produced by a Conv/DepthwiseConv/SeparableConv/Dense node P with linear activation, no
// residual yet, and the Add as its only reader, becomes P with a fused residual (layers.h):
// P.inputs = {x, b}, P.residual = true, P takes over the Add's output value. The layer then
// computes y = activation(P(x) + bias + b); since P's activation is linear here, that is exactly
// the Add, and a ReLU after the Add can later be fused by fuse_activation (Keras order
// conv -> add -> relu). b must be available before P in the node order (it is when b's producer
// comes first; when both inputs qualify the later-produced one takes the residual).
//
// A producer whose activation is ReLU or ReLU6 takes the residual after it instead
// (residual_at = kAfterActivation, y = act(P(x) + bias) + b: Keras order conv -> ReLU -> Add,
// common in ResNet-style blocks). The pipeline runs this pass again after fuse_activation, which is when a separate ReLU layer
// has become the producer's activation.
#pragma once

#include "core/passes/pass.h"

namespace nnd::passes {

class FuseAdd final : public Pass {
 public:
  std::string name() const override { return "fuse_add"; }
  bool run(Graph& g) override;
};

}  // namespace nnd::passes
