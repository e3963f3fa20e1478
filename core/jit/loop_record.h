// Where a kernel's run-time loops are in its code and how often they run, recorded while the
// kernel is generated (JitConfig::record_loops). The cost model (tools/cost_model) hands each
// loop body to a CPU scheduling model and weights it by these counts. Architecture-neutral: a
// region is a byte range of the kernel's code; the loops of generators/loops.h record theirs on
// every architecture.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace nnd::jit {

// A stretch of code that runs `trips` times for each run of its parent: a loop body with its
// loop control (label to back edge), or a branch taken 0 or 1 times (a remainder tile).
struct LoopRecord {
  size_t begin = 0, end = 0;  // byte offsets [begin, end) into CompiledKernel::bytes
  int parent = -1;            // index of the enclosing record; -1: the kernel's straight-line code
  int64_t trips = 0;          // runs per run of the parent (for a per-sample count: at the planned batch)
  bool per_sample = false;    // the count is read from the call (its batch), not fixed by the spec
};

// How often a region runs per run of its parent: fixed by the kernel's spec, `count` per sample of
// the call (resolved at the recorder's planned batch), or a per-sample count the generator has
// already planned itself (the full tiles and the remainder of a batch's rows).
struct Trips {
  int64_t count = 0;
  bool per_sample = false;
  bool planned = false;
  static Trips fixed(int64_t n) { return {n, false, false}; }
  static Trips samples(int64_t per_sample) { return {per_sample, true, false}; }
  static Trips planned_from_batch(int64_t n) { return {n, true, true}; }
};

// Collects one kernel's regions; regions nest in the order they are opened and closed.
class LoopRecorder {
 public:
  explicit LoopRecorder(int64_t planned_batch) : batch_(planned_batch) {}

  int64_t planned_batch() const { return batch_; }
  int64_t resolve(Trips t) const { return t.per_sample && !t.planned ? t.count * batch_ : t.count; }

  // Opens a region at `begin` running `trips` times (already resolved) per run of the
  // innermost open region.
  void open(size_t begin, int64_t trips, bool per_sample);
  // Never throws (it runs in destructors while a generator error unwinds); a close without an
  // open region is reported by records().
  void close(size_t end) noexcept;

  // The kernel's regions in the order they were opened; nnd::Error (kInternal, naming `kernel`)
  // when a region was left open or closed twice.
  std::vector<LoopRecord> records(const std::string& kernel) const;

 private:
  int64_t batch_;
  std::vector<LoopRecord> records_;
  std::vector<int> open_;
  bool unbalanced_ = false;
};

}  // namespace nnd::jit
