// nnd's IPC server: the hand-shake socket, one shared-memory session per client, the batching
// scheduler and the inference worker threads.
//
// Usage from main:
//
//   nnd::daemon::ServerOptions o;
//   static_cast<ServingSettings&>(o) = config.daemon;   // the serving settings, all at once
//   nnd::daemon::Server server(o, registry, logger);
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

#include "daemon/base/logger.h"
#include "daemon/config/serving_settings.h"
#include "daemon/registry/model_set.h"
#include "daemon/sched/scheduler.h"
#include "daemon/ipc/socket_setup.h"  // socket_path_for_endpoint
#include "daemon/sched/stats.h"

namespace nnd::daemon {

// What the server serves by: the serving settings of the config (ServingSettings, one definition
// shared with DaemonSettings: who may connect, the socket, the workers, every resource limit)
// and what only the server knows.
struct ServerOptions : ServingSettings {
  // Who is admitted besides ServingSettings::allowed_uid / allowed_gid (checked with SO_PEERCRED /
  // SO_PEERGROUPS at the hand-shake): the daemon's own uid (allow_own_uid) and root
  // (allow_root). So with neither allowed_uid nor allowed_gid set, only the daemon's own user
  // (and root) may connect. A refused peer gets a welcome with NND_IPC_E_ACCESS and is
  // disconnected. Control operations that change the daemon (RELOAD) are for root, the daemon's
  // own user and members of control_gid; a refused RELOAD is answered NND_IPC_E_ACCESS.
  bool allow_own_uid = true;
  bool allow_root = true;
  uint32_t drain_timeout_ms = 5000;     // stop(): how long to wait for queued/running requests
  sched::Policy policy;                 // scheduler aging / implicit deadline
  // Reported by NND_MSG_DAEMON_INFO (nnctl models / stats --json / metrics).
  std::string version = "unknown";
  std::string git_revision = "unknown";
};

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
  Server(ServerOptions options, ModelRegistry& registry, Logger logger);
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

  // Counts a finished reload (SIGHUP or nnctl reload) for NND_MSG_DAEMON_INFO and, after one
  // that published a new set, lets go of the replaced set at once. Thread-safe.
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
