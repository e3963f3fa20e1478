// drop_identity: removes nodes that compute y = x at inference — IdentityParams (Dropout,
// GaussianNoise, ...), Activation(linear), and Flatten/Reshape whose output shape equals the
// input shape. Readers of the output (nodes and graph outputs) read the input instead; graph
// output names are kept (they live in Graph::output_names, not in the values).
#pragma once

#include "core/passes/pass.h"

namespace nnd::passes {

// True when node n is an identity at inference (given the shapes in g).
bool is_identity_node(const Graph& g, const Node& n);

class DropIdentity final : public Pass {
 public:
  std::string name() const override { return "drop_identity"; }
  bool run(Graph& g) override;
};

}  // namespace nnd::passes
