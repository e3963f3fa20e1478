// Fast math on NEON: the algorithms and constants of x86/math.cpp (documented with their error
// bounds in x86/math.h), instruction for instruction where NEON has the same operation, so both
// architectures meet the same bounds. Rounding to an integer is FCVTNS (nearest, ties to even), as
// CVTPS2DQ under the default MXCSR; |x| is FABS.
#include <cmath>
#include <initializer_list>
#include <limits>
#include <string>
#include <utility>

#include "core/jit/arm64/neon_kernels.h"
#include "core/jit/arm64/regs_p.h"
#include "core/util/error.h"

namespace nnd::jit::neon {

namespace {

namespace a64 = asmjit::a64;
namespace regs = arm64::regs;
using arm64::NeonEmitter;

constexpr int kLanes = NeonEmitter::width();
a64::VecV vs(int v) { return NeonEmitter::s4(v); }
a64::VecV vq(int v) { return NeonEmitter::q(v); }
a64::VecS vsc(int v) { return NeonEmitter::scalar(v); }

// Polynomial in x with coefficients from the highest degree down (Horner, FMLA); a, b scratch.
// Returns the register holding the result (a or b).
int horner(NeonEmitter& ve, int x, std::initializer_list<float> coeffs, int r, int s) {
  auto it = coeffs.begin();
  ve.load_const(r, *it++);
  for (; it != coeffs.end(); ++it) {
    ve.load_const(s, *it);
    ve.fmadd(s, r, x);
    std::swap(r, s);
  }
  return r;
}

void emit_exp(NeonEmitter& ve, int d, int x, const int* t) {  // t[0..3]
  ve.load_const(t[0], 88.0f);
  ve.min(t[1], x, t[0]);
  ve.load_const(t[0], -87.0f);
  ve.max(t[1], t[1], t[0]);
  ve.load_const(t[0], 1.44269504088896341f);
  ve.mul(t[0], t[1], t[0]);
  ve.cvt_f2i(t[2], t[0]);  // n
  ve.cvt_i2f(t[0], t[2]);
  ve.load_const(t[3], 0.693359375f);
  ve.mul(t[3], t[3], t[0]);
  ve.sub(t[1], t[1], t[3]);
  ve.load_const(t[3], -2.12194440e-4f);
  ve.mul(t[3], t[3], t[0]);
  ve.sub(t[1], t[1], t[3]);  // r
  const int p = horner(ve, t[1],
                       {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f, 4.1665795894e-2f, 1.6666665459e-1f,
                        5.0000001201e-1f},
                       t[3], t[0]);
  const int q = p == t[3] ? t[0] : t[3];
  ve.mul(p, p, t[1]);
  ve.mul(p, p, t[1]);
  ve.add(p, p, t[1]);
  ve.load_const(q, 1.0f);
  ve.add(p, p, q);
  ve.load_const_u32(q, {127u, 127u, 127u, 127u});
  ve.add_i32(t[2], t[2], q);
  ve.shl_i32(t[2], t[2], 23);
  ve.mul(d, p, t[2]);
}

void emit_tanh(NeonEmitter& ve, int d, int x, const int* t) {  // t[0..3], d != t
  constexpr float kClamp = 7.90531110763549805f;
  ve.load_const(t[1], kClamp);
  ve.min(t[0], x, t[1]);
  ve.load_const(t[1], -kClamp);
  ve.max(t[0], t[0], t[1]);
  ve.mul(t[1], t[0], t[0]);
  const int p = horner(ve, t[1],
                       {-2.76076847742355e-16f, 2.00018790482477e-13f, -8.60467152213735e-11f, 5.12229709037114e-08f,
                        1.48572235717979e-05f, 6.37261928875436e-04f, 4.89352455891786e-03f},
                       t[2], t[3]);
  ve.mul(d, p, t[0]);
  const int q = horner(ve, t[1], {1.19825839466702e-06f, 1.18534705686654e-04f, 2.26843463243900e-03f,
                                 4.89352518554385e-03f},
                       t[2], t[3]);
  ve.div(d, d, q);
}

void emit_sigmoid(NeonEmitter& ve, int d, int x, const int* t) {  // t[0..4]
  ve.as().fneg(vs(t[4]), vs(x));
  emit_exp(ve, t[4], t[4], t);
  ve.load_const(t[0], 1.0f);
  ve.add(t[4], t[4], t[0]);
  ve.div(d, t[0], t[4]);
}

void softplus(NeonEmitter& ve, int d, int x, const int* t) {  // t[0..5]
  ve.as().fabs(vs(t[4]), vs(x));
  ve.as().fneg(vs(t[4]), vs(t[4]));
  emit_exp(ve, t[4], t[4], t);  // e = exp(-|x|)
  ve.load_const(t[5], 2.0f);
  ve.add(t[5], t[5], t[4]);
  ve.div(t[4], t[4], t[5]);  // s = e / (2 + e)
  ve.mul(t[5], t[4], t[4]);
  const int p = horner(ve, t[5],
                       {1.0f / 15, 1.0f / 13, 1.0f / 11, 1.0f / 9, 1.0f / 7, 1.0f / 5, 1.0f / 3, 1.0f}, t[0], t[1]);
  ve.mul(p, p, t[4]);
  ve.add(p, p, p);  // log1p(e) = 2 atanh(s)
  ve.zero(t[5]);
  ve.max(t[5], x, t[5]);
  ve.add(d, t[5], p);
}

// d = alpha * expm1(min(x, 0)) + max(x, 0), expm1(y) = 2t / (1 - t), t = tanh(y / 2).
void elu(NeonEmitter& ve, int d, int x, float alpha, const int* t) {  // t[0..5]
  ve.zero(t[4]);
  ve.min(t[4], x, t[4]);
  ve.load_const(t[5], 0.5f);
  ve.mul(t[4], t[4], t[5]);
  emit_tanh(ve, t[4], t[4], t);
  ve.load_const(t[5], 1.0f);
  ve.sub(t[5], t[5], t[4]);
  ve.add(t[4], t[4], t[4]);
  ve.div(t[4], t[4], t[5]);
  ve.load_const(t[5], alpha);
  ve.mul(t[4], t[4], t[5]);
  ve.zero(t[5]);
  ve.max(t[5], x, t[5]);
  ve.add(d, t[5], t[4]);
}

}  // namespace

void emit_activation_fast(NeonEmitter& ve, ActivationKind k, float alpha, int d, int x, const int* t) {
  using K = ActivationKind;
  switch (k) {
    case K::kExponential: emit_exp(ve, d, x, t); break;
    case K::kSigmoid: emit_sigmoid(ve, d, x, t); break;
    case K::kTanh: emit_tanh(ve, d, x, t); break;
    case K::kSwish:
      emit_sigmoid(ve, t[5], x, t);
      ve.mul(d, x, t[5]);
      break;
    case K::kSoftplus: softplus(ve, d, x, t); break;
    case K::kElu: elu(ve, d, x, alpha, t); break;
    case K::kSelu:
      elu(ve, d, x, 1.67326324235437728f, t);
      ve.load_const(t[5], 1.05070098735548049f);
      ve.mul(d, d, t[5]);
      break;
    case K::kGeluTanh:
      ve.mul(t[5], x, x);
      ve.mul(t[5], t[5], x);
      ve.load_const(t[6], 0.044715f);
      ve.mul(t[5], t[5], t[6]);
      ve.add(t[5], t[5], x);
      ve.load_const(t[6], static_cast<float>(2.0 * std::sqrt(2.0 / M_PI)));
      ve.mul(t[5], t[5], t[6]);
      emit_sigmoid(ve, t[5], t[5], t);
      ve.mul(d, x, t[5]);
      break;
    case K::kGeluErf: {
      ve.as().fabs(vs(t[5]), vs(x));
      ve.load_const(t[6], static_cast<float>(1.0 / std::sqrt(2.0)));
      ve.mul(t[6], t[5], t[6]);  // z = |x| / sqrt 2
      ve.load_const(t[4], 0.5f);
      ve.mul(t[7], t[6], t[4]);
      ve.load_const(t[4], 1.0f);
      ve.add(t[7], t[7], t[4]);
      ve.div(t[7], t[4], t[7]);  // u = 1 / (1 + z / 2)
      const int p = horner(ve, t[7],
                           {0.17087277f, -0.82215223f, 1.48851587f, -1.13520398f, 0.27886807f, -0.18628806f,
                            0.09678418f, 0.37409196f, 1.00002368f, -1.26551223f},
                           t[0], t[1]);
      ve.mul(t[6], t[6], t[6]);
      ve.sub(t[4], p, t[6]);
      emit_exp(ve, t[4], t[4], t);
      ve.mul(t[4], t[4], t[7]);  // erfc(z)
      ve.load_const(t[6], 0.5f);
      ve.mul(t[4], t[4], t[6]);  // c = Phi(-|x|)
      ve.mul(t[4], t[4], t[5]);
      ve.zero(t[6]);
      ve.max(t[6], x, t[6]);
      ve.sub(d, t[6], t[4]);
      break;
    }
    case K::kMish:
      softplus(ve, t[6], x, t);
      emit_tanh(ve, t[6], t[6], t);
      ve.mul(d, x, t[6]);
      break;
    default:
      throw Error(ErrorCode::kInternal, std::string("JIT fast math (NEON): no vectorised form of ") + activation_name(k));
  }
}

// x1 input, x2 output, x3 elements left; v0 the value, v1-v7 and v16 the activation's temporaries.
void emit_fast_unary(NeonEmitter& ve, const FastUnarySpec& s) {
  a64::Assembler& a = ve.as();
  const int t[8] = {1, 2, 3, 4, 5, 6, 7, 16};
  a.ldr(a64::x1, a64::ptr(a64::x0, 0));
  a.ldr(a64::x1, a64::ptr(a64::x1, 0));
  a.ldr(a64::x2, a64::ptr(a64::x0, 8));
  a.ldr(a64::x3, a64::ptr(a64::x0, 24));
  ve.mul_imm(a64::x3, s.count);
  regs::vector_then_scalar_loop(
      ve, a64::x3, kLanes, Trips::samples(s.count),
      [&] {
        a.ldr(vq(0), a64::ptr_post(a64::x1, 16));
        emit_activation_fast(ve, s.act, s.alpha, 0, 0, t);
        a.str(vq(0), a64::ptr_post(a64::x2, 16));
      },
      [&] {
        a.ldr(vsc(0), a64::ptr_post(a64::x1, 4));  // lanes 1-3 zero: computed and dropped
        emit_activation_fast(ve, s.act, s.alpha, 0, 0, t);
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
  a.ldr(a64::x1, a64::ptr(a64::x0, 0));
  a.ldr(a64::x1, a64::ptr(a64::x1, 0));
  a.ldr(a64::x2, a64::ptr(a64::x0, 8));
  a.ldr(a64::x3, a64::ptr(a64::x0, 24));
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
      emit_exp(ve, 0, 0, t);
      a.str(vq(0), a64::ptr_post(a64::x6, 16));
      ve.add(kSum, kSum, 0);
    });
    ve.hsum(kSum, kSum);
    for (int64_t i = 0; i < tail; ++i) {
      a.ldr(vsc(0), a64::ptr_post(a64::x5, 4));
      ve.sub(0, 0, kMax);
      emit_exp(ve, 0, 0, t);
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
