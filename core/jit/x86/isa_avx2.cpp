// AVX2 + FMA hooks: 8 lanes, ymm0..ymm15 (VEX). Tails use vmaskmovps with a lane mask from the
// constant pool (loaded into the scratch register). Avx512Emitter derives from this class.
#include "core/jit/x86/isa_avx2.h"

namespace nnd::jit {

namespace Inst = x86::Inst;

void AvxEmitter::load(int v, const x86::Mem& m) { a_.emit(Inst::kIdVmovups, reg(v), m); }
void AvxEmitter::store(const x86::Mem& m, int v) { a_.emit(Inst::kIdVmovups, m, reg(v)); }

x86::Mem AvxEmitter::tail_mask(int n) {
  std::array<uint32_t, 16> lanes{};
  for (int i = 0; i < n; ++i) lanes[static_cast<size_t>(i)] = 0xFFFFFFFFu;
  return const_u32_lanes(lanes);
}

void AvxEmitter::load_tail(int v, const x86::Mem& m, int n) {
  a_.vmovups(x86::ymm(scratch()), tail_mask(n));
  a_.vmaskmovps(x86::ymm(v), x86::ymm(scratch()), m);
}
void AvxEmitter::store_tail(const x86::Mem& m, int v, int n) {
  a_.vmovups(x86::ymm(scratch()), tail_mask(n));
  a_.vmaskmovps(m, x86::ymm(scratch()), x86::ymm(v));
}
void AvxEmitter::load_scalar(int v, const x86::Mem& m) { a_.vmovss(x86::xmm(v), m); }
void AvxEmitter::store_scalar(const x86::Mem& m, int v) { a_.vmovss(m, x86::xmm(v)); }
void AvxEmitter::broadcast(int v, const x86::Mem& m) {
  x86::Mem mm = m;
  mm.setSize(4);
  a_.emit(Inst::kIdVbroadcastss, reg(v), mm);
}
void AvxEmitter::broadcast_lane0(int v) { a_.emit(Inst::kIdVbroadcastss, reg(v), x86::xmm(v)); }
void AvxEmitter::load_u8(int v, const x86::Mem& m) {
  x86::Mem mm = m;
  mm.setSize(static_cast<uint32_t>(width()));
  a_.emit(Inst::kIdVpmovzxbd, reg(v), mm);
  a_.emit(Inst::kIdVcvtdq2ps, reg(v), reg(v));
}
void AvxEmitter::load_u8_scalar(int v, const x86::Mem& m) {
  x86::Mem mm = m;
  mm.setSize(1);
  a_.movzx(x86::eax, mm);
  a_.vxorps(x86::xmm(v), x86::xmm(v), x86::xmm(v));
  a_.vcvtsi2ss(x86::xmm(v), x86::xmm(v), x86::eax);
}

void AvxEmitter::zero(int v) { a_.emit(Inst::kIdVxorps, reg(v), reg(v), reg(v)); }
void AvxEmitter::mov(int d, int s) {
  if (d != s) a_.emit(Inst::kIdVmovaps, reg(d), reg(s));
}
void AvxEmitter::add(int d, int a, int b) { a_.emit(Inst::kIdVaddps, reg(d), reg(a), reg(b)); }
void AvxEmitter::sub(int d, int a, int b) { a_.emit(Inst::kIdVsubps, reg(d), reg(a), reg(b)); }
void AvxEmitter::mul(int d, int a, int b) { a_.emit(Inst::kIdVmulps, reg(d), reg(a), reg(b)); }
void AvxEmitter::div(int d, int a, int b) { a_.emit(Inst::kIdVdivps, reg(d), reg(a), reg(b)); }
void AvxEmitter::max(int d, int a, int b) { a_.emit(Inst::kIdVmaxps, reg(d), reg(a), reg(b)); }
void AvxEmitter::min(int d, int a, int b) { a_.emit(Inst::kIdVminps, reg(d), reg(a), reg(b)); }
void AvxEmitter::fmadd(int acc, int a, int b) { a_.emit(Inst::kIdVfmadd231ps, reg(acc), reg(a), reg(b)); }
void AvxEmitter::sqrt(int d, int a) { a_.emit(Inst::kIdVsqrtps, reg(d), reg(a)); }
void AvxEmitter::and_(int d, int a, int b) { a_.emit(Inst::kIdVandps, reg(d), reg(a), reg(b)); }
void AvxEmitter::or_(int d, int a, int b) { a_.emit(Inst::kIdVorps, reg(d), reg(a), reg(b)); }
void AvxEmitter::andnot(int d, int a, int b) { a_.emit(Inst::kIdVandnps, reg(d), reg(a), reg(b)); }
void AvxEmitter::add_i32(int d, int a, int b) { a_.emit(Inst::kIdVpaddd, reg(d), reg(a), reg(b)); }
void AvxEmitter::shl_i32(int d, int a, int bits) { a_.emit(Inst::kIdVpslld, reg(d), reg(a), asmjit::imm(bits)); }
void AvxEmitter::cvt_f2i(int d, int a) { a_.emit(Inst::kIdVcvtps2dq, reg(d), reg(a)); }
void AvxEmitter::cvt_i2f(int d, int a) { a_.emit(Inst::kIdVcvtdq2ps, reg(d), reg(a)); }
void AvxEmitter::add_mem(int d, const x86::Mem& m) { a_.emit(Inst::kIdVaddps, reg(d), reg(d), m); }
void AvxEmitter::max_mem(int d, const x86::Mem& m) { a_.emit(Inst::kIdVmaxps, reg(d), reg(d), m); }
void AvxEmitter::leave() { a_.vzeroupper(); }

std::unique_ptr<VecEmitter> make_avx2_emitter(x86::Assembler& a) { return std::make_unique<AvxEmitter>(a); }

}  // namespace nnd::jit
