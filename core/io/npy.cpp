#include "core/io/npy.h"

#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include "core/util/checked_math.h"
#include "core/util/error.h"

namespace nnd {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

// The header is a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (3, 32, 32, 1), }
// NumPy always writes these three keys in this simple form; we accept exactly that grammar.
struct HeaderParser {
  const std::string& s;
  const std::string& name;
  size_t pos = 0;

  [[noreturn]] void fail(const std::string& what) const { fail(ErrorCode::kFormat, what); }
  [[noreturn]] void fail(ErrorCode code, const std::string& what) const {
    throw Error(code, name + ": malformed .npy header (" + what + "): " + s);
  }
  void skip_ws() {
    while (pos < s.size() && (s[pos] == ' ' || s[pos] == '\n' || s[pos] == '\t')) ++pos;
  }
  bool consume(char c) {
    skip_ws();
    if (pos < s.size() && s[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!consume(c)) fail(std::string("expected '") + c + "'");
  }
  std::string quoted() {
    skip_ws();
    if (pos >= s.size() || (s[pos] != '\'' && s[pos] != '"')) fail("expected a string");
    char q = s[pos++];
    size_t end = s.find(q, pos);
    if (end == std::string::npos) fail("unterminated string");
    std::string out = s.substr(pos, end - pos);
    pos = end + 1;
    return out;
  }
  bool boolean() {
    skip_ws();
    if (s.compare(pos, 4, "True") == 0) { pos += 4; return true; }
    if (s.compare(pos, 5, "False") == 0) { pos += 5; return false; }
    fail("expected True or False");
  }
  std::vector<int64_t> tuple() {
    std::vector<int64_t> out;
    expect('(');
    while (!consume(')')) {
      skip_ws();
      if (pos >= s.size() || s[pos] < '0' || s[pos] > '9') fail("expected a dimension");
      int64_t v = 0;
      while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
        if (v > kMaxElements) fail(ErrorCode::kLimit, "dimension too large");
        v = v * 10 + (s[pos++] - '0');
      }
      out.push_back(v);
      if (!consume(',')) {
        expect(')');
        break;
      }
    }
    return out;
  }
};

}  // namespace

int64_t NpyArray::element_count() const {
  int64_t n = 1;
  for (int64_t d : shape) n = checked_mul(n, d, "npy shape");
  return n;
}

NpyArray parse_npy(const uint8_t* data, size_t size, const std::string& name) {
  if (size < kMagicLen + 4 || std::memcmp(data, kMagic, kMagicLen) != 0) {
    throw Error(ErrorCode::kFormat, name + ": not a .npy file (missing \\x93NUMPY magic)");
  }
  const uint8_t major = data[6];
  size_t header_len = 0, offset = 0;
  if (major == 1) {
    header_len = data[8] | (size_t{data[9]} << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12) throw Error(ErrorCode::kFormat, name + ": truncated .npy header");
    header_len = data[8] | (size_t{data[9]} << 8) | (size_t{data[10]} << 16) |
                 (size_t{data[11]} << 24);
    offset = 12;
  } else {
    throw Error(ErrorCode::kUnsupported, name + ": unsupported .npy format version " + std::to_string(major));
  }
  if (header_len > size - offset) throw Error(ErrorCode::kFormat, name + ": truncated .npy header");
  const std::string header(reinterpret_cast<const char*>(data + offset), header_len);

  HeaderParser p{header, name};
  std::string descr;
  bool fortran = false, have_descr = false, have_order = false, have_shape = false;
  NpyArray arr;
  p.expect('{');
  while (!p.consume('}')) {
    std::string key = p.quoted();
    p.expect(':');
    if (key == "descr") {
      descr = p.quoted();
      have_descr = true;
    } else if (key == "fortran_order") {
      fortran = p.boolean();
      have_order = true;
    } else if (key == "shape") {
      arr.shape = p.tuple();
      have_shape = true;
    } else {
      p.fail("unknown key '" + key + "'");
    }
    if (!p.consume(',')) {
      p.expect('}');
      break;
    }
  }
  if (!have_descr || !have_order || !have_shape) p.fail("missing descr, fortran_order or shape");
  if (fortran) throw Error(ErrorCode::kUnsupported, name + ": Fortran-ordered arrays are not supported; save in C order");

  size_t elem_size = 0;
  if (descr == "<f4") {
    arr.dtype = DType::kFloat32;
    elem_size = 4;
  } else if (descr == "|u1" || descr == "<u1" || descr == "u1") {
    arr.dtype = DType::kUInt8;
    elem_size = 1;
  } else if (descr == "<i8") {
    arr.dtype = DType::kInt64;
    elem_size = 8;
  } else {
    throw Error(ErrorCode::kUnsupported, name + ": unsupported dtype '" + descr +
                "'; nnd reads float32 ('<f4'), uint8 ('|u1') or int64 ('<i8') arrays");
  }
  int64_t count = 1;
  for (int64_t d : arr.shape) count = checked_mul(count, d, name + ": shape " + dims_to_string(arr.shape));
  const size_t nbytes = static_cast<size_t>(count) * elem_size;
  const size_t body = offset + header_len;
  if (size - body < nbytes) {
    throw Error(ErrorCode::kFormat, name + ": truncated .npy data: shape " + dims_to_string(arr.shape) + " needs " +
                std::to_string(nbytes) + " bytes, file has " + std::to_string(size - body));
  }
  if (size - body > nbytes) {
    throw Error(ErrorCode::kFormat, name + ": .npy file has " + std::to_string(size - body - nbytes) +
                " bytes after the data of shape " + dims_to_string(arr.shape));
  }
  arr.bytes.assign(data + body, data + body + nbytes);
  return arr;
}

NpyArray read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorCode::kIo, path + ": cannot open: " + std::strerror(errno));
  std::vector<uint8_t> buf((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return parse_npy(buf.data(), buf.size(), path);
}

void write_npy_f32(const std::string& path, const std::vector<int64_t>& shape, const float* data) {
  write_npy(path, shape, DType::kFloat32, data);
}

void write_npy(const std::string& path, const std::vector<int64_t>& shape, DType dtype, const void* data) {
  const char* descr = dtype == DType::kUInt8 ? "|u1" : dtype == DType::kInt64 ? "<i8" : "<f4";
  if (dtype != DType::kFloat32 && dtype != DType::kUInt8 && dtype != DType::kInt64) {
    throw Error(ErrorCode::kInternal, path + ": no .npy writer for " + std::string(dtype_name(dtype)));
  }
  std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (";
  int64_t count = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    header += std::to_string(shape[i]);
    if (shape.size() == 1 || i + 1 < shape.size()) header += ",";
    if (i + 1 < shape.size()) header += " ";
    count = checked_mul(count, shape[i], path + ": shape");
  }
  header += "), }";
  // Pad with spaces so that magic + length + header + '\n' is a multiple of 64 (NumPy's rule).
  const size_t total = kMagicLen + 4 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';

  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error(ErrorCode::kIo, path + ": cannot create: " + std::strerror(errno));
  const char prefix[] = {'\x93', 'N', 'U', 'M', 'P', 'Y', 1, 0,
                         static_cast<char>(header.size() & 0xff),
                         static_cast<char>(header.size() >> 8)};
  out.write(prefix, sizeof prefix);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(count * static_cast<int64_t>(dtype_bytes(dtype))));
  if (!out) throw Error(ErrorCode::kIo, path + ": write failed");
}

}  // namespace nnd
