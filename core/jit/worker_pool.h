// The JIT engine's worker threads for running one call on several cores (EngineOptions::threads).
//
// A pool of `threads - 1` persistent threads, created with the engine and parked on a futex while
// idle; the calling thread is participant 0. run(job) hands every participant the same job, each
// with its own index, and returns when all have finished it. Inside a job the participants meet at
// barrier() (one per layer: spin briefly, then block on a futex), so a job runs layer by layer.
//
// One job at a time: try_run() fails at once (no waiting, no lock) when another call of the same
// engine holds the pool; that call then runs on its own thread only, which gives the same result
// (bit-identical, see docs/jit.md "One call on several cores"). No allocation after construction.
//
// The helpers run at the process's priority. Lowering it (nice +5) was tried so that a split call
// would only use idle cores: on this shared 2-core VM at load 7 the helpers then lost every time
// slice to other processes and bop on 2 threads took 6 ms instead of 0.7 (every barrier waits for
// the slowest participant), so the priority rule lives in the daemon's scheduler instead.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace nnd::jit {

class WorkerPool {
 public:
  // A job: fn(ctx, participant) for every participant 0 .. participants()-1.
  using JobFn = void (*)(void* ctx, int participant);

  explicit WorkerPool(int threads);  // threads >= 2: participants, the caller included
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int participants() const { return participants_; }

  // Runs fn on every participant (this thread is 0) and returns when all returned; false without
  // running anything when another thread's job holds the pool.
  bool try_run(JobFn fn, void* ctx);

  // Inside a job: waits until every participant reached the same barrier.
  void barrier();

 private:
  void worker_main(int participant);

  const int participants_;
  std::vector<std::thread> threads_;
  std::atomic<bool> busy_{false};
  // Job hand-off: a new generation publishes fn_/ctx_ (or stop_).
  std::atomic<uint32_t> job_gen_{0};
  JobFn fn_ = nullptr;
  void* ctx_ = nullptr;
  bool stop_ = false;
  std::atomic<int> done_{0};  // helpers finished with the current job
  // Barrier: arrivals in this round and the round number.
  std::atomic<int> arrived_{0};
  std::atomic<uint32_t> round_{0};
};

}  // namespace nnd::jit
