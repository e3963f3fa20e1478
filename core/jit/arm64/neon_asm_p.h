// Small a64 building blocks of the NEON generators in this folder that are not conv/GEMM (window,
// fast math, layer norm, gather: neon_kernels.h). Their kernels are bodies of the function
// `void kernel(const KernelArgs*)`: x0 holds the arguments on entry, the caller emits the frame and
// the return. A body keeps to what AAPCS64 lets a function clobber (x0-x15, v0-v7, v16-v31) unless
// it saves more itself (CalleeSaved), and uses x16/x17 only inside one building block below (an
// address or an immediate that does not fit an instruction), never across one.
// Constants are built in registers (MOVZ/MOVK + DUP), never loaded from an address, so the code is
// position-independent and its bytes depend only on the spec.
#pragma once

#include <asmjit/arm/a64assembler.h>

#include <cstdint>
#include <cstring>
#include <functional>

namespace nnd::jit::neon {

namespace a64 = asmjit::a64;
using asmjit::Label;

inline constexpr int kLanes = 4;  // float32 lanes of a 128-bit vector

inline a64::VecV vs(int i) { return a64::VecV(static_cast<uint32_t>(i)).s4(); }  // vN.4s
inline a64::VecV vq(int i) { return a64::VecV(static_cast<uint32_t>(i)); }       // qN
inline a64::VecS vsc(int i) { return a64::VecS(static_cast<uint32_t>(i)); }      // sN (lane 0)
inline a64::VecD vd(int i) { return a64::VecD(static_cast<uint32_t>(i)); }       // dN (lanes 0-1)

// x = imm (any 64-bit value), MOVZ + MOVK per non-zero half-word.
inline void mov_imm(a64::Assembler& a, const a64::GpX& x, int64_t imm) {
  const uint64_t u = static_cast<uint64_t>(imm);
  bool first = true;
  for (uint32_t part = 0; part < 4; ++part) {
    const uint32_t h = static_cast<uint32_t>(u >> (16 * part)) & 0xffffu;
    if (h == 0 && !(first && part == 3)) continue;
    if (first) a.movz(x, h, 16 * part);
    else a.movk(x, h, 16 * part);
    first = false;
  }
  if (first) a.movz(x, 0);
}

// d = s + imm (any value; through x16 beyond ADD/SUB's 12-bit immediate, shifted or not).
inline void add_imm(a64::Assembler& a, const a64::GpX& d, const a64::GpX& s, int64_t imm) {
  if (imm == 0) {
    if (d.id() != s.id()) a.mov(d, s);
    return;
  }
  const int64_t m = imm < 0 ? -imm : imm;
  if (m < 4096 || (m % 4096 == 0 && m / 4096 < 4096)) {
    if (imm > 0) a.add(d, s, m);
    else a.sub(d, s, m);
    return;
  }
  mov_imm(a, a64::x16, imm);
  a.add(d, s, a64::x16);
}
inline void add_imm(a64::Assembler& a, const a64::GpX& d, int64_t imm) { add_imm(a, d, d, imm); }

// [base + off] for an access of `bytes` (4, 8 or 16): the scaled unsigned 12-bit form, the
// unscaled -256..255 one, or x17 = base + off.
inline a64::Mem at(a64::Assembler& a, const a64::GpX& base, int64_t off, int bytes) {
  if (off >= 0 && off % bytes == 0 && off / bytes < 4096) return a64::ptr(base, static_cast<int32_t>(off));
  if (off >= -256 && off <= 255) return a64::ptr(base, static_cast<int32_t>(off));
  add_imm(a, a64::x17, base, off);
  return a64::ptr(a64::x17);
}

// Loads / stores of the vector: whole (lanes == 4) or its first `lanes` floats (the rest of the
// register is zero after a partial load).
inline void load(a64::Assembler& a, int v, const a64::GpX& base, int64_t off) {
  const a64::Mem m = at(a, base, off, 16);
  if (m.offsetLo32() >= 0 && m.offsetLo32() % 16 == 0) a.ldr(vq(v), m);
  else a.ldur(vq(v), m);
}
inline void store(a64::Assembler& a, const a64::GpX& base, int64_t off, int v) {
  const a64::Mem m = at(a, base, off, 16);
  if (m.offsetLo32() >= 0 && m.offsetLo32() % 16 == 0) a.str(vq(v), m);
  else a.stur(vq(v), m);
}
inline void load_lanes(a64::Assembler& a, int v, const a64::GpX& base, int64_t off, int lanes) {
  if (lanes == kLanes) return load(a, v, base, off);
  if (lanes == 1) {
    const a64::Mem m = at(a, base, off, 4);
    if (m.offsetLo32() >= 0 && m.offsetLo32() % 4 == 0) a.ldr(vsc(v), m);
    else a.ldur(vsc(v), m);
    return;
  }
  const a64::Mem m = at(a, base, off, 8);
  if (m.offsetLo32() >= 0 && m.offsetLo32() % 8 == 0) a.ldr(vd(v), m);
  else a.ldur(vd(v), m);
  if (lanes == 3) {
    add_imm(a, a64::x17, base, off + 8);
    a.ld1(a64::VecV(static_cast<uint32_t>(v)).s(2), a64::ptr(a64::x17));
  }
}
inline void store_lanes(a64::Assembler& a, const a64::GpX& base, int64_t off, int v, int lanes) {
  if (lanes == kLanes) return store(a, base, off, v);
  if (lanes == 1) {
    const a64::Mem m = at(a, base, off, 4);
    if (m.offsetLo32() >= 0 && m.offsetLo32() % 4 == 0) a.str(vsc(v), m);
    else a.stur(vsc(v), m);
    return;
  }
  const a64::Mem m = at(a, base, off, 8);
  if (m.offsetLo32() >= 0 && m.offsetLo32() % 8 == 0) a.str(vd(v), m);
  else a.stur(vd(v), m);
  if (lanes == 3) {
    add_imm(a, a64::x17, base, off + 8);
    a.st1(a64::VecV(static_cast<uint32_t>(v)).s(2), a64::ptr(a64::x17));
  }
}

// v.4s = f in every lane.
inline void dup_const(a64::Assembler& a, int v, float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if (bits == 0) {
    a.movi(vs(v), 0);
    return;
  }
  mov_imm(a, a64::x16, bits);
  a.dup(vs(v), a64::w16);
}
inline void dup_u32(a64::Assembler& a, int v, uint32_t bits) {
  mov_imm(a, a64::x16, bits);
  a.dup(vs(v), a64::w16);
}

// body() `n` times (n >= 1) with `counter` counting down; no loop for n == 1.
inline void counted_loop(a64::Assembler& a, const a64::GpX& counter, int64_t n, const std::function<void()>& body) {
  if (n <= 0) return;
  if (n == 1) {
    body();
    return;
  }
  mov_imm(a, counter, n);
  Label top = a.newLabel();
  a.bind(top);
  body();
  a.subs(counter, counter, 1);
  a.b_ne(top);
}

// Walks `count` floats: body(off, lanes) per vector (lanes < 4 only for the last), `unroll`
// vectors per iteration of a loop counted by `counter` with advance(bytes) after each iteration,
// then the remaining vectors and the tail at offsets from the advanced pointers.
inline void chunks(a64::Assembler& a, const a64::GpX& counter, int64_t count, int unroll,
                   const std::function<void(int64_t, int)>& body, const std::function<void(int64_t)>& advance) {
  const int64_t per = int64_t{unroll} * kLanes, groups = count / per;
  counted_loop(a, counter, groups, [&] {
    for (int u = 0; u < unroll; ++u) body(int64_t{u} * 16, kLanes);
    advance(per * 4);
  });
  int64_t rest = count - groups * per, off = 0;
  for (; rest >= kLanes; rest -= kLanes, off += 16) body(off, kLanes);
  if (rest > 0) body(off, static_cast<int>(rest));
}

// Saves x19..x19+gp_pairs*2-1 and d8-d15 (when `vec`) on the stack for a body that needs more
// registers than a function may clobber; restore() before the caller's return.
class CalleeSaved {
 public:
  CalleeSaved(a64::Assembler& a, int gp_pairs, bool vec) : a_(a), pairs_(gp_pairs), vec_(vec) {
    if (vec_) {
      a_.stp(vd(8), vd(9), a64::ptr_pre(a64::sp, -64));
      a_.stp(vd(10), vd(11), a64::ptr(a64::sp, 16));
      a_.stp(vd(12), vd(13), a64::ptr(a64::sp, 32));
      a_.stp(vd(14), vd(15), a64::ptr(a64::sp, 48));
    }
    for (int p = 0; p < pairs_; ++p) a_.stp(gp(2 * p), gp(2 * p + 1), a64::ptr_pre(a64::sp, -16));
  }
  void restore() {
    for (int p = pairs_ - 1; p >= 0; --p) a_.ldp(gp(2 * p), gp(2 * p + 1), a64::ptr_post(a64::sp, 16));
    if (vec_) {
      a_.ldp(vd(10), vd(11), a64::ptr(a64::sp, 16));
      a_.ldp(vd(12), vd(13), a64::ptr(a64::sp, 32));
      a_.ldp(vd(14), vd(15), a64::ptr(a64::sp, 48));
      a_.ldp(vd(8), vd(9), a64::ptr_post(a64::sp, 64));
    }
  }

 private:
  static a64::GpX gp(int i) { return a64::GpX(static_cast<uint32_t>(19 + i)); }
  a64::Assembler& a_;
  int pairs_;
  bool vec_;
};

}  // namespace nnd::jit::neon
