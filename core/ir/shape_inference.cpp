#include "core/ir/shape_inference.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "core/ir/conv_geometry.h"
#include "core/ir/quant/requantize.h"
#include "core/util/checked_math.h"
#include "core/util/error.h"

namespace nnd {
namespace {

std::string num(int64_t v) { return std::to_string(v); }

// Shape inference for one node. Every message starts with the node context and names the field.
class NodeInference {
 public:
  NodeInference(Graph& g, Node& n) : g_(g), n_(n), ctx_(g.node_context(n)) {}

  void run() {
    for (ValueId v : n_.inputs) in_.push_back(g_.values[v].shape);
    // A fused residual (layers.h) is the last input and must have the output's shape.
    std::optional<Dims> residual;
    std::visit(
        [&](const auto& p) {
          if constexpr (requires { p.residual; }) {
            if (p.residual) {
              expect_inputs(2);
              residual = in_.back();
              in_.pop_back();
            }
          }
        },
        n_.params);
    check_input_dtypes();
    Dims out = std::visit([this](auto& p) { return infer(p); }, n_.params);
    if (residual && *residual != out) {
      fail("residual", "shape " + dims_to_string(*residual) + " differs from the output shape " + dims_to_string(out));
    }
    for (int64_t d : out) {
      if (d < 1) fail("output shape", "dimension " + num(d) + " in " + dims_to_string(out) + " is not positive");
    }
    element_count(out, ctx_ + ": output shape " + dims_to_string(out));
    Value& v = g_.values[n_.output];
    v.shape = std::move(out);
    v.dtype = output_dtype();
  }

 private:
  // Without a code: the layer's parameters contradict each other or its inputs (kFormat).
  [[noreturn]] void fail(const std::string& field, const std::string& msg) const {
    fail(ErrorCode::kFormat, field, msg);
  }
  [[noreturn]] void fail(ErrorCode code, const std::string& field, const std::string& msg) const {
    throw Error(code, ctx_ + ": " + field + ": " + msg);
  }

  std::string what(const std::string& field) const { return ctx_ + ": " + field; }

  // Element types (tensor.h): integer layers read the quantized type their parameters name; every
  // other kind reads float32, or uint8 camera bytes straight from a graph input. A quantized value
  // reaches a float layer only through Dequantize.
  std::optional<DType> integer_input_dtype() const {
    if (const auto* d = std::get_if<DequantizeParams>(&n_.params)) return quant_dtype(d->input.type);
    if (const auto* c = std::get_if<QConvParams>(&n_.params)) return quant_dtype(c->input.type);
    if (const auto* m = std::get_if<QDenseParams>(&n_.params)) return quant_dtype(m->input.type);
    return std::nullopt;
  }

  // Kinds that only move elements: they carry an integer tensor unchanged (Permute for layouts,
  // Reshape / Flatten / Identity for views), so the loader can relay out quantized tensors.
  static bool moves_data_only(const Node& n) {
    return std::holds_alternative<PermuteParams>(n.params) || std::holds_alternative<ReshapeParams>(n.params) ||
           std::holds_alternative<FlattenParams>(n.params) || std::holds_alternative<IdentityParams>(n.params);
  }
  bool moves_data_only() const { return moves_data_only(n_); }

  // A uint8 graph input, or a view of one (its float32 layouts keep the bytes): integer layers read
  // those bytes as uint8 quantized values.
  bool camera_bytes(ValueId v) const {
    for (;;) {
      const Value& val = g_.values[static_cast<size_t>(v)];
      if (val.producer == kNoNode) return val.dtype == DType::kUInt8;
      const Node& p = g_.nodes[static_cast<size_t>(val.producer)];
      if (!moves_data_only(p)) return false;
      v = p.inputs[0];
    }
  }

  void check_input_dtypes() const {
    // The indices of an ArgMax go to the graph's outputs, at most through views that keep the
    // order of their elements (the JIT computes them after its kernels: index_outputs.h).
    const bool keeps_order = std::holds_alternative<ReshapeParams>(n_.params) ||
                             std::holds_alternative<FlattenParams>(n_.params) ||
                             std::holds_alternative<IdentityParams>(n_.params);
    for (ValueId id : n_.inputs) {
      const Value& v = g_.values[static_cast<size_t>(id)];
      if (v.dtype == DType::kInt64 && !keeps_order) {
        fail(ErrorCode::kUnsupported, "input dtype", "input '" + v.name + "' holds the int64 indices of an ArgMax, "
                                                     "which nnd serves only as a graph output (through a reshape at most)");
      }
    }
    if (moves_data_only()) return;
    const std::optional<DType> integer = integer_input_dtype();
    for (size_t i = 0; i < n_.inputs.size(); ++i) {
      const Value& v = g_.values[static_cast<size_t>(n_.inputs[i])];
      if (integer) {
        if (v.dtype != *integer && !(*integer == DType::kUInt8 && camera_bytes(n_.inputs[i]))) {
          fail("input dtype", "input '" + v.name + "' is " + dtype_name(v.dtype) + ", the layer's quantization expects " +
                                  dtype_name(*integer));
        }
      } else if (v.dtype != DType::kFloat32 && !(v.dtype == DType::kUInt8 && v.producer == kNoNode)) {
        fail("input dtype", "input '" + v.name + "' is a quantized " + std::string(dtype_name(v.dtype)) +
                                " tensor; a float layer reads it only through a Dequantize");
      }
    }
  }

