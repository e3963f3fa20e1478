#include "core/io/onnx_constant.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/util/checked_math.h"
#include "core/util/error.h"

namespace nnd::onnx_import {
namespace {

std::string dims_text(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

int64_t count_of(const std::vector<int64_t>& dims, const std::string& what) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) throw Error(ErrorCode::kFormat, what + ": negative dimension in " + dims_text(dims));
    n = checked_mul(n, d, what);
  }
  return n;
}

// IEEE half to float (denormals, infinities and NaN included).
float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  float f;
  if (exp == 0) {
    f = std::ldexp(static_cast<float>(man), -24);
  } else if (exp == 31) {
    f = man ? std::nanf("") : INFINITY;
  } else {
    f = std::ldexp(static_cast<float>(man | 0x400u), static_cast<int>(exp) - 25);
  }
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  bits |= sign;
  std::memcpy(&f, &bits, 4);
  return f;
}

template <typename T>
std::vector<T> raw_values(const std::string& raw, int64_t n, const std::string& what) {
  if (raw.size() != static_cast<size_t>(n) * sizeof(T)) {
    throw Error(ErrorCode::kFormat, what + ": raw_data holds " + std::to_string(raw.size()) + " bytes, expected " +
                std::to_string(static_cast<size_t>(n) * sizeof(T)));
  }
  std::vector<T> v(static_cast<size_t>(n));
  if (n) std::memcpy(v.data(), raw.data(), raw.size());  // ONNX raw data is little-endian
  return v;
}

void check_count(int64_t have, int64_t want, const std::string& what) {
  if (have != want) {
    throw Error(ErrorCode::kFormat, what + ": holds " + std::to_string(have) + " values, its dims need " + std::to_string(want));
  }
}

std::vector<int64_t> strides_of(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

int64_t normalise_axis(int64_t axis, size_t rank, const std::string& what) {
  const int64_t r = static_cast<int64_t>(rank);
  const int64_t a = axis < 0 ? axis + r : axis;
  if (a < 0 || a >= r) {
    throw Error(ErrorCode::kFormat, what + ": axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(r));
  }
  return a;
}

}  // namespace

void check_fold_size(const std::vector<int64_t>& dims, const std::string& what) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) throw Error(ErrorCode::kFormat, what + ": negative dimension in " + dims_text(dims));
    if (d != 0 && n > kMaxFoldedElements / d) {
      throw Error(ErrorCode::kLimit, what + ": a folded constant of shape " + dims_text(dims) + " is too large (limit " +
                  std::to_string(kMaxFoldedElements) + " elements)");
    }
    n *= d;
  }
}

namespace {

}  // namespace

int64_t Constant::size() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

double Constant::real_at(int64_t i) const {
  if (i < 0 || i >= static_cast<int64_t>(is_int ? ints.size() : reals.size())) {
    throw Error(ErrorCode::kFormat, "a constant with " + std::to_string(size()) + " elements is read at element " + std::to_string(i));
  }
  if (!is_int) return reals[static_cast<size_t>(i)];
  const int64_t v = ints[static_cast<size_t>(i)];
  if (v == kBatchMarker) throw Error(ErrorCode::kUnsupported, "a value computed from the batch size is used as a number");
  return static_cast<double>(v);
}

int64_t Constant::int_at(int64_t i) const {
  if (i < 0 || i >= static_cast<int64_t>(ints.size())) {
    throw Error(ErrorCode::kFormat, "an integer constant with " + std::to_string(ints.size()) + " elements is read at element " +
                std::to_string(i));
  }
  return ints[static_cast<size_t>(i)];
}

std::vector<int64_t> Constant::as_ints(const std::string& what) const {
  if (!is_int) throw Error(ErrorCode::kFormat, what + ": expected an integer tensor, got floating-point values");
  if (dims.size() > 1) throw Error(ErrorCode::kFormat, what + ": expected a 1-D list, got shape " + dims_text(dims));
  return ints;
}

