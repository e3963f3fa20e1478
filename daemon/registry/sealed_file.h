// A model file's bytes, read once into a sealed memfd.
//
// The daemon lets a child process parse a model file before it parses the file itself
// (daemon/registry/model_validator.h). Both must see the same bytes, or a file replaced between
// the child's check and the daemon's load would reach the daemon's parsers unchecked. So the
// daemon reads the file exactly once, into an anonymous memory file whose content is then sealed
// (F_SEAL_WRITE, F_SEAL_SHRINK, F_SEAL_GROW, F_SEAL_SEAL: no process holding it, the child
// included, can change it any more); the child reads that descriptor as its stdin and the daemon
// loads from a read-only mapping of it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace nnd::daemon {

class SealedFile {
 public:
  // Reads `path` whole. Throws nnd::Error naming the file when it cannot be opened, is not a
  // regular file (a FIFO or a device is refused before anything is read from it), is larger than
  // `max_bytes`, or changes size while it is read.
  static SealedFile read(const std::string& path, uint64_t max_bytes);

  SealedFile() = default;
  SealedFile(SealedFile&& o) noexcept;
  SealedFile& operator=(SealedFile&& o) noexcept;
  SealedFile(const SealedFile&) = delete;
  SealedFile& operator=(const SealedFile&) = delete;
  ~SealedFile();

  int fd() const { return fd_; }                // close-on-exec; read-only content
  const void* data() const { return data_; }    // nullptr when the file is empty
  size_t size() const { return size_; }

 private:
  void reset();

  int fd_ = -1;
  void* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace nnd::daemon