  DType output_dtype() const {
    if (std::holds_alternative<ArgMaxParams>(n_.params)) return DType::kInt64;
    if (const auto* q = std::get_if<QuantizeParams>(&n_.params)) return quant_dtype(q->output.type);
    if (const auto* c = std::get_if<QConvParams>(&n_.params)) return quant_dtype(c->out.output.type);
    if (const auto* m = std::get_if<QDenseParams>(&n_.params)) return quant_dtype(m->out.output.type);
    if (moves_data_only()) {
      // Integer tensors keep their type through a view; a uint8 graph input's views are float32
      // for the float layers (camera_bytes above lets integer layers read them as uint8).
      const Value& in = g_.values[static_cast<size_t>(n_.inputs[0])];
      if (in.dtype == DType::kInt8 || in.dtype == DType::kInt32 || in.dtype == DType::kInt64 ||
          (in.dtype == DType::kUInt8 && in.producer != kNoNode)) {
        return in.dtype;
      }
    }
    return DType::kFloat32;
  }

  void check_quant(const std::string& field, const quant::QuantParams& q) const {
    quant::validate(q, what(field));
  }

  // An integer layer's weights, bias, quantization parameters and output; `out_axis` is the kernel
  // axis of the outputs (per-channel weights run along it); `window_taps`: how many kernel
  // elements meet one output (the accumulator bound). Proves the int32 accumulator cannot
  // overflow (quant::check_accumulator).
  template <class P>
  void check_integer_layer(const P& p, const Dims& kernel_shape, int64_t outputs, size_t out_axis) const {
    check_quant("input quantization", p.input);
    if (p.input.per_channel()) fail(ErrorCode::kUnsupported, "input quantization", "must be per tensor");
    if (p.input.type == quant::QuantType::kInt32) fail("input quantization", "an int32 input is not a quantized tensor");
    check_quant("weight quantization", p.weights);
    if (p.weights.type == quant::QuantType::kInt32) fail("weight quantization", "weights are int8 or uint8");
    if (p.weights.per_channel()) {
      if (p.weights.axis != static_cast<int>(out_axis) || static_cast<int64_t>(p.weights.channels()) != outputs) {
        fail("weight quantization", "per-channel weights need one scale per output (" + num(outputs) + ") along kernel axis " +
                                        num(static_cast<int64_t>(out_axis)) + ", got " + num(static_cast<int64_t>(p.weights.channels())) +
                                        " along axis " + num(p.weights.axis));
      }
    }
    check_quant("output quantization", p.out.output);
    if (p.out.output.per_channel()) fail(ErrorCode::kUnsupported, "output quantization", "must be per tensor");
    if (p.out.output.type == quant::QuantType::kInt32 &&
        (p.out.output.zero_points[0] != 0 || std::isfinite(p.out.act_lo) || std::isfinite(p.out.act_hi))) {
      fail("output quantization", "an int32 accumulator output has zero point 0 and no activation clamp");
    }
    if (!(p.out.act_lo <= p.out.act_hi)) fail("activation range", "lower bound above the upper bound");
    if (p.kernel.shape != kernel_shape) {
      fail("kernel", "expected shape " + dims_to_string(kernel_shape) + ", got " + dims_to_string(p.kernel.shape));
    }
    const int64_t count = element_count(kernel_shape, what("kernel"));
    if (static_cast<int64_t>(p.kernel.data.size()) != count) {
      fail("kernel", "holds " + num(static_cast<int64_t>(p.kernel.data.size())) + " values, shape " + dims_to_string(kernel_shape) +
                         " needs " + num(count));
    }
    if (!p.bias.empty() && static_cast<int64_t>(p.bias.size()) != outputs) {
      fail("bias", "holds " + num(static_cast<int64_t>(p.bias.size())) + " values for " + num(outputs) + " outputs");
    }
    // Per output: sum |w - w_zp| over its weights (outputs are the innermost kernel axis).
    const int64_t lo = quant::type_min(p.weights.type), hi = quant::type_max(p.weights.type);
    std::vector<int64_t> sum_abs(static_cast<size_t>(outputs), 0);
    for (size_t k = 0; k < p.kernel.data.size(); ++k) {
      const int64_t w = p.kernel.data[k];
      const size_t o = k % static_cast<size_t>(outputs);
      if (w < lo || w > hi) {
        fail("kernel", "value " + num(w) + " at index " + num(static_cast<int64_t>(k)) + " is outside " + quant::quant_type_name(p.weights.type));
      }
      sum_abs[o] += std::abs(w - p.weights.zero_point(o));
    }
    const int64_t max_x = quant::max_abs_input(p.input.type, p.input.zero_point(0));
    for (size_t o = 0; o < sum_abs.size(); ++o) {
      const int64_t b = p.bias.empty() ? 0 : std::abs(static_cast<int64_t>(p.bias[o]));
      quant::check_accumulator(max_x, sum_abs[o], b, ctx_ + ": output channel " + std::to_string(o));
    }
    if (p.out.output.type != quant::QuantType::kInt32) {
      for (size_t c = 0; c < (p.weights.per_channel() ? p.weights.channels() : 1); ++c) {
        quant::requant_multiplier(p.input.scale(0), p.weights.scale(c), p.out.output.scale(0), ctx_);
      }
    }
  }

  void expect_inputs(size_t count) const {
    if (in_.size() != count) {
      fail("inputs", "expected " + std::to_string(count) + " input(s), got " + std::to_string(in_.size()));
    }
  }

  // The single input, with the rank the layer needs (0: any rank >= 1).
  const Dims& single_input(size_t rank, const std::string& layer_desc) const {
    expect_inputs(1);
    const Dims& s = in_[0];
    if (rank != 0 && s.size() != rank) {
      fail("input shape", layer_desc + " needs a rank-" + std::to_string(rank) +
                              " input per sample (batch excluded), got " + dims_to_string(s));
    }
    if (s.empty()) fail("input shape", "needs an input of rank >= 1 per sample, got a scalar");
    return s;
  }

