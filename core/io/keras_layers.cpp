#include "core/io/keras_layers.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <map>
#include <optional>
#include <type_traits>
#include <set>
#include <stdexcept>

#include "core/util/checked_math.h"
#include "core/util/error.h"

namespace nnd::keras {
namespace {

std::string dump_short(const json& v) {
  std::string s = v.dump();
  if (s.size() > 80) s = s.substr(0, 77) + "...";
  return s;
}

// Typed, checked access to one layer's `config` object. Every failure names the field.
class Cfg {
 public:
  Cfg(const json& j, const LayerCtx& ctx) : j_(j), ctx_(ctx) {
    if (!j_.is_object()) ctx_.fail("config", "expected a JSON object, got " + dump_short(j_));
  }

  [[noreturn]] void fail(const std::string& key, const std::string& msg) const { ctx_.fail(key, msg); }
  [[noreturn]] void fail(ErrorCode code, const std::string& key, const std::string& msg) const {
    ctx_.fail(code, key, msg);
  }

  // The value at `key`, or null when absent or null.
  const json* get(const std::string& key) const {
    auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) return nullptr;
    return &*it;
  }
  bool has(const std::string& key) const { return get(key) != nullptr; }

  int64_t integer(const std::string& key, std::optional<int64_t> def = std::nullopt) const {
    const json* v = get(key);
    if (v == nullptr) {
      if (def) return *def;
      fail(key, "missing");
    }
    return as_int(*v, key);
  }

  int64_t as_int(const json& v, const std::string& key) const {
    if (v.is_number_integer()) return v.get<int64_t>();
    if (v.is_number_float()) {
      double d = v.get<double>();
      if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15) return static_cast<int64_t>(d);
    }
    fail(key, "expected an integer, got " + dump_short(v));
  }

  double number(const std::string& key, double def) const {
    const json* v = get(key);
    if (v == nullptr) return def;
    if (!v->is_number()) fail(key, "expected a number, got " + dump_short(*v));
    double d = v->get<double>();
    if (!std::isfinite(d)) fail(key, "must be finite, got " + dump_short(*v));
    return d;
  }

  bool boolean(const std::string& key, bool def) const {
    const json* v = get(key);
    if (v == nullptr) return def;
    if (!v->is_boolean()) fail(key, "expected true or false, got " + dump_short(*v));
    return v->get<bool>();
  }

  std::string str(const std::string& key, const std::string& def) const {
    const json* v = get(key);
    if (v == nullptr) return def;
    if (!v->is_string()) fail(key, "expected a string, got " + dump_short(*v));
    return v->get<std::string>();
  }

  // An int or a list of `n` ints (Keras normalises tuples but older files may hold a scalar).
  std::vector<int64_t> tuple(const std::string& key, size_t n,
                             std::optional<std::vector<int64_t>> def = std::nullopt) const {
    const json* v = get(key);
    if (v == nullptr) {
      if (def) return *def;
      fail(key, "missing");
    }
    if (v->is_number()) return std::vector<int64_t>(n, as_int(*v, key));
    if (!v->is_array() || v->size() != n) {
      fail(key, "expected an integer or a list of " + std::to_string(n) + " integers, got " +
                    dump_short(*v));
    }
    std::vector<int64_t> out;
    for (const json& e : *v) out.push_back(as_int(e, key));
    return out;
  }

  int64_t positive(const std::string& key, std::optional<int64_t> def = std::nullopt) const {
    int64_t v = integer(key, def);
    check_positive(key, v);
    return v;
  }

  void check_positive(const std::string& key, int64_t v) const {
    if (v < 1) fail(key, "must be >= 1, got " + std::to_string(v));
    if (v > kMaxElements) {
      fail(ErrorCode::kLimit, key, std::to_string(v) + " exceeds the limit of " + std::to_string(kMaxElements));
    }
  }

  void check_nonnegative(const std::string& key, int64_t v) const {
    if (v < 0) fail(key, "must be >= 0, got " + std::to_string(v));
    if (v > kMaxElements) {
      fail(ErrorCode::kLimit, key, std::to_string(v) + " exceeds the limit of " + std::to_string(kMaxElements));
    }
  }

  // data_format must be channels_last (null means Keras' default, channels_last).
  void channels_last() const {
    std::string f = str("data_format", "channels_last");
    if (f != "channels_last") {
      fail(ErrorCode::kUnsupported, "data_format", "'" + f + "' is not supported (only channels_last / NHWC)");
    }
  }

  // Only float32 layers: dtype absent, "float32", or a DTypePolicy/Policy object named float32.
  void float32_dtype() const {
    const json* v = get("dtype");
    if (v == nullptr) return;
    std::string name;
    if (v->is_string()) {
      name = v->get<std::string>();
    } else if (v->is_object()) {
      auto c = v->find("config");
      if (c != v->end() && c->is_object()) {
        auto n = c->find("name");
        if (n != c->end() && n->is_string()) name = n->get<std::string>();
      }
      if (name.empty()) fail("dtype", "unrecognised dtype policy " + dump_short(*v));
    } else {
      fail("dtype", "expected a string or a dtype policy, got " + dump_short(*v));
    }
    if (name != "float32") fail(ErrorCode::kUnsupported, "dtype", "'" + name + "' is not supported (only float32)");
  }

  // An optional feature that must be off: null, false, 0 or absent.
  void must_be_off(const std::string& key, const std::string& why) const {
    const json* v = get(key);
    if (v == nullptr) return;
    if ((v->is_boolean() && !v->get<bool>()) || (v->is_number() && v->get<double>() == 0)) return;
    fail(ErrorCode::kUnsupported, key, dump_short(*v) + " is not supported (" + why + ")");
  }

  const json& raw() const { return j_; }

 private:
  const json& j_;
  const LayerCtx& ctx_;
};

Padding parse_padding(const Cfg& c, bool allow_causal) {
  const json* v = c.get("padding");
  if (v == nullptr) return Padding::kValid;
  if (!v->is_string()) {
    c.fail("padding", "expected \"valid\" or \"same\", got " + dump_short(*v));
  }
  std::string p = v->get<std::string>();
  std::transform(p.begin(), p.end(), p.begin(), [](unsigned char ch) { return std::tolower(ch); });
  if (p == "valid") return Padding::kValid;
  if (p == "same") return Padding::kSame;
  if (p == "causal" && allow_causal) return Padding::kCausal;
  c.fail(ErrorCode::kUnsupported, "padding", "'" + v->get<std::string>() + "' is not supported (valid, same" +
                        std::string(allow_causal ? ", causal" : "") + ")");
}

// Kernel/strides/dilation of a convolution of `rank` 1 or 2.
Window conv_window(const Cfg& c, int rank, bool allow_causal) {
  Window w;
  size_t n = static_cast<size_t>(rank);
  std::vector<int64_t> k = c.tuple("kernel_size", n);
  std::vector<int64_t> s = c.tuple("strides", n, std::vector<int64_t>(n, 1));
  std::vector<int64_t> d = c.tuple("dilation_rate", n, std::vector<int64_t>(n, 1));
  for (int64_t v : k) c.check_positive("kernel_size", v);
  for (int64_t v : s) c.check_positive("strides", v);
  for (int64_t v : d) c.check_positive("dilation_rate", v);
  bool any_stride = std::any_of(s.begin(), s.end(), [](int64_t v) { return v > 1; });
  bool any_dil = std::any_of(d.begin(), d.end(), [](int64_t v) { return v > 1; });
  if (any_stride && any_dil) {
    c.fail(ErrorCode::kUnsupported, "dilation_rate", "dilation_rate > 1 together with strides > 1 is not supported (Keras "
                            "and TensorFlow reject it)");
  }
  if (rank == 2) {
    w.kernel_h = k[0], w.kernel_w = k[1];
    w.stride_h = s[0], w.stride_w = s[1];
    w.dilation_h = d[0], w.dilation_w = d[1];
  } else {
    w.kernel_w = k[0], w.stride_w = s[0], w.dilation_w = d[0];
  }
  w.padding = parse_padding(c, allow_causal);
  return w;
}

Window pool_window(const Cfg& c, int rank) {
  Window w;
  size_t n = static_cast<size_t>(rank);
  std::vector<int64_t> k = c.tuple("pool_size", n, std::vector<int64_t>(n, 2));
  std::vector<int64_t> s = c.tuple("strides", n, k);  // Keras: strides None -> pool_size
  for (int64_t v : k) c.check_positive("pool_size", v);
  for (int64_t v : s) c.check_positive("strides", v);
  if (rank == 2) {
    w.kernel_h = k[0], w.kernel_w = k[1], w.stride_h = s[0], w.stride_w = s[1];
  } else {
    w.kernel_w = k[0], w.stride_w = s[0];
  }
  w.padding = parse_padding(c, false);
  return w;
}

// A Keras axis written as an int or a one-element list.
int single_axis(const Cfg& c, const std::string& key, int def) {
  const json* v = c.get(key);
  if (v == nullptr) return def;
  const json* e = v;
  if (v->is_array()) {
    if (v->size() != 1) c.fail(ErrorCode::kUnsupported, key, "only a single axis is supported, got " + dump_short(*v));
    e = &(*v)[0];
  }
  int64_t a = c.as_int(*e, key);
  if (a < -64 || a > 64) c.fail(key, "axis " + std::to_string(a) + " is out of range");
  return static_cast<int>(a);
}

