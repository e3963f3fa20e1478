// The exhaustive dispatch: one lowering per layer kind (lower.h), no fallback.
#include <variant>

#include "core/ir/shape_inference.h"
#include "core/jit/in_place.h"
#include "core/jit/lower/lower.h"
#include "core/jit/padded_storage.h"
#include "core/util/error.h"

namespace nnd::jit {

namespace {

// Calls lower(cx, n, p) for the kind p holds. There is deliberately no generic overload: a kind
// that lower.h does not declare a lowering for fails to compile here.
struct LowerKind {
  LowerContext& cx;
  const Node& n;
  void operator()(const DenseParams& p) const { lower(cx, n, p); }
  void operator()(const ConvParams& p) const { lower(cx, n, p); }
  void operator()(const DepthwiseConvParams& p) const { lower(cx, n, p); }
  void operator()(const SeparableConvParams& p) const { lower(cx, n, p); }
  void operator()(const ConvTransposeParams& p) const { lower(cx, n, p); }
  void operator()(const BatchNormParams& p) const { lower(cx, n, p); }
  void operator()(const LayerNormParams& p) const { lower(cx, n, p); }
  void operator()(const ActivationParams& p) const { lower(cx, n, p); }
  void operator()(const ReluParams& p) const { lower(cx, n, p); }
  void operator()(const EluParams& p) const { lower(cx, n, p); }
  void operator()(const ThresholdedReluParams& p) const { lower(cx, n, p); }
  void operator()(const PReluParams& p) const { lower(cx, n, p); }
  void operator()(const SoftmaxParams& p) const { lower(cx, n, p); }
  void operator()(const PoolParams& p) const { lower(cx, n, p); }
  void operator()(const GlobalPoolParams& p) const { lower(cx, n, p); }
  void operator()(const FlattenParams& p) const { lower(cx, n, p); }
  void operator()(const ReshapeParams& p) const { lower(cx, n, p); }
  void operator()(const PermuteParams& p) const { lower(cx, n, p); }
  void operator()(const RepeatVectorParams& p) const { lower(cx, n, p); }
  void operator()(const IdentityParams& p) const { lower(cx, n, p); }
  void operator()(const ZeroPaddingParams& p) const { lower(cx, n, p); }
  void operator()(const CroppingParams& p) const { lower(cx, n, p); }
  void operator()(const UpSamplingParams& p) const { lower(cx, n, p); }
  void operator()(const MergeParams& p) const { lower(cx, n, p); }
  void operator()(const ConcatParams& p) const { lower(cx, n, p); }
  void operator()(const RecurrentParams& p) const { lower(cx, n, p); }
  void operator()(const ResizeParams& p) const { lower(cx, n, p); }
  void operator()(const GatherParams& p) const { lower(cx, n, p); }
  // Computed after the kernels from a float graph output (index_outputs.h): the engine lowers the
  // graph without its ArgMax nodes.
  void operator()(const ArgMaxParams&) const {
    throw Error(ErrorCode::kInternal, cx.g.node_context(n) + ": an ArgMax reached lowering (split_index_outputs first)");
  }
  void operator()(const MatMulParams& p) const { lower(cx, n, p); }
  void operator()(const ConstantParams& p) const { lower(cx, n, p); }
  void operator()(const QuantizeParams& p) const { lower(cx, n, p); }
  void operator()(const DequantizeParams& p) const { lower(cx, n, p); }
  void operator()(const QConvParams& p) const { lower(cx, n, p); }
  void operator()(const QDenseParams& p) const { lower(cx, n, p); }
};

}  // namespace

void lower_node(LowerContext& cx, const Node& n) { std::visit(LowerKind{cx, n}, n.params); }

void lower_graph(LowerContext& cx) {
  const Graph& g = cx.g;
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const ValueId v = g.inputs[i];
    const int64_t count = element_count(g.values[v].shape, g.values[v].name);
    GraphInputBuffers in;
    in.input = cx.new_buffer(count, g.values[v].name);
    cx.buffers[static_cast<size_t>(in.input)].kind = PlanBuffer::kInput;
    cx.buffers[static_cast<size_t>(in.input)].index = static_cast<int>(i);
    cx.value_buf[static_cast<size_t>(v)] = in.input;
    in.u8 = cx.new_buffer(count, g.values[v].name + ":f32");
    cx.inputs.push_back(in);
  }
  const std::vector<int> dying = dying_inputs(g);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const size_t first = cx.kernels.size();
    if (cx.unsupported && std::holds_alternative<RecurrentParams>(g.nodes[i].params)) {
      // Listing what the generators lack (jit_unsupported_layers): a recurrent layer's kernels
      // are its expansion's (a graph pass), which that listing does not run; give the layer its
      // output for the layers after it.
      cx.output_buffer(g.nodes[i]);
      continue;
    }
    lower_node(cx, g.nodes[i]);
    write_in_place(cx, g.nodes[i], first, dying[i]);
  }
  plan_padded_storage(cx);
}

}  // namespace nnd::jit
