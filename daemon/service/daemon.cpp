#include "daemon/service/daemon.h"

#include <malloc.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <future>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "daemon/config/config.h"
#include "daemon/ipc/server.h"
#include "daemon/registry/model_set.h"
#include "daemon/registry/registry_builder.h"
#include "daemon/sys/log.h"
#include "daemon/sys/notify.h"
#include "daemon/sys/privileges.h"
#include "daemon/sys/signals.h"
#include "nnd_version.h"

namespace nnd::daemon {
namespace {

struct ReloadOutcome {
  bool ok = false;
  std::string message;
};

class DaemonRun {
 public:
  DaemonRun(std::string config_path, CliOverrides o)
      : config_path_(std::move(config_path)), overrides_(std::move(o)) {}

  ~DaemonRun() {
    if (reload_thread_.joinable()) reload_thread_.join();
    if (request_fd_ >= 0) ::close(request_fd_);
    if (done_fd_ >= 0) ::close(done_fd_);
  }

  int run() {
    // Signals first, before any thread exists, so every thread inherits the blocked mask.
    block_daemon_signals();
    SignalFd signals;
    request_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    done_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (request_fd_ < 0 || done_fd_ < 0) {
      log(LogLevel::kError, "eventfd failed");
      return 1;
    }

    try {
      cfg_ = load_with_overrides(config_path_, overrides_);
    } catch (const ConfigError& e) {
      log(LogLevel::kError, std::string("config: ") + e.what());
      notify_status("config error: " + first_line(e.what()));
      return 1;
    }
    set_log_level(cfg_.daemon.log_level);
    // The version first: a journal excerpt then says which build logged it.
    logf(LogLevel::kNotice,
         "starting: nnd %s (git %s), config %s, endpoint %s, %u worker(s), %zu model(s)",
         NND_VERSION_STRING, NND_GIT_REVISION, config_path_.c_str(),
         endpoint_socket_path(cfg_.daemon.endpoint).c_str(), cfg_.daemon.workers,
         cfg_.models.size());
    if (!cfg_.daemon.run_as.empty() && !switch_user()) return 1;
    notify_status("compiling " + std::to_string(cfg_.models.size()) + " model(s)");

    try {
      BuildOptions bo;
      bo.log = default_logger();
      bo.skip_failed = cfg_.daemon.skip_failed_models;
      bo.load_graph = model_loader(cfg_.daemon, bo.log);
      bo.max_model_memory_bytes = cfg_.daemon.max_model_memory_bytes;
      bo.isa_cache = isa_calibration_cache_path(cfg_.daemon.isa_calibration_cache);
      if (bo.isa_cache.empty()) {
        log(LogLevel::kInfo, "isa auto: no calibration cache (daemon.isa_calibration_cache: " +
                                 cfg_.daemon.isa_calibration_cache +
                                 "); the choice is measured at every start, and kept across reloads");
      } else {
        log(LogLevel::kInfo, "isa auto: calibration cache " + bo.isa_cache);
      }
      BuildStats st;
      registry_.publish(build_model_set(cfg_.models, nullptr, bo, &st));
      logf(LogLevel::kInfo, "compiled %zu model(s) in %.1f ms", st.compiled, st.wall_ms);
      for (const std::string& why : st.skipped) {
        log(LogLevel::kError, "not serving " + why + " (daemon.on_model_error: skip; fix the "
                              "file and reload)");
      }
      if (!st.skipped.empty()) {
        skipped_at_start_ = std::to_string(st.skipped.size()) + " model(s) failed to load";
      }
    } catch (const std::exception& e) {
      log(LogLevel::kError, std::string("startup failed: ") + e.what());
      notify_status("startup failed: " + first_line(e.what()));
      return 1;
    }

    if (!start_server()) return 1;

    const std::string ready = serving_status();
    notify_ready(ready);
    log(LogLevel::kNotice, "ready: " + ready);

    const uint64_t wd_us = cfg_.daemon.watchdog ? watchdog_ping_interval_us() : 0;
    if (wd_us > 0) {
      logf(LogLevel::kInfo, "watchdog: pinging every %.1f s", static_cast<double>(wd_us) / 1e6);
      notify_watchdog();
    }
    auto next_ping = std::chrono::steady_clock::now() + std::chrono::microseconds(wd_us);

    for (;;) {
      int timeout_ms = -1;
      if (wd_us > 0) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            next_ping - std::chrono::steady_clock::now());
        timeout_ms = static_cast<int>(std::max<int64_t>(0, left.count()));
      }
      struct pollfd fds[3] = {{signals.fd(), POLLIN, 0}, {request_fd_, POLLIN, 0},
                              {done_fd_, POLLIN, 0}};
      const int n = ::poll(fds, 3, timeout_ms);
      if (n < 0 && errno != EINTR) {
        log(LogLevel::kError, std::string("poll: ") + std::strerror(errno));
        break;
      }
      if (wd_us > 0 && std::chrono::steady_clock::now() >= next_ping) {
        notify_watchdog();
        next_ping = std::chrono::steady_clock::now() + std::chrono::microseconds(wd_us);
      }
      if (n <= 0) continue;
      bool stop = false;
      if (fds[0].revents & POLLIN) {
        while (int sig = signals.read_signal()) {
          if (sig == SIGHUP) {
            log(LogLevel::kNotice, "SIGHUP: reloading");
            request_reload_async();
          } else {
            logf(LogLevel::kNotice, "%s: shutting down", sig == SIGINT ? "SIGINT" : "SIGTERM");
            stop = true;
          }
        }
      }
      if (stop) break;
      if (fds[1].revents & POLLIN) {
        uint64_t v;
        [[maybe_unused]] ssize_t r = ::read(request_fd_, &v, sizeof v);
        maybe_start_reload();
      }
      if (fds[2].revents & POLLIN) {
        uint64_t v;
        [[maybe_unused]] ssize_t r = ::read(done_fd_, &v, sizeof v);
        finish_reload();
      }
    }

