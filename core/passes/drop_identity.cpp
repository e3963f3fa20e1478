#include "core/passes/drop_identity.h"

#include <variant>

#include "core/ir/layer_kind_traits.h"
#include "core/passes/graph_edit.h"

namespace nnd::passes {

bool is_identity_node(const Graph& g, const Node& n) {
  if (n.inputs.size() != 1) return false;
  const bool same_shape =
      g.values[static_cast<size_t>(n.inputs[0])].shape == g.values[static_cast<size_t>(n.output)].shape;
  // Every kind decides whether it can be the identity.
  return visit_layer(
      Overloaded{
          [](const IdentityParams&) { return true; },
          [](const ActivationParams& a) { return a.activation == ActivationKind::kLinear; },
          [&](const FlattenParams&) { return same_shape; },
          [&](const ReshapeParams&) { return same_shape; },
          // Could be the identity for some parameters (a permutation 1..n, a 1x upsampling, a
          // gather of 0..n-1, padding or cropping by 0, a one-input concat or merge), which no
          // loader produces: keeping them costs one copy and keeps this pass simple.
          KindsReturning<false, PermuteParams, UpSamplingParams, ResizeParams, GatherParams, ZeroPaddingParams,
                         CroppingParams, ConcatParams, MergeParams, RepeatVectorParams>{},
          // Compute something for every input.
          KindsReturning<false, DenseParams, ConvParams, DepthwiseConvParams, SeparableConvParams,
                         ConvTransposeParams, BatchNormParams, LayerNormParams, ReluParams, EluParams,
                         ThresholdedReluParams, PReluParams, SoftmaxParams, PoolParams, GlobalPoolParams,
                         RecurrentParams, MatMulParams, ArgMaxParams>{},
          // Ignores its input.
          KindsReturning<false, ConstantParams>{},
          // Quantized kinds change the element type.
          KindsReturning<false, QuantizeParams, DequantizeParams, QConvParams, QDenseParams>{},
      },
      n.params);
}

bool DropIdentity::run(Graph& g) {
  std::vector<bool> dead(g.nodes.size(), false);
  bool changed = false;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (!is_identity_node(g, n)) continue;
    replace_uses(g, n.output, n.inputs[0]);
    dead[i] = true;
    changed = true;
  }
  if (changed) remove_nodes(g, dead);
  return changed;
}

}  // namespace nnd::passes
