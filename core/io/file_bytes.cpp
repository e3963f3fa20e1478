#include "core/io/file_bytes.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <mutex>
#include <vector>

namespace nnd::h5 {

namespace {

// Buffers FileBytes gave back, for the next file any thread reads (the daemon compiles models on
// short-lived threads, so a per-thread pool would die with them). At most four are kept and none
// above kMaxPooledBytes, so a rare huge model does not stay resident.
constexpr size_t kMaxPooledBuffers = 4;
constexpr size_t kMaxPooledBytes = size_t{32} << 20;
constexpr size_t kBufferGranule = size_t{128} << 10;

struct BufferPool {
  std::mutex mutex;
  std::vector<FileBytes::Buffer> free;
  ~BufferPool() {
    for (const FileBytes::Buffer& b : free) munmap(b.addr, b.capacity);
  }
};
BufferPool& pool() {
  static BufferPool p;
  return p;
}

// A buffer of at least n bytes: the smallest pooled one that fits, or a new populated mapping.
FileBytes::Buffer take_buffer(size_t n) {
  {
    std::lock_guard<std::mutex> lock(pool().mutex);
    auto& free = pool().free;
    auto best = free.end();
    for (auto it = free.begin(); it != free.end(); ++it) {
      if (it->capacity >= n && (best == free.end() || it->capacity < best->capacity)) best = it;
    }
    if (best != free.end()) {
      const FileBytes::Buffer b = *best;
      free.erase(best);
      return b;
    }
  }
  const size_t cap = (n + kBufferGranule - 1) / kBufferGranule * kBufferGranule;
  void* addr = mmap(nullptr, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (addr == MAP_FAILED) return {};
  return {addr, cap};
}

}  // namespace

FileBytes FileBytes::read(const std::string& path, uint64_t max_bytes) {
  FileBytes out;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
      static_cast<uint64_t>(st.st_size) > max_bytes) {
    close(fd);
    return out;
  }
  const size_t n = static_cast<size_t>(st.st_size);
  out.buf_ = take_buffer(n);
  size_t done = 0;
  while (out.buf_.addr != nullptr && done < n) {
    const ssize_t r = ::read(fd, static_cast<uint8_t*>(out.buf_.addr) + done, n - done);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;  // an error, or the file shrank under us: fall back to HDF5's own reads
    done += static_cast<size_t>(r);
  }
  close(fd);
  if (done != n) {
    out.reset();
    return out;
  }
  out.size_ = n;
  return out;
}

void FileBytes::reset() {
  if (buf_.addr != nullptr) {
    bool kept = false;
    if (buf_.capacity <= kMaxPooledBytes) {
      std::lock_guard<std::mutex> lock(pool().mutex);
      if (pool().free.size() < kMaxPooledBuffers) {
        pool().free.push_back(buf_);
        kept = true;
      }
    }
    if (!kept) munmap(buf_.addr, buf_.capacity);
  }
  buf_ = {};
  size_ = 0;
}

}  // namespace nnd::h5
