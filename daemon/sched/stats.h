// Per-model serving statistics: counters and a fixed-size latency histogram, updated lock-free by
// the worker threads and read by the control thread (nnctl stats).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ipc/nnd_ipc.h"

namespace nnd::daemon::sched {

// Log-linear histogram of nanosecond latencies: 8 sub-buckets per power of two (relative error
// of a reported percentile <= 12.5%), 64 powers, no allocation, relaxed atomics.
class LatencyHistogram {
 public:
  static constexpr int kSubBits = 3;
  static constexpr int kSub = 1 << kSubBits;
  static constexpr int kBuckets = 64 * kSub;

  void record(uint64_t ns);
  // Upper bound of the bucket holding the q-quantile (0 < q <= 1); 0 when empty.
  uint64_t percentile(double q) const;
  uint64_t max() const { return max_.load(std::memory_order_relaxed); }
  uint64_t count() const;

  static int bucket_of(uint64_t ns);
  static uint64_t bucket_upper(int b);

 private:
  std::array<std::atomic<uint64_t>, kBuckets> counts_{};
  std::atomic<uint64_t> max_{0};
};

struct ModelStatsSnapshot {
  std::string name;
  uint64_t requests = 0;         // requests answered (any status)
  uint64_t batches = 0;          // engine runs
  uint64_t samples = 0;          // samples run
  uint64_t errors = 0;           // requests answered with an error status (incl. deadline misses)
  uint64_t deadline_misses = 0;  // requests answered NND_IPC_E_DEADLINE
  uint64_t latency_p50_ns = 0;   // daemon-side latency: request seen -> completion pushed
  uint64_t latency_p99_ns = 0;
  uint64_t latency_max_ns = 0;
  // Metrics (nnctl stats --json, nnctl metrics): fixed buckets of ipc/nnd_ipc.h.
  uint64_t queue_depth = 0;      // requests queued or running now
  uint64_t latency_sum_ns = 0;   // over the requests in latency_buckets (answered OK)
  std::array<uint64_t, NND_IPC_LATENCY_BUCKETS> latency_buckets{};  // not cumulative
  std::array<uint64_t, NND_IPC_BATCH_BUCKETS> batch_buckets{};      // runs of <= 2^b samples
  std::array<uint64_t, NND_IPC_STATUS_CODES> errors_by_status{};    // [0] unused
};

class ModelStats {
 public:
  explicit ModelStats(std::string name) : name_(std::move(name)) {}
  const std::string& name() const { return name_; }

  // Engine time of the latest run of this model (0 before the first): the dispatcher's guess of
  // how long the next one takes.
  void note_run_ns(int64_t run_ns) { last_run_ns_.store(run_ns, std::memory_order_relaxed); }
  int64_t last_run_ns() const { return last_run_ns_.load(std::memory_order_relaxed); }

  void add_batch(uint32_t samples) {
    batches_.fetch_add(1, std::memory_order_relaxed);
    samples_.fetch_add(samples, std::memory_order_relaxed);
    batch_buckets_[static_cast<size_t>(batch_bucket_of(samples))].fetch_add(1, std::memory_order_relaxed);
  }
  // `status` is the nnd_ipc_status the request was answered with.
  void add_request(int32_t status, uint64_t latency_ns) {
    requests_.fetch_add(1, std::memory_order_relaxed);
    if (status != NND_IPC_OK) {
      errors_.fetch_add(1, std::memory_order_relaxed);
      const auto s = static_cast<uint32_t>(status);
      by_status_[s < NND_IPC_STATUS_CODES ? s : uint32_t{NND_IPC_E_INTERNAL}].fetch_add(1, std::memory_order_relaxed);
    }
    if (status == NND_IPC_E_DEADLINE) deadline_misses_.fetch_add(1, std::memory_order_relaxed);
    if (status == NND_IPC_OK) {
      latency_.record(latency_ns);
      latency_buckets_[static_cast<size_t>(latency_bucket_of(latency_ns))].fetch_add(
          1, std::memory_order_relaxed);
      latency_sum_.fetch_add(latency_ns, std::memory_order_relaxed);
    }
  }
  // Requests accepted into the model's queue / finished (queue depth = queued + running).
  void queued() { depth_.fetch_add(1, std::memory_order_relaxed); }
  void dequeued() { depth_.fetch_sub(1, std::memory_order_relaxed); }

  static int latency_bucket_of(uint64_t ns);  // index into NND_IPC_LATENCY_BOUNDS_US, or the last
  static int batch_bucket_of(uint32_t samples);
  ModelStatsSnapshot snapshot() const;

 private:
  std::string name_;
  std::atomic<uint64_t> requests_{0}, batches_{0}, samples_{0}, errors_{0}, deadline_misses_{0};
  std::atomic<int64_t> last_run_ns_{0};
  LatencyHistogram latency_;
  std::atomic<int64_t> depth_{0};
  std::atomic<uint64_t> latency_sum_{0};
  std::array<std::atomic<uint64_t>, NND_IPC_LATENCY_BUCKETS> latency_buckets_{};
  std::array<std::atomic<uint64_t>, NND_IPC_BATCH_BUCKETS> batch_buckets_{};
  std::array<std::atomic<uint64_t>, NND_IPC_STATUS_CODES> by_status_{};
};

// The statistics of every model name ever served, kept across reloads (a model that a reload
// replaces keeps counting under its name). Thread-safe: the table has its own mutex, taken only
// to find or create an entry and to list them; the entries themselves are updated lock-free.
class ModelStatsTable {
 public:
  // The entry for `name`, created on first use. The pointer stays valid as long as the table.
  ModelStats* for_model(const std::string& name);
  std::vector<ModelStatsSnapshot> snapshots() const;  // sorted by name

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<ModelStats>, std::less<>> by_name_;
};

}  // namespace nnd::daemon::sched
