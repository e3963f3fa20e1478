// nnd: the on-robot neural-network inference daemon.
//
//   nnd [--config FILE] [--endpoint NAME] [--log-level L]   serve (default config /etc/nnd/nnd.yaml)
//   nnd --check [FILE]                                     validate + compile, print the table
//                                                          (FILE defaults to the --config file)
//
// Lifecycle (see DESIGN.md "Lifecycle"):
//   startup   read the config, compile every model in parallel (each engine warmed up once), start
//             the IPC server, then READY=1. Here and on reload, every model file not loaded yet is
//             parsed by a child process first (daemon.validate_models: isolated; see
//             daemon/registry/model_validator.h): a file that crashes a parser fails its model
//             like any damaged file and never takes the daemon down.
//   SIGHUP    RELOADING=1 + MONOTONIC_USEC; a reload thread re-reads the config and compiles new or
//             changed models at low priority while the old set keeps serving; the new set is
//             published atomically (requests in flight finish on their version). On any failure
//             the old set stays, the reason goes to the log and STATUS=. READY=1 after, either way.
//             `nnctl reload` takes the same path.
//   SIGTERM/SIGINT  STOPPING=1, stop accepting, finish in-flight requests, remove the socket,
//             exit 0.
//   watchdog  WATCHDOG=1 every WATCHDOG_USEC/2 when systemd asks (and `daemon.watchdog` is on).
#include <CLI/CLI.hpp>

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <future>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "daemon/config/config.h"
#include "daemon/registry/model_set.h"
#include "daemon/registry/model_table.h"
#include "daemon/registry/model_validator.h"
#include "daemon/registry/registry_builder.h"
#include "daemon/sys/log.h"
#include "daemon/sys/notify.h"
#include "daemon/sys/privileges.h"
#include "daemon/sys/signals.h"
#include "nnd_version.h"

#ifdef NND_HAVE_IPC_SERVER
#include "daemon/ipc/server.h"
#endif