// (before, after) pairs of ZeroPadding / Cropping: int, [a, b] or [[t, b], [l, r]].
std::vector<std::pair<int64_t, int64_t>> pad_pairs(const Cfg& c, const std::string& key, int rank,
                                                   int64_t def) {
  std::vector<std::pair<int64_t, int64_t>> out(static_cast<size_t>(rank), {def, def});
  const json* v = c.get(key);
  if (v == nullptr) return out;
  auto bad = [&]() {
    c.fail(ErrorCode::kUnsupported, key, "unsupported form " + dump_short(*v));
  };
  if (v->is_number()) {
    int64_t p = c.as_int(*v, key);
    for (auto& pr : out) pr = {p, p};
  } else if (v->is_array()) {
    if (rank == 1) {
      if (v->size() != 2) bad();
      out[0] = {c.as_int((*v)[0], key), c.as_int((*v)[1], key)};
    } else {
      if (v->size() != 2) bad();
      for (size_t i = 0; i < 2; ++i) {
        const json& e = (*v)[i];
        if (e.is_number()) {
          int64_t p = c.as_int(e, key);
          out[i] = {p, p};
        } else if (e.is_array() && e.size() == 2) {
          out[i] = {c.as_int(e[0], key), c.as_int(e[1], key)};
        } else {
          bad();
        }
      }
    }
  } else {
    bad();
  }
  for (auto& pr : out) {
    c.check_nonnegative(key, pr.first);
    c.check_nonnegative(key, pr.second);
  }
  return out;
}

// TFOpLambda functions (the `function` config value, as Keras 2.4+ writes it) that are an
// element-wise activation.
const std::map<std::string, ActivationKind>& tf_unary_ops() {
  static const std::map<std::string, ActivationKind> m = {
      {"nn.relu", ActivationKind::kRelu},          {"nn.relu6", ActivationKind::kRelu6},
      {"math.sigmoid", ActivationKind::kSigmoid},  {"nn.sigmoid", ActivationKind::kSigmoid},
      {"sigmoid", ActivationKind::kSigmoid},       {"math.tanh", ActivationKind::kTanh},
      {"nn.tanh", ActivationKind::kTanh},          {"tanh", ActivationKind::kTanh},
      {"nn.elu", ActivationKind::kElu},            {"nn.selu", ActivationKind::kSelu},
      {"nn.softplus", ActivationKind::kSoftplus},  {"math.softplus", ActivationKind::kSoftplus},
      {"nn.softsign", ActivationKind::kSoftsign},  {"math.softsign", ActivationKind::kSoftsign},
      {"nn.silu", ActivationKind::kSwish},         {"nn.swish", ActivationKind::kSwish},
      {"math.exp", ActivationKind::kExponential},  {"exp", ActivationKind::kExponential},
      {"identity", ActivationKind::kLinear},
  };
  return m;
}

// kwargs of a TFOpLambda call that carry no meaning for inference.
bool harmless_kwarg(const std::string& k) { return k == "name"; }

MappedLayer map_tf_op_lambda(const Cfg& c, const json* kwargs, const LayerCtx& ctx) {
  std::string fn = c.str("function", "");
  if (fn.empty()) c.fail("function", "missing");
  MappedLayer m;
  // Remaining keyword arguments, with the ones a function understands removed below.
  std::map<std::string, json> kw;
  if (kwargs != nullptr && kwargs->is_object()) {
    for (auto it = kwargs->begin(); it != kwargs->end(); ++it) {
      if (!harmless_kwarg(it.key())) kw[it.key()] = it.value();
    }
  }
  auto take = [&](const std::string& k) -> std::optional<json> {
    auto it = kw.find(k);
    if (it == kw.end()) return std::nullopt;
    json v = it->second;
    kw.erase(it);
    if (v.is_null()) return std::nullopt;
    return v;
  };
  auto take_number = [&](const std::string& k, double def) {
    auto v = take(k);
    if (!v) return def;
    if (!v->is_number()) ctx.fail("function", "TFOpLambda '" + fn + "': argument '" + k +
                                                  "' must be a number, got " + dump_short(*v));
    return v->get<double>();
  };

  if (fn == "nn.softmax" || fn == "math.softmax" || fn == "nn.log_softmax" ||
      fn == "math.log_softmax") {
    bool log = fn.find("log_") != std::string::npos;
    std::optional<json> axis = take("axis");
    if (!axis) axis = take("dim");
    int a = -1;
    if (axis) {
      if (!axis->is_number_integer()) {
        ctx.fail(ErrorCode::kUnsupported, "function", "TFOpLambda '" + fn + "': axis " + dump_short(*axis) + " is not supported");
      }
      a = axis->get<int>();
    }
    if (a == -1) {
      m.params = ActivationParams{log ? ActivationKind::kLogSoftmax : ActivationKind::kSoftmax};
    } else if (!log) {
      SoftmaxParams sp;
      sp.keras_axis = a;
      m.params = sp;
    } else {
      ctx.fail(ErrorCode::kUnsupported, "function", "TFOpLambda '" + fn + "' over axis " + std::to_string(a) +
                               " is not supported (last axis only)");
    }
  } else if (fn == "nn.gelu" || fn == "math.gelu") {
    auto ap = take("approximate");
    bool approx = false;
    if (ap) {
      if (!ap->is_boolean()) ctx.fail("function", "TFOpLambda '" + fn + "': approximate must be a bool");
      approx = ap->get<bool>();
    }
    m.params = ActivationParams{approx ? ActivationKind::kGeluTanh : ActivationKind::kGeluErf};
  } else if (fn == "nn.leaky_relu") {
    ReluParams rp;
    rp.negative_slope = take_number("alpha", 0.2);
    m.params = rp;
  } else if (fn == "nn.silu" || fn == "nn.swish") {
    double beta = take_number("beta", 1.0);
    if (beta != 1.0) {
      ctx.fail(ErrorCode::kUnsupported, "function", "TFOpLambda '" + fn + "' with beta " + std::to_string(beta) +
                               " is not supported (beta = 1 only)");
    }
    m.params = ActivationParams{ActivationKind::kSwish};
  } else {
    auto it = tf_unary_ops().find(fn);
    if (it == tf_unary_ops().end()) {
      ctx.fail(ErrorCode::kUnsupported, "function", "TFOpLambda function '" + fn +
                               "' is not supported (only element-wise activations such as "
                               "nn.relu, math.sigmoid, math.tanh, nn.softmax)");
    }
    m.params = ActivationParams{it->second};
  }
  if (!kw.empty()) {
    ctx.fail(ErrorCode::kUnsupported, "function", "TFOpLambda '" + fn + "': argument '" + kw.begin()->first + "' = " +
                             dump_short(kw.begin()->second) + " is not supported");
  }
  return m;
}

WeightSpec ws(std::string role, std::vector<int64_t> dims, bool prepend_one = false,
              std::string alias = "") {
  WeightSpec w;
  w.role = std::move(role);
  w.dims = std::move(dims);
  w.prepend_one = prepend_one;
  w.alias = std::move(alias);
  return w;
}

void require_bias_flag(const Cfg& c, MappedLayer& m, int64_t n) {
  if (c.boolean("use_bias", true)) m.weights.push_back(ws("bias", {n}));
}

// A per-channel constant of a preprocessing layer: a number, or a list of one value per channel
// (Keras broadcasts it over the last axis).
std::vector<double> number_or_list(const Cfg& c, const std::string& key, double def) {
  const json* v = c.get(key);
  if (v == nullptr) return {def};
  std::vector<double> out;
  auto add = [&](const json& e) {
    if (!e.is_number() || !std::isfinite(e.get<double>())) {
      c.fail(key, "expected a finite number or a list of them, got " + dump_short(*v));
    }
    out.push_back(e.get<double>());
  };
  if (v->is_array()) {
    if (v->empty() || v->size() > static_cast<size_t>(kMaxElements)) c.fail(key, "expected a non-empty list");
    for (const json& e : *v) add(e);
  } else {
    add(*v);
  }
  return out;
}

// `values` (one, or one per channel) as a (channels) weight.
Weights per_channel(const std::vector<double>& values, int64_t channels, const LayerCtx& ctx,
                    const std::string& key) {
  if (values.size() != 1 && static_cast<int64_t>(values.size()) != channels) {
    ctx.fail(key, std::to_string(values.size()) + " values for " + std::to_string(channels) + " channels");
  }
  Weights w{{channels}, std::vector<float>(static_cast<size_t>(channels))};
  for (int64_t i = 0; i < channels; ++i) {
    w.data[static_cast<size_t>(i)] = static_cast<float>(values.size() == 1 ? values[0] : values[static_cast<size_t>(i)]);
  }
  return w;
}

// A BatchNormalization over the last axis computing gamma * (x - mean) / sqrt(variance) + beta
// exactly (epsilon 0): the IR form of the affine preprocessing layers.
BatchNormParams affine_batchnorm(Weights gamma, Weights beta, Weights mean, Weights variance) {
  BatchNormParams bn;
  bn.keras_axis = -1;
  bn.epsilon = 0.0;
  bn.gamma = std::move(gamma);
  bn.beta = std::move(beta);
  bn.moving_mean = std::move(mean);
  bn.moving_variance = std::move(variance);
  return bn;
}

