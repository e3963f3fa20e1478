// The AArch64 GeneratorTarget (private): what generators/generator_target.h leaves to an
// architecture, on NeonEmitter and the fixed general-purpose registers of arm64/regs_p.h.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/jit/arm64/neon_emitter.h"
#include "core/jit/arm64/regs_p.h"
#include "core/jit/generators/generator_target.h"

namespace nnd::jit::arm64 {

class NeonGeneratorTarget : public generators::GeneratorTargetBase<NeonEmitter, regs::GpRoles, a64::Gp> {
 public:
#define NND_NEON_ROLE(name) static inline const Gp& name = regs::name;
  NND_GENERATOR_GP_ROLES(NND_NEON_ROLE)
#undef NND_NEON_ROLE

  using GeneratorTargetBase::GeneratorTargetBase;

  // ---- general-purpose registers ----
  void load_field(const Gp& d, const Gp& base, int64_t disp) {
    if (disp >= 0 && disp % 8 == 0 && disp < 32768) {
      ve_.as().ldr(d, a64::ptr(base, static_cast<int32_t>(disp)));
    } else {
      ve_.as().ldr(d, a64::ptr(ve_.address(base, disp)));
    }
  }
  void copy(const Gp& d, const Gp& s) { ve_.as().mov(d, s); }
  void clear(const Gp& r) { ve_.as().mov(r, 0); }
  void add(const Gp& r, int64_t v) {
    if (v != 0) ve_.add_imm(r, v);
  }
  void multiply(const Gp& r, int64_t v) {
    if (v != 1) ve_.mul_imm(r, v);
  }

  // ---- vectors, by register index ----
  void load_lanes(int v, const Gp& base, int64_t disp, int lanes) { ve_.load_lanes(v, base, disp, lanes); }
  void store_lanes(const Gp& base, int64_t disp, int v, int lanes) { ve_.store_lanes(base, disp, v, lanes); }
  void broadcast(int v, const Gp& base, int64_t disp) { ve_.broadcast(v, base, disp); }
  // A full vector, or lane 0 alone (scalar), at base + index.
  void load_at(int v, const Gp& base, const Gp& index, bool scalar) { ve_.load_indexed(v, base, index, scalar); }
  void store_at(const Gp& base, const Gp& index, int v, bool scalar) { ve_.store_indexed(base, index, v, scalar); }
};

}  // namespace nnd::jit::arm64
