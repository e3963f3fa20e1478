// General-purpose registers of the NEON generators (private), their role checker, the function
// frame and the loop helpers. AAPCS64: x0 brings the KernelArgs pointer, x1-x15 are free to use,
// x16/x17 belong to the emitter's hooks (arm64/neon_emitter.h), x18 is the platform register
// (never touched), x19-x28 are callee-saved (the frame saves them, so generators use them freely),
// x29/x30 are the frame pointer and link register (saved: a helper call overwrites x30), and the
// low halves of v8-v15 are callee-saved (the frame saves d8-d15).
#pragma once

#include <array>
#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/jit/arm64/neon_emitter.h"
#include "core/jit/generators/loops.h"
#include "core/util/error.h"

namespace nnd::jit::arm64 {

namespace regs {

inline const a64::Gp kArgs = a64::x0;
inline const a64::Gp kIn = a64::x1;      // tile input
inline const a64::Gp kOut = a64::x2;     // tile output
inline const a64::Gp kW = a64::x3;       // block weights
inline const a64::Gp kBias = a64::x4;    // block bias
inline const a64::Gp kN = a64::x5;       // samples / rows left
inline const a64::Gp kPix = a64::x6;     // input pointer inside the channel loop
inline const a64::Gp kOb = a64::x7;      // block output
inline const a64::Gp kKh = a64::x8;      // kernel rows left
inline const a64::Gp kKw = a64::x9;      // kernel columns left
inline const a64::Gp kCi = a64::x10;     // channel groups left
inline const a64::Gp kRow = a64::x11;    // kernel row input
inline const a64::Gp kCol = a64::x12;    // kernel column input
inline const a64::Gp kWk = a64::x13;     // running weights
inline const a64::Gp kOh = a64::x14;     // output row groups left
inline const a64::Gp kOwt = a64::x15;    // output tiles left in the row
inline const a64::Gp kOcb = a64::x19;    // output channel blocks left
inline const a64::Gp kInN = a64::x20;    // sample input
inline const a64::Gp kOutN = a64::x21;   // sample output
inline const a64::Gp kInRow = a64::x22;  // row input
inline const a64::Gp kOutRow = a64::x23; // row output
inline const a64::Gp kWBase = a64::x24;  // the group's weights
inline const a64::Gp kBBase = a64::x25;  // the group's bias
inline const a64::Gp kResDelta = a64::x26;  // fused residual: in[1] - out, bytes
inline const a64::Gp kT0 = a64::x27;     // generator temporaries
inline const a64::Gp kT1 = a64::x28;
inline const a64::Gp kHookAddr = a64::x16;
inline const a64::Gp kHookImm = a64::x17;

// What each register holds for one generator: no register twice, none of the hooks' (x16, x17),
// the platform register x18, the frame's x29/x30 or sp. A conflict is a generator bug (nnd::Error
// naming the kernel, both roles and the register). Declaring emits nothing.
class GpRoles {
 public:
  explicit GpRoles(std::string_view kernel) : kernel_(kernel) {}

  a64::Gp role(std::string_view name, const a64::Gp& reg) {
    const uint32_t id = reg.id();
    if (id == 16 || id == 17) fail(name, id, "the hooks' scratch register");
    if (id == 18 || id > 28) fail(name, id, "reserved by the ABI or the frame");
    for (size_t i = 0; i < count_; ++i) {
      if (ids_[i] == id) fail(name, id, "already the role '" + std::string(names_[i]) + "'");
    }
    if (count_ == ids_.size()) fail(name, id, "one role too many");
    names_[count_] = name;
    ids_[count_++] = id;
    return reg;
  }

 private:
  [[noreturn]] void fail(std::string_view name, uint32_t id, const std::string& why) const {
    std::string reg = std::to_string(id);
    reg.insert(reg.begin(), 'x');
    throw Error(ErrorCode::kInternal, "JIT internal error in " + std::string(kernel_) + ": register " + reg + " for '" +
                                          std::string(name) + "' is " + why);
  }

  std::string_view kernel_;
  std::array<std::string_view, 32> names_{};
  std::array<uint32_t, 32> ids_{};
  size_t count_ = 0;
};

// The frame: callee-saved x19-x28, x29/x30 and d8-d15 at [sp, #0 .. kFrameBytes), sp 16-byte
// aligned throughout (helper calls need it).
inline constexpr int kFrameBytes = 12 * 8 + 8 * 8;
static_assert(kFrameBytes % 16 == 0);

inline void emit_prologue(a64::Assembler& a) {
  a.sub(a64::sp, a64::sp, kFrameBytes);
  for (uint32_t i = 0; i < 6; ++i) a.stp(a64::x(19 + 2 * i), a64::x(20 + 2 * i), a64::ptr(a64::sp, static_cast<int32_t>(16 * i)));
  for (uint32_t i = 0; i < 4; ++i) a.stp(a64::d(8 + 2 * i), a64::d(9 + 2 * i), a64::ptr(a64::sp, static_cast<int32_t>(96 + 16 * i)));
}

inline void emit_epilogue(a64::Assembler& a) {
  for (uint32_t i = 0; i < 4; ++i) a.ldp(a64::d(8 + 2 * i), a64::d(9 + 2 * i), a64::ptr(a64::sp, static_cast<int32_t>(96 + 16 * i)));
  for (uint32_t i = 0; i < 6; ++i) a.ldp(a64::x(19 + 2 * i), a64::x(20 + 2 * i), a64::ptr(a64::sp, static_cast<int32_t>(16 * i)));
  a.add(a64::sp, a64::sp, kFrameBytes);
  a.ret(a64::x30);
}

}  // namespace regs
}  // namespace nnd::jit::arm64

namespace nnd::jit::loops {

// AArch64's branches of the loops (generators/loops.h; counters are registers): mov counter, n
// (MOVZ/MOVK, as NeonEmitter::mov_imm); subs counter, counter, #1; b.ne L; and the
// vector-then-scalar loop's cmp/b.lo, sub, b and cbz, and cmp/b.ne.
template <>
struct LoopBranches<asmjit::a64::Assembler> {
  static void set(asmjit::a64::Assembler& a, const asmjit::a64::Gp& c, int64_t n) { a.mov(c, n); }
  static void count_down(asmjit::a64::Assembler& a, const asmjit::a64::Gp& c, const asmjit::Label& l) {
    a.subs(c, c, 1);
    a.b_ne(l);
  }
  static void branch_below(asmjit::a64::Assembler& a, const asmjit::a64::Gp& c, int k, const asmjit::Label& l) {
    a.cmp(c, k);
    a.b_lo(l);
  }
  static void sub(asmjit::a64::Assembler& a, const asmjit::a64::Gp& c, int k) { a.sub(c, c, k); }
  static void jump(asmjit::a64::Assembler& a, const asmjit::Label& l) { a.b(l); }
  static void branch_zero(asmjit::a64::Assembler& a, const asmjit::a64::Gp& c, const asmjit::Label& l) { a.cbz(c, l); }
  static void branch_not_equal(asmjit::a64::Assembler& a, const asmjit::a64::Gp& c, int k, const asmjit::Label& l) {
    a.cmp(c, k);
    a.b_ne(l);
  }
};

}  // namespace nnd::jit::loops

namespace nnd::jit::arm64 {
namespace regs {

// The loops themselves are architecture-neutral (generators/loops.h): regs::counted_loop and the
// others name them.
using namespace loops;  // NOLINT(google-build-using-namespace)

}  // namespace regs

}  // namespace nnd::jit::arm64
