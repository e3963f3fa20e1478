// Counted run-time loops for the kernel generators (private): the `mov counter, n; L: body;
// dec counter; jnz L` shape written once. The counter is a general-purpose register or a stack
// slot (x86/stack_frame_p.h).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "core/jit/x86/kernel_regs_p.h"
#include "core/util/error.h"

namespace nnd::jit::regs {

namespace loop_detail {

template <typename Counter>
void count_down(x86::Assembler& a, const Counter& counter, const std::function<void()>& body) {
  asmjit::Label l = a.newLabel();
  a.bind(l);
  body();
  a.dec(counter);
  a.jnz(l);
}

template <typename Counter>
void counted(x86::Assembler& a, const Counter& counter, int64_t n, const std::function<void()>& body) {
  // dec/jnz from 0 would run 2^64 times: a zero-trip loop is the caller's to skip.
  if (n < 1) throw Error("JIT internal error: a counted loop of " + std::to_string(n) + " iterations");
  a.mov(counter, i32(n));
  count_down(a, counter, body);
}

template <typename Counter>
void repeated(x86::Assembler& a, const Counter& counter, int64_t n, const std::function<void()>& body,
              const std::function<void()>& advance) {
  if (n == 1) {
    body();
    return;
  }
  counted(a, counter, n, [&] {
    body();
    advance();
  });
}

}  // namespace loop_detail

// body() runs n >= 1 times: mov counter, n; L: body(); dec counter; jnz L. body() advances its
// pointers itself and must leave `counter` as it found it.
inline void counted_loop(x86::Assembler& a, const x86::Gp& counter, int64_t n, const std::function<void()>& body) {
  loop_detail::counted(a, counter, n, body);
}
inline void counted_loop(x86::Assembler& a, const x86::Mem& counter, int64_t n, const std::function<void()>& body) {
  loop_detail::counted(a, counter, n, body);
}

// The same loop with the counter already set (at least 1), e.g. the batch size from KernelArgs.
inline void count_down_loop(x86::Assembler& a, const x86::Gp& counter, const std::function<void()>& body) {
  loop_detail::count_down(a, counter, body);
}
inline void count_down_loop(x86::Assembler& a, const x86::Mem& counter, const std::function<void()>& body) {
  loop_detail::count_down(a, counter, body);
}

// body() n >= 1 times, then advance() between iterations; n == 1 emits body() once with no loop
// and no advance() (the kernel-row and kernel-column loops of a 1-high or 1-wide kernel).
inline void repeat_loop(x86::Assembler& a, const x86::Gp& counter, int64_t n, const std::function<void()>& body,
                        const std::function<void()>& advance) {
  loop_detail::repeated(a, counter, n, body, advance);
}
inline void repeat_loop(x86::Assembler& a, const x86::Mem& counter, int64_t n, const std::function<void()>& body,
                        const std::function<void()>& advance) {
  loop_detail::repeated(a, counter, n, body, advance);
}

}  // namespace nnd::jit::regs