  void check_weights(const std::string& field, const Weights& w, const Dims& expected) const {
    if (w.shape != expected) {
      fail(field, "expected shape " + dims_to_string(expected) + ", got " + dims_to_string(w.shape));
    }
    check_data(field, w);
  }

  void check_data(const std::string& field, const Weights& w) const {
    const int64_t count = element_count(w.shape, what(field));
    if (static_cast<int64_t>(w.data.size()) != count) {
      fail(field, "holds " + std::to_string(w.data.size()) + " values, shape " +
                      dims_to_string(w.shape) + " needs " + num(count));
    }
  }

  void check_optional_bias(const std::string& field, const Weights& w, int64_t n) const {
    if (w.shape.empty() && w.data.empty()) return;
    check_weights(field, w, {n});
  }

  void check_positive(const std::string& field, int64_t v) const {
    if (v < 1) fail(field, "must be >= 1, got " + num(v));
    if (v > kMaxElements) fail(ErrorCode::kLimit, field, num(v) + " exceeds the limit of " + num(kMaxElements));
  }

  void check_nonnegative(const std::string& field, int64_t v) const {
    if (v < 0) fail(field, "must be >= 0, got " + num(v));
    if (v > kMaxElements) fail(ErrorCode::kLimit, field, num(v) + " exceeds the limit of " + num(kMaxElements));
  }

  // Keras axis (batch = 0, negative from the end of the full rank) -> per-sample axis.
  int resolve_axis(const std::string& field, int keras_axis, size_t sample_rank) const {
    const int64_t full = static_cast<int64_t>(sample_rank) + 1;
    int64_t a = keras_axis < 0 ? keras_axis + full : keras_axis;
    if (a < 0 || a >= full) {
      fail(field, "axis " + std::to_string(keras_axis) + " is out of range for an input of rank " +
                      num(full) + " (batch included)");
    }
    if (a == 0) fail(ErrorCode::kUnsupported, field, "axis " + std::to_string(keras_axis) + " is the batch axis, which is not supported");
    return static_cast<int>(a - 1);
  }

  // 1-D layers store kernels without the leading height axis; canonicalise to 4-D (1, kw, ...).
  static void canonicalise_1d_kernel(int rank, Weights& w) {
    if (rank == 1 && w.shape.size() == 3) w.shape.insert(w.shape.begin(), 1);
  }

  void check_rank_field(int rank) const {
    if (rank != 1 && rank != 2) fail("rank", "must be 1 or 2, got " + std::to_string(rank));
  }

  void check_window(const Window& w, int rank, bool allow_causal, bool allow_dilation) const {
    check_positive("kernel_size", w.kernel_h);
    check_positive("kernel_size", w.kernel_w);
    check_positive("strides", w.stride_h);
    check_positive("strides", w.stride_w);
    check_positive("dilation_rate", w.dilation_h);
    check_positive("dilation_rate", w.dilation_w);
    if (rank == 1 && (w.kernel_h != 1 || w.stride_h != 1 || w.dilation_h != 1)) {
      fail("kernel_size", "a 1-D layer must have kernel_h = stride_h = dilation_h = 1");
    }
    if (!allow_dilation && (w.dilation_h != 1 || w.dilation_w != 1)) {
      fail("dilation_rate", "must be 1 for this layer");
    }
    if (w.padding == Padding::kCausal && (!allow_causal || rank != 1)) {
      fail(ErrorCode::kUnsupported, "padding", "\"causal\" is only supported by 1-D convolutions");
    }
    if (w.padding != Padding::kValid && w.padding != Padding::kSame && w.padding != Padding::kCausal &&
        w.padding != Padding::kExplicit) {
      fail("padding", "unknown padding mode");
    }
    // Strides and dilations combine freely (ONNX and PyTorch allow it; the Keras loader refuses
    // the combination itself because Keras does): every engine indexes tap k of output o at
    // o * stride + k * dilation - pad_before.
    // Effective kernel size must stay in range.
    checked_add(checked_mul(w.kernel_h - 1, w.dilation_h, what("dilated kernel_size")), 1,
                what("dilated kernel_size"));
    checked_add(checked_mul(w.kernel_w - 1, w.dilation_w, what("dilated kernel_size")), 1,
                what("dilated kernel_size"));
    if (w.padding == Padding::kExplicit) {
      if (rank == 1 && (w.pad_top != 0 || w.pad_bottom != 0)) {
        fail("pads", "a 1-D layer has no vertical padding");
      }
      const int64_t keff_h = (w.kernel_h - 1) * w.dilation_h + 1;
      const int64_t keff_w = (w.kernel_w - 1) * w.dilation_w + 1;
      for (auto [pad, keff] : {std::pair{w.pad_top, keff_h}, {w.pad_bottom, keff_h},
                               {w.pad_left, keff_w}, {w.pad_right, keff_w}}) {
        if (pad < 0 || pad >= keff) {
          fail("pads", "padding " + num(pad) + " must be at least 0 and smaller than the dilated kernel (" +
                           num(keff) + ")");
        }
      }
    }
  }

  // Spatial output size of a forward window over {H, W} (rank 2) or {W} (rank 1, H = 1).
  std::pair<int64_t, int64_t> spatial_out(int rank, int64_t h, int64_t w, const Window& win) const {
    const AxisGeometry gh = window_h(win, h);
    const AxisGeometry gw = window_w(win, w);
    if (gh.out < 1 || gw.out < 1) {
      if (rank == 1) {
        fail("kernel_size", "input length " + num(w) + " is smaller than the dilated kernel " +
                                num(gw.kernel_eff));
      }
      fail("kernel_size", "input " + num(h) + "x" + num(w) + " is smaller than the dilated kernel " +
                              num(gh.kernel_eff) + "x" + num(gw.kernel_eff));
    }
    return {gh.out, gw.out};
  }

