// The batching scheduler: per-model queues, dynamic batching, earliest-deadline-first order and
// per-model priority with aging. Pure logic with no clock and no threads of its own: every call
// takes `now` (nanoseconds on the caller's monotonic clock), so tests drive it with a fake clock.
// Not thread-safe; the server calls it under its dispatch mutex.
//
// Policy (what the server promises, DESIGN.md "Batching"):
//
//  * One queue per model version (`key`). Requests of the same model from any client are batched
//    together, up to the queue's max_batch samples (a request carries 1..max_batch samples and is
//    never split).
//  * Order inside a queue is earliest-deadline-first. A request without a deadline is ordered as if
//    its deadline were enqueue + Policy::implicit_deadline_ns (so deadline traffic cannot starve
//    it), but it never expires. Ties keep arrival order.
//  * A request whose deadline has passed (deadline <= now) is handed back as expired by pick()
//    without running (the server answers NND_IPC_E_DEADLINE).
//  * A queue is due (a batch is formed) when it holds max_batch samples, or when its oldest request
//    has waited batch_delay_ns, or when waiting longer would use up more than half of the time
//    budget of a request with a deadline (latest start = enqueue + min(delay, (deadline-enqueue)/2)).
//    A batch takes requests in EDF order while they fit; the first that does not fit stops it.
//  * Between models with due queues: strict priority with aging. A queue's effective priority is
//    its model priority plus one level per Policy::aging_ns its oldest request has waited; the
//    highest effective priority wins, ties go to the queue that became due first. So a burst of a
//    high-priority model delays a lower one by at most (priority difference) * aging_ns.
//  * Split models (QueueParams::threads > 1: one run uses that many cores) are picked only while
//    the caller's budget of free cores allows (pick's split_threads_free). The server lets split
//    batches run side by side only while their threads fit the daemon's cores, and never on every
//    worker, so a small request of another model starts at once instead of waiting behind them
//    (a second split run would only compete for the same cores). A held-back queue is not due and
//    only its head's deadline bounds next_due: the server picks again when a split run ends.
//
// No allocation on the hot path: queues reserve their capacity at creation (the server passes the
// largest number of requests that can be in flight), pick() fills a caller-owned Batch whose
// vectors are reserved once.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

namespace nnd::daemon::sched {

inline constexpr int64_t kNoDeadline = 0;

// Intrusive scheduling record, embedded in the server's per-slot request record.
struct Item {
  int64_t enqueue_ns = 0;
  int64_t deadline_ns = kNoDeadline;  // absolute, same clock as `now`; 0 = none
  uint32_t samples = 1;
  // filled by the scheduler
  int64_t order_key = 0;     // EDF key
  int64_t latest_start = 0;  // when this request makes its queue due
  uint64_t seq = 0;          // arrival order (tie-break)
  void* user = nullptr;      // owner's back pointer
};

struct QueueParams {
  uint32_t max_batch = 1;
  int64_t batch_delay_ns = 0;
  int32_t priority = 0;
  uint32_t threads = 1;  // cores one run uses (the model's engine threads); > 1: a split model
};

struct Policy {
  int64_t implicit_deadline_ns = 100'000'000;  // ordering horizon of requests without deadline
  int64_t aging_ns = 2'000'000;                // one priority level per 2 ms of waiting
};

class Queue;

// Result of pick(): either a batch of one queue, or expired requests (of any queues), or both.
struct Batch {
  Queue* queue = nullptr;        // queue of `items`; nullptr when no batch was formed
  const void* key = nullptr;     // that queue's key
  std::vector<Item*> items;      // in EDF order
  uint32_t samples = 0;
  std::vector<Item*> expired;    // deadline passed before running

  void clear() {
    queue = nullptr;
    key = nullptr;
    items.clear();
    samples = 0;
    expired.clear();
  }
  void reserve(size_t n) {
    items.reserve(n);
    expired.reserve(n);
  }
};

class Queue {
 public:
  Queue(const void* key, QueueParams params, size_t capacity);

  const void* key() const { return key_; }
  const QueueParams& params() const { return params_; }
  size_t size() const { return heap_.size(); }
  bool empty() const { return heap_.empty(); }
  uint32_t queued_samples() const { return samples_; }
  int64_t oldest_enqueue() const { return oldest_enqueue_; }
  int64_t due() const { return due_; }  // INT64_MAX when empty

 private:
  friend class Scheduler;
  void push(Item* it);
  Item* top() const { return heap_.front(); }
  Item* pop_top();
  void recompute();  // oldest_enqueue_ and due_ from the heap contents

  const void* key_;
  QueueParams params_;
  std::vector<Item*> heap_;  // min-heap on (order_key, seq)
  uint32_t samples_ = 0;
  int64_t oldest_enqueue_ = std::numeric_limits<int64_t>::max();
  int64_t due_ = std::numeric_limits<int64_t>::max();
};

class Scheduler {
 public:
  explicit Scheduler(Policy policy = {}) : policy_(policy) {}

  // The queue for `key`, created with `params` and room for `capacity` requests the first time.
  // An existing empty queue takes `params` (keys may be reused by a new model version at the same
  // address). Allocates only when the queue is new.
  Queue* queue_for(const void* key, const QueueParams& params, size_t capacity);
  Queue* find(const void* key) const;

  // Adds a request (its samples must be 1..max_batch; the server validated that). Returns false
  // when the queue is full (it never grows on the hot path): the caller answers "overloaded".
  bool push(Queue* q, Item* it, int64_t now);

  // Collects every expired request at the head of the queues into batch.expired and, if some
  // queue is due at `now`, forms one batch from the winning queue. Returns true when it produced
  // anything. *next_due (optional) receives the earliest time a non-due queue becomes due
  // (INT64_MAX if none) so the caller knows how long it may sleep. A queue with params().threads
  // > 1 is skipped while its threads exceed `split_threads_free` (its expired requests are still
  // collected, and its head's deadline still bounds *next_due so it is answered on time).
  static constexpr uint32_t kAnyThreads = UINT32_MAX;
  bool pick(int64_t now, Batch& batch, int64_t* next_due = nullptr, uint32_t split_threads_free = kAnyThreads);

  // Removes every request (for shutdown or a dead client sweep): calls f(Item*) for each.
  template <typename F>
  void drain(F&& f) {
    for (auto& q : queues_) {
      while (!q->empty()) f(q->pop_top());
      q->recompute();
    }
  }

  // Deletes empty queues whose key `keep(key)` rejects (model versions no longer served).
  template <typename Keep>
  void retire_empty(Keep&& keep) {
    for (size_t i = 0; i < queues_.size();) {
      if (queues_[i]->empty() && !keep(queues_[i]->key())) {
        queues_[i] = std::move(queues_.back());
        queues_.pop_back();
      } else {
        ++i;
      }
    }
  }

  size_t queued() const;  // requests waiting over all queues
  size_t queue_count() const { return queues_.size(); }
  const Policy& policy() const { return policy_; }

 private:
  int64_t effective_priority(const Queue& q, int64_t now) const;

  Policy policy_;
  std::vector<std::unique_ptr<Queue>> queues_;
  uint64_t next_seq_ = 0;
};

}  // namespace nnd::daemon::sched
