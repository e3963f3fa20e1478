#include "daemon/ipc/server.h"

#include <sched.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "daemon/ipc/control_plane.h"
#include "daemon/ipc/dispatcher.h"
#include "daemon/ipc/server_support.h"
#include "daemon/ipc/socket_setup.h"
#include "daemon/base/daemon_error.h"
#include "ipc/nnd_ipc.h"

// The Server wires the units of daemon/ipc together; each says which thread runs it and which
// lock guards what:
//   ControlPlane (control_plane.h)  the control thread: accept, hand-shake, control messages
//   ReloadQueue  (reload_queue.h)   the reload thread: nnctl reload requests, one run at a time
//   Dispatcher   (dispatcher.h)     the workers: ingest, scheduling, finishing requests
//   BatchRunner  (batch_runner.h)   gather, engine call, scatter (one per worker)
//   Sleeper      (sleeper.h)        the poller's spin-then-sleep protocol
//   Session      (session.h)        one client: socket, segment, rings, slot records
// Here: binding the socket, the descriptor budget, start/stop order and the counters.

namespace nnd::daemon {

namespace {

constexpr LogLevel kWarn = ipc::kLogWarn, kInfo = ipc::kLogInfo;
using ipc::errno_text;

}  // namespace

struct Server::Impl {
  ServerOptions opt;
  ModelRegistry& registry;
  ipc::Log log;
  std::string path;
  uint64_t instance_id = 0;
  ipc::Counters counters;
  sched::ModelStatsTable stats;
  ipc::Dispatcher dispatcher;
  ipc::ControlPlane control;
  int listen_fd = -1;
  bool started = false, stopped = false;
  // Descriptors besides the sessions': listen socket, epolls, wake fds, logs, model files.
  static constexpr rlim_t kReservedDescriptors = 32;

  Impl(ServerOptions o, ModelRegistry& r, Logger l, uint64_t instance)
      : opt(std::move(o)),
        registry(r),
        log(std::move(l)),
        instance_id(instance),
        dispatcher(opt, registry, log, counters, stats),
        control(opt, registry, log, counters, stats, dispatcher, instance_id) {}
  ~Impl() {
    control.stop();
    if (listen_fd >= 0) close(listen_fd);
  }

  void ensure_descriptor_budget();
  void bind_socket();
};

// ---- socket setup -----------------------------------------------------------------------------

// The checks (directory, stale or foreign socket) and the bind live in socket_setup.cpp.
void Server::Impl::bind_socket() {
  SocketSetup setup;
  setup.path = path;
  // The allowed user owns the socket file; without one, the user the daemon switches to does,
  // so that it can still remove the file at exit from a sticky directory like /tmp.
  setup.owner = opt.allowed_uid ? opt.allowed_uid : opt.run_as_uid;
  setup.group = opt.allowed_gid;
  setup.mode = opt.socket_mode;
  if (opt.run_as_uid) setup.directory_owners.push_back(*opt.run_as_uid);
  listen_fd = bind_listening_socket(setup, [this](LogLevel level, const std::string& m) { log(level, m); });
}

// Every session holds three descriptors (socket, memfd, eventfd) and every pending connection
// one; max_clients sessions must fit under RLIMIT_NOFILE or the last ones are refused by accept()
// with EMFILE. The soft limit is raised as far as the hard one allows (systemd's default soft
// limit is 1024 with a much higher hard limit); a configuration that cannot fit is refused.
void Server::Impl::ensure_descriptor_budget() {
  const rlim_t need = rlim_t{opt.max_clients} * 3 + opt.max_pending_connections +
                      rlim_t{opt.workers} + kReservedDescriptors;
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return;
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
    rlimit raised = rl;
    raised.rlim_cur = rl.rlim_max == RLIM_INFINITY ? need : std::min(need, rl.rlim_max);
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) {
      log(kInfo, "raised the open-file limit from " + std::to_string(rl.rlim_cur) + " to " +
                     std::to_string(raised.rlim_cur) + " for max_clients " +
                     std::to_string(opt.max_clients));
      rl = raised;
    }
  }
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
    throw DaemonError(DaemonErrorCode::kResource,
        "daemon.max_clients " + std::to_string(opt.max_clients) + " (with max_pending_connections " +
        std::to_string(opt.max_pending_connections) + ") needs about " + std::to_string(need) +
        " open files, but the limit is " + std::to_string(rl.rlim_cur) + " (hard " +
        std::to_string(rl.rlim_max) + "): lower max_clients or raise LimitNOFILE=");
  }
}


