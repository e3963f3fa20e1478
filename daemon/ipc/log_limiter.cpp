#include "daemon/ipc/log_limiter.h"

namespace nnd::daemon::ipc {

namespace {
constexpr uid_t kOverflowUid = static_cast<uid_t>(-2);  // the bucket of uids past kMaxBuckets
}  // namespace

bool LogLimiter::admit(uid_t uid, const char* kind, LogLevel level, int64_t now_ns) {
  std::lock_guard lk(mu_);
  Key key{uid, kind};
  auto it = buckets_.find(key);
  if (it == buckets_.end()) {
    if (buckets_.size() >= kMaxBuckets) key.first = kOverflowUid;
    it = buckets_.try_emplace(std::move(key)).first;
    it->second.window_start = now_ns;
  }
  Bucket& b = it->second;
  if (now_ns - b.window_start >= kWindowNs) {
    if (b.suppressed) summarize(it->first, b);
    b = Bucket{};
    b.window_start = now_ns;
  }
  b.level = level;
  if (b.lines < kBurst) {
    ++b.lines;
    return true;
  }
  ++b.suppressed;
  ++suppressed_total_;
  return false;
}

void LogLimiter::summarize(const Key& key, const Bucket& b) const {
  const std::string who = key.first == kOverflowUid ? "other clients" : "uid " + std::to_string(key.first);
  log_(b.level, who + ": " + std::to_string(b.suppressed) + " more like this suppressed in the last " +
                    std::to_string(kWindowNs / 1'000'000'000) + " s (" + key.second + ")");
}

int64_t LogLimiter::flush(int64_t now_ns) {
  std::lock_guard lk(mu_);
  int64_t next = -1;
  for (auto it = buckets_.begin(); it != buckets_.end();) {
    const Bucket& b = it->second;
    const int64_t left = b.window_start + kWindowNs - now_ns;
    if (left > 0) {
      if (b.suppressed && (next < 0 || left < next)) next = left;
      ++it;
      continue;
    }
    if (b.suppressed) summarize(it->first, b);
    it = buckets_.erase(it);
  }
  return next;
}

uint64_t LogLimiter::suppressed_total() const {
  std::lock_guard lk(mu_);
  return suppressed_total_;
}

}  // namespace nnd::daemon::ipc
