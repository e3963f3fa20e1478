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

// ---- loops (the x86 shapes of x86/counted_loop_p.h; counters are registers) ----

// Records the code emitted during its lifetime as a region running `trips` times per run of the
// enclosing region (core/jit/loop_record.h), when the emitter has a recorder.
class RecordedRegion {
 public:
  RecordedRegion(NeonEmitter& ve, Trips trips) : ve_(ve) {
    if (LoopRecorder* r = ve_.loop_recorder()) r->open(ve_.as().offset(), r->resolve(trips), trips.per_sample);
  }
  ~RecordedRegion() {
    if (LoopRecorder* r = ve_.loop_recorder()) r->close(ve_.as().offset());
  }
  RecordedRegion(const RecordedRegion&) = delete;
  RecordedRegion& operator=(const RecordedRegion&) = delete;

 private:
  NeonEmitter& ve_;
};

inline int64_t planned(const NeonEmitter& ve, Trips t) {
  const LoopRecorder* r = ve.loop_recorder();
  return r ? r->resolve(t) : 0;
}

// L: body(); subs counter, counter, #1; b.ne L. The counter holds >= 1 on entry.
template <typename Body>
void count_down_loop(NeonEmitter& ve, const a64::Gp& counter, Trips trips, Body&& body) {
  a64::Assembler& a = ve.as();
  asmjit::Label l = a.newLabel();
  a.bind(l);
  RecordedRegion region(ve, trips);
  body();
  a.subs(counter, counter, 1);
  a.b_ne(l);
}

template <typename Body>
void counted_loop(NeonEmitter& ve, const a64::Gp& counter, int64_t n, Body&& body) {
  if (n < 1) throw Error(ErrorCode::kInternal, "JIT internal error: a counted loop of " + std::to_string(n) + " iterations");
  ve.mov_imm(counter, n);
  count_down_loop(ve, counter, Trips::fixed(n), body);
}

// body() n >= 0 times: no code for 0, the body once without a loop for 1, else counted_loop (the
// body then advances its own pointers each time, as the code after the loop expects).
template <typename Body>
void times_loop(NeonEmitter& ve, const a64::Gp& counter, int64_t n, Body&& body) {
  if (n <= 0) return;
  if (n == 1) {
    body();
    return;
  }
  counted_loop(ve, counter, n, body);
}

// body() n >= 1 times with advance() between iterations; n == 1: body() once, no loop.
template <typename Body, typename Advance>
void repeat_loop(NeonEmitter& ve, const a64::Gp& counter, int64_t n, Body&& body, Advance&& advance) {
  if (n == 1) {
    body();
    return;
  }
  counted_loop(ve, counter, n, [&] {
    body();
    advance();
  });
}

// While counter >= step: vector(), counter -= step; then scalar() counter times.
template <typename Vector, typename Scalar>
void vector_then_scalar_loop(NeonEmitter& ve, const a64::Gp& counter, int step, Trips total, Vector&& vector,
                             Scalar&& scalar) {
  a64::Assembler& a = ve.as();
  const int64_t n = planned(ve, total);
  asmjit::Label lv = a.newLabel(), ltail = a.newLabel(), ldone = a.newLabel();
  a.bind(lv);
  {
    RecordedRegion region(ve, Trips{n / step, total.per_sample, true});
    a.cmp(counter, step);
    a.b_lo(ltail);
    vector();
    a.sub(counter, counter, step);
    a.b(lv);
  }
  a.bind(ltail);
  a.cbz(counter, ldone);
  {
    asmjit::Label ls = a.newLabel();
    a.bind(ls);
    RecordedRegion region(ve, Trips{n % step, total.per_sample, true});
    scalar();
    a.subs(counter, counter, 1);
    a.b_ne(ls);
  }
  a.bind(ldone);
}

}  // namespace regs

}  // namespace nnd::jit::arm64
