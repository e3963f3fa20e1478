// General-purpose register roles shared by the kernel generators (private). rax/eax belongs to the
// VecEmitter hooks. The frame (KernelModule) saves rbx, rbp, r12-r15 and reserves kStackBytes.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "core/jit/x86_vec_emitter.h"
#include "core/util/error.h"

namespace nnd::jit::regs {

inline const x86::Gp kArgs = x86::rdi;  // const KernelArgs*
inline const x86::Gp kIn = x86::rsi;    // tile input
inline const x86::Gp kOut = x86::rdx;   // tile output
inline const x86::Gp kW = x86::rcx;     // block weights
inline const x86::Gp kBias = x86::r8;   // block bias
inline const x86::Gp kN = x86::r9;      // batch / row counter
inline const x86::Gp kPix = x86::r10;   // input pixel pointer inside the channel loop
inline const x86::Gp kOb = x86::r11;    // block output
inline const x86::Gp kKh = x86::rbx;
inline const x86::Gp kKw = x86::rbp;
inline const x86::Gp kCi = x86::r12;    // channel counter (conv) / block input (window ops)
inline const x86::Gp kRow = x86::r13;
inline const x86::Gp kCol = x86::r14;
inline const x86::Gp kWk = x86::r15;    // running weights pointer

// Stack slots [rsp + k]
inline constexpr int kInN = 0, kOutN = 8, kOhCnt = 16, kInRow = 24, kOutRow = 32, kOwtCnt = 40,
                     kOcbCnt = 48, kWBase = 56, kBBase = 64;
// kResDelta: fused residual (ConvSpec/WindowSpec::residual): in[1] - out, in bytes.
inline constexpr int kResDelta = 72;
inline constexpr int kStackBytes = 88;  // keeps rsp 16-byte aligned after the 6 saved registers

inline x86::Mem slot(int off) { return x86::qword_ptr(x86::rsp, off); }

// A byte offset as an x86 32-bit displacement/immediate; nnd::Error when it does not fit (a
// tensor too large for the addressing the kernels use), never a silently truncated address.
inline int32_t i32(int64_t v) {
  if (v > std::numeric_limits<int32_t>::max() || v < std::numeric_limits<int32_t>::min()) {
    throw Error("JIT: an address offset of " + std::to_string(v) +
                " bytes does not fit the x86 32-bit displacement");
  }
  return static_cast<int32_t>(v);
}

// [base + disp], checked.
inline x86::Mem at(const x86::Gp& base, int64_t disp) { return x86::ptr(base, i32(disp)); }

// r += v (nothing emitted for 0), checked.
inline void add_imm(x86::Assembler& a, const x86::Gp& r, int64_t v) {
  if (v != 0) a.add(r, i32(v));
}

}  // namespace nnd::jit::regs