Constant decode_tensor(const onnx::TensorProto& t, const std::string& what) {
  if (t.data_location() == onnx::TensorProto_DataLocation_EXTERNAL || t.external_data_size() > 0) {
    throw Error(ErrorCode::kUnsupported, what + ": the tensor is stored in an external data file; nnd reads self-contained "
                       "models (re-export with the weights inside the .onnx file)");
  }
  Constant c;
  c.elem_type = t.data_type();
  c.dims.assign(t.dims().begin(), t.dims().end());
  const int64_t n = count_of(c.dims, what);
  const bool raw = t.has_raw_data();
  const std::string& rd = t.raw_data();
  switch (t.data_type()) {
    case onnx::TensorProto_DataType_FLOAT: {
      std::vector<float> v;
      if (raw) {
        v = raw_values<float>(rd, n, what);
      } else {
        check_count(t.float_data_size(), n, what);
        v.assign(t.float_data().begin(), t.float_data().end());
      }
      c.reals.assign(v.begin(), v.end());
      break;
    }
    case onnx::TensorProto_DataType_DOUBLE: {
      if (raw) {
        c.reals = raw_values<double>(rd, n, what);
      } else {
        check_count(t.double_data_size(), n, what);
        c.reals.assign(t.double_data().begin(), t.double_data().end());
      }
      break;
    }
    case onnx::TensorProto_DataType_FLOAT16: {
      std::vector<uint16_t> v;
      if (raw) {
        v = raw_values<uint16_t>(rd, n, what);
      } else {
        check_count(t.int32_data_size(), n, what);
        for (int32_t x : t.int32_data()) v.push_back(static_cast<uint16_t>(x));
      }
      for (uint16_t h : v) c.reals.push_back(half_to_float(h));
      break;
    }
    case onnx::TensorProto_DataType_INT64: {
      c.is_int = true;
      if (raw) {
        c.ints = raw_values<int64_t>(rd, n, what);
      } else {
        check_count(t.int64_data_size(), n, what);
        c.ints.assign(t.int64_data().begin(), t.int64_data().end());
      }
      break;
    }
    case onnx::TensorProto_DataType_INT32:
    case onnx::TensorProto_DataType_INT8:
    case onnx::TensorProto_DataType_UINT8:
    case onnx::TensorProto_DataType_BOOL: {
      c.is_int = true;
      const int type = t.data_type();
      if (raw) {
        if (type == onnx::TensorProto_DataType_INT32) {
          for (int32_t x : raw_values<int32_t>(rd, n, what)) c.ints.push_back(x);
        } else if (type == onnx::TensorProto_DataType_INT8) {
          for (int8_t x : raw_values<int8_t>(rd, n, what)) c.ints.push_back(x);
        } else {
          for (uint8_t x : raw_values<uint8_t>(rd, n, what)) c.ints.push_back(x);
        }
      } else {
        check_count(t.int32_data_size(), n, what);
        c.ints.assign(t.int32_data().begin(), t.int32_data().end());
      }
      break;
    }
    default:
      throw Error(ErrorCode::kUnsupported, what + ": element type " + std::to_string(t.data_type()) + " (" +
                  onnx::TensorProto_DataType_Name(t.data_type()) +
                  ") is not supported for constants (float, double, float16 and integer types are)");
  }
  return c;
}

