// General-purpose registers the kernel generators use (private), the stack slots' offsets and
// checked address arithmetic. Each generator declares what every register holds for it with
// GpRoles (x86/gp_roles_p.h); rax/eax belongs to the VecEmitter hooks. The frame (KernelModule,
// x86/stack_frame_p.h) saves rbx, rbp, r12-r15 and reserves kStackBytes for the named stack slots.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "core/jit/x86/stack_frame_p.h"
#include "core/jit/x86/vec_emitter.h"
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

// Stack slots [rsp + k], laid out by the frame (x86/stack_frame_p.h).
inline constexpr int kInN = frame::kKernelFrame.offset("in_n");
inline constexpr int kOutN = frame::kKernelFrame.offset("out_n");
inline constexpr int kOhCnt = frame::kKernelFrame.offset("oh_cnt");
inline constexpr int kInRow = frame::kKernelFrame.offset("in_row");
inline constexpr int kOutRow = frame::kKernelFrame.offset("out_row");
inline constexpr int kOwtCnt = frame::kKernelFrame.offset("owt_cnt");
inline constexpr int kOcbCnt = frame::kKernelFrame.offset("ocb_cnt");
inline constexpr int kWBase = frame::kKernelFrame.offset("w_base");
inline constexpr int kBBase = frame::kKernelFrame.offset("b_base");
// kResDelta: fused residual (ConvSpec/WindowSpec::residual): in[1] - out, in bytes.
inline constexpr int kResDelta = frame::kKernelFrame.offset("res_delta");
// A grouped conv looping over its groups at run time (emit_conv): groups left, and the current
// group's byte offsets into the input pixel, the output pixel and the weight blob.
inline constexpr int kGrpCnt = frame::kKernelFrame.offset("grp_cnt");
inline constexpr int kGrpIn = frame::kKernelFrame.offset("grp_in");
inline constexpr int kGrpOut = frame::kKernelFrame.offset("grp_out");
inline constexpr int kGrpW = frame::kKernelFrame.offset("grp_w");
inline constexpr int kStackBytes = frame::kStackBytes;

// The 64-byte vector scratch area (frame::kVecScratch), `disp` bytes in.
inline x86::Mem vec_scratch(int disp = 0) { return x86::ptr(x86::rsp, frame::kVecScratch + disp); }

inline x86::Mem slot(int off) { return x86::qword_ptr(x86::rsp, off); }

// A byte offset as an x86 32-bit displacement/immediate; nnd::Error when it does not fit (a
// tensor too large for the addressing the kernels use), never a silently truncated address.
inline int32_t i32(int64_t v) {
  if (v > std::numeric_limits<int32_t>::max() || v < std::numeric_limits<int32_t>::min()) {
    throw Error(ErrorCode::kLimit, "JIT: an address offset of " + std::to_string(v) +
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

// slot += v (nothing emitted for 0), checked.
inline void add_slot(x86::Assembler& a, int off, int64_t v) {
  if (v != 0) a.add(slot(off), i32(v));
}

}  // namespace nnd::jit::regs
