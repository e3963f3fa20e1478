// The run-time loops of the kernel generators, written once for every architecture: their shapes
// (a counted loop, a count-down loop on a counter set elsewhere, once-or-loop, the
// vector-then-scalar element loop) and the regions they record for the cost model
// (core/jit/loop_record.h). Each architecture supplies only its branch instructions, as a
// specialisation of LoopBranches for its assembler (x86/counted_loop_p.h, arm64/regs_p.h):
//
//   set(a, counter, n)             counter = n
//   count_down(a, counter, l)      counter -= 1; branch to l while counter != 0
//   branch_below(a, counter, k, l) branch to l if counter < k (unsigned)
//   sub(a, counter, k)             counter -= k
//   jump(a, l)                     branch to l
//   branch_zero(a, counter, l)     branch to l if counter == 0
//   branch_not_equal(a, counter, k, l)  branch to l if counter != k
//
// The emitter `ve` of every function is the architecture's (VecEmitter, NeonEmitter): the loops
// read its loop recorder and assembler. A counter is what the architecture's branches take (x86: a
// register or a stack slot; AArch64: a register). Bodies are template parameters, not
// std::function: a closure capturing a generator's locals is larger than std::function's inline
// buffer, and these loops are emitted for every tile while a model loads.
#pragma once

#include <asmjit/core.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "core/jit/loop_record.h"
#include "core/util/error.h"

namespace nnd::jit::loops {

// Specialised per architecture's assembler type; the primary template has no definition.
template <class Assembler>
struct LoopBranches;

template <class Ve>
using AssemblerOf = std::remove_reference_t<decltype(std::declval<Ve&>().as())>;

template <class Ve>
using BranchesOf = LoopBranches<AssemblerOf<Ve>>;

// Records the code emitted during its lifetime as a region running `trips` times per run of the
// enclosing region, when the emitter has a recorder; otherwise nothing. Open it where the loop's
// label is bound and let it end after the back edge.
template <class Ve>
class RecordedRegion {
 public:
  RecordedRegion(Ve& ve, Trips trips) : ve_(ve) {
    if (LoopRecorder* r = ve_.loop_recorder()) r->open(ve_.as().offset(), r->resolve(trips), trips.per_sample);
  }
  ~RecordedRegion() {
    if (LoopRecorder* r = ve_.loop_recorder()) r->close(ve_.as().offset());
  }
  RecordedRegion(const RecordedRegion&) = delete;
  RecordedRegion& operator=(const RecordedRegion&) = delete;

