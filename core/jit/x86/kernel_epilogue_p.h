// Epilogue pieces shared by the kernel generators (private): the fused activation and the fused
// residual's address delta. Register roles are in x86/kernel_regs_p.h.
#pragma once

#include <vector>

#include "core/ir/activation.h"
#include "core/jit/x86/kernel_regs_p.h"

namespace nnd::jit {

// Epilogue activation (act_fusable() kinds) on the vector registers `regs`; `tmp` is free.
inline void emit_fused_act(VecEmitter& ve, ActivationKind act, const std::vector<int>& regs, int tmp) {
  if (act == ActivationKind::kLinear) return;
  ve.zero(tmp);
  for (int r : regs) ve.max(r, r, tmp);
  if (act == ActivationKind::kRelu6) {
    ve.load_const(tmp, 6.0f);
    for (int r : regs) ve.min(r, r, tmp);
  }
}

// The same on registers [first, first + count).
inline void emit_fused_act(VecEmitter& ve, ActivationKind act, int first, int count, int tmp) {
  std::vector<int> regs;
  for (int i = first; i < first + count; ++i) regs.push_back(i);
  emit_fused_act(ve, act, regs, tmp);
}

// Fused residual: stores in[1] - out (bytes) in slot kResDelta at the start of the kernel, so the
// epilogue reads the residual at [output address + delta].
inline void load_residual_delta(VecEmitter& ve) {
  x86::Assembler& a = ve.as();
  a.mov(x86::rax, x86::qword_ptr(regs::kArgs, 0));
  a.mov(x86::rax, x86::qword_ptr(x86::rax, 8));
  a.sub(x86::rax, x86::qword_ptr(regs::kArgs, 8));
  a.mov(regs::slot(regs::kResDelta), x86::rax);
}

}  // namespace nnd::jit
