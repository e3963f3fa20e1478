// The IR's integer layers (Quantize, Dequantize, QConv, QDense) on the reference engine against
// hand-computed integers, and the checks shape inference makes on them: element types, the int32
// accumulator bound, parameters.
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "core/engine_factory/engine_factory.h"
#include "core/ir/quant/requantize.h"
#include "core/ir/shape_inference.h"
#include "core/util/error.h"
#include "tests/support/one_node_graph.h"

namespace nnd::test {
namespace {

using quant::QuantParams;
using quant::QuantType;

std::vector<float> run_u8(const Graph& g, const std::vector<uint8_t>& x, size_t out_size) {
  auto e = make_engine(g, EngineOptions{});
  std::vector<float> y(out_size);
  const InputView in{DType::kUInt8, x.data()};
  float* out = y.data();
  e->run(1, std::span<const InputView>(&in, 1), std::span<float* const>(&out, 1));
  return y;
}

// The worst case of docs/int8.md: x = 255 (zero point 0) and w = -128 in every position, a sum a
// 16-bit pair accumulator (pmaddubsw) would saturate and float32 would round (|acc| > 2^24).
TEST(QuantLayers, QDenseWorstCaseAccumulatorIsExact) {
  const int64_t k = 600;
  QDenseParams p;
  p.units = 2;
  p.input = QuantParams::per_tensor(QuantType::kUInt8, 1.0f, 0);
  p.weights = QuantParams::per_tensor(QuantType::kInt8, 1.0f, 0);
  p.kernel.shape = {k, 2};
  for (int64_t i = 0; i < k; ++i) {
    p.kernel.data.push_back(-128);
    p.kernel.data.push_back(i % 2 ? 127 : -128);
  }
  p.bias = {-7, 3};
  Graph g = one_node_graph(p, {{k}}, DType::kUInt8, {});
  infer_shapes(g);
  EXPECT_EQ(g.values[static_cast<size_t>(g.outputs[0])].dtype, DType::kInt32);
  const std::vector<float> y = run_u8(g, std::vector<uint8_t>(static_cast<size_t>(k), 255), 2);
  const int64_t acc0 = 255 * -128 * k - 7;                  // -19584007: not a float32 value
  const int64_t acc1 = 255 * (300 * 127 - 300 * 128) + 3;  // -76497
  // The graph output is served as float32 holding the integers; -19584007 rounds to float32 there
  // (the output conversion, not the accumulation: the requantized case below sees it exactly).
  EXPECT_EQ(y[0], static_cast<float>(acc0));
  EXPECT_EQ(y[1], static_cast<float>(acc1));

  // Requantized: the exact accumulator goes through quant::requantize.
  p.out.output = QuantParams::per_tensor(QuantType::kInt8, 40000.0f, 3);
  Graph q = one_node_graph(p, {{k}}, DType::kUInt8, {});
  infer_shapes(q);
  const std::vector<float> r = run_u8(q, std::vector<uint8_t>(static_cast<size_t>(k), 255), 2);
  const float m = quant::requant_multiplier(1.0f, 1.0f, 40000.0f, "t");
  EXPECT_EQ(r[0], quant::requantize(static_cast<int32_t>(acc0), m, 3, {-128, 127}));
  EXPECT_EQ(r[1], quant::requantize(static_cast<int32_t>(acc1), m, 3, {-128, 127}));
  EXPECT_EQ(r[0], -128.0f);  // -489.6 + 3 saturates
}

TEST(QuantLayers, QConvPaddingIsTheZeroPointAndActivationClamps) {
  // 1x3 input, 3-wide kernel of ones, same padding: the border products see x = x_zp (real 0).
  QConvParams p;
  p.rank = 1;
  p.filters = 1;
  p.window.kernel_w = 3;
  p.window.padding = Padding::kSame;
  p.input = QuantParams::per_tensor(QuantType::kUInt8, 0.5f, 100);
  p.weights = QuantParams::per_tensor(QuantType::kInt8, 1.0f, 0);
  p.kernel = {{1, 3, 1, 1}, {1, 1, 1}};
  p.out.output = QuantParams::per_tensor(QuantType::kUInt8, 0.5f, 100);
  p.out.act_lo = 0.0;  // fused Relu: nothing below the zero point
  Graph g = one_node_graph(p, {{3, 1}}, DType::kUInt8, {});
  infer_shapes(g);
  const std::vector<float> y = run_u8(g, {110, 90, 95}, 3);
  // acc: (10 - 10) = 0 -> 100; (10 - 10 - 5) = -5 -> clamped to 100; (-10 - 5) = -15 -> 100.
  EXPECT_EQ(y, (std::vector<float>{100, 100, 100}));
  const std::vector<float> y2 = run_u8(g, {120, 130, 101}, 3);
  // acc: 20 + 30 = 50 -> 150; 20 + 30 + 1 = 51 -> 151; 30 + 1 = 31 -> 131.
  EXPECT_EQ(y2, (std::vector<float>{150, 151, 131}));
}

TEST(QuantLayers, ShapeInferenceRefusesOverflowAndMixedTypes) {
  QDenseParams p;
  p.units = 1;
  p.input = QuantParams::per_tensor(QuantType::kUInt8, 1.0f, 0);
  p.weights = QuantParams::per_tensor(QuantType::kInt8, 1.0f, 0);
  const int64_t k = 65794;  // 255 * 128 * 65794 > 2^31 - 1
  p.kernel = {{k, 1}, std::vector<int32_t>(static_cast<size_t>(k), -128)};
  Graph g = one_node_graph(p, {{k}}, DType::kUInt8, {"m.onnx", "mm", "MatMulInteger"});
  try {
    infer_shapes(g);
    FAIL() << "an accumulator that can overflow was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("the int32 accumulator could overflow"), std::string::npos) << e.what();
  }
  // A float layer reading a quantized tensor, and an integer layer reading float32.
  Graph f = one_node_graph(ActivationParams{ActivationKind::kRelu}, {{4}}, DType::kUInt8, {});
  EXPECT_NO_THROW(infer_shapes(f));  // camera bytes from a graph input: allowed
  Graph d = one_node_graph(DequantizeParams{QuantParams::per_tensor(QuantType::kInt8, 1.0f, 0)}, {{4}}, DType::kFloat32, {});
  EXPECT_THROW(infer_shapes(d), Error);
  // A weight outside its type.
  QDenseParams w;
  w.units = 1;
  w.input = QuantParams::per_tensor(QuantType::kUInt8, 1.0f, 0);
  w.weights = QuantParams::per_tensor(QuantType::kInt8, 1.0f, 0);
  w.kernel = {{2, 1}, {5, 200}};
  Graph h = one_node_graph(w, {{2}}, DType::kUInt8, {});
  EXPECT_THROW(infer_shapes(h), Error);
}

TEST(QuantLayers, QuantizeDequantizeRoundTrip) {
  const QuantParams q = QuantParams::per_tensor(QuantType::kInt8, 0.25f, -3);
  Graph g = one_node_graph(QuantizeParams{q}, {{5}}, DType::kFloat32, {});
  infer_shapes(g);
  EXPECT_EQ(g.values[static_cast<size_t>(g.outputs[0])].dtype, DType::kInt8);
  auto e = make_engine(g, EngineOptions{});
  const std::vector<float> x = {0.125f, 0.375f, -100.0f, 100.0f, -0.125f};
  std::vector<float> y(5);
  const InputView in{DType::kFloat32, x.data()};
  float* out = y.data();
  e->run(1, std::span<const InputView>(&in, 1), std::span<float* const>(&out, 1));
  // 0.5 -> 0, 1.5 -> 2 (ties to even), saturation, -0.5 -> 0; zero point -3 added after rounding.
  EXPECT_EQ(y, (std::vector<float>{-3, -1, -128, 127, -3}));
}

}  // namespace
}  // namespace nnd::test
