// General-purpose register roles, declared per generator (private). The fixed registers of
// x86/kernel_regs_p.h carry different meanings in different generators (kCi is a channel counter
// in a convolution and a source pointer in a gather); a generator names what each register holds
// for it, and the declaration checks that
//   - no two roles share a register,
//   - no role is rsp (the frame, x86/stack_frame_p.h) or rax (kHookScratch: the VecEmitter hooks,
//     e.g. load_u8_scalar's eax, and the generators' short-lived address temporaries),
//   - no role sits in a register a helper the generator calls overwrites (declared with
//     clobbered_by(), e.g. regs::chunks()' loop counter kKh).
// A conflict is a generator bug: nnd::Error naming the kernel, both users and the register.
// Declaring emits no code and allocates nothing (names are views: string literals).
//
//   GpRoles r("f32-gather");
//   const x86::Gp table = r.role("table", kW);
//   const x86::Gp runs = r.role("runs left", kCi);
//   r.clobbered_by("chunks", kChunksCounter);
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/jit/x86/kernel_regs_p.h"
#include "core/util/error.h"

namespace nnd::jit::regs {

// rax/eax: owned by the VecEmitter hooks and the generators' temporaries; never a role.
inline const x86::Gp kHookScratch = x86::rax;
// The counter regs::chunks() loops on when a span is longer than 8 vectors.
inline const x86::Gp kChunksCounter = kKh;

class GpRoles {
 public:
  explicit GpRoles(std::string_view kernel) : kernel_(kernel) {}

  // Declares that `reg` holds `name` for the whole generator; returns reg.
  x86::Gp role(std::string_view name, const x86::Gp& reg) {
    if (reg.id() == x86::rsp.id()) fail(name, reg, "the stack pointer (the frame)");
    if (reg.id() == kHookScratch.id()) fail(name, reg, "the hooks' scratch register");
    check_free(name, reg);
    add({name, reg.id(), true}, name, reg);
    return reg;
  }

  // Declares that helper `helper` overwrites `reg`: no role may live there.
  void clobbered_by(std::string_view helper, const x86::Gp& reg) {
    for (size_t i = 0; i < count_; ++i) {
      const Use& u = uses_[i];
      if (u.id == reg.id() && u.is_role) fail(u.name, reg, "overwritten by " + std::string(helper));
    }
    add({helper, reg.id(), false}, helper, reg);
  }

  std::string_view kernel() const { return kernel_; }

 private:
  struct Use {
    std::string_view name;
    uint32_t id;
    bool is_role;
  };

  void add(const Use& u, std::string_view name, const x86::Gp& reg) {
    if (count_ == uses_.size()) fail(name, reg, "one declaration too many");
    uses_[count_++] = u;
  }

  void check_free(std::string_view name, const x86::Gp& reg) const {
    for (size_t i = 0; i < count_; ++i) {
      const Use& u = uses_[i];
      if (u.id != reg.id()) continue;
      fail(name, reg,
           u.is_role ? "already the role '" + std::string(u.name) + "'" : "overwritten by " + std::string(u.name));
    }
  }

  [[noreturn]] void fail(std::string_view name, const x86::Gp& reg, const std::string& why) const {
    throw Error(ErrorCode::kInternal, "JIT internal error in " + std::string(kernel_) + ": register " + gp_name(reg) + " for '" + std::string(name) +
                "' is " + why);
  }

  static std::string gp_name(const x86::Gp& reg) {
    static const char* const kNames[] = {"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
                                         "r8",  "r9",  "r10", "r11", "r12", "r13", "r14", "r15"};
    // Built by append: GCC 12's -Wrestrict misfires on "r" + std::to_string(...) (a false
    // positive that -Werror in CI turns into a build failure).
    if (reg.id() < 16) return kNames[reg.id()];
    std::string s = std::to_string(reg.id());
    s.insert(s.begin(), 'r');
    return s;
  }

  std::string_view kernel_;
  std::array<Use, 32> uses_{};  // 16 registers, each a role or one or more helpers' clobber
  size_t count_ = 0;
};

}  // namespace nnd::jit::regs
