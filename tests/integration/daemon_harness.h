// Shared harness of the integration tests: a temp folder with a private NND_RUNTIME_DIR, a
// test-owned NOTIFY_SOCKET, configs pointing at the example models by absolute path, a real `nnd`
// process started and stopped per test, and forked client processes with bounded waits.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/child_env.h"
#include "tests/support/monotonic_clock.h"

namespace nnd::integ {

namespace fs = std::filesystem;

inline const std::string kNnd = NND_EXE;
inline const fs::path kSource = NND_SOURCE_DIR;

inline std::string read_text(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

using test::now_us;

inline std::string model_path(const char* file) {
  return (kSource / "examples" / "models" / file).string();
}

// Bounded waits are multiplied by NND_TEST_TIMEOUT_SCALE (default 1): the ThreadSanitizer pass
// of scripts/test.sh runs everything 5-15x slower and sets it, so a wait that only guards against
// a hang does not turn slowness into a failure.
inline int64_t scaled_timeout_ms(int64_t timeout_ms) {
  static const int64_t scale = [] {
    const char* v = std::getenv("NND_TEST_TIMEOUT_SCALE");
    const long s = v ? std::strtol(v, nullptr, 10) : 1;
    return s >= 1 && s <= 100 ? int64_t{s} : int64_t{1};
  }();
  return timeout_ms * scale;
}

// Polls `cond` every 2 ms until it holds or `timeout_ms` (scaled) passes.
inline bool eventually(const std::function<bool()>& cond, int timeout_ms) {
  const int64_t end = now_us() + scaled_timeout_ms(timeout_ms) * 1000;
  for (;;) {
    if (cond()) return true;
    if (now_us() > end) return false;
    ::usleep(2000);
  }
}

// A forked child: runs fn, reports its text (a failure description, "" on success) through a
// pipe and exits with fn's return code. The parent collects it with a bounded wait.
struct Child {
  pid_t pid = -1;
  int out_fd = -1;   // parent's read end of the report pipe
  int sync_fd = -1;  // parent's read end of a "ready" pipe the child may write single bytes to
};

// In the child, `report` appends to the text sent back and `signal_ready` writes one byte.
struct ChildIo {
  int report_fd;
  int sync_fd;
  void report(const std::string& s) const { (void)!::write(report_fd, s.data(), s.size()); }
  void signal_ready() const {
    const char x = 1;
    (void)!::write(sync_fd, &x, 1);
  }
};

inline Child fork_child(const std::function<int(const ChildIo&)>& fn) {
  int rep[2], syn[2];
  if (::pipe2(rep, O_CLOEXEC) != 0 || ::pipe2(syn, O_CLOEXEC) != 0) return {};
  const pid_t pid = ::fork();
  if (pid == 0) {
    // A child must never outlive a test that failed before killing it: it would hold ctest's
    // output pipe open and stall the whole run until the ctest timeout.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::close(rep[0]);
    ::close(syn[0]);
    int rc = 1;
    try {
      rc = fn(ChildIo{rep[1], syn[1]});
    } catch (const std::exception& e) {
      ChildIo{rep[1], syn[1]}.report(std::string("exception: ") + e.what());
    }
    ::_exit(rc);  // no atexit handlers, no gtest teardown in the child
  }
  ::close(rep[1]);
  ::close(syn[1]);
  return Child{pid, rep[0], syn[0]};
}

// Waits for one byte from the child's ready pipe (false after timeout_ms or if it exited).
inline bool wait_ready(const Child& c, int timeout_ms) {
  pollfd p{c.sync_fd, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(scaled_timeout_ms(timeout_ms))) <= 0) return false;
  char x;
  return ::read(c.sync_fd, &x, 1) == 1;
}

struct ChildResult {
  bool exited = false;   // exited normally (not killed, not timed out)
  int code = -1;
  int signal = 0;
  std::string text;
};

// Waits up to timeout_ms for the child; SIGKILLs it after that (exited=false, text says so).
inline ChildResult collect(Child& c, int timeout_ms) {
  ChildResult r;
  const int64_t end = now_us() + scaled_timeout_ms(timeout_ms) * 1000;
  int st = 0;
  pid_t w = 0;
  while ((w = ::waitpid(c.pid, &st, WNOHANG)) == 0 && now_us() < end) ::usleep(2000);
  if (w == 0) {
    ::kill(c.pid, SIGKILL);
    ::waitpid(c.pid, &st, 0);
    r.text = "child timed out (killed); ";
  } else {
    r.exited = WIFEXITED(st);
    r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    r.signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
  }
  char buf[4096];
  ::fcntl(c.out_fd, F_SETFL, O_NONBLOCK);
  for (;;) {
    const ssize_t n = ::read(c.out_fd, buf, sizeof buf);
    if (n <= 0) break;
    r.text.append(buf, static_cast<size_t>(n));
  }
  ::close(c.out_fd);
  ::close(c.sync_fd);
  c.pid = -1;
  return r;
}

inline void kill_child(Child& c) {
  if (c.pid <= 0) return;
  ::kill(c.pid, SIGKILL);
  ::waitpid(c.pid, nullptr, 0);
  ::close(c.out_fd);
  ::close(c.sync_fd);
  c.pid = -1;
}

// One nnd process in a private folder.
// One ISA calibration cache per test process, shared by the daemons it starts and the engines it
// builds in-process for expected results (EngineOptions::isa_cache): isa auto then serves the
// same ISA in both. Measured separately, a near-tie (AVX2 and AVX-512 on the example ball model)
// can go either way, and the two ISAs' results differ in the last bits. Removed at exit.
inline const std::string& shared_isa_cache() {
  struct Owned {
    std::string path;
    ~Owned() {
      std::error_code ec;
      std::filesystem::remove(path, ec);
      std::filesystem::remove(path + ".lock", ec);
    }
  };
  static const Owned cache{(std::filesystem::temp_directory_path() /
                            ("nnd_test_isa_calibration_" + std::to_string(::getpid())))
                               .string()};
  return cache.path;
}

class Daemon {
 public:
  explicit Daemon(const std::string& tag) {
    static std::atomic<int> counter{0};
    const std::string id = std::to_string(::getpid()) + "_" + std::to_string(counter++);
    dir_ = fs::temp_directory_path() / ("nnd_it_" + tag + "_" + id);
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "run");
    endpoint_ = "it" + id;
    socket_path_ = (dir_ / "run" / (endpoint_ + ".sock")).string();
    notify_path_ = (dir_ / "notify.sock").string();
    notify_fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, notify_path_.c_str(), sizeof a.sun_path - 1);
    bind_ok_ = ::bind(notify_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  }
  ~Daemon() {
    kill9();
    if (notify_fd_ >= 0) ::close(notify_fd_);
    fs::remove_all(dir_);
  }
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // Writes dir/name: a `daemon:` section (endpoint + `daemon_extra` lines, each "  key: value\n")
  // and `models_yaml` (the list items under `models:`). The daemon shares this test process's ISA
  // calibration cache (shared_isa_cache()) unless daemon_extra names one.
  fs::path write_config(const std::string& name, const std::string& models_yaml,
                        const std::string& daemon_extra = "") {
    const fs::path p = dir_ / name;
    const fs::path tmp = dir_ / (name + ".tmp");
    {
      std::ofstream f(tmp);
      f << "daemon:\n  endpoint: " << endpoint_ << "\n"
        << (daemon_extra.find("log_level:") == std::string::npos ? "  log_level: debug\n" : "")
        << (daemon_extra.find("isa_calibration_cache:") == std::string::npos
                ? "  isa_calibration_cache: " + shared_isa_cache() + "\n"
                : "")
        << daemon_extra << "models:\n"
        << models_yaml;
    }
    fs::rename(tmp, p);  // atomic: a reload never reads a half-written file
    return p;
  }