std::vector<int64_t> broadcast_dims(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                                    const std::string& what) {
  const size_t r = std::max(a.size(), b.size());
  std::vector<int64_t> out(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    const int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da != db && da != 1 && db != 1) {
      throw Error(ErrorCode::kFormat, what + ": shapes " + dims_text(a) + " and " + dims_text(b) + " do not broadcast");
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

namespace {

// Index of element i of a result of shape `out` in an operand of shape `d` (aligned right,
// size-1 axes broadcast).
int64_t broadcast_index(const std::vector<int64_t>& out, const std::vector<int64_t>& d, int64_t i) {
  const size_t r = out.size();
  int64_t idx = 0, stride = 1;
  for (size_t k = r; k-- > 0;) {
    const int64_t coord = i % out[k];
    i /= out[k];
    const size_t off = r - d.size();
    if (k >= off) {
      const int64_t dk = d[k - off];
      idx += (dk == 1 ? 0 : coord) * stride;
      stride *= dk;
    }
  }
  return idx;
}

}  // namespace

Constant fold_binary(ConstOp op, const Constant& a, const Constant& b, const std::string& what) {
  Constant c;
  c.dims = broadcast_dims(a.dims, b.dims, what);
  check_fold_size(c.dims, what);
  const int64_t n = count_of(c.dims, what);
  auto index_in = [&](const std::vector<int64_t>& d, int64_t i) { return broadcast_index(c.dims, d, i); };
  c.is_int = a.is_int && b.is_int && op != ConstOp::kPow;
  if (op == ConstOp::kMod && !c.is_int) throw Error(ErrorCode::kFormat, what + ": Mod of floating-point values needs fmod = 1");
  for (int64_t i = 0; i < n; ++i) {
    const int64_t ia = index_in(a.dims, i), ib = index_in(b.dims, i);
    if (c.is_int) {
      const int64_t x = a.int_at(ia), y = b.int_at(ib);
      if (x == kBatchMarker || y == kBatchMarker) {
        throw Error(ErrorCode::kUnsupported, what + ": arithmetic on the batch size cannot be folded at load time");
      }
      int64_t v = 0;
      bool overflow = false;
      switch (op) {
        case ConstOp::kAdd: overflow = __builtin_add_overflow(x, y, &v); break;
        case ConstOp::kSub: overflow = __builtin_sub_overflow(x, y, &v); break;
        case ConstOp::kMul: overflow = __builtin_mul_overflow(x, y, &v); break;
        case ConstOp::kDiv:
          if (y == 0) throw Error(ErrorCode::kFormat, what + ": integer division by zero");
          if (x == std::numeric_limits<int64_t>::min() && y == -1) overflow = true;
          else v = x / y;
          break;
        case ConstOp::kMin: v = std::min(x, y); break;
        case ConstOp::kMax: v = std::max(x, y); break;
        case ConstOp::kPow: break;
        case ConstOp::kMod:
        case ConstOp::kFmod:
          if (y == 0) throw Error(ErrorCode::kFormat, what + ": integer Mod by zero");
          v = y == -1 ? 0 : x % y;  // INT64_MIN % -1 overflows in C++
          if (op == ConstOp::kMod && v != 0 && (v < 0) != (y < 0)) v += y;
          break;
      }
      if (overflow) throw Error(ErrorCode::kLimit, what + ": integer overflow in constant arithmetic");
      c.ints.push_back(v);
    } else {
      const double x = a.real_at(ia), y = b.real_at(ib);
      double v = 0;
      switch (op) {
        case ConstOp::kAdd: v = x + y; break;
        case ConstOp::kSub: v = x - y; break;
        case ConstOp::kMul: v = x * y; break;
        case ConstOp::kDiv: v = x / y; break;
        case ConstOp::kMin: v = std::min(x, y); break;
        case ConstOp::kMax: v = std::max(x, y); break;
        case ConstOp::kPow: v = std::pow(x, y); break;
        case ConstOp::kMod:  // refused above
        case ConstOp::kFmod: v = std::fmod(x, y); break;
      }
      c.reals.push_back(v);
    }
  }
  return c;
}

Constant fold_gather(const Constant& data, const Constant& indices, int64_t axis, const std::string& what) {
  if (!indices.is_int) throw Error(ErrorCode::kFormat, what + ": Gather indices must be integers");
  if (data.dims.empty()) throw Error(ErrorCode::kFormat, what + ": Gather on a scalar");
  const int64_t a = normalise_axis(axis, data.dims.size(), what);
  const int64_t len = data.dims[static_cast<size_t>(a)];
  Constant c;
  c.is_int = data.is_int;
  c.dims.assign(data.dims.begin(), data.dims.begin() + a);
  c.dims.insert(c.dims.end(), indices.dims.begin(), indices.dims.end());
  c.dims.insert(c.dims.end(), data.dims.begin() + a + 1, data.dims.end());
  check_fold_size(c.dims, what);
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < a; ++k) outer *= data.dims[static_cast<size_t>(k)];
  for (size_t k = static_cast<size_t>(a) + 1; k < data.dims.size(); ++k) inner *= data.dims[k];
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < indices.size(); ++j) {
      int64_t idx = indices.int_at(j);
      if (idx < 0) idx += len;
      if (idx < 0 || idx >= len) {
        throw Error(ErrorCode::kFormat, what + ": Gather index " + std::to_string(indices.int_at(j)) +
                    " is out of range for an axis of length " + std::to_string(len));
      }
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t src = (o * len + idx) * inner + i;
        if (c.is_int) {
          c.ints.push_back(data.int_at(src));
        } else {
          c.reals.push_back(data.reals[static_cast<size_t>(src)]);
        }
      }
    }
  }
  return c;
}

