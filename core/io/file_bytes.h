// FileBytes: a file's bytes read whole into memory through a small process-wide buffer pool
// (used by the HDF5 reader, core/io/hdf5_file.h, to hand libhdf5 the file in place).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace nnd::h5 {

// A file's bytes in memory, read into a buffer from a small process-wide pool and handed back to
// it on destruction: the next file loaded (the daemon's start-up, every reload) reuses pages that
// are already mapped and faulted in. New buffers are anonymous mappings populated up front, in
// steps of 128 KiB so one buffer serves models of similar sizes. (A fresh mapping per file cost a
// page fault per 4 KiB or, populated, an munmap that took a fifth of a small model's load time in
// a VM.)
class FileBytes {
 public:
  FileBytes() = default;
  // Reads `path` whole; empty (data() == nullptr) when it is not a regular file of at most
  // `max_bytes`, or cannot be read.
  static FileBytes read(const std::string& path, uint64_t max_bytes);
  FileBytes(FileBytes&& o) noexcept : buf_(o.buf_), size_(o.size_) {
    o.buf_ = {};
    o.size_ = 0;
  }
  FileBytes& operator=(FileBytes&& o) noexcept {
    if (this != &o) {
      reset();
      buf_ = o.buf_;
      size_ = o.size_;
      o.buf_ = {};
      o.size_ = 0;
    }
    return *this;
  }
  ~FileBytes() { reset(); }
  void reset();  // gives the buffer back to the pool (or unmaps it)

  void* data() const { return buf_.addr; }
  size_t size() const { return size_; }

  struct Buffer {
    void* addr = nullptr;
    size_t capacity = 0;
  };

 private:
  Buffer buf_;
  size_t size_ = 0;
};

}  // namespace nnd::h5
