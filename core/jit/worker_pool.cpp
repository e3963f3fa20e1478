#include "core/jit/worker_pool.h"

namespace nnd::jit {

WorkerPool::WorkerPool(int threads) : participants_(threads < 2 ? 2 : threads) {
  threads_.reserve(static_cast<size_t>(participants_ - 1));
  for (int p = 1; p < participants_; ++p) threads_.emplace_back([this, p] { worker_main(p); });
}

WorkerPool::~WorkerPool() {
  stop_.store(true, std::memory_order_relaxed);  // published by the release bump below
  job_gen_.fetch_add(1, std::memory_order_release);
  job_gen_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void WorkerPool::worker_main(int participant) {
  uint32_t seen = 0;  // job_gen_'s initial value: a job posted before this thread ran is still new
  for (;;) {
    // Parked: a short spin catches the next call of a model run back to back, then the futex.
    for (int i = 0; i < kSpins && job_gen_.load(std::memory_order_acquire) == seen; ++i) cpu_relax();
    while (job_gen_.load(std::memory_order_acquire) == seen) job_gen_.wait(seen, std::memory_order_acquire);
    seen = job_gen_.load(std::memory_order_acquire);
    if (stop_.load(std::memory_order_relaxed)) return;
    // Enter only a job that is still open and is the one announced (seq_cst against try_run's
    // close-then-count: either it sees this helper inside, or this helper sees it closed).
    inside_.fetch_add(1, std::memory_order_seq_cst);
    if (open_.load(std::memory_order_seq_cst) && job_gen_.load(std::memory_order_seq_cst) == seen) {
      fn_(ctx_, participant);
    }
    inside_.fetch_sub(1, std::memory_order_release);
  }
}

bool WorkerPool::try_run(JobFn fn, void* ctx) {
  if (busy_.load(std::memory_order_relaxed) || busy_.exchange(true, std::memory_order_acquire)) return false;
  fn_ = fn;
  ctx_ = ctx;
  open_.store(true, std::memory_order_seq_cst);
  job_gen_.fetch_add(1, std::memory_order_seq_cst);
  job_gen_.notify_all();
  fn(ctx, 0);
  open_.store(false, std::memory_order_seq_cst);
  wait_until([this] { return inside_.load(std::memory_order_seq_cst) == 0; });
  busy_.store(false, std::memory_order_release);
  return true;
}

}  // namespace nnd::jit
