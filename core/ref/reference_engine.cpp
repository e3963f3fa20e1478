// The reference engine: runs the graph node by node on float64 batch tensors.
#include "core/ref/reference_engine.h"

#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "core/ir/shape_inference.h"
#include "core/ref/ref_ops.h"
#include "core/util/checked_math.h"
#include "core/util/error.h"

namespace nnd {
namespace {

using ref::Tensor;

Tensor run_node_unfused(const Node& node, const std::vector<const Tensor*>& in, const Dims& out_shape) {
  const Tensor& x = *in[0];
  return std::visit(
      [&](const auto& p) -> Tensor {
        using T = std::decay_t<decltype(p)>;
        if constexpr (std::is_same_v<T, DenseParams>) return ref::dense(p, x, out_shape);
        else if constexpr (std::is_same_v<T, ConvParams>) return ref::conv(p, x, out_shape);
        else if constexpr (std::is_same_v<T, DepthwiseConvParams>) return ref::depthwise_conv(p, x, out_shape);
        else if constexpr (std::is_same_v<T, SeparableConvParams>) return ref::separable_conv(p, x, out_shape);
        else if constexpr (std::is_same_v<T, ConvTransposeParams>) return ref::conv_transpose(p, x, out_shape);
        else if constexpr (std::is_same_v<T, BatchNormParams>) return ref::batch_norm(p, x);
        else if constexpr (std::is_same_v<T, LayerNormParams>) return ref::layer_norm(p, x);
        else if constexpr (std::is_same_v<T, ActivationParams>) return ref::activation(p, x);
        else if constexpr (std::is_same_v<T, ReluParams>) return ref::relu(p, x);
        else if constexpr (std::is_same_v<T, EluParams>) return ref::elu(p, x);
        else if constexpr (std::is_same_v<T, ThresholdedReluParams>) return ref::thresholded_relu(p, x);
        else if constexpr (std::is_same_v<T, PReluParams>) return ref::prelu(p, x);
        else if constexpr (std::is_same_v<T, SoftmaxParams>) return ref::softmax(p, x);
        else if constexpr (std::is_same_v<T, PoolParams>) return ref::pool(p, x, out_shape);
        else if constexpr (std::is_same_v<T, GlobalPoolParams>) return ref::global_pool(p, x, out_shape);
        else if constexpr (std::is_same_v<T, FlattenParams> || std::is_same_v<T, ReshapeParams> ||
                           std::is_same_v<T, IdentityParams>) return ref::reshape_copy(x, out_shape);
        else if constexpr (std::is_same_v<T, PermuteParams>) return ref::permute(p, x, out_shape);
        else if constexpr (std::is_same_v<T, RepeatVectorParams>) return ref::repeat_vector(p, x, out_shape);
        else if constexpr (std::is_same_v<T, ZeroPaddingParams>) return ref::zero_padding(p, x, out_shape);
        else if constexpr (std::is_same_v<T, CroppingParams>) return ref::cropping(p, x, out_shape);
        else if constexpr (std::is_same_v<T, GatherParams>) return ref::gather(p, x, out_shape);
        else if constexpr (std::is_same_v<T, UpSamplingParams>) return ref::upsampling(p, x, out_shape);
        else if constexpr (std::is_same_v<T, ResizeParams>) return ref::resize(p, x, out_shape);
        else if constexpr (std::is_same_v<T, MergeParams>) return ref::merge(p, in, out_shape);
        else if constexpr (std::is_same_v<T, ConcatParams>) return ref::concat(p, in, out_shape);
        else if constexpr (std::is_same_v<T, RecurrentParams>) return ref::recurrent(p, in, out_shape);
        else static_assert(!sizeof(T), "layer kind not handled by the reference engine");
      },
      node.params);
}

// Honours the fields graph passes add (layers.h): a fused residual is added before the layer's
// activation, a BatchNorm's fused activation is applied after the affine.
Tensor run_node(const Node& node, const std::vector<const Tensor*>& in, const Dims& out_shape) {
  return std::visit(
      [&](const auto& p) -> Tensor {
        using T = std::decay_t<decltype(p)>;
        if constexpr (requires { p.residual; }) {
          if (p.residual) {
            T linear = p;
            linear.residual = false;
            linear.activation = ActivationKind::kLinear;
            Node n1{node.name, node.keras_class, linear, {node.inputs[0]}, node.output};
            Tensor y = run_node_unfused(n1, {in[0]}, out_shape);
            const Tensor& r = *in[1];
            for (size_t k = 0; k < y.data.size(); ++k) y.data[k] += r.data[k];
            ref::apply_activation(p.activation, y);
            return y;
          }
        } else if constexpr (std::is_same_v<T, BatchNormParams>) {
          Tensor y = ref::batch_norm(p, *in[0]);
          ref::apply_activation(p.activation, y);
          return y;
        }
        return run_node_unfused(node, in, out_shape);
      },
      node.params);
}

class ReferenceEngine final : public Engine {
 public:
  explicit ReferenceEngine(Graph g) : g_(std::move(g)) {
    verify_structure(g_);
    infer_shapes(g_);  // idempotent; guarantees resolved axes and canonical kernels
    // last_use_[v]: index of the last node reading v (graph outputs are kept to the end).
    last_use_.assign(g_.values.size(), -1);
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      for (ValueId v : g_.nodes[i].inputs) last_use_[v] = static_cast<int64_t>(i);
    }
    for (ValueId v : g_.outputs) last_use_[v] = static_cast<int64_t>(g_.nodes.size());
  }