    notify_stopping("stopping");
    stopping_now_ = true;
    if (reload_thread_.joinable()) log(LogLevel::kInfo, "waiting for the reload in progress to finish");
    finish_reload();
    {
      // Anyone still waiting for a reload that will not happen now gets an answer.
      std::lock_guard<std::mutex> lk(mu_);
      stopping_ = true;
      for (auto& w : waiters_) w.set_value({false, "the daemon is shutting down"});
      waiters_.clear();
    }
    stop_server();
    log(LogLevel::kNotice, "stopped");
    return 0;
  }

  // Thread-safe: asks the main loop for a reload and returns at once. Used for SIGHUP.
  void request_reload_async() {
    {
      std::lock_guard<std::mutex> lk(mu_);
      reload_wanted_ = true;
    }
    wake(request_fd_);
  }

  // Thread-safe: asks for a reload and blocks until one that started after this call has
  // finished. Used for the `nnctl reload` control message.
  ReloadOutcome request_reload_and_wait() {
    std::future<ReloadOutcome> f;
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (stopping_) return {false, "the daemon is shutting down"};
      reload_wanted_ = true;
      waiters_.emplace_back();
      f = waiters_.back().get_future();
    }
    wake(request_fd_);
    return f.get();
  }

 private:
  static void wake(int fd) {
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t r = ::write(fd, &one, sizeof one);
  }

  std::string serving_status() const {
    auto set = registry_.current();
    std::string s = "serving " + std::to_string(set->models.size()) + " model(s), generation " +
                    std::to_string(set->generation) + " on " +
                    endpoint_socket_path(cfg_.daemon.endpoint);
    // Until a reload succeeds, STATUS= says that the start-up left models out.
    if (!skipped_at_start_.empty() && set->generation == 1) s += "; " + skipped_at_start_;
    return s;
  }

  // Main loop: start a reload if one is wanted and none is running.
  void maybe_start_reload() {
    std::lock_guard<std::mutex> lk(mu_);
    if (!reload_wanted_ || reload_running_) return;
    reload_wanted_ = false;
    reload_running_ = true;
    running_waiters_ = std::move(waiters_);
    waiters_.clear();
    notify_reloading("reloading " + config_path_);
    try {
      reload_thread_ = std::thread([this] { reload_worker(); });
    } catch (const std::exception& e) {
      // Out of threads or address space (a client's segments can fill it under RLIMIT_AS): this
      // reload fails, the served models keep serving, and the main loop reports it as any
      // failed reload.
      last_reload_ = {false, "reload failed, still serving the previous models: cannot start the "
                             "reload thread (" + std::string(daemon_error_code_name(DaemonErrorCode::kResource)) +
                             "): " + e.what()};
      wake(done_fd_);
    }
  }

  // Runs off the main loop and off the serving path (compile threads at nice 10).
  void reload_worker() {
    const auto t0 = std::chrono::steady_clock::now();
    ReloadOutcome out;
    try {
      Config next = load_with_overrides(config_path_, overrides_);
      warn_restart_only_changes(next.daemon);
      BuildOptions bo;
      const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
      bo.compile_threads = hw > cfg_.daemon.workers ? hw - cfg_.daemon.workers : 1;
      bo.low_priority = true;
      bo.log = default_logger();
      // The setting read now applies to the files this reload loads (a child inherits the
      // compile thread's nice 10).
      bo.load_graph = model_loader(next.daemon, bo.log);
      bo.max_model_memory_bytes = next.daemon.max_model_memory_bytes;
      bo.isa_cache = isa_calibration_cache_path(next.daemon.isa_calibration_cache);
      BuildStats st;
      auto old = registry_.current();
      auto set = build_model_set(next.models, old.get(), bo, &st);
      registry_.publish(set);
      // Only the log level applies at once; the other daemon settings need a restart.
      if (!overrides_.log_level) set_log_level(next.daemon.log_level);
      {
        std::lock_guard<std::mutex> lk(mu_);
        cfg_.models = next.models;
        cfg_.daemon.log_level = next.daemon.log_level;
      }
      char buf[256];
      std::snprintf(buf, sizeof buf,
                    "reload OK in %.1f ms: generation %llu, %zu model(s) (%zu compiled, %zu "
                    "unchanged%s)",
                    std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                        .count(),
                    static_cast<unsigned long long>(set->generation), set->models.size(),
                    st.compiled, st.reused,
                    st.rescheduled ? (", " + std::to_string(st.rescheduled) + " of them with new scheduling settings").c_str() : "");
      out.ok = true;
      out.message = buf;
    } catch (const std::exception& e) {
      out.ok = false;
      out.message = std::string("reload failed, still serving the previous models: ") + e.what();
    }
    {
      std::lock_guard<std::mutex> lk(mu_);
      last_reload_ = out;
    }
    wake(done_fd_);
  }

  // Main loop: join the reload thread, report, answer waiters, start the next one if wanted.
  void finish_reload() {
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (!reload_running_) return;
    }
    if (reload_thread_.joinable()) reload_thread_.join();  // none when it could not start
    ReloadOutcome out;
    std::vector<std::promise<ReloadOutcome>> waiters;
    {
      std::lock_guard<std::mutex> lk(mu_);
      out = last_reload_;
      reload_running_ = false;
      waiters = std::move(running_waiters_);
      running_waiters_.clear();
    }
    if (server_) server_->note_reload(out.ok);
    if (out.ok) return_freed_memory();
    if (out.ok) {
      log(LogLevel::kNotice, out.message);
      notify_ready(serving_status());
    } else {
      log(LogLevel::kError, out.message);
      notify_ready(first_line(out.message) + " (" + serving_status() + ")");
    }
    for (auto& w : waiters) w.set_value(out);
    if (!stopping_now_) maybe_start_reload();
  }

  // After a reload the replaced models are gone (the reload thread is joined and the dispatcher
  // let go of its snapshot; requests still in flight keep only their own version), but glibc
  // keeps the freed heap: back from 262 models to 2, RSS stayed at ten times its start-up figure.
  // malloc_trim hands the free pages of every arena back to the kernel.
  static void return_freed_memory() {
#ifdef __GLIBC__
    ::malloc_trim(0);
#endif
  }

  // The daemon settings a reload does not apply (all but log_level): a warning for each that
  // changed.
  void warn_restart_only_changes(const DaemonSettings& n) {
    const DaemonSettings& o = cfg_.daemon;
    auto warn = [](const std::string& key) {
      logf(LogLevel::kWarning, "reload: daemon.%s changed; it takes effect at the next restart",
           key.c_str());
    };
    for (const std::string& key : changed_serving_keys(o, n)) {
      // run_as is one setting in the config: its user and its group.
      if (key != "run_as") warn(key);
    }
    if (n.run_as_uid != o.run_as_uid || n.run_as_gid != o.run_as_gid) warn("run_as");
    if (n.watchdog != o.watchdog) warn("watchdog");
  }

  // daemon.run_as, started as root: bind the socket first (its directory may be root's, and
  // clients see the credentials of the listen() call: root's), then become the user for good,
  // before any model file is opened. Clients connecting meanwhile wait in the listen backlog.
  bool switch_user() {
    const DaemonSettings& d = cfg_.daemon;
    const RunAs target{d.run_as, *d.run_as_uid, *d.run_as_gid};
    try {
      if (!must_switch_user(target)) return true;
    } catch (const std::exception& e) {
      log(LogLevel::kError, e.what());
      notify_status(e.what());
      return false;
    }
    if (!create_server()) return false;
    try {
      server_->listen();
    } catch (const std::exception& e) {
      log(LogLevel::kError, std::string("cannot start the IPC server: ") + e.what());
      notify_status(std::string("cannot start the IPC server: ") + e.what());
      return false;
    }
    try {
      // SCHED_FIFO for the workers needs CAP_SYS_NICE: kept only when asked for.
      const std::string w = drop_privileges(target, d.realtime_priority > 0);
      if (!w.empty()) log(LogLevel::kWarning, w);
    } catch (const std::exception& e) {
      log(LogLevel::kError, std::string("cannot switch to daemon.run_as: ") + e.what());
      notify_status(std::string("cannot switch to daemon.run_as: ") + e.what());
      return false;
    }
    logf(LogLevel::kNotice, "dropped root: running as %s (uid %u, gid %u) from now on",
         d.run_as.c_str(), static_cast<unsigned>(target.uid), static_cast<unsigned>(target.gid));
    return true;
  }

  bool create_server();
  bool start_server();
  void stop_server();
  std::unique_ptr<Server> server_;

  std::string config_path_;
  CliOverrides overrides_;
  Config cfg_;
  std::string skipped_at_start_;  // "N model(s) failed to load" when start-up skipped models
  ModelRegistry registry_;
  int request_fd_ = -1;
  int done_fd_ = -1;

  std::mutex mu_;
  bool reload_wanted_ = false;
  bool reload_running_ = false;
  bool stopping_ = false;      // guarded by mu_
  bool stopping_now_ = false;  // main loop only
  std::vector<std::promise<ReloadOutcome>> waiters_;
  std::vector<std::promise<ReloadOutcome>> running_waiters_;
  ReloadOutcome last_reload_;
  std::thread reload_thread_;
};

