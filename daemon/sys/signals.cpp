#include "daemon/sys/signals.h"

#include <pthread.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

namespace nnd::daemon {

namespace {
sigset_t daemon_sigset() {
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGHUP);
  sigaddset(&s, SIGTERM);
  sigaddset(&s, SIGINT);
  return s;
}
}  // namespace

void block_daemon_signals() {
  sigset_t s = daemon_sigset();
  pthread_sigmask(SIG_BLOCK, &s, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
}

SignalFd::SignalFd() {
  sigset_t s = daemon_sigset();
  fd_ = ::signalfd(-1, &s, SFD_NONBLOCK | SFD_CLOEXEC);
  if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "signalfd");
}

SignalFd::~SignalFd() {
  if (fd_ >= 0) ::close(fd_);
}

int SignalFd::read_signal() {
  struct signalfd_siginfo si {};
  const ssize_t n = ::read(fd_, &si, sizeof si);
  if (n != static_cast<ssize_t>(sizeof si)) return 0;
  return static_cast<int>(si.ssi_signo);
}

}  // namespace nnd::daemon
