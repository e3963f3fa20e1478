// nnd's IPC server: the hand-shake socket, one shared-memory session per client, the batching
// scheduler and the inference worker threads.
//
// Usage from main:
//
//   nnd::daemon::ServerOptions o;            // from DaemonSettings
//   o.endpoint = settings.endpoint; o.workers = settings.workers; ...
//   nnd::daemon::Server server(o, registry, [](int level, const std::string& msg) { log(level, msg); });
//   server.set_reload_callback([&] { return reload_config(); });   // nnctl reload
//   server.start();                          // throws std::runtime_error (socket in use, ...)
//   ... registry.publish(new_set) on SIGHUP; the server picks it up for new requests ...
//   server.stop();                           // SIGTERM: stop accepting, finish in-flight, unlink
//
// Threads: start() launches one control thread (accept, hand-shake, control messages, dead-client
// detection; sleeps in epoll) and `workers` worker threads. All public methods may be called from
// any thread; start() and stop() from one thread at a time.
//
// Data path (see ipc/nnd_ipc.h for the wire layout):
//  * At most one worker at a time is the "poller": it polls every client's submit ring, validates
//    each new request and queues it in the scheduler (daemon/sched/scheduler.h), then takes a
//    ready batch and runs it. With several workers, the poller hands its role to an idle worker
//    (one futex wake) before running a batch, so requests keep flowing in while it computes.
//  * The poller spins for ServerOptions::spin_us when it finds nothing to do (0 when the daemon
//    may use only one CPU), then sets daemon_sleeping in every client header, issues a seq_cst
//    fence, re-checks every submit ring and only then sleeps in epoll on the clients' eventfds
//    (with a timeout only while a batching delay is pending). Idle clients => no CPU, no timer.
//  * A worker gathers a batch's inputs into its own contiguous buffers, or, for a batch of a
//    single request, runs the engine in place on the client's segment (zero copy). It writes the
//    outputs and the result fields into each slot, then pushes the slot on the complete ring,
//    increments complete_seq and, if client_sleeping is set, FUTEX_WAKEs (shared) complete_seq.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "daemon/registry/model_set.h"
#include "daemon/sched/scheduler.h"
#include "daemon/ipc/socket_setup.h"  // socket_path_for_endpoint
#include "daemon/sched/stats.h"

namespace nnd::daemon {

struct ServerOptions {
  // Endpoint name ("nnd") or a socket path (contains '/'); see socket_path_for_endpoint().
  std::string endpoint = "nnd";

  // Who may connect (checked with SO_PEERCRED / SO_PEERGROUPS at the hand-shake). A peer is
  // admitted when its uid equals allowed_uid, or its primary or a supplementary group equals
  // allowed_gid, or (allow_own_uid) its uid is the daemon's effective uid, or (allow_root) it is
  // root. So with neither allowed_uid nor allowed_gid set, only the daemon's own user (and root)
  // may connect. A refused peer gets a welcome with NND_IPC_E_ACCESS and is disconnected.
  std::optional<uid_t> allowed_uid;
  std::optional<gid_t> allowed_gid;
  bool allow_own_uid = true;
  bool allow_root = true;
  // Who may send control operations that change the daemon (RELOAD): root, the daemon's own user
  // and members of control_gid (primary or supplementary group). Every admitted client may infer
  // and query; a refused RELOAD is answered NND_IPC_E_ACCESS.
  std::optional<gid_t> control_gid;
  uint32_t socket_mode = 0660;          // chmod of the socket file; owner allowed_uid, group allowed_gid (if set)
  // The user the daemon switches to after binding (daemon.run_as; unset: it stays who it is).
  // It may own the socket's directory, and owns the socket file when allowed_uid is unset, so
  // that it can still remove the file at exit (see daemon/ipc/socket_setup.h).
  std::optional<uid_t> run_as_uid;

  uint32_t workers = 1;                 // worker threads; they share each model's engine
  std::vector<int> cpu_affinity;        // worker w pinned to cpu_affinity[w % n]; empty = no pinning
  int realtime_priority = 0;            // 1..99: SCHED_FIFO for the workers (warning if refused)

