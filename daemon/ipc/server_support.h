// What every unit of the IPC server shares: the log sink, the monotonic clock, the daemon-wide
// counters and the copy of text into the fixed-size fields of the wire structs.
#pragma once

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include "daemon/ipc/server.h"

namespace nnd::daemon::ipc {

// Short names for the levels the IPC units log at.
inline constexpr LogLevel kLogErr = LogLevel::kError, kLogWarn = LogLevel::kWarning,
                          kLogInfo = LogLevel::kInfo, kLogDebug = LogLevel::kDebug;

// The server's logger, or stderr when none was given. Immutable after construction, so any
// thread may log through it (the Logger must itself be thread-safe).
class Log {
 public:
  explicit Log(Logger sink) : sink_(std::move(sink)) {}
  void operator()(LogLevel level, const std::string& message) const {
    if (sink_) {
      sink_(level, message);
    } else {
      std::fprintf(stderr, "<%d>nnd: %s\n", static_cast<int>(level), message.c_str());
    }
  }

 private:
  Logger sink_;
};

inline int64_t mono_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// "what: strerror(errno)".
inline std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

// An epoll set with an eventfd in it (tagged `wake_tag`) that another thread writes to wake the
// thread waiting on the set; *epfd and *wake_fd get the descriptors. Throws std::runtime_error.
inline void open_epoll_with_wake(uint64_t wake_tag, int* epfd, int* wake_fd) {
  *epfd = epoll_create1(EPOLL_CLOEXEC);
  *wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (*epfd < 0 || *wake_fd < 0) throw std::runtime_error(errno_text("epoll/eventfd"));
  epoll_event e{};
  e.events = EPOLLIN;
  e.data.u64 = wake_tag;
  epoll_ctl(*epfd, EPOLL_CTL_ADD, *wake_fd, &e);
}

// Copies `src` into a fixed-size, NUL-terminated and NUL-padded wire field (truncating).
inline void copy_name(char* dst, size_t cap, std::string_view src) {
  const size_t n = std::min(cap - 1, src.size());
  std::memcpy(dst, src.data(), n);
  std::memset(dst + n, 0, cap - n);
}

// Daemon-wide figures (ServerCounters, NND_MSG_DAEMON_INFO). Atomics: written by whichever unit
// counts the event, read by anyone.
struct Counters {
  std::atomic<uint64_t> sessions{0};            // welcomed and not ended
  std::atomic<uint64_t> sessions_total{0};
  std::atomic<uint64_t> sessions_refused{0};
  std::atomic<uint64_t> sessions_corrupt{0};
  std::atomic<uint64_t> handshake_timeouts{0};
  std::atomic<uint64_t> pending_connections{0};
  std::atomic<uint64_t> requests_in_flight{0};
  std::atomic<uint64_t> requests_dropped{0};
  std::atomic<uint64_t> reloads{0};
  std::atomic<uint64_t> reloads_failed{0};
  // Bytes of all live segments. Shared with the sessions, which subtract their own bytes when
  // their segment is unmapped, possibly after the server is gone.
  std::shared_ptr<std::atomic<uint64_t>> shared_memory_bytes = std::make_shared<std::atomic<uint64_t>>(0);
  const int64_t started_ns = mono_ns();
};

}  // namespace nnd::daemon::ipc
