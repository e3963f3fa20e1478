// What every architecture's GeneratorTarget (x86/generator_target_p.h, arm64/generator_target_p.h)
// shares: the names of the general-purpose register roles the generators ask for, the role check,
// the recorded loops (generators/loops.h) and the vector operations whose operands are registers
// only. An architecture's target derives from GeneratorTargetBase and adds what takes an address
// or an immediate (KernelArgs fields, pointer arithmetic, vector loads, stores and broadcasts) and
// the registers behind the role names.
//
// The role names, in one list: a generator writes `t.role("A row block", Target::kRow)`, and each
// target defines every name of NND_GENERATOR_GP_ROLES as its register (a target that misses one
// does not compile where a generator uses it).
#pragma once

#include <cstdint>
#include <string_view>

#include "core/jit/generators/loops.h"
#include "core/jit/loop_record.h"

// X(name) per role: the kernel arguments' pointer, then the registers the generators name by role.
#define NND_GENERATOR_GP_ROLES(X) \
  X(kArgs)                        \
  X(kIn)                          \
  X(kOut)                         \
  X(kW)                           \
  X(kBias)                        \
  X(kN)                           \
  X(kPix)                         \
  X(kOb)                          \
  X(kKh)                          \
  X(kKw)                          \
  X(kCi)                          \
  X(kRow)                         \
  X(kCol)                         \
  X(kWk)

namespace nnd::jit::generators {

// Ve: the architecture's vector emitter; Roles: its checked role map (GpRoles), constructed from
// the kernel's name; Gp: its general-purpose register type.
template <class Ve, class Roles, class GpType>
class GeneratorTargetBase {
 public:
  using Gp = GpType;

  GeneratorTargetBase(Ve& ve, std::string_view kernel) : ve_(ve), roles_(kernel) {}

  // ---- general-purpose registers ----
  Gp role(std::string_view name, const Gp& reg) { return roles_.role(name, reg); }

  // ---- loops (recorded for the cost model) ----
  template <typename Body>
  void counted_loop(const Gp& counter, int64_t n, Body&& body) {
    loops::counted_loop(ve_, counter, n, body);
  }
  template <typename Body>
  void count_down_loop(const Gp& counter, Trips trips, Body&& body) {
    loops::count_down_loop(ve_, counter, trips, body);
  }
  // body() n >= 0 times: nothing for 0, once without a loop for 1.
  template <typename Body>
  void times_loop(const Gp& counter, int64_t n, Body&& body) {
    loops::times_loop(ve_, counter, n, body);
  }

  // ---- vectors, by register index ----
  Ve& vec() { return ve_; }  // the emitter itself, for the register-only operations (VectorOps)
  int width() const { return ve_.width(); }
  int usable_regs() const { return ve_.usable_regs(); }
  void zero(int v) { ve_.zero(v); }
  void fmadd(int acc, int a, int b) { ve_.fmadd(acc, a, b); }

 protected:
  Ve& ve_;

 private:
  Roles roles_;
};

}  // namespace nnd::jit::generators
