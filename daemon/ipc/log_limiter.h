// Log lines rate-limited per client and kind, so that a client cannot flood the journal: a
// member of the group who may not reload sent 379k-479k RELOAD messages in 2 s, each logged as
// a refusal (30-38 MB), bad hellos 22k lines, connect/close cycles 30k; under journald's own rate
// limit that drowns the real errors.
//
// A client is a peer uid (a process that forks or reconnects stays the same client); a kind is
// what happened ("reload refused", "hello refused", "connected", ...). Each (uid, kind) may log
// kBurst lines per kWindowNs; the ones over it are counted, and when the window ends one line
// says "uid U: N more like this suppressed in the last 5 s (<kind>)".
//
// Thread-safe (one mutex): the control thread and the reload thread log through it. flush() is
// the control thread's: it writes the summaries of windows that have ended and says when the
// next one ends, which bounds the control thread's sleep.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "daemon/ipc/server_support.h"

namespace nnd::daemon::ipc {

class LogLimiter {
 public:
  static constexpr int64_t kWindowNs = 5'000'000'000;
  static constexpr uint32_t kBurst = 10;
  // Clients tracked at once; beyond, every further uid shares one bucket per kind.
  static constexpr size_t kMaxBuckets = 4096;

  explicit LogLimiter(const Log& log) : log_(log) {}

  // Logs make_message() at `level` unless (uid, kind) has used up its lines in this window
  // (then make_message is not even called). `kind` is a string literal.
  template <typename MakeMessage>
  void log(uid_t uid, const char* kind, LogLevel level, int64_t now_ns, MakeMessage make_message) {
    if (admit(uid, kind, level, now_ns)) log_(level, make_message());
  }

  // Writes the summary line of every window that has ended with lines suppressed and forgets
  // the buckets whose window ended. Returns the nanoseconds until the next window with
  // suppressed lines ends (-1: none).
  int64_t flush(int64_t now_ns);

  uint64_t suppressed_total() const;  // lines suppressed since start

 private:
  struct Bucket {
    int64_t window_start = 0;
    uint32_t lines = 0;
    uint64_t suppressed = 0;
    LogLevel level = LogLevel::kInfo;
  };
  using Key = std::pair<uid_t, std::string>;

  bool admit(uid_t uid, const char* kind, LogLevel level, int64_t now_ns);
  void summarize(const Key& key, const Bucket& b) const;

  const Log& log_;
  mutable std::mutex mu_;
  std::map<Key, Bucket> buckets_;
  uint64_t suppressed_total_ = 0;
};

}  // namespace nnd::daemon::ipc