Constant fold_concat(const std::vector<const Constant*>& parts, int64_t axis, const std::string& what) {
  if (parts.empty()) throw Error(ErrorCode::kFormat, what + ": Concat without inputs");
  const Constant& first = *parts[0];
  const int64_t a = normalise_axis(axis, std::max<size_t>(first.dims.size(), 1), what);
  Constant c;
  c.is_int = first.is_int;
  c.dims = first.dims.empty() ? std::vector<int64_t>{1} : first.dims;
  c.dims[static_cast<size_t>(a)] = 0;
  for (const Constant* p : parts) {
    std::vector<int64_t> d = p->dims.empty() ? std::vector<int64_t>{1} : p->dims;
    if (p->is_int != c.is_int) throw Error(ErrorCode::kFormat, what + ": Concat of integer and floating-point constants");
    if (d.size() != c.dims.size()) throw Error(ErrorCode::kFormat, what + ": Concat inputs of different ranks");
    for (size_t k = 0; k < d.size(); ++k) {
      if (static_cast<int64_t>(k) != a && d[k] != c.dims[k]) {
        throw Error(ErrorCode::kFormat, what + ": Concat inputs differ outside the concatenation axis: " + dims_text(first.dims) +
                    " and " + dims_text(p->dims));
      }
    }
    c.dims[static_cast<size_t>(a)] += d[static_cast<size_t>(a)];
  }
  int64_t outer = 1;
  for (int64_t k = 0; k < a; ++k) outer *= c.dims[static_cast<size_t>(k)];
  for (int64_t o = 0; o < outer; ++o) {
    for (const Constant* p : parts) {
      const int64_t chunk = p->size() / outer;
      for (int64_t i = 0; i < chunk; ++i) {
        if (c.is_int) {
          c.ints.push_back(p->int_at(o * chunk + i));
        } else {
          c.reals.push_back(p->reals[static_cast<size_t>(o * chunk + i)]);
        }
      }
    }
  }
  return c;
}

Constant fold_slice(const Constant& data, const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
                    const std::vector<int64_t>& axes_in, const std::vector<int64_t>& steps_in,
                    const std::string& what) {
  const size_t r = data.dims.size();
  std::vector<int64_t> begin(r, 0), step(r, 1), len = data.dims;
  std::vector<int64_t> axes = axes_in;
  if (axes.empty()) {
    for (size_t k = 0; k < starts.size(); ++k) axes.push_back(static_cast<int64_t>(k));
  }
  if (starts.size() != ends.size() || axes.size() != starts.size() ||
      (!steps_in.empty() && steps_in.size() != starts.size())) {
    throw Error(ErrorCode::kFormat, what + ": Slice starts, ends, axes and steps differ in length");
  }
  for (size_t k = 0; k < axes.size(); ++k) {
    const size_t a = static_cast<size_t>(normalise_axis(axes[k], r, what));
    const int64_t dim = data.dims[a];
    const int64_t s = steps_in.empty() ? 1 : steps_in[k];
    if (s == 0 || s == std::numeric_limits<int64_t>::min()) throw Error(ErrorCode::kFormat, what + ": Slice step " + std::to_string(s));
    auto clampi = [&](int64_t v, int64_t lo, int64_t hi) { return std::min(std::max(v, lo), hi); };
    int64_t st = starts[k], en = ends[k];
    if (st < 0) st += dim;
    if (en < 0 && en > std::numeric_limits<int64_t>::min() / 2) en += dim;
    if (s > 0) {
      st = clampi(st, 0, dim);
      en = clampi(en, 0, dim);
      len[a] = en > st ? (en - st - 1) / s + 1 : 0;
    } else {
      st = clampi(st, 0, dim - 1);
      en = clampi(en, -1, dim - 1);
      len[a] = st > en ? (st - en - 1) / (-s) + 1 : 0;
    }
    begin[a] = st;
    step[a] = s;
  }
  Constant c;
  c.is_int = data.is_int;
  c.dims = len;
  const int64_t n = count_of(c.dims, what);
  const std::vector<int64_t> src_strides = strides_of(data.dims);
  for (int64_t i = 0; i < n; ++i) {
    int64_t rem = i, src = 0;
    for (size_t k = r; k-- > 0;) {
      const int64_t coord = rem % len[k];
      rem /= len[k];
      src += (begin[k] + coord * step[k]) * src_strides[k];
    }
    if (c.is_int) {
      c.ints.push_back(data.int_at(src));
    } else {
      c.reals.push_back(data.reals[static_cast<size_t>(src)]);
    }
  }
  return c;
}

