#include "core/jit/x86/vec_emitter.h"

#include <cstring>

namespace nnd::jit {

x86::Mem VecEmitter::const_u32_lanes(const std::array<uint32_t, 16>& lanes) {
  for (const Entry& e : pool_) {
    if (e.lanes == lanes) return x86::ptr(e.label);
  }
  pool_.push_back({lanes, a_.newLabel()});
  return x86::ptr(pool_.back().label);
}

x86::Mem VecEmitter::const_f32(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  std::array<uint32_t, 16> lanes;
  lanes.fill(bits);
  return const_u32_lanes(lanes);
}

void VecEmitter::emit_const_pool() {
  if (pool_.empty()) return;
  a_.align(asmjit::AlignMode::kData, 64);
  for (const Entry& e : pool_) {
    a_.bind(e.label);
    a_.embed(e.lanes.data(), static_cast<size_t>(width()) * 4);
  }
}

}  // namespace nnd::jit
