#include "core/passes/fuse_activation.h"

#include <cmath>
#include <type_traits>
#include <variant>

#include "core/ir/layer_kind_traits.h"
#include "core/passes/graph_edit.h"

namespace nnd::passes {

std::optional<ActivationKind> activation_of_node(const Node& n) {
  if (n.inputs.size() != 1) return std::nullopt;
  using Result = std::optional<ActivationKind>;
  // Every kind decides whether it is a stand-alone activation an epilogue can compute.
  return visit_layer(
      Overloaded{
          [](const ActivationParams& a) -> Result { return a.activation; },
          [](const ReluParams& r) -> Result {
            if (r.threshold != 0.0 || r.negative_slope != 0.0) return std::nullopt;
            if (std::isinf(r.max_value) && r.max_value > 0) return ActivationKind::kRelu;
            if (r.max_value == 6.0) return ActivationKind::kRelu6;
            return std::nullopt;
          },
          // Element-wise too, but with a parameter no ActivationKind carries.
          KindsReturningDefault<Result, EluParams, ThresholdedReluParams, PReluParams>{},
          // Softmax has an axis (the softmax ActivationKind is the last axis only); the rest are
          // not activations.
          KindsReturningDefault<Result, SoftmaxParams, DenseParams, ConvParams, DepthwiseConvParams, SeparableConvParams,
                         ConvTransposeParams, BatchNormParams, LayerNormParams, PoolParams, GlobalPoolParams,
                         FlattenParams, ReshapeParams, PermuteParams, RepeatVectorParams, IdentityParams,
                         ZeroPaddingParams, CroppingParams, UpSamplingParams, MergeParams, ConcatParams,
                         RecurrentParams, ResizeParams, GatherParams, MatMulParams, ConstantParams,
                         ArgMaxParams>{},
          // Quantized kinds: an integer layer's activation is a clamp of its integers, made by the
          // loader; none of them is a float activation.
          KindsReturningDefault<Result, QuantizeParams, DequantizeParams, QConvParams, QDenseParams>{},
      },
      n.params);
}

namespace {

// Sets the producer's activation when it can take `act`; false otherwise. Every kind decides.
bool fuse_into(const Graph& g, Node& p, ActivationKind act) {
  auto into_epilogue = [act](auto& q) {
    if (q.activation != ActivationKind::kLinear) return false;
    q.activation = act;
    return true;
  };
  return visit_layer(
      Overloaded{
          [&](DenseParams& q) { return into_epilogue(q); },
          [&](ConvParams& q) { return into_epilogue(q); },
          [&](DepthwiseConvParams& q) { return into_epilogue(q); },
          [&](SeparableConvParams& q) { return into_epilogue(q); },
          [&](BatchNormParams& q) {
            // The JIT's BatchNorm kernel clamps after the affine only on the last axis.
            if (act != ActivationKind::kRelu && act != ActivationKind::kRelu6) return false;
            if (q.axis != static_cast<int>(g.values[static_cast<size_t>(p.output)].shape.size()) - 1) return false;
            return into_epilogue(q);
          },
          // Has an epilogue activation, but has never been fused into: doing it would change the
          // code of every network with a transposed convolution followed by an activation.
          KindsReturning<false, ConvTransposeParams>{},
          // RecurrentParams::activation is the cell's, not applied to the output.
          KindsReturning<false, RecurrentParams>{},
          // No activation epilogue.
          KindsReturning<false, LayerNormParams, ActivationParams, ReluParams, EluParams, ThresholdedReluParams,
                         PReluParams, SoftmaxParams, PoolParams, GlobalPoolParams, FlattenParams, ReshapeParams,
                         PermuteParams, RepeatVectorParams, IdentityParams, ZeroPaddingParams, CroppingParams,
                         UpSamplingParams, MergeParams, ConcatParams, ResizeParams, GatherParams, MatMulParams,
                         ConstantParams>{},
          // Quantized kinds: a float activation after them reads a float32 value, which an
          // integer layer does not produce (Dequantize has no epilogue either); nor does ArgMax.
          KindsReturning<false, QuantizeParams, DequantizeParams, QConvParams, QDenseParams, ArgMaxParams>{},
      },
      p.params);
}

}  // namespace

bool FuseActivation::run(Graph& g) {
  std::vector<bool> dead(g.nodes.size(), false);
  bool changed = false;
  const std::vector<int> uses = value_uses(g);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const auto act = activation_of_node(g.nodes[i]);
    if (!act) continue;
    const ValueId x = g.nodes[i].inputs[0];
    const NodeId p = g.values[static_cast<size_t>(x)].producer;
    if (p == kNoNode || uses[static_cast<size_t>(x)] != 1) continue;
    if (!fuse_into(g, g.nodes[static_cast<size_t>(p)], *act)) continue;
    absorb_successor(g, p, static_cast<NodeId>(i), dead);
    changed = true;
  }
  if (changed) remove_nodes(g, dead);
  return changed;
}

}  // namespace nnd::passes