// The single input shape of a preprocessing layer, which must be (H, W, C) when `image`.
const Dims& single_input(const std::vector<Dims>& in, const LayerCtx& ctx, bool image) {
  if (in.size() != 1 || in[0].empty()) ctx.fail("inputs", "expected one input of rank >= 1");
  if (image && in[0].size() != 3) {
    ctx.fail("inputs", "expected an image input (height, width, channels), got " + dims_to_string(in[0]));
  }
  return in[0];
}

// Rescaling, Normalization, CenterCrop and Resizing: computed as the IR layers they amount to.
// Returns false when `cls` is not one of them.
bool map_preprocessing(const std::string& cls, const Cfg& c, const LayerCtx& ctx, MappedLayer& m) {
  if (cls == "Rescaling") {
    // y = x * scale + offset
    const std::vector<double> scale = number_or_list(c, "scale", 1.0);
    const std::vector<double> offset = number_or_list(c, "offset", 0.0);
    m.params = BatchNormParams{};
    m.complete_from_shapes = [scale, offset, ctx](MappedLayer& mm, const std::vector<Dims>& in) {
      const int64_t ch = single_input(in, ctx, false).back();
      mm.params = affine_batchnorm(per_channel(scale, ch, ctx, "scale"), per_channel(offset, ch, ctx, "offset"),
                                   per_channel({0.0}, ch, ctx, "mean"), per_channel({1.0}, ch, ctx, "variance"));
    };
    return true;
  }
  if (cls == "Normalization") {
    // y = (x - mean) / max(sqrt(variance), 1e-7); invert: y = x * max(sqrt(variance), 1e-7) + mean.
    // The statistics are in the config (mean=, variance= given) or, for a layer fitted with
    // adapt(), weights: mean, variance and an integer sample count nnd does not need.
    const json* mean_cfg = c.get("mean");
    const json* variance_cfg = c.get("variance");
    const bool adapted = mean_cfg == nullptr || mean_cfg->is_null();
    if (adapted != (variance_cfg == nullptr || variance_cfg->is_null())) {
      c.fail(adapted ? "variance" : "mean", adapted ? "is given without mean" : "is given without variance");
    }
    // The axis kept (one statistic per entry): -1, or its non-negative index, checked to be the
    // last once the input rank is known.
    int64_t axis_index = -1;
    if (const json* axis = c.get("axis")) {
      const json* one = axis->is_array() && axis->size() == 1 ? &(*axis)[0] : axis;
      if (!one->is_number_integer()) c.fail(ErrorCode::kUnsupported, "axis", dump_short(*axis) + " is not supported (one axis: the last)");
      axis_index = one->get<int64_t>();
    }
    std::vector<double> mean, variance;
    if (adapted) {
      m.weights.push_back(ws("moving_mean", {}, false, "mean"));
      m.weights.push_back(ws("moving_variance", {}, false, "variance"));
      m.weights.push_back(ws("count", {}));
      m.weights.back().unused = true;
      m.bn_scale = m.bn_center = false;
    } else {
      mean = number_or_list(c, "mean", 0.0);
      variance = number_or_list(c, "variance", 1.0);
    }
    const bool invert = c.boolean("invert", false);
    m.params = BatchNormParams{};
    m.complete_from_shapes = [mean, variance, adapted, invert, axis_index, ctx](MappedLayer& mm,
                                                                                const std::vector<Dims>& in) {
      const Dims& s = single_input(in, ctx, false);
      const int64_t rank = static_cast<int64_t>(s.size()) + 1;  // with the batch axis, as Keras counts
      if (axis_index != -1 && axis_index != rank - 1) {
        ctx.fail(ErrorCode::kUnsupported, "axis", std::to_string(axis_index) + " is not supported (only the last axis, -1)");
      }
      const int64_t ch = s.back();
      std::vector<double> mu = mean, var = variance;
      if (adapted) {  // the weights attach_weights (or zero_weights) put in place
        const auto& bn = std::get<BatchNormParams>(mm.params);
        mu.assign(bn.moving_mean.data.begin(), bn.moving_mean.data.end());
        var.assign(bn.moving_variance.data.begin(), bn.moving_variance.data.end());
      }
      for (double v : var) {
        if (!(v >= 0)) ctx.fail("variance", "must be >= 0");
      }
      std::vector<double> sd;
      for (double v : var) sd.push_back(std::max(std::sqrt(v), 1e-7));
      if (invert) {
        mm.params = affine_batchnorm(per_channel(sd, ch, ctx, "variance"), per_channel(mu, ch, ctx, "mean"),
                                     per_channel({0.0}, ch, ctx, "mean"), per_channel({1.0}, ch, ctx, "variance"));
      } else {
        std::vector<double> sd2;
        for (double d : sd) sd2.push_back(d * d);
        mm.params = affine_batchnorm(per_channel({1.0}, ch, ctx, "variance"), per_channel({0.0}, ch, ctx, "mean"),
                                     per_channel(mu, ch, ctx, "mean"), per_channel(sd2, ch, ctx, "variance"));
      }
    };
    return true;
  }
  if (cls == "CenterCrop") {
    c.channels_last();
    const int64_t height = c.positive("height"), width = c.positive("width");
    m.params = CroppingParams{};
    m.complete_from_shapes = [height, width, ctx](MappedLayer& mm, const std::vector<Dims>& in) {
      const Dims& s = single_input(in, ctx, true);
      if (s[0] < height || s[1] < width) {
        ctx.fail("height", "the input " + dims_to_string(s) + " is smaller than the crop (" + std::to_string(height) +
                               ", " + std::to_string(width) + "); Keras then resizes, which nnd does not");
      }
      CroppingParams p;
      p.rank = 2;
      p.top = (s[0] - height) / 2, p.bottom = s[0] - height - p.top;
      p.left = (s[1] - width) / 2, p.right = s[1] - width - p.left;
      mm.params = p;
    };
    return true;
  }
  if (cls == "Resizing") {
    c.channels_last();
    const int64_t height = c.positive("height"), width = c.positive("width");
    const std::string interp = c.str("interpolation", "bilinear");
    Interpolation mode = Interpolation::kBilinear;
    if (interp == "nearest") mode = Interpolation::kNearest;
    else if (interp != "bilinear") c.fail(ErrorCode::kUnsupported, "interpolation", "'" + interp + "' is not supported (nearest, bilinear)");
    c.must_be_off("antialias", "antialiasing");
    const bool crop = c.boolean("crop_to_aspect_ratio", false) || c.boolean("pad_to_aspect_ratio", false);
    m.params = IdentityParams{};
    m.complete_from_shapes = [height, width, mode, crop, ctx](MappedLayer& mm, const std::vector<Dims>& in) {
      const Dims& s = single_input(in, ctx, true);
      if (crop && s[0] * width != s[1] * height) {
        ctx.fail(ErrorCode::kUnsupported, "crop_to_aspect_ratio", "changing the aspect ratio of " + dims_to_string(s) + " is not supported");
      }
      if (s[0] == height && s[1] == width) {
        mm.params = IdentityParams{};
        return;
      }
      if (height % s[0] != 0 || width % s[1] != 0) {
        // TensorFlow's tf.image.resize (Keras' TF backend): bilinear with half-pixel centres,
        // nearest at floor((x + 0.5) * in / out).
        ResizeParams r;
        r.rank = 2;
        r.out_h = height, r.out_w = width;
        r.interpolation = mode;
        r.coordinates = mode == Interpolation::kNearest ? ResizeCoordinates::kTfHalfPixelForNn : ResizeCoordinates::kHalfPixel;
        r.rounding = NearestRounding::kFloor;
        mm.params = r;
        return;
      }
      UpSamplingParams p;
      p.rank = 2;
      p.size_h = height / s[0], p.size_w = width / s[1];
      p.interpolation = mode;
      mm.params = p;
    };
    return true;
  }
  return false;
}

}  // namespace

Version version_from_string(const std::string& v) {
  return (!v.empty() && v[0] >= '3' && v[0] <= '9') ? Version::kKeras3 : Version::kKeras2;
}

void LayerCtx::fail(const std::string& field, const std::string& msg) const {
  fail(ErrorCode::kFormat, field, msg);
}

void LayerCtx::fail(ErrorCode code, const std::string& field, const std::string& msg) const {
  throw Error(code, prefix + ": " + field + ": " + msg);
}

std::string weight_role(const std::string& name) {
  std::string s = name;
  auto slash = s.find_last_of('/');
  if (slash != std::string::npos) s = s.substr(slash + 1);
  auto colon = s.find_last_of(':');
  if (colon != std::string::npos && colon + 1 < s.size() &&
      std::all_of(s.begin() + static_cast<std::ptrdiff_t>(colon) + 1, s.end(),
                  [](char ch) { return ch >= '0' && ch <= '9'; })) {
    s = s.substr(0, colon);
  }
  return s;
}

std::string weight_role(const std::string& name, const MappedLayer& m) {
  const std::string base = weight_role(name);
  std::set<std::string> sublayers;
  for (const WeightSpec& w : m.weights) {
    if (!w.sublayer.empty()) sublayers.insert(w.sublayer);
  }
  if (sublayers.empty()) return base;
  // The last component naming a sub-layer ("forward_lstm"), before the weight's own name.
  std::string found;
  for (size_t start = 0; start < name.size();) {
    const size_t slash = name.find('/', start);
    if (slash == std::string::npos) break;
    const std::string part = name.substr(start, slash - start);
    for (const std::string& s : sublayers) {
      if (part.rfind(s + "_", 0) == 0) found = s;
    }
    start = slash + 1;
  }
  return found.empty() ? base : found + "/" + base;
}

