#include "daemon/registry/model_file_hash.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "core/util/error.h"
#include "daemon/base/file_kind.h"

namespace nnd::daemon {

uint64_t model_file_hash(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw Error(ErrorCode::kIo, path + ": cannot open: " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  if (const auto kind = irregular_file_kind(fd)) {
    throw Error(ErrorCode::kIo, path + ": not a regular file (" + *kind + ")");
  }
  // Eight bytes at a time: multiply-xorshift per word (as fast as the page cache delivers),
  // the length last so that trailing zero bytes count.
  uint64_t h = 0x9E3779B97F4A7C15ull, total = 0;
  std::vector<unsigned char> buf(1 << 20);
  size_t have = 0;  // bytes at the front of buf not hashed yet (fewer than 8 between reads)
  for (;;) {
    const ssize_t n = ::read(fd, buf.data() + have, buf.size() - have);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(ErrorCode::kIo, path + ": cannot read: " + std::strerror(errno));
    if (n == 0) break;
    have += static_cast<size_t>(n);
    total += static_cast<uint64_t>(n);
    size_t i = 0;
    for (; i + 8 <= have; i += 8) {
      uint64_t w;
      std::memcpy(&w, buf.data() + i, 8);
      h = (h ^ w) * 0xFF51AFD7ED558CCDull;
      h ^= h >> 29;
    }
    std::memmove(buf.data(), buf.data() + i, have - i);
    have -= i;
  }
  for (size_t i = 0; i < have; ++i) h = (h ^ buf[i]) * 0x100000001B3ull;
  h ^= total;
  h *= 0xC4CEB9FE1A85EC53ull;
  return h ^ (h >> 32);
}

}  // namespace nnd::daemon
