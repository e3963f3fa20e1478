#include "core/ir/dump.h"

#include <cmath>
#include <sstream>
#include <type_traits>
#include <variant>

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

}  // namespace

std::string describe_params(const LayerParams& params) {
  std::ostringstream o;
  std::visit(
      [&](const auto& p) {
        using T = std::decay_t<decltype(p)>;
        if constexpr (std::is_same_v<T, DenseParams>) {
          o << " units " << p.units;
        } else if constexpr (std::is_same_v<T, ConvParams>) {
          o << " filters " << p.filters;
          if (p.groups != 1) o << " groups " << p.groups;
          window(o, p.window);
        } else if constexpr (std::is_same_v<T, DepthwiseConvParams>) {
          o << " dm " << p.depth_multiplier;
          window(o, p.window);
        } else if constexpr (std::is_same_v<T, SeparableConvParams>) {
          o << " filters " << p.filters << " dm " << p.depth_multiplier;
          window(o, p.window);
        } else if constexpr (std::is_same_v<T, ConvTransposeParams>) {
          o << " filters " << p.filters;
          window(o, p.window);
        } else if constexpr (std::is_same_v<T, BatchNormParams>) {
          o << " axis " << p.axis;
        } else if constexpr (std::is_same_v<T, ReluParams>) {
          if (std::isfinite(p.max_value)) o << " max " << p.max_value;
          if (p.negative_slope != 0) o << " slope " << p.negative_slope;
          if (p.threshold != 0) o << " threshold " << p.threshold;
        } else if constexpr (std::is_same_v<T, PoolParams>) {
          o << (p.kind == PoolKind::kMax ? " max" : " avg");
          window(o, p.window);
        } else if constexpr (std::is_same_v<T, GlobalPoolParams>) {
          o << (p.kind == PoolKind::kMax ? " max" : " avg");
        } else if constexpr (std::is_same_v<T, MergeParams>) {
          static const char* ops[] = {"add", "sub", "mul", "avg", "max", "min"};
          o << " " << ops[static_cast<int>(p.op)];
        } else if constexpr (std::is_same_v<T, ConcatParams> || std::is_same_v<T, SoftmaxParams>) {
          o << " axis " << p.axis;
        } else if constexpr (std::is_same_v<T, UpSamplingParams>) {
          o << " x" << p.size_h << "x" << p.size_w << (p.interpolation == Interpolation::kBilinear ? " bilinear" : " nearest");
        } else if constexpr (std::is_same_v<T, GatherParams>) {
          o << " axis " << p.axis << " indices [";
          for (size_t i = 0; i < p.indices.size() && i < 8; ++i) o << (i ? ", " : "") << p.indices[i];
          o << (p.indices.size() > 8 ? ", ...]" : "]");
        } else if constexpr (std::is_same_v<T, ResizeParams>) {
          static const char* coords[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                         "tf_half_pixel_for_nn"};
          static const char* roundings[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
          o << " to " << p.out_h << "x" << p.out_w;
          if (p.scale_h != 0 || p.scale_w != 0) o << " scales " << p.scale_h << "," << p.scale_w;
          o << " " << coords[static_cast<int>(p.coordinates)];
          if (p.interpolation == Interpolation::kBilinear) o << " linear";
          else o << " nearest " << roundings[static_cast<int>(p.rounding)];
        } else if constexpr (std::is_same_v<T, RecurrentParams>) {
          static const char* cells[] = {"simple", "lstm", "gru"};
          static const char* dirs[] = {"forward", "reverse", "bidirectional"};
          static const char* outs[] = {"sequence", "last-h", "last-c"};
          static const char* inits[] = {"", " h0-const", " h0-input"};
          o << " " << cells[static_cast<int>(p.cell)] << " units " << p.units << " "
            << dirs[static_cast<int>(p.direction)] << " " << outs[static_cast<int>(p.output)]
            << inits[static_cast<int>(p.initial_state)];
          if (p.cell == RecurrentCell::kGru && !p.reset_after) o << " reset-before";
          static const char* merges[] = {"", " sum", " mul", " ave"};
          o << merges[static_cast<int>(p.merge)];
          if (p.cell != RecurrentCell::kSimple) o << " gates " << activation_name(p.recurrent_activation);
        }
        if constexpr (requires { p.activation; }) act(o, p.activation);
        if constexpr (requires { p.residual; }) {
          if (p.residual) o << " +residual";
        }
      },
      params);
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
