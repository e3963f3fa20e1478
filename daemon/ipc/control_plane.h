// The control plane: the control thread that accepts connections, runs the hand-shake (hello ->
// peer credentials, limits, segment -> welcome with the memfd and eventfd), answers the control
// messages (model info, list, stats, metrics, daemon info), passes RELOAD requests to the
// ReloadQueue, closes connections that never say hello, pauses accepting when descriptors run
// out, and notices clients that hung up.
//
// A welcomed session is handed to the Dispatcher (add_session); a session that ends is taken back
// (remove_session) before its socket is shut down.
//
// Threads and locks: everything here runs on the control thread (start() creates it, stop()
// joins it) and its state (connections, hand-shake deadlines, accept pausing) is that thread's
// alone, without a lock. It takes the Dispatcher's mutex only inside add_session/remove_session,
// the ReloadQueue's only inside ask(), and the ModelStatsTable's to find a model's statistics.
#pragma once

#include <sys/resource.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>

#include "daemon/ipc/dispatcher.h"
#include "daemon/ipc/log_limiter.h"
#include "daemon/ipc/reload_queue.h"
#include "daemon/ipc/server_support.h"
#include "daemon/ipc/session.h"
#include "daemon/ipc/slot_sizing.h"
#include "daemon/ipc/uid_shares.h"
#include "daemon/registry/model_set.h"
#include "daemon/sched/stats.h"

namespace nnd::daemon::ipc {

// Who a peer is (SO_PEERCRED); uid -1 when the kernel could not tell.
struct PeerCredentials {
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
};

// Whether a peer may connect (ServerOptions: allow_root, allow_own_uid, allowed_uid,
// allowed_gid); *why says why not. `sock` is the peer's socket, for its supplementary groups.
bool peer_allowed(const ServerOptions& opt, const PeerCredentials& peer, int sock, std::string* why);
// Whether a peer may send control operations that change the daemon (RELOAD): root, the
// daemon's user and members of control_gid.
bool may_control(const ServerOptions& opt, const PeerCredentials& peer, int sock);

// The data areas the served models' requests need (one sample, and max_batch samples).
RequestSizes request_sizes_for(const ModelSet& set);

class ControlPlane {
 public:
  // `opt` is read from start() on and must outlive the control plane, like the other references.
  ControlPlane(const ServerOptions& opt, ModelRegistry& registry, const Log& log, Counters& counters,
               sched::ModelStatsTable& stats, Dispatcher& dispatcher, uint64_t instance_id);
  ~ControlPlane();
  ControlPlane(const ControlPlane&) = delete;
  ControlPlane& operator=(const ControlPlane&) = delete;

  ReloadQueue& reloads() { return reloads_; }

  // Serves `listen_fd` (listening, non-blocking; owned by the caller) on a new control thread.
  // Throws std::runtime_error.
  void start(int listen_fd);
  // Stops the control thread (every connection is ended; clients see the hang-up), then the
  // reload queue. Idempotent.
  void stop();

 private:
  void io_main();
  void accept_clients();
  void set_accepting(bool on);
  int64_t expire_handshakes(int64_t now);
  void handle_control(const std::shared_ptr<Session>& s);
  void handle_hello(const std::shared_ptr<Session>& s, const nnd_ipc_hello& h, size_t n);
  void handle_reload(const std::shared_ptr<Session>& s);
  void end_connection(uint64_t id, const char* why);
  void fill_model_info(const ServedModel& m, nnd_ipc_model_info* info) const;
  void fill_daemon_info(size_t models, nnd_ipc_daemon_info* di) const;
  void send_client_info(const Session& to, uint32_t index) const;
  static PeerCredentials credentials(const Session& s) { return {s.pid, s.uid, s.gid}; }

  const ServerOptions& opt_;
  ModelRegistry& registry_;
  const Log& log_;
  Counters& counters_;
  sched::ModelStatsTable& stats_;
  Dispatcher& dispatcher_;
  const uint64_t instance_id_;
  ReloadQueue reloads_;
  LogLimiter limited_{log_};  // what clients can make it log, per uid and kind
  std::shared_ptr<UidShares> shares_ = std::make_shared<UidShares>();  // sessions hold it too
  // The control reserve: sessions beyond the limits for peers that may control the daemon.
  static constexpr uint32_t kControlReserveSessions = 4;
  static constexpr uint32_t kControlReservePerUid = 2;
  static constexpr uint64_t kControlReserveSlotBytes = 1 << 20;

  int listen_fd_ = -1;
  int epfd_ = -1, wake_fd_ = -1;
  std::thread thread_;
  std::atomic<bool> stop_{false};

  // Control thread only.
  std::unordered_map<uint64_t, std::shared_ptr<Session>> conns_;
  // Connections without a hello yet, in accept order (so deadlines are in order too): closed
  // when their hand-shake deadline passes. Ids of connections already gone are skipped.
  std::deque<std::pair<int64_t, uint64_t>> handshake_deadlines_;
  size_t pending_ = 0;          // entries of conns_ not welcomed yet
  bool accepting_ = true;       // listen_fd_ is in epfd_
  uint64_t next_session_id_ = 1;
  // accept() ran out of descriptors or memory: accepting pauses for kAcceptPauseNs, with one
  // warning per kAcceptWarnIntervalNs.
  static constexpr int64_t kAcceptPauseNs = 100'000'000;
  static constexpr int64_t kAcceptWarnIntervalNs = 10'000'000'000;
  int64_t accept_paused_until_ns_ = 0;  // 0: not paused
  int64_t accept_warned_ns_ = INT64_MIN / 2;
};

}  // namespace nnd::daemon::ipc