 private:
  Ve& ve_;
};

// The planned value of a run-time count (the loop records' batch); 0 without a recorder, where
// nothing reads it.
template <class Ve>
int64_t planned(const Ve& ve, Trips t) {
  const LoopRecorder* r = ve.loop_recorder();
  return r ? r->resolve(t) : 0;
}

// L: body(); count down; branch to L. The counter holds at least 1 on entry (the batch size from
// KernelArgs, a counted_loop's n); `trips` is what it holds, for the loop records. body() advances
// its pointers itself and must leave the counter as it found it.
template <class Ve, class Counter, class Body>
void count_down_loop(Ve& ve, const Counter& counter, Trips trips, Body&& body) {
  auto& a = ve.as();
  asmjit::Label l = a.newLabel();
  a.bind(l);
  RecordedRegion<Ve> region(ve, trips);
  body();
  BranchesOf<Ve>::count_down(a, counter, l);
}

// body() n >= 1 times: counter = n, then count_down_loop.
template <class Ve, class Counter, class Body>
void counted_loop(Ve& ve, const Counter& counter, int64_t n, Body&& body) {
  // Counting down from 0 would run 2^64 times: a zero-trip loop is the caller's to skip.
  if (n < 1) throw Error(ErrorCode::kInternal, "JIT internal error: a counted loop of " + std::to_string(n) + " iterations");
  BranchesOf<Ve>::set(ve.as(), counter, n);
  count_down_loop(ve, counter, Trips::fixed(n), body);
}

// body() n >= 0 times: no code for 0, the body once without a loop for 1, else counted_loop (the
// body then advances its own pointers each time, as the code after the loop expects).
template <class Ve, class Counter, class Body>
void times_loop(Ve& ve, const Counter& counter, int64_t n, Body&& body) {
  if (n <= 0) return;
  if (n == 1) {
    body();
    return;
  }
  counted_loop(ve, counter, n, body);
}

// body() n >= 1 times with advance() between iterations; n == 1 emits body() once with no loop
// and no advance() (the kernel-row and kernel-column loops of a 1-high or 1-wide kernel).
template <class Ve, class Counter, class Body, class Advance>
void repeat_loop(Ve& ve, const Counter& counter, int64_t n, Body&& body, Advance&& advance) {
  if (n == 1) {
    body();
    return;
  }
  counted_loop(ve, counter, n, [&] {
    body();
    advance();
  });
}

// L: if counter < step, branch to `exit`; body(); counter -= step; branch to L. The region is
// recorded `trips` times; the caller binds `exit`.
template <class Ve, class Counter, class Body>
void while_at_least_loop(Ve& ve, const Counter& counter, int step, Trips trips, const asmjit::Label& exit, Body&& body) {
  using B = BranchesOf<Ve>;
  auto& a = ve.as();
  asmjit::Label l = a.newLabel();
  a.bind(l);
  RecordedRegion<Ve> region(ve, trips);
  B::branch_below(a, counter, step, exit);
  body();
  B::sub(a, counter, step);
  B::jump(a, l);
}

// While `counter` >= step: vector(), counter -= step; then scalar() `counter` times (none when 0).
// vector() and scalar() advance their pointers themselves. `total` is what the counter holds.
template <class Ve, class Counter, class Vector, class Scalar>
void vector_then_scalar_loop(Ve& ve, const Counter& counter, int step, Trips total, Vector&& vector, Scalar&& scalar) {
  using B = BranchesOf<Ve>;
  auto& a = ve.as();
  const int64_t n = planned(ve, total);
  asmjit::Label ltail = a.newLabel(), ldone = a.newLabel();
  while_at_least_loop(ve, counter, step, Trips{n / step, total.per_sample, true}, ltail, vector);
  a.bind(ltail);
  B::branch_zero(a, counter, ldone);
  {
    asmjit::Label ls = a.newLabel();
    a.bind(ls);
    RecordedRegion<Ve> region(ve, Trips{n % step, total.per_sample, true});
    scalar();
    B::count_down(a, counter, ls);
  }
  a.bind(ldone);
}

// The samples of a call, the counter holding the batch size (at least 1): group() over S samples
// while at least S are left, then single() once per sample left (the tiles that span S samples,
// conv_tiling.h). S == 1: single() for every sample. Each advances its pointers itself.
template <class Ve, class Counter, class Group, class Single>
void sample_groups_loop(Ve& ve, const Counter& counter, int S, Group&& group, Single&& single) {
  if (S > 1) {
    vector_then_scalar_loop(ve, counter, S, Trips::samples(1), group, single);
    return;
  }
  count_down_loop(ve, counter, Trips::planned_from_batch(planned(ve, Trips::samples(1))), single);
}

// Rows in tiles, the counter holding how many are left (`total`, for the records): full() over
// R rows while at least R are left (full() advances the pointers, the loop counts down), then
// remainder(r) for the one last tile of r = counter < R rows, chosen at run time by comparing the
// counter with R-1 .. 1 (the GEMM rows of a conv: batch * positions rows, R per tile).
template <class Ve, class Counter, class Full, class Remainder>
void row_tiles_loop(Ve& ve, const Counter& counter, int R, Trips total, Full&& full, Remainder&& remainder) {
  using B = BranchesOf<Ve>;
  auto& a = ve.as();
  const int64_t n = planned(ve, total);
  asmjit::Label ltail = a.newLabel(), ldone = a.newLabel();
  while_at_least_loop(ve, counter, R, Trips::planned_from_batch(n / R), ltail, full);
  a.bind(ltail);
  for (int r = R - 1; r >= 1; --r) {
    asmjit::Label next = a.newLabel();
    B::branch_not_equal(a, counter, r, next);
    {
      RecordedRegion<Ve> region(ve, Trips::planned_from_batch(n % R == r ? 1 : 0));
      remainder(r);
      B::jump(a, ldone);
    }
    a.bind(next);
  }
  a.bind(ldone);
}

}  // namespace nnd::jit::loops
