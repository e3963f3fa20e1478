#include "core/ir/dump.h"

#include <cmath>
#include <sstream>
#include <type_traits>
#include <variant>
#include <vector>

#include "core/ir/layer_kind_traits.h"

namespace nnd {
namespace {

const char* padding_name(Padding p) {
  switch (p) {
    case Padding::kValid: return "valid";
    case Padding::kSame: return "same";
    case Padding::kCausal: return "causal";
    case Padding::kExplicit: return "pads";
  }
  return "?";
}

void window(std::ostream& o, const Window& w) {
  o << " k" << w.kernel_h << "x" << w.kernel_w << " s" << w.stride_h << "x" << w.stride_w;
  if (w.dilation_h != 1 || w.dilation_w != 1) o << " d" << w.dilation_h << "x" << w.dilation_w;
  o << " " << padding_name(w.padding);
  if (w.padding == Padding::kExplicit) {
    o << "(" << w.pad_top << "," << w.pad_bottom << "," << w.pad_left << "," << w.pad_right << ")";
  }
}

void act(std::ostream& o, ActivationKind k) {
  if (k != ActivationKind::kLinear) o << " " << activation_name(k);
}

template <class T>
void list(std::ostream& o, const std::vector<T>& v, size_t limit = 8) {
  o << "[";
  for (size_t i = 0; i < v.size() && i < limit; ++i) o << (i ? ", " : "") << v[i];
  o << (v.size() > limit ? ", ...]" : "]");
}

// Four edges (ZeroPadding, Cropping): top, bottom, left, right.
template <class P>
void edges(std::ostream& o, const P& p) {
  o << " " << p.top << "," << p.bottom << "," << p.left << "," << p.right;
}

// The fused epilogue of the conv family: activation, then the residual flag (and where it goes
// when that is after the activation).
template <class P>
void epilogue(std::ostream& o, const P& p) {
  act(o, p.activation);
  if (p.residual) o << (p.residual_at == ResidualAt::kAfterActivation ? " +residual(after act)" : " +residual");
}

// One overload per kind (layer_kind_traits.h): what distinguishes two nodes of that kind. Only
// Flatten and Identity have nothing to say.
class ParamsDescriber {
 public:
  explicit ParamsDescriber(std::ostream& o) : o_(o) {}