  Dims spatial_shape(int rank, int64_t oh, int64_t ow, int64_t c) const {
    return rank == 2 ? Dims{oh, ow, c} : Dims{ow, c};
  }

  // ---- layers -------------------------------------------------------------------------------

  Dims infer(DenseParams& p) {
    const Dims& s = single_input(0, "Dense");
    const int64_t in = s.back();
    check_positive("units", p.units);
    check_weights("kernel", p.kernel, {in, p.units});
    check_optional_bias("bias", p.bias, p.units);
    Dims out = s;
    out.back() = p.units;
    return out;
  }

  Dims infer(ConvParams& p) {
    check_rank_field(p.rank);
    const Dims& s = single_input(p.rank + 1, p.rank == 1 ? "Conv1D" : "Conv2D");
    const int64_t cin = s.back();
    check_positive("filters", p.filters);
    check_positive("groups", p.groups);
    if (cin % p.groups != 0) {
      fail("groups", "input channels " + num(cin) + " are not divisible by groups " + num(p.groups));
    }
    if (p.filters % p.groups != 0) {
      fail("groups", "filters " + num(p.filters) + " are not divisible by groups " + num(p.groups));
    }
    check_window(p.window, p.rank, /*allow_causal=*/true, /*allow_dilation=*/true);
    canonicalise_1d_kernel(p.rank, p.kernel);
    check_weights("kernel", p.kernel, {p.window.kernel_h, p.window.kernel_w, cin / p.groups, p.filters});
    check_optional_bias("bias", p.bias, p.filters);
    const int64_t h = p.rank == 2 ? s[0] : 1, w = s[p.rank - 1];
    auto [oh, ow] = spatial_out(p.rank, h, w, p.window);
    return spatial_shape(p.rank, oh, ow, p.filters);
  }

  Dims infer(DepthwiseConvParams& p) {
    check_rank_field(p.rank);
    const Dims& s = single_input(p.rank + 1, p.rank == 1 ? "DepthwiseConv1D" : "DepthwiseConv2D");
    const int64_t cin = s.back();
    check_positive("depth_multiplier", p.depth_multiplier);
    check_window(p.window, p.rank, true, true);
    canonicalise_1d_kernel(p.rank, p.kernel);
    check_weights("depthwise_kernel", p.kernel,
                  {p.window.kernel_h, p.window.kernel_w, cin, p.depth_multiplier});
    const int64_t cout = checked_mul(cin, p.depth_multiplier, what("output channels"));
    check_optional_bias("bias", p.bias, cout);
    const int64_t h = p.rank == 2 ? s[0] : 1, w = s[p.rank - 1];
    auto [oh, ow] = spatial_out(p.rank, h, w, p.window);
    return spatial_shape(p.rank, oh, ow, cout);
  }

  Dims infer(SeparableConvParams& p) {
    check_rank_field(p.rank);
    const Dims& s = single_input(p.rank + 1, p.rank == 1 ? "SeparableConv1D" : "SeparableConv2D");
    const int64_t cin = s.back();
    check_positive("filters", p.filters);
    check_positive("depth_multiplier", p.depth_multiplier);
    check_window(p.window, p.rank, true, true);
    canonicalise_1d_kernel(p.rank, p.depthwise_kernel);
    canonicalise_1d_kernel(p.rank, p.pointwise_kernel);
    check_weights("depthwise_kernel", p.depthwise_kernel,
                  {p.window.kernel_h, p.window.kernel_w, cin, p.depth_multiplier});
    const int64_t mid = checked_mul(cin, p.depth_multiplier, what("depthwise channels"));
    check_weights("pointwise_kernel", p.pointwise_kernel, {1, 1, mid, p.filters});
    check_optional_bias("bias", p.bias, p.filters);
    const int64_t h = p.rank == 2 ? s[0] : 1, w = s[p.rank - 1];
    auto [oh, ow] = spatial_out(p.rank, h, w, p.window);
    return spatial_shape(p.rank, oh, ow, p.filters);
  }

  Dims infer(ConvTransposeParams& p) {
    check_rank_field(p.rank);
    const Dims& s = single_input(p.rank + 1, p.rank == 1 ? "Conv1DTranspose" : "Conv2DTranspose");
    const int64_t cin = s.back();
    check_positive("filters", p.filters);
    check_window(p.window, p.rank, /*allow_causal=*/false, true);
    if (p.rank == 1 && p.output_padding_h > 0) fail("output_padding", "a 1-D layer has no height padding");
    for (int64_t op : {p.output_padding_h, p.output_padding_w}) {
      if (op < -1) fail("output_padding", "must be >= 0, got " + num(op));
    }
    if (p.output_padding_h >= p.window.stride_h || p.output_padding_w >= p.window.stride_w) {
      fail("output_padding", "must be smaller than the stride (Keras rule), got " +
                                 num(p.output_padding_h) + "x" + num(p.output_padding_w) +
                                 " with strides " + num(p.window.stride_h) + "x" + num(p.window.stride_w));
    }
    canonicalise_1d_kernel(p.rank, p.kernel);
    check_weights("kernel", p.kernel, {p.window.kernel_h, p.window.kernel_w, p.filters, cin});
    check_optional_bias("bias", p.bias, p.filters);
    const int64_t h = p.rank == 2 ? s[0] : 1, w = s[p.rank - 1];
    // Bound the arithmetic: in * stride and the kernel are each <= kMaxElements.
    checked_mul(h, p.window.stride_h, what("output size"));
    checked_mul(w, p.window.stride_w, what("output size"));
    const auto th = transpose_window_h(p.window, h, p.rank == 1 ? -1 : p.output_padding_h);
    const auto tw = transpose_window_w(p.window, w, p.output_padding_w);
    for (int64_t o : {th.out, tw.out}) {
      if (o < 1) fail("output_padding", "output length " + num(o) + " is not positive");
    }
    if (th.forward_out != h || tw.forward_out != w) {
      fail("output_padding", "output size " + num(th.out) + "x" + num(tw.out) +
                                 " is inconsistent with input " + num(h) + "x" + num(w) +
                                 " for this kernel, stride and padding (TensorFlow rejects it)");
    }
    return spatial_shape(p.rank, th.out, tw.out, p.filters);
  }

