// The NEON element-wise and data-movement generators (arm64/kernels.h): the x86 generators'
// loops (x86/kernels.cpp, x86/kernels_shape.cpp) over NeonEmitter's hooks.
#include <algorithm>
#include <string>
#include <vector>

#include "core/ir/activation.h"
#include "core/jit/arm64/kernels.h"
#include "core/jit/arm64/regs_p.h"
#include "core/jit/generators/activation.h"
#include "core/jit/kernel_args.h"
#include "core/util/error.h"

namespace nnd::jit::arm64 {

using namespace regs;
using asmjit::Label;

namespace {

// Loads the kernel's first input pointer, output pointer and batch.
void load_io(NeonEmitter& ve, const a64::Gp& in, const a64::Gp& out, const a64::Gp& batch) {
  a64::Assembler& a = ve.as();
  a.ldr(in, a64::ptr(kArgs, kArgsIn));
  a.ldr(in, a64::ptr(in, 0));
  a.ldr(out, a64::ptr(kArgs, kArgsOut));
  a.ldr(batch, a64::ptr(kArgs, kArgsBatch));
}

// Stores register v to count floats at [p], advancing p (counter kKh).
void emit_fill(NeonEmitter& ve, const a64::Gp& p, int64_t count, int v) {
  const int64_t full = count / 4, tail = count % 4;
  if (full > 4) {
    counted_loop(ve, kKh, full, [&] {
      ve.store(p, 0, v);
      ve.add_imm(p, 16);
    });
  } else {
    for (int64_t i = 0; i < full; ++i) ve.store(p, i * 16, v);
    ve.add_imm(p, full * 16);
  }
  if (tail > 0) {
    ve.store_tail(p, 0, v, static_cast<int>(tail));
    ve.add_imm(p, tail * 4);
  }
}

// Copies count floats from [src] to [dst], advancing both (vector register v, counter kKh).
void emit_copy(NeonEmitter& ve, const a64::Gp& dst, const a64::Gp& src, int64_t count, int v) {
  const int64_t full = count / 4, tail = count % 4;
  if (full > 4) {
    counted_loop(ve, kKh, full, [&] {
      ve.load(v, src, 0);
      ve.store(dst, 0, v);
      ve.add_imm(src, 16);
      ve.add_imm(dst, 16);
    });
  } else {
    for (int64_t i = 0; i < full; ++i) {
      ve.load(v, src, i * 16);
      ve.store(dst, i * 16, v);
    }
    ve.add_imm(src, full * 16);
    ve.add_imm(dst, full * 16);
  }
  if (tail > 0) {
    ve.load_tail(v, src, 0, static_cast<int>(tail));
    ve.store_tail(dst, 0, v, static_cast<int>(tail));
    ve.add_imm(src, tail * 4);
    ve.add_imm(dst, tail * 4);
  }
}

}  // namespace

void emit_pad(NeonEmitter& ve, const PadSpec& s) {
  const int64_t cd = s.c * s.dm, wp = s.w + s.left + s.right;
  GpRoles g("f32-pad");
  const a64::Gp in = g.role("input", kIn), out = g.role("output", kOut), samples = g.role("samples left", kN);
  const a64::Gp rows = g.role("rows left", kOh), cols = g.role("columns left", kCi);
  (void)g.role("args", kArgs);
  (void)g.role("emit_fill/emit_copy counter", kKh);
  const int fill = 0, x = 1;
  load_io(ve, in, out, samples);
  ve.load_const(fill, s.value);
  count_down_loop(ve, samples, Trips::samples(1), [&] {
    emit_fill(ve, out, s.top * wp * cd, fill);
    counted_loop(ve, rows, s.h, [&] {
      emit_fill(ve, out, s.left * cd, fill);
      if (s.border_only) {
        ve.add_imm(out, s.w * s.c * 4);  // the producer's interior row
      } else if (s.dm == 1) {
        emit_copy(ve, out, in, s.w * s.c, x);
      } else {
        counted_loop(ve, cols, s.w, [&] {
          for (int64_t c = 0; c < s.c; ++c) {
            ve.broadcast(x, in, c * 4);
            for (int64_t j = 0; j < s.dm; j += 4) {
              ve.store_lanes(out, (c * s.dm + j) * 4, x, static_cast<int>(std::min<int64_t>(4, s.dm - j)));
            }
          }
          ve.add_imm(in, s.c * 4);
          ve.add_imm(out, cd * 4);
        });
      }
      emit_fill(ve, out, s.right * cd, fill);
    });
    emit_fill(ve, out, s.bottom * wp * cd, fill);
  });
}

void emit_unary(NeonEmitter& ve, const UnarySpec& s) {
  const int64_t esize = s.u8 ? 1 : 4;
  GpRoles g(s.channels > 0 ? "f32-affine" : "f32-unary");
  const a64::Gp in = g.role("input", kIn), out = g.role("output", kOut), left = g.role("elements left", kN);
  (void)g.role("args", kArgs);
  const int x = 0, t = 1, u = 2;
  load_io(ve, in, out, left);
  if (s.channels > 0) {
    // Per-channel affine, then the activation; one position (C floats) per iteration.
    const a64::Gp scale = g.role("scale", kW), shift = g.role("shift", kBias);
    const int64_t C = s.channels, positions = s.count / C;
    ve.as().ldr(scale, a64::ptr(kArgs, kArgsWeights));
    ve.add_imm(shift, scale, s.shift_off * 4);
    ve.add_imm(scale, s.scale_off * 4);
    ve.mul_imm(left, positions);
    count_down_loop(ve, left, Trips::samples(positions), [&] {
      for (int64_t j = 0; j < C; j += 4) {
        const int lanes = static_cast<int>(std::min<int64_t>(4, C - j));
        ve.load_lanes(x, in, j * 4, lanes);
        ve.load(t, scale, j * 4);
        ve.mul(x, x, t);
        ve.load(t, shift, j * 4);
        ve.add(x, x, t);
        generators::unary_activation(ve, s, x, t, u);
        ve.store_lanes(out, j * 4, x, lanes);
      }
      ve.add_imm(in, C * 4);
      ve.add_imm(out, C * 4);
    });
    return;
  }
  ve.mul_imm(left, s.count);
  vector_then_scalar_loop(
      ve, left, 4, Trips::samples(s.count),
      [&] {
        if (s.u8) ve.load_u8(x, in, 0);
        else ve.load(x, in, 0);
        generators::unary_activation(ve, s, x, t, u);
        ve.store(out, 0, x);
        ve.add_imm(in, 4 * esize);
        ve.add_imm(out, 16);
      },
      [&] {
        if (s.u8) ve.load_u8_scalar(x, in, 0);
        else ve.load_scalar(x, in, 0);
        generators::unary_activation(ve, s, x, t, u);
        ve.store_scalar(out, 0, x);
        ve.add_imm(in, esize);
        ve.add_imm(out, 4);
      });
}

// A call into C++ (AAPCS64), the kernel's last action: helper(out, in, batch * count, params) in
// x0..x3, the function from the table in KernelArgs::helpers. x0 (the args) is read last.
void emit_helper_call(NeonEmitter& ve, int helper_index, int64_t count, int64_t params_off) {
  a64::Assembler& a = ve.as();
  a.ldr(kHookAddr, a64::ptr(kArgs, kArgsHelpers));
  a.ldr(kHookAddr, a64::ptr(kHookAddr, helper_index * 8));
  a.ldr(a64::x3, a64::ptr(kArgs, kArgsWeights));
  ve.add_imm(a64::x3, params_off * 4);
  a.ldr(a64::x2, a64::ptr(kArgs, kArgsBatch));
  ve.mul_imm(a64::x2, count);
  a.ldr(a64::x1, a64::ptr(kArgs, kArgsIn));
  a.ldr(a64::x1, a64::ptr(a64::x1, 0));
  a.ldr(a64::x0, a64::ptr(kArgs, kArgsOut));
  a.blr(kHookAddr);
}

void emit_concat(NeonEmitter& ve, int64_t outer, const std::vector<int64_t>& inner) {
  a64::Assembler& a = ve.as();
  GpRoles g("f32-concat");
  const a64::Gp table = g.role("input table", kW), out = g.role("output", kOut), count = g.role("outer count", kN);
  const a64::Gp i_outer = g.role("outer index", kCi), src = g.role("input", kRow), off = g.role("input offset", kCol);
  (void)g.role("args", kArgs);
  (void)g.role("emit_copy counter", kKh);
  const int x = 0;
  a.ldr(table, a64::ptr(kArgs, kArgsIn));
  a.ldr(out, a64::ptr(kArgs, kArgsOut));
  a.ldr(count, a64::ptr(kArgs, kArgsBatch));
  ve.mul_imm(count, outer);
  a.mov(i_outer, 0);
  Label l = a.newLabel();
  a.bind(l);
  RecordedRegion region(ve, Trips::samples(outer));
  for (size_t i = 0; i < inner.size(); ++i) {
    a.ldr(src, a64::ptr(table, static_cast<int32_t>(i * 8)));
    ve.mov_imm(off, inner[i] * 4);
    a.mul(off, off, i_outer);
    a.add(src, src, off);
    emit_copy(ve, out, src, inner[i], x);
  }
  a.add(i_outer, i_outer, 1);
  a.cmp(i_outer, count);
  a.b_lo(l);
}

void emit_position_scale(NeonEmitter& ve, int64_t positions, int64_t channels, int64_t map_off) {
  GpRoles g("f32-position-scale");
  const a64::Gp in = g.role("input", kIn), out = g.role("output", kOut), samples = g.role("samples left", kN);
  const a64::Gp map = g.role("scale map", kW), scale = g.role("position's scale", kWk), left = g.role("positions left", kCi);
  (void)g.role("args", kArgs);
  const int x = 0, k = 1;
  load_io(ve, in, out, samples);
  ve.as().ldr(map, a64::ptr(kArgs, kArgsWeights));
  ve.add_imm(map, map_off * 4);
  count_down_loop(ve, samples, Trips::samples(1), [&] {
    ve.as().mov(scale, map);
    counted_loop(ve, left, positions, [&] {
      ve.broadcast(k, scale, 0);
      for (int64_t j = 0; j < channels; j += 4) {
        const int lanes = static_cast<int>(std::min<int64_t>(4, channels - j));
        ve.load_lanes(x, in, j * 4, lanes);
        ve.mul(x, x, k);
        ve.store_lanes(out, j * 4, x, lanes);
      }
      ve.add_imm(in, channels * 4);
      ve.add_imm(out, channels * 4);
      ve.add_imm(scale, 4);
    });
  });
}

void emit_param_elt(NeonEmitter& ve, const ParamEltSpec& s) {
  GpRoles g("f32-param-elt");
  const a64::Gp in = g.role("input", kIn), out = g.role("output", kOut), batch = g.role("samples left", kN);
  const a64::Gp pa = g.role("a parameters", kWk), pb = g.role("b parameters", kPix), weights = g.role("weights", kW);
  const a64::Gp left = g.role("vectors left", kKh);
  (void)g.role("args", kArgs);
  const int x = 0, av = 1, t = 2, neg = 3;
  load_io(ve, in, out, batch);
  ve.as().ldr(weights, a64::ptr(kArgs, kArgsWeights));
  auto body = [&](int lanes) {
    ve.load_lanes(x, in, 0, lanes);
    ve.load_lanes(av, pa, 0, lanes);
    generators::param_elt(ve, s.op, x, av, t, neg, [&](int b) { ve.load_lanes(b, pb, 0, lanes); });
    ve.store_lanes(out, 0, x, lanes);
    ve.add_imm(in, lanes * 4);
    ve.add_imm(out, lanes * 4);
    ve.add_imm(pa, lanes * 4);
    ve.add_imm(pb, lanes * 4);
  };
  count_down_loop(ve, batch, Trips::samples(1), [&] {
    ve.add_imm(pa, weights, s.a_off * 4);
    ve.add_imm(pb, weights, s.b_off * 4);
    const int64_t full = s.count / 4;
    const int tail = static_cast<int>(s.count % 4);
    if (full > 0) counted_loop(ve, left, full, [&] { body(4); });
    if (tail > 0) body(tail);
  });
}

}  // namespace nnd::jit::arm64
