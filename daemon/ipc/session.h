// One client's session: its control socket and peer credentials, its shared-memory segment with
// the daemon's two ring endpoints, one request record per slot, and the accounting of its memory
// against max_shared_memory_bytes. Also the last step of every request: writing the result into
// the slot and pushing it on the complete ring.
//
// Threads and locks (a Session is shared through std::shared_ptr):
//  * The control thread (ControlPlane) creates it at accept, fills credentials, name, segment and
//    slots during the hand-shake, then hands it to the Dispatcher; from then on those fields are
//    read-only. `welcomed` is the control thread's alone.
//  * `submit` and `in_epoll` are guarded by the dispatch mutex (Dispatcher): only the poller pops.
//  * `complete` is guarded by `complete_mu`: any worker may finish a request of this session.
//  * reqs[slot] belongs to whoever holds the slot: the poller fills it under the dispatch mutex,
//    then the worker that runs its batch (or expires it) until finish() releases the slot.
//  * in_flight, inflight, dead and corrupt are atomics read by every thread.
//  * A request in flight holds a shared_ptr (Request::keep), so the segment stays mapped and the
//    socket open until its answer is written, even after the control thread dropped the session.
#pragma once

#include <sys/types.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "daemon/ipc/segment.h"
#include "daemon/ipc/server_support.h"
#include "daemon/ipc/uid_shares.h"
#include "daemon/registry/model_set.h"
#include "daemon/sched/scheduler.h"
#include "daemon/sched/stats.h"
#include "ipc/nnd_ipc.h"

namespace nnd::daemon::ipc {

struct Session;

// One request in flight: lives inside its Session (one per slot), so queuing allocates nothing.
struct Request {
  sched::Item item;
  Session* session = nullptr;
  uint32_t slot = 0;
  uint32_t batch = 0;
  int64_t seen_ns = 0;
  std::shared_ptr<ServedModel> model;   // the version the request started on
  sched::ModelStats* stats = nullptr;
  DataLayout layout;
  std::shared_ptr<Session> keep;        // keeps the segment mapped until the answer is written
};

// The result fields the daemon writes into a slot (nnd_ipc_slot, daemon -> client).
struct SlotResult {
  int32_t status = NND_IPC_OK;
  uint32_t served_batch = 0;
  uint64_t output_bytes = 0;
  uint64_t queue_ns = 0;
  uint64_t run_ns = 0;
};

struct Session : std::enable_shared_from_this<Session> {
  uint64_t id = 0;
  int sock = -1;
  int64_t accepted_ns = 0;
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  std::string name;  // "client 'vision' (pid 123)"
  std::string client_name;  // "vision": the name from its hello (printable ASCII)
  int64_t welcomed_ns = 0;  // control thread only
  std::unique_ptr<Segment> seg;
  uint32_t slots = 0;
  bool welcomed = false;  // control thread only
  bool in_epoll = false;  // eventfd registered with the workers' epoll (dispatch mutex)

  SubmitConsumer submit;                 // dispatch mutex
  std::mutex complete_mu;
  CompleteProducer complete;             // complete_mu
  std::array<Request, NND_IPC_MAX_SLOTS> reqs;
  std::array<std::atomic<uint8_t>, NND_IPC_MAX_SLOTS> in_flight{};
  std::atomic<uint32_t> inflight{0};
  std::atomic<bool> dead{false};
  std::atomic<bool> corrupt{false};

  // The segment's bytes are counted against max_shared_memory_bytes from the welcome until the
  // last reference (a request in flight may hold one) unmaps it.
  std::shared_ptr<std::atomic<uint64_t>> shm_total;
  uint64_t shm_bytes = 0;
  std::shared_ptr<UidShares> shares;  // this uid's share (released with the segment)
  bool reserved = false;              // admitted to the control reserve

  ~Session();

  // Neither hung up nor corrupted: its answers are still written.
  bool alive() const {
    return !dead.load(std::memory_order_relaxed) && !corrupt.load(std::memory_order_relaxed);
  }

  // Writes the result fields of `slot` (relaxed stores; the push publishes them).
  void write_result(uint32_t slot, const SlotResult& r);

  // Pushes `slot` on the complete ring and wakes the client if it sleeps. When the client broke
  // the ring the session ends (mark_corrupt) and false is returned; also false, without pushing,
  // when the session is already dead or corrupt. Any thread.
  bool push_complete(uint32_t slot, const Log& log, Counters& counters);

  // Ends the session because the client corrupted its segment: logs and counts it once and shuts
  // the socket down; the control thread sees the hang-up and tears the session down. Any thread.
  void mark_corrupt(const char* why, const Log& log, Counters& counters);
};

}  // namespace nnd::daemon::ipc
