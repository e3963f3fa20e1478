#include "daemon/sched/scheduler.h"

#include <algorithm>

namespace nnd::daemon::sched {
namespace {

constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

// Heap comparator: std heaps are max-heaps, so "less" means "later".
bool later(const Item* a, const Item* b) {
  if (a->order_key != b->order_key) return a->order_key > b->order_key;
  return a->seq > b->seq;
}

bool expired(const Item* it, int64_t now) {
  return it->deadline_ns != kNoDeadline && it->deadline_ns <= now;
}

int64_t sat_add(int64_t a, int64_t b) {
  if (b > 0 && a > kNever - b) return kNever;
  return a + b;
}

}  // namespace

Queue::Queue(const void* key, QueueParams params, size_t capacity) : key_(key), params_(params) {
  if (params_.max_batch == 0) params_.max_batch = 1;
  if (params_.batch_delay_ns < 0) params_.batch_delay_ns = 0;
  heap_.reserve(capacity);
}

void Queue::push(Item* it) {
  heap_.push_back(it);
  std::push_heap(heap_.begin(), heap_.end(), later);
  samples_ += it->samples;
  oldest_enqueue_ = std::min(oldest_enqueue_, it->enqueue_ns);
  due_ = std::min(due_, it->latest_start);
}

Item* Queue::pop_top() {
  std::pop_heap(heap_.begin(), heap_.end(), later);
  Item* it = heap_.back();
  heap_.pop_back();
  samples_ -= it->samples;
  return it;
}

void Queue::recompute() {
  oldest_enqueue_ = kNever;
  due_ = kNever;
  for (const Item* it : heap_) {
    oldest_enqueue_ = std::min(oldest_enqueue_, it->enqueue_ns);
    due_ = std::min(due_, it->latest_start);
  }
}

Queue* Scheduler::find(const void* key) const {
  for (const auto& q : queues_) {
    if (q->key() == key) return q.get();
  }
  return nullptr;
}

Queue* Scheduler::queue_for(const void* key, const QueueParams& params, size_t capacity) {
  if (Queue* q = find(key)) {
    // A key is reused only by a new model version at the address of a freed one: take the new
    // settings (possible only while empty, since a queued request keeps its model alive).
    if (q->empty()) {
      q->params_ = params;
      if (q->params_.max_batch == 0) q->params_.max_batch = 1;
      if (q->params_.batch_delay_ns < 0) q->params_.batch_delay_ns = 0;
    }
    return q;
  }
  queues_.push_back(std::make_unique<Queue>(key, params, capacity));
  return queues_.back().get();
}

bool Scheduler::push(Queue* q, Item* it, int64_t now) {
  if (q->heap_.size() == q->heap_.capacity()) return false;
  if (it->enqueue_ns == 0) it->enqueue_ns = now;
  it->seq = next_seq_++;
  const int64_t delay = q->params_.batch_delay_ns;
  if (it->deadline_ns != kNoDeadline) {
    it->order_key = it->deadline_ns;
    const int64_t budget = it->deadline_ns > it->enqueue_ns ? (it->deadline_ns - it->enqueue_ns) / 2 : 0;
    it->latest_start = it->enqueue_ns + std::min(delay, budget);
  } else {
    it->order_key = sat_add(it->enqueue_ns, policy_.implicit_deadline_ns);
    it->latest_start = sat_add(it->enqueue_ns, delay);
  }
  q->push(it);
  return true;
}

int64_t Scheduler::effective_priority(const Queue& q, int64_t now) const {
  int64_t p = q.params_.priority;
  if (policy_.aging_ns > 0 && now > q.oldest_enqueue_) p += (now - q.oldest_enqueue_) / policy_.aging_ns;
  return p;
}

bool Scheduler::pick(int64_t now, Batch& batch, int64_t* next_due, uint32_t split_threads_free) {
  batch.clear();
  Queue* best = nullptr;
  int64_t best_prio = 0;
  int64_t next = kNever;
  int due_queues = 0;
  for (auto& qp : queues_) {
    Queue& q = *qp;
    // Expired requests at the head cost nothing to answer: take them out first.
    bool removed = false;
    while (!q.empty() && expired(q.top(), now)) {
      batch.expired.push_back(q.pop_top());
      removed = true;
    }
    if (removed) q.recompute();
    if (q.empty()) continue;
    if (q.params_.threads > 1 && q.params_.threads > split_threads_free) {
      // Held back until a split run ends; only its deadlines wake the caller meanwhile.
      if (q.top()->deadline_ns != kNoDeadline) next = std::min(next, q.top()->deadline_ns);
      continue;
    }
    const bool due = q.samples_ >= q.params_.max_batch || q.due_ <= now;
    if (!due) {
      next = std::min(next, q.due_);
      continue;
    }
    ++due_queues;
    const int64_t prio = effective_priority(q, now);
    if (!best || prio > best_prio || (prio == best_prio && q.due_ < best->due_)) {
      best = &q;
      best_prio = prio;
    }
  }
  if (best) {
    Queue& q = *best;
    while (!q.empty()) {
      Item* it = q.top();
      if (expired(it, now)) {
        batch.expired.push_back(q.pop_top());
        continue;
      }
      if (batch.samples + it->samples > q.params_.max_batch) break;
      batch.items.push_back(q.pop_top());
      batch.samples += it->samples;
    }
    q.recompute();
    if (!batch.items.empty()) {
      batch.queue = &q;
      batch.key = q.key_;
    }
    // The rest of this queue may be due again at once (more than max_batch samples waited).
    if (!q.empty()) next = std::min(next, q.samples_ >= q.params_.max_batch ? now : q.due_);
  }
  if (due_queues > 1) next = now;  // another queue was due too and waits for the next pick
  if (next_due) *next_due = next;
  return batch.queue != nullptr || !batch.expired.empty();
}

size_t Scheduler::queued() const {
  size_t n = 0;
  for (const auto& q : queues_) n += q->size();
  return n;
}

}  // namespace nnd::daemon::sched