ActivationKind map_activation(const json& value, const LayerCtx& ctx, const std::string& field) {
  if (value.is_null()) return ActivationKind::kLinear;
  std::string name;
  if (value.is_string()) {
    name = value.get<std::string>();
  } else if (value.is_object()) {
    // Keras 3 may serialize a built-in activation function as
    // {"module": "keras.activations", "class_name": "function", "config": "relu", ...}.
    auto cfg = value.find("config");
    auto mod = value.find("module");
    auto cls = value.find("class_name");
    bool keras_fn = cfg != value.end() && cfg->is_string() && cls != value.end() &&
                    cls->is_string() && cls->get<std::string>() == "function" &&
                    (mod == value.end() ||
                     (mod->is_string() && mod->get<std::string>().rfind("keras", 0) == 0));
    if (!keras_fn) {
      ctx.fail(ErrorCode::kUnsupported, field, "activation object " + dump_short(value) +
                          " is not supported (use a built-in activation name, or a separate "
                          "activation layer)");
    }
    name = cfg->get<std::string>();
  } else {
    ctx.fail(field, "expected an activation name, got " + dump_short(value));
  }
  const bool k3 = ctx.version == Version::kKeras3;
  static const std::map<std::string, ActivationKind> common = {
      {"linear", ActivationKind::kLinear},
      {"relu", ActivationKind::kRelu},
      {"relu6", ActivationKind::kRelu6},
      {"leaky_relu", ActivationKind::kLeakyRelu},
      {"sigmoid", ActivationKind::kSigmoid},
      {"hard_silu", ActivationKind::kHardSwish},
      {"hard_swish", ActivationKind::kHardSwish},
      {"tanh", ActivationKind::kTanh},
      {"softmax", ActivationKind::kSoftmax},
      {"log_softmax", ActivationKind::kLogSoftmax},
      {"softsign", ActivationKind::kSoftsign},
      {"softplus", ActivationKind::kSoftplus},
      {"elu", ActivationKind::kElu},
      {"selu", ActivationKind::kSelu},
      {"swish", ActivationKind::kSwish},
      {"silu", ActivationKind::kSwish},
      // keras.activations.gelu(x, approximate=False) in tf.keras 2.x and in Keras 3: the string
      // "gelu" means the exact erf form in both.
      {"gelu", ActivationKind::kGeluErf},
      {"exponential", ActivationKind::kExponential},
      {"mish", ActivationKind::kMish},
  };
  if (name.empty() || name == "None") return ActivationKind::kLinear;
  if (name == "hard_sigmoid") return k3 ? ActivationKind::kHardSigmoidK3 : ActivationKind::kHardSigmoidK2;
  auto it = common.find(name);
  if (it == common.end()) {
    ctx.fail(ErrorCode::kUnsupported, field, "activation '" + name + "' is not supported");
  }
  return it->second;
}