Constant fold_transpose(const Constant& data, std::vector<int64_t> perm, const std::string& what) {
  const size_t r = data.dims.size();
  if (perm.empty()) {
    for (size_t k = 0; k < r; ++k) perm.push_back(static_cast<int64_t>(r - 1 - k));
  }
  if (perm.size() != r) throw Error(ErrorCode::kFormat, what + ": Transpose perm has the wrong length");
  std::vector<bool> seen(r, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(r) || seen[static_cast<size_t>(p)]) {
      throw Error(ErrorCode::kFormat, what + ": Transpose perm is not a permutation");
    }
    seen[static_cast<size_t>(p)] = true;
  }
  Constant c;
  c.is_int = data.is_int;
  for (int64_t p : perm) c.dims.push_back(data.dims[static_cast<size_t>(p)]);
  const std::vector<int64_t> src_strides = strides_of(data.dims);
  const int64_t n = data.size();
  for (int64_t i = 0; i < n; ++i) {
    int64_t rem = i, src = 0;
    for (size_t k = r; k-- > 0;) {
      const int64_t coord = rem % c.dims[k];
      rem /= c.dims[k];
      src += coord * src_strides[static_cast<size_t>(perm[k])];
    }
    if (c.is_int) {
      c.ints.push_back(data.int_at(src));
    } else {
      c.reals.push_back(data.reals[static_cast<size_t>(src)]);
    }
  }
  return c;
}

Constant fold_cast(const Constant& c, bool to_int, const std::string& what) {
  Constant out;
  out.dims = c.dims;
  out.is_int = to_int;
  if (to_int) {
    if (c.is_int) {
      out.ints = c.ints;
    } else {
      for (double v : c.reals) {
        if (!std::isfinite(v) || std::fabs(v) > 9.2e18) throw Error(ErrorCode::kFormat, what + ": Cast of " + std::to_string(v) + " to an integer");
        out.ints.push_back(static_cast<int64_t>(v));
      }
    }
  } else {
    for (int64_t i = 0; i < c.size(); ++i) out.reals.push_back(c.real_at(i));
  }
  return out;
}

Constant fold_equal(const Constant& a, const Constant& b, const std::string& what) {
  Constant c;
  c.dims = broadcast_dims(a.dims, b.dims, what);
  check_fold_size(c.dims, what);
  const int64_t n = count_of(c.dims, what);
  c.is_int = true;  // bool as 0 / 1
  for (int64_t i = 0; i < n; ++i) {
    const int64_t ia = broadcast_index(c.dims, a.dims, i), ib = broadcast_index(c.dims, b.dims, i);
    if (a.is_int && b.is_int) {
      const int64_t x = a.int_at(ia), y = b.int_at(ib);
      // The batch size is known only at run time, but it is the same batch everywhere and at least
      // 1: it equals itself and no number below 1 (PyTorch's Expand writes Equal(shape, -1)).
      // Whether it equals a positive number depends on the request.
      if ((x == kBatchMarker) != (y == kBatchMarker)) {
        const int64_t other = x == kBatchMarker ? y : x;
        if (other >= 1) {
          throw Error(ErrorCode::kUnsupported, what + ": comparing the batch size with " + std::to_string(other) +
                                                   " cannot be folded at load time (the batch is known only per request)");
        }
      }
      c.ints.push_back(x == y);
    } else {
      c.ints.push_back(a.real_at(ia) == b.real_at(ib));
    }
  }
  return c;
}

Constant fold_where(const Constant& cond, const Constant& x, const Constant& y, const std::string& what) {
  Constant c;
  c.dims = broadcast_dims(broadcast_dims(cond.dims, x.dims, what), y.dims, what);
  check_fold_size(c.dims, what);
  const int64_t n = count_of(c.dims, what);
  c.is_int = x.is_int && y.is_int;
  for (int64_t i = 0; i < n; ++i) {
    const bool pick_x = cond.is_int ? cond.int_at(broadcast_index(c.dims, cond.dims, i)) != 0
                                    : cond.real_at(broadcast_index(c.dims, cond.dims, i)) != 0.0;
    const Constant& src = pick_x ? x : y;
    const int64_t k = broadcast_index(c.dims, src.dims, i);
    // Selecting carries a batch marker along unchanged, as a gather does.
    if (c.is_int) c.ints.push_back(src.int_at(k));
    else c.reals.push_back(src.real_at(k));
  }
  return c;
}

