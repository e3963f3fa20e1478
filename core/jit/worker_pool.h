// The JIT engine's worker threads for running one call on several cores (EngineOptions::threads).
//
// A pool of `threads - 1` persistent threads, created with the engine and parked on a futex while
// idle; the calling thread is participant 0. try_run(job) wakes the helpers and runs the job on
// the calling thread; each helper that wakes up while the job is still open runs it too, with its
// own participant index. A job must therefore be correct with any subset of the helpers taking
// part, the caller alone included: the engine's job hands out bands of work that whoever comes
// first claims, and waits only for claimed bands to be done (jit_engine.cpp, SplitCall). So a
// helper the OS has not scheduled (a loaded machine, a daemon worker of another model on that
// core) delays nothing: its share is done by the others. try_run returns when the job is done and
// no helper is inside it any more.
//
// One job at a time: try_run() fails at once (no waiting, no lock) when another call of the same
// engine holds the pool; that call then runs on its own thread only, which gives the same result
// (bit-identical, docs/jit.md "One call on several cores"). No allocation after construction.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace nnd::jit {

class WorkerPool {
 public:
  // A job: fn(ctx, participant), participant 0 the caller, 1.. the helpers that join.
  using JobFn = void (*)(void* ctx, int participant);

  explicit WorkerPool(int threads);  // threads >= 2: participants, the caller included
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int participants() const { return participants_; }

  // Runs fn on this thread (participant 0) and on the helpers that join; returns when fn returned
  // here and no helper is inside it. false without running anything when another thread's job
  // holds the pool.
  bool try_run(JobFn fn, void* ctx);

  // Spin briefly, then yield, until `ready()`: the wait for a band another participant claimed.
  template <class Ready>
  static void wait_until(Ready ready) {
    for (int i = 0; !ready(); ++i) {
      if (i < kSpins) cpu_relax();
      else std::this_thread::yield();
    }
  }

 private:
  static constexpr int kSpins = 2000;
  static void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield" ::: "memory");
#endif
  }
  void worker_main(int participant);

  const int participants_;
  std::vector<std::thread> threads_;
  std::atomic<bool> busy_{false};
  // Job hand-off: a new generation publishes fn_/ctx_ (or stop_); open_ says the job still takes
  // helpers, inside_ counts the helpers in it.
  std::atomic<uint32_t> job_gen_{0};
  JobFn fn_ = nullptr;
  void* ctx_ = nullptr;
  std::atomic<bool> stop_{false};  // atomic: a helper woken late by a finished job reads it
  std::atomic<bool> open_{false};
  std::atomic<int> inside_{0};
};

}  // namespace nnd::jit
