#include "core/jit/x86/vec_emitter.h"

#include <cstring>
#include <string>

#include "core/jit/generators/vector_ops.h"
#include "core/util/error.h"

namespace nnd::jit {

// The vocabulary the architecture-neutral generators compute with.
static_assert(generators::VectorOps<VecEmitter>);

namespace {

void check_lanes(const VecEmitter& ve, int lanes, const char* what) {
  if (lanes <= 0 || lanes > ve.width()) {
    throw Error(ErrorCode::kInternal, std::string("JIT internal error: ") + what + " of " + std::to_string(lanes) + " lanes on a " +
                std::to_string(ve.width()) + "-lane vector");
  }
}

}  // namespace

void VecEmitter::load_lanes(int v, const x86::Mem& m, int lanes) {
  check_lanes(*this, lanes, "load_lanes");
  if (lanes == width()) load(v, m);
  else load_tail(v, m, lanes);
}

void VecEmitter::store_lanes(const x86::Mem& m, int v, int lanes) {
  check_lanes(*this, lanes, "store_lanes");
  if (lanes == width()) store(m, v);
  else store_tail(m, v, lanes);
}

void VecEmitter::abs(int d, int a) {
  if (d == a) throw Error(ErrorCode::kInternal, "JIT internal error: abs() into its own operand on x86");
  zero(d);
  sub(d, d, a);
  max(d, d, a);
}

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