namespace {
// ---------------------------------------------------------------------------------------------
// Recurrent layers: LSTM, GRU, SimpleRNN and the Bidirectional wrapper, onto one RecurrentParams.

bool is_recurrent_class(const std::string& cls) { return cls == "LSTM" || cls == "GRU" || cls == "SimpleRNN"; }

// What one recurrent layer's config says (a Bidirectional wrapper reads two of them).
struct RecurrentConfig {
  RecurrentCell cell = RecurrentCell::kLstm;
  int64_t units = 0;
  ActivationKind activation = ActivationKind::kTanh, recurrent_activation = ActivationKind::kSigmoid;
  bool use_bias = true, reset_after = true, go_backwards = false, return_sequences = false;
};

// `in_bidirectional`: the backward layer of a Bidirectional wrapper, which re-reverses its sequence.
RecurrentConfig read_recurrent(const std::string& cls, const Cfg& c, const LayerCtx& ctx, bool in_bidirectional) {
  c.float32_dtype();
  RecurrentConfig r;
  r.cell = cls == "LSTM" ? RecurrentCell::kLstm : cls == "GRU" ? RecurrentCell::kGru : RecurrentCell::kSimple;
  r.units = c.positive("units");
  c.must_be_off("stateful", "a stateful layer carries its state from one call to the next; nnd starts every "
                            "request from zero states: re-export with stateful=False");
  c.must_be_off("time_major", "time-major inputs; re-export with time_major=False");
  // return_state adds outputs 1.. (the states); output 0 is the same, and a model reading the
  // others is refused where it reads them. dropout, recurrent_dropout, unroll and implementation
  // change training or speed, not the result.
  const json* act = c.get("activation");
  r.activation = act == nullptr ? ActivationKind::kTanh : map_activation(*act, ctx, "activation");
  if (r.cell != RecurrentCell::kSimple) {
    const json* ra = c.get("recurrent_activation");
    r.recurrent_activation = ra == nullptr ? ActivationKind::kSigmoid : map_activation(*ra, ctx, "recurrent_activation");
  }
  r.use_bias = c.boolean("use_bias", true);
  r.reset_after = r.cell == RecurrentCell::kGru && c.boolean("reset_after", true);
  r.go_backwards = c.boolean("go_backwards", false);
  r.return_sequences = c.boolean("return_sequences", false);
  if (r.go_backwards && r.return_sequences && !in_bidirectional) {
    c.fail("go_backwards", "with return_sequences the output runs backward in time (step 0 holds the state after "
                           "the last input step); nnd does not reverse sequences: use Bidirectional, or "
                           "return_sequences=False");
  }
  return r;
}

// The weights of one direction: kernel (features, G * units), recurrent_kernel (units, G * units)
// and, with use_bias, bias (G * units), or (2, 3 * units) for a GRU with reset_after (input and
// recurrent bias rows). Keras 3 keeps them in the cell's variables.
void add_recurrent_weights(MappedLayer& m, const RecurrentConfig& r, const std::string& sublayer) {
  const int64_t gates = r.cell == RecurrentCell::kLstm ? 4 : r.cell == RecurrentCell::kGru ? 3 : 1;
  const int64_t cols = r.units * gates;  // Cfg::positive bounds units to 2^31
  const std::string prefix = sublayer.empty() ? "" : sublayer + "/";
  const std::string group = sublayer.empty() ? "cell/vars" : sublayer + "_layer/cell/vars";
  auto add = [&](const std::string& role, std::vector<int64_t> dims) {
    WeightSpec w = ws(prefix + role, std::move(dims));
    w.sublayer = sublayer;
    w.archive_group = group;
    m.weights.push_back(std::move(w));
  };
  add("kernel", {-1, cols});
  add("recurrent_kernel", {r.units, cols});
  if (r.use_bias) add("bias", r.reset_after ? std::vector<int64_t>{2, cols} : std::vector<int64_t>{cols});
}

RecurrentParams recurrent_params(const RecurrentConfig& r) {
  RecurrentParams p;
  p.cell = r.cell;
  p.units = r.units;
  p.activation = r.activation;
  p.recurrent_activation = r.recurrent_activation;
  p.reset_after = r.reset_after;
  p.output = r.return_sequences ? RecurrentOutput::kSequence : RecurrentOutput::kLastHidden;
  p.direction = r.go_backwards ? RecurrentDirection::kReverse : RecurrentDirection::kForward;
  p.directions.resize(1);
  return p;
}

MappedLayer map_recurrent(const std::string& cls, const Cfg& c, const LayerCtx& ctx) {
  const RecurrentConfig r = read_recurrent(cls, c, ctx, false);
  MappedLayer m;
  add_recurrent_weights(m, r, "");
  m.params = recurrent_params(r);
  return m;
}

// Bidirectional(layer, merge_mode, backward_layer): the wrapped layer runs forward, a copy (or the
// given backward_layer) backward; their outputs are joined by merge_mode.
MappedLayer map_bidirectional(const Cfg& c, const LayerCtx& ctx) {
  auto sub = [&](const std::string& key) -> std::pair<std::string, const json*> {
    const json* v = c.get(key);
    if (v == nullptr) return {"", nullptr};
    auto cls = v->is_object() ? v->find("class_name") : v->end();
    auto cfg = v->is_object() ? v->find("config") : v->end();
    if (cls == v->end() || !cls->is_string() || cfg == v->end() || !cfg->is_object()) {
      c.fail(key, "expected {\"class_name\": ..., \"config\": {...}}, got " + dump_short(*v));
    }
    if (!is_recurrent_class(cls->get<std::string>())) {
      c.fail(ErrorCode::kUnsupported, key, "wraps a " + cls->get<std::string>() + "; nnd reads Bidirectional LSTM, GRU and SimpleRNN");
    }
    return {cls->get<std::string>(), &*cfg};
  };
  const auto [fw_cls, fw_json] = sub("layer");
  if (fw_json == nullptr) c.fail("layer", "missing");
  const LayerCtx fw_ctx{ctx.prefix + ": layer", ctx.version};
  const RecurrentConfig fw = read_recurrent(fw_cls, Cfg(*fw_json, fw_ctx), fw_ctx, true);
  if (fw.go_backwards) c.fail(ErrorCode::kUnsupported, "layer", "the forward layer has go_backwards=True; nnd reads the usual forward layer");
  RecurrentConfig bw = fw;
  bw.go_backwards = true;
  if (const auto [bw_cls, bw_json] = sub("backward_layer"); bw_json != nullptr) {
    // Keras 3 always writes the backward copy; Keras 2 only a backward_layer given by the user.
    const LayerCtx bw_ctx{ctx.prefix + ": backward_layer", ctx.version};
    bw = read_recurrent(bw_cls, Cfg(*bw_json, bw_ctx), bw_ctx, true);
    if (bw_cls != fw_cls || bw.units != fw.units || bw.activation != fw.activation ||
        bw.recurrent_activation != fw.recurrent_activation || bw.use_bias != fw.use_bias ||
        bw.reset_after != fw.reset_after || bw.return_sequences != fw.return_sequences) {
      c.fail(ErrorCode::kUnsupported, "backward_layer", "differs from the forward layer in class, units, activations, use_bias, reset_after "
                               "or return_sequences; nnd reads two directions of one kind");
    }
    if (!bw.go_backwards) c.fail("backward_layer", "must have go_backwards=True (Keras requires it)");
  }
  RecurrentParams p = recurrent_params(fw);
  p.direction = RecurrentDirection::kBidirectional;
  p.directions.resize(2);
  const json* mode = c.get("merge_mode");
  const std::string merge = mode == nullptr ? "" : mode->is_string() ? mode->get<std::string>() : "?";
  static const std::map<std::string, RecurrentMerge> merges = {{"concat", RecurrentMerge::kConcat},
                                                               {"sum", RecurrentMerge::kSum},
                                                               {"mul", RecurrentMerge::kMultiply},
                                                               {"ave", RecurrentMerge::kAverage}};
  auto it = merges.find(merge);
  if (mode == nullptr) {
    c.fail(ErrorCode::kUnsupported, "merge_mode", "None returns the two directions as separate outputs; nnd reads 'concat', 'sum', "
                         "'mul' and 'ave'");
  }
  if (it == merges.end()) c.fail("merge_mode", dump_short(*mode) + " is not 'concat', 'sum', 'mul' or 'ave'");
  p.merge = it->second;
  MappedLayer m;
  add_recurrent_weights(m, fw, "forward");
  add_recurrent_weights(m, bw, "backward");
  m.params = std::move(p);
  return m;
}

// Maps one family of layer classes (`cls` tells its members apart) onto `m`; throws like map_layer.
using LayerMapper = void (*)(const std::string& cls, const Cfg& c, const json* call_kwargs, const LayerCtx& ctx,
                             MappedLayer& m);

ActivationKind layer_activation(const Cfg& c, const LayerCtx& ctx) {
  const json* v = c.get("activation");
  return v == nullptr ? ActivationKind::kLinear : map_activation(*v, ctx, "activation");
}

void map_dense(const std::string& /*cls*/, const Cfg& c, const json* /*call_kwargs*/,
               const LayerCtx& ctx, MappedLayer& m) {
  DenseParams p;
  p.units = c.positive("units");
  c.must_be_off("lora_rank", "LoRA adapters");
  c.must_be_off("quantization_config", "quantized layers");
  p.activation = layer_activation(c, ctx);
  m.weights.push_back(ws("kernel", {-1, p.units}));
  require_bias_flag(c, m, p.units);
  m.params = std::move(p);
}

void map_conv(const std::string& cls, const Cfg& c, const json* /*call_kwargs*/,
              const LayerCtx& ctx, MappedLayer& m) {
  const int rank = cls == "Conv1D" ? 1 : 2;
  c.channels_last();
  c.must_be_off("lora_rank", "LoRA adapters");
  ConvParams p;
  p.rank = rank;
  p.filters = c.positive("filters");
  p.groups = c.positive("groups", 1);
  if (p.filters % p.groups != 0) {
    c.fail("groups", std::to_string(p.groups) + " does not divide filters " + std::to_string(p.filters));
  }
  p.window = conv_window(c, rank, rank == 1);
  p.activation = layer_activation(c, ctx);
  std::vector<int64_t> kdims;
  if (rank == 2) kdims = {p.window.kernel_h, p.window.kernel_w, -1, p.filters};
  else kdims = {p.window.kernel_w, -1, p.filters};
  m.weights.push_back(ws("kernel", kdims, rank == 1));
  require_bias_flag(c, m, p.filters);
  m.params = std::move(p);
}

void map_depthwise_conv(const std::string& cls, const Cfg& c, const json* /*call_kwargs*/,
                        const LayerCtx& ctx, MappedLayer& m) {
  const int rank = cls == "DepthwiseConv1D" ? 1 : 2;
  c.channels_last();
  DepthwiseConvParams p;
  p.rank = rank;
  p.depth_multiplier = c.positive("depth_multiplier", 1);
  p.window = conv_window(c, rank, false);
  p.activation = layer_activation(c, ctx);
  std::vector<int64_t> kdims;
  if (rank == 2) kdims = {p.window.kernel_h, p.window.kernel_w, -1, p.depth_multiplier};
  else kdims = {p.window.kernel_w, -1, p.depth_multiplier};
  // Keras 2 names the variable depthwise_kernel, Keras 3 kernel.
  m.weights.push_back(ws("depthwise_kernel", kdims, rank == 1, "kernel"));
  require_bias_flag(c, m, -1);
  m.params = std::move(p);
}

void map_separable_conv(const std::string& cls, const Cfg& c, const json* /*call_kwargs*/,
                        const LayerCtx& ctx, MappedLayer& m) {
  const int rank = cls == "SeparableConv1D" ? 1 : 2;
  c.channels_last();
  SeparableConvParams p;
  p.rank = rank;
  p.filters = c.positive("filters");
  p.depth_multiplier = c.positive("depth_multiplier", 1);
  if (c.integer("groups", 1) != 1) c.fail("groups", "must be 1 for a separable convolution");
  p.window = conv_window(c, rank, rank == 1);
  p.activation = layer_activation(c, ctx);
  if (rank == 2) {
    m.weights.push_back(ws("depthwise_kernel", {p.window.kernel_h, p.window.kernel_w, -1, p.depth_multiplier}));
    m.weights.push_back(ws("pointwise_kernel", {1, 1, -1, p.filters}));
  } else {
    m.weights.push_back(ws("depthwise_kernel", {p.window.kernel_w, -1, p.depth_multiplier}, true));
    m.weights.push_back(ws("pointwise_kernel", {1, -1, p.filters}, true));
  }
  require_bias_flag(c, m, p.filters);
  m.params = std::move(p);
}

void map_conv_transpose(const std::string& cls, const Cfg& c, const json* /*call_kwargs*/,
                        const LayerCtx& ctx, MappedLayer& m) {
  const int rank = cls == "Conv1DTranspose" ? 1 : 2;
  c.channels_last();
  ConvTransposeParams p;
  p.rank = rank;
  p.filters = c.positive("filters");
  if (c.integer("groups", 1) != 1) c.fail("groups", "must be 1 for a transposed convolution");
  p.window = conv_window(c, rank, false);
  if (c.has("output_padding")) {
    std::vector<int64_t> op = c.tuple("output_padding", static_cast<size_t>(rank));
    std::vector<int64_t> st = rank == 2 ? std::vector<int64_t>{p.window.stride_h, p.window.stride_w}
                                        : std::vector<int64_t>{p.window.stride_w};
    for (size_t i = 0; i < op.size(); ++i) {
      c.check_nonnegative("output_padding", op[i]);
      if (op[i] >= st[i]) {
        c.fail("output_padding", "must be smaller than the stride (" + std::to_string(op[i]) +
                                     " >= " + std::to_string(st[i]) + ")");
      }
    }
    if (rank == 2) p.output_padding_h = op[0], p.output_padding_w = op[1];
    else p.output_padding_w = op[0];
  }
  p.activation = layer_activation(c, ctx);
  std::vector<int64_t> kdims;
  if (rank == 2) kdims = {p.window.kernel_h, p.window.kernel_w, p.filters, -1};
  else kdims = {p.window.kernel_w, p.filters, -1};
  m.weights.push_back(ws("kernel", kdims, rank == 1));
  require_bias_flag(c, m, p.filters);
  m.params = std::move(p);
}

void map_batch_norm(const std::string& /*cls*/, const Cfg& c, const json* /*call_kwargs*/,
                    const LayerCtx& /*ctx*/, MappedLayer& m) {
  BatchNormParams p;
  p.keras_axis = single_axis(c, "axis", -1);
  p.epsilon = c.number("epsilon", 1e-3);
  if (p.epsilon < 0) c.fail("epsilon", "must be >= 0");
  c.must_be_off("virtual_batch_size", "virtual batches");
  m.bn_center = c.boolean("center", true);
  m.bn_scale = c.boolean("scale", true);
  if (m.bn_scale) m.weights.push_back(ws("gamma", {-1}));
  if (m.bn_center) m.weights.push_back(ws("beta", {-1}));
  m.weights.push_back(ws("moving_mean", {-1}));
  m.weights.push_back(ws("moving_variance", {-1}));
  m.params = std::move(p);
}

void map_layer_norm(const std::string& /*cls*/, const Cfg& c, const json* /*call_kwargs*/,
                    const LayerCtx& /*ctx*/, MappedLayer& m) {
  LayerNormParams p;
  const json* ax = c.get("axis");
  if (ax == nullptr) {
    p.keras_axes = {-1};
  } else if (ax->is_array()) {
    if (ax->empty()) c.fail("axis", "empty axis list");
    for (const json& e : *ax) p.keras_axes.push_back(static_cast<int>(std::clamp<int64_t>(c.as_int(e, "axis"), -64, 64)));
  } else {
    p.keras_axes = {single_axis(c, "axis", -1)};
  }
  p.epsilon = c.number("epsilon", 1e-3);
  if (p.epsilon < 0) c.fail("epsilon", "must be >= 0");
  c.must_be_off("rms_scaling", "RMS scaling");
  bool center = c.boolean("center", true), scale = c.boolean("scale", true);
  if (scale) m.weights.push_back(ws("gamma", {}));
  if (center) m.weights.push_back(ws("beta", {}));
  m.params = std::move(p);
}

void map_activation_layer(const std::string& /*cls*/, const Cfg& c, const json* /*call_kwargs*/,
                          const LayerCtx& ctx, MappedLayer& m) {
  const json* v = c.get("activation");
  if (v == nullptr) c.fail("activation", "missing");
  m.params = ActivationParams{map_activation(*v, ctx, "activation")};
}

void map_relu(const std::string& /*cls*/, const Cfg& c, const json* /*call_kwargs*/,
              const LayerCtx& ctx, MappedLayer& m) {
  ReluParams p;
  const json* mv = c.get("max_value");
  if (mv != nullptr) {
    p.max_value = c.number("max_value", 0);
    if (p.max_value < 0) c.fail("max_value", "must be >= 0");
  }
  p.negative_slope = c.number("negative_slope", 0.0);
  if (p.negative_slope < 0) c.fail("negative_slope", "must be >= 0");
  p.threshold = c.number("threshold", 0.0);
  if (p.threshold < 0 && ctx.version == Version::kKeras2) c.fail("threshold", "must be >= 0");
  m.params = p;
}

void map_leaky_relu(const std::string& /*cls*/, const Cfg& c, const json* /*call_kwargs*/,
                    const LayerCtx& /*ctx*/, MappedLayer& m) {
  ReluParams p;
  // Keras 2 writes `alpha`, Keras 3 `negative_slope`; both default to 0.3.
  p.negative_slope = c.has("negative_slope") ? c.number("negative_slope", 0.3) : c.number("alpha", 0.3);
  m.params = p;
}

void map_prelu(const std::string& /*cls*/, const Cfg& c, const json* /*call_kwargs*/,
               const LayerCtx& /*ctx*/, MappedLayer& m) {
  const json* sa = c.get("shared_axes");
  if (sa != nullptr) {
    std::vector<int64_t> axes;
    if (sa->is_array()) {
      for (const json& e : *sa) axes.push_back(c.as_int(e, "shared_axes"));
    } else {
      axes.push_back(c.as_int(*sa, "shared_axes"));
    }
    for (int64_t a : axes) {
      if (a < 1 || a > 64) c.fail(ErrorCode::kUnsupported, "shared_axes", "axis " + std::to_string(a) + " is not supported");
      m.prelu_shared_axes.push_back(static_cast<int>(a));
    }
  }
  m.weights.push_back(ws("alpha", {}));
  m.params = PReluParams{};
}

void map_elu(const std::string& /*cls*/, const Cfg& c, const json* /*call_kwargs*/,
             const LayerCtx& /*ctx*/, MappedLayer& m) {
  m.params = EluParams{c.number("alpha", 1.0)};
}

void map_thresholded_relu(const std::string& /*cls*/, const Cfg& c, const json* /*call_kwargs*/,
                          const LayerCtx& /*ctx*/, MappedLayer& m) {
  m.params = ThresholdedReluParams{c.number("theta", 1.0)};
}

void map_softmax(const std::string& /*cls*/, const Cfg& c, const json* /*call_kwargs*/,
                 const LayerCtx& /*ctx*/, MappedLayer& m) {
  SoftmaxParams p;
  p.keras_axis = single_axis(c, "axis", -1);
  m.params = p;
}

void map_pool(const std::string& cls, const Cfg& c, const json* /*call_kwargs*/,
              const LayerCtx& /*ctx*/, MappedLayer& m) {
  c.channels_last();
  PoolParams p;
  p.kind = (cls.find("Max") != std::string::npos) ? PoolKind::kMax : PoolKind::kAverage;
  p.rank = cls.back() == '1' || cls.find("1D") != std::string::npos ? 1 : 2;
  p.window = pool_window(c, p.rank);
  m.params = p;
}

void map_global_pool(const std::string& cls, const Cfg& c, const json* /*call_kwargs*/,
                     const LayerCtx& /*ctx*/, MappedLayer& m) {
  c.channels_last();
  GlobalPoolParams p;
  p.kind = (cls.find("Max") != std::string::npos) ? PoolKind::kMax : PoolKind::kAverage;
  p.rank = cls.find("1D") != std::string::npos ? 1 : 2;
  p.keepdims = c.boolean("keepdims", false);
  m.params = p;
}

void map_flatten(const std::string& /*cls*/, const Cfg& c, const json* /*call_kwargs*/,
                 const LayerCtx& /*ctx*/, MappedLayer& m) {
  c.channels_last();
  m.params = FlattenParams{};
}

void map_reshape(const std::string& /*cls*/, const Cfg& c, const json* /*call_kwargs*/,
                 const LayerCtx& /*ctx*/, MappedLayer& m) {
  const json* t = c.get("target_shape");
  if (t == nullptr || !t->is_array()) c.fail("target_shape", "expected a list of integers");
  ReshapeParams p;
  int minus = 0;
  for (const json& e : *t) {
    int64_t d = e.is_null() ? -1 : c.as_int(e, "target_shape");
    if (d == -1) {
      if (++minus > 1) c.fail("target_shape", "more than one -1");
    } else {
      c.check_positive("target_shape", d);
    }
    p.target.push_back(d);
  }
  m.params = std::move(p);
}

void map_permute(const std::string& /*cls*/, const Cfg& c, const json* /*call_kwargs*/,
                 const LayerCtx& /*ctx*/, MappedLayer& m) {
  const json* d = c.get("dims");
  if (d == nullptr || !d->is_array()) c.fail("dims", "expected a list of integers");
  PermuteParams p;
  std::vector<bool> seen(d->size() + 1, false);
  for (const json& e : *d) {
    int64_t a = c.as_int(e, "dims");
    if (a < 1 || a > static_cast<int64_t>(d->size()) || seen[static_cast<size_t>(a)]) {
      c.fail("dims", dump_short(*d) + " is not a permutation of 1.." + std::to_string(d->size()));
    }
    seen[static_cast<size_t>(a)] = true;
    p.dims.push_back(static_cast<int>(a));
  }
  m.params = std::move(p);
}

void map_repeat_vector(const std::string& /*cls*/, const Cfg& c, const json* /*call_kwargs*/,
                       const LayerCtx& /*ctx*/, MappedLayer& m) {
  m.params = RepeatVectorParams{c.positive("n")};
}

void map_preprocessing_layer(const std::string& cls, const Cfg& c, const json* /*call_kwargs*/,
                             const LayerCtx& ctx, MappedLayer& m) {
  map_preprocessing(cls, c, ctx, m);  // Rescaling, Normalization, CenterCrop, Resizing: completed from the input shapes
}

void map_identity(const std::string& /*cls*/, const Cfg& /*c*/, const json* /*call_kwargs*/,
                  const LayerCtx& /*ctx*/, MappedLayer& m) {
  m.params = IdentityParams{};
}

void map_zero_padding(const std::string& cls, const Cfg& c, const json* /*call_kwargs*/,
                      const LayerCtx& /*ctx*/, MappedLayer& m) {
  const int rank = cls == "ZeroPadding1D" ? 1 : 2;
  if (rank == 2) c.channels_last();
  ZeroPaddingParams p;
  p.rank = rank;
  auto pr = pad_pairs(c, "padding", rank, 1);
  if (rank == 2) p.top = pr[0].first, p.bottom = pr[0].second, p.left = pr[1].first, p.right = pr[1].second;
  else p.left = pr[0].first, p.right = pr[0].second;
  m.params = p;
}

void map_cropping(const std::string& cls, const Cfg& c, const json* /*call_kwargs*/,
                  const LayerCtx& /*ctx*/, MappedLayer& m) {
  const int rank = cls == "Cropping1D" ? 1 : 2;
  if (rank == 2) c.channels_last();
  CroppingParams p;
  p.rank = rank;
  auto pr = pad_pairs(c, "cropping", rank, rank == 1 ? 1 : 0);
  if (rank == 2) p.top = pr[0].first, p.bottom = pr[0].second, p.left = pr[1].first, p.right = pr[1].second;
  else p.left = pr[0].first, p.right = pr[0].second;
  m.params = p;
}

void map_upsampling1d(const std::string& /*cls*/, const Cfg& c, const json* /*call_kwargs*/,
                      const LayerCtx& /*ctx*/, MappedLayer& m) {
  UpSamplingParams p;
  p.rank = 1;
  p.size_w = c.tuple("size", 1, std::vector<int64_t>{2})[0];
  c.check_positive("size", p.size_w);
  m.params = p;
}

void map_upsampling2d(const std::string& /*cls*/, const Cfg& c, const json* /*call_kwargs*/,
                      const LayerCtx& /*ctx*/, MappedLayer& m) {
  c.channels_last();
  UpSamplingParams p;
  p.rank = 2;
  auto s = c.tuple("size", 2, std::vector<int64_t>{2, 2});
  c.check_positive("size", s[0]);
  c.check_positive("size", s[1]);
  p.size_h = s[0], p.size_w = s[1];
  std::string interp = c.str("interpolation", "nearest");
  if (interp == "nearest") p.interpolation = Interpolation::kNearest;
  else if (interp == "bilinear") p.interpolation = Interpolation::kBilinear;
  else c.fail(ErrorCode::kUnsupported, "interpolation", "'" + interp + "' is not supported (nearest, bilinear)");
  m.params = p;
}

void map_merge(const std::string& cls, const Cfg& /*c*/, const json* /*call_kwargs*/,
               const LayerCtx& /*ctx*/, MappedLayer& m) {
  MergeParams p;
  p.op = cls == "Add"        ? MergeOp::kAdd
         : cls == "Subtract" ? MergeOp::kSubtract
         : cls == "Multiply" ? MergeOp::kMultiply
         : cls == "Average"  ? MergeOp::kAverage
         : cls == "Maximum"  ? MergeOp::kMaximum
                             : MergeOp::kMinimum;
  m.min_inputs = cls == "Subtract" ? 2 : 1;
  m.max_inputs = cls == "Subtract" ? 2 : 1 << 20;
  m.params = p;
}

void map_concatenate(const std::string& /*cls*/, const Cfg& c, const json* /*call_kwargs*/,
                     const LayerCtx& /*ctx*/, MappedLayer& m) {
  ConcatParams p;
  p.keras_axis = single_axis(c, "axis", -1);
  m.min_inputs = 1;
  m.max_inputs = 1 << 20;
  m.params = p;
}

void map_recurrent_layer(const std::string& cls, const Cfg& c, const json* /*call_kwargs*/,
                         const LayerCtx& ctx, MappedLayer& m) {
  m = map_recurrent(cls, c, ctx);
}

void map_bidirectional_layer(const std::string& /*cls*/, const Cfg& c, const json* /*call_kwargs*/,
                             const LayerCtx& ctx, MappedLayer& m) {
  m = map_bidirectional(c, ctx);
}

void map_tf_op_lambda_layer(const std::string& /*cls*/, const Cfg& c, const json* call_kwargs,
                            const LayerCtx& ctx, MappedLayer& m) {
  m = map_tf_op_lambda(c, call_kwargs, ctx);
}

void refuse_nested_model(const std::string& cls, const Cfg& c, const json* /*call_kwargs*/,
                         const LayerCtx& ctx, MappedLayer& /*m*/) {
  // The model builder inlines nested models before layers are mapped; one arriving here was not.
  ctx.fail("class_name", "nested model '" + c.str("name", "?") + "' (" + cls + ") was not inlined");
}

void refuse_masking(const std::string& /*cls*/, const Cfg& /*c*/, const json* /*call_kwargs*/,
                    const LayerCtx& ctx, MappedLayer& /*m*/) {
  ctx.fail(ErrorCode::kUnsupported, "class_name", "Masking is not supported (nnd does not propagate masks)");
}

void refuse_lambda(const std::string& /*cls*/, const Cfg& /*c*/, const json* /*call_kwargs*/,
                   const LayerCtx& ctx, MappedLayer& /*m*/) {
  ctx.fail(ErrorCode::kUnsupported, "class_name", "Lambda layers hold Python code and are not supported");
}

// Keras class name -> its mapper: every class nnd reads, and the known ones it refuses by name.
const std::map<std::string, LayerMapper>& layer_mappers() {
  static const std::map<std::string, LayerMapper> table = [] {
    std::map<std::string, LayerMapper> t;
    auto add = [&t](LayerMapper f, std::initializer_list<std::string> classes) {
      for (const std::string& cls : classes) {
        if (!t.emplace(cls, f).second) throw std::logic_error("Keras class '" + cls + "' has two mappers");
      }
    };
    add(map_dense, {"Dense"});
    add(map_conv, {"Conv1D", "Conv2D"});
    add(map_depthwise_conv, {"DepthwiseConv1D", "DepthwiseConv2D"});
    add(map_separable_conv, {"SeparableConv1D", "SeparableConv2D"});
    add(map_conv_transpose, {"Conv1DTranspose", "Conv2DTranspose", "Convolution2DTranspose", "Deconvolution2D"});
    add(map_batch_norm, {"BatchNormalization", "BatchNormalizationV1", "BatchNormalizationV2",
                         "SyncBatchNormalization"});
    add(map_layer_norm, {"LayerNormalization"});
    add(map_activation_layer, {"Activation"});
    add(map_relu, {"ReLU"});
    add(map_leaky_relu, {"LeakyReLU"});
    add(map_prelu, {"PReLU"});
    add(map_elu, {"ELU"});
    add(map_thresholded_relu, {"ThresholdedReLU"});
    add(map_softmax, {"Softmax"});
    add(map_pool, {"MaxPooling1D", "MaxPooling2D", "AveragePooling1D", "AveragePooling2D", "MaxPool1D", "MaxPool2D",
                   "AvgPool1D", "AvgPool2D"});
    add(map_global_pool, {"GlobalMaxPooling1D", "GlobalMaxPooling2D", "GlobalAveragePooling1D",
                          "GlobalAveragePooling2D", "GlobalMaxPool1D", "GlobalMaxPool2D", "GlobalAvgPool1D",
                          "GlobalAvgPool2D"});
    add(map_flatten, {"Flatten"});
    add(map_reshape, {"Reshape"});
    add(map_permute, {"Permute"});
    add(map_repeat_vector, {"RepeatVector"});
    add(map_preprocessing_layer, {"Rescaling", "Normalization", "CenterCrop", "Resizing"});
    // Identities at inference (augmentation layers return their input unchanged with training=False).
    add(map_identity, {"InputLayer", "Dropout", "SpatialDropout1D", "SpatialDropout2D", "SpatialDropout3D",
                       "GaussianNoise", "GaussianDropout", "AlphaDropout", "ActivityRegularization", "RandomFlip",
                       "RandomRotation", "RandomZoom", "RandomTranslation", "RandomContrast", "RandomBrightness"});
    add(map_zero_padding, {"ZeroPadding1D", "ZeroPadding2D"});
    add(map_cropping, {"Cropping1D", "Cropping2D"});
    add(map_upsampling1d, {"UpSampling1D"});
    add(map_upsampling2d, {"UpSampling2D"});
    add(map_merge, {"Add", "Subtract", "Multiply", "Average", "Maximum", "Minimum"});
    add(map_concatenate, {"Concatenate"});
    add(map_recurrent_layer, {"LSTM", "GRU", "SimpleRNN"});
    add(map_bidirectional_layer, {"Bidirectional"});
    add(map_tf_op_lambda_layer, {"TFOpLambda"});
    add(refuse_nested_model, {"Functional", "Model", "Sequential"});
    add(refuse_masking, {"Masking"});
    add(refuse_lambda, {"Lambda"});
    return t;
  }();
  return table;
}

}  // namespace

