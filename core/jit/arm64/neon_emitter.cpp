#include "core/jit/arm64/neon_emitter.h"

#include <cstring>
#include <string>

#include "core/jit/generators/vector_ops.h"
#include "core/util/error.h"

namespace nnd::jit::arm64 {

// The vocabulary the architecture-neutral generators compute with.
static_assert(generators::VectorOps<NeonEmitter>);

namespace {

const a64::Gp kAddrTmp = a64::x16;  // addresses and offsets the encodings cannot take
const a64::Gp kImmTmp = a64::x17;   // immediates ADD/SUB/MUL cannot take

[[noreturn]] void internal(const std::string& what) {
  throw Error(ErrorCode::kInternal, "JIT internal error (NEON emitter): " + what);
}

a64::Vec view(int v, int bytes) {
  const auto id = static_cast<uint32_t>(v);
  switch (bytes) {
    case 1: return a64::VecB(id);
    case 4: return a64::VecS(id);
    case 8: return a64::VecD(id);
    default: return a64::VecV(id);
  }
}

// ADD/SUB (immediate): 12 bits, optionally shifted left by 12.
bool add_encodable(uint64_t v) { return v < 4096 || (v % 4096 == 0 && v < 4096 * 4096); }

}  // namespace

void NeonEmitter::mov_imm(const a64::Gp& d, int64_t v) { a_.mov(d, v); }

void NeonEmitter::add_imm(const a64::Gp& d, const a64::Gp& s, int64_t v) {
  if (v == 0) {
    if (d.id() != s.id()) a_.mov(d, s);
    return;
  }
  if (d.id() == kImmTmp.id() || s.id() == kImmTmp.id()) internal("add_imm on x17");
  const uint64_t mag = v < 0 ? uint64_t(0) - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  if (add_encodable(mag)) {
    if (v > 0) a_.add(d, s, static_cast<int64_t>(mag));
    else a_.sub(d, s, static_cast<int64_t>(mag));
    return;
  }
  a_.mov(kImmTmp, v);
  a_.add(d, s, kImmTmp);
}

void NeonEmitter::mul_imm(const a64::Gp& r, int64_t v) {
  if (v == 1) return;
  a_.mov(kImmTmp, v);
  a_.mul(r, r, kImmTmp);
}

a64::Gp NeonEmitter::address(const a64::Gp& base, int64_t disp) {
  if (disp == 0) return base;
  add_imm(kAddrTmp, base, disp);
  return kAddrTmp;
}

void NeonEmitter::move(bool load, int v, const a64::Gp& base, int64_t disp, int bytes) {
  const a64::Vec r = view(v, bytes);
  if (disp >= 0 && disp % bytes == 0 && disp / bytes < 4096) {
    const a64::Mem m = a64::ptr(base, static_cast<int32_t>(disp));
    if (load) a_.ldr(r, m);
    else a_.str(r, m);
  } else if (disp >= -256 && disp <= 255) {
    const a64::Mem m = a64::ptr(base, static_cast<int32_t>(disp));
    if (load) a_.ldur(r, m);
    else a_.stur(r, m);
  } else {
    if (base.id() == kAddrTmp.id()) internal("an unencodable offset from x16");
    a_.mov(kAddrTmp, disp);
    const a64::Mem m = a64::ptr(base, kAddrTmp);
    if (load) a_.ldr(r, m);
    else a_.str(r, m);
  }
}

void NeonEmitter::load_tail(int v, const a64::Gp& base, int64_t disp, int n) {
  switch (n) {
    case 1: move(true, v, base, disp, 4); return;  // LDR s zeroes lanes 1..3
    case 2: move(true, v, base, disp, 8); return;  // LDR d zeroes lanes 2..3
    case 3:
      move(true, v, base, disp, 8);
      a_.ld1(lane(v, 2), a64::ptr(address(base, disp + 8)));
      return;
    default: internal("a tail of " + std::to_string(n) + " lanes");
  }
}

void NeonEmitter::store_tail(const a64::Gp& base, int64_t disp, int v, int n) {
  switch (n) {
    case 1: move(false, v, base, disp, 4); return;
    case 2: move(false, v, base, disp, 8); return;
    case 3:
      move(false, v, base, disp, 8);
      a_.st1(lane(v, 2), a64::ptr(address(base, disp + 8)));
      return;
    default: internal("a tail of " + std::to_string(n) + " lanes");
  }
}

void NeonEmitter::load_lanes(int v, const a64::Gp& base, int64_t disp, int lanes) {
  if (lanes <= 0 || lanes > width()) internal("load_lanes of " + std::to_string(lanes) + " lanes");
  if (lanes == width()) load(v, base, disp);
  else load_tail(v, base, disp, lanes);
}

void NeonEmitter::store_lanes(const a64::Gp& base, int64_t disp, int v, int lanes) {
  if (lanes <= 0 || lanes > width()) internal("store_lanes of " + std::to_string(lanes) + " lanes");
  if (lanes == width()) store(base, disp, v);
  else store_tail(base, disp, v, lanes);
}

void NeonEmitter::load_indexed(int v, const a64::Gp& base, const a64::Gp& index, bool scalar) {
  a_.ldr(view(v, scalar ? 4 : 16), a64::ptr(base, index));
}

void NeonEmitter::store_indexed(const a64::Gp& base, const a64::Gp& index, int v, bool scalar) {
  a_.str(view(v, scalar ? 4 : 16), a64::ptr(base, index));
}

void NeonEmitter::broadcast(int v, const a64::Gp& base, int64_t disp) {
  a_.ld1r(s4(v), a64::ptr(address(base, disp)));
}

void NeonEmitter::load_u8(int v, const a64::Gp& base, int64_t disp) {
  move(true, v, base, disp, 4);  // 4 bytes into lane 0
  const a64::VecV r = q(v);
  a_.ushll(r.h8(), r.b8(), 0);
  a_.ushll(r.s4(), r.h4(), 0);
  a_.ucvtf(r.s4(), r.s4());
}

void NeonEmitter::load_u8_scalar(int v, const a64::Gp& base, int64_t disp) {
  move(true, v, base, disp, 1);  // LDR b zeroes the rest of the register
  const a64::VecV r = q(v);
  a_.ushll(r.h8(), r.b8(), 0);
  a_.ushll(r.s4(), r.h4(), 0);
  a_.ucvtf(r.s4(), r.s4());
}

void NeonEmitter::load_const(int v, float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if (bits == 0) {
    zero(v);
    return;
  }
  load_const_u32(v, {bits, bits, bits, bits});
}

void NeonEmitter::load_const_u32(int v, const std::array<uint32_t, 4>& lanes) {
  for (const Entry& e : pool_) {
    if (e.lanes == lanes) {
      a_.ldr(q(v), a64::ptr(e.label));
      return;
    }
  }
  pool_.push_back({lanes, a_.newLabel()});
  a_.ldr(q(v), a64::ptr(pool_.back().label));
}

void NeonEmitter::emit_const_pool() {
  if (pool_.empty()) return;
  a_.align(asmjit::AlignMode::kData, 16);
  for (const Entry& e : pool_) {
    a_.bind(e.label);
    a_.embed(e.lanes.data(), 16);
  }
}

}  // namespace nnd::jit::arm64
