// Data movement, per-element parameter and LayerNormalization kernels (see x86/kernels_shape.h).
#include "core/jit/x86/kernels_shape.h"

#include <algorithm>
#include <bit>
#include <functional>
#include <limits>
#include <string>

#include "core/jit/x86/kernel_regs_p.h"
#include "core/util/error.h"

namespace nnd::jit {

using namespace regs;
using asmjit::Label;

void gather_from_map(const std::vector<int64_t>& map, int64_t in_count, GatherSpec& s, std::vector<float>& table) {
  const auto count = static_cast<int64_t>(map.size());
  s.in_count = in_count;
  s.out_count = count;
  s.taps = 1;
  auto ok = [&](int64_t len) {
    for (int64_t r = 0; r < count; r += len) {
      const int64_t base = map[static_cast<size_t>(r)];
      for (int64_t j = 1; j < len; ++j) {
        const int64_t v = map[static_cast<size_t>(r + j)];
        if (base < 0 ? v >= 0 : v != base + j) return false;
      }
    }
    return true;
  };
  int64_t len = 1;
  for (int64_t d = count; d > 1; --d) {
    if (count % d == 0 && ok(d)) {
      len = d;
      break;
    }
  }
  s.len = len;
  s.runs = 0;
  s.zero_fill = false;
  for (int64_t r = 0; r < count; r += len) {
    const int64_t src = map[static_cast<size_t>(r)];
    if (src < 0) {
      s.zero_fill = true;
      continue;
    }
    table.push_back(std::bit_cast<float>(i32(src)));
    table.push_back(std::bit_cast<float>(i32(r)));
    ++s.runs;
  }
}

void emit_gather(VecEmitter& ve, const GatherSpec& s) {
  x86::Assembler& a = ve.as();
  const int W = ve.width();
  const int T = s.taps;
  a.mov(kIn, x86::qword_ptr(kArgs, 0));
  a.mov(kIn, x86::qword_ptr(kIn, 0));
  a.mov(kOut, x86::qword_ptr(kArgs, 8));
  a.mov(kW, x86::qword_ptr(kArgs, 16));
  add_imm(a, kW, s.table_off * 4);
  a.mov(kN, x86::qword_ptr(kArgs, 24));
  const x86::Gp src[4] = {kRow, kPix, kOb, kBias};
  Label ln = a.newLabel();
  a.bind(ln);
  if (s.zero_fill) {
    ve.zero(0);
    a.mov(kCol, kOut);
    chunks(ve, s.out_count, 4, [&](int64_t off, int lanes) { ve.store_lanes(at(kCol, off), 0, lanes); },
           [&](int64_t b) { add_imm(a, kCol, b); });
  }
  if (s.runs > 0) {
    const int64_t entry = run_entries(T) * 4;
    Label lr = a.newLabel();
    a.mov(kWk, kW);
    a.mov(kCi, i32(s.runs));
    a.bind(lr);
    for (int t = 0; t < T; ++t) {
      a.movsxd(src[t], x86::dword_ptr(kWk, t * 4));
      a.lea(src[t], x86::ptr(kIn, src[t], 2));
    }
    a.movsxd(kCol, x86::dword_ptr(kWk, T * 4));
    a.lea(kCol, x86::ptr(kOut, kCol, 2));
    if (T > 1) {
      for (int t = 0; t < T; ++t) ve.broadcast(4 + t, x86::dword_ptr(kWk, (T + 1 + t) * 4));
    }
    chunks(
        ve, s.len, 4,
        [&](int64_t off, int lanes) {
          ve.load_lanes(0, at(src[0], off), lanes);
          if (T > 1) {
            ve.mul(0, 0, 4);
            for (int t = 1; t < T; ++t) {
              ve.load_lanes(1, at(src[t], off), lanes);
              ve.fmadd(0, 1, 4 + t);
            }
          }
          ve.store_lanes(at(kCol, off), 0, lanes);
        },
        [&](int64_t b) {
          for (int t = 0; t < T; ++t) add_imm(a, src[t], b);
          add_imm(a, kCol, b);
        });
    a.add(kWk, i32(entry));
    a.dec(kCi);
    a.jnz(lr);
  }
  add_imm(a, kIn, s.in_count * 4);
  add_imm(a, kOut, s.out_count * 4);
  a.dec(kN);
  a.jnz(ln);
  (void)W;
}

void emit_param_elt(VecEmitter& ve, const ParamEltSpec& s) {
  x86::Assembler& a = ve.as();
  a.mov(kIn, x86::qword_ptr(kArgs, 0));
  a.mov(kIn, x86::qword_ptr(kIn, 0));
  a.mov(kOut, x86::qword_ptr(kArgs, 8));
  a.mov(kW, x86::qword_ptr(kArgs, 16));
  a.mov(kN, x86::qword_ptr(kArgs, 24));
  Label ln = a.newLabel();
  a.bind(ln);
  a.lea(kWk, at(kW, s.a_off * 4));
  a.lea(kPix, at(kW, s.b_off * 4));
  chunks(
      ve, s.count, 4,
      [&](int64_t off, int lanes) {
        ve.load_lanes(0, at(kIn, off), lanes);
        ve.load_lanes(1, at(kWk, off), lanes);
        if (s.op == ParamOp::kPRelu) {
          ve.zero(2);
          ve.min(3, 0, 2);
          ve.max(0, 0, 2);
          ve.mul(3, 3, 1);
          ve.add(0, 0, 3);
        } else {
          ve.mul(0, 0, 1);
          ve.load_lanes(2, at(kPix, off), lanes);
          ve.add(0, 0, 2);
        }
        ve.store_lanes(at(kOut, off), 0, lanes);
      },
      [&](int64_t b) {
        add_imm(a, kIn, b);
        add_imm(a, kOut, b);
        add_imm(a, kWk, b);
        add_imm(a, kPix, b);
      });
  add_imm(a, kIn, s.count * 4);
  add_imm(a, kOut, s.count * 4);
  a.dec(kN);
  a.jnz(ln);
}

namespace {

// Horizontal sum of register v into all its lanes (via the vector scratch area, vec_scratch()); t is free.
void hsum(VecEmitter& ve, int v, int t) {
  const x86::Mem st = vec_scratch();
  ve.store(st, v);
  ve.load_scalar(v, st);
  for (int i = 1; i < ve.width(); ++i) {
    ve.load_scalar(t, vec_scratch(i * 4));
    ve.add(v, v, t);
  }
  ve.store_scalar(st, v);
  ve.broadcast(v, st);
}

}  // namespace

void emit_layernorm(VecEmitter& ve, const LayerNormSpec& s) {
  static_assert(kStackBytes >= frame::kVecScratchBytes, "layernorm uses the vector scratch area");
  x86::Assembler& a = ve.as();
  const int64_t M = s.block;
  a.mov(kIn, x86::qword_ptr(kArgs, 0));
  a.mov(kIn, x86::qword_ptr(kIn, 0));
  a.mov(kOut, x86::qword_ptr(kArgs, 8));
  a.mov(kW, x86::qword_ptr(kArgs, 16));
  a.mov(kN, x86::qword_ptr(kArgs, 24));
  a.imul(kN, kN, i32(s.groups));
  Label ln = a.newLabel();
  a.bind(ln);
  auto adv_in = [&](int64_t b) { add_imm(a, kRow, b); };
  // Pass 1: mean -> register 0 (all lanes).
  a.mov(kRow, kIn);
  ve.zero(0);
  chunks(
      ve, M, 4,
      [&](int64_t off, int lanes) {
        ve.load_lanes(1, at(kRow, off), lanes);
        ve.add(0, 0, 1);
      },
      adv_in);
  hsum(ve, 0, 1);
  ve.load_const(1, static_cast<float>(M));
  ve.div(0, 0, 1);
  // Pass 2: variance -> 1 / sqrt(var + eps) in register 2.
  a.mov(kRow, kIn);
  ve.zero(2);
  chunks(
      ve, M, 4,
      [&](int64_t off, int lanes) {
        if (lanes < ve.width()) {
          ve.zero(3);
          ve.store(vec_scratch(), 3);
          ve.load_lanes(1, at(kRow, off), lanes);
          ve.sub(1, 1, 0);
          ve.store_lanes(vec_scratch(), 1, lanes);
          ve.load(1, vec_scratch());
        } else {
          ve.load(1, at(kRow, off));
          ve.sub(1, 1, 0);
        }
        ve.fmadd(2, 1, 1);
      },
      adv_in);
  hsum(ve, 2, 1);
  ve.load_const(1, static_cast<float>(M));
  ve.div(2, 2, 1);
  ve.load_const(1, s.epsilon);
  ve.add(2, 2, 1);
  ve.sqrt(2, 2);
  ve.load_const(1, 1.0f);
  ve.div(2, 1, 2);
  // Pass 3: normalise, scale, shift.
  a.mov(kRow, kIn);
  a.mov(kCol, kOut);
  a.lea(kWk, at(kW, std::max<int64_t>(s.gamma_off, 0) * 4));
  a.lea(kPix, at(kW, std::max<int64_t>(s.beta_off, 0) * 4));
  chunks(
      ve, M, 4,
      [&](int64_t off, int lanes) {
        ve.load_lanes(1, at(kRow, off), lanes);
        ve.sub(1, 1, 0);
        ve.mul(1, 1, 2);
        if (s.gamma_off >= 0) {
          ve.load_lanes(3, at(kWk, off), lanes);
          ve.mul(1, 1, 3);
        }
        if (s.beta_off >= 0) {
          ve.load_lanes(3, at(kPix, off), lanes);
          ve.add(1, 1, 3);
        }
        ve.store_lanes(at(kCol, off), 1, lanes);
      },
      [&](int64_t b) {
        add_imm(a, kRow, b);
        add_imm(a, kCol, b);
        add_imm(a, kWk, b);
        add_imm(a, kPix, b);
      });
  add_imm(a, kIn, M * 4);
  add_imm(a, kOut, M * 4);
  a.dec(kN);
  a.jnz(ln);
}

}  // namespace nnd::jit
