// x86's part of the generators' run-time loops (private): the branch instructions of the
// architecture-neutral loop shapes (generators/loops.h), whose names regs:: re-exports, and
// chunks() over a span of floats. A counter is a general-purpose register or a stack slot
// (x86/stack_frame_p.h). Loops written by hand record themselves with RecordedRegion.
#pragma once

#include <concepts>
#include <cstdint>
#include <functional>
#include <string>

#include "core/jit/generators/loops.h"
#include "core/jit/x86/kernel_regs_p.h"
#include "core/util/error.h"

namespace nnd::jit::regs {

// The counter: a general-purpose register or a stack slot.
template <typename Counter>
concept LoopCounter = std::same_as<Counter, x86::Gp> || std::same_as<Counter, x86::Mem>;

}  // namespace nnd::jit::regs

namespace nnd::jit::loops {

// x86's branches of the loops (generators/loops.h): mov counter, n; dec counter; jnz L; and the
// vector-then-scalar loop's cmp/jb, sub, jmp and test/jz, and cmp/jne.
template <>
struct LoopBranches<x86::Assembler> {
  template <regs::LoopCounter Counter>
  static void set(x86::Assembler& a, const Counter& c, int64_t n) {
    a.mov(c, regs::i32(n));
  }
  template <regs::LoopCounter Counter>
  static void count_down(x86::Assembler& a, const Counter& c, const asmjit::Label& l) {
    a.dec(c);
    a.jnz(l);
  }
  static void branch_below(x86::Assembler& a, const x86::Gp& c, int k, const asmjit::Label& l) {
    a.cmp(c, k);
    a.jb(l);
  }
  static void sub(x86::Assembler& a, const x86::Gp& c, int k) { a.sub(c, k); }
  static void jump(x86::Assembler& a, const asmjit::Label& l) { a.jmp(l); }
  static void branch_zero(x86::Assembler& a, const x86::Gp& c, const asmjit::Label& l) {
    a.test(c, c);
    a.jz(l);
  }
  static void branch_not_equal(x86::Assembler& a, const x86::Gp& c, int k, const asmjit::Label& l) {
    a.cmp(c, k);
    a.jne(l);
  }
};

}  // namespace nnd::jit::loops

namespace nnd::jit::regs {

// The loops themselves are architecture-neutral (generators/loops.h): regs::counted_loop and the
// others name them.
using namespace loops;  // NOLINT(google-build-using-namespace)

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
