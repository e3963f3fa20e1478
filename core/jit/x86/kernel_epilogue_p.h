// Epilogue pieces shared by the x86 kernel generators (private): the fused residual's address
// delta (the fused activation is generators/activation.h). Register roles are in
// x86/kernel_regs_p.h.
#pragma once

#include "core/jit/kernel_args.h"
#include "core/jit/x86/kernel_regs_p.h"

namespace nnd::jit {

// Fused residual: stores in[1] - out (bytes) in slot kResDelta at the start of the kernel, so the
// epilogue reads the residual at [output address + delta].
inline void load_residual_delta(VecEmitter& ve) {
  x86::Assembler& a = ve.as();
  a.mov(x86::rax, x86::qword_ptr(regs::kArgs, kArgsIn));
  a.mov(x86::rax, x86::qword_ptr(x86::rax, 8));
  a.sub(x86::rax, x86::qword_ptr(regs::kArgs, kArgsOut));
  a.mov(regs::slot(regs::kResDelta), x86::rax);
}

}  // namespace nnd::jit
