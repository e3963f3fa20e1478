// core/ir/quant: the integer arithmetic every engine follows (docs/int8.md). Worst cases: rounding
// ties, float32 rounding that decides a tie, saturation at both ends, accumulators at the int32
// edge, per-channel multipliers.
#include <cmath>
#include <cstdint>
#include <limits>

#include <gtest/gtest.h>

#include "core/ir/quant/quant_params.h"
#include "core/ir/quant/requantize.h"
#include "core/util/error.h"

namespace nnd::quant {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(QuantArithmetic, RoundHalfEven) {
  EXPECT_EQ(round_half_even(0.5), 0);
  EXPECT_EQ(round_half_even(1.5), 2);
  EXPECT_EQ(round_half_even(2.5), 2);
  EXPECT_EQ(round_half_even(3.5), 4);
  EXPECT_EQ(round_half_even(-0.5), 0);
  EXPECT_EQ(round_half_even(-2.5), -2);
  EXPECT_EQ(round_half_even(-3.5), -4);
  EXPECT_EQ(round_half_even(2.4999999), 2);
  EXPECT_EQ(round_half_even(2.5000001), 3);
  EXPECT_EQ(round_half_even(-7.0), -7);
  EXPECT_EQ(round_half_even(8388609.5), 8388610);  // float32's last half-integer step
}

TEST(QuantArithmetic, QuantizeTiesGoToEven) {
  // x / scale exactly on a tie, zero point added after rounding.
  EXPECT_EQ(quantize(2.5f, 1.0f, 0, QuantType::kInt8), 2);
  EXPECT_EQ(quantize(3.5f, 1.0f, 0, QuantType::kInt8), 4);
  EXPECT_EQ(quantize(-2.5f, 1.0f, 0, QuantType::kInt8), -2);
  EXPECT_EQ(quantize(0.25f, 0.5f, 10, QuantType::kUInt8), 10);  // 0.5 -> 0
  EXPECT_EQ(quantize(0.75f, 0.5f, 10, QuantType::kUInt8), 12);  // 1.5 -> 2
  // The zero point does not shift the tie: round(2.5) + 1 = 3, not round(3.5) = 4.
  EXPECT_EQ(quantize(2.5f, 1.0f, 1, QuantType::kInt8), 3);
}

TEST(QuantArithmetic, QuantizeDividesInFloat32) {
  // 0.3f / 0.1f is 2.99999994 in real arithmetic on the two float32 values but rounds to 3.0f in
  // float32; both give 3. The case that matters: a quotient whose float32 rounding lands on a tie.
  const float x = 2.5f * 0.1f;  // fl(0.25000000372...)
  EXPECT_EQ(quantize(x, 0.1f, 0, QuantType::kInt8), static_cast<int32_t>(round_half_even(double(x / 0.1f))));
  EXPECT_EQ(quantize(0.3f, 0.1f, 0, QuantType::kInt8), 3);
}

TEST(QuantArithmetic, QuantizeSaturates) {
  EXPECT_EQ(quantize(1e9f, 0.01f, 0, QuantType::kInt8), 127);
  EXPECT_EQ(quantize(-1e9f, 0.01f, 0, QuantType::kInt8), -128);
  EXPECT_EQ(quantize(127.5f, 1.0f, 0, QuantType::kInt8), 127);  // rounds to 128, saturates
  EXPECT_EQ(quantize(126.5f, 1.0f, 0, QuantType::kInt8), 126);  // tie to even, in range
  EXPECT_EQ(quantize(-128.5f, 1.0f, 0, QuantType::kInt8), -128);
  EXPECT_EQ(quantize(255.4f, 1.0f, 0, QuantType::kUInt8), 255);
  EXPECT_EQ(quantize(-0.4f, 1.0f, 0, QuantType::kUInt8), 0);
  EXPECT_EQ(quantize(-1.0f, 1.0f, 0, QuantType::kUInt8), 0);
  EXPECT_EQ(quantize(200.0f, 1.0f, 100, QuantType::kUInt8), 255);  // zero point pushes it over
  EXPECT_EQ(quantize(kInf, 1.0f, 0, QuantType::kUInt8), 255);
  EXPECT_EQ(quantize(-kInf, 1.0f, 3, QuantType::kUInt8), 0);
  EXPECT_EQ(quantize(std::nanf(""), 1.0f, 3, QuantType::kInt8), -128);
  // A finite x whose quotient overflows float32 saturates too.
  EXPECT_EQ(quantize(3e38f, 1e-3f, 0, QuantType::kInt8), 127);
}

TEST(QuantArithmetic, Dequantize) {
  EXPECT_EQ(dequantize(200, 0.5f, 128), 36.0f);
  EXPECT_EQ(dequantize(-128, 0.25f, 0), -32.0f);
  EXPECT_EQ(dequantize(0, 0.1f, 5), -5 * 0.1f);
  // int32 biases: the difference is converted to float32 first (rounding above 2^24).
  EXPECT_EQ(dequantize(16777217, 1.0f, 0), 16777216.0f);
  EXPECT_EQ(dequantize(std::numeric_limits<int32_t>::max(), 1.0f, 0), 2147483648.0f);
}

TEST(QuantArithmetic, MultiplierIsFloat32ProductThenQuotient) {
  const float xs = 0.1f, ws = 0.3f, ys = 0.7f;
  const float expected = (xs * ws) / ys;
  EXPECT_EQ(requant_multiplier(xs, ws, ys, "t"), expected);
  EXPECT_NE(static_cast<double>(expected), 0.1 * 0.3 / 0.7);  // not the real quotient
  EXPECT_THROW(requant_multiplier(1e-30f, 1e-30f, 1.0f, "t"), Error);  // product underflows to 0
  EXPECT_THROW(requant_multiplier(1e30f, 1e30f, 1.0f, "t"), Error);    // product overflows
}

TEST(QuantArithmetic, RequantizeRoundsTheFloat32Product) {
  const OutputRange i8{-128, 127};
  EXPECT_EQ(requantize(3, 0.5f, 0, i8), 2);   // 1.5 -> 2
  EXPECT_EQ(requantize(5, 0.5f, 0, i8), 2);   // 2.5 -> 2
  EXPECT_EQ(requantize(-5, 0.5f, 0, i8), -2);
  EXPECT_EQ(requantize(5, 0.5f, 3, i8), 5);   // zero point after rounding
  // 15 * 0x1.555556p-3 is 2.50000007 in real arithmetic (rounds to 3), but the float32 product
  // is exactly 2.5, a tie that goes to 2: the float32 step is part of the definition.
  const float m = std::ldexp(float(0x1555556) / float(1 << 24), -3);
  ASSERT_EQ(static_cast<double>(m), 0x1.555556p-3);
  EXPECT_GT(15.0 * static_cast<double>(m), 2.5);
  EXPECT_EQ(requantize(15, m, 0, i8), 2);
  // The int32 -> float32 conversion rounds: 2^24 + 1 becomes 2^24 (to even) before the product.
  EXPECT_EQ(requantize(16777217, 0x1p-24f, 0, OutputRange{-1000000, 1000000}), 1);
  EXPECT_EQ(requantize(16777219, 0x1p-24f, 0, OutputRange{-1000000, 1000000}), 1);  // 2^24 + 4 -> 1.00000024 -> 1
  EXPECT_EQ(requantize(25165824, 0x1p-24f, 0, OutputRange{-1000000, 1000000}), 2);  // 1.5 -> 2
}

TEST(QuantArithmetic, RequantizeSaturatesAtTheInt32Edges) {
  const OutputRange i8{-128, 127}, u8{0, 255};
  EXPECT_EQ(requantize(std::numeric_limits<int32_t>::max(), 1.0f, 0, i8), 127);
  EXPECT_EQ(requantize(std::numeric_limits<int32_t>::min(), 1.0f, 0, i8), -128);
  EXPECT_EQ(requantize(std::numeric_limits<int32_t>::max(), 3e38f, 0, u8), 255);  // product is inf
  EXPECT_EQ(requantize(std::numeric_limits<int32_t>::min(), 3e38f, 255, u8), 0);
  EXPECT_EQ(requantize(std::numeric_limits<int32_t>::min(), 1.0f, 255, u8), 0);
  EXPECT_EQ(requantize(0, 1.0f, 255, u8), 255);
  EXPECT_EQ(requantize(1, 1.0f, 255, u8), 255);
  EXPECT_EQ(requantize(-1, 1.0f, 255, u8), 254);
}

TEST(QuantArithmetic, ActivationRanges) {
  // Relu on uint8 with zero point 100: nothing below the zero point.
  const OutputRange relu = output_range(QuantType::kUInt8, 0.05f, 100, 0.0);
  EXPECT_EQ(relu.lo, 100);
  EXPECT_EQ(relu.hi, 255);
  EXPECT_EQ(requantize(-40, 1.0f, 100, relu), 100);
  // Relu6 on int8 with scale 0.04, zero point -128: 6 / 0.04 = 150 -> 22.
  const OutputRange relu6 = output_range(QuantType::kInt8, 0.04f, -128, 0.0, 6.0);
  EXPECT_EQ(relu6.lo, -128);
  EXPECT_EQ(relu6.hi, quantize(6.0f, 0.04f, -128, QuantType::kInt8));
  EXPECT_EQ(relu6.hi, 22);
  EXPECT_EQ(requantize(1000, 1.0f, -128, relu6), 22);
  // A range inside one step collapses to one value instead of inverting.
  const OutputRange narrow = output_range(QuantType::kInt8, 1.0f, 0, 0.1, 0.2);
  EXPECT_EQ(narrow.lo, 0);
  EXPECT_EQ(narrow.hi, 0);
  // Monotone quantization: clamping the integers equals quantizing relu's float output.
  for (int acc = -300; acc <= 300; ++acc) {
    const float real = static_cast<float>(acc) * 0.013f;
    const int32_t via_float = quantize(std::max(real, 0.0f), 0.05f, 100, QuantType::kUInt8);
    EXPECT_GE(requantize(acc, 0.013f / 0.05f, 100, relu), 100);
    EXPECT_LE(std::abs(requantize(acc, 0.013f / 0.05f, 100, relu) - via_float), 1) << acc;
  }
}

TEST(QuantArithmetic, PerChannelRequantizer) {
  QuantParams x = QuantParams::per_tensor(QuantType::kUInt8, 0.5f, 128);
  QuantParams w{QuantType::kInt8, {0.01f, 0.02f, 0.04f}, {0, 0, 0}, 0};
  QuantParams y = QuantParams::per_tensor(QuantType::kInt8, 0.1f, -3);
  const Requantizer r = make_requantizer(x, w, y, 3, "t");
  ASSERT_EQ(r.multipliers.size(), 3u);
  EXPECT_EQ(r.multipliers[0], (0.5f * 0.01f) / 0.1f);
  EXPECT_EQ(r.multipliers[2], (0.5f * 0.04f) / 0.1f);
  EXPECT_EQ(r(100, 0), requantize(100, r.multipliers[0], -3, OutputRange{-128, 127}));
  EXPECT_EQ(r(100, 2), requantize(100, r.multipliers[2], -3, OutputRange{-128, 127}));
  EXPECT_NE(r(100, 0), r(100, 2));
  // Per-tensor weights: one multiplier for every channel.
  const Requantizer one = make_requantizer(x, QuantParams::per_tensor(QuantType::kInt8, 0.02f, 0), y, 3, "t");
  EXPECT_EQ(one.multipliers.size(), 1u);
  EXPECT_EQ(one(100, 2), one(100, 0));
  // A wrong channel count, or a per-channel input, is refused.
  EXPECT_THROW(make_requantizer(x, w, y, 4, "t"), Error);
  QuantParams xc{QuantType::kUInt8, {0.5f, 0.5f}, {0, 0}, 1};
  EXPECT_THROW(make_requantizer(xc, w, y, 3, "t"), Error);
}

TEST(QuantArithmetic, AccumulatorBoundAtTheInt32Edge) {
  EXPECT_EQ(max_abs_input(QuantType::kUInt8, 0), 255);
  EXPECT_EQ(max_abs_input(QuantType::kUInt8, 128), 128);
  EXPECT_EQ(max_abs_input(QuantType::kInt8, -128), 255);
  EXPECT_EQ(max_abs_input(QuantType::kInt8, 0), 128);
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  // 255 * 255 per product: the largest weight sum that fits, and one unit more.
  const int64_t sum = kMax / 255;
  EXPECT_EQ(check_accumulator(255, sum, kMax - 255 * sum, "t"), kMax);
  EXPECT_THROW(check_accumulator(255, sum, kMax - 255 * sum + 1, "t"), Error);
  EXPECT_THROW(check_accumulator(255, sum + 1, 0, "t"), Error);
  EXPECT_THROW(check_accumulator(0, 0, kMax + 1, "t"), Error);
  EXPECT_EQ(check_accumulator(255, 0, 7, "t"), 7);
  try {
    check_accumulator(255, int64_t{1} << 40, 0, "model.onnx: node 'c' (QLinearConv)");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("model.onnx: node 'c' (QLinearConv): the int32 accumulator could overflow"), std::string::npos)
        << e.what();
  }
}

