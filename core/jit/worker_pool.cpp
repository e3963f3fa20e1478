#include "core/jit/worker_pool.h"

namespace nnd::jit {

namespace {

// Spin iterations before blocking in a wait. A layer of bop takes 5-50 us on the robot, a futex
// wake-up about as long, so a short spin catches most barriers of a running call; a longer one
// would burn a core another process could use.
constexpr int kSpins = 2000;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// Waits until `a` no longer holds `old`: spins, then blocks (std::atomic::wait is a futex).
void wait_change(const std::atomic<uint32_t>& a, uint32_t old) {
  for (int i = 0; i < kSpins; ++i) {
    if (a.load(std::memory_order_acquire) != old) return;
    cpu_relax();
  }
  while (a.load(std::memory_order_acquire) == old) a.wait(old, std::memory_order_acquire);
}

}  // namespace

WorkerPool::WorkerPool(int threads) : participants_(threads < 2 ? 2 : threads) {
  threads_.reserve(static_cast<size_t>(participants_ - 1));
  for (int p = 1; p < participants_; ++p) threads_.emplace_back([this, p] { worker_main(p); });
}

WorkerPool::~WorkerPool() {
  stop_ = true;
  job_gen_.fetch_add(1, std::memory_order_release);
  job_gen_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void WorkerPool::worker_main(int participant) {
  uint32_t seen = 0;  // job_gen_'s initial value: a job posted before this thread ran is still new
  for (;;) {
    wait_change(job_gen_, seen);
    seen = job_gen_.load(std::memory_order_acquire);
    if (stop_) return;
    fn_(ctx_, participant);
    barrier();  // the job's end: after it nothing of the job is touched
  }
}

bool WorkerPool::try_run(JobFn fn, void* ctx) {
  if (busy_.load(std::memory_order_relaxed) || busy_.exchange(true, std::memory_order_acquire)) return false;
  fn_ = fn;
  ctx_ = ctx;
  job_gen_.fetch_add(1, std::memory_order_release);
  job_gen_.notify_all();
  fn(ctx, 0);
  barrier();
  busy_.store(false, std::memory_order_release);
  return true;
}

void WorkerPool::barrier() {
  const uint32_t round = round_.load(std::memory_order_acquire);
  if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == participants_) {
    arrived_.store(0, std::memory_order_relaxed);
    round_.fetch_add(1, std::memory_order_release);
    round_.notify_all();
    return;
  }
  wait_change(round_, round);
}

}  // namespace nnd::jit