MappedLayer map_layer(const std::string& cls, const json& config, const json* call_kwargs,
                      const LayerCtx& ctx) {
  Cfg c(config, ctx);
  c.float32_dtype();
  MappedLayer m;
  const auto mapper = layer_mappers().find(cls);
  if (mapper == layer_mappers().end()) {
    ctx.fail(ErrorCode::kUnsupported, "class_name", "unknown or unsupported layer class '" + cls + "'");
  }
  mapper->second(cls, c, call_kwargs, ctx, m);
  return m;
}

namespace {

Weights* weight_field(LayerParams& p, const std::string& role) {
  return std::visit(
      [&](auto& q) -> Weights* {
        using T = std::decay_t<decltype(q)>;
        if constexpr (std::is_same_v<T, DenseParams> || std::is_same_v<T, ConvParams> ||
                      std::is_same_v<T, ConvTransposeParams>) {
          if (role == "kernel") return &q.kernel;
          if (role == "bias") return &q.bias;
        } else if constexpr (std::is_same_v<T, DepthwiseConvParams>) {
          if (role == "depthwise_kernel") return &q.kernel;
          if (role == "bias") return &q.bias;
        } else if constexpr (std::is_same_v<T, SeparableConvParams>) {
          if (role == "depthwise_kernel") return &q.depthwise_kernel;
          if (role == "pointwise_kernel") return &q.pointwise_kernel;
          if (role == "bias") return &q.bias;
        } else if constexpr (std::is_same_v<T, BatchNormParams>) {
          if (role == "gamma") return &q.gamma;
          if (role == "beta") return &q.beta;
          if (role == "moving_mean") return &q.moving_mean;
          if (role == "moving_variance") return &q.moving_variance;
        } else if constexpr (std::is_same_v<T, LayerNormParams>) {
          if (role == "gamma") return &q.gamma;
          if (role == "beta") return &q.beta;
        } else if constexpr (std::is_same_v<T, PReluParams>) {
          if (role == "alpha") return &q.alpha;
        } else if constexpr (std::is_same_v<T, RecurrentParams>) {
          // "kernel" (one direction) or "forward/kernel", "backward/kernel" (Bidirectional).
          size_t d = 0;
          std::string base = role;
          if (base.rfind("forward/", 0) == 0) {
            base = base.substr(8);
          } else if (base.rfind("backward/", 0) == 0) {
            base = base.substr(9);
            d = 1;
          }
          if (d >= q.directions.size()) return nullptr;
          RecurrentWeights& w = q.directions[d];
          if (base == "kernel") return &w.kernel;
          if (base == "recurrent_kernel") return &w.recurrent_kernel;
          if (base == "bias") return &w.bias;
        }
        return nullptr;
      },
      p);
}

std::string dims_str(const std::vector<int64_t>& d) {
  std::string s = "(";
  for (size_t i = 0; i < d.size(); ++i) {
    if (i) s += ", ";
    s += d[i] < 0 ? std::string("?") : std::to_string(d[i]);
  }
  if (d.size() == 1) s += ",";
  return s + ")";
}

// BatchNormalization without center/scale: the IR wants beta = 0 / gamma = 1 of the channel count.
void complete_batchnorm(MappedLayer& m) {
  auto* bn = std::get_if<BatchNormParams>(&m.params);
  if (bn == nullptr) return;
  const Weights& ref = bn->moving_mean;
  if (!m.bn_scale) bn->gamma = Weights{ref.shape, std::vector<float>(ref.data.size(), 1.0f)};
  if (!m.bn_center) bn->beta = Weights{ref.shape, std::vector<float>(ref.data.size(), 0.0f)};
}

// A GRU with reset_after keeps two bias rows in one (2, 3 * units) weight: the input bias, then the
// recurrent bias the IR holds apart (it sits inside the reset product).
void complete_recurrent(MappedLayer& m) {
  auto* p = std::get_if<RecurrentParams>(&m.params);
  if (p == nullptr) return;
  for (RecurrentWeights& w : p->directions) {
    if (w.bias.shape.size() != 2) continue;
    const int64_t cols = w.bias.shape[1];
    const auto half = w.bias.data.begin() + static_cast<std::ptrdiff_t>(cols);
    w.recurrent_bias = Weights{{cols}, std::vector<float>(half, w.bias.data.end())};
    w.bias = Weights{{cols}, std::vector<float>(w.bias.data.begin(), half)};
  }
}

}  // namespace

