// The fast-math kernels on NEON: f32-fast-<act> and f32-fast-softmax, whose loops, tails
// (single-lane loads) and horizontal reductions (FMAXV, FADDP) are AArch64's own; the functions
// they evaluate are written once for every architecture in core/jit/generators/fast_math.h.
#include <limits>

#include "core/jit/arm64/neon_kernels.h"
#include "core/jit/arm64/regs_p.h"
#include "core/jit/generators/fast_math.h"
#include "core/jit/kernel_args.h"

namespace nnd::jit::neon {

namespace {

namespace a64 = asmjit::a64;
namespace regs = arm64::regs;
using arm64::NeonEmitter;

constexpr int kLanes = NeonEmitter::width();
a64::VecV vs(int v) { return NeonEmitter::s4(v); }
a64::VecV vq(int v) { return NeonEmitter::q(v); }
a64::VecS vsc(int v) { return NeonEmitter::scalar(v); }

}  // namespace

// x1 input, x2 output, x3 elements left; v0 the value, v1-v7 and v16 the activation's temporaries.
void emit_fast_unary(NeonEmitter& ve, const FastUnarySpec& s) {
  a64::Assembler& a = ve.as();
  const int t[8] = {1, 2, 3, 4, 5, 6, 7, 16};
  a.ldr(a64::x1, a64::ptr(a64::x0, kArgsIn));
  a.ldr(a64::x1, a64::ptr(a64::x1, 0));
  a.ldr(a64::x2, a64::ptr(a64::x0, kArgsOut));
  a.ldr(a64::x3, a64::ptr(a64::x0, kArgsBatch));
  ve.mul_imm(a64::x3, s.count);
  regs::vector_then_scalar_loop(
      ve, a64::x3, kLanes, Trips::samples(s.count),
      [&] {
        a.ldr(vq(0), a64::ptr_post(a64::x1, 16));
        generators::fast_activation(ve, s.act, s.alpha, 0, 0, t);
        a.str(vq(0), a64::ptr_post(a64::x2, 16));
      },
      [&] {
        a.ldr(vsc(0), a64::ptr_post(a64::x1, 4));  // lanes 1-3 zero: computed and dropped
        generators::fast_activation(ve, s.act, s.alpha, 0, 0, t);
        a.str(vsc(0), a64::ptr_post(a64::x2, 4));
      });
}

// Per row: the maximum, exp(x - max) into the output and its sum, then the output times 1 / sum.
// x1 / x2 the row's input / output, x3 rows left, x4 counter, x5 / x6 running pointers; v0 the
// value, v1-v4 exp's temporaries, v17 the row maximum, v18 the sum.
void emit_fast_softmax(NeonEmitter& ve, int64_t rows_per_sample, int64_t len) {
  a64::Assembler& a = ve.as();
  const int t[4] = {1, 2, 3, 4};
  constexpr int kMax = 17, kSum = 18;
  const int64_t nv = len / kLanes, tail = len % kLanes;
  a.ldr(a64::x1, a64::ptr(a64::x0, kArgsIn));
  a.ldr(a64::x1, a64::ptr(a64::x1, 0));
  a.ldr(a64::x2, a64::ptr(a64::x0, kArgsOut));
  a.ldr(a64::x3, a64::ptr(a64::x0, kArgsBatch));
  ve.mul_imm(a64::x3, rows_per_sample);
  regs::count_down_loop(ve, a64::x3, Trips::samples(rows_per_sample), [&] {
    // Row maximum: vectors, across lanes, then the tail's scalars.
    a.mov(a64::x5, a64::x1);
    ve.load_const(kMax, -std::numeric_limits<float>::infinity());
    regs::times_loop(ve, a64::x4, nv, [&] {
      a.ldr(vq(0), a64::ptr_post(a64::x5, 16));
      ve.max(kMax, kMax, 0);
    });
    a.fmaxv(vsc(kMax), vs(kMax));
    for (int64_t i = 0; i < tail; ++i) {
      a.ldr(vsc(0), a64::ptr_post(a64::x5, 4));
      a.fmax(vsc(kMax), vsc(kMax), vsc(0));
    }
    a.dup(vs(kMax), NeonEmitter::lane(kMax, 0));
    // exp(x - max) -> output, summed.
    a.mov(a64::x5, a64::x1);
    a.mov(a64::x6, a64::x2);
    ve.zero(kSum);
    regs::times_loop(ve, a64::x4, nv, [&] {
      a.ldr(vq(0), a64::ptr_post(a64::x5, 16));
      ve.sub(0, 0, kMax);
      generators::fast_exp(ve, 0, 0, t);
      a.str(vq(0), a64::ptr_post(a64::x6, 16));
      ve.add(kSum, kSum, 0);
    });
    ve.hsum(kSum, kSum);
    for (int64_t i = 0; i < tail; ++i) {
      a.ldr(vsc(0), a64::ptr_post(a64::x5, 4));
      ve.sub(0, 0, kMax);
      generators::fast_exp(ve, 0, 0, t);
      a.str(vsc(0), a64::ptr_post(a64::x6, 4));
      a.fadd(vsc(kSum), vsc(kSum), vsc(0));
    }
    a.dup(vs(kSum), NeonEmitter::lane(kSum, 0));
    ve.load_const(t[0], 1.0f);
    ve.div(kSum, t[0], kSum);
    // Scale the output row.
    a.mov(a64::x6, a64::x2);
    regs::times_loop(ve, a64::x4, nv, [&] {
      a.ldr(vq(0), a64::ptr(a64::x6));
      ve.mul(0, 0, kSum);
      a.str(vq(0), a64::ptr_post(a64::x6, 16));
    });
    for (int64_t i = 0; i < tail; ++i) {
      a.ldr(vsc(0), a64::ptr(a64::x6));
      a.fmul(vsc(0), vsc(0), vsc(kSum));
      a.str(vsc(0), a64::ptr_post(a64::x6, 4));
    }
    ve.add_imm(a64::x1, len * 4);
    ve.add_imm(a64::x2, len * 4);
  });
}

}  // namespace nnd::jit::neon
