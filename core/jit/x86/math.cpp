// The fast-math kernels on x86 (see x86/math.h); the functions they evaluate are
// core/jit/generators/fast_math.h.
#include "core/jit/kernel_args.h"
#include "core/jit/x86/math.h"

#include <limits>

#include "core/jit/generators/fast_math.h"
#include "core/jit/x86/counted_loop_p.h"
#include "core/jit/x86/gp_roles_p.h"
#include "core/jit/x86/kernel_regs_p.h"
#include "core/jit/vec_reg_pool.h"

namespace nnd::jit {

using namespace regs;

namespace {

// Horizontal max/sum of v into all lanes via the vector scratch area (vec_scratch()); t free.
void hreduce(VecEmitter& ve, int v, int t, bool is_max) {
  const x86::Mem st = vec_scratch();
  ve.store(st, v);
  ve.load_scalar(v, st);
  for (int i = 1; i < ve.width(); ++i) {
    ve.load_scalar(t, vec_scratch(i * 4));
    if (is_max) ve.max(v, v, t);
    else ve.add(v, v, t);
  }
  ve.store_scalar(st, v);
  ve.broadcast(v, st);
}

// Register v's lanes [lanes, W) replaced by `fill` (via the stack); t free.
void pad_lanes(VecEmitter& ve, int v, int lanes, float fill, int t) {
  const x86::Mem st = vec_scratch();
  ve.load_const(t, fill);
  ve.store(st, t);
  ve.store_tail(st, v, lanes);
  ve.load(v, st);
}

}  // namespace

void emit_fast_unary(VecEmitter& ve, const FastUnarySpec& s) {
  x86::Assembler& a = ve.as();
  const int W = ve.width();
  GpRoles g("f32-fast-unary");
  const x86::Gp args = g.role("args", kArgs), in = g.role("input", kIn), out = g.role("output", kOut);
  const x86::Gp left = g.role("elements left", kN);
  VecRegPool pool(ve, "f32-fast-unary");
  const VecReg x = pool.take("x");
  const VecRegs temps = pool.take_array(8, "activation temporaries");
  int t[8];
  for (int i = 0; i < 8; ++i) t[i] = temps[i];
  a.mov(in, x86::qword_ptr(args, kArgsIn));
  a.mov(in, x86::qword_ptr(in, 0));
  a.mov(out, x86::qword_ptr(args, kArgsOut));
  a.mov(left, x86::qword_ptr(args, kArgsBatch));
  a.imul(left, left, i32(s.count));
  vector_then_scalar_loop(
      ve, left, W, Trips::samples(s.count),
      [&] {
        ve.load(x, x86::ptr(in));
        generators::fast_activation(ve, s.act, s.alpha, x, x, t);
        ve.store(x86::ptr(out), x);
        a.add(in, W * 4);
        a.add(out, W * 4);
      },
      [&] {
        ve.load_scalar(x, x86::ptr(in));
        generators::fast_activation(ve, s.act, s.alpha, x, x, t);
        ve.store_scalar(x86::ptr(out), x);
        a.add(in, 4);
        a.add(out, 4);
      });
}

void emit_fast_softmax(VecEmitter& ve, int64_t rows_per_sample, int64_t len) {
  static_assert(kStackBytes >= frame::kVecScratchBytes, "softmax uses the vector scratch area");
  x86::Assembler& a = ve.as();
  const int W = ve.width();
  const float ninf = -std::numeric_limits<float>::infinity();
  GpRoles g("f32-fast-softmax");
  const x86::Gp args = g.role("args", kArgs), in = g.role("row input", kIn), out = g.role("row output", kOut);
  const x86::Gp rows = g.role("rows left", kN), src = g.role("input", kRow), dst = g.role("output", kCol);
  g.clobbered_by("chunks", kChunksCounter);
  VecRegPool pool(ve, "f32-fast-softmax");
  const VecReg x = pool.take("x"), mx = pool.take("row maximum");
  // emit_exp's temporaries; the first two double as a load and a padding temporary.
  const VecRegs temps = pool.take_array(4, "exp temporaries");
  const int t[4] = {temps[0], temps[1], temps[2], temps[3]};
  const VecReg sum = pool.take(9, "row sum");  // 9 (6..8 free) is where the hand numbering put it
  a.mov(in, x86::qword_ptr(args, kArgsIn));
  a.mov(in, x86::qword_ptr(in, 0));
  a.mov(out, x86::qword_ptr(args, kArgsOut));
  a.mov(rows, x86::qword_ptr(args, kArgsBatch));
  a.imul(rows, rows, i32(rows_per_sample));
  auto adv = [&](int64_t b) {
    add_imm(a, src, b);
    add_imm(a, dst, b);
  };
  count_down_loop(ve, rows, Trips::samples(rows_per_sample), [&] {
    // Row maximum, in all lanes.
    a.mov(src, in);
    a.mov(dst, out);
    ve.load_const(mx, ninf);
    chunks(ve, len, 2, [&](int64_t off, int lanes) {
      if (lanes < W) {
        ve.load_tail(t[0], at(src, off), lanes);
        pad_lanes(ve, t[0], lanes, ninf, t[1]);
      } else {
        ve.load(t[0], at(src, off));
      }
      ve.max(mx, mx, t[0]);
    }, adv);
    hreduce(ve, mx, t[0], true);
    // exp(x - max) -> output, and their sum.
    a.mov(src, in);
    a.mov(dst, out);
    ve.zero(sum);
    chunks(ve, len, 2, [&](int64_t off, int lanes) {
      ve.load_lanes(x, at(src, off), lanes);
      ve.sub(x, x, mx);
      generators::fast_exp(ve, x, x, t);
      if (lanes < W) {
        ve.store_tail(at(dst, off), x, lanes);
        pad_lanes(ve, x, lanes, 0.0f, t[1]);
      } else {
        ve.store(at(dst, off), x);
      }
      ve.add(sum, sum, x);
    }, adv);
    hreduce(ve, sum, t[0], false);
    ve.load_const(t[0], 1.0f);
    ve.div(sum, t[0], sum);
    a.mov(dst, out);
    chunks(ve, len, 2, [&](int64_t off, int lanes) {
      ve.load_lanes(x, at(dst, off), lanes);
      ve.mul(x, x, sum);
      ve.store_lanes(at(dst, off), x, lanes);
    }, [&](int64_t b) { add_imm(a, dst, b); });
    add_imm(a, in, len * 4);
    add_imm(a, out, len * 4);
  });
}

}  // namespace nnd::jit
