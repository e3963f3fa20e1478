// The settings of `daemon:` that the IPC server serves by: who may connect, the socket, the
// workers and every resource limit. Defined once, here: the config's DaemonSettings and the
// server's ServerOptions (daemon/ipc/server.h) both extend this struct, so the Daemon hands the
// server its settings with one assignment and no field is copied by hand. A new serving key is a
// field here, its parsing in daemon_section.cpp, a row in serving_keys() (serving_settings.cpp)
// and its documentation in config/SCHEMA.md.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nnd::daemon {

struct ServingSettings {
  // Endpoint name ("nnd") or a socket path (contains '/'); see ipc/nnd_endpoint.h.
  std::string endpoint = "nnd";
  // Who may connect, besides root and the daemon's own user (daemon.user / daemon.group,
  // resolved): checked with SO_PEERCRED / SO_PEERGROUPS at the hand-shake.
  std::optional<uid_t> allowed_uid;
  std::optional<gid_t> allowed_gid;
  // Who may send control operations that change the daemon (RELOAD) besides root and the
  // daemon's user: members of this group (daemon.control_group, resolved).
  std::optional<gid_t> control_gid;
  uint32_t socket_mode = 0660;          // file mode of the hand-shake socket
  // The user the daemon switches to after binding (daemon.run_as, resolved; unset: it stays who
  // it is). It may own the socket's directory, and owns the socket file when allowed_uid is
  // unset, so that it can still remove the file at exit (daemon/ipc/socket_setup.h).
  std::optional<uid_t> run_as_uid;

  uint32_t workers = 2;                 // inference worker threads; they share each engine
  std::vector<int> cpu_affinity;        // worker w pinned to cpu_affinity[w % n]; empty: none
  int realtime_priority = 0;            // 1..99: SCHED_FIFO for the workers (warning if refused)

  // Resource limits: each one a client hits gets its own status code, and together they bound
  // the daemon's memory and file descriptors whatever clients do.
  uint32_t max_clients = 32;            // sessions; over it NND_IPC_E_TOO_MANY_CLIENTS
  uint32_t max_inflight_per_client = 16;  // queued + running requests of one client; over it
                                          // NND_IPC_E_TOO_MANY_REQUESTS at once
  uint32_t slots_per_client = 16;       // default when the hello asks for 0 (a hello may ask 1..64)
  uint32_t spin_us = 50;                // bounded spin before a waiting side sleeps
  uint64_t max_request_bytes = 16ull << 20;         // input bytes of one request; over it
                                                    // NND_IPC_E_REQUEST_TOO_LARGE (0: no limit)
  uint64_t max_shared_memory_bytes = 256ull << 20;  // sum of all client segments; a hello over it
                                                    // gets NND_IPC_E_MEMORY_LIMIT
  // Fair shares between users: what one peer uid may hold of max_clients and of
  // max_shared_memory_bytes (0: all but an eighth, at least one session, kept for other uids),
  // so that one uid cannot lock every other allowed uid out. A robot whose clients all run as
  // one user may set them to the whole limits. Control connections (root, the daemon's user, control_group) refused by a
  // limit still get one of a few small reserved sessions (ServerOptions).
  uint32_t max_clients_per_uid = 0;
  uint64_t max_shared_memory_bytes_per_uid = 0;
  uint32_t handshake_timeout_ms = 2000;   // a connection without a hello is closed after this
  uint32_t max_pending_connections = 16;  // connections accepted but not welcomed yet; beyond it
                                          // the daemon stops accepting until one is settled
};

// The YAML keys (under `daemon:`) whose ServingSettings fields differ between `a` and `b`, in
// the config's order. A reload warns for each: they take effect at the next start.
std::vector<std::string> changed_serving_keys(const ServingSettings& a, const ServingSettings& b);

// max_clients_per_uid and max_shared_memory_bytes_per_uid resolved (0: the daemon-wide limit
// less an eighth of it, less one session at least; at least 1 session / 1 MiB).
uint32_t clients_per_uid(const ServingSettings& s);
uint64_t shared_memory_bytes_per_uid(const ServingSettings& s);

}  // namespace nnd::daemon