  Dims infer(BatchNormParams& p) {
    const Dims& s = single_input(0, "BatchNormalization");
    p.axis = resolve_axis("axis", p.keras_axis, s.size());
    const int64_t c = s[p.axis];
    check_weights("gamma", p.gamma, {c});
    check_weights("beta", p.beta, {c});
    check_weights("moving_mean", p.moving_mean, {c});
    check_weights("moving_variance", p.moving_variance, {c});
    if (!(p.epsilon >= 0) || !std::isfinite(p.epsilon)) fail("epsilon", "must be finite and >= 0");
    return s;
  }

  Dims infer(LayerNormParams& p) {
    const Dims& s = single_input(0, "LayerNormalization");
    if (p.keras_axes.empty()) fail("axis", "no axis given");
    p.axes.clear();
    for (int a : p.keras_axes) p.axes.push_back(resolve_axis("axis", a, s.size()));
    std::sort(p.axes.begin(), p.axes.end());
    if (std::adjacent_find(p.axes.begin(), p.axes.end()) != p.axes.end()) fail("axis", "duplicate axis");
    int64_t count = 1;
    for (int a : p.axes) count = checked_mul(count, s[a], what("axis"));
    for (auto [field, w] : {std::pair<const char*, const Weights*>{"gamma", &p.gamma}, {"beta", &p.beta}}) {
      if (w->shape.empty() && w->data.empty()) continue;
      check_data(field, *w);
      if (element_count(w->shape, what(field)) != count) {
        fail(field, "shape " + dims_to_string(w->shape) + " does not match the " + num(count) +
                        " normalised elements");
      }
    }
    if (!(p.epsilon >= 0) || !std::isfinite(p.epsilon)) fail("epsilon", "must be finite and >= 0");
    return s;
  }

  Dims infer(ActivationParams&) { return single_input(0, "Activation"); }

  Dims infer(ReluParams& p) {
    if (std::isnan(p.max_value) || p.max_value < 0) fail("max_value", "must be >= 0");
    if (!std::isfinite(p.negative_slope)) fail("negative_slope", "must be finite");
    if (!std::isfinite(p.threshold)) fail("threshold", "must be finite");
    return single_input(0, "ReLU");
  }

  Dims infer(EluParams& p) {
    if (!std::isfinite(p.alpha)) fail("alpha", "must be finite");
    return single_input(0, "ELU");
  }

  Dims infer(ThresholdedReluParams& p) {
    if (!std::isfinite(p.theta)) fail("theta", "must be finite");
    return single_input(0, "ThresholdedReLU");
  }

  Dims infer(PReluParams& p) {
    const Dims& s = single_input(0, "PReLU");
    check_data("alpha", p.alpha);
    bool ok = p.alpha.shape.size() == s.size();
    for (size_t i = 0; ok && i < s.size(); ++i) ok = p.alpha.shape[i] == s[i] || p.alpha.shape[i] == 1;
    if (!ok) {
      fail("alpha", "shape " + dims_to_string(p.alpha.shape) + " does not match the input " +
                        dims_to_string(s) + " (each dim equal, or 1 on a shared axis)");
    }
    return s;
  }

  Dims infer(SoftmaxParams& p) {
    const Dims& s = single_input(0, "Softmax");
    p.axis = resolve_axis("axis", p.keras_axis, s.size());
    return s;
  }

  Dims infer(PoolParams& p) {
    check_rank_field(p.rank);
    const Dims& s = single_input(p.rank + 1, p.rank == 1 ? "1-D pooling" : "2-D pooling");
    check_window(p.window, p.rank, /*allow_causal=*/false, /*allow_dilation=*/false);
    const int64_t h = p.rank == 2 ? s[0] : 1, w = s[p.rank - 1];
    auto [oh, ow] = spatial_out(p.rank, h, w, p.window);
    return spatial_shape(p.rank, oh, ow, s.back());
  }

  Dims infer(GlobalPoolParams& p) {
    check_rank_field(p.rank);
    const Dims& s = single_input(p.rank + 1, p.rank == 1 ? "1-D global pooling" : "2-D global pooling");
    if (!p.keepdims) return {s.back()};
    return p.rank == 2 ? Dims{1, 1, s.back()} : Dims{1, s.back()};
  }

  Dims infer(FlattenParams&) {
    const Dims& s = single_input(0, "Flatten");
    return {element_count(s, what("input shape"))};
  }