void attach_weights(MappedLayer& m, std::vector<std::pair<std::string, Weights>> weights,
                    const LayerCtx& ctx) {
  std::map<std::string, Weights*> found;
  for (auto& [file_role, w] : weights) {
    // clang 14 cannot capture a structured binding in a lambda: capture a plain reference.
    const std::string& fr = file_role;
    auto spec = std::find_if(m.weights.begin(), m.weights.end(), [&fr](const WeightSpec& s) {
      return s.role == fr || (!s.alias.empty() && s.alias == fr);
    });
    const std::string& role = spec == m.weights.end() ? file_role : spec->role;
    if (spec == m.weights.end()) {
      std::string expected;
      for (const WeightSpec& s : m.weights) expected += (expected.empty() ? "" : ", ") + s.role;
      ctx.fail(role, "unexpected weight '" + role + "' in the file (this layer's config expects " +
                         (expected.empty() ? std::string("no weights") : expected) + ")");
    }
    if (found.count(role)) ctx.fail(role, "weight '" + role + "' appears twice in weight_names");
    found[role] = &w;
    // An empty `dims` means "any shape" (LayerNormalization, PReLU: checked by shape inference).
    if (!spec->dims.empty()) {
      bool ok = w.shape.size() == spec->dims.size();
      for (size_t i = 0; ok && i < w.shape.size(); ++i) {
        ok = spec->dims[i] < 0 || spec->dims[i] == w.shape[i];
      }
      if (!ok) {
        ctx.fail(role, "weight shape " + dims_to_string(w.shape) + " does not match the shape " +
                           dims_str(spec->dims) + " the layer's config implies");
      }
    }
    if (spec->unused) continue;
    if (spec->prepend_one) w.shape.insert(w.shape.begin(), 1);
    Weights* target = weight_field(m.params, role);
    if (target == nullptr) ctx.fail(ErrorCode::kInternal, role, "internal error: no field for weight role");
    *target = std::move(w);
  }
  for (const WeightSpec& s : m.weights) {
    if (!found.count(s.role)) {
      ctx.fail(s.role, "weight '" + s.role + "' is missing from the file");
    }
  }
  // Per-channel BN statistics must agree with each other.
  if (auto* bn = std::get_if<BatchNormParams>(&m.params)) {
    for (const Weights* w : {&bn->gamma, &bn->beta, &bn->moving_variance}) {
      if (!w->empty() && w->shape != bn->moving_mean.shape) {
        ctx.fail("moving_mean", "BatchNormalization weights have different shapes: " +
                                    dims_to_string(w->shape) + " vs " + dims_to_string(bn->moving_mean.shape));
      }
    }
  }
  complete_batchnorm(m);
  complete_recurrent(m);
}

