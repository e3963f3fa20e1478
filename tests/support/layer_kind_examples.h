// One small one-node graph of every IR layer kind, with what the per-kind traits must say about it.
// Tests check the table is complete (one example per LayerParams alternative, counted against
// std::variant_size), so a new kind fails them until it has an example here.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/ir/graph.h"
#include "core/ir/layers.h"
#include "core/ir/shape_inference.h"
#include "tests/support/one_node_graph.h"

namespace nnd::test {

struct LayerKindExample {
  LayerParams params;
  std::vector<Dims> inputs;    // per-sample input shapes
  bool arithmetic = true;      // FLOPs > 0 (false: pure data movement, FLOPs == 0)
  int64_t parameters = 0;      // parameter_count of the node
  bool has_dump_text = true;   // describe_params says something (Flatten and Identity have nothing)
  DType input_dtype = DType::kFloat32;  // of the graph inputs (uint8 for the integer kinds)
  bool jit_refuses = false;    // int8 kinds: reference-only in this build (docs/int8.md)
};

// Integer weights in [-128, 127], not all equal.
inline IntWeights example_int_weights(Dims shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  IntWeights w{std::move(shape), {}};
  for (int64_t i = 0; i < n; ++i) w.data.push_back(static_cast<int32_t>((i * 37) % 255) - 127);
  return w;
}

// Deterministic weights, away from zero and not all equal.
inline Weights example_weights(Dims shape, float offset = 0.0f) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  Weights w{std::move(shape), {}};
  for (int64_t i = 0; i < n; ++i) w.data.push_back(offset + 0.1f + 0.05f * static_cast<float>((i * 7) % 11) - 0.25f);
  return w;
}

inline Window square_window(int64_t k, int64_t stride, Padding padding) {
  Window w;
  w.kernel_h = w.kernel_w = k;
  w.stride_h = w.stride_w = stride;
  w.padding = padding;
  return w;
}

