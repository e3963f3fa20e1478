// SSE4.1 hooks: 4 lanes, xmm0..xmm15, legacy (non-VEX) encodings only — this is the robot's code.
#include "core/jit/x86/isa_factories_p.h"

namespace nnd::jit {

namespace Inst = x86::Inst;
using x86::xmm;

namespace {

class SseEmitter final : public VecEmitter {
 public:
  using VecEmitter::VecEmitter;
  Isa isa() const override { return Isa::kSse41; }

  void load(int v, const x86::Mem& m) override { a_.movups(xmm(v), m); }
  void store(const x86::Mem& m, int v) override { a_.movups(m, xmm(v)); }
  void load_tail(int v, const x86::Mem& m, int n) override {
    if (n == 1) {
      a_.movss(xmm(v), m);
    } else {
      a_.movsd(xmm(v), m);
      if (n == 3) a_.insertps(xmm(v), plus8(m), 0x20);
    }
  }
  void store_tail(const x86::Mem& m, int v, int n) override {
    if (n == 1) {
      a_.movss(m, xmm(v));
    } else {
      a_.movsd(m, xmm(v));
      if (n == 3) a_.extractps(plus8(m), xmm(v), 2);
    }
  }
  void load_scalar(int v, const x86::Mem& m) override { a_.movss(xmm(v), m); }
  void store_scalar(const x86::Mem& m, int v) override { a_.movss(m, xmm(v)); }
  void broadcast(int v, const x86::Mem& m) override {
    a_.movss(xmm(v), m);
    broadcast_lane0(v);
  }
  void broadcast_lane0(int v) override { a_.shufps(xmm(v), xmm(v), 0); }
  void load_u8(int v, const x86::Mem& m) override {
    x86::Mem mm = m;
    mm.setSize(4);
    a_.pmovzxbd(xmm(v), mm);
    a_.cvtdq2ps(xmm(v), xmm(v));
  }
  void load_u8_scalar(int v, const x86::Mem& m) override {
    x86::Mem mm = m;
    mm.setSize(1);
    a_.movzx(x86::eax, mm);
    a_.xorps(xmm(v), xmm(v));
    a_.cvtsi2ss(xmm(v), x86::eax);
  }

  void zero(int v) override { a_.xorps(xmm(v), xmm(v)); }
  void mov(int d, int s) override {
    if (d != s) a_.movaps(xmm(d), xmm(s));
  }
  void add(int d, int a, int b) override { binop(Inst::kIdAddps, d, a, b, true); }
  void sub(int d, int a, int b) override { binop(Inst::kIdSubps, d, a, b, false); }
  void mul(int d, int a, int b) override { binop(Inst::kIdMulps, d, a, b, true); }
  void div(int d, int a, int b) override { binop(Inst::kIdDivps, d, a, b, false); }
  // maxps/minps are not commutative for NaN; keep operand order (a, b) as written.
  void max(int d, int a, int b) override { binop(Inst::kIdMaxps, d, a, b, false); }
  void min(int d, int a, int b) override { binop(Inst::kIdMinps, d, a, b, false); }
  void fmadd(int acc, int a, int b) override {
    const int t = scratch();
    a_.movaps(xmm(t), xmm(a));
    a_.mulps(xmm(t), xmm(b));
    a_.addps(xmm(acc), xmm(t));
  }
  void fmadd_mem(int acc, int a, const x86::Mem& m) override {
    const int t = scratch();
    a_.movups(xmm(t), m);
    a_.mulps(xmm(t), xmm(a));
    a_.addps(xmm(acc), xmm(t));
  }
  void sqrt(int d, int a) override { a_.sqrtps(xmm(d), xmm(a)); }
  void and_(int d, int a, int b) override { binop(Inst::kIdAndps, d, a, b, true); }
  void or_(int d, int a, int b) override { binop(Inst::kIdOrps, d, a, b, true); }
  void andnot(int d, int a, int b) override { binop(Inst::kIdAndnps, d, a, b, false); }
  void add_i32(int d, int a, int b) override { binop(Inst::kIdPaddd, d, a, b, true); }
  void shl_i32(int d, int a, int bits) override {
    mov(d, a);
    a_.pslld(xmm(d), bits);
  }
  void cvt_f2i(int d, int a) override { a_.cvtps2dq(xmm(d), xmm(a)); }
  void cvt_i2f(int d, int a) override { a_.cvtdq2ps(xmm(d), xmm(a)); }
  void add_mem(int d, const x86::Mem& m) override {
    a_.movups(xmm(scratch()), m);
    a_.addps(xmm(d), xmm(scratch()));
  }
  void max_mem(int d, const x86::Mem& m) override {
    a_.movups(xmm(scratch()), m);
    a_.maxps(xmm(d), xmm(scratch()));
  }
  void leave() override {}

 private:
  static x86::Mem plus8(const x86::Mem& m) {
    x86::Mem r = m;
    r.addOffset(8);
    r.setSize(4);
    return r;
  }
  void binop(x86::Inst::Id id, int d, int a, int b, bool commutative) {
    if (d == a) {
      a_.emit(id, xmm(d), xmm(b));
    } else if (d == b) {
      if (commutative) {
        a_.emit(id, xmm(d), xmm(a));
      } else {
        a_.movaps(xmm(scratch()), xmm(b));
        a_.movaps(xmm(d), xmm(a));
        a_.emit(id, xmm(d), xmm(scratch()));
      }
    } else {
      a_.movaps(xmm(d), xmm(a));
      a_.emit(id, xmm(d), xmm(b));
    }
  }
};

}  // namespace

std::unique_ptr<VecEmitter> make_sse41_emitter(x86::Assembler& a) { return std::make_unique<SseEmitter>(a); }

}  // namespace nnd::jit
