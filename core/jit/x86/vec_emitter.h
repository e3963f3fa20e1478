// The ISA hook chain: every kernel generator (x86_kernel_*.cpp) is written once against this
// class, which emits vector instructions for one instruction set. Registers are named by index
// (0 .. usable_regs()-1), which generators take from a VecRegPool (core/jit/vec_reg_pool.h) rather than
// number by hand; the hooks own register scratch() and the GP register rax/eax
// (regs::kHookScratch, x86/gp_roles_p.h), which kernels must not hold values in across a hook call.
//
//   VecEmitter            (this file: constant pool, shared helpers)
//   ├─ SseEmitter         (x86/isa_sse41.cpp: 4 lanes, 16 xmm, legacy SSE encoding only)
//   └─ AvxEmitter         (x86/isa_avx2.cpp: 8 lanes, 16 ymm, VEX, FMA, vmaskmovps tails)
//      └─ Avx512Emitter   (x86/isa_avx512.cpp: 16 lanes, 32 zmm, EVEX, k-mask tails)
//
// Adding an x86 ISA: its row in the ISA table (core/jit/isa.cpp: lanes, registers, ...), which
// width(), num_regs() and traits() read, a new x86/isa_<name>.cpp with a subclass whose isa()
// names the row, and one line in make_vec_emitter() (x86/isa_registry.cpp).
#pragma once

#include <asmjit/x86.h>

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/jit/cpu_features.h"
#include "core/jit/isa.h"
#include "core/jit/loop_record.h"

namespace nnd::jit {

namespace x86 = asmjit::x86;

class VecEmitter {
 public:
  explicit VecEmitter(x86::Assembler& a) : a_(a) {}
  virtual ~VecEmitter() = default;
  VecEmitter(const VecEmitter&) = delete;
  VecEmitter& operator=(const VecEmitter&) = delete;

  x86::Assembler& as() { return a_; }

  // Where the loops (generators/loops.h) record the kernel's loops; null (no recording,
  // no cost) unless the engine was asked for loop records (JitConfig::record_loops).
  LoopRecorder* loop_recorder() const { return loops_; }
  void set_loop_recorder(LoopRecorder* r) { loops_ = r; }

  virtual Isa isa() const = 0;
  const IsaTraits& traits() const { return isa_traits(isa()); }  // the ISA's row (core/jit/isa.h)
  int width() const { return traits().f32_lanes; }     // float32 lanes per vector
  int num_regs() const { return traits().vector_regs; }  // architectural vector registers
  int usable_regs() const { return num_regs() - 1; }
  int scratch() const { return num_regs() - 1; }

  // Memory. Tails move lanes [0, n), 0 < n < width(); a tail load zeroes the other lanes and
  // never touches memory past lane n-1.
  virtual void load(int v, const x86::Mem& m) = 0;
  virtual void store(const x86::Mem& m, int v) = 0;
  virtual void load_tail(int v, const x86::Mem& m, int n) = 0;
  virtual void store_tail(const x86::Mem& m, int v, int n) = 0;
  virtual void load_scalar(int v, const x86::Mem& m) = 0;   // lane 0, others zero
  virtual void store_scalar(const x86::Mem& m, int v) = 0;  // lane 0
  virtual void broadcast(int v, const x86::Mem& m) = 0;     // one float to all lanes
  virtual void broadcast_lane0(int v) = 0;                  // lane 0 of v to all lanes of v
  virtual void load_u8(int v, const x86::Mem& m) = 0;       // width() bytes -> floats
  virtual void load_u8_scalar(int v, const x86::Mem& m) = 0;  // one byte -> lane 0 (uses eax)
  // Lanes [0, lanes) of a vector, 0 < lanes <= width(): a full load/store for width() lanes, a
  // tail otherwise. Any other count is a generator bug (nnd::Error): the three copies these
  // replaced treated lanes > width() as a full vector or passed it to the tail hook.
  void load_lanes(int v, const x86::Mem& m, int lanes);
  void store_lanes(const x86::Mem& m, int v, int lanes);

