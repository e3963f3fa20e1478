// Data movement, per-element parameter and LayerNormalization kernels (see x86/kernels_shape.h).
#include "core/jit/kernel_args.h"
#include "core/jit/x86/kernels_shape.h"

#include <algorithm>
#include <bit>
#include <functional>
#include <limits>
#include <string>

#include "core/jit/generators/activation.h"
#include "core/jit/generators/normalization.h"
#include "core/jit/vec_reg_pool.h"
#include "core/jit/x86/counted_loop_p.h"
#include "core/jit/x86/gp_roles_p.h"
#include "core/jit/x86/kernel_regs_p.h"
#include "core/util/error.h"

namespace nnd::jit {

using namespace regs;

void emit_gather(VecEmitter& ve, const GatherSpec& s) {
  x86::Assembler& a = ve.as();
  const int T = s.taps;
  GpRoles g("f32-gather");
  const x86::Gp args = g.role("args", kArgs), in = g.role("sample input", kIn), out = g.role("sample output", kOut);
  const x86::Gp table = g.role("run table", kW), batch = g.role("samples left", kN);
  const x86::Gp entry = g.role("run entry", kWk), runs = g.role("runs left", kCi), dst = g.role("run output", kCol);
  const x86::Gp src[4] = {g.role("tap 0 input", kRow), g.role("tap 1 input", kPix), g.role("tap 2 input", kOb),
                          g.role("tap 3 input", kBias)};
  g.clobbered_by("chunks", kChunksCounter);
  VecRegPool pool(ve, "f32-gather");
  const VecReg sum = pool.take("sum");
  const VecReg x = pool.take("tap input");
  // Registers 2 and 3 stay free: the tap weights sat at 4.. when the registers were numbered by hand.
  const VecRegs weight = pool.take_array(4, T, "tap weight");
  a.mov(in, x86::qword_ptr(args, kArgsIn));
  a.mov(in, x86::qword_ptr(in, 0));
  a.mov(out, x86::qword_ptr(args, kArgsOut));
  a.mov(table, x86::qword_ptr(args, kArgsWeights));
  add_imm(a, table, s.table_off * 4);
  a.mov(batch, x86::qword_ptr(args, kArgsBatch));
  count_down_loop(ve, batch, Trips::samples(1), [&] {
    if (s.zero_fill) {
      ve.zero(sum);
      a.mov(dst, out);
      chunks(ve, s.out_count, 4, [&](int64_t off, int lanes) { ve.store_lanes(at(dst, off), sum, lanes); },
             [&](int64_t b) { add_imm(a, dst, b); });
    }
    if (s.runs > 0) {
      const int64_t entry_bytes = run_entries(T) * 4;
      a.mov(entry, table);
      counted_loop(ve, runs, s.runs, [&] {
        for (int t = 0; t < T; ++t) {
          a.movsxd(src[t], x86::dword_ptr(entry, t * 4));
          a.lea(src[t], x86::ptr(in, src[t], 2));
        }
        a.movsxd(dst, x86::dword_ptr(entry, T * 4));
        a.lea(dst, x86::ptr(out, dst, 2));
        if (T > 1) {
          for (int t = 0; t < T; ++t) ve.broadcast(weight[t], x86::dword_ptr(entry, (T + 1 + t) * 4));
        }
        chunks(
            ve, s.len, 4,
            [&](int64_t off, int lanes) {
              ve.load_lanes(sum, at(src[0], off), lanes);
              if (T > 1) {
                ve.mul(sum, sum, weight[0]);
                for (int t = 1; t < T; ++t) {
                  ve.load_lanes(x, at(src[t], off), lanes);
                  ve.fmadd(sum, x, weight[t]);
                }
              }
              ve.store_lanes(at(dst, off), sum, lanes);
            },
            [&](int64_t b) {
              for (int t = 0; t < T; ++t) add_imm(a, src[t], b);
              add_imm(a, dst, b);
            });
        a.add(entry, i32(entry_bytes));
      });
    }
    add_imm(a, in, s.in_count * 4);
    add_imm(a, out, s.out_count * 4);
  });
}

// transpose_plan()'s blocks, one load and one store per element through a general-purpose register
// (no vector ISA to choose, no table to read).
void emit_transpose(VecEmitter& ve, const TransposeSpec& s) {
  x86::Assembler& a = ve.as();
  GpRoles g("f32-transpose");
  const x86::Gp args = g.role("args", kArgs), in = g.role("sample input", kIn), out = g.role("sample output", kOut);
  const x86::Gp batch = g.role("samples left", kN), mats = g.role("matrices left", kCi);
  const x86::Gp mat_in = g.role("matrix input", kW), mat_out = g.role("matrix output", kBias);
  const x86::Gp blocks = g.role("full blocks left", kRow), steps = g.role("steps left", kCol);
  const x86::Gp blk_in = g.role("block input", kWk), blk_out = g.role("block output", kKw);
  const x86::Gp src = g.role("step input", kPix), dst = g.role("step output", kOb);
  const x86::Gp value = g.role("element", kKh).r32();
  const TransposePlan p = transpose_plan(s);
  const auto block = [&](int64_t b) {
    a.mov(src, blk_in);
    a.mov(dst, blk_out);
    counted_loop(ve, steps, p.long_n, [&] {
      for (int64_t k = 0; k < b; ++k) {
        a.mov(value, x86::dword_ptr(src, i32(k * p.in_k)));
        a.mov(x86::dword_ptr(dst, i32(k * p.out_k)), value);
      }
      add_imm(a, src, p.in_step);
      add_imm(a, dst, p.out_step);
    });
    add_imm(a, blk_in, b * p.in_k);
    add_imm(a, blk_out, b * p.out_k);
  };
  const auto matrix = [&] {
    a.mov(blk_in, mat_in);
    a.mov(blk_out, mat_out);
    if (p.full_blocks > 0) counted_loop(ve, blocks, p.full_blocks, [&] { block(TransposePlan::kBlock); });
    if (p.rest > 0) block(p.rest);
    add_imm(a, mat_in, p.matrix_bytes);
    add_imm(a, mat_out, p.matrix_bytes);
  };
  a.mov(in, x86::qword_ptr(args, kArgsIn));
  a.mov(in, x86::qword_ptr(in, 0));
  a.mov(out, x86::qword_ptr(args, kArgsOut));
  a.mov(batch, x86::qword_ptr(args, kArgsBatch));
  count_down_loop(ve, batch, Trips::samples(1), [&] {
    a.mov(mat_in, in);
    a.mov(mat_out, out);
    if (s.outer > 1) counted_loop(ve, mats, s.outer, matrix);
    else matrix();
    add_imm(a, in, s.outer * p.matrix_bytes);
    add_imm(a, out, s.outer * p.matrix_bytes);
  });
}

void emit_param_elt(VecEmitter& ve, const ParamEltSpec& s) {
  x86::Assembler& a = ve.as();
  GpRoles g("f32-param-elt");
  const x86::Gp args = g.role("args", kArgs), in = g.role("input", kIn), out = g.role("output", kOut);
  const x86::Gp weights = g.role("weights", kW), batch = g.role("samples left", kN);
  const x86::Gp pa = g.role("a parameters", kWk), pb = g.role("b parameters", kPix);
  g.clobbered_by("chunks", kChunksCounter);
  VecRegPool pool(ve, "f32-param-elt");
  const VecReg x = pool.take("x"), pav = pool.take("a"), t = pool.take("t"), neg = pool.take("negative part");
  a.mov(in, x86::qword_ptr(args, kArgsIn));
  a.mov(in, x86::qword_ptr(in, 0));
  a.mov(out, x86::qword_ptr(args, kArgsOut));
  a.mov(weights, x86::qword_ptr(args, kArgsWeights));
  a.mov(batch, x86::qword_ptr(args, kArgsBatch));
  count_down_loop(ve, batch, Trips::samples(1), [&] {
    a.lea(pa, at(weights, s.a_off * 4));
    a.lea(pb, at(weights, s.b_off * 4));
    chunks(
        ve, s.count, 4,
        [&](int64_t off, int lanes) {
          ve.load_lanes(x, at(in, off), lanes);
          ve.load_lanes(pav, at(pa, off), lanes);
          generators::param_elt(ve, s.op, x, pav, t, neg, [&](int b) { ve.load_lanes(b, at(pb, off), lanes); });
          ve.store_lanes(at(out, off), x, lanes);
        },
        [&](int64_t b) {
          add_imm(a, in, b);
          add_imm(a, out, b);
          add_imm(a, pa, b);
          add_imm(a, pb, b);
        });
    add_imm(a, in, s.count * 4);
    add_imm(a, out, s.count * 4);
  });
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
  GpRoles g("f32-layernorm");
  const x86::Gp args = g.role("args", kArgs), in = g.role("group input", kIn), out = g.role("group output", kOut);
  const x86::Gp weights = g.role("weights", kW), groups = g.role("groups left", kN);
  const x86::Gp src = g.role("input", kRow), dst = g.role("output", kCol);
  const x86::Gp gamma = g.role("gamma", kWk), beta = g.role("beta", kPix);
  g.clobbered_by("chunks", kChunksCounter);
  VecRegPool pool(ve, "f32-layernorm");
  const VecReg mean = pool.take("mean"), x = pool.take("x"), inv_std = pool.take("1/std"), t = pool.take("t");
  a.mov(in, x86::qword_ptr(args, kArgsIn));
  a.mov(in, x86::qword_ptr(in, 0));
  a.mov(out, x86::qword_ptr(args, kArgsOut));
  a.mov(weights, x86::qword_ptr(args, kArgsWeights));
  a.mov(groups, x86::qword_ptr(args, kArgsBatch));
  a.imul(groups, groups, i32(s.groups));
  count_down_loop(ve, groups, Trips::samples(s.groups), [&] {
    auto adv_in = [&](int64_t b) { add_imm(a, src, b); };
    // Pass 1: the mean, in all lanes.
    a.mov(src, in);
    ve.zero(mean);
    chunks(
        ve, M, 4,
        [&](int64_t off, int lanes) {
          ve.load_lanes(x, at(src, off), lanes);
          ve.add(mean, mean, x);
        },
        adv_in);
    hsum(ve, mean, x);
    ve.load_const(x, static_cast<float>(M));
    ve.div(mean, mean, x);
    // Pass 2: the variance -> 1 / sqrt(var + eps). A tail's unused lanes must add nothing: the
    // centred values go through the zeroed scratch area.
    a.mov(src, in);
    ve.zero(inv_std);
    chunks(
        ve, M, 4,
        [&](int64_t off, int lanes) {
          if (lanes < ve.width()) {
            ve.zero(t);
            ve.store(vec_scratch(), t);
            ve.load_lanes(x, at(src, off), lanes);
            ve.sub(x, x, mean);
            ve.store_lanes(vec_scratch(), x, lanes);
            ve.load(x, vec_scratch());
          } else {
            ve.load(x, at(src, off));
            ve.sub(x, x, mean);
          }
          ve.fmadd(inv_std, x, x);
        },
        adv_in);
    hsum(ve, inv_std, x);
    generators::inverse_std(ve, inv_std, x, M, s.epsilon);
    // Pass 3: normalise, scale, shift.
    a.mov(src, in);
    a.mov(dst, out);
    a.lea(gamma, at(weights, std::max<int64_t>(s.gamma_off, 0) * 4));
    a.lea(beta, at(weights, std::max<int64_t>(s.beta_off, 0) * 4));
    chunks(
        ve, M, 4,
        [&](int64_t off, int lanes) {
          ve.load_lanes(x, at(src, off), lanes);
          ve.sub(x, x, mean);
          ve.mul(x, x, inv_std);
          if (s.gamma_off >= 0) {
            ve.load_lanes(t, at(gamma, off), lanes);
            ve.mul(x, x, t);
          }
          if (s.beta_off >= 0) {
            ve.load_lanes(t, at(beta, off), lanes);
            ve.add(x, x, t);
          }
          ve.store_lanes(at(dst, off), x, lanes);
        },
        [&](int64_t b) {
          add_imm(a, src, b);
          add_imm(a, dst, b);
          add_imm(a, gamma, b);
          add_imm(a, beta, b);
        });
    add_imm(a, in, M * 4);
    add_imm(a, out, M * 4);
  });
}

}  // namespace nnd::jit
