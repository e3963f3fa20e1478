#include "daemon/ipc/dispatcher.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstring>

namespace nnd::daemon::ipc {
namespace {
constexpr int64_t kNever = INT64_MAX;
}

Dispatcher::Dispatcher(const ServerOptions& opt, ModelRegistry& registry, const Log& log,
                       Counters& counters, sched::ModelStatsTable& stats)
    : opt_(opt), registry_(registry), log_(log), counters_(counters), stats_(stats), scheduler_(opt.policy) {}

Dispatcher::~Dispatcher() {
  {
    std::lock_guard lk(mu_);
    stop_workers_ = true;
    cv_.notify_all();
  }
  if (!workers_.empty()) sleeper_.poke();
  for (auto& t : workers_) t.join();
}

void Dispatcher::start(int64_t spin_ns, uint32_t cores) {
  cores_ = std::max<uint32_t>(1, cores);
  sleeper_.open(spin_ns);
  queue_capacity_ = size_t{opt_.max_clients} * NND_IPC_MAX_SLOTS;
  {
    std::lock_guard lk(mu_);
    refresh_models_locked();
  }
  for (unsigned w = 0; w < opt_.workers; ++w) workers_.emplace_back([this, w] { worker_main(w); });
}

void Dispatcher::add_session(std::shared_ptr<Session> s) {
  std::lock_guard lk(mu_);
  sleeper_.watch(*s);
  sessions_.push_back(std::move(s));
}

void Dispatcher::remove_session(const std::shared_ptr<Session>& s) {
  std::lock_guard lk(mu_);
  s->dead.store(true);
  sleeper_.unwatch(*s);
  sessions_.erase(std::remove(sessions_.begin(), sessions_.end(), s), sessions_.end());
}

void Dispatcher::drain_and_stop(uint32_t drain_timeout_ms) {
  {
    std::unique_lock lk(mu_);
    draining_ = true;
    sleeper_.poke();
    drain_cv_.wait_for(lk, std::chrono::milliseconds(drain_timeout_ms),
                       [&] { return running_ == 0 && scheduler_.queued() == 0; });
    stop_workers_ = true;
    cv_.notify_all();
  }
  sleeper_.poke();
  for (auto& t : workers_) t.join();
  workers_.clear();
  std::lock_guard lk(mu_);
  // Requests still in the submit rings (pushed after the workers' last look, or without a
  // wake-up) get NND_IPC_E_SHUTTING_DOWN (draining) rather than a closed connection, which the
  // client would report as a restart. One pass takes a whole ring (its budget is the ring's
  // capacity); a client that keeps refilling cannot hold stop() in a loop.
  ingest_locked(mono_ns());
  scheduler_.drain([&](sched::Item* it) {
    finish(*static_cast<Request*>(it->user), NND_IPC_E_SHUTTING_DOWN, 0, 0, 0, false);
  });
}

void Dispatcher::clear() {
  {
    std::lock_guard lk(mu_);
    sessions_.clear();
    entries_.clear();
    views_.clear();
    cached_set_.reset();
  }
  sleeper_.close();
}

// ---- models -----------------------------------------------------------------------------------

void Dispatcher::release_replaced_models() {
  std::lock_guard lk(mu_);
  if (draining_ || !cached_set_) return;  // stopping, or never started: nothing cached to refresh
  refresh_models_locked();
}

void Dispatcher::refresh_models_locked() {
  auto set = registry_.current();
  if (set == cached_set_) return;
  cached_set_ = set;
  entries_.clear();
  views_.clear();
  scheduler_.retire_empty([&](const void* key) {
    for (const auto& m : set->models) {
      if (m.get() == key) return true;
    }
    return false;
  });
  for (const auto& m : set->models) {
    const size_t ni = m->graph.inputs.size(), no = m->graph.outputs.size();
    if (ni > NND_IPC_MAX_TENSORS || no > NND_IPC_MAX_TENSORS || m->input_sample_bytes.size() != ni ||
        m->input_dtypes.size() != ni || m->output_sample_bytes.size() != no) {
      log_(kLogErr, "model '" + m->settings.name + "' cannot be served over IPC (" + std::to_string(ni) +
                        " inputs, " + std::to_string(no) + " outputs; at most " +
                        std::to_string(NND_IPC_MAX_TENSORS) + " each)");
      continue;
    }
    ModelEntry e;
    e.model = m;
    sched::QueueParams p;
    p.max_batch = std::max<uint32_t>(1, m->settings.max_batch);
    p.batch_delay_ns = int64_t{m->settings.batch_delay_us} * 1000;
    p.priority = m->settings.priority;
    p.threads = static_cast<uint32_t>(std::max(1, m->run_threads));
    e.queue = scheduler_.queue_for(m.get(), p, queue_capacity_);
    e.stats = stats_.for_model(m->settings.name);
    ModelView v;
    v.name = m->settings.name;
    v.signature = m->signature;
    v.max_batch = p.max_batch;
    v.input_sample_bytes = m->input_sample_bytes.data();
    v.num_inputs = ni;
    v.output_sample_bytes = m->output_sample_bytes.data();
    v.num_outputs = no;
    entries_.push_back(std::move(e));
    views_.push_back(v);
  }
}

// ---- ingest -----------------------------------------------------------------------------------

bool Dispatcher::ingest_locked(int64_t now) {
  bool any = false;
  models_checked_ = false;
  for (size_t i = 0; i < sessions_.size(); ++i) {
    Session& s = *sessions_[i];
    if (!s.alive()) continue;
    nnd_ipc_header* h = s.seg->header();
    for (uint32_t budget = NND_IPC_MAX_SLOTS; budget > 0; --budget) {
      uint32_t slot;
      const char* why = nullptr;
      const auto res = s.submit.pop(h, s.slots, &slot, &why);
      if (res == SubmitConsumer::Result::kEmpty) break;
      if (res == SubmitConsumer::Result::kCorrupt) {
        s.mark_corrupt(why, log_, counters_);
        break;
      }
      any = true;
      ingest_request(s, slot, now);
      if (s.corrupt.load(std::memory_order_relaxed)) break;
    }
  }
  return any;
}

void Dispatcher::ingest_request(Session& s, uint32_t slot, int64_t now) {
  if (s.in_flight[slot].load(std::memory_order_acquire)) {
    s.mark_corrupt("a slot was submitted again while in flight", log_, counters_);
    return;
  }
  // Copy once, then check only the copy: the client may change the slot at any time.
  const RequestFields fields = read_request_fields(s.seg->slot(slot));
  if (draining_) return answer_now(s, slot, NND_IPC_E_SHUTTING_DOWN, nullptr);
  if (!models_checked_) {
    refresh_models_locked();
    models_checked_ = true;
  }
  RequestLimits limits;
  limits.slot_data_bytes = s.seg->layout().slot_data_bytes;
  limits.max_request_bytes = opt_.max_request_bytes;
  ValidatedRequest v;
  size_t mi = SIZE_MAX;
  const int32_t status = validate_request(fields, views_, limits, now, &v, &mi);
  const ModelEntry* e = mi < entries_.size() ? &entries_[mi] : nullptr;
  if (status != NND_IPC_OK) return answer_now(s, slot, status, e ? e->stats : nullptr);
  if (s.inflight.load(std::memory_order_relaxed) >= opt_.max_inflight_per_client) {
    return answer_now(s, slot, NND_IPC_E_TOO_MANY_REQUESTS, e->stats);
  }
  Request& r = s.reqs[slot];
  r.layout = v.layout;
  r.item = sched::Item{};
  r.item.enqueue_ns = now;
  r.item.deadline_ns = v.deadline_ns;
  r.item.samples = v.batch;
  r.item.user = &r;
  r.session = &s;
  r.slot = slot;
  r.batch = v.batch;
  r.seen_ns = now;
  r.stats = e->stats;
  if (!scheduler_.push(e->queue, &r.item, now)) return answer_now(s, slot, NND_IPC_E_OVERLOADED, e->stats);
  r.model = e->model;
  e->stats->queued();
  r.keep = s.shared_from_this();  // the session outlives the request
  s.in_flight[slot].store(1, std::memory_order_relaxed);
  s.inflight.fetch_add(1, std::memory_order_relaxed);
  counters_.requests_in_flight.fetch_add(1, std::memory_order_relaxed);
}

// ---- answers ----------------------------------------------------------------------------------

void Dispatcher::answer_now(Session& s, uint32_t slot, int32_t status, sched::ModelStats* stats) {
  SlotResult res;
  res.status = status;
  s.write_result(slot, res);
  if (stats) stats->add_request(status, 0);
  s.push_complete(slot, log_, counters_);
}

void Dispatcher::finish(Request& r, int32_t status, uint32_t served_batch, int64_t run_start,
                        int64_t run_ns, bool ran) {
  std::shared_ptr<Session> keep = std::move(r.keep);
  Session& s = *keep;
  const uint32_t slot = r.slot;
  sched::ModelStats* stats = r.stats;
  const int64_t seen = r.seen_ns;
  const uint64_t out_bytes = status == NND_IPC_OK ? r.layout.outputs_end - r.layout.outputs_begin : 0;
  r.model.reset();
  if (stats) stats->dequeued();
  const bool alive = s.alive();
  if (alive) {
    SlotResult res;
    res.status = status;
    res.served_batch = served_batch;
    res.output_bytes = out_bytes;
    res.queue_ns = static_cast<uint64_t>(ran && run_start > seen ? run_start - seen : 0);
    res.run_ns = static_cast<uint64_t>(run_ns);
    s.write_result(slot, res);
  } else {
    counters_.requests_dropped.fetch_add(1, std::memory_order_relaxed);
  }
  s.inflight.fetch_sub(1, std::memory_order_relaxed);
  counters_.requests_in_flight.fetch_sub(1, std::memory_order_relaxed);
  s.in_flight[slot].store(0, std::memory_order_release);
  if (alive) {
    // Counted before the completion is published: a client that has its answer and then asks for
    // the stats must find the request counted (the other order raced in CI: 599 of 600).
    if (stats) {
      stats->add_request(status, static_cast<uint64_t>(std::max<int64_t>(0, mono_ns() - seen)));
    }
    s.push_complete(slot, log_, counters_);
  }
}

// ---- workers ----------------------------------------------------------------------------------

void Dispatcher::setup_worker_thread(unsigned w) const {
  if (!opt_.cpu_affinity.empty()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(opt_.cpu_affinity[w % opt_.cpu_affinity.size()], &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0) {
      log_(kLogWarn, "worker " + std::to_string(w) + ": cannot set CPU affinity");
    }
  }
  if (opt_.realtime_priority > 0) {
    sched_param sp{};
    sp.sched_priority = std::clamp(opt_.realtime_priority, 1, 99);
    const int rc = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
    if (rc != 0) {
      log_(kLogWarn, "worker " + std::to_string(w) + ": cannot use SCHED_FIFO priority " +
                         std::to_string(sp.sched_priority) + ": " + std::strerror(rc));
    }
  }
}

// Runs a batch the scheduler picked (without the dispatch mutex) and finishes its requests.
void Dispatcher::run_batch(WorkerScratch& ws) {
  // Requests of clients that died while queued are dropped without running.
  ws.live.clear();
  for (sched::Item* it : ws.batch.items) {
    Request* r = static_cast<Request*>(it->user);
    if (!r->session->alive()) {
      finish(*r, NND_IPC_E_SHUTTING_DOWN, 0, 0, 0, false);
    } else {
      ws.live.push_back(r);
    }
  }
  if (ws.live.empty()) return;
  ServedModel& m = *ws.live[0]->model;
  Engine* eng = m.engine.get();  // shared by every worker: Engine::run is re-entrant
  BatchOutcome out;
  if (!eng) {
    for (Request* r : ws.live) out.samples += r->batch;
    out.status = NND_IPC_E_INTERNAL;
    out.start_ns = mono_ns();
    log_(kLogErr, "model '" + m.settings.name + "' has no engine");
  } else {
    ws.parts.clear();
    for (Request* r : ws.live) ws.parts.push_back({r->session->seg->data(r->slot), &r->layout, r->batch});
    const ModelIo io{m.input_dtypes, m.input_sample_bytes, m.output_dtypes, m.output_sample_bytes};
    out = ws.runner.run(*eng, io, ws.parts);
    if (out.status != NND_IPC_OK) log_(kLogErr, "model '" + m.settings.name + "': engine failed: " + out.error);
  }
  sched::ModelStats* st = ws.live[0]->stats;
  if (st && out.status == NND_IPC_OK) {
    st->add_batch(out.samples);
    st->note_run_ns(out.run_ns);
  }
  for (Request* r : ws.live) finish(*r, out.status, out.samples, out.start_ns, out.run_ns, true);
}

// Whether the poller should hand its role to an idle worker before it runs `batch`. Handing off
// wakes a sleeping thread (a futex wake and, on a busy machine, a CPU the woken thread must win
// from the client and the runner); that pays when other work can start meanwhile: requests are
// already queued, or the batch runs long enough for new ones to arrive and wait. A short batch
// with nothing else queued runs on the poller, which polls again right after: a client sending
// small requests back to back then never meets a sleeping daemon thread (nnd_ipcbench,
// bench/ipcbench.cpp, measures both cases).
uint32_t Dispatcher::split_threads_free_locked() const {
  if (running_split_ == 0) return sched::Scheduler::kAnyThreads;  // one split run may always start
  if (opt_.workers > 1 && running_split_ >= opt_.workers - 1) return 0;  // keep a worker for the rest
  return cores_ > running_split_threads_ ? cores_ - running_split_threads_ : 0;
}

bool Dispatcher::worth_handing_off(const sched::Batch& batch) const {
  if (scheduler_.queued() > 0) return true;
  const Request* first = static_cast<const Request*>(batch.items.front()->user);
  const int64_t expected = first->stats ? first->stats->last_run_ns() : 0;
  return expected == 0 || expected >= kHandOffWorthNs;  // unknown (first run): as before
}

void Dispatcher::worker_main(unsigned w) {
  setup_worker_thread(w);
  WorkerScratch ws;
  ws.batch.reserve(256);
  ws.live.reserve(256);
  ws.parts.reserve(256);

  std::unique_lock lk(mu_);
  bool poller = false;
  int64_t idle_since = mono_ns();
  while (!stop_workers_) {
    if (!poller) {
      if (poller_active_) {
        cv_.wait(lk);
        continue;
      }
      poller_active_ = true;
      poller = true;
      idle_since = mono_ns();
    }
    int64_t now = mono_ns();
    if (ingest_locked(now)) idle_since = now;
    int64_t next_due = kNever;
    if (scheduler_.pick(now, ws.batch, &next_due, split_threads_free_locked())) {
      const bool has_batch = ws.batch.queue != nullptr;
      const uint32_t split_threads = has_batch && ws.batch.queue->params().threads > 1
                                         ? ws.batch.queue->params().threads
                                         : 0;
      if (has_batch) ++running_;
      if (split_threads) {
        ++running_split_;
        running_split_threads_ += split_threads;
      }
      if (opt_.workers > 1 && has_batch && worth_handing_off(ws.batch)) {
        poller = false;
        poller_active_ = false;
        cv_.notify_one();
      }
      lk.unlock();
      for (sched::Item* it : ws.batch.expired) {
        finish(*static_cast<Request*>(it->user), NND_IPC_E_DEADLINE, 0, 0, 0, false);
      }
      if (has_batch) run_batch(ws);
      lk.lock();
      if (has_batch) --running_;
      if (split_threads) {
        --running_split_;
        running_split_threads_ -= split_threads;
        // A split queue held back meanwhile is due now; the poller may be asleep without a timeout.
        if (!poller && scheduler_.queued() > 0) sleeper_.poke();
      }
      idle_since = mono_ns();
      if (draining_) drain_cv_.notify_all();
      continue;
    }
    if (draining_ && running_ == 0 && scheduler_.queued() == 0) drain_cv_.notify_all();
    // Nothing to run now: spin a little, then sleep.
    now = mono_ns();
    if (sleeper_.should_spin(now, idle_since, next_due)) {
      sleeper_.spin(lk);
      continue;
    }
    const int64_t timeout = next_due == kNever ? -1 : std::max<int64_t>(0, next_due - now);
    if (sleeper_.sleep(lk, sessions_, timeout)) idle_since = mono_ns();
  }
  if (poller) poller_active_ = false;
  cv_.notify_all();
}

}  // namespace nnd::daemon::ipc
