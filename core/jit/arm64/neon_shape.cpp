// f32-layernorm and f32-gather on NEON, as x86/kernels_shape.cpp: the same passes and copy table.
// Horizontal sums are two FADDP; a tail of fewer than 4 floats in layer norm's variance pass is
// summed in scalar registers, so lanes past the row add nothing.
#include <algorithm>
#include <cstdint>

#include "core/jit/arm64/neon_kernels.h"
#include "core/jit/arm64/regs_p.h"
#include "core/jit/generators/normalization.h"
#include "core/jit/kernel_args.h"
#include "core/util/error.h"

namespace nnd::jit::neon {

namespace {

namespace a64 = asmjit::a64;
namespace regs = arm64::regs;
using a64::GpX;
using arm64::NeonEmitter;

constexpr int kLanes = NeonEmitter::width();
a64::VecV vs(int v) { return NeonEmitter::s4(v); }
a64::VecS vsc(int v) { return NeonEmitter::scalar(v); }

// Walks `count` floats: body(off, lanes) per vector (lanes < 4 only for the last), `unroll`
// vectors per iteration of a loop counted by `counter` with advance(bytes) after each iteration,
// then the remaining vectors and the tail at offsets from the advanced pointers.
template <typename Body, typename Advance>
void chunks(NeonEmitter& ve, const GpX& counter, int64_t count, int unroll, Body&& body, Advance&& advance) {
  const int64_t per = int64_t{unroll} * kLanes, groups = count / per;
  regs::times_loop(ve, counter, groups, [&] {
    for (int u = 0; u < unroll; ++u) body(int64_t{u} * 16, kLanes);
    advance(per * 4);
  });
  int64_t rest = count - groups * per, off = 0;
  for (; rest >= kLanes; rest -= kLanes, off += 16) body(off, kLanes);
  if (rest > 0) body(off, static_cast<int>(rest));
}

}  // namespace

// x1 group input, x2 group output, x3 weights, x4 groups left, x5 / x6 running input / output,
// x7 gamma, x8 beta, x9 chunk counter; v0 mean, v1 x, v2 variance -> 1 / std, v3 temporary,
// v5 the variance pass's scalar tail sum.
void emit_layernorm(NeonEmitter& ve, const LayerNormSpec& s) {
  a64::Assembler& a = ve.as();
  const int64_t M = s.block;
  const GpX in = a64::x1, out = a64::x2, weights = a64::x3, groups = a64::x4, src = a64::x5, dst = a64::x6;
  const GpX gamma = a64::x7, beta = a64::x8, cnt = a64::x9;
  constexpr int kMean = 0, kX = 1, kInv = 2, kT = 3, kTail = 5;
  a.ldr(in, a64::ptr(a64::x0, kArgsIn));
  a.ldr(in, a64::ptr(in, 0));
  a.ldr(out, a64::ptr(a64::x0, kArgsOut));
  a.ldr(weights, a64::ptr(a64::x0, kArgsWeights));
  a.ldr(groups, a64::ptr(a64::x0, kArgsBatch));
  ve.mul_imm(groups, s.groups);
  const auto adv_src = [&](int64_t b) { ve.add_imm(src, b); };
  regs::count_down_loop(ve, groups, Trips::samples(s.groups), [&] {
    // Pass 1: the mean (a partial load leaves zeros in the lanes past the row).
    a.mov(src, in);
    ve.zero(kMean);
    chunks(ve, cnt, M, 4, [&](int64_t off, int lanes) {
      ve.load_lanes(kX, src, off, lanes);
      ve.add(kMean, kMean, kX);
    }, adv_src);
    ve.hsum(kMean, kMean);
    ve.load_const(kX, static_cast<float>(M));
    ve.div(kMean, kMean, kX);
    // Pass 2: the variance -> 1 / sqrt(var + eps).
    a.mov(src, in);
    ve.zero(kInv);
    ve.zero(kTail);
    chunks(ve, cnt, M, 4, [&](int64_t off, int lanes) {
      if (lanes == kLanes) {
        ve.load(kX, src, off);
        ve.sub(kX, kX, kMean);
        ve.fmadd(kInv, kX, kX);
        return;
      }
      for (int i = 0; i < lanes; ++i) {
        ve.load_scalar(kX, src, off + 4 * i);
        a.fsub(vsc(kX), vsc(kX), vsc(kMean));
        a.fmadd(vsc(kTail), vsc(kX), vsc(kX), vsc(kTail));
      }
    }, adv_src);
    ve.hsum(kInv, kInv);
    a.fadd(vsc(kInv), vsc(kInv), vsc(kTail));
    a.dup(vs(kInv), NeonEmitter::lane(kInv, 0));
    generators::inverse_std(ve, kInv, kX, M, s.epsilon);
    // Pass 3: normalise, scale, shift.
    a.mov(src, in);
    a.mov(dst, out);
    ve.add_imm(gamma, weights, std::max<int64_t>(s.gamma_off, 0) * 4);
    ve.add_imm(beta, weights, std::max<int64_t>(s.beta_off, 0) * 4);
    chunks(ve, cnt, M, 4, [&](int64_t off, int lanes) {
      ve.load_lanes(kX, src, off, lanes);
      ve.sub(kX, kX, kMean);
      ve.mul(kX, kX, kInv);
      if (s.gamma_off >= 0) {
        ve.load_lanes(kT, gamma, off, lanes);
        ve.mul(kX, kX, kT);
      }
      if (s.beta_off >= 0) {
        ve.load_lanes(kT, beta, off, lanes);
        ve.add(kX, kX, kT);
      }
      ve.store_lanes(dst, off, kX, lanes);
    }, [&](int64_t b) {
      ve.add_imm(src, b);
      ve.add_imm(dst, b);
      ve.add_imm(gamma, b);
      ve.add_imm(beta, b);
    });
    ve.add_imm(in, M * 4);
    ve.add_imm(out, M * 4);
  });
}

// x1 sample input, x2 sample output, x3 run table, x4 samples left, x5 run entry, x6 runs left,
// x7 run output, x8-x11 the taps' inputs, x12 chunk counter; v0 sum, v1 tap input, v4-v7 tap
// weights.
void emit_gather(NeonEmitter& ve, const GatherSpec& s) {
  a64::Assembler& a = ve.as();
  const int T = s.taps;
  if (T < 1 || T > 4) throw Error(ErrorCode::kInternal, "JIT internal error: a gather of more than 4 taps");
  const GpX in = a64::x1, out = a64::x2, table = a64::x3, batch = a64::x4, entry = a64::x5, runs = a64::x6;
  const GpX dst = a64::x7, cnt = a64::x12;
  const GpX src[4] = {a64::x8, a64::x9, a64::x10, a64::x11};
  constexpr int kSum = 0, kX = 1, kWeight = 4;
  a.ldr(in, a64::ptr(a64::x0, kArgsIn));
  a.ldr(in, a64::ptr(in, 0));
  a.ldr(out, a64::ptr(a64::x0, kArgsOut));
  a.ldr(table, a64::ptr(a64::x0, kArgsWeights));
  ve.add_imm(table, s.table_off * 4);
  a.ldr(batch, a64::ptr(a64::x0, kArgsBatch));
  regs::count_down_loop(ve, batch, Trips::samples(1), [&] {
    if (s.zero_fill) {
      ve.zero(kSum);
      a.mov(dst, out);
      chunks(ve, cnt, s.out_count, 4, [&](int64_t off, int lanes) { ve.store_lanes(dst, off, kSum, lanes); },
             [&](int64_t b) { ve.add_imm(dst, b); });
    }
    if (s.runs > 0) {
      const int64_t entry_bytes = run_entries(T) * 4;
      a.mov(entry, table);
      regs::times_loop(ve, runs, s.runs, [&] {
        for (int t = 0; t < T; ++t) {
          a.ldrsw(src[t], a64::ptr(entry, t * 4));
          a.lsl(src[t], src[t], 2);
          a.add(src[t], in, src[t]);
        }
        a.ldrsw(dst, a64::ptr(entry, T * 4));
        a.lsl(dst, dst, 2);
        a.add(dst, out, dst);
        if (T > 1) {
          for (int t = 0; t < T; ++t) ve.broadcast(kWeight + t, entry, (T + 1 + t) * 4);
        }
        chunks(ve, cnt, s.len, 4, [&](int64_t off, int lanes) {
          ve.load_lanes(kSum, src[0], off, lanes);
          if (T > 1) {
            ve.mul(kSum, kSum, kWeight);
            for (int t = 1; t < T; ++t) {
              ve.load_lanes(kX, src[t], off, lanes);
              ve.fmadd(kSum, kX, kWeight + t);
            }
          }
          ve.store_lanes(dst, off, kSum, lanes);
        }, [&](int64_t b) {
          for (int t = 0; t < T; ++t) ve.add_imm(src[t], b);
          ve.add_imm(dst, b);
        });
        ve.add_imm(entry, entry_bytes);
      });
    }
    ve.add_imm(in, s.in_count * 4);
    ve.add_imm(out, s.out_count * 4);
  });
}

// x86's f32-transpose (x86/kernels_shape.cpp): transpose_plan()'s blocks, one scalar load and
// store per element (the emitter forms a displacement out of the immediate range
// in x16). x1 sample input, x2 sample output, x5 samples left, x10 matrices left, x3/x4 matrix
// input/output, x11 full blocks left, x12 steps left, x13/x8 block input/output, x6/x7 step
// input/output; v0 the element.
void emit_transpose(NeonEmitter& ve, const TransposeSpec& s) {
  constexpr int kX = 0;
  a64::Assembler& a = ve.as();
  regs::GpRoles g("f32-transpose");
  const a64::Gp args = g.role("args", regs::kArgs), in = g.role("sample input", regs::kIn);
  const a64::Gp out = g.role("sample output", regs::kOut), batch = g.role("samples left", regs::kN);
  const a64::Gp mats = g.role("matrices left", regs::kCi), mat_in = g.role("matrix input", regs::kW);
  const a64::Gp mat_out = g.role("matrix output", regs::kBias), blocks = g.role("full blocks left", regs::kRow);
  const a64::Gp steps = g.role("steps left", regs::kCol), blk_in = g.role("block input", regs::kWk);
  const a64::Gp blk_out = g.role("block output", regs::kKh), src = g.role("step input", regs::kPix);
  const a64::Gp dst = g.role("step output", regs::kOb);
  const TransposePlan p = transpose_plan(s);
  const auto block = [&](int64_t b) {
    a.mov(src, blk_in);
    a.mov(dst, blk_out);
    regs::counted_loop(ve, steps, p.long_n, [&] {
      for (int64_t k = 0; k < b; ++k) {
        ve.load_scalar(kX, src, k * p.in_k);
        ve.store_scalar(dst, k * p.out_k, kX);
      }
      ve.add_imm(src, p.in_step);
      ve.add_imm(dst, p.out_step);
    });
    ve.add_imm(blk_in, b * p.in_k);
    ve.add_imm(blk_out, b * p.out_k);
  };
  const auto matrix = [&] {
    a.mov(blk_in, mat_in);
    a.mov(blk_out, mat_out);
    if (p.full_blocks > 0) regs::counted_loop(ve, blocks, p.full_blocks, [&] { block(TransposePlan::kBlock); });
    if (p.rest > 0) block(p.rest);
    ve.add_imm(mat_in, p.matrix_bytes);
    ve.add_imm(mat_out, p.matrix_bytes);
  };
  a.ldr(in, a64::ptr(args, kArgsIn));
  a.ldr(in, a64::ptr(in, 0));
  a.ldr(out, a64::ptr(args, kArgsOut));
  a.ldr(batch, a64::ptr(args, kArgsBatch));
  regs::count_down_loop(ve, batch, Trips::samples(1), [&] {
    a.mov(mat_in, in);
    a.mov(mat_out, out);
    if (s.outer > 1) regs::counted_loop(ve, mats, s.outer, matrix);
    else matrix();
    ve.add_imm(in, s.outer * p.matrix_bytes);
    ve.add_imm(out, s.outer * p.matrix_bytes);
  });
}

}  // namespace nnd::jit::neon
