// The AArch64 emitter the NEON generators (arm64/kernels*.cpp) are written against: the a64
// assembler, vector hooks by register index (v0 .. v30; v31 is the hooks' scratch), address
// materialisation for the offsets a64 loads and stores cannot encode, general-purpose immediates,
// the loop recorder (core/jit/loop_record.h) and a constant pool placed after the code and read
// PC-relative (LDR q, literal), so the code is position-independent and its bytes deterministic.
//
// Addressing: LDR/STR of s/d/q take [base, #imm] with an unsigned 12-bit immediate scaled by the
// access size, LDUR/STUR -256..255 unscaled; anything else goes through [base, x16] with the
// offset moved into x16 (regs::kAddrTmp). Single-lane and replicate loads (LD1 {v.s}[i], LD1R)
// take [base] only: their address is computed into x16 first. x16 and x17 (the AAPCS64
// intra-procedure-call scratch registers) belong to these hooks; generators hold nothing in them
// across a hook call (arm64/gp_roles_p.h).
#pragma once

#include <asmjit/core.h>
#include <asmjit/arm/a64assembler.h>

#include <array>
#include <cstdint>
#include <vector>

#include "core/jit/isa.h"
#include "core/jit/loop_record.h"

namespace nnd::jit::arm64 {

namespace a64 = asmjit::a64;

class NeonEmitter {
 public:
  NeonEmitter(a64::Assembler& a, LoopRecorder* loops) : a_(a), loops_(loops) {}
  NeonEmitter(const NeonEmitter&) = delete;
  NeonEmitter& operator=(const NeonEmitter&) = delete;

  a64::Assembler& as() { return a_; }
  LoopRecorder* loop_recorder() const { return loops_; }

  static constexpr Isa isa() { return Isa::kNeon; }
  // From the NEON row of the ISA table (core/jit/isa.h): 4 float32 lanes, v0 .. v30 usable, v31
  // the hooks' scratch.
  static constexpr int width() { return isa_traits(isa()).f32_lanes; }
  static constexpr int usable_regs() { return isa_traits(isa()).vector_regs - 1; }
  static constexpr int scratch() { return isa_traits(isa()).vector_regs - 1; }
  static_assert(isa_traits(Isa::kNeon).f32_lanes * 4 == 16, "the NEON generators move 16-byte q registers");

  // Registers by index: the 128-bit view (q / .4s arrangement), one lane, the byte and scalar views.
  static a64::VecV q(int v) { return a64::VecV(static_cast<uint32_t>(v)); }
  static a64::VecV s4(int v) { return a64::VecV(static_cast<uint32_t>(v)).s4(); }
  static a64::VecV lane(int v, int i) { return a64::VecV(static_cast<uint32_t>(v)).s(static_cast<uint32_t>(i)); }
  static a64::VecV b16(int v) { return a64::VecV(static_cast<uint32_t>(v)).b16(); }
  static a64::VecS scalar(int v) { return a64::VecS(static_cast<uint32_t>(v)); }  // sN, lane 0

  // ---- general-purpose helpers ----
  void mov_imm(const a64::Gp& d, int64_t v);
  // d = s + v (d may be s); uses x17 for immediates no ADD/SUB encodes (d and s must not be x17).
  void add_imm(const a64::Gp& d, const a64::Gp& s, int64_t v);
  void add_imm(const a64::Gp& r, int64_t v) { add_imm(r, r, v); }
  void mul_imm(const a64::Gp& r, int64_t v);  // r *= v (uses x17)
  // The address base + disp in a register: base itself for 0, else x16.
  a64::Gp address(const a64::Gp& base, int64_t disp);

