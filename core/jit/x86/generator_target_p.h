// The x86 GeneratorTarget (private): what generators/generator_target.h leaves to an
// architecture, on VecEmitter (every x86 ISA) and the fixed general-purpose registers of
// x86/gp_roles_p.h.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/jit/generators/generator_target.h"
#include "core/jit/x86/counted_loop_p.h"
#include "core/jit/x86/gp_roles_p.h"
#include "core/jit/x86/vec_emitter.h"

namespace nnd::jit {

class X86GeneratorTarget : public generators::GeneratorTargetBase<VecEmitter, regs::GpRoles, x86::Gp> {
 public:
#define NND_X86_ROLE(name) static inline const Gp& name = regs::name;
  NND_GENERATOR_GP_ROLES(NND_X86_ROLE)
#undef NND_X86_ROLE

  using GeneratorTargetBase::GeneratorTargetBase;

  // ---- general-purpose registers ----
  void load_field(const Gp& d, const Gp& base, int64_t disp) { a().mov(d, x86::qword_ptr(base, regs::i32(disp))); }
  void copy(const Gp& d, const Gp& s) { a().mov(d, s); }
  void clear(const Gp& r) { a().xor_(r, r); }
  void add(const Gp& r, int64_t v) {
    if (v != 0) a().add(r, regs::i32(v));
  }
  void multiply(const Gp& r, int64_t v) {
    if (v != 1) a().imul(r, r, regs::i32(v));
  }

  // ---- vectors, by register index ----
  void load_lanes(int v, const Gp& base, int64_t disp, int lanes) { ve_.load_lanes(v, x86::ptr(base, regs::i32(disp)), lanes); }
  void store_lanes(const Gp& base, int64_t disp, int v, int lanes) { ve_.store_lanes(x86::ptr(base, regs::i32(disp)), v, lanes); }
  void broadcast(int v, const Gp& base, int64_t disp) { ve_.broadcast(v, x86::ptr(base, regs::i32(disp))); }
  // A full vector, or lane 0 alone (scalar), at base + index.
  void load_at(int v, const Gp& base, const Gp& index, bool scalar) {
    if (scalar) ve_.load_scalar(v, x86::ptr(base, index));
    else ve_.load(v, x86::ptr(base, index));
  }
  void store_at(const Gp& base, const Gp& index, int v, bool scalar) {
    if (scalar) ve_.store_scalar(x86::ptr(base, index), v);
    else ve_.store(x86::ptr(base, index), v);
  }

 private:
  x86::Assembler& a() { return ve_.as(); }
};

}  // namespace nnd::jit
