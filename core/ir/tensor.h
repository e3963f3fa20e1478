// Element types, per-sample shapes and weight tensors of the graph IR.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nnd {

// Element type of a graph value. Intermediate tensors are float32, except the quantized tensors
// of int8 graphs (docs/int8.md): int8 / uint8 outputs of Quantize and of the integer layers
// (QConv, QDense), and int32 accumulators (ConvInteger, MatMulInteger). A graph input may be fed
// as uint8: camera bytes, which float layers read as float32 0..255, and integer layers as the
// quantized integers they are. Graph outputs are float32 (an integer output of an int8 graph is
// served as float32 holding its integers), except the int64 indices of ArgMax (a classifier's
// label), which only a graph output may hold.
enum class DType : uint8_t { kFloat32, kUInt8, kInt8, kInt32, kInt64 };

const char* dtype_name(DType t);  // "float32", "uint8", "int8", "int32", "int64"
// Bytes of one element: 4, 1, 1, 4, 8.
size_t dtype_bytes(DType t);

// Shape of ONE sample, batch axis excluded, channels last (NHWC without N). A Conv2D input is
// {H, W, C}; a Conv1D input {steps, C}; a Dense input {..., features}.
using Dims = std::vector<int64_t>;

std::string dims_to_string(const Dims& d);  // "(30, 40, 3)"

// Number of elements of one sample (product of dims; 1 for rank 0). Throws nnd::Error when it
// exceeds kMaxElements.
int64_t element_count(const Dims& d, std::string_view what);

// A constant tensor from the model file (kernel, bias, BN statistics, ...), kept in the layout and
// shape Keras stores it in (Conv2D kernel (kh, kw, cin, cout), Dense kernel (in, units), ...).
// Engines re-lay it out for their kernels; the IR never does.
struct Weights {
  Dims shape;
  std::vector<float> data;  // row-major, data.size() == product of shape

  bool empty() const { return data.empty(); }

  // A vector of n elements, all v (biases, scales and offsets the loaders and passes make up).
  static Weights filled(int64_t n, float v) { return Weights{{n}, std::vector<float>(static_cast<size_t>(n), v)}; }
};

}  // namespace nnd
