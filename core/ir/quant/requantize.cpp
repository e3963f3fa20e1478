#include "core/ir/quant/requantize.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/util/error.h"

namespace nnd::quant {

namespace {

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

// Saturating conversion of an already rounded value to the type's range.
int32_t saturate(double v, QuantType t) {
  const double lo = static_cast<double>(type_min(t)), hi = static_cast<double>(type_max(t));
  return static_cast<int32_t>(v < lo ? lo : (v > hi ? hi : v));
}

}  // namespace

double round_half_even(double v) {
  // floor and the comparison are exact in double; nearbyint would follow the thread's rounding mode.
  const double f = std::floor(v);
  const double d = v - f;  // exact: v and f are within one unit
  if (d > 0.5) return f + 1.0;
  if (d < 0.5) return f;
  return std::fmod(f, 2.0) == 0.0 ? f : f + 1.0;
}

int32_t quantize(float x, float scale, int32_t zero_point, QuantType t) {
  if (std::isnan(x)) return static_cast<int32_t>(type_min(t));
  const float v = x / scale;  // one float32 division (x, scale float32: FLT_EVAL_METHOD 0 on x86-64 and AArch64)
  if (std::isinf(v)) return static_cast<int32_t>(v > 0 ? type_max(t) : type_min(t));
  return saturate(round_half_even(static_cast<double>(v)) + static_cast<double>(zero_point), t);
}

float dequantize(int64_t q, float scale, int32_t zero_point) {
  const float d = static_cast<float>(q - zero_point);  // rounds to nearest even above 2^24
  return d * scale;
}

float requant_multiplier(float x_scale, float w_scale, float y_scale, const std::string& what) {
  const float product = x_scale * w_scale;
  const float m = product / y_scale;
  if (!std::isfinite(m) || !(m > 0.0f)) {
    throw Error(ErrorCode::kUnsupported, what + ": requantization multiplier x_scale * w_scale / y_scale = " + number(x_scale) + " * " +
                                             number(w_scale) + " / " + number(y_scale) + " is not a positive finite float32 (" +
                                             number(m) + ")");
  }
  return m;
}

OutputRange output_range(QuantType t, float scale, int32_t zero_point, double real_lo, double real_hi) {
  OutputRange r{static_cast<int32_t>(type_min(t)), static_cast<int32_t>(type_max(t))};
  if (real_lo > -std::numeric_limits<double>::infinity()) r.lo = std::max(r.lo, quantize(static_cast<float>(real_lo), scale, zero_point, t));
  if (real_hi < std::numeric_limits<double>::infinity()) r.hi = std::min(r.hi, quantize(static_cast<float>(real_hi), scale, zero_point, t));
  if (r.hi < r.lo) r.hi = r.lo;  // an activation range inside one quantization step: a constant output
  return r;
}

int32_t requantize(int32_t acc, float multiplier, int32_t zero_point, OutputRange range) {
  float v = static_cast<float>(acc) * multiplier;
  const auto lo = static_cast<float>(range.lo - zero_point), hi = static_cast<float>(range.hi - zero_point);
  v = v < lo ? lo : (v > hi ? hi : v);
  return static_cast<int32_t>(round_half_even(static_cast<double>(v))) + zero_point;
}

Requantizer make_requantizer(const QuantParams& x, const QuantParams& w, const QuantParams& y, size_t channels,
                             const std::string& what, double real_lo, double real_hi) {
  if (x.per_channel() || y.per_channel()) {
    throw Error(ErrorCode::kUnsupported, what + ": the input and output need per-tensor quantization (one scale and zero point)");
  }
  if (w.per_channel() && w.channels() != channels) {
    throw Error(ErrorCode::kFormat, what + ": " + std::to_string(w.channels()) + " weight scales for " + std::to_string(channels) +
                                        " output channels");
  }
  Requantizer r;
  for (size_t c = 0; c < (w.per_channel() ? channels : 1); ++c) {
    r.multipliers.push_back(requant_multiplier(x.scale(0), w.scale(c), y.scale(0), what));
  }
  r.zero_point = y.zero_point(0);
  r.range = output_range(y.type, y.scale(0), r.zero_point, real_lo, real_hi);
  return r;
}

int64_t max_abs_input(QuantType t, int32_t zero_point) {
  return std::max<int64_t>(zero_point - type_min(t), type_max(t) - zero_point);
}

int64_t check_accumulator(int64_t max_abs_x, int64_t sum_abs_weights, int64_t abs_bias, const std::string& what) {
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  // max_abs_x <= 2^32 and sum_abs_weights <= 2^40 in any model nnd accepts; still guard the product.
  const bool over = (sum_abs_weights != 0 && max_abs_x > (kMax - abs_bias) / sum_abs_weights) || abs_bias > kMax;
  const int64_t bound = over ? kMax + 1 : abs_bias + max_abs_x * sum_abs_weights;
  if (bound > kMax) {
    throw Error(ErrorCode::kUnsupported, what + ": the int32 accumulator could overflow: |bias| " + std::to_string(abs_bias) +
                                             " + max |x - x_zero_point| " + std::to_string(max_abs_x) + " * sum |w - w_zero_point| " +
                                             std::to_string(sum_abs_weights) + " exceeds 2^31 - 1");
  }
  return bound;
}

}  // namespace nnd::quant
