#include "core/ir/tensor.h"

#include "core/util/checked_math.h"

namespace nnd {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::kFloat32: return "float32";
    case DType::kUInt8: return "uint8";
    case DType::kInt8: return "int8";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
  }
  return "?";
}

size_t dtype_bytes(DType t) {
  switch (t) {
    case DType::kUInt8:
    case DType::kInt8: return 1;
    case DType::kFloat32:
    case DType::kInt32: return 4;
    case DType::kInt64: return 8;
  }
  return 4;
}

std::string dims_to_string(const Dims& d) {
  std::string s = "(";
  for (size_t i = 0; i < d.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(d[i]);
  }
  if (d.size() == 1) s += ",";
  return s + ")";
}

int64_t element_count(const Dims& d, std::string_view what) {
  int64_t n = 1;
  for (int64_t x : d) n = checked_mul(n, x, what);
  return n;
}

}  // namespace nnd