  Dims infer(ReshapeParams& p) {
    const Dims& s = single_input(0, "Reshape");
    const int64_t count = element_count(s, what("input shape"));
    if (p.target.empty()) fail("target_shape", "is empty");
    int unknown = -1;
    int64_t known = 1;
    for (size_t i = 0; i < p.target.size(); ++i) {
      const int64_t d = p.target[i];
      if (d == -1) {
        if (unknown >= 0) fail("target_shape", "more than one -1 in " + dims_to_string(p.target));
        unknown = static_cast<int>(i);
      } else if (d < 1) {
        fail("target_shape", "dimension " + num(d) + " in " + dims_to_string(p.target) + " is not positive");
      } else {
        known = checked_mul(known, d, what("target_shape"));
      }
    }
    Dims out = p.target;
    if (unknown >= 0) {
      if (count % known != 0) {
        fail("target_shape", dims_to_string(p.target) + " cannot hold the " + num(count) +
                                 " elements of input " + dims_to_string(s));
      }
      out[unknown] = count / known;
    } else if (known != count) {
      fail("target_shape", dims_to_string(p.target) + " has " + num(known) + " elements, the input " +
                               dims_to_string(s) + " has " + num(count));
    }
    return out;
  }

  Dims infer(PermuteParams& p) {
    const Dims& s = single_input(0, "Permute");
    if (p.dims.size() != s.size()) {
      fail("dims", "has " + std::to_string(p.dims.size()) + " entries for an input of rank " +
                       std::to_string(s.size()) + " (batch excluded)");
    }
    std::vector<bool> seen(s.size(), false);
    Dims out;
    for (int d : p.dims) {
      if (d < 1 || d > static_cast<int>(s.size()) || seen[d - 1]) {
        fail("dims", "is not a permutation of 1.." + std::to_string(s.size()));
      }
      seen[d - 1] = true;
      out.push_back(s[d - 1]);
    }
    return out;
  }

  Dims infer(RepeatVectorParams& p) {
    const Dims& s = single_input(1, "RepeatVector");
    check_positive("n", p.n);
    return {p.n, s[0]};
  }

  Dims infer(IdentityParams&) { return single_input(0, "this layer"); }

  Dims infer(ZeroPaddingParams& p) {
    check_rank_field(p.rank);
    const Dims& s = single_input(p.rank + 1, p.rank == 1 ? "ZeroPadding1D" : "ZeroPadding2D");
    for (int64_t v : {p.top, p.bottom, p.left, p.right}) check_nonnegative("padding", v);
    if (p.rank == 1) {
      if (p.top || p.bottom) fail("padding", "a 1-D layer has no top/bottom padding");
      return {checked_add(checked_add(s[0], p.left, what("padding")), p.right, what("padding")), s[1]};
    }
    return {checked_add(checked_add(s[0], p.top, what("padding")), p.bottom, what("padding")),
            checked_add(checked_add(s[1], p.left, what("padding")), p.right, what("padding")), s[2]};
  }

  Dims infer(ResizeParams& p) {
    check_rank_field(p.rank);
    const Dims& s = single_input(p.rank + 1, "Resize");
    check_positive("height", p.out_h);
    check_positive("width", p.out_w);
    for (double scale : {p.scale_h, p.scale_w}) {
      if (!(scale >= 0.0 && scale <= 1e9)) fail("scale", "must be 0 (output / input) or a positive finite factor");
    }
    if (p.interpolation != Interpolation::kNearest && p.interpolation != Interpolation::kBilinear) {
      fail("interpolation", "unknown interpolation");
    }
    if (static_cast<int>(p.coordinates) > static_cast<int>(ResizeCoordinates::kTfHalfPixelForNn)) {
      fail("coordinates", "unknown coordinate map");
    }
    if (static_cast<int>(p.rounding) > static_cast<int>(NearestRounding::kCeil)) fail("rounding", "unknown rounding");
    if (p.rank == 1) {
      if (p.out_h != 1) fail("height", "a 1-D resize has no height");
      checked_mul(p.out_w, s[1], what("width"));
      return {p.out_w, s[1]};
    }
    checked_mul(checked_mul(p.out_h, p.out_w, what("size")), s[2], what("size"));
    return {p.out_h, p.out_w, s[2]};
  }

  Dims infer(GatherParams& p) {
    const Dims& s = single_input(0, "Gather");
    if (p.axis < 0 || p.axis >= static_cast<int>(s.size())) {
      fail("axis", num(p.axis) + " is not a per-sample axis of an input of rank " + num(static_cast<int64_t>(s.size())));
    }
    if (p.indices.empty()) fail("indices", "is empty");
    const int64_t len = s[static_cast<size_t>(p.axis)];
    for (int64_t i : p.indices) {
      if (i < 0 || i >= len) fail("indices", "holds " + num(i) + ", outside [0, " + num(len) + ")");
    }
    Dims out = s;
    out[static_cast<size_t>(p.axis)] = static_cast<int64_t>(p.indices.size());
    int64_t size = 1;
    for (int64_t d : out) size = checked_mul(size, d, what("indices"));
    return out;
  }

  Dims infer(ArgMaxParams& p) {
    const Dims& s = single_input(0, "ArgMax");
    if (p.axis < 0 || p.axis >= static_cast<int>(s.size())) {
      fail("axis", num(p.axis) + " is not a per-sample axis of an input of rank " + num(static_cast<int64_t>(s.size())));
    }
    Dims out = s;
    out.erase(out.begin() + p.axis);
    if (p.keep_at > static_cast<int>(out.size())) {
      fail("keep_at", num(p.keep_at) + " is past the output's " + num(static_cast<int64_t>(out.size()) + 1) + " axes");
    }
    if (p.keep_at >= 0) out.insert(out.begin() + p.keep_at, 1);
    return out;
  }

