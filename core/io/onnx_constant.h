// Constant tensors of an ONNX graph at load time: initializers, `Constant` nodes and everything
// folded from them (shape arithmetic, casts, gathers). Internal to the ONNX loader (core/io).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace onnx {
class TensorProto;
}

namespace nnd::onnx_import {

// The batch size is not known at load time: `Shape` of a tensor yields this marker for the batch
// axis, gathers, slices, concatenations and casts carry it, and `Reshape` reads it as "keep the
// batch". Arithmetic on it is refused (the result would depend on the batch size).
inline constexpr int64_t kBatchMarker = std::numeric_limits<int64_t>::min() + 1;

// A constant of any rank (ONNX dims, the batch axis included if it has one). Integers (int64,
// int32, bool, uint8 used as indices) are kept exactly in `ints`; floating-point values in
// `reals` as double. Exactly one of the two vectors is used, as `is_int` says.
struct Constant {
  std::vector<int64_t> dims;
  bool is_int = false;
  std::vector<int64_t> ints;
  std::vector<double> reals;
  // Made by ConstantOfShape over a shape holding the batch size: that axis has length 1 here and the
  // values repeat along it, which is exact for broadcasting readers only (Shape refuses it).
  bool batch_broadcast = false;
  // The ONNX element type (TensorProto.DataType) of a tensor decoded from the file; 0 for folded
  // results. Quantized operators need it: an int8 and a uint8 zero point hold the same integers.
  int elem_type = 0;

  int64_t size() const;  // number of elements (product of dims)
  double real_at(int64_t i) const;  // element i as double (refuses the batch marker)
  int64_t int_at(int64_t i) const;  // element i as an integer (integers only)
  std::vector<int64_t> as_ints(const std::string& what) const;  // 1-D or scalar integer list
};

// Folding runs at load time on untrusted files: one folded constant holds at most
// kMaxFoldedElements; check_fold_size throws naming `what` for a larger shape (or a negative dim).
constexpr int64_t kMaxFoldedElements = int64_t{1} << 22;
void check_fold_size(const std::vector<int64_t>& dims, const std::string& what);

// Decodes an initializer or a Constant node's tensor. `what` starts error messages. Throws
// nnd::Error for external data, unsupported element types and size mismatches.
Constant decode_tensor(const onnx::TensorProto& t, const std::string& what);

// Element-wise arithmetic with numpy broadcasting, on reals or (for Add/Sub/Mul/Div) ints.
// kMod is ONNX Mod with fmod 0 (integers; the remainder takes the divisor's sign, as Python's %),
// kFmod with fmod 1 (the dividend's sign, as C's fmod).
enum class ConstOp { kAdd, kSub, kMul, kDiv, kMin, kMax, kPow, kMod, kFmod };
Constant fold_binary(ConstOp op, const Constant& a, const Constant& b, const std::string& what);

// Equal (a bool tensor, as integers 0 / 1) and Where (cond ? x : y), with numpy broadcasting.
// Comparing the batch marker is refused; Where carries it through.
Constant fold_equal(const Constant& a, const Constant& b, const std::string& what);
Constant fold_where(const Constant& cond, const Constant& x, const Constant& y, const std::string& what);

// numpy-style broadcast of two shapes; throws naming `what` when they do not broadcast.
std::vector<int64_t> broadcast_dims(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                                    const std::string& what);

// Gather along `axis` with integer indices (negative indices count from the end).
Constant fold_gather(const Constant& data, const Constant& indices, int64_t axis,
                     const std::string& what);
// Concat along `axis` (all integers or all reals).
Constant fold_concat(const std::vector<const Constant*>& parts, int64_t axis, const std::string& what);
// Slice with per-axis starts/ends/steps (ONNX clamping rules).
Constant fold_slice(const Constant& data, const std::vector<int64_t>& starts,
                    const std::vector<int64_t>& ends, const std::vector<int64_t>& axes,
                    const std::vector<int64_t>& steps, const std::string& what);
// Transpose by `perm` (empty: reverse the axes).
Constant fold_transpose(const Constant& data, std::vector<int64_t> perm, const std::string& what);
// Casts to integers (truncating toward zero) or reals.
Constant fold_cast(const Constant& c, bool to_int, const std::string& what);

// Range(start, limit, delta) (scalars; integers when all three are), Not (of a bool tensor), and
// ScatterND without reduction (data with updates written at the index tuples of `indices`, later
// tuples winning): what torchvision's Swin computes its shifted-window mask with, from shapes.
Constant fold_range(const Constant& start, const Constant& limit, const Constant& delta, const std::string& what);
Constant fold_not(const Constant& c, const std::string& what);
// Trilu: the upper (upper = true: column - row >= k) or lower (column - row <= k) triangle of the
// last two axes, the rest zero (torch 2's causal attention mask: ones(L, S).tril()).
Constant fold_trilu(const Constant& c, int64_t k, bool upper, const std::string& what);
Constant fold_scatter_nd(const Constant& data, const Constant& indices, const Constant& updates, const std::string& what);

}  // namespace nnd::onnx_import
