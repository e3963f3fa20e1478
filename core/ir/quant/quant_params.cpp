#include "core/ir/quant/quant_params.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "core/util/error.h"

namespace nnd::quant {

const char* quant_type_name(QuantType t) {
  switch (t) {
    case QuantType::kInt8: return "int8";
    case QuantType::kUInt8: return "uint8";
    case QuantType::kInt32: return "int32";
  }
  return "?";
}

int64_t type_min(QuantType t) {
  switch (t) {
    case QuantType::kInt8: return -128;
    case QuantType::kUInt8: return 0;
    case QuantType::kInt32: return std::numeric_limits<int32_t>::min();
  }
  return 0;
}

int64_t type_max(QuantType t) {
  switch (t) {
    case QuantType::kInt8: return 127;
    case QuantType::kUInt8: return 255;
    case QuantType::kInt32: return std::numeric_limits<int32_t>::max();
  }
  return 0;
}

bool operator==(const QuantParams& a, const QuantParams& b) {
  return a.type == b.type && a.scales == b.scales && a.zero_points == b.zero_points && a.axis == b.axis;
}

namespace {

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

}  // namespace

void validate(const QuantParams& q, const std::string& what) {
  auto fail = [&](const std::string& rule) { throw Error(ErrorCode::kFormat, what + ": " + rule); };
  if (q.scales.empty()) fail("no scale");
  if (q.zero_points.size() != q.scales.size()) {
    fail(std::to_string(q.scales.size()) + " scale(s) but " + std::to_string(q.zero_points.size()) + " zero point(s)");
  }
  if (!q.per_channel() && q.scales.size() != 1) fail("per-tensor quantization needs one scale, got " + std::to_string(q.scales.size()));
  for (size_t c = 0; c < q.scales.size(); ++c) {
    const float s = q.scales[c];
    std::string which = q.per_channel() ? std::to_string(c) + " " : std::string();
    if (!std::isfinite(s) || !(s > 0.0f)) fail("scale " + which + "must be finite and > 0, got " + number(s));
    const int32_t z = q.zero_points[c];
    if (z < type_min(q.type) || z > type_max(q.type)) {
      fail("zero point " + which + "must be in [" +
           std::to_string(type_min(q.type)) + ", " + std::to_string(type_max(q.type)) + "] for " + quant_type_name(q.type) +
           ", got " + std::to_string(z));
    }
  }
}

std::string describe(const QuantParams& q) {
  std::string out = quant_type_name(q.type);
  if (!q.per_channel()) return out + " scale " + number(q.scales[0]) + " zero point " + std::to_string(q.zero_points[0]);
  const auto [lo, hi] = std::minmax_element(q.scales.begin(), q.scales.end());
  const auto [zlo, zhi] = std::minmax_element(q.zero_points.begin(), q.zero_points.end());
  out += " per-channel (axis " + std::to_string(q.axis) + ", " + std::to_string(q.scales.size()) + " scales " + number(*lo) + ".." +
         number(*hi) + ", zero point ";
  out += *zlo == *zhi ? std::to_string(*zlo) : std::to_string(*zlo) + ".." + std::to_string(*zhi);
  return out + ")";
}

}  // namespace nnd::quant