  Dims infer(ConstantParams& p) {
    expect_inputs(1);
    if (p.value.shape.empty()) fail("value", "a constant needs a per-sample shape");
    int64_t size = 1;
    for (int64_t d : p.value.shape) {
      check_positive("value", d);
      size = checked_mul(size, d, what("value"));
    }
    if (size != static_cast<int64_t>(p.value.data.size())) {
      fail("value", "holds " + num(static_cast<int64_t>(p.value.data.size())) + " values for shape " + dims_to_string(p.value.shape));
    }
    return p.value.shape;
  }

  Dims infer(MatMulParams&) {
    expect_inputs(2);
    const Dims& a = in_[0];
    const Dims& b = in_[1];
    if (a.size() < 2 || a.size() != b.size()) {
      fail("inputs", "shapes " + dims_to_string(a) + " and " + dims_to_string(b) +
                         " are not two matrices (or stacks of them) of one rank");
    }
    const size_t r = a.size();
    if (a[r - 1] != b[r - 2]) {
      fail("inputs", "shapes " + dims_to_string(a) + " and " + dims_to_string(b) + " do not chain: " +
                         num(a[r - 1]) + " columns against " + num(b[r - 2]) + " rows");
    }
    Dims out(r);
    for (size_t i = 0; i + 2 < r; ++i) {
      if (a[i] != b[i] && a[i] != 1 && b[i] != 1) {
        fail("inputs", "the leading axes of " + dims_to_string(a) + " and " + dims_to_string(b) + " cannot be broadcast together");
      }
      out[i] = std::max(a[i], b[i]);
    }
    out[r - 2] = a[r - 2];
    out[r - 1] = b[r - 1];
    int64_t size = 1;
    for (int64_t d : out) size = checked_mul(size, d, what("inputs"));
    return out;
  }

  Dims infer(CroppingParams& p) {
    check_rank_field(p.rank);
    const Dims& s = single_input(p.rank + 1, p.rank == 1 ? "Cropping1D" : "Cropping2D");
    for (int64_t v : {p.top, p.bottom, p.left, p.right}) check_nonnegative("cropping", v);
    auto crop = [&](int64_t len, int64_t a, int64_t b, const char* axis) {
      if (a + b >= len) {
        fail("cropping", "removes " + num(a + b) + " of the " + num(len) + " elements along " + axis);
      }
      return len - a - b;
    };
    if (p.rank == 1) {
      if (p.top || p.bottom) fail("cropping", "a 1-D layer has no top/bottom cropping");
      return {crop(s[0], p.left, p.right, "the steps axis"), s[1]};
    }
    return {crop(s[0], p.top, p.bottom, "the height"), crop(s[1], p.left, p.right, "the width"), s[2]};
  }

  Dims infer(UpSamplingParams& p) {
    check_rank_field(p.rank);
    const Dims& s = single_input(p.rank + 1, p.rank == 1 ? "UpSampling1D" : "UpSampling2D");
    check_positive("size", p.size_h);
    check_positive("size", p.size_w);
    if (p.interpolation != Interpolation::kNearest && p.interpolation != Interpolation::kBilinear) {
      fail("interpolation", "unknown interpolation");
    }
    if (p.rank == 1) {
      if (p.size_h != 1) fail("size", "a 1-D layer has no height factor");
      if (p.interpolation != Interpolation::kNearest) fail(ErrorCode::kUnsupported, "interpolation", "UpSampling1D only repeats");
      return {checked_mul(s[0], p.size_w, what("size")), s[1]};
    }
    return {checked_mul(s[0], p.size_h, what("size")), checked_mul(s[1], p.size_w, what("size")), s[2]};
  }

  Dims infer(MergeParams& p) {
    if (in_.empty()) fail("inputs", "a merge layer needs at least one input");
    if (p.op == MergeOp::kSubtract) expect_inputs(2);
    // Right-aligned (NumPy) broadcasting; Keras expands lower-rank inputs at axis 1, which
    // prepends per-sample axes of size 1 and is the same thing.
    size_t rank = 0;
    for (const Dims& s : in_) {
      if (s.empty()) fail("inputs", "a merge input is a scalar per sample");
      rank = std::max(rank, s.size());
    }
    Dims out(rank, 1);
    for (const Dims& s : in_) {
      const size_t off = rank - s.size();
      for (size_t i = 0; i < s.size(); ++i) {
        int64_t& o = out[off + i];
        if (s[i] == o || s[i] == 1) continue;
        if (o == 1) {
          o = s[i];
          continue;
        }
        std::string shapes;
        for (const Dims& t : in_) shapes += (shapes.empty() ? "" : ", ") + dims_to_string(t);
        fail("inputs", "shapes " + shapes + " cannot be broadcast together");
      }
    }
    return out;
  }

  Dims infer(ConcatParams& p) {
    if (in_.empty()) fail("inputs", "Concatenate needs at least one input");
    const Dims& first = in_[0];
    if (first.empty()) fail("inputs", "a Concatenate input is a scalar per sample");
    p.axis = resolve_axis("axis", p.keras_axis, first.size());
    Dims out = first;
    for (size_t k = 1; k < in_.size(); ++k) {
      const Dims& s = in_[k];
      bool ok = s.size() == first.size();
      for (size_t i = 0; ok && i < s.size(); ++i) ok = static_cast<int>(i) == p.axis || s[i] == first[i];
      if (!ok) {
        fail("axis", "input " + std::to_string(k) + " has shape " + dims_to_string(s) +
                         ", which differs from " + dims_to_string(first) + " outside axis " +
                         std::to_string(p.keras_axis));
      }
      out[p.axis] = checked_add(out[p.axis], s[p.axis], what("axis"));
    }
    return out;
  }

