// Scheduler unit tests with an injected clock (every call takes `now`).
#include <gtest/gtest.h>

#include <deque>
#include <limits>
#include <vector>

#include "daemon/sched/scheduler.h"
#include "daemon/sched/stats.h"

namespace nnd::daemon::sched {
namespace {

constexpr int64_t us = 1000;
constexpr int64_t ms = 1000 * us;

struct Fixture {
  Scheduler s;
  std::deque<Item> items;  // stable addresses
  Batch b;
  explicit Fixture(Policy p = {}) : s(p) { b.reserve(64); }

  Item* add(Queue* q, int64_t now, uint32_t samples = 1, int64_t deadline = kNoDeadline, int tag = 0) {
    items.emplace_back();
    Item* it = &items.back();
    it->enqueue_ns = now;
    it->deadline_ns = deadline;
    it->samples = samples;
    it->user = reinterpret_cast<void*>(static_cast<intptr_t>(tag));
    EXPECT_TRUE(s.push(q, it, now));
    return it;
  }
};

int tag(const Item* it) { return static_cast<int>(reinterpret_cast<intptr_t>(it->user)); }

std::vector<int> tags(const std::vector<Item*>& v) {
  std::vector<int> t;
  for (auto* i : v) t.push_back(tag(i));
  return t;
}

const int kA = 1, kB = 2;

TEST(Scheduler, NoDelayRunsAtOnce) {
  Fixture f;
  Queue* q = f.s.queue_for(&kA, {8, 0, 0}, 64);
  f.add(q, 100, 1, 0, 1);
  ASSERT_TRUE(f.s.pick(100, f.b));
  EXPECT_EQ(f.b.key, &kA);
  EXPECT_EQ(tags(f.b.items), (std::vector<int>{1}));
  EXPECT_EQ(f.b.samples, 1u);
  EXPECT_FALSE(f.s.pick(100, f.b));
}

TEST(Scheduler, BatchesUpToMaxBatch) {
  Fixture f;
  Queue* q = f.s.queue_for(&kA, {4, 1 * ms, 0}, 64);
  for (int i = 0; i < 6; ++i) f.add(q, 10, 1, 0, i);
  // 6 samples queued, max 4: due at once although the delay has not elapsed.
  int64_t next = 0;
  ASSERT_TRUE(f.s.pick(10, f.b, &next));
  EXPECT_EQ(tags(f.b.items), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(f.b.samples, 4u);
  // The remaining 2 wait for the delay.
  EXPECT_EQ(next, 10 + 1 * ms);
  EXPECT_FALSE(f.s.pick(10 + 1 * ms - 1, f.b));
  ASSERT_TRUE(f.s.pick(10 + 1 * ms, f.b));
  EXPECT_EQ(tags(f.b.items), (std::vector<int>{4, 5}));
}

TEST(Scheduler, MultiSampleRequestsAreNotSplit) {
  Fixture f;
  Queue* q = f.s.queue_for(&kA, {8, 0, 0}, 64);
  f.add(q, 0, 5, 0, 1);
  f.add(q, 0, 4, 0, 2);  // 5 + 4 > 8: the second waits for the next batch
  f.add(q, 0, 3, 0, 3);
  ASSERT_TRUE(f.s.pick(0, f.b));
  EXPECT_EQ(tags(f.b.items), (std::vector<int>{1}));
  EXPECT_EQ(f.b.samples, 5u);
  ASSERT_TRUE(f.s.pick(0, f.b));
  EXPECT_EQ(tags(f.b.items), (std::vector<int>{2, 3}));
  EXPECT_EQ(f.b.samples, 7u);
}

TEST(Scheduler, DelayIsBoundedByOldestRequest) {
  Fixture f;
  Queue* q = f.s.queue_for(&kA, {16, 500 * us, 0}, 64);
  f.add(q, 1000, 1, 0, 1);
  int64_t next = 0;
  EXPECT_FALSE(f.s.pick(1000, f.b, &next));
  EXPECT_EQ(next, 1000 + 500 * us);
  // A later arrival does not postpone the batch.
  f.add(q, 1000 + 400 * us, 1, 0, 2);
  EXPECT_FALSE(f.s.pick(1000 + 499 * us, f.b, &next));
  EXPECT_EQ(next, 1000 + 500 * us);
  ASSERT_TRUE(f.s.pick(1000 + 500 * us, f.b));
  EXPECT_EQ(tags(f.b.items), (std::vector<int>{1, 2}));
}

TEST(Scheduler, EarliestDeadlineFirst) {
  Fixture f;
  Queue* q = f.s.queue_for(&kA, {2, 1 * ms, 0}, 64);
  f.add(q, 0, 1, 90 * ms, 1);
  f.add(q, 0, 1, 30 * ms, 2);
  f.add(q, 0, 1, 60 * ms, 3);
  f.add(q, 0, 1, 10 * ms, 4);
  ASSERT_TRUE(f.s.pick(0, f.b));  // 4 samples >= max_batch 2: due
  EXPECT_EQ(tags(f.b.items), (std::vector<int>{4, 2}));
  ASSERT_TRUE(f.s.pick(1 * ms, f.b));
  EXPECT_EQ(tags(f.b.items), (std::vector<int>{3, 1}));
}

TEST(Scheduler, RequestsWithoutDeadlineAreNotStarvedByDeadlines) {
  Policy p;
  p.implicit_deadline_ns = 5 * ms;
  Fixture f(p);
  Queue* q = f.s.queue_for(&kA, {1, 0, 0}, 64);
  f.add(q, 0, 1, kNoDeadline, 100);  // ordered as if due at 5 ms
  int64_t now = 0;
  std::vector<int> order;
  for (int i = 0; i < 10; ++i) {
    f.add(q, now, 1, now + 20 * ms, i);  // keep a deadline request ahead... until 5 ms
    ASSERT_TRUE(f.s.pick(now, f.b));
    order.push_back(tag(f.b.items[0]));
    now += 1 * ms;
  }
  // The no-deadline request runs once deadline requests' keys pass its implicit 5 ms key.
  EXPECT_NE(std::find(order.begin(), order.end(), 100), order.end());
}

TEST(Scheduler, ExpiredRequestsAreReturnedWithoutRunning) {
  Fixture f;
  Queue* q = f.s.queue_for(&kA, {8, 10 * ms, 0}, 64);
  f.add(q, 0, 1, 2 * ms, 1);
  f.add(q, 0, 1, 100 * ms, 2);
  // The queue is not due yet (delay 10 ms) but request 1 expired at 2 ms.
  int64_t next = 0;
  // Latest start of request 1 is min(10 ms, (2 ms)/2) = 1 ms: the queue is due at 1 ms.
  EXPECT_FALSE(f.s.pick(500 * us, f.b, &next));
  EXPECT_EQ(next, 1 * ms);
  ASSERT_TRUE(f.s.pick(3 * ms, f.b));
  EXPECT_EQ(tags(f.b.expired), (std::vector<int>{1}));
  // Request 2 (deadline 100 ms -> latest start min(10, 50) ms) is not due at 3 ms.
  EXPECT_EQ(f.b.queue, nullptr);
  EXPECT_TRUE(f.b.items.empty());
  ASSERT_TRUE(f.s.pick(10 * ms, f.b));
  EXPECT_EQ(tags(f.b.items), (std::vector<int>{2}));
  EXPECT_TRUE(f.b.expired.empty());
}

TEST(Scheduler, ExpiredBehindHeadIsSkippedWhenBatching) {
  Policy p;
  p.implicit_deadline_ns = 1 * ms;
  Fixture f(p);
  Queue* q = f.s.queue_for(&kA, {8, 0, 0}, 64);
  f.add(q, 0, 1, kNoDeadline, 1);  // key 1 ms
  f.add(q, 0, 1, 2 * ms, 2);       // key 2 ms, expires at 2 ms
  ASSERT_TRUE(f.s.pick(5 * ms, f.b));
  EXPECT_EQ(tags(f.b.items), (std::vector<int>{1}));
  EXPECT_EQ(tags(f.b.expired), (std::vector<int>{2}));
}

// Runs a burst on a priority-5 model (`per_step` new requests per 100 us step, one run per step)
// against one waiting request of a priority-0 model; returns the step the low model ran at.
int low_model_runs_at(int per_step) {
  Policy p;
  p.aging_ns = 1 * ms;
  Fixture f(p);
  Queue* hi = f.s.queue_for(&kA, {1, 0, 5}, 4096);
  Queue* lo = f.s.queue_for(&kB, {1, 0, 0}, 16);
  f.add(lo, 0, 1, 0, -1);
  int64_t now = 0;
  for (int i = 0; i < 1000; ++i) {
    for (int k = 0; k < per_step; ++k) f.add(hi, now, 1, 0, i);
    EXPECT_TRUE(f.s.pick(now, f.b));
    if (f.b.key == &kB) return i;
    now += 100 * us;
  }
  return -1;
}

TEST(Scheduler, PriorityWinsAndAgingPreventsStarvation) {
  // Priority 5 vs 0, one level per 1 ms of waiting: the low model runs after ~5 ms (50 steps),
  // not at once and not never.
  const int at = low_model_runs_at(1);
  EXPECT_GE(at, 45);
  EXPECT_LE(at, 55);
}

TEST(Scheduler, OverloadedHighPriorityStillCannotStarve) {
  // The high model gets twice what one worker can run; its own backlog ages too, yet the low
  // model still gets its turn.
  const int at = low_model_runs_at(2);
  EXPECT_GT(at, 50);
  EXPECT_LT(at, 150);
}

TEST(Scheduler, HigherPriorityFirstWhenBothDue) {
  Fixture f;
  Queue* hi = f.s.queue_for(&kA, {4, 0, 3}, 64);
  Queue* lo = f.s.queue_for(&kB, {4, 0, 1}, 64);
  f.add(lo, 0, 1, 0, 1);
  f.add(hi, 0, 1, 0, 2);
  int64_t next = 0;
  ASSERT_TRUE(f.s.pick(0, f.b, &next));
  EXPECT_EQ(f.b.key, &kA);
  EXPECT_EQ(next, 0);  // the other queue is due too
  ASSERT_TRUE(f.s.pick(0, f.b));
  EXPECT_EQ(f.b.key, &kB);
}

// A split queue (threads > 1) waits while the caller's free-core budget is short; meanwhile a
// lower-priority queue runs, the held-back queue neither counts as due nor makes next_due "now",
// and only its head's deadline bounds next_due.
TEST(Scheduler, SplitQueueWaitsForFreeCoresWhileOthersRun) {
  Fixture f;
  Queue* split = f.s.queue_for(&kA, {4, 0, 5, 2}, 64);
  Queue* small = f.s.queue_for(&kB, {4, 0, 0}, 64);
  f.add(split, 0, 1, 0, 1);
  f.add(small, 0, 1, 0, 2);
  int64_t next = 0;
  // Budget 1 core: the split queue (2 threads) is held back although its priority is higher.
  ASSERT_TRUE(f.s.pick(0, f.b, &next, 1));
  EXPECT_EQ(f.b.key, &kB);
  EXPECT_EQ(next, std::numeric_limits<int64_t>::max());  // not "due now": no spinning
  EXPECT_FALSE(f.s.pick(10, f.b, &next, 0));
  EXPECT_EQ(f.s.queued(), 1u);
  // A deadline behind the held-back head wakes the caller at that time and is answered then.
  f.add(split, 10, 1, 50 * us, 3);
  EXPECT_FALSE(f.s.pick(20, f.b, &next, 0));
  EXPECT_EQ(next, 50 * us);
  ASSERT_TRUE(f.s.pick(50 * us, f.b, &next, 0));
  EXPECT_EQ(f.b.queue, nullptr);
  EXPECT_EQ(tags(f.b.expired), (std::vector<int>{3}));
  // Enough cores (or none running): it runs.
  ASSERT_TRUE(f.s.pick(60 * us, f.b, &next, 2));
  EXPECT_EQ(f.b.key, &kA);
  EXPECT_EQ(tags(f.b.items), (std::vector<int>{1}));
  // Unsplit queues ignore the budget.
  f.add(small, 70 * us, 1, 0, 4);
  ASSERT_TRUE(f.s.pick(70 * us, f.b, &next, 0));
  EXPECT_EQ(f.b.key, &kB);
}

TEST(Scheduler, FullQueueRefusesWithoutGrowing) {
  Fixture f;
  Queue* q = f.s.queue_for(&kA, {4, 1 * ms, 0}, 2);
  f.add(q, 0);
  f.add(q, 0);
  Item extra;
  extra.samples = 1;
  EXPECT_FALSE(f.s.push(q, &extra, 0));
  EXPECT_EQ(f.s.queued(), 2u);
}

TEST(Scheduler, DrainAndRetire) {
  Fixture f;
  Queue* q = f.s.queue_for(&kA, {4, 1 * ms, 0}, 8);
  f.s.queue_for(&kB, {4, 1 * ms, 0}, 8);
  f.add(q, 0);
  f.add(q, 0);
  int n = 0;
  f.s.drain([&](Item*) { ++n; });
  EXPECT_EQ(n, 2);
  EXPECT_EQ(f.s.queued(), 0u);
  f.s.retire_empty([&](const void* k) { return k == &kA; });
  EXPECT_EQ(f.s.queue_count(), 1u);
  EXPECT_NE(f.s.find(&kA), nullptr);
  EXPECT_EQ(f.s.find(&kB), nullptr);
}

TEST(LatencyHistogram, Percentiles) {
  LatencyHistogram h;
  EXPECT_EQ(h.percentile(0.5), 0u);
  for (uint64_t i = 1; i <= 1000; ++i) h.record(i * 1000);  // 1 us .. 1 ms
  EXPECT_EQ(h.count(), 1000u);
  EXPECT_EQ(h.max(), 1'000'000u);
  const uint64_t p50 = h.percentile(0.5), p99 = h.percentile(0.99);
  EXPECT_GE(p50, 500'000u);
  EXPECT_LE(p50, 500'000u * 9 / 8 + 1);
  EXPECT_GE(p99, 990'000u);
  EXPECT_LE(p99, 1'000'000u);
  for (uint64_t v : {0ull, 1ull, 7ull, 8ull, 9ull, 1000ull, 123456789ull, ~0ull}) {
    const int b = LatencyHistogram::bucket_of(v);
    ASSERT_GE(b, 0);
    ASSERT_LT(b, LatencyHistogram::kBuckets);
    EXPECT_GE(LatencyHistogram::bucket_upper(b), v) << v;
  }
}

TEST(ModelStats, CountsErrorsAndMisses) {
  ModelStats s("m");
  s.add_batch(3);
  s.add_request(NND_IPC_OK, 100);
  s.add_request(NND_IPC_OK, 200);
  s.add_request(NND_IPC_E_DEADLINE, 0);
  const auto snap = s.snapshot();
  EXPECT_EQ(snap.name, "m");
  EXPECT_EQ(snap.batches, 1u);
  EXPECT_EQ(snap.samples, 3u);
  EXPECT_EQ(snap.requests, 3u);
  EXPECT_EQ(snap.errors, 1u);
  EXPECT_EQ(snap.deadline_misses, 1u);
  EXPECT_EQ(snap.latency_max_ns, 200u);
}

TEST(ModelStats, MetricsBucketsAndErrorsByStatus) {
  ModelStats s("m");
  for (uint32_t n : {1u, 2u, 3u, 64u, 100000u}) s.add_batch(n);
  s.add_request(NND_IPC_OK, 40'000);        // 40 us  -> le 50 us
  s.add_request(NND_IPC_OK, 50'000);        // 50 us  -> le 50 us (bounds are inclusive)
  s.add_request(NND_IPC_OK, 3'000'000);     // 3 ms   -> le 5 ms
  s.add_request(NND_IPC_OK, 9'000'000'000); // 9 s    -> +Inf
  s.add_request(NND_IPC_E_OVERLOADED, 0);
  s.add_request(NND_IPC_E_OVERLOADED, 0);
  s.add_request(NND_IPC_E_SHAPE, 0);
  s.queued();
  s.queued();
  s.dequeued();
  const auto snap = s.snapshot();
  EXPECT_EQ(snap.batch_buckets[0], 1u);   // 1
  EXPECT_EQ(snap.batch_buckets[1], 1u);   // 2
  EXPECT_EQ(snap.batch_buckets[2], 1u);   // 3 -> le 4
  EXPECT_EQ(snap.batch_buckets[6], 1u);   // 64
  EXPECT_EQ(snap.batch_buckets[NND_IPC_BATCH_BUCKETS - 1], 1u);  // beyond 2^15
  EXPECT_EQ(snap.latency_buckets[0], 2u);
  EXPECT_EQ(snap.latency_buckets[6], 1u);
  EXPECT_EQ(snap.latency_buckets[NND_IPC_LATENCY_BUCKETS - 1], 1u);
  EXPECT_EQ(snap.latency_sum_ns, 9'003'090'000u);
  EXPECT_EQ(snap.errors_by_status[NND_IPC_E_OVERLOADED], 2u);
  EXPECT_EQ(snap.errors_by_status[NND_IPC_E_SHAPE], 1u);
  EXPECT_EQ(snap.errors, 3u);
  EXPECT_EQ(snap.queue_depth, 1u);
}

}  // namespace
}  // namespace nnd::daemon::sched