TEST(QuantArithmetic, ValidateParams) {
  EXPECT_NO_THROW(validate(QuantParams::per_tensor(QuantType::kUInt8, 0.1f, 255), "t"));
  EXPECT_THROW(validate(QuantParams::per_tensor(QuantType::kUInt8, 0.1f, 256), "t"), Error);
  EXPECT_THROW(validate(QuantParams::per_tensor(QuantType::kInt8, 0.1f, -129), "t"), Error);
  EXPECT_THROW(validate(QuantParams::per_tensor(QuantType::kInt8, 0.0f, 0), "t"), Error);
  EXPECT_THROW(validate(QuantParams::per_tensor(QuantType::kInt8, -1.0f, 0), "t"), Error);
  EXPECT_THROW(validate(QuantParams::per_tensor(QuantType::kInt8, kInf, 0), "t"), Error);
  EXPECT_THROW(validate(QuantParams::per_tensor(QuantType::kInt8, std::nanf(""), 0), "t"), Error);
  EXPECT_THROW(validate(QuantParams{QuantType::kInt8, {0.1f, 0.2f}, {0}, 0}, "t"), Error);
  EXPECT_THROW(validate(QuantParams{QuantType::kInt8, {0.1f, 0.2f}, {0, 0}, -1}, "t"), Error);
  EXPECT_NO_THROW(validate(QuantParams{QuantType::kInt8, {0.1f, 0.2f}, {0, 1}, 0}, "t"));
  try {
    validate(QuantParams{QuantType::kUInt8, {0.1f, 0.0f}, {0, 0}, 0}, "w_scale");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "w_scale: scale 1 must be finite and > 0, got 0");
  }
  EXPECT_EQ(describe(QuantParams::per_tensor(QuantType::kUInt8, 0.5f, 128)), "uint8 scale 0.5 zero point 128");
  EXPECT_EQ(describe(QuantParams{QuantType::kInt8, {0.25f, 0.5f}, {0, 0}, 0}), "int8 per-channel (axis 0, 2 scales 0.25..0.5, zero point 0)");
}

}  // namespace
}  // namespace nnd::quant