  // Starts nnd on `config`; true once READY=1 arrived (within timeout_ms).
  bool start(const fs::path& config, int timeout_ms = 60000) {
    config_ = config;
    std::vector<std::string> envs = test::nnd_child_environment(notify_path_, (dir_ / "run").string());
    const std::vector<char*> envp = test::exec_pointers(envs);
    const std::string cfg = config.string();
    std::vector<char*> argv{const_cast<char*>(exe_.c_str()), const_cast<char*>("--config"),
                            const_cast<char*>(cfg.c_str())};
    for (auto& a : extra_args_) argv.push_back(a.data());
    argv.push_back(nullptr);
    const std::string err = (dir_ / "nnd.err").string();
    start_us_ = now_us();
    pid_ = ::fork();
    if (pid_ == 0) {
      if (address_space_limit_ > 0) {
        const rlimit lim{address_space_limit_, address_space_limit_};
        ::setrlimit(RLIMIT_AS, &lim);
      }
      const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      ::dup2(e, 1);
      ::dup2(e, 2);
      ::execve(exe_.c_str(), argv.data(), envp.data());
      ::_exit(127);
    }
    return !wait_for("READY=1", timeout_ms).empty();
  }

  // Reads notifications until one contains `what` ("" after timeout_ms or if nnd exited).
  std::string wait_for(const std::string& what, int timeout_ms) {
    const int64_t end = now_us() + scaled_timeout_ms(timeout_ms) * 1000;
    for (;;) {
      const int64_t left_ms = (end - now_us()) / 1000;
      if (left_ms <= 0 || !alive()) return "";
      pollfd p{notify_fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(std::min<int64_t>(left_ms, 100))) <= 0) continue;
      char buf[4096];
      const ssize_t n = ::recv(notify_fd_, buf, sizeof buf - 1, 0);
      if (n <= 0) continue;
      std::string m(buf, static_cast<size_t>(n));
      if (m.find(what) != std::string::npos) return m;
    }
  }

  // SIGHUP and wait for the READY=1 that ends the reload; false if it did not come or the reload
  // failed (nnd then still sends READY=1 but with a STATUS mentioning the failure).
  bool reload(int timeout_ms = 30000) {
    if (pid_ <= 0) return false;
    ::kill(pid_, SIGHUP);
    const std::string r = wait_for("RELOADING=1", timeout_ms);
    if (r.empty()) return false;
    last_reload_ = r.find("READY=1") != std::string::npos ? r : wait_for("READY=1", timeout_ms);
    return !last_reload_.empty();
  }

  bool alive() {
    if (pid_ <= 0) return false;
    int st = 0;
    const pid_t r = ::waitpid(pid_, &st, WNOHANG);
    if (r == pid_) {
      exit_status_ = st;
      pid_ = -1;
      return false;
    }
    return true;
  }

  void kill9() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
  }

  // SIGTERM and wait (bounded) for exit; returns the exit code (-1 on signal/timeout).
  int stop(int timeout_ms = 20000) {
    if (pid_ <= 0) return -1;
    ::kill(pid_, SIGTERM);
    const int64_t end = now_us() + scaled_timeout_ms(timeout_ms) * 1000;
    int st = 0;
    pid_t w = 0;
    while ((w = ::waitpid(pid_, &st, WNOHANG)) == 0 && now_us() < end) ::usleep(2000);
    if (w == 0) {
      kill9();
      return -1;
    }
    pid_ = -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }

  // Which nnd to start (default: the one of this build).
  void set_exe(const std::string& exe) { exe_ = exe; }
  // RLIMIT_AS for the daemon from its exec on (0: none), as `ulimit -v` would set it.
  void set_address_space_limit(rlim_t bytes) { address_space_limit_ = bytes; }
  // Extra arguments after `--config FILE` (e.g. --endpoint).
  void set_extra_args(std::vector<std::string> a) { extra_args_ = std::move(a); }

  std::string log() const { return read_text(dir_ / "nnd.err"); }
  const std::string& socket_path() const { return socket_path_; }
  const std::string& endpoint() const { return endpoint_; }
  const fs::path& dir() const { return dir_; }
  pid_t pid() const { return pid_; }
  bool notify_bound() const { return bind_ok_; }
  int64_t start_us() const { return start_us_; }
  const std::string& last_reload() const { return last_reload_; }

 private:
  fs::path dir_, config_;
  std::string exe_ = kNnd;
  std::vector<std::string> extra_args_;
  std::string endpoint_, socket_path_, notify_path_, last_reload_;
  int notify_fd_ = -1;
  bool bind_ok_ = false;
  pid_t pid_ = -1;
  int exit_status_ = 0;
  int64_t start_us_ = 0;
  rlim_t address_space_limit_ = 0;
};

}  // namespace nnd::integ
