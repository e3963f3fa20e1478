#include "daemon/ipc/sleeper.h"

#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>

namespace nnd::daemon::ipc {
namespace {

constexpr uint64_t kWakeTag = ~uint64_t{0};  // the sessions' tags are their ids, from 1

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

// epoll_pwait2 for nanosecond timeouts where the kernel has it; epoll_wait (milliseconds,
// rounded up) otherwise.
int sleep_in_epoll(int epfd, epoll_event* ev, int max, int64_t timeout_ns) {
  if (timeout_ns < 0) return epoll_wait(epfd, ev, max, -1);
#ifdef SYS_epoll_pwait2
  static std::atomic<bool> no_pwait2{false};
  if (!no_pwait2.load(std::memory_order_relaxed)) {
    timespec ts{static_cast<time_t>(timeout_ns / 1'000'000'000), static_cast<long>(timeout_ns % 1'000'000'000)};
    const int n = epoll_pwait2(epfd, ev, max, &ts, nullptr);
    if (n >= 0 || errno != ENOSYS) return n;
    no_pwait2.store(true, std::memory_order_relaxed);
  }
#endif
  return epoll_wait(epfd, ev, max, static_cast<int>((timeout_ns + 999'999) / 1'000'000));
}

}  // namespace

void Sleeper::open(int64_t spin_ns) {
  spin_ns_ = spin_ns;
  open_epoll_with_wake(kWakeTag, &epfd_, &wake_fd_);
}

void Sleeper::close() {
  for (int* fd : {&epfd_, &wake_fd_}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
}

void Sleeper::watch(Session& s) {
  epoll_event e{};
  e.events = EPOLLIN;
  e.data.u64 = s.id;
  if (epoll_ctl(epfd_, EPOLL_CTL_ADD, s.seg->eventfd(), &e) == 0) s.in_epoll = true;
  nnd_ipc_daemon_set_sleeping(s.seg->header(), sleeping_ ? 1u : 0u);
}

void Sleeper::unwatch(Session& s) {
  if (s.in_epoll) epoll_ctl(epfd_, EPOLL_CTL_DEL, s.seg->eventfd(), nullptr);
  s.in_epoll = false;
}

bool Sleeper::should_spin(int64_t now, int64_t idle_since, int64_t next_due) const {
  return now - idle_since < spin_ns_ || (next_due != INT64_MAX && next_due - now <= spin_ns_);
}

void Sleeper::spin(std::unique_lock<std::mutex>& lk) const {
  lk.unlock();
  for (int i = 0; i < 16; ++i) cpu_relax();
  lk.lock();
}

void Sleeper::set_flags(const Sessions& sessions, uint32_t v) const {
  for (const auto& s : sessions) nnd_ipc_daemon_set_sleeping(s->seg->header(), v);
}

bool Sleeper::any_submit_pending(const Sessions& sessions) {
  for (const auto& s : sessions) {
    if (s->corrupt.load(std::memory_order_relaxed)) continue;
    if (s->submit.pending(s->seg->header())) return true;
  }
  return false;
}

bool Sleeper::sleep(std::unique_lock<std::mutex>& lk, const Sessions& sessions, int64_t timeout_ns) {
  set_flags(sessions, 1);
  sleeping_ = true;
  nnd_ipc_fence_seq_cst();
  if (any_submit_pending(sessions)) {
    set_flags(sessions, 0);
    sleeping_ = false;
    return false;
  }
  lk.unlock();
  const int n = sleep_in_epoll(epfd_, events_.data(), static_cast<int>(events_.size()), timeout_ns);
  lk.lock();
  // Drain the eventfds that fired. A session is looked up by id under the lock rather than by
  // descriptor: one that ended while we slept is gone from the list, and its descriptor number
  // may already belong to something else.
  for (int i = 0; i < n; ++i) {
    const uint64_t id = events_[i].data.u64;
    uint64_t v;
    if (id == kWakeTag) {
      (void)!read(wake_fd_, &v, sizeof(v));
      continue;
    }
    for (const auto& s : sessions) {
      if (s->id == id) {
        (void)!read(s->seg->eventfd(), &v, sizeof(v));
        break;
      }
    }
  }
  set_flags(sessions, 0);
  sleeping_ = false;
  return true;
}

void Sleeper::poke() const {
  const uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof(one));
}

}  // namespace nnd::daemon::ipc
