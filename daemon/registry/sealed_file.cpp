#include "daemon/registry/sealed_file.h"


#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "daemon/base/file_kind.h"

#include "core/util/error.h"

namespace nnd::daemon {
namespace {

// Closes a descriptor on every path out of read().
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

std::string errno_text() { return std::strerror(errno); }

}  // namespace

SealedFile SealedFile::read(const std::string& path, uint64_t max_bytes) {
  // O_NONBLOCK: opening a FIFO for reading must not wait for a writer; it is refused below.
  FdCloser in{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
  if (in.fd < 0) throw Error(ErrorCode::kIo, path + ": cannot open: " + errno_text());
  struct stat st {};
  if (::fstat(in.fd, &st) != 0) throw Error(ErrorCode::kIo, path + ": cannot stat: " + errno_text());
  if (const auto kind = irregular_file_kind(in.fd)) {
    throw Error(ErrorCode::kIo, path + ": not a regular file (" + *kind + ")");
  }
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    throw Error(ErrorCode::kLimit, path + ": " + std::to_string(st.st_size) + " bytes, more than the " +
                std::to_string(max_bytes >> 20) + " MiB a model file may have");
  }
  const size_t n = static_cast<size_t>(st.st_size);

  SealedFile out;
  out.fd_ = ::memfd_create("nnd-model", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (out.fd_ < 0) throw Error(ErrorCode::kIo, path + ": memfd_create: " + errno_text());
  if (n > 0) {
    if (::ftruncate(out.fd_, static_cast<off_t>(n)) != 0) {
      throw Error(ErrorCode::kIo, path + ": cannot allocate " + std::to_string(n) + " bytes: " + errno_text());
    }
    // Read straight into a writable mapping (one copy), unmapped again before sealing: the
    // kernel refuses F_SEAL_WRITE while a shared writable mapping exists, in this process or in
    // any other. MADV_DONTFORK keeps it out of the children other threads fork meanwhile (the
    // model validators, `nnd --validate-model`): a child holds its copy of the mapping until it
    // execs, and the seal then failed with EBUSY (seen under valgrind, where exec is slow).
    void* w = ::mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_SHARED, out.fd_, 0);
    if (w == MAP_FAILED) throw Error(ErrorCode::kIo, path + ": mmap: " + errno_text());
    if (::madvise(w, n, MADV_DONTFORK) != 0) {
      const int e = errno;
      ::munmap(w, n);
      throw Error(ErrorCode::kIo, path + ": madvise(MADV_DONTFORK): " + std::strerror(e));
    }
    size_t done = 0;
    int err = 0;
    while (done < n) {
      const ssize_t r = ::read(in.fd, static_cast<char*>(w) + done, n - done);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) err = errno;
      if (r <= 0) break;
      done += static_cast<size_t>(r);
    }
    ::munmap(w, n);
    if (err != 0) throw Error(ErrorCode::kIo, path + ": cannot read: " + std::strerror(err));
    if (done != n) throw Error(ErrorCode::kIo, path + ": the file shrank while it was read; try again");
  }
  char extra;
  if (::read(in.fd, &extra, 1) > 0) throw Error(ErrorCode::kIo, path + ": the file grew while it was read; try again");
  if (::fcntl(out.fd_, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    throw Error(ErrorCode::kIo, path + ": cannot seal the copy: " + errno_text());
  }
  if (n > 0) {
    out.data_ = ::mmap(nullptr, n, PROT_READ, MAP_SHARED, out.fd_, 0);
    if (out.data_ == MAP_FAILED) {
      out.data_ = nullptr;
      throw Error(ErrorCode::kIo, path + ": mmap: " + errno_text());
    }
    out.size_ = n;
  }
  return out;
}

SealedFile::SealedFile(SealedFile&& o) noexcept
    : fd_(std::exchange(o.fd_, -1)), data_(std::exchange(o.data_, nullptr)),
      size_(std::exchange(o.size_, 0)) {}

SealedFile& SealedFile::operator=(SealedFile&& o) noexcept {
  if (this != &o) {
    reset();
    fd_ = std::exchange(o.fd_, -1);
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
  }
  return *this;
}

SealedFile::~SealedFile() { reset(); }

void SealedFile::reset() {
  if (data_ != nullptr) ::munmap(data_, size_);
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  data_ = nullptr;
  size_ = 0;
}

}  // namespace nnd::daemon
