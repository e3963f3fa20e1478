#include "core/io/model_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>

#include "core/io/keras_archive.h"
#include "core/io/keras_hdf5.h"
#include "core/io/onnx_loader.h"
#include "core/util/error.h"

namespace nnd {
namespace {

bool starts_with(const unsigned char* p, size_t n, const char* prefix, size_t len) {
  return n >= len && std::memcmp(p, prefix, len) == 0;
}

// A protobuf message starts with a field tag: a field number >= 1 and wire type 0 (varint) or 2
// (length-delimited). ModelProto's fields (ir_version = 1, opset_import = 8, producer_name = 2,
// graph = 7, ...) are all small numbers; any other first byte is not an ONNX file.
bool looks_like_onnx(const unsigned char* p, size_t n) {
  if (n < 2) return false;
  const unsigned field = p[0] >> 3, wire = p[0] & 7u;
  return field >= 1 && field <= 20 && (wire == 0 || wire == 2);
}

// The formats no loader takes: the message says what the file is instead.
[[noreturn]] void reject(FileKind format, const std::string& name) {
  switch (format) {
    case FileKind::kEmpty:
      throw Error(ErrorCode::kFormat, name + ": the file is empty");
    case FileKind::kGitLfsPointer:
      throw Error(ErrorCode::kFormat, name + ": this is a Git LFS pointer, not the model: fetch the file with `git lfs pull`");
    default:
      throw Error(ErrorCode::kFormat, name + ": not a model file nnd reads (Keras .h5 or ONNX .onnx, recognised by content)");
  }
}

}  // namespace

FileKind sniff_file_kind(const void* head, size_t size) {
  const auto* p = static_cast<const unsigned char*>(head);
  if (size == 0) return FileKind::kEmpty;
  if (starts_with(p, size, "\x89HDF\r\n\x1a\n", 8)) return FileKind::kKerasH5;
  if (starts_with(p, size, "PK\x03\x04", 4)) return FileKind::kZip;
  if (starts_with(p, size, "version https://git-lfs.github.com/spec", 39)) return FileKind::kGitLfsPointer;
  if (looks_like_onnx(p, size)) return FileKind::kOnnx;
  return FileKind::kUnknown;
}

Graph load_model(const std::string& path) {
  unsigned char head[64];
  ssize_t n = 0;
  {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) throw Error(ErrorCode::kIo, path + ": cannot open: " + std::strerror(errno));
    n = ::read(fd, head, sizeof head);
    const int err = errno;
    ::close(fd);
    if (n < 0) throw Error(ErrorCode::kIo, path + ": cannot read: " + std::strerror(err));
  }
  const FileKind format = sniff_file_kind(head, static_cast<size_t>(n));
  switch (format) {
    case FileKind::kKerasH5:
      return load_keras_h5(path);
    case FileKind::kOnnx:
      return load_onnx(path);
    case FileKind::kZip:
      return load_keras_archive(path);  // says so when the zip is no Keras archive
    default:
      reject(format, path);
  }
}

Graph load_model_bytes(const void* data, size_t size, const std::string& name) {
  const FileKind format = sniff_file_kind(data, size);
  switch (format) {
    case FileKind::kKerasH5:
      return load_keras_h5_image(data, size, name);
    case FileKind::kOnnx:
      return load_onnx_bytes(data, size, name);
    case FileKind::kZip:
      return load_keras_archive_bytes(data, size, name);
    default:
      reject(format, name);
  }
}

}  // namespace nnd
