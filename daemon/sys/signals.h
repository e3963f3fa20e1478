// Signal handling through signalfd: the signals are blocked in every thread (call
// block_daemon_signals() before starting any thread) and read as events by the main loop.
#pragma once

#include <csignal>

namespace nnd::daemon {

// Blocks SIGHUP, SIGTERM, SIGINT in the calling thread (threads created later inherit the mask)
// and ignores SIGPIPE (a client hanging up must not kill the daemon).
void block_daemon_signals();

// A signalfd for SIGHUP, SIGTERM and SIGINT (non-blocking, close-on-exec).
class SignalFd {
 public:
  SignalFd();
  ~SignalFd();
  SignalFd(const SignalFd&) = delete;
  SignalFd& operator=(const SignalFd&) = delete;

  int fd() const { return fd_; }
  // The next pending signal number, or 0 when none is pending.
  int read_signal();

 private:
  int fd_ = -1;
};

}  // namespace nnd::daemon
