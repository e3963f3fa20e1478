#include "core/ir/content_hash.h"

#include <cstring>
#include <string>
#include <vector>

#include "core/ir/dump.h"
#include "core/ir/layer_kind_traits.h"

namespace nnd {
namespace {

// FNV-1a over 64-bit words (weights are long; byte-wise FNV would cost 8x the multiplies), with
// the tail bytes folded in one at a time.
class Hasher {
 public:
  void bytes(const void* p, size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      uint64_t w = 0;
      std::memcpy(&w, b + i, 8);
      mix(w);
    }
    for (; i < n; ++i) mix(b[i]);
    mix(n);  // so that "ab"+"c" and "a"+"bc" differ
  }
  uint64_t value() const { return h_; }

 private:
  void mix(uint64_t w) {
    h_ ^= w;
    h_ *= 1099511628211ull;
  }
  uint64_t h_ = 1469598103934665603ull;
};

// The weight tensors of a layer, one overload per kind (layer_kind_traits.h): a new kind does not
// compile until it says what it holds.
struct WeightsOf {
  using List = std::vector<const Weights*>;
  List operator()(const DenseParams& p) const { return {&p.kernel, &p.bias}; }
  List operator()(const ConvParams& p) const { return {&p.kernel, &p.bias}; }
  List operator()(const DepthwiseConvParams& p) const { return {&p.kernel, &p.bias}; }
  List operator()(const SeparableConvParams& p) const { return {&p.depthwise_kernel, &p.pointwise_kernel, &p.bias}; }
  List operator()(const ConvTransposeParams& p) const { return {&p.kernel, &p.bias}; }
  List operator()(const BatchNormParams& p) const { return {&p.gamma, &p.beta, &p.moving_mean, &p.moving_variance}; }
  List operator()(const LayerNormParams& p) const { return {&p.gamma, &p.beta}; }
  List operator()(const PReluParams& p) const { return {&p.alpha}; }
  List operator()(const RecurrentParams& p) const {
    List l;
    for (const RecurrentWeights& w : p.directions) {
      for (const Weights* x : {&w.kernel, &w.recurrent_kernel, &w.bias, &w.recurrent_bias, &w.initial_h, &w.initial_c}) {
        l.push_back(x);
      }
    }
    return l;
  }
  // Kinds whose parameters are all scalars or index lists (the dump line carries them).
  List operator()(const ActivationParams&) const { return {}; }
  List operator()(const ReluParams&) const { return {}; }
  List operator()(const EluParams&) const { return {}; }
  List operator()(const ThresholdedReluParams&) const { return {}; }
  List operator()(const SoftmaxParams&) const { return {}; }
  List operator()(const PoolParams&) const { return {}; }
  List operator()(const GlobalPoolParams&) const { return {}; }
  List operator()(const FlattenParams&) const { return {}; }
  List operator()(const ReshapeParams&) const { return {}; }
  List operator()(const PermuteParams&) const { return {}; }
  List operator()(const RepeatVectorParams&) const { return {}; }
  List operator()(const IdentityParams&) const { return {}; }
  List operator()(const ZeroPaddingParams&) const { return {}; }
  List operator()(const CroppingParams&) const { return {}; }
  List operator()(const UpSamplingParams&) const { return {}; }
  List operator()(const MergeParams&) const { return {}; }
  List operator()(const ConcatParams&) const { return {}; }
  List operator()(const ResizeParams&) const { return {}; }
  List operator()(const GatherParams&) const { return {}; }
  List operator()(const ArgMaxParams&) const { return {}; }
  List operator()(const MatMulParams&) const { return {}; }
  List operator()(const ConstantParams& p) const { return {&p.value}; }
  // Quantized kinds: no float weights; their integers and quantization parameters are hashed by
  // IntegerContent below.
  List operator()(const QuantizeParams&) const { return {}; }
  List operator()(const DequantizeParams&) const { return {}; }
  List operator()(const QConvParams&) const { return {}; }
  List operator()(const QDenseParams&) const { return {}; }
};

// Every bit of a quantized node's parameters (the dump line rounds scales to 9 digits and
// summarises per-channel lists).
void hash_quant(Hasher& h, const quant::QuantParams& q) {
  h.bytes(&q.type, sizeof q.type);
  h.bytes(&q.axis, sizeof q.axis);
  h.bytes(q.scales.data(), q.scales.size() * sizeof(float));
  h.bytes(q.zero_points.data(), q.zero_points.size() * sizeof(int32_t));
}

template <class P>
void hash_integer_layer(Hasher& h, const P& p) {
  hash_quant(h, p.input);
  hash_quant(h, p.weights);
  hash_quant(h, p.out.output);
  h.bytes(&p.out.act_lo, sizeof p.out.act_lo);
  h.bytes(&p.out.act_hi, sizeof p.out.act_hi);
  h.bytes(p.kernel.shape.data(), p.kernel.shape.size() * sizeof(int64_t));
  h.bytes(p.kernel.data.data(), p.kernel.data.size() * sizeof(int32_t));
  h.bytes(p.bias.data(), p.bias.size() * sizeof(int32_t));
}

void hash_integer_content(Hasher& h, const LayerParams& params) {
  if (const auto* q = std::get_if<QuantizeParams>(&params)) hash_quant(h, q->output);
  if (const auto* d = std::get_if<DequantizeParams>(&params)) hash_quant(h, d->input);
  if (const auto* c = std::get_if<QConvParams>(&params)) hash_integer_layer(h, *c);
  if (const auto* m = std::get_if<QDenseParams>(&params)) hash_integer_layer(h, *m);
}

}  // namespace

uint64_t graph_content_hash(const Graph& g) {
  Hasher h;
  // The dump without its first line, which names the source file.
  const std::string dump = dump_graph(g);
  const size_t body = dump.find('\n');
  if (body != std::string::npos) h.bytes(dump.data() + body + 1, dump.size() - body - 1);
  for (const Node& n : g.nodes) {
    for (const Weights* w : visit_layer(WeightsOf{}, n.params)) {
      h.bytes(w->shape.data(), w->shape.size() * sizeof(int64_t));
      h.bytes(w->data.data(), w->data.size() * sizeof(float));
    }
    hash_integer_content(h, n.params);
  }
  return h.value();
}

}  // namespace nnd
