// The kernels' stack frame (private): named slots with sizes, laid out in declaration order, and
// the frame size KernelModule reserves computed from them, instead of hand-written offsets.
//
// Frame as KernelModule::compile() builds it: the call pushed the return address, the prologue
// pushes kSavedGps, then subtracts kStackBytes, so the slots are at [rsp + offset].
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

#include <asmjit/x86.h>

namespace nnd::jit::frame {

namespace x86 = asmjit::x86;

// Callee-saved registers the prologue pushes (System V); the generators may use them freely.
inline const x86::Gp kSavedGps[] = {x86::rbx, x86::rbp, x86::r12, x86::r13, x86::r14, x86::r15};
inline constexpr int kNumSavedGps = 6;

struct SlotDecl {
  std::string_view name;
  int bytes;
};

// A frame of named slots. Each slot starts at the next multiple of 8 after the previous one;
// size() rounds so that rsp stays 16-byte aligned after the return address, the saved registers
// and the frame (the ABI's alignment at calls, and movaps on the scratch area).
template <size_t N>
class Layout {
 public:
  constexpr explicit Layout(const std::array<SlotDecl, N>& slots) : slots_(slots) {
    int off = 0;
    for (size_t i = 0; i < N; ++i) {
      offsets_[i] = off;
      off += (slots_[i].bytes + 7) / 8 * 8;
    }
    end_ = off;
  }

  // The offset of the slot called `name`; not a constant expression when there is none, so a
  // misspelt slot fails to compile.
  constexpr int offset(std::string_view name) const {
    for (size_t i = 0; i < N; ++i) {
      if (slots_[i].name == name) return offsets_[i];
    }
    throw "no such stack slot";
  }
  constexpr int bytes(std::string_view name) const {
    for (size_t i = 0; i < N; ++i) {
      if (slots_[i].name == name) return slots_[i].bytes;
    }
    throw "no such stack slot";
  }
  constexpr int used() const { return end_; }
  // Bytes to subtract from rsp: at least used(), and (return address + saved registers + frame)
  // a multiple of 16.
  constexpr int size() const {
    const int below = 8 + 8 * kNumSavedGps;
    int s = end_;
    while ((below + s) % 16 != 0) s += 8;
    return s;
  }
  static constexpr size_t count() { return N; }
  constexpr const SlotDecl& decl(size_t i) const { return slots_[i]; }
  constexpr int offset_at(size_t i) const { return offsets_[i]; }

 private:
  std::array<SlotDecl, N> slots_;
  std::array<int, N> offsets_{};
  int end_ = 0;
};

// The one frame every kernel gets. Loop counters and saved pointers of the spatial loops; see the
// generators for what each holds.
inline constexpr Layout<14> kKernelFrame(std::array<SlotDecl, 14>{{
    {"in_n", 8},       // sample input pointer
    {"out_n", 8},      // sample output pointer
    {"oh_cnt", 8},     // output rows left
    {"in_row", 8},     // row input pointer
    {"out_row", 8},    // row output pointer
    {"owt_cnt", 8},    // output tiles left in the row
    {"ocb_cnt", 8},    // output channel blocks left
    {"w_base", 8},     // weights of the current block
    {"b_base", 8},     // bias of the current block
    {"res_delta", 8},  // fused residual: in[1] - out, bytes
    {"grp_cnt", 8},    // grouped conv looping over groups at run time: groups left,
    {"grp_in", 8},     //   the group's byte offsets into the input pixel,
    {"grp_out", 8},    //   the output pixel
    {"grp_w", 8},      //   and the weight blob
}});

// Scratch for a vector spill or a horizontal reduction (the widest vector, 64 bytes) at
// [rsp, rsp + 64). It overlays the first slots: only kernels that use none of in_n .. w_base
// may take it (layernorm's and softmax's row loops keep everything in registers).
inline constexpr int kVecScratch = 0;
inline constexpr int kVecScratchBytes = 64;
static_assert(kVecScratchBytes <= kKernelFrame.offset("b_base"), "the vector scratch overlays only in_n .. w_base");

inline constexpr int kStackBytes = kKernelFrame.size();

}  // namespace nnd::jit::frame
