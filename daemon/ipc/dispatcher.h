// The data path between the submit rings and the engines: the worker threads, the poller role,
// ingesting requests from the submit rings (validated by request_validation), queueing them in
// the scheduler, expiring deadlines, dropping the requests of dead clients and finishing every
// request (result fields, statistics, completion).
//
// Worker loop (ServerOptions::workers threads):
//  * At most one worker at a time is the poller. It pops every session's submit ring (at most a
//    ring's capacity per session per round), validates each request and queues it, then asks the
//    scheduler for a due batch. With several workers it hands the poller role to an idle worker
//    (one condition-variable notify) before running the batch, so requests keep flowing in while
//    it computes — when that pays (worth_handing_off): other requests are queued, or the model's
//    last run took 200 us or more. A short batch with nothing else queued runs on the poller.
//  * Running a batch (BatchRunner) and finishing its requests happen without the dispatch mutex.
//  * A poller with nothing to do spins, then sleeps (Sleeper).
//  * Split models (ServedModel::run_threads > 1) run on several cores per batch. Split batches run
//    side by side only while their threads fit the daemon's cores (`cores_`, its affinity mask),
//    and with several workers at most workers - 1 of them at once: another model's request never
//    waits behind split runs for a worker, and a split run does not compete with a second one
//    for the same cores. The worker that ends a split run pokes the poller to pick again.
//
// Threads and locks:
//  * `mu_` (the dispatch mutex) guards the session list, the scheduler, the model cache, the
//    poller and drain state and the Sleeper's state. The poller holds it while it ingests and
//    picks; the control thread takes it to add and remove sessions; stop() to drain.
//  * Finishing a request takes the session's complete_mu (Session::push_complete) and nothing
//    else, so workers finish requests in parallel.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "daemon/ipc/batch_runner.h"
#include "daemon/ipc/request_validation.h"
#include "daemon/ipc/server_support.h"
#include "daemon/ipc/session.h"
#include "daemon/ipc/sleeper.h"
#include "daemon/registry/model_set.h"
#include "daemon/sched/scheduler.h"
#include "daemon/sched/stats.h"

namespace nnd::daemon::ipc {

class Dispatcher {
 public:
  // `opt` is read at start() (the server normalises it first) and must outlive the dispatcher.
  Dispatcher(const ServerOptions& opt, ModelRegistry& registry, const Log& log, Counters& counters,
             sched::ModelStatsTable& stats);
  ~Dispatcher();
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  // Opens the sleeper, caches the current models and starts the worker threads. Throws
  // std::runtime_error.
  // `cores`: CPUs the daemon may use (the budget of split runs, see above).
  void start(int64_t spin_ns, uint32_t cores);

  // Control thread: a welcomed session is polled from now on / a session that ended is not
  // polled any more (it is marked dead; its requests in flight are dropped when they finish).
  void add_session(std::shared_ptr<Session> s);
  void remove_session(const std::shared_ptr<Session>& s);

  // stop(), step 1: answers new requests NND_IPC_E_SHUTTING_DOWN, waits up to `drain_timeout_ms`
  // for queued and running requests, stops and joins the workers, then answers what is left in
  // the rings and the queues NND_IPC_E_SHUTTING_DOWN.
  void drain_and_stop(uint32_t drain_timeout_ms);
  // After a reload published a new snapshot: drops the cached one now. Otherwise the poller
  // keeps the replaced generation (every engine of it) until the next request arrives, which an
  // idle daemon may never see. Requests in flight keep their own model version.
  void release_replaced_models();
  // stop(), step 2 (after the control thread is gone): drops the sessions and the model cache and
  // closes the sleeper's descriptors.
  void clear();

 private:
  // Per served model version, cached by the poller for the current snapshot.
  struct ModelEntry {
    std::shared_ptr<ServedModel> model;
    sched::Queue* queue = nullptr;
    sched::ModelStats* stats = nullptr;
  };
  // Per-worker state: the batch the scheduler fills and the runner's buffers.
  struct WorkerScratch {
    sched::Batch batch;
    std::vector<Request*> live;
    std::vector<BatchPart> parts;
    BatchRunner runner;
  };

  // A batch expected to run at least this long is worth a hand-off of the poller role: waking a
  // sleeping worker costs tens of microseconds, and a request arriving meanwhile waits at most
  // this long for the poller otherwise.
  static constexpr int64_t kHandOffWorthNs = 200'000;
  bool worth_handing_off(const sched::Batch& batch) const;

  void worker_main(unsigned w);
  void setup_worker_thread(unsigned w) const;
  void run_batch(WorkerScratch& ws);
  // Under mu_: the threads a split batch may still use now (Scheduler::pick's split_threads_free).
  uint32_t split_threads_free_locked() const;

  // Under mu_.
  void refresh_models_locked();
  bool ingest_locked(int64_t now);
  void ingest_request(Session& s, uint32_t slot, int64_t now);

  // Answers a request without queueing it (validation failed, limits, draining).
  void answer_now(Session& s, uint32_t slot, int32_t status, sched::ModelStats* stats);
  // Writes the result fields, releases the slot and pushes the completion. `r` must not be used
  // after the call (the client may resubmit the slot at once). No lock needed.
  void finish(Request& r, int32_t status, uint32_t served_batch, int64_t run_start, int64_t run_ns,
              bool ran);

  const ServerOptions& opt_;
  ModelRegistry& registry_;
  const Log& log_;
  Counters& counters_;
  sched::ModelStatsTable& stats_;

  std::mutex mu_;
  std::condition_variable cv_;        // idle non-poller workers
  std::condition_variable drain_cv_;  // drain_and_stop() waits for the drain
  Sleeper sleeper_;
  std::vector<std::shared_ptr<Session>> sessions_;  // polled sessions
  sched::Scheduler scheduler_;
  std::shared_ptr<const ModelSet> cached_set_;
  std::vector<ModelEntry> entries_;
  std::vector<ModelView> views_;  // entries_[i] as request validation sees it
  bool poller_active_ = false;
  bool models_checked_ = false;   // registry snapshot compared during this ingest round
  bool stop_workers_ = false;
  bool draining_ = false;
  uint32_t running_ = 0;          // batches being executed
  uint32_t running_split_ = 0;    // of which split batches
  uint32_t running_split_threads_ = 0;  // and their threads
  uint32_t cores_ = 1;
  size_t queue_capacity_ = 0;
  std::vector<std::thread> workers_;
};

}  // namespace nnd::daemon::ipc