// ---- Server -----------------------------------------------------------------------------------

namespace {
uint64_t new_instance_id() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  const uint64_t id = (uint64_t(ts.tv_sec) * 1'000'000'000 + uint64_t(ts.tv_nsec)) ^ (uint64_t(getpid()) << 48);
  return id == 0 ? 1 : id;
}
}  // namespace

Server::Server(ServerOptions options, ModelRegistry& registry, Logger logger)
    : impl_(std::make_unique<Impl>(std::move(options), registry, std::move(logger), new_instance_id())) {
  impl_->path = socket_path_for_endpoint(impl_->opt.endpoint);
}

Server::~Server() { stop(); }

void Server::set_reload_callback(ReloadCallback cb) { impl_->control.reloads().set_callback(std::move(cb)); }

void Server::start() {
  Impl& d = *impl_;
  if (d.started) throw DaemonError(DaemonErrorCode::kInternal, "server already started");
  if (d.opt.workers < 1) d.opt.workers = 1;
  d.opt.max_clients = std::max<uint32_t>(1, d.opt.max_clients);
  d.opt.max_inflight_per_client = std::max<uint32_t>(1, d.opt.max_inflight_per_client);
  d.opt.max_pending_connections = std::max<uint32_t>(1, d.opt.max_pending_connections);
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  const int ncpu = sched_getaffinity(0, sizeof(cpus), &cpus) == 0 ? CPU_COUNT(&cpus) : 1;
  const int64_t spin_ns = ncpu > 1 ? int64_t{d.opt.spin_us} * 1000 : 0;  // never spin against the client on one CPU
  d.ensure_descriptor_budget();

  if (d.listen_fd < 0) d.bind_socket();  // else listen() did, before a privilege drop
  d.started = true;
  d.dispatcher.start(spin_ns, static_cast<uint32_t>(ncpu));
  d.control.start(d.listen_fd);
  d.log(kInfo, "listening on " + d.path + " with " + std::to_string(d.opt.workers) + " worker(s)");
}

void Server::listen() {
  Impl& d = *impl_;
  if (d.listen_fd < 0) d.bind_socket();
}

void Server::stop() {
  Impl& d = *impl_;
  if (!d.started && d.listen_fd >= 0 && !d.stopped) {
    // Bound by listen() but never started (start-up failed after binding): remove the socket.
    d.stopped = true;
    unlink(d.path.c_str());
    return;
  }
  if (!d.started || d.stopped) return;
  d.stopped = true;
  unlink(d.path.c_str());  // no new clients from here on
  d.dispatcher.drain_and_stop(d.opt.drain_timeout_ms);
  d.control.stop();  // ends every connection, then the reload thread
  d.dispatcher.clear();
  if (d.listen_fd >= 0) close(d.listen_fd);
  d.listen_fd = -1;
  d.log(kInfo, "stopped");
}

std::vector<sched::ModelStatsSnapshot> Server::stats() const { return impl_->stats.snapshots(); }

void Server::note_reload(bool ok) {
  (ok ? impl_->counters.reloads : impl_->counters.reloads_failed).fetch_add(1);
  if (ok) impl_->dispatcher.release_replaced_models();
}

ServerCounters Server::counters() const {
  const ipc::Counters& k = impl_->counters;
  ServerCounters c;
  c.sessions = k.sessions.load();
  c.sessions_total = k.sessions_total.load();
  c.sessions_refused = k.sessions_refused.load();
  c.sessions_corrupt = k.sessions_corrupt.load();
  c.requests_in_flight = k.requests_in_flight.load();
  c.requests_dropped = k.requests_dropped.load();
  c.handshake_timeouts = k.handshake_timeouts.load();
  c.pending_connections = k.pending_connections.load();
  c.shared_memory_bytes = k.shared_memory_bytes->load();
  c.reloads = k.reloads.load();
  c.reloads_failed = k.reloads_failed.load();
  return c;
}

const std::string& Server::socket_path() const { return impl_->path; }
uint64_t Server::instance() const { return impl_->instance_id; }

}  // namespace nnd::daemon
