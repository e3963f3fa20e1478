// The spin-then-sleep protocol of the poller (the one worker at a time that polls the submit
// rings), the daemon's half of the wake-up protocol of ipc/nnd_ipc.h:
//
//   nothing to do -> spin for spin_ns (0 when the daemon may use only one CPU)
//                 -> set daemon_sleeping = 1 in every client's header
//                 -> seq_cst fence, re-check every submit ring (a client that pushed before it
//                    could see the flag is caught here; one that pushes after sees the flag and
//                    writes its eventfd)
//                 -> sleep in epoll on the clients' eventfds (and a wake eventfd of the daemon's
//                    own), with a timeout only while a batching delay or deadline is pending
//                 -> drain the eventfds that fired, set daemon_sleeping = 0 everywhere.
// So idle clients cost no CPU and no timer, and a busy client makes no system call.
//
// Threads and locks: every method except poke(), open() and close() is called by the poller
// with the dispatch mutex held (the Dispatcher's `mu`), which also guards the session list the
// methods are given and Session::in_epoll; sleep() and spin() release it while they wait.
// watch()/unwatch() are called by the control thread, also under the dispatch mutex.
#pragma once

#include <sys/epoll.h>

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "daemon/ipc/session.h"

namespace nnd::daemon::ipc {

class Sleeper {
 public:
  using Sessions = std::vector<std::shared_ptr<Session>>;

  Sleeper() = default;
  ~Sleeper() { close(); }
  Sleeper(const Sleeper&) = delete;
  Sleeper& operator=(const Sleeper&) = delete;

  // Creates the epoll set and the wake eventfd; throws std::runtime_error. `spin_ns` is how long
  // the poller spins before it sleeps.
  void open(int64_t spin_ns);
  void close();  // closes the descriptors (after every thread that uses them has stopped)

  // Adds a session's eventfd to the set and sets its daemon_sleeping flag to the poller's state
  // (an awake poller re-checks every ring before it sleeps, so the client need not wake it).
  void watch(Session& s);
  void unwatch(Session& s);

  // Whether the poller, idle since `idle_since`, should still spin at `now` rather than sleep
  // (also when the next queue becomes due within the spin time).
  bool should_spin(int64_t now, int64_t idle_since, int64_t next_due) const;
  // One short spin with the lock released.
  void spin(std::unique_lock<std::mutex>& lk) const;

  // The protocol above. Returns false at once (nothing slept, flags cleared) when the re-check
  // finds a submitted request; true after a wake-up, a poke() or the timeout (`timeout_ns` < 0:
  // none).
  bool sleep(std::unique_lock<std::mutex>& lk, const Sessions& sessions, int64_t timeout_ns);

  // Wakes a sleeping poller (stop()). Any thread.
  void poke() const;

 private:
  void set_flags(const Sessions& sessions, uint32_t v) const;
  static bool any_submit_pending(const Sessions& sessions);

  int epfd_ = -1;
  int wake_fd_ = -1;
  int64_t spin_ns_ = 0;
  bool sleeping_ = false;  // the poller is (about to be) asleep; dispatch mutex
  std::array<epoll_event, 16> events_{};  // the poller's; only one poller sleeps at a time
};

}  // namespace nnd::daemon::ipc