  void run(int64_t batch, std::span<const InputView> inputs, std::span<float* const> outputs) override {
    if (batch < 1) throw Error("reference engine: batch must be >= 1, got " + std::to_string(batch));
    if (inputs.size() != g_.inputs.size()) {
      throw Error("reference engine: " + g_.source + " has " + std::to_string(g_.inputs.size()) +
                  " input(s), got " + std::to_string(inputs.size()));
    }
    if (outputs.size() != g_.outputs.size()) {
      throw Error("reference engine: " + g_.source + " has " + std::to_string(g_.outputs.size()) +
                  " output(s), got " + std::to_string(outputs.size()));
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!inputs[i].data) throw Error("reference engine: input " + std::to_string(i) + " is null");
      if (inputs[i].dtype != DType::kFloat32 && inputs[i].dtype != DType::kUInt8) {
        throw Error("reference engine: input " + std::to_string(i) + " has an unknown dtype");
      }
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (!outputs[i]) throw Error("reference engine: output " + std::to_string(i) + " is null");
    }
    for (const Value& v : g_.values) {
      checked_mul(batch, element_count(v.shape, "tensor '" + v.name + "'"),
                  "reference engine: batch of tensor '" + v.name + "'");
    }

    std::vector<Tensor> t(g_.values.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      const ValueId v = g_.inputs[i];
      Tensor x(g_.values[v].shape, batch);
      if (inputs[i].dtype == DType::kUInt8) {
        const auto* src = static_cast<const uint8_t*>(inputs[i].data);
        for (size_t k = 0; k < x.data.size(); ++k) x.data[k] = static_cast<double>(src[k]);
      } else {
        const auto* src = static_cast<const float*>(inputs[i].data);
        for (size_t k = 0; k < x.data.size(); ++k) x.data[k] = static_cast<double>(src[k]);
      }
      t[v] = std::move(x);
    }
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& node = g_.nodes[i];
      std::vector<const Tensor*> in;
      for (ValueId v : node.inputs) in.push_back(&t[v]);
      t[node.output] = run_node(node, in, g_.values[node.output].shape);
      for (ValueId v : node.inputs) {
        if (last_use_[v] == static_cast<int64_t>(i)) t[v] = Tensor();
      }
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
      const Tensor& y = t[g_.outputs[i]];
      for (size_t k = 0; k < y.data.size(); ++k) outputs[i][k] = static_cast<float>(y.data[k]);
    }
  }

  const Graph& graph() const override { return g_; }
  std::string name() const override { return "reference"; }

 private:
  Graph g_;
  std::vector<int64_t> last_use_;
};

}  // namespace

std::unique_ptr<Engine> make_reference_engine(const Graph& g) { return std::make_unique<ReferenceEngine>(g); }

}  // namespace nnd