inline std::vector<LayerKindExample> layer_kind_examples() {
  std::vector<LayerKindExample> e;
  {
    DenseParams p;
    p.units = 3;
    p.kernel = example_weights({4, 3});
    p.bias = example_weights({3});
    e.push_back({p, {{4}}, true, 15});
  }
  {
    ConvParams p;
    p.filters = 2;
    p.window = square_window(3, 1, Padding::kSame);
    p.kernel = example_weights({3, 3, 2, 2});
    p.bias = example_weights({2});
    e.push_back({p, {{5, 5, 2}}, true, 38});
  }
  {
    DepthwiseConvParams p;
    p.window = square_window(3, 1, Padding::kValid);
    p.kernel = example_weights({3, 3, 2, 1});
    p.bias = example_weights({2});
    e.push_back({p, {{5, 5, 2}}, true, 20});
  }
  {
    SeparableConvParams p;
    p.filters = 3;
    p.window = square_window(3, 1, Padding::kSame);
    p.depthwise_kernel = example_weights({3, 3, 2, 1});
    p.pointwise_kernel = example_weights({1, 1, 2, 3});
    p.bias = example_weights({3});
    e.push_back({p, {{5, 5, 2}}, true, 27});
  }
  {
    ConvTransposeParams p;
    p.filters = 2;
    p.window = square_window(2, 2, Padding::kValid);
    p.kernel = example_weights({2, 2, 2, 2});
    p.bias = example_weights({2});
    e.push_back({p, {{3, 3, 2}}, true, 18});
  }
  {
    BatchNormParams p;
    p.gamma = example_weights({2}, 1.0f);
    p.beta = example_weights({2});
    p.moving_mean = example_weights({2});
    p.moving_variance = example_weights({2}, 1.0f);
    e.push_back({p, {{3, 3, 2}}, true, 8});
  }
  {
    LayerNormParams p;
    p.keras_axes = {-1};
    p.gamma = example_weights({4}, 1.0f);
    p.beta = example_weights({4});
    e.push_back({p, {{3, 4}}, true, 8});
  }
  e.push_back({ActivationParams{ActivationKind::kSigmoid}, {{6}}});
  e.push_back({ReluParams{}, {{6}}});
  e.push_back({EluParams{}, {{6}}});
  e.push_back({ThresholdedReluParams{0.05}, {{6}}});
  {
    PReluParams p;
    p.alpha = example_weights({6});
    e.push_back({p, {{6}}, true, 6});
  }
  e.push_back({SoftmaxParams{}, {{6}}});
  {
    PoolParams p;
    p.window = square_window(2, 2, Padding::kValid);
    e.push_back({p, {{4, 4, 2}}});
  }
  e.push_back({GlobalPoolParams{PoolKind::kAverage}, {{4, 4, 2}}});
  e.push_back({FlattenParams{}, {{2, 3}}, false, 0, false});
  e.push_back({ReshapeParams{{3, 2}}, {{2, 3}}, false});
  e.push_back({PermuteParams{{2, 1}}, {{2, 3}}, false});
  e.push_back({RepeatVectorParams{3}, {{4}}, false});
  e.push_back({IdentityParams{}, {{6}}, false, 0, false});
  {
    ZeroPaddingParams p;
    p.top = p.bottom = p.left = p.right = 1;
    e.push_back({p, {{3, 3, 2}}, false});
  }
  {
    CroppingParams p;
    p.top = p.left = 1;
    e.push_back({p, {{4, 4, 2}}, false});
  }
  {
    UpSamplingParams p;  // nearest: a copy
    p.size_h = p.size_w = 2;
    e.push_back({p, {{2, 2, 2}}, false});
  }
  e.push_back({MergeParams{MergeOp::kAdd}, {{6}, {6}}});
  e.push_back({ConcatParams{}, {{2, 3}, {2, 2}}, false});
  {
    RecurrentParams p;
    p.cell = RecurrentCell::kSimple;
    p.units = 2;
    RecurrentWeights w;
    w.kernel = example_weights({3, 2});
    w.recurrent_kernel = example_weights({2, 2});
    w.bias = example_weights({2});
    p.directions.push_back(w);
    e.push_back({p, {{4, 3}}, true, 12});
  }
  {
    ResizeParams p;  // bilinear: interpolates
    p.out_h = p.out_w = 3;
    p.interpolation = Interpolation::kBilinear;
    e.push_back({p, {{2, 2, 2}}});
  }
  {
    GatherParams p;
    p.axis = 0;
    p.indices = {2, 0, 1};
    e.push_back({p, {{3, 2}}, false});
  }
  {
    ArgMaxParams p;
    p.axis = 1;
    e.push_back({p, {{3, 5}}});
  }
  // Two stacks of matrices, the second's leading axis broadcast.
  e.push_back({MatMulParams{}, {{2, 3, 4}, {1, 4, 5}}, true, 0, false});
  e.push_back({ConstantParams{example_weights({2, 3})}, {{4}}, false, 6});
  const auto u8 = quant::QuantParams::per_tensor(quant::QuantType::kUInt8, 0.1f, 128);
  e.push_back({QuantizeParams{u8}, {{4, 3}}, true, 0, true, DType::kFloat32, true});
  e.push_back({DequantizeParams{u8}, {{4, 3}}, true, 0, true, DType::kUInt8, true});
  {
    QConvParams p;
    p.filters = 3;
    p.window = square_window(3, 1, Padding::kSame);
    p.input = u8;
    p.weights = quant::QuantParams{quant::QuantType::kInt8, {0.01f, 0.02f, 0.005f}, {0, 0, 0}, 3};
    p.kernel = example_int_weights({3, 3, 2, 3});
    p.bias = {100, -50, 7};
    p.out.output = quant::QuantParams::per_tensor(quant::QuantType::kUInt8, 0.3f, 10);
    p.out.act_lo = 0.0;
    e.push_back({p, {{5, 5, 2}}, true, 57, true, DType::kUInt8, true});
  }
  {
    QDenseParams p;  // MatMulInteger: the int32 accumulator
    p.units = 3;
    p.input = u8;
    p.weights = quant::QuantParams::per_tensor(quant::QuantType::kInt8, 1.0f, 0);
    p.kernel = example_int_weights({4, 3});
    e.push_back({p, {{4}}, true, 12, true, DType::kUInt8, true});
  }
  return e;
}

// The example as a graph: inputs in0, in1, ... feeding one node; shapes inferred.
inline Graph layer_kind_graph(const LayerKindExample& x) {
  const std::string kind = layer_kind_name(x.params);
  std::string source = "example-";
  source += kind;
  Graph g = one_node_graph(x.params, x.inputs, x.input_dtype, {source, "layer", kind});
  infer_shapes(g);
  return g;
}

}  // namespace nnd::test