void zero_weights(MappedLayer& m, const std::vector<Dims>& in, const LayerCtx& ctx) {
  if (m.weights.empty()) return;
  if (in.size() != 1 || in[0].empty()) ctx.fail("inputs", "expected one input of rank >= 1");
  const Dims& s = in[0];
  const int64_t c = s.back();
  auto resolve = [&](int keras_axis, const std::string& field) -> size_t {
    const int64_t full = static_cast<int64_t>(s.size()) + 1;
    int64_t a = keras_axis < 0 ? keras_axis + full : keras_axis;
    if (a < 1 || a >= full) {
      ctx.fail(field, "axis " + std::to_string(keras_axis) + " is out of range for input " + dims_to_string(s));
    }
    return static_cast<size_t>(a - 1);
  };
  std::map<std::string, Dims> shapes;
  std::visit(
      [&](auto& q) {
        using T = std::decay_t<decltype(q)>;
        if constexpr (std::is_same_v<T, DenseParams>) {
          shapes["kernel"] = {c, q.units};
          shapes["bias"] = {q.units};
        } else if constexpr (std::is_same_v<T, ConvParams>) {
          if (c % q.groups != 0) {
            ctx.fail("groups", std::to_string(q.groups) + " does not divide the input channels " + std::to_string(c));
          }
          shapes["kernel"] = {q.window.kernel_h, q.window.kernel_w, c / q.groups, q.filters};
          shapes["bias"] = {q.filters};
        } else if constexpr (std::is_same_v<T, DepthwiseConvParams>) {
          shapes["depthwise_kernel"] = {q.window.kernel_h, q.window.kernel_w, c, q.depth_multiplier};
          shapes["bias"] = {checked_mul(c, q.depth_multiplier, ctx.prefix + ": depth_multiplier")};
        } else if constexpr (std::is_same_v<T, SeparableConvParams>) {
          shapes["depthwise_kernel"] = {q.window.kernel_h, q.window.kernel_w, c, q.depth_multiplier};
          shapes["pointwise_kernel"] = {1, 1, checked_mul(c, q.depth_multiplier, ctx.prefix + ": depth_multiplier"), q.filters};
          shapes["bias"] = {q.filters};
        } else if constexpr (std::is_same_v<T, ConvTransposeParams>) {
          shapes["kernel"] = {q.window.kernel_h, q.window.kernel_w, q.filters, c};
          shapes["bias"] = {q.filters};
        } else if constexpr (std::is_same_v<T, BatchNormParams>) {
          Dims ch = {s[resolve(q.keras_axis, "axis")]};
          for (const char* r : {"gamma", "beta", "moving_mean", "moving_variance"}) shapes[r] = ch;
        } else if constexpr (std::is_same_v<T, LayerNormParams>) {
          Dims d;
          std::vector<size_t> axes;
          for (int a : q.keras_axes) axes.push_back(resolve(a, "axis"));
          std::sort(axes.begin(), axes.end());
          for (size_t a : axes) d.push_back(s[a]);
          shapes["gamma"] = d;
          shapes["beta"] = d;
        } else if constexpr (std::is_same_v<T, PReluParams>) {
          Dims d = s;
          for (int a : m.prelu_shared_axes) {
            if (a < 1 || static_cast<size_t>(a) > s.size()) {
              ctx.fail("shared_axes", "axis " + std::to_string(a) + " is out of range for input " + dims_to_string(s));
            }
            d[static_cast<size_t>(a - 1)] = 1;
          }
          shapes["alpha"] = d;
        } else if constexpr (std::is_same_v<T, RecurrentParams>) {
          for (const WeightSpec& w : m.weights) {  // (features, .): the rest is in the config
            Dims d(w.dims.begin(), w.dims.end());
            if (!d.empty() && d[0] < 0) d[0] = c;
            shapes[w.role] = d;
          }
        }
      },
      m.params);
  for (const WeightSpec& spec : m.weights) {
    if (spec.unused) continue;
    auto it = shapes.find(spec.role);
    Weights* target = weight_field(m.params, spec.role);
    if (it == shapes.end() || target == nullptr) ctx.fail(ErrorCode::kInternal, spec.role, "internal error: no shape for weight");
    int64_t n = element_count(it->second, ctx.prefix + ": " + spec.role);
    target->shape = it->second;
    target->data.assign(static_cast<size_t>(n), 0.0f);
  }
  complete_batchnorm(m);
  complete_recurrent(m);
}

}  // namespace nnd::keras
