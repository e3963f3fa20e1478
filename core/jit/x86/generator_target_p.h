// The x86 GeneratorTarget (private): the vocabulary of the architecture-neutral generators
// (core/jit/generators/) mapped onto VecEmitter (every x86 ISA), the fixed general-purpose
// registers with their role check (x86/gp_roles_p.h) and the recorded loops (x86/counted_loop_p.h).
#pragma once

#include <cstdint>
#include <string_view>

#include "core/jit/x86/counted_loop_p.h"
#include "core/jit/x86/gp_roles_p.h"
#include "core/jit/x86/vec_emitter.h"

namespace nnd::jit {

class X86GeneratorTarget {
 public:
  using Gp = x86::Gp;
  static inline const Gp& kArgs = regs::kArgs;
  static inline const Gp& kIn = regs::kIn;
  static inline const Gp& kOut = regs::kOut;
  static inline const Gp& kW = regs::kW;
  static inline const Gp& kBias = regs::kBias;
  static inline const Gp& kN = regs::kN;
  static inline const Gp& kPix = regs::kPix;
  static inline const Gp& kOb = regs::kOb;
  static inline const Gp& kKh = regs::kKh;
  static inline const Gp& kKw = regs::kKw;
  static inline const Gp& kCi = regs::kCi;
  static inline const Gp& kRow = regs::kRow;
  static inline const Gp& kCol = regs::kCol;
  static inline const Gp& kWk = regs::kWk;

  X86GeneratorTarget(VecEmitter& ve, std::string_view kernel) : ve_(ve), roles_(kernel) {}

  // ---- general-purpose registers ----
  Gp role(std::string_view name, const Gp& reg) { return roles_.role(name, reg); }
  void load_field(const Gp& d, const Gp& base, int64_t disp) { a().mov(d, x86::qword_ptr(base, regs::i32(disp))); }
  void copy(const Gp& d, const Gp& s) { a().mov(d, s); }
  void add(const Gp& r, int64_t v) {
    if (v != 0) a().add(r, regs::i32(v));
  }
  void multiply(const Gp& r, int64_t v) {
    if (v != 1) a().imul(r, r, regs::i32(v));
  }

  // ---- loops (recorded for the cost model) ----
  template <typename Body>
  void counted_loop(const Gp& counter, int64_t n, Body&& body) {
    regs::counted_loop(ve_, counter, n, body);
  }
  template <typename Body>
  void count_down_loop(const Gp& counter, Trips trips, Body&& body) {
    regs::count_down_loop(ve_, counter, trips, body);
  }
  // body() n >= 0 times: nothing for 0, once without a loop for 1.
  template <typename Body>
  void times_loop(const Gp& counter, int64_t n, Body&& body) {
    if (n == 1) body();
    else if (n > 1) regs::counted_loop(ve_, counter, n, body);
  }

  // ---- vectors, by register index ----
  int width() const { return ve_.width(); }
  int usable_regs() const { return ve_.usable_regs(); }
  void zero(int v) { ve_.zero(v); }
  void load_lanes(int v, const Gp& base, int64_t disp, int lanes) { ve_.load_lanes(v, x86::ptr(base, regs::i32(disp)), lanes); }
  void store_lanes(const Gp& base, int64_t disp, int v, int lanes) { ve_.store_lanes(x86::ptr(base, regs::i32(disp)), v, lanes); }
  void broadcast(int v, const Gp& base, int64_t disp) { ve_.broadcast(v, x86::ptr(base, regs::i32(disp))); }
  void fmadd(int acc, int a, int b) { ve_.fmadd(acc, a, b); }

 private:
  x86::Assembler& a() { return ve_.as(); }
  VecEmitter& ve_;
  regs::GpRoles roles_;
};

}  // namespace nnd::jit