  Dims infer(QuantizeParams& p) {
    const Dims& s = single_input(0, "Quantize");
    check_quant("output quantization", p.output);
    if (p.output.per_channel()) fail(ErrorCode::kUnsupported, "output quantization", "per-axis quantization of a computed tensor is not supported");
    if (p.output.type == quant::QuantType::kInt32) fail(ErrorCode::kUnsupported, "output quantization", "quantizing to int32 is not supported");
    return s;
  }

  Dims infer(DequantizeParams& p) {
    const Dims& s = single_input(0, "Dequantize");
    check_quant("input quantization", p.input);
    if (p.input.per_channel()) {
      if (p.input.axis >= static_cast<int>(s.size()) || s[static_cast<size_t>(p.input.axis)] != static_cast<int64_t>(p.input.channels())) {
        fail("input quantization", num(static_cast<int64_t>(p.input.channels())) + " scales along per-sample axis " + num(p.input.axis) +
                                       " of an input " + dims_to_string(s));
      }
    }
    return s;
  }

  Dims infer(QConvParams& p) {
    check_rank_field(p.rank);
    const Dims& s = single_input(p.rank + 1, "QConv");
    const int64_t cin = s.back();
    check_positive("filters", p.filters);
    check_positive("groups", p.groups);
    if (cin % p.groups != 0) fail("groups", "input channels " + num(cin) + " are not divisible by groups " + num(p.groups));
    if (p.filters % p.groups != 0) fail("groups", "filters " + num(p.filters) + " are not divisible by groups " + num(p.groups));
    check_window(p.window, p.rank, /*allow_causal=*/false, /*allow_dilation=*/true);
    check_integer_layer(p, {p.window.kernel_h, p.window.kernel_w, cin / p.groups, p.filters}, p.filters, 3);
    const int64_t h = p.rank == 2 ? s[0] : 1, w = s[p.rank - 1];
    auto [oh, ow] = spatial_out(p.rank, h, w, p.window);
    return spatial_shape(p.rank, oh, ow, p.filters);
  }

  Dims infer(QDenseParams& p) {
    const Dims& s = single_input(0, "QDense");
    check_positive("units", p.units);
    check_integer_layer(p, {s.back(), p.units}, p.units, 1);
    Dims out = s;
    out.back() = p.units;
    return out;
  }

  Dims infer(RecurrentParams& p) {
    check_positive("units", p.units);
    const int dirs = p.direction_count();
    const bool lstm = p.cell == RecurrentCell::kLstm;
    if (p.initial_state == RecurrentInitialState::kInputs) {
      expect_inputs(lstm ? 3 : 2);
    } else {
      expect_inputs(1);
    }
    const Dims& s = in_[0];
    if (s.size() != 2) {
      fail("input shape", "a recurrent layer needs {steps, features} per sample (batch excluded), got " +
                              dims_to_string(s));
    }
    const int64_t units = p.units, width = checked_mul(units, dirs, what("units"));
    for (size_t k = 1; k < in_.size(); ++k) {
      if (in_[k] != Dims{width}) {
        fail("initial state", "input " + std::to_string(k) + " has shape " + dims_to_string(in_[k]) +
                                  ", expected " + dims_to_string({width}));
      }
    }
    if (static_cast<int>(p.directions.size()) != dirs) {
      fail("directions", "holds weights for " + std::to_string(p.directions.size()) + " direction(s), expected " +
                             std::to_string(dirs));
    }
    if (p.cell != RecurrentCell::kLstm && p.output == RecurrentOutput::kLastCell) {
      fail("output", "only an LSTM has a cell state");
    }
    if (p.merge != RecurrentMerge::kConcat && dirs != 2) fail("merge", "only a bidirectional layer merges directions");
    const int64_t cols = checked_mul(units, p.gates(), what("units"));
    for (int d = 0; d < dirs; ++d) {
      const RecurrentWeights& w = p.directions[static_cast<size_t>(d)];
      const std::string tag = dirs == 2 ? (d == 0 ? " (forward)" : " (backward)") : "";
      check_weights("kernel" + tag, w.kernel, {s[1], cols});
      check_weights("recurrent_kernel" + tag, w.recurrent_kernel, {units, cols});
      check_optional_bias("bias" + tag, w.bias, cols);
      check_optional_bias("recurrent_bias" + tag, w.recurrent_bias, cols);
      if (p.initial_state == RecurrentInitialState::kConstant) {
        check_weights("initial_h" + tag, w.initial_h, {units});
        if (lstm) check_weights("initial_c" + tag, w.initial_c, {units});
      } else if (!w.initial_h.empty() || !w.initial_c.empty()) {
        fail("initial_h" + tag, "constant initial states are set but initial_state is not kConstant");
      }
    }
    if (p.output == RecurrentOutput::kSequence) return {s[0], p.output_width()};
    return {p.output_width()};
  }

  Graph& g_;
  Node& n_;
  std::string ctx_;
  std::vector<Dims> in_;
};

}  // namespace

void infer_shapes(Graph& g) {
  for (ValueId v : g.inputs) {
    Value& val = g.values[v];
    const std::string ctx = g.source + ": input '" + val.name + "'";
    if (val.shape.empty()) throw Error(ErrorCode::kFormat, ctx + ": shape: has no per-sample shape");
    for (int64_t d : val.shape) {
      if (d < 1) throw Error(ErrorCode::kFormat, ctx + ": shape: dimension " + std::to_string(d) + " in " +
                             dims_to_string(val.shape) + " is not positive");
    }
    element_count(val.shape, ctx + ": shape " + dims_to_string(val.shape));
  }
  for (Node& n : g.nodes) NodeInference(g, n).run();
}

void infer_node_shape(Graph& g, NodeId n) { NodeInference(g, g.nodes[static_cast<size_t>(n)]).run(); }

}  // namespace nnd
