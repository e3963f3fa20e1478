// The reference engine: runs the graph node by node on float64 batch tensors.
#include "core/ref/reference_engine.h"

#include <algorithm>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "core/ir/arg_max.h"
#include "core/ir/layer_kind_traits.h"
#include "core/ir/shape_inference.h"
#include "core/ref/ref_ops.h"
#include "core/util/checked_math.h"
#include "core/util/error.h"

namespace nnd {
namespace {

using ref::Tensor;

// The reference implementation of every kind, one overload each (core/ir/layer_kind_traits.h), on
// the node's inputs. A fused residual is run_node's.
class ReferenceOp {
 public:
  ReferenceOp(const std::vector<const Tensor*>& in, const Dims& out_shape) : in_(in), x_(*in[0]), out_(out_shape) {}

  Tensor operator()(const DenseParams& p) const { return ref::dense(p, x_, out_); }
  Tensor operator()(const ConvParams& p) const { return ref::conv(p, x_, out_); }
  Tensor operator()(const DepthwiseConvParams& p) const { return ref::depthwise_conv(p, x_, out_); }
  Tensor operator()(const SeparableConvParams& p) const { return ref::separable_conv(p, x_, out_); }
  Tensor operator()(const ConvTransposeParams& p) const { return ref::conv_transpose(p, x_, out_); }
  Tensor operator()(const BatchNormParams& p) const {
    Tensor y = ref::batch_norm(p, x_);
    ref::apply_activation(p.activation, y);  // fused by a graph pass, linear from the loaders
    return y;
  }
  Tensor operator()(const LayerNormParams& p) const { return ref::layer_norm(p, x_); }
  Tensor operator()(const ActivationParams& p) const { return ref::activation(p, x_); }
  Tensor operator()(const ReluParams& p) const { return ref::relu(p, x_); }
  Tensor operator()(const EluParams& p) const { return ref::elu(p, x_); }
  Tensor operator()(const ThresholdedReluParams& p) const { return ref::thresholded_relu(p, x_); }
  Tensor operator()(const PReluParams& p) const { return ref::prelu(p, x_); }
  Tensor operator()(const SoftmaxParams& p) const { return ref::softmax(p, x_); }
  Tensor operator()(const PoolParams& p) const { return ref::pool(p, x_, out_); }
  Tensor operator()(const GlobalPoolParams& p) const { return ref::global_pool(p, x_, out_); }
  Tensor operator()(const FlattenParams&) const { return ref::reshape_copy(x_, out_); }
  Tensor operator()(const ReshapeParams&) const { return ref::reshape_copy(x_, out_); }
  Tensor operator()(const IdentityParams&) const { return ref::reshape_copy(x_, out_); }
  Tensor operator()(const PermuteParams& p) const { return ref::permute(p, x_, out_); }
  Tensor operator()(const RepeatVectorParams& p) const { return ref::repeat_vector(p, x_, out_); }
  Tensor operator()(const ZeroPaddingParams& p) const { return ref::zero_padding(p, x_, out_); }
  Tensor operator()(const CroppingParams& p) const { return ref::cropping(p, x_, out_); }
  Tensor operator()(const GatherParams& p) const { return ref::gather(p, x_, out_); }
  Tensor operator()(const ArgMaxParams& p) const {
    Tensor y(out_, x_.batch);
    arg_max(p, x_.shape, x_.batch, x_.data.data(), y.data.data());
    return y;
  }
  Tensor operator()(const UpSamplingParams& p) const { return ref::upsampling(p, x_, out_); }
  Tensor operator()(const ResizeParams& p) const { return ref::resize(p, x_, out_); }
  Tensor operator()(const MergeParams& p) const { return ref::merge(p, in_, out_); }
  Tensor operator()(const ConcatParams& p) const { return ref::concat(p, in_, out_); }
  Tensor operator()(const ConstantParams& p) const { return ref::constant(p, x_); }
  Tensor operator()(const MatMulParams&) const { return ref::matmul(*in_[0], *in_[1], out_); }
  Tensor operator()(const RecurrentParams& p) const { return ref::recurrent(p, in_, out_); }
  Tensor operator()(const QuantizeParams& p) const { return ref::quantize(p, x_); }
  Tensor operator()(const DequantizeParams& p) const { return ref::dequantize(p, x_); }
  Tensor operator()(const QConvParams& p) const { return ref::qconv(p, x_, out_); }
  Tensor operator()(const QDenseParams& p) const { return ref::qdense(p, x_, out_); }

