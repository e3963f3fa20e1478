// f32-layernorm and f32-gather on NEON, as x86/kernels_shape.cpp: the same passes and copy table.
// Horizontal sums are two FADDP; a tail of fewer than 4 floats in layer norm's variance pass is
// summed in scalar registers, so lanes past the row add nothing.
#include <algorithm>

#include "core/jit/arm64/neon_asm_p.h"
#include "core/jit/arm64/neon_kernels.h"
#include "core/util/error.h"

namespace nnd::jit::neon {

namespace {

using a64::GpX;

// v = the sum of its lanes, in every lane.
void hsum(a64::Assembler& a, int v) {
  a.faddp(vs(v), vs(v), vs(v));
  a.faddp(vs(v), vs(v), vs(v));
}

}  // namespace

// x1 group input, x2 group output, x3 weights, x4 groups left, x5 / x6 running input / output,
// x7 gamma, x8 beta, x9 chunk counter; v0 mean, v1 x, v2 variance -> 1 / std, v3 temporary,
// v5 the variance pass's scalar tail sum.
void emit_layernorm(a64::Assembler& a, const LayerNormSpec& s) {
  const int64_t M = s.block;
  const GpX in = a64::x1, out = a64::x2, weights = a64::x3, groups = a64::x4, src = a64::x5, dst = a64::x6;
  const GpX gamma = a64::x7, beta = a64::x8, cnt = a64::x9;
  constexpr int kMean = 0, kX = 1, kInv = 2, kT = 3, kTail = 5;
  a.ldr(in, a64::ptr(a64::x0, 0));
  a.ldr(in, a64::ptr(in, 0));
  a.ldr(out, a64::ptr(a64::x0, 8));
  a.ldr(weights, a64::ptr(a64::x0, 16));
  a.ldr(groups, a64::ptr(a64::x0, 24));
  mov_imm(a, a64::x16, s.groups);
  a.mul(groups, groups, a64::x16);
  const auto adv_src = [&](int64_t b) { add_imm(a, src, b); };
  Label group = a.newLabel();
  a.bind(group);
  // Pass 1: the mean (a partial load leaves zeros in the lanes past the row).
  a.mov(src, in);
  a.movi(vs(kMean), 0);
  chunks(a, cnt, M, 4, [&](int64_t off, int lanes) {
    load_lanes(a, kX, src, off, lanes);
    a.fadd(vs(kMean), vs(kMean), vs(kX));
  }, adv_src);
  hsum(a, kMean);
  dup_const(a, kX, static_cast<float>(M));
  a.fdiv(vs(kMean), vs(kMean), vs(kX));
  // Pass 2: the variance -> 1 / sqrt(var + eps).
  a.mov(src, in);
  a.movi(vs(kInv), 0);
  a.movi(vs(kTail), 0);
  chunks(a, cnt, M, 4, [&](int64_t off, int lanes) {
    if (lanes == kLanes) {
      load(a, kX, src, off);
      a.fsub(vs(kX), vs(kX), vs(kMean));
      a.fmla(vs(kInv), vs(kX), vs(kX));
      return;
    }
    for (int i = 0; i < lanes; ++i) {
      load_lanes(a, kX, src, off + 4 * i, 1);
      a.fsub(vsc(kX), vsc(kX), vsc(kMean));
      a.fmadd(vsc(kTail), vsc(kX), vsc(kX), vsc(kTail));
    }
  }, adv_src);
  hsum(a, kInv);
  a.fadd(vsc(kInv), vsc(kInv), vsc(kTail));
  a.dup(vs(kInv), a64::VecV(kInv).s(0));
  dup_const(a, kX, static_cast<float>(M));
  a.fdiv(vs(kInv), vs(kInv), vs(kX));
  dup_const(a, kX, s.epsilon);
  a.fadd(vs(kInv), vs(kInv), vs(kX));
  a.fsqrt(vs(kInv), vs(kInv));
  dup_const(a, kX, 1.0f);
  a.fdiv(vs(kInv), vs(kX), vs(kInv));
  // Pass 3: normalise, scale, shift.
  a.mov(src, in);
  a.mov(dst, out);
  add_imm(a, gamma, weights, std::max<int64_t>(s.gamma_off, 0) * 4);
  add_imm(a, beta, weights, std::max<int64_t>(s.beta_off, 0) * 4);
  chunks(a, cnt, M, 4, [&](int64_t off, int lanes) {
    load_lanes(a, kX, src, off, lanes);
    a.fsub(vs(kX), vs(kX), vs(kMean));
    a.fmul(vs(kX), vs(kX), vs(kInv));
    if (s.gamma_off >= 0) {
      load_lanes(a, kT, gamma, off, lanes);
      a.fmul(vs(kX), vs(kX), vs(kT));
    }
    if (s.beta_off >= 0) {
      load_lanes(a, kT, beta, off, lanes);
      a.fadd(vs(kX), vs(kX), vs(kT));
    }
    store_lanes(a, dst, off, kX, lanes);
  }, [&](int64_t b) {
    add_imm(a, src, b);
    add_imm(a, dst, b);
    add_imm(a, gamma, b);
    add_imm(a, beta, b);
  });
  add_imm(a, in, M * 4);
  add_imm(a, out, M * 4);
  a.subs(groups, groups, 1);
  a.b_ne(group);
}

// x1 sample input, x2 sample output, x3 run table, x4 samples left, x5 run entry, x6 runs left,
// x7 run output, x8-x11 the taps' inputs, x12 chunk counter; v0 sum, v1 tap input, v4-v7 tap
// weights.
void emit_gather(a64::Assembler& a, const GatherSpec& s) {
  const int T = s.taps;
  if (T < 1 || T > 4) throw Error(ErrorCode::kInternal, "JIT internal error: a gather of more than 4 taps");
  const GpX in = a64::x1, out = a64::x2, table = a64::x3, batch = a64::x4, entry = a64::x5, runs = a64::x6;
  const GpX dst = a64::x7, cnt = a64::x12;
  const GpX src[4] = {a64::x8, a64::x9, a64::x10, a64::x11};
  constexpr int kSum = 0, kX = 1, kWeight = 4;
  a.ldr(in, a64::ptr(a64::x0, 0));
  a.ldr(in, a64::ptr(in, 0));
  a.ldr(out, a64::ptr(a64::x0, 8));
  a.ldr(table, a64::ptr(a64::x0, 16));
  add_imm(a, table, s.table_off * 4);
  a.ldr(batch, a64::ptr(a64::x0, 24));
  Label sample = a.newLabel();
  a.bind(sample);
  if (s.zero_fill) {
    a.movi(vs(kSum), 0);
    a.mov(dst, out);
    chunks(a, cnt, s.out_count, 4, [&](int64_t off, int lanes) { store_lanes(a, dst, off, kSum, lanes); },
           [&](int64_t b) { add_imm(a, dst, b); });
  }
  if (s.runs > 0) {
    const int64_t entry_bytes = run_entries(T) * 4;
    a.mov(entry, table);
    counted_loop(a, runs, s.runs, [&] {
      for (int t = 0; t < T; ++t) {
        a.ldrsw(src[t], a64::ptr(entry, t * 4));
        a.lsl(src[t], src[t], 2);
        a.add(src[t], in, src[t]);
      }
      a.ldrsw(dst, a64::ptr(entry, T * 4));
      a.lsl(dst, dst, 2);
      a.add(dst, out, dst);
      if (T > 1) {
        for (int t = 0; t < T; ++t) {
          add_imm(a, a64::x17, entry, (T + 1 + t) * 4);
          a.ld1r(vs(kWeight + t), a64::ptr(a64::x17));
        }
      }
      chunks(a, cnt, s.len, 4, [&](int64_t off, int lanes) {
        load_lanes(a, kSum, src[0], off, lanes);
        if (T > 1) {
          a.fmul(vs(kSum), vs(kSum), vs(kWeight));
          for (int t = 1; t < T; ++t) {
            load_lanes(a, kX, src[t], off, lanes);
            a.fmla(vs(kSum), vs(kX), vs(kWeight + t));
          }
        }
        store_lanes(a, dst, off, kSum, lanes);
      }, [&](int64_t b) {
        for (int t = 0; t < T; ++t) add_imm(a, src[t], b);
        add_imm(a, dst, b);
      });
      add_imm(a, entry, entry_bytes);
    });
  }
  add_imm(a, in, s.in_count * 4);
  add_imm(a, out, s.out_count * 4);
  a.subs(batch, batch, 1);
  a.b_ne(sample);
}

}  // namespace nnd::jit::neon
