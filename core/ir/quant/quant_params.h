// Quantization parameters of an int8 / uint8 tensor: the affine map between its integers and the
// real values they stand for, per tensor or per channel. The arithmetic on them is requantize.h;
// the rules both follow are written down in docs/int8.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nnd::quant {

// Element type of a quantized tensor (ONNX INT8 / UINT8), and of the raw accumulator (INT32) that
// ConvInteger / MatMulInteger output without requantization.
enum class QuantType : uint8_t { kInt8, kUInt8, kInt32 };

const char* quant_type_name(QuantType t);  // "int8", "uint8", "int32"

// Saturation bounds of the type: [-128, 127], [0, 255], [INT32_MIN, INT32_MAX].
int64_t type_min(QuantType t);
int64_t type_max(QuantType t);

// real = scale * (q - zero_point). One (scale, zero point) pair for the whole tensor, or one per
// index along `axis` (ONNX per-axis quantization; in nnd only weights use it, along the output
// channel). Scales are float32 as ONNX stores them: every result derived from them is rounded the
// way requantize.h says, never recomputed in higher precision.
struct QuantParams {
  QuantType type = QuantType::kUInt8;
  std::vector<float> scales{1.0f};
  std::vector<int32_t> zero_points{0};
  int axis = -1;  // the per-channel axis in the owner's layout; -1 per tensor

  bool per_channel() const { return axis >= 0; }
  size_t channels() const { return scales.size(); }
  float scale(size_t c) const { return scales[per_channel() ? c : 0]; }
  int32_t zero_point(size_t c) const { return zero_points[per_channel() ? c : 0]; }

  static QuantParams per_tensor(QuantType t, float scale, int32_t zero_point) {
    return QuantParams{t, {scale}, {zero_point}, -1};
  }
};

bool operator==(const QuantParams& a, const QuantParams& b);

// The rules every quantization parameter must meet, checked where they enter nnd (loaders):
// at least one scale, as many zero points as scales, one pair unless per channel, every scale
// finite and > 0 (a zero or negative scale has no inverse for quantizing), every zero point
// inside the type's range. Throws nnd::Error(kFormat) "<what>: <rule>, got <value>".
void validate(const QuantParams& q, const std::string& what);

// "uint8 scale 0.0235 zero point 128", "int8 per-channel (16 scales 0.0012..0.0310, zero point 0)"
// for dumps and messages.
std::string describe(const QuantParams& q);

}  // namespace nnd::quant