Constant fold_range(const Constant& start, const Constant& limit, const Constant& delta, const std::string& what) {
  for (const Constant* c : {&start, &limit, &delta}) {
    if (c->size() != 1) throw Error(ErrorCode::kFormat, what + ": Range takes scalars");
  }
  Constant c;
  c.is_int = start.is_int && limit.is_int && delta.is_int;
  const double s = start.real_at(0), l = limit.real_at(0), d = delta.real_at(0);
  if (d == 0 || !std::isfinite(s) || !std::isfinite(l) || !std::isfinite(d)) {
    throw Error(ErrorCode::kFormat, what + ": Range with delta 0 or a non-finite bound");
  }
  const double steps = std::ceil((l - s) / d);
  const int64_t n = steps > 0 ? static_cast<int64_t>(std::min(steps, static_cast<double>(kMaxFoldedElements) + 1)) : 0;
  c.dims = {n};
  check_fold_size(c.dims, what);
  for (int64_t i = 0; i < n; ++i) {
    if (c.is_int) c.ints.push_back(start.int_at(0) + i * delta.int_at(0));
    else c.reals.push_back(s + static_cast<double>(i) * d);
  }
  return c;
}

Constant fold_not(const Constant& c, const std::string& what) {
  if (!c.is_int) throw Error(ErrorCode::kFormat, what + ": Not takes a bool tensor");
  Constant out = c;
  out.elem_type = 0;
  for (int64_t& v : out.ints) v = v == 0 ? 1 : 0;
  return out;
}

Constant fold_trilu(const Constant& c, int64_t k, bool upper, const std::string& what) {
  if (c.dims.size() < 2) throw Error(ErrorCode::kFormat, what + ": Trilu needs a tensor of rank 2 or more");
  Constant out = c;
  out.elem_type = 0;
  const int64_t rows = c.dims[c.dims.size() - 2], cols = c.dims.back();
  for (int64_t i = 0; i < c.size(); ++i) {
    const int64_t col = i % cols, row = (i / cols) % rows;
    if (upper ? col - row >= k : col - row <= k) continue;
    if (out.is_int) out.ints[static_cast<size_t>(i)] = 0;
    else out.reals[static_cast<size_t>(i)] = 0.0;
  }
  return out;
}

Constant fold_scatter_nd(const Constant& data, const Constant& indices, const Constant& updates, const std::string& what) {
  if (!indices.is_int || indices.dims.empty()) throw Error(ErrorCode::kFormat, what + ": ScatterND indices must be integers of rank >= 1");
  const size_t k = static_cast<size_t>(indices.dims.back());
  if (k < 1 || k > data.dims.size()) throw Error(ErrorCode::kFormat, what + ": ScatterND index tuples longer than the data's rank");
  // updates: indices.dims[:-1] + data.dims[k:]; each tuple addresses a block of `block` elements.
  std::vector<int64_t> want(indices.dims.begin(), indices.dims.end() - 1);
  want.insert(want.end(), data.dims.begin() + static_cast<std::ptrdiff_t>(k), data.dims.end());
  if (updates.dims != want) throw Error(ErrorCode::kFormat, what + ": ScatterND updates do not have the shape indices and data give");
  int64_t block = 1;
  for (size_t a = k; a < data.dims.size(); ++a) block *= data.dims[a];
  Constant out = data;
  out.elem_type = 0;
  out.batch_broadcast = false;
  if (out.is_int != updates.is_int) {
    out = fold_cast(out, updates.is_int, what);
  }
  const int64_t tuples = block ? updates.size() / block : 0;
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t at = 0;
    for (size_t a = 0; a < k; ++a) {
      const int64_t dim = data.dims[a];
      int64_t i = indices.int_at(t * static_cast<int64_t>(k) + static_cast<int64_t>(a));
      if (i < 0) i += dim;
      if (i < 0 || i >= dim) throw Error(ErrorCode::kFormat, what + ": ScatterND index " + std::to_string(i) + " out of range");
      at = at * dim + i;
    }
    for (int64_t e = 0; e < block; ++e) {
      if (out.is_int) out.ints[static_cast<size_t>(at * block + e)] = updates.int_at(t * block + e);
      else out.reals[static_cast<size_t>(at * block + e)] = updates.real_at(t * block + e);
    }
  }
  return out;
}

}  // namespace nnd::onnx_import