  void operator()(const DenseParams& p) const {
    o_ << " units " << p.units;
    epilogue(o_, p);
  }
  void operator()(const ConvParams& p) const {
    o_ << " filters " << p.filters;
    if (p.groups != 1) o_ << " groups " << p.groups;
    window(o_, p.window);
    epilogue(o_, p);
  }
  void operator()(const DepthwiseConvParams& p) const {
    o_ << " dm " << p.depth_multiplier;
    window(o_, p.window);
    epilogue(o_, p);
  }
  void operator()(const SeparableConvParams& p) const {
    o_ << " filters " << p.filters << " dm " << p.depth_multiplier;
    window(o_, p.window);
    epilogue(o_, p);
  }
  void operator()(const ConvTransposeParams& p) const {
    o_ << " filters " << p.filters;
    window(o_, p.window);
    if (p.output_padding_h >= 0 || p.output_padding_w >= 0) {
      o_ << " outpad " << p.output_padding_h << "x" << p.output_padding_w;
    }
    act(o_, p.activation);
  }
  void operator()(const BatchNormParams& p) const {
    o_ << " axis " << p.axis << " eps " << p.epsilon;
    act(o_, p.activation);
  }
  void operator()(const LayerNormParams& p) const {
    o_ << " axes ";
    list(o_, p.axes);
    o_ << " eps " << p.epsilon;
    if (p.gamma.empty()) o_ << " no-scale";
    if (p.beta.empty()) o_ << " no-center";
  }
  // Spelled out even when linear: an Activation node without its function would say nothing.
  void operator()(const ActivationParams& p) const { o_ << " " << activation_name(p.activation); }
  void operator()(const ReluParams& p) const {
    o_ << " max " << p.max_value;  // "inf" (ReLU) or a cap (ReLU6): always said, it is the usual difference
    if (p.negative_slope != 0) o_ << " slope " << p.negative_slope;
    if (p.threshold != 0) o_ << " threshold " << p.threshold;
  }
  void operator()(const EluParams& p) const { o_ << " alpha " << p.alpha; }
  void operator()(const ThresholdedReluParams& p) const { o_ << " theta " << p.theta; }
  void operator()(const PReluParams& p) const { o_ << " alpha " << dims_to_string(p.alpha.shape); }
  void operator()(const SoftmaxParams& p) const { o_ << " axis " << p.axis; }
  void operator()(const PoolParams& p) const {
    o_ << (p.kind == PoolKind::kMax ? " max" : " avg");
    window(o_, p.window);
  }
  void operator()(const GlobalPoolParams& p) const {
    o_ << (p.kind == PoolKind::kMax ? " max" : " avg");
    if (p.keepdims) o_ << " keepdims";
  }
  void operator()(const FlattenParams&) const {}   // no parameters: the output shape says it all
  void operator()(const IdentityParams&) const {}  // no parameters
  void operator()(const MatMulParams&) const {}    // no parameters: the shapes say it all
  void operator()(const ConstantParams& p) const { o_ << " " << p.value.data.size() << " values"; }
  void operator()(const ReshapeParams& p) const { o_ << " to " << dims_to_string(p.target); }
  void operator()(const PermuteParams& p) const {
    o_ << " dims ";
    list(o_, p.dims);
  }
  void operator()(const RepeatVectorParams& p) const { o_ << " n " << p.n; }
  void operator()(const ZeroPaddingParams& p) const {
    o_ << " pad";
    edges(o_, p);
  }
  void operator()(const CroppingParams& p) const {
    o_ << " crop";
    edges(o_, p);
  }
  void operator()(const UpSamplingParams& p) const {
    o_ << " x" << p.size_h << "x" << p.size_w
       << (p.interpolation == Interpolation::kBilinear ? " bilinear" : " nearest");
  }
  void operator()(const MergeParams& p) const {
    static const char* ops[] = {"add", "sub", "mul", "avg", "max", "min"};
    o_ << " " << ops[static_cast<int>(p.op)];
  }
  void operator()(const ConcatParams& p) const { o_ << " axis " << p.axis; }
  void operator()(const QuantizeParams& p) const { o_ << " to " << quant::describe(p.output); }
  void operator()(const DequantizeParams& p) const { o_ << " from " << quant::describe(p.input); }
  void operator()(const QConvParams& p) const {
    o_ << " filters " << p.filters;
    if (p.groups != 1) o_ << " groups " << p.groups;
    window(o_, p.window);
    integer_layer(p);
  }
  void operator()(const QDenseParams& p) const {
    o_ << " units " << p.units;
    integer_layer(p);
  }
  void operator()(const ArgMaxParams& p) const {
    o_ << (p.smallest ? " min" : " max") << " axis " << p.axis;
    if (p.keep_at >= 0) o_ << " kept at " << p.keep_at;
    if (p.select_last_index) o_ << " last_index";
  }
  void operator()(const GatherParams& p) const {
    o_ << " axis " << p.axis << " indices ";
    list(o_, p.indices);
  }
  void operator()(const ResizeParams& p) const {
    static const char* coords[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                   "tf_half_pixel_for_nn"};
    static const char* roundings[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    o_ << " to " << p.out_h << "x" << p.out_w;
    if (p.scale_h != 0 || p.scale_w != 0) o_ << " scales " << p.scale_h << "," << p.scale_w;
    o_ << " " << coords[static_cast<int>(p.coordinates)];
    if (p.interpolation == Interpolation::kBilinear) {
      o_ << " linear";
    } else {
      o_ << " nearest " << roundings[static_cast<int>(p.rounding)];
    }
  }
  void operator()(const RecurrentParams& p) const {
    static const char* cells[] = {"simple", "lstm", "gru"};
    static const char* dirs[] = {"forward", "reverse", "bidirectional"};
    static const char* outs[] = {"sequence", "last-h", "last-c"};
    static const char* inits[] = {"", " h0-const", " h0-input"};
    static const char* merges[] = {"", " sum", " mul", " ave"};
    o_ << " " << cells[static_cast<int>(p.cell)] << " units " << p.units << " " << dirs[static_cast<int>(p.direction)]
       << " " << outs[static_cast<int>(p.output)] << inits[static_cast<int>(p.initial_state)];
    if (p.cell == RecurrentCell::kGru && !p.reset_after) o_ << " reset-before";
    o_ << merges[static_cast<int>(p.merge)];
    if (p.cell != RecurrentCell::kSimple) o_ << " gates " << activation_name(p.recurrent_activation);
    act(o_, p.activation);
  }

 private:
  template <class P>
  void integer_layer(const P& p) const {
    o_ << " x " << quant::describe(p.input) << ", w " << quant::describe(p.weights);
    if (!p.bias.empty()) o_ << ", int32 bias";
    if (p.out.output.type == quant::QuantType::kInt32) {
      o_ << ", int32 accumulator out";
    } else {
      o_ << ", y " << quant::describe(p.out.output);
      if (std::isfinite(p.out.act_lo) || std::isfinite(p.out.act_hi)) o_ << " clamp [" << p.out.act_lo << ", " << p.out.act_hi << "]";
    }
  }

  std::ostream& o_;
};

}  // namespace

std::string describe_params(const LayerParams& params) {
  std::ostringstream o;
  visit_layer(ParamsDescriber(o), params);
  return o.str();
}

std::string dump_graph(const Graph& g) {
  std::ostringstream o;
  o << "graph " << g.source << ": " << g.inputs.size() << " input(s), " << g.outputs.size() << " output(s), "
    << g.nodes.size() << " node(s)\n";
  for (ValueId v : g.inputs) {
    o << "input  %" << v << " '" << g.values[v].name << "' " << dims_to_string(g.values[v].shape) << " "
      << dtype_name(g.values[v].dtype) << "\n";
  }
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    o << "node " << i << " '" << n.name << "' " << layer_kind_name(n.params) << "(";
    for (size_t k = 0; k < n.inputs.size(); ++k) o << (k ? ", " : "") << "%" << n.inputs[k];
    o << ") -> %" << n.output;
    if (n.output >= 0 && n.output < static_cast<ValueId>(g.values.size())) {
      o << " " << dims_to_string(g.values[n.output].shape);
    }
    o << describe_params(n.params) << "\n";
  }
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    o << "output '" << (i < g.output_names.size() ? g.output_names[i] : "?") << "' = %" << g.outputs[i] << "\n";
  }
  return o.str();
}

}  // namespace nnd
