// Exact integer arithmetic of quantized layers, defined once for every engine: quantizing a float,
// dequantizing an integer, the int32 accumulator's overflow proof, and requantizing an accumulator
// (bias already added) to int8 / uint8 with a fused activation's clamp. The reference engine calls
// these functions; a JIT kernel must produce the same integers bit for bit (docs/int8.md gives the
// instruction-level reading of each rule).
//
// Every floating-point step below is one IEEE-754 binary32 operation rounded to nearest, ties to
// even, on float32 operands: the order of operations is part of the definition. These are the
// steps ONNX Runtime's CPU kernels take (QuantizeLinear divides, QLinearConv / QLinearMatMul
// multiply the int32 sum, converted to float32, by fl(fl(x_scale * w_scale) / y_scale)); they are
// reproducible with plain SIMD float instructions on every ISA (cvtdq2ps / mulps / cvtps2dq,
// SCVTF / FMUL / FCVTNS). Nothing here may be contracted into a fused multiply-add: no function
// adds after multiplying.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/ir/quant/quant_params.h"

namespace nnd::quant {

// Round to nearest integer, ties to even (2.5 -> 2, 3.5 -> 4, -2.5 -> -2): the default IEEE
// rounding mode, whatever the thread's current mode is. The argument is finite.
double round_half_even(double v);

// ONNX QuantizeLinear of one element: saturate(round_half_even(fl(x / scale)) + zero_point) in
// the type's range. +inf saturates to the maximum, -inf and NaN to the minimum (what maxps/minps
// with the clamp bound as second operand give; a kernel that computes differently must special-
// case NaN).
int32_t quantize(float x, float scale, int32_t zero_point, QuantType t);

// ONNX DequantizeLinear of one element: fl(fl(q - zero_point) * scale), float32. (q - zero_point
// is exact in int64; its conversion to float32 rounds only for |q - zero_point| > 2^24, i.e. for
// int32 biases.)
float dequantize(int64_t q, float scale, int32_t zero_point);

// The multiplier that takes an accumulator of products (x - x_zp)(w - w_zp) to the output's units:
// fl(fl(x_scale * w_scale) / y_scale). Throws nnd::Error(kUnsupported) naming `what` when it is
// not a finite positive float32 (scales whose product underflows or overflows).
float requant_multiplier(float x_scale, float w_scale, float y_scale, const std::string& what);

// The integers an output may take: the type's range, narrowed by a fused activation's real range
// [real_lo, real_hi] (Relu: [0, inf], Relu6 / Clip: [lo, hi]) quantized with the output's
// parameters by quantize() above. Quantization is monotone, so clamping the integers to these
// bounds equals quantizing the activation's float output: Q(relu(v)) = max(Q(v), Q(0)).
struct OutputRange {
  int32_t lo = 0, hi = 0;
};
OutputRange output_range(QuantType t, float scale, int32_t zero_point,
                         double real_lo = -std::numeric_limits<double>::infinity(),
                         double real_hi = std::numeric_limits<double>::infinity());

// Requantization of one int32 accumulator (sum of products plus the int32 bias):
//   v = fl(float32(acc) * multiplier)          (int32 -> float32 rounds for |acc| > 2^24)
//   v = clamp(v, lo - zero_point, hi - zero_point)
//   q = round_half_even(v) + zero_point
// Clamping before rounding (as ONNX Runtime does) keeps the conversion in range; the bounds are
// integers, so it equals rounding first and clamping after.
int32_t requantize(int32_t acc, float multiplier, int32_t zero_point, OutputRange range);

// The requantization of a layer with per-output-channel multipliers (per-channel weight scales),
// one output zero point and one clamp range: what a quantized Conv / Dense layer stores.
struct Requantizer {
  std::vector<float> multipliers;  // one per output channel, or one for all
  int32_t zero_point = 0;
  OutputRange range;

  int32_t operator()(int32_t acc, size_t channel) const {
    return requantize(acc, multipliers[multipliers.size() == 1 ? 0 : channel], zero_point, range);
  }
};

// Builds it from the input's (per-tensor), the weights' (per-tensor or per-channel, `channels`
// outputs) and the output's (per-tensor) parameters, with the fused activation's real range.
Requantizer make_requantizer(const QuantParams& x, const QuantParams& w, const QuantParams& y, size_t channels,
                             const std::string& what, double real_lo = -std::numeric_limits<double>::infinity(),
                             double real_hi = std::numeric_limits<double>::infinity());

// ---- int32 accumulation: proven at load time, never saturating or wrapping at run time ----

// The largest |x - zero_point| an input of type t can have: max(zp - min, max - zp), <= 255.
int64_t max_abs_input(QuantType t, int32_t zero_point);

// A bound on |acc| for one output: |bias| + max_abs_input * sum over its weights of |w - w_zp|.
// Throws nnd::Error(kUnsupported) naming `what` when the bound exceeds INT32_MAX: the layer's
// int32 accumulator could overflow (ONNX leaves that undefined; nnd refuses the layer instead of
// wrapping). Returns the bound.
int64_t check_accumulator(int64_t max_abs_x, int64_t sum_abs_weights, int64_t abs_bias, const std::string& what);

}  // namespace nnd::quant