  // ---- memory; tails move lanes [0, n), 0 < n < 4, zero the others, touch nothing past n ----
  void load(int v, const a64::Gp& base, int64_t disp) { move(true, v, base, disp, 16); }
  void store(const a64::Gp& base, int64_t disp, int v) { move(false, v, base, disp, 16); }
  void load_scalar(int v, const a64::Gp& base, int64_t disp) { move(true, v, base, disp, 4); }
  void store_scalar(const a64::Gp& base, int64_t disp, int v) { move(false, v, base, disp, 4); }
  void load_tail(int v, const a64::Gp& base, int64_t disp, int n);
  void store_tail(const a64::Gp& base, int64_t disp, int v, int n);
  void load_lanes(int v, const a64::Gp& base, int64_t disp, int lanes);  // full for 4, else tail
  void store_lanes(const a64::Gp& base, int64_t disp, int v, int lanes);
  // Register-offset forms [base, index] (element-wise loops with one running offset).
  void load_indexed(int v, const a64::Gp& base, const a64::Gp& index, bool scalar);
  void store_indexed(const a64::Gp& base, const a64::Gp& index, int v, bool scalar);
  void broadcast(int v, const a64::Gp& base, int64_t disp);  // one float to all lanes (LD1R)
  void load_u8(int v, const a64::Gp& base, int64_t disp);         // 4 bytes -> 4 floats
  void load_u8_scalar(int v, const a64::Gp& base, int64_t disp);  // 1 byte -> lane 0

  // ---- arithmetic, d = a op b (any aliasing) ----
  void zero(int v) { a_.movi(s4(v), 0); }
  void mov(int d, int s) {
    if (d != s) a_.mov(b16(d), b16(s));
  }
  void add(int d, int a, int b) { a_.fadd(s4(d), s4(a), s4(b)); }
  void sub(int d, int a, int b) { a_.fsub(s4(d), s4(a), s4(b)); }
  void mul(int d, int a, int b) { a_.fmul(s4(d), s4(a), s4(b)); }
  void div(int d, int a, int b) { a_.fdiv(s4(d), s4(a), s4(b)); }
  void max(int d, int a, int b) { a_.fmax(s4(d), s4(a), s4(b)); }
  void min(int d, int a, int b) { a_.fmin(s4(d), s4(a), s4(b)); }
  void sqrt(int d, int a) { a_.fsqrt(s4(d), s4(a)); }
  void fmadd(int acc, int a, int b) { a_.fmla(s4(acc), s4(a), s4(b)); }               // acc += a * b
  void fmadd_lane(int acc, int a, int b, int i) { a_.fmla(s4(acc), s4(a), lane(b, i)); }  // acc += a * b[i]
  // Bitwise and int32-lane forms (what x86's polynomial math uses: x86/math.cpp).
  void and_(int d, int a, int b) { a_.and_(b16(d), b16(a), b16(b)); }
  void or_(int d, int a, int b) { a_.orr(b16(d), b16(a), b16(b)); }
  void andnot(int d, int a, int b) { a_.bic(b16(d), b16(b), b16(a)); }  // d = ~a & b
  void add_i32(int d, int a, int b) { a_.add(s4(d), s4(a), s4(b)); }
  void shl_i32(int d, int a, int bits) { a_.shl(s4(d), s4(a), bits); }
  void cvt_f2i(int d, int a) { a_.fcvtns(s4(d), s4(a)); }  // round to nearest, ties to even
  void cvt_i2f(int d, int a) { a_.scvtf(s4(d), s4(a)); }
  void neg(int d, int a, int /*scratch*/) { a_.fneg(s4(d), s4(a)); }  // generators/vector_ops.h
  void abs(int d, int a) { a_.fabs(s4(d), s4(a)); }
  // Horizontal reductions into every lane (pairwise twice: lanes 0-3 all hold the result).
  void hsum(int d, int a) {
    a_.faddp(s4(d), s4(a), s4(a));
    a_.faddp(s4(d), s4(d), s4(d));
  }
  void hmax(int d, int a) {
    a_.fmaxp(s4(d), s4(a), s4(a));
    a_.fmaxp(s4(d), s4(d), s4(d));
  }

  // ---- constants: 4 copies of v, read PC-relative from the pool after the code ----
  void load_const(int v, float f);
  void load_const_u32(int v, const std::array<uint32_t, 4>& lanes);
  void load_const_u32(int v, uint32_t bits) { load_const_u32(v, {bits, bits, bits, bits}); }
  void emit_const_pool();  // after the last instruction

 private:
  void move(bool load, int v, const a64::Gp& base, int64_t disp, int bytes);

  a64::Assembler& a_;
  LoopRecorder* loops_;
  struct Entry {
    std::array<uint32_t, 4> lanes;
    asmjit::Label label;
  };
  std::vector<Entry> pool_;
};

}  // namespace nnd::jit::arm64