namespace nnd::daemon {
namespace {

struct CliOverrides {
  std::optional<std::string> endpoint;
  std::optional<LogLevel> log_level;
};

Config load_with_overrides(const std::string& path, const CliOverrides& o) {
  Config c = load_config(path);
  if (o.endpoint) c.daemon.endpoint = *o.endpoint;
  if (o.log_level) c.daemon.log_level = *o.log_level;
  return c;
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

// How new or changed model files are loaded (daemon.validate_models): `isolated` lets a child
// process parse each file before this process does; `in_process` loads it directly.
GraphLoader model_loader(const DaemonSettings& d, const LogFn& log) {
  if (!d.isolated_model_validation) return {};
  return isolated_graph_loader(ValidatorOptions{}, log);
}

// ---- nnd --check -------------------------------------------------------------------------------

int run_check(const std::string& path, const CliOverrides& o) {
  Config cfg;
  try {
    cfg = load_with_overrides(path, o);
  } catch (const ConfigError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    std::fprintf(stderr, "nnd --check: %s: %zu problem(s) in the config\n", path.c_str(),
                 e.issues().size());
    return 1;
  }
  std::printf("config %s: OK (endpoint %s -> %s, %u worker(s), %zu model(s))\n", path.c_str(),
              cfg.daemon.endpoint.c_str(), endpoint_socket_path(cfg.daemon.endpoint).c_str(),
              cfg.daemon.workers, cfg.models.size());
  std::fflush(stdout);
  BuildOptions bo;
  bo.log = [](LogLevel l, const std::string& m) {
    if (l <= LogLevel::kNotice ||
        (l == LogLevel::kInfo && (m.find("engine auto") != std::string::npos || m.find("': isa ") != std::string::npos))) {
      log(l, m);
    }
  };
  // Like the daemon: a file that crashes a parser is reported, not a crash of `nnd --check`.
  bo.load_graph = model_loader(cfg.daemon, bo.log);
  bo.isa_cache = isa_calibration_cache_path(cfg.daemon.isa_calibration_cache);
  try {
    BuildStats st;
    auto set = build_model_set(cfg.models, nullptr, bo, &st);
    std::printf("%s", format_model_table(*set).c_str());
    std::printf("all %zu model(s) compiled in %.1f ms (wall)\n", set->models.size(), st.wall_ms);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nnd --check: %s\n", e.what());
    return 1;
  }
}

// ---- the daemon --------------------------------------------------------------------------------

struct ReloadOutcome {
  bool ok = false;
  std::string message;
};

class Daemon {
 public:
  Daemon(std::string config_path, CliOverrides o)
      : config_path_(std::move(config_path)), overrides_(std::move(o)) {}

  ~Daemon() {
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
      bo.isa_cache = isa_calibration_cache_path(cfg_.daemon.isa_calibration_cache);
      if (bo.isa_cache.empty()) {
        log(LogLevel::kInfo, "isa auto: no calibration cache (daemon.isa_calibration_cache: " +
                                 cfg_.daemon.isa_calibration_cache + "); the choice is measured at every start");
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
    if (reload_thread_.joinable()) {
      log(LogLevel::kInfo, "waiting for the reload in progress to finish");
      finish_reload();
    }
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
    reload_thread_ = std::thread([this] { reload_worker(); });
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
                    "unchanged)",
                    std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                        .count(),
                    static_cast<unsigned long long>(set->generation), set->models.size(),
                    st.compiled, st.reused);
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
    if (!reload_thread_.joinable()) return;
    reload_thread_.join();
    ReloadOutcome out;
    std::vector<std::promise<ReloadOutcome>> waiters;
    {
      std::lock_guard<std::mutex> lk(mu_);
      out = last_reload_;
      reload_running_ = false;
      waiters = std::move(running_waiters_);
      running_waiters_.clear();
    }
#ifdef NND_HAVE_IPC_SERVER
    if (server_) server_->note_reload(out.ok);
#endif
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

  void warn_restart_only_changes(const DaemonSettings& n) {
    const DaemonSettings& o = cfg_.daemon;
    auto warn = [](const char* key) {
      logf(LogLevel::kWarning, "reload: daemon.%s changed; it takes effect at the next restart",
           key);
    };
    if (n.endpoint != o.endpoint) warn("endpoint");
    if (n.user != o.user) warn("user");
    if (n.group != o.group) warn("group");
    if (n.control_group != o.control_group) warn("control_group");
    if (n.socket_mode != o.socket_mode) warn("socket_mode");
    if (n.run_as != o.run_as || n.run_as_gid != o.run_as_gid) warn("run_as");
    if (n.workers != o.workers) warn("workers");
    if (n.cpu_affinity != o.cpu_affinity) warn("cpu_affinity");
    if (n.realtime_priority != o.realtime_priority) warn("realtime_priority");
    if (n.watchdog != o.watchdog) warn("watchdog");
    if (n.max_clients != o.max_clients) warn("max_clients");
    if (n.max_inflight_per_client != o.max_inflight_per_client) warn("max_inflight_per_client");
    if (n.slots_per_client != o.slots_per_client) warn("slots_per_client");
    if (n.spin_us != o.spin_us) warn("spin_us");
    if (n.max_request_bytes != o.max_request_bytes) warn("max_request_bytes");
    if (n.max_shared_memory_bytes != o.max_shared_memory_bytes) warn("max_shared_memory_bytes");
    if (n.handshake_timeout_ms != o.handshake_timeout_ms) warn("handshake_timeout_ms");
    if (n.max_pending_connections != o.max_pending_connections) warn("max_pending_connections");
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
#ifdef NND_HAVE_IPC_SERVER
    if (!create_server()) return false;
    try {
      server_->listen();
    } catch (const std::exception& e) {
      log(LogLevel::kError, std::string("cannot start the IPC server: ") + e.what());
      notify_status(std::string("cannot start the IPC server: ") + e.what());
      return false;
    }
#endif
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

#ifdef NND_HAVE_IPC_SERVER
  bool create_server();
  bool start_server();
  void stop_server();
  std::unique_ptr<Server> server_;
#else
  bool start_server() {
    log(LogLevel::kWarning, "this build has no IPC server; models are compiled but not served");
    return true;
  }
  void stop_server() {}
#endif

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

#ifdef NND_HAVE_IPC_SERVER
bool Daemon::create_server() {
  const DaemonSettings& d = cfg_.daemon;
  ServerOptions o;
  o.endpoint = d.endpoint;
  o.allowed_uid = d.uid;
  o.allowed_gid = d.gid;
  o.socket_mode = d.socket_mode;
  if (!d.run_as.empty()) o.run_as_uid = d.run_as_uid;
  o.workers = d.workers;
  o.cpu_affinity = d.cpu_affinity;
  o.realtime_priority = d.realtime_priority;
  o.max_clients = d.max_clients;
  o.max_inflight_per_client = d.max_inflight_per_client;
  o.slots_per_client = d.slots_per_client;
  o.spin_us = d.spin_us;
  o.max_request_bytes = d.max_request_bytes;
  o.max_shared_memory_bytes = d.max_shared_memory_bytes;
  o.handshake_timeout_ms = d.handshake_timeout_ms;
  o.max_pending_connections = d.max_pending_connections;
  o.control_gid = d.control_gid;
  o.version = NND_VERSION_STRING;
  o.git_revision = NND_GIT_REVISION;
  server_ = std::make_unique<Server>(o, registry_, [](int level, const std::string& m) {
    log(static_cast<LogLevel>(std::clamp(level, 3, 7)), m);
  });
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

bool Daemon::start_server() {
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

void Daemon::stop_server() {
  if (!server_) return;
  server_->stop();
  const ServerCounters c = server_->counters();
  logf(LogLevel::kInfo, "server stopped: %llu session(s) served, %llu request(s) dropped",
       static_cast<unsigned long long>(c.sessions_total),
       static_cast<unsigned long long>(c.requests_dropped));
  server_.reset();
}
#endif

}  // namespace
}  // namespace nnd::daemon

int main(int argc, char** argv) {
  using namespace nnd::daemon;
  // The daemon's model validator (a child process it starts; see model_validator.h): before
  // anything else, and not through CLI11, so that the child runs no code it does not need.
  if (argc >= 2 && std::strcmp(argv[1], kValidateModelFlag) == 0) {
    return run_model_validator(argc, argv);
  }
  CLI::App app{
      "nnd: the neural-network inference daemon.\n\n"
      "Reads a YAML config (see config/SCHEMA.md), compiles every model listed in it (in\n"
      "parallel; each engine runs one warm-up inference), then serves inference requests from\n"
      "libnnclient clients over shared memory on the configured endpoint. Logs go to stderr\n"
      "(sd-daemon level prefixes when stderr is the journal).\n\n"
      "Signals: SIGHUP re-reads the config and recompiles new or changed models while the old\n"
      "ones keep serving, then switches atomically (a failed reload keeps the old set);\n"
      "SIGTERM/SIGINT stop accepting, finish in-flight requests, remove the socket and exit 0.\n"
      "Under systemd (Type=notify) it sends READY=1, RELOADING=1, STOPPING=1, STATUS= and\n"
      "WATCHDOG=1 pings.\n\n"
      "Endpoint: a name maps to $NND_RUNTIME_DIR/<name>.sock (NND_RUNTIME_DIR defaults to\n"
      "/run/nnd when it exists, else /tmp); a value containing '/' is the socket path itself.\n\n"
      "Exit status: 0 after a clean shutdown or a passing --check; 1 on a config, model or\n"
      "start-up error; 2 on a usage error."};
  std::string config_path = kDefaultConfigPath;
  std::vector<std::string> check_files;
  std::string endpoint, level;
  app.add_option("-c,--config", config_path, "config file to serve (default /etc/nnd/nnd.yaml)");
  auto* check = app.add_option(
      "--check", check_files,
      "validate the config FILE (default: --config) and compile every model, print a table "
      "(model, inputs, outputs, parameters, FLOPs, compile ms, code bytes, engine) and exit: 0 "
      "if everything is fine, 1 on any problem");
  check->expected(0, 1);
  app.add_option("--endpoint", endpoint,
                 "override daemon.endpoint: a name (socket $NND_RUNTIME_DIR/NAME.sock) or a "
                 "socket path");
  app.add_option("--log-level", level, "override daemon.log_level")
      ->check(CLI::IsMember({"error", "warning", "notice", "info", "debug"}));
  app.set_version_flag("--version", NND_VERSION_TEXT("nnd"));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int r = app.exit(e);
    return r == 0 ? 0 : 2;
  }

  CliOverrides o;
  if (!endpoint.empty()) o.endpoint = endpoint;
  if (!level.empty()) {
    o.log_level = parse_log_level(level);
    set_log_level(*o.log_level);
  }
  if (check->count() > 0) {
    // A bare --check arrives as no value or as one empty string (CLI11 fills an expected(0,1)
    // vector option with ""), and means the --config file, like serving does: `nnd --check`
    // validates what `nnd` would serve.
    const bool bare = check_files.empty() || check_files.front().empty();
    return run_check(bare ? config_path : check_files.front(), o);
  }
  Daemon d(config_path, o);
  return d.run();
}