  // Arithmetic, d = a op b (any aliasing allowed).
  virtual void zero(int v) = 0;
  virtual void mov(int d, int s) = 0;
  virtual void add(int d, int a, int b) = 0;
  virtual void sub(int d, int a, int b) = 0;
  virtual void mul(int d, int a, int b) = 0;
  virtual void div(int d, int a, int b) = 0;
  virtual void max(int d, int a, int b) = 0;
  virtual void min(int d, int a, int b) = 0;
  virtual void fmadd(int acc, int a, int b) = 0;  // acc += a * b (fused where the ISA has FMA)
  // acc += a * (the float at m in every lane). `tmp` may receive the broadcast; ISAs that can take
  // a broadcast memory operand in the FMA itself (AVX-512 {1to16}) leave it untouched and spend
  // one instruction instead of two.
  virtual void fmadd_bcast(int acc, int a, const x86::Mem& m, int tmp) {
    broadcast(tmp, m);
    fmadd(acc, tmp, a);
  }
  // acc += a * [m] (width() floats). Two-operand SSE needs a temporary for the product anyway, and
  // loading the memory operand into it costs a load slot instead of the register copy (movaps) a
  // register operand needs (SSE overrides this). The default, for FMA ISAs whose fmadd() needs no
  // temporary, loads into scratch().
  virtual void fmadd_mem(int acc, int a, const x86::Mem& m) {
    load(scratch(), m);
    fmadd(acc, a, scratch());
  }
  // True when fmadd() with register operands spends a register copy on the product (SSE), so a
  // kernel whose factor comes from memory anyway should use fmadd_mem().
  bool fmadd_needs_copy() const { return traits().streams_weights; }
  virtual void sqrt(int d, int a) = 0;
  // Bitwise and int32-lane forms (normalisation and the polynomial math of x86/math.cpp).
  virtual void and_(int d, int a, int b) = 0;
  virtual void or_(int d, int a, int b) = 0;
  virtual void andnot(int d, int a, int b) = 0;  // d = ~a & b
  virtual void add_i32(int d, int a, int b) = 0;
  virtual void shl_i32(int d, int a, int bits) = 0;
  virtual void cvt_f2i(int d, int a) = 0;  // round to nearest even (MXCSR default)
  virtual void cvt_i2f(int d, int a) = 0;
  // d = -a as 0 - a (+0 for a = +0; x86 has no float negate): in d when d != a, else through
  // `scratch`. d = |a| as max(0 - a, a), d != a. (The instruction sequences fast math has always
  // used, held byte for byte by the golden code hashes.)
  void neg(int d, int a, int scratch) {
    const int zero_reg = d != a ? d : scratch;
    zero(zero_reg);
    sub(d, zero_reg, a);
  }
  void abs(int d, int a);
  // Memory-operand forms used by pooling/merges: d = d op [m].
  virtual void add_mem(int d, const x86::Mem& m) = 0;
  virtual void max_mem(int d, const x86::Mem& m) = 0;

  // Called before every `ret` (vzeroupper on VEX/EVEX ISAs).
  virtual void leave() = 0;

  // Constants: a vector of width() copies, or a lane pattern, placed after the code (RIP-relative,
  // so the code stays position-independent and its bytes deterministic).
  x86::Mem const_f32(float v);
  x86::Mem const_u32_lanes(const std::array<uint32_t, 16>& lanes);
  void load_const(int v, float f) { load(v, const_f32(f)); }
  void load_const_u32(int v, uint32_t bits) {  // every lane the int32 bits
    std::array<uint32_t, 16> lanes{};
    lanes.fill(bits);
    load(v, const_u32_lanes(lanes));
  }
  void emit_const_pool();  // after the last instruction of the function

 protected:
  x86::Assembler& a_;

 private:
  LoopRecorder* loops_ = nullptr;
  struct Entry {
    std::array<uint32_t, 16> lanes;
    asmjit::Label label;
  };
  std::vector<Entry> pool_;
};

// The one place that maps an ISA to its hook class (x86/isa_registry.cpp).
std::unique_ptr<VecEmitter> make_vec_emitter(Isa isa, x86::Assembler& a);

}  // namespace nnd::jit
