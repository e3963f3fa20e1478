#include "daemon/sched/stats.h"

#include <bit>

namespace nnd::daemon::sched {

int LatencyHistogram::bucket_of(uint64_t ns) {
  if (ns < static_cast<uint64_t>(kSub)) return static_cast<int>(ns);
  const int msb = 63 - std::countl_zero(ns);  // >= kSubBits
  const int sub = static_cast<int>((ns >> (msb - kSubBits)) & (kSub - 1));
  const int b = (msb - kSubBits + 1) * kSub + sub;
  return b < kBuckets ? b : kBuckets - 1;
}

uint64_t LatencyHistogram::bucket_upper(int b) {
  if (b < kSub) return static_cast<uint64_t>(b);
  const int group = b / kSub;  // >= 1
  const int sub = b % kSub;
  const int shift = group - 1;
  if (shift + kSubBits >= 63) return UINT64_MAX;
  const uint64_t lo = (static_cast<uint64_t>(kSub + sub)) << shift;
  return lo + ((uint64_t{1} << shift) - 1);
}

void LatencyHistogram::record(uint64_t ns) {
  counts_[static_cast<size_t>(bucket_of(ns))].fetch_add(1, std::memory_order_relaxed);
  uint64_t m = max_.load(std::memory_order_relaxed);
  while (ns > m && !max_.compare_exchange_weak(m, ns, std::memory_order_relaxed)) {
  }
}

uint64_t LatencyHistogram::count() const {
  uint64_t n = 0;
  for (const auto& c : counts_) n += c.load(std::memory_order_relaxed);
  return n;
}

uint64_t LatencyHistogram::percentile(double q) const {
  std::array<uint64_t, kBuckets> snap;
  uint64_t n = 0;
  for (int b = 0; b < kBuckets; ++b) {
    snap[static_cast<size_t>(b)] = counts_[static_cast<size_t>(b)].load(std::memory_order_relaxed);
    n += snap[static_cast<size_t>(b)];
  }
  if (n == 0) return 0;
  uint64_t rank = static_cast<uint64_t>(q * static_cast<double>(n) + 0.999999);
  if (rank < 1) rank = 1;
  if (rank > n) rank = n;
  uint64_t acc = 0;
  for (int b = 0; b < kBuckets; ++b) {
    acc += snap[static_cast<size_t>(b)];
    if (acc >= rank) {
      const uint64_t up = bucket_upper(b);
      const uint64_t m = max();
      return up < m ? up : m;
    }
  }
  return max();
}

int ModelStats::latency_bucket_of(uint64_t ns) {
  static constexpr uint32_t kBoundsUs[NND_IPC_LATENCY_BUCKETS - 1] = NND_IPC_LATENCY_BOUNDS_US;
  int b = 0;
  while (b < static_cast<int>(NND_IPC_LATENCY_BUCKETS) - 1 &&
         ns > uint64_t{kBoundsUs[static_cast<size_t>(b)]} * 1000) {
    ++b;
  }
  return b;
}

int ModelStats::batch_bucket_of(uint32_t samples) {
  int b = 0;
  while (b < static_cast<int>(NND_IPC_BATCH_BUCKETS) - 1 && samples > (uint32_t{1} << b)) ++b;
  return b;
}

ModelStatsSnapshot ModelStats::snapshot() const {
  ModelStatsSnapshot s;
  s.name = name_;
  s.requests = requests_.load(std::memory_order_relaxed);
  s.batches = batches_.load(std::memory_order_relaxed);
  s.samples = samples_.load(std::memory_order_relaxed);
  s.errors = errors_.load(std::memory_order_relaxed);
  s.deadline_misses = deadline_misses_.load(std::memory_order_relaxed);
  s.latency_p50_ns = latency_.percentile(0.50);
  s.latency_p99_ns = latency_.percentile(0.99);
  s.latency_max_ns = latency_.max();
  const int64_t depth = depth_.load(std::memory_order_relaxed);
  s.queue_depth = depth > 0 ? static_cast<uint64_t>(depth) : 0;
  s.latency_sum_ns = latency_sum_.load(std::memory_order_relaxed);
  for (size_t b = 0; b < s.latency_buckets.size(); ++b) {
    s.latency_buckets[b] = latency_buckets_[b].load(std::memory_order_relaxed);
  }
  for (size_t b = 0; b < s.batch_buckets.size(); ++b) {
    s.batch_buckets[b] = batch_buckets_[b].load(std::memory_order_relaxed);
  }
  for (size_t b = 0; b < s.errors_by_status.size(); ++b) {
    s.errors_by_status[b] = by_status_[b].load(std::memory_order_relaxed);
  }
  return s;
}

ModelStats* ModelStatsTable::for_model(const std::string& name) {
  std::lock_guard lk(mu_);
  auto it = by_name_.find(name);
  if (it == by_name_.end()) it = by_name_.emplace(name, std::make_unique<ModelStats>(name)).first;
  return it->second.get();
}

std::vector<ModelStatsSnapshot> ModelStatsTable::snapshots() const {
  std::lock_guard lk(mu_);
  std::vector<ModelStatsSnapshot> out;
  out.reserve(by_name_.size());
  for (const auto& [name, st] : by_name_) out.push_back(st->snapshot());
  return out;
}

}  // namespace nnd::daemon::sched