bool DaemonRun::create_server() {
  const DaemonSettings& d = cfg_.daemon;
  ServerOptions o;
  static_cast<ServingSettings&>(o) = d;  // every serving setting, from its one definition
  if (d.run_as.empty()) o.run_as_uid.reset();
  o.version = NND_VERSION_STRING;
  o.git_revision = NND_GIT_REVISION;
  server_ = std::make_unique<Server>(o, registry_, default_logger());
  // `nnctl reload` takes the same path as SIGHUP and answers when that reload is done.
  server_->set_reload_callback([this] {
    const ReloadOutcome r = request_reload_and_wait();
    ReloadResult rr;
    rr.ok = r.ok;
    rr.message = r.message;
    return rr;
  });
  return true;
}

bool DaemonRun::start_server() {
  if (!server_ && !create_server()) return false;  // created early by switch_user()
  try {
    server_->start();
  } catch (const std::exception& e) {
    log(LogLevel::kError, std::string("cannot start the IPC server: ") + e.what());
    notify_status(std::string("cannot start the IPC server: ") + e.what());
    server_.reset();
    return false;
  }
  return true;
}

void DaemonRun::stop_server() {
  if (!server_) return;
  server_->stop();
  const ServerCounters c = server_->counters();
  logf(LogLevel::kInfo, "server stopped: %llu session(s) served, %llu request(s) dropped",
       static_cast<unsigned long long>(c.sessions_total),
       static_cast<unsigned long long>(c.requests_dropped));
  server_.reset();
}

}  // namespace

struct Daemon::Impl {
  DaemonRun run;
  Impl(std::string path, CliOverrides o) : run(std::move(path), std::move(o)) {}
};

Daemon::Daemon(std::string config_path, CliOverrides overrides)
    : impl_(std::make_unique<Impl>(std::move(config_path), std::move(overrides))) {}

Daemon::~Daemon() = default;

int Daemon::run() { return impl_->run.run(); }

}  // namespace nnd::daemon
