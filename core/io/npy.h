// Reading and writing NumPy .npy files (format versions 1.0-3.0), the exchange format of nnrun,
// nnctl and the test fixtures. Only what nnd needs: little-endian float32, uint8 and int64 (ArgMax
// outputs), C order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/tensor.h"

namespace nnd {

// An n-dimensional array as read from a .npy file.
struct NpyArray {
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;  // full shape, batch first for nnd's inputs and outputs
  std::vector<uint8_t> bytes;  // element data, C order, size = product(shape) * element size

  int64_t element_count() const;
  const float* f32() const { return reinterpret_cast<const float*>(bytes.data()); }
  const uint8_t* u8() const { return bytes.data(); }
  const int64_t* i64() const { return reinterpret_cast<const int64_t*>(bytes.data()); }
};

// Reads a .npy file holding '<f4' (float32), '|u1' (uint8) or '<i8' (int64) data in C order. Throws nnd::Error
// naming the file and the problem (not a .npy file, truncated, unsupported dtype such as '<f8',
// Fortran order, absurd shape).
NpyArray read_npy(const std::string& path);

// Parses .npy bytes already in memory (for fuzzing and tests); `name` prefixes messages.
NpyArray parse_npy(const uint8_t* data, size_t size, const std::string& name);

// Writes data of the given shape and dtype (float32, uint8 or int64) as a version 1.0 .npy file.
// Throws nnd::Error on I/O failure.
void write_npy(const std::string& path, const std::vector<int64_t>& shape, DType dtype, const void* data);
void write_npy_f32(const std::string& path, const std::vector<int64_t>& shape, const float* data);

}  // namespace nnd
