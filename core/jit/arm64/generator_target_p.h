// The AArch64 GeneratorTarget (private): the vocabulary of the architecture-neutral generators
// (core/jit/generators/) mapped onto NeonEmitter, the fixed general-purpose registers with their
// role check and the recorded loops (arm64/regs_p.h).
#pragma once

#include <cstdint>
#include <string_view>

#include "core/jit/arm64/neon_emitter.h"
#include "core/jit/arm64/regs_p.h"

namespace nnd::jit::arm64 {

class NeonGeneratorTarget {
 public:
  using Gp = a64::Gp;
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

  NeonGeneratorTarget(NeonEmitter& ve, std::string_view kernel) : ve_(ve), roles_(kernel) {}

  // ---- general-purpose registers ----
  Gp role(std::string_view name, const Gp& reg) { return roles_.role(name, reg); }
  void load_field(const Gp& d, const Gp& base, int64_t disp) {
    if (disp >= 0 && disp % 8 == 0 && disp < 32768) {
      ve_.as().ldr(d, a64::ptr(base, static_cast<int32_t>(disp)));
    } else {
      ve_.as().ldr(d, a64::ptr(ve_.address(base, disp)));
    }
  }
  void copy(const Gp& d, const Gp& s) { ve_.as().mov(d, s); }
  void add(const Gp& r, int64_t v) {
    if (v != 0) ve_.add_imm(r, v);
  }
  void multiply(const Gp& r, int64_t v) {
    if (v != 1) ve_.mul_imm(r, v);
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
  template <typename Body>
  void times_loop(const Gp& counter, int64_t n, Body&& body) {
    regs::times_loop(ve_, counter, n, body);
  }

  // ---- vectors, by register index ----
  int width() const { return NeonEmitter::width(); }
  int usable_regs() const { return NeonEmitter::usable_regs(); }
  void zero(int v) { ve_.zero(v); }
  void load_lanes(int v, const Gp& base, int64_t disp, int lanes) { ve_.load_lanes(v, base, disp, lanes); }
  void store_lanes(const Gp& base, int64_t disp, int v, int lanes) { ve_.store_lanes(base, disp, v, lanes); }
  void broadcast(int v, const Gp& base, int64_t disp) { ve_.broadcast(v, base, disp); }
  void fmadd(int acc, int a, int b) { ve_.fmadd(acc, a, b); }

 private:
  NeonEmitter& ve_;
  regs::GpRoles roles_;
};

}  // namespace nnd::jit::arm64