 private:
  const std::vector<const Tensor*>& in_;
  const Tensor& x_;
  const Dims& out_;
};
static_assert(ExhaustiveLayerVisitor<ReferenceOp>);

// Honours the fused residual graph passes add (layers.h): added before or after the layer's
// activation, as residual_at says.
Tensor run_node(const Node& node, const std::vector<const Tensor*>& in, const Dims& out_shape) {
  return std::visit(
      [&](const auto& p) -> Tensor {
        using T = std::decay_t<decltype(p)>;
        if constexpr (requires { p.residual; }) {
          if (p.residual) {
            T linear = p;
            linear.residual = false;
            linear.activation = ActivationKind::kLinear;
            Tensor y = ReferenceOp({in[0]}, out_shape)(linear);
            const Tensor& r = *in[1];
            const bool after = p.residual_at == ResidualAt::kAfterActivation;
            if (after) ref::apply_activation(p.activation, y);
            for (size_t k = 0; k < y.data.size(); ++k) y.data[k] += r.data[k];
            if (!after) ref::apply_activation(p.activation, y);
            return y;
          }
        }
        return ReferenceOp(in, out_shape)(p);
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

  const Graph& graph() const override { return g_; }
  std::string name() const override { return "reference"; }

 protected:
  void run_views(int64_t batch, std::span<const InputView> inputs, std::span<const OutputView> outputs) override {
    if (batch < 1) throw Error(ErrorCode::kInvalidArgument, "reference engine: batch must be >= 1, got " + std::to_string(batch));
    if (inputs.size() != g_.inputs.size()) {
      throw Error(ErrorCode::kInvalidArgument, "reference engine: " + g_.source + " has " + std::to_string(g_.inputs.size()) +
                  " input(s), got " + std::to_string(inputs.size()));
    }
    check_output_views(g_, outputs, "reference engine");
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!inputs[i].data) throw Error(ErrorCode::kInvalidArgument, "reference engine: input " + std::to_string(i) + " is null");
      if (inputs[i].dtype != DType::kFloat32 && inputs[i].dtype != DType::kUInt8) {
        throw Error(ErrorCode::kInvalidArgument, "reference engine: input " + std::to_string(i) + " has an unknown dtype");
      }
    }
    // The tensor's name goes into the message only on failure: no string is built per call.
    for (const Value& v : g_.values) {
      if (batch > kMaxElements / std::max<int64_t>(1, element_count(v.shape, v.name))) {
        checked_mul(batch, element_count(v.shape, v.name), "reference engine: batch of tensor '" + v.name + "'");
      }
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
      if (outputs[i].dtype == DType::kInt64) {
        auto* out = static_cast<int64_t*>(outputs[i].data);
        for (size_t k = 0; k < y.data.size(); ++k) out[k] = static_cast<int64_t>(y.data[k]);
      } else {
        auto* out = static_cast<float*>(outputs[i].data);
        for (size_t k = 0; k < y.data.size(); ++k) out[k] = static_cast<float>(y.data[k]);
      }
    }
  }

 private:
  Graph g_;
  std::vector<int64_t> last_use_;
};

}  // namespace

std::unique_ptr<Engine> make_reference_engine(const Graph& g) { return std::make_unique<ReferenceEngine>(g); }

}  // namespace nnd