  // Resource limits: each one a client hits gets its own status code, and together they bound
  // the daemon's memory and file descriptors whatever clients do.
  uint32_t max_clients = 32;            // sessions; a hello over it gets NND_IPC_E_TOO_MANY_CLIENTS
  uint32_t max_inflight_per_client = 16;  // queued + running requests of one client; over it a
                                          // request gets NND_IPC_E_TOO_MANY_REQUESTS at once
  uint32_t slots_per_client = 16;       // default when the hello asks for 0 (a hello may ask 1..64)
  uint64_t max_request_bytes = 16ull << 20;  // input bytes of one request; over it
                                             // NND_IPC_E_REQUEST_TOO_LARGE (0: no limit)
  uint64_t max_shared_memory_bytes = 256ull << 20;  // sum of all client segments; a hello whose
                                                  // segment would exceed it gets
                                                  // NND_IPC_E_MEMORY_LIMIT
  uint32_t handshake_timeout_ms = 2000;  // a connection without a hello is closed after this
  uint32_t max_pending_connections = 16; // connections accepted but not yet welcomed; beyond it
                                         // the daemon stops accepting until one is settled (new
                                         // ones wait in the listen backlog)
  uint32_t spin_us = 50;                // bounded spin before the poller sleeps
  uint32_t drain_timeout_ms = 5000;     // stop(): how long to wait for queued/running requests
  sched::Policy policy;                 // scheduler aging / implicit deadline
  // Reported by NND_MSG_DAEMON_INFO (nnctl models / stats --json / metrics).
  std::string version = "unknown";
  std::string git_revision = "unknown";
};

// Syslog numbers: 3 error, 4 warning, 5 notice, 6 info, 7 debug (same as nnd::daemon::LogLevel).
using ServerLogger = std::function<void(int level, const std::string& message)>;

struct ReloadResult {
  bool ok = false;
  std::string message;  // why it failed, or a summary ("3 models, 1 recompiled")
};
// Called for an NND_MSG_RELOAD request on a thread of its own (the control thread keeps serving);
// it should re-read the config and publish a new ModelSet (or keep the old one and return
// ok=false); the client gets the answer when it returns. It must return promptly once the daemon
// is stopping: stop() joins it.
using ReloadCallback = std::function<ReloadResult()>;

struct ServerCounters {
  uint64_t sessions = 0;            // clients connected now (hand-shake done)
  uint64_t sessions_total = 0;      // hand-shakes accepted since start
  uint64_t sessions_refused = 0;    // hand-shakes refused (access, limits, bad hello)
  uint64_t handshake_timeouts = 0;  // connections closed because no hello came in time
  uint64_t pending_connections = 0; // accepted, no hello yet
  uint64_t shared_memory_bytes = 0; // sum of the segments of live sessions
  uint64_t sessions_corrupt = 0;    // sessions ended because their segment was corrupted
  uint64_t requests_in_flight = 0;  // queued + running over all clients
  uint64_t requests_dropped = 0;    // requests of dead clients dropped without an answer
  uint64_t reloads = 0;             // successful reloads reported by note_reload()
  uint64_t reloads_failed = 0;
};

class Server {
 public:
  Server(ServerOptions options, ModelRegistry& registry, ServerLogger logger);
  ~Server();  // stop()s if running
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  void set_reload_callback(ReloadCallback cb);

  // Checks the socket's directory and binds and listens on the socket (replacing a stale socket
  // file of a dead daemon; throws if anyone answers on it or the directory is not safe, see
  // daemon/ipc/socket_setup.h). Connections wait in the backlog until start(). The daemon calls
  // it before dropping root (daemon.run_as); otherwise start() does. Throws std::runtime_error.
  void listen();

  // listen()s unless done already, then starts the threads. Throws std::runtime_error with the
  // reason.
  void start();

  // Unlinks the socket (no new clients), answers new requests NND_IPC_E_SHUTTING_DOWN, waits up
  // to drain_timeout_ms for queued and running requests to finish, stops the threads and closes
  // every session (clients see the hang-up). Idempotent.
  void stop();

  // Counts a finished reload (SIGHUP or nnctl reload) for NND_MSG_DAEMON_INFO. Thread-safe.
  void note_reload(bool ok);

  std::vector<sched::ModelStatsSnapshot> stats() const;  // per model name, sorted by name
  ServerCounters counters() const;
  const std::string& socket_path() const;
  uint64_t instance() const;  // daemon_instance sent in every welcome

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace nnd::daemon
