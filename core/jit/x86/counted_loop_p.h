// Run-time loops for the kernel generators (private): the `mov counter, n; L: body; dec counter;
// jnz L` shape written once, the vector-then-scalar element loop, and chunks() over a span of
// floats. A counter is a general-purpose register or a stack slot (x86/stack_frame_p.h). Each
// loop records its body's code range and count when the emitter has a loop recorder (the cost
// model's loop records, core/jit/loop_record.h); loops written by hand use RecordedRegion.
#pragma once

#include <concepts>
#include <cstdint>
#include <functional>
#include <string>

#include "core/jit/x86/kernel_regs_p.h"
#include "core/util/error.h"

namespace nnd::jit::regs {

// The counter: a general-purpose register or a stack slot. The bodies are template parameters,
// not std::function: a closure capturing a generator's locals is larger than std::function's
// inline buffer, and these loops are emitted for every tile while a model loads.
template <typename Counter>
concept LoopCounter = std::same_as<Counter, x86::Gp> || std::same_as<Counter, x86::Mem>;

// Records the code emitted during its lifetime as a region running `trips` times per run of the
// enclosing region (core/jit/loop_record.h), when the emitter has a recorder; otherwise nothing.
// Open it where the loop's label is bound and let it end after the back edge.
class RecordedRegion {
 public:
  RecordedRegion(VecEmitter& ve, Trips trips) : ve_(ve) {
    if (LoopRecorder* r = ve_.loop_recorder()) r->open(ve_.as().offset(), r->resolve(trips), trips.per_sample);
  }
  ~RecordedRegion() {
    if (LoopRecorder* r = ve_.loop_recorder()) r->close(ve_.as().offset());
  }
  RecordedRegion(const RecordedRegion&) = delete;
  RecordedRegion& operator=(const RecordedRegion&) = delete;

 private:
  VecEmitter& ve_;
};

// The planned value of a run-time count (the loop records' batch); 0 without a recorder, where
// nothing reads it.
inline int64_t planned(const VecEmitter& ve, Trips t) {
  const LoopRecorder* r = ve.loop_recorder();
  return r ? r->resolve(t) : 0;
}

// body() runs n >= 1 times: mov counter, n; L: body(); dec counter; jnz L. body() advances its
// pointers itself and must leave `counter` as it found it.
template <LoopCounter Counter, typename Body>
void counted_loop(VecEmitter& ve, const Counter& counter, int64_t n, Body&& body);

// The same loop with the counter already set (at least 1), e.g. the batch size from KernelArgs;
// `trips` is what the counter holds, for the loop records.
template <LoopCounter Counter, typename Body>
void count_down_loop(VecEmitter& ve, const Counter& counter, Trips trips, Body&& body) {
  x86::Assembler& a = ve.as();
  asmjit::Label l = a.newLabel();
  a.bind(l);
  RecordedRegion region(ve, trips);
  body();
  a.dec(counter);
  a.jnz(l);
}

template <LoopCounter Counter, typename Body>
void counted_loop(VecEmitter& ve, const Counter& counter, int64_t n, Body&& body) {
  // dec/jnz from 0 would run 2^64 times: a zero-trip loop is the caller's to skip.
  if (n < 1) throw Error(ErrorCode::kInternal, "JIT internal error: a counted loop of " + std::to_string(n) + " iterations");
  ve.as().mov(counter, i32(n));
  count_down_loop(ve, counter, Trips::fixed(n), body);
}

// body() n >= 1 times, then advance() between iterations; n == 1 emits body() once with no loop
// and no advance() (the kernel-row and kernel-column loops of a 1-high or 1-wide kernel).
template <LoopCounter Counter, typename Body, typename Advance>
void repeat_loop(VecEmitter& ve, const Counter& counter, int64_t n, Body&& body, Advance&& advance) {
  if (n == 1) {
    body();
    return;
  }
  counted_loop(ve, counter, n, [&] {
    body();
    advance();
  });
}

// While `counter` >= step: vector(), counter -= step; then scalar() `counter` times (none when 0).
// vector() and scalar() advance their pointers themselves. `total` is what the counter holds.
template <typename Vector, typename Scalar>
void vector_then_scalar_loop(VecEmitter& ve, const x86::Gp& counter, int step, Trips total, Vector&& vector,
                             Scalar&& scalar) {
  x86::Assembler& a = ve.as();
  const int64_t n = planned(ve, total);
  asmjit::Label lv = a.newLabel(), ltail = a.newLabel(), ldone = a.newLabel();
  a.bind(lv);
  {
    RecordedRegion region(ve, Trips{n / step, total.per_sample, true});
    a.cmp(counter, step);
    a.jb(ltail);
    vector();
    a.sub(counter, step);
    a.jmp(lv);
  }
  a.bind(ltail);
  a.test(counter, counter);
  a.jz(ldone);
  {
    asmjit::Label ls = a.newLabel();
    a.bind(ls);
    RecordedRegion region(ve, Trips{n % step, total.per_sample, true});
    scalar();
    a.dec(counter);
    a.jnz(ls);
  }
  a.bind(ldone);
}

// Walks `count` floats in vector chunks: body(byte offset, lanes) against pointers the caller
// advances in `advance(bytes)`. Up to 8 full vectors are emitted straight; longer spans loop
// (kChunksCounter = kKh is the counter, x86/gp_roles_p.h) over `unroll` vectors per iteration,
// and the pointers are restored after.
inline void chunks(VecEmitter& ve, int64_t count, int unroll, const std::function<void(int64_t, int)>& body,
                   const std::function<void(int64_t)>& advance) {
  const int W = ve.width();
  const int64_t full = count / W;
  const int tail = static_cast<int>(count % W);
  if (full > 8) {
    const int64_t loops = full / unroll;
    counted_loop(ve, kKh, loops, [&] {
      for (int64_t u = 0; u < unroll; ++u) body(u * W * 4, W);
      advance(unroll * W * 4);
    });
    const int64_t rest = full - loops * unroll;
    for (int64_t u = 0; u < rest; ++u) body(u * W * 4, W);
    if (tail > 0) body(rest * W * 4, tail);
    advance(-(loops * unroll * W * 4));
    return;
  }
  for (int64_t i = 0; i < full; ++i) body(i * W * 4, W);
  if (tail > 0) body(full * W * 4, tail);
}

}  // namespace nnd::jit::regs
