#include "soak_daemon.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <stdexcept>
#include <vector>

#include "tests/support/child_env.h"
#include "tests/support/monotonic_clock.h"

namespace nnd::soak {
namespace {

using test::now_ms;

std::string describe_status(int st) {
  if (WIFEXITED(st)) return "exited with code " + std::to_string(WEXITSTATUS(st));
  if (WIFSIGNALED(st)) return std::string("killed by signal ") + strsignal(WTERMSIG(st));
  return "ended (status " + std::to_string(st) + ")";
}

}  // namespace

DaemonProcess::DaemonProcess(std::string nnd_exe, std::string dir, std::string endpoint)
    : exe_(std::move(nnd_exe)), dir_(std::move(dir)), run_dir_(dir_ + "/run"),
      endpoint_(std::move(endpoint)), notify_path_(dir_ + "/notify.sock") {
  ::mkdir(run_dir_.c_str(), 0700);
  notify_fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (notify_path_.size() >= sizeof a.sun_path) throw std::runtime_error("work dir path too long");
  std::strncpy(a.sun_path, notify_path_.c_str(), sizeof a.sun_path - 1);
  ::unlink(notify_path_.c_str());
  if (notify_fd_ < 0 || ::bind(notify_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    throw std::runtime_error("cannot bind the notify socket " + notify_path_ + ": " +
                             std::strerror(errno));
  }
}

DaemonProcess::~DaemonProcess() {
  kill9();
  if (notify_fd_ >= 0) ::close(notify_fd_);
  ::unlink(notify_path_.c_str());
}

bool DaemonProcess::start(const std::string& config, int timeout_ms) {
  // Drain notifications a killed predecessor may have left queued.
  char buf[4096];
  while (::recv(notify_fd_, buf, sizeof buf, MSG_DONTWAIT) > 0) {
  }
  std::vector<std::string> envs = test::nnd_child_environment(notify_path_, run_dir_);
  const std::vector<char*> envp = test::exec_pointers(envs);
  std::vector<std::string> args{exe_, "--config", config};
  const std::vector<char*> argv = test::exec_pointers(args);
  const std::string log = log_path();
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0) return false;
  if (pid_ == 0) {
    // The daemon must not outlive nnd_soak (an interrupted soak would leave it serving).
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(126);
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    ::execve(exe_.c_str(), argv.data(), envp.data());
    ::_exit(127);
  }
  return !wait_for("READY=1", timeout_ms).empty();
}

std::string DaemonProcess::wait_for(const std::string& what, int timeout_ms) {
  const int64_t end = now_ms() + timeout_ms;
  for (;;) {
    const int64_t left = end - now_ms();
    if (left <= 0 || !alive()) return "";
    pollfd p{notify_fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 100))) <= 0) continue;
    char buf[4096];
    const ssize_t n = ::recv(notify_fd_, buf, sizeof buf - 1, 0);
    if (n <= 0) continue;
    std::string m(buf, static_cast<size_t>(n));
    if (m.find(what) != std::string::npos) return m;
  }
}

bool DaemonProcess::reload(int timeout_ms, bool* failed_reload, std::string* status) {
  *failed_reload = false;
  if (pid_ <= 0) return false;
  ::kill(pid_, SIGHUP);
  std::string m = wait_for("RELOADING=1", timeout_ms);
  if (m.empty()) return false;
  // RELOADING=1 and READY=1 may come in one datagram when the reload is quick.
  if (m.find("READY=1") == std::string::npos) m = wait_for("READY=1", timeout_ms);
  if (m.empty()) return false;
  const size_t s = m.find("STATUS=");
  *status = s == std::string::npos ? "" : m.substr(s + 7, m.find('\n', s) - (s + 7));
  *failed_reload = m.find("reload failed") != std::string::npos;
  return true;
}

bool DaemonProcess::alive() {
  if (pid_ <= 0) return false;
  int st = 0;
  if (::waitpid(pid_, &st, WNOHANG) == pid_) {
    exit_description_ = describe_status(st);
    pid_ = -1;
    return false;
  }
  return true;
}

void DaemonProcess::kill9() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int st = 0;
  ::waitpid(pid_, &st, 0);
  exit_description_ = describe_status(st);
  pid_ = -1;
}

int DaemonProcess::stop(int timeout_ms) {
  if (pid_ <= 0) return -1;
  ::kill(pid_, SIGTERM);
  const int64_t end = now_ms() + timeout_ms;
  int st = 0;
  pid_t w = 0;
  while ((w = ::waitpid(pid_, &st, WNOHANG)) == 0 && now_ms() < end) ::usleep(5000);
  if (w == 0) {
    kill9();
    return -1;
  }
  exit_description_ = describe_status(st);
  pid_ = -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

}  // namespace nnd::soak
