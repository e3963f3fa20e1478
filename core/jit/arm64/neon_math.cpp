// Fast math on NEON: the algorithms and constants of x86/math.cpp (documented with their error
// bounds in x86/math.h), instruction for instruction where NEON has the same operation, so both
// architectures meet the same bounds. Rounding to an integer is FCVTNS (nearest, ties to even), as
// CVTPS2DQ under the default MXCSR; |x| is FABS.
#include <cmath>
#include <initializer_list>
#include <limits>
#include <string>
#include <utility>

#include "core/jit/arm64/neon_asm_p.h"
#include "core/jit/arm64/neon_kernels.h"
#include "core/util/error.h"

namespace nnd::jit::neon {

namespace {

// Polynomial in x with coefficients from the highest degree down (Horner, FMLA); a, b scratch.
// Returns the register holding the result (a or b).
int horner(a64::Assembler& a, int x, std::initializer_list<float> coeffs, int r, int s) {
  auto it = coeffs.begin();
  dup_const(a, r, *it++);
  for (; it != coeffs.end(); ++it) {
    dup_const(a, s, *it);
    a.fmla(vs(s), vs(r), vs(x));
    std::swap(r, s);
  }
  return r;
}

void fmul(a64::Assembler& a, int d, int x, int y) { a.fmul(vs(d), vs(x), vs(y)); }
void fadd(a64::Assembler& a, int d, int x, int y) { a.fadd(vs(d), vs(x), vs(y)); }
void fsub(a64::Assembler& a, int d, int x, int y) { a.fsub(vs(d), vs(x), vs(y)); }
void fdiv(a64::Assembler& a, int d, int x, int y) { a.fdiv(vs(d), vs(x), vs(y)); }
void fmax(a64::Assembler& a, int d, int x, int y) { a.fmax(vs(d), vs(x), vs(y)); }
void fmin(a64::Assembler& a, int d, int x, int y) { a.fmin(vs(d), vs(x), vs(y)); }
void zero(a64::Assembler& a, int d) { a.movi(vs(d), 0); }

void emit_exp(a64::Assembler& a, int d, int x, const int* t) {  // t[0..3]
  dup_const(a, t[0], 88.0f);
  fmin(a, t[1], x, t[0]);
  dup_const(a, t[0], -87.0f);
  fmax(a, t[1], t[1], t[0]);
  dup_const(a, t[0], 1.44269504088896341f);
  fmul(a, t[0], t[1], t[0]);
  a.fcvtns(vs(t[2]), vs(t[0]));  // n
  a.scvtf(vs(t[0]), vs(t[2]));
  dup_const(a, t[3], 0.693359375f);
  fmul(a, t[3], t[3], t[0]);
  fsub(a, t[1], t[1], t[3]);
  dup_const(a, t[3], -2.12194440e-4f);
  fmul(a, t[3], t[3], t[0]);
  fsub(a, t[1], t[1], t[3]);  // r
  const int p = horner(a, t[1],
                       {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f, 4.1665795894e-2f, 1.6666665459e-1f,
                        5.0000001201e-1f},
                       t[3], t[0]);
  const int q = p == t[3] ? t[0] : t[3];
  fmul(a, p, p, t[1]);
  fmul(a, p, p, t[1]);
  fadd(a, p, p, t[1]);
  dup_const(a, q, 1.0f);
  fadd(a, p, p, q);
  dup_u32(a, q, 127u);
  a.add(vs(t[2]), vs(t[2]), vs(q));
  a.shl(vs(t[2]), vs(t[2]), 23);
  fmul(a, d, p, t[2]);
}

void emit_tanh(a64::Assembler& a, int d, int x, const int* t) {  // t[0..3], d != t
  constexpr float kClamp = 7.90531110763549805f;
  dup_const(a, t[1], kClamp);
  fmin(a, t[0], x, t[1]);
  dup_const(a, t[1], -kClamp);
  fmax(a, t[0], t[0], t[1]);
  fmul(a, t[1], t[0], t[0]);
  const int p = horner(a, t[1],
                       {-2.76076847742355e-16f, 2.00018790482477e-13f, -8.60467152213735e-11f, 5.12229709037114e-08f,
                        1.48572235717979e-05f, 6.37261928875436e-04f, 4.89352455891786e-03f},
                       t[2], t[3]);
  fmul(a, d, p, t[0]);
  const int q = horner(a, t[1], {1.19825839466702e-06f, 1.18534705686654e-04f, 2.26843463243900e-03f,
                                 4.89352518554385e-03f},
                       t[2], t[3]);
  fdiv(a, d, d, q);
}

void emit_sigmoid(a64::Assembler& a, int d, int x, const int* t) {  // t[0..4]
  a.fneg(vs(t[4]), vs(x));
  emit_exp(a, t[4], t[4], t);
  dup_const(a, t[0], 1.0f);
  fadd(a, t[4], t[4], t[0]);
  fdiv(a, d, t[0], t[4]);
}

void softplus(a64::Assembler& a, int d, int x, const int* t) {  // t[0..5]
  a.fabs(vs(t[4]), vs(x));
  a.fneg(vs(t[4]), vs(t[4]));
  emit_exp(a, t[4], t[4], t);  // e = exp(-|x|)
  dup_const(a, t[5], 2.0f);
  fadd(a, t[5], t[5], t[4]);
  fdiv(a, t[4], t[4], t[5]);  // s = e / (2 + e)
  fmul(a, t[5], t[4], t[4]);
  const int p = horner(a, t[5],
                       {1.0f / 15, 1.0f / 13, 1.0f / 11, 1.0f / 9, 1.0f / 7, 1.0f / 5, 1.0f / 3, 1.0f}, t[0], t[1]);
  fmul(a, p, p, t[4]);
  fadd(a, p, p, p);  // log1p(e) = 2 atanh(s)
  zero(a, t[5]);
  fmax(a, t[5], x, t[5]);
  fadd(a, d, t[5], p);
}

// d = alpha * expm1(min(x, 0)) + max(x, 0), expm1(y) = 2t / (1 - t), t = tanh(y / 2).
void elu(a64::Assembler& a, int d, int x, float alpha, const int* t) {  // t[0..5]
  zero(a, t[4]);
  fmin(a, t[4], x, t[4]);
  dup_const(a, t[5], 0.5f);
  fmul(a, t[4], t[4], t[5]);
  emit_tanh(a, t[4], t[4], t);
  dup_const(a, t[5], 1.0f);
  fsub(a, t[5], t[5], t[4]);
  fadd(a, t[4], t[4], t[4]);
  fdiv(a, t[4], t[4], t[5]);
  dup_const(a, t[5], alpha);
  fmul(a, t[4], t[4], t[5]);
  zero(a, t[5]);
  fmax(a, t[5], x, t[5]);
  fadd(a, d, t[5], t[4]);
}

}  // namespace

void emit_activation_fast(a64::Assembler& a, ActivationKind k, float alpha, int d, int x, const int* t) {
  using K = ActivationKind;
  switch (k) {
    case K::kExponential: emit_exp(a, d, x, t); break;
    case K::kSigmoid: emit_sigmoid(a, d, x, t); break;
    case K::kTanh: emit_tanh(a, d, x, t); break;
    case K::kSwish:
      emit_sigmoid(a, t[5], x, t);
      fmul(a, d, x, t[5]);
      break;
    case K::kSoftplus: softplus(a, d, x, t); break;
    case K::kElu: elu(a, d, x, alpha, t); break;
    case K::kSelu:
      elu(a, d, x, 1.67326324235437728f, t);
      dup_const(a, t[5], 1.05070098735548049f);
      fmul(a, d, d, t[5]);
      break;
    case K::kGeluTanh:
      fmul(a, t[5], x, x);
      fmul(a, t[5], t[5], x);
      dup_const(a, t[6], 0.044715f);
      fmul(a, t[5], t[5], t[6]);
      fadd(a, t[5], t[5], x);
      dup_const(a, t[6], static_cast<float>(2.0 * std::sqrt(2.0 / M_PI)));
      fmul(a, t[5], t[5], t[6]);
      emit_sigmoid(a, t[5], t[5], t);
      fmul(a, d, x, t[5]);
      break;
    case K::kGeluErf: {
      a.fabs(vs(t[5]), vs(x));
      dup_const(a, t[6], static_cast<float>(1.0 / std::sqrt(2.0)));
      fmul(a, t[6], t[5], t[6]);  // z = |x| / sqrt 2
      dup_const(a, t[4], 0.5f);
      fmul(a, t[7], t[6], t[4]);
      dup_const(a, t[4], 1.0f);
      fadd(a, t[7], t[7], t[4]);
      fdiv(a, t[7], t[4], t[7]);  // u = 1 / (1 + z / 2)
      const int p = horner(a, t[7],
                           {0.17087277f, -0.82215223f, 1.48851587f, -1.13520398f, 0.27886807f, -0.18628806f,
                            0.09678418f, 0.37409196f, 1.00002368f, -1.26551223f},
                           t[0], t[1]);
      fmul(a, t[6], t[6], t[6]);
      fsub(a, t[4], p, t[6]);
      emit_exp(a, t[4], t[4], t);
      fmul(a, t[4], t[4], t[7]);  // erfc(z)
      dup_const(a, t[6], 0.5f);
      fmul(a, t[4], t[4], t[6]);  // c = Phi(-|x|)
      fmul(a, t[4], t[4], t[5]);
      zero(a, t[6]);
      fmax(a, t[6], x, t[6]);
      fsub(a, d, t[6], t[4]);
      break;
    }
    case K::kMish:
      softplus(a, t[6], x, t);
      emit_tanh(a, t[6], t[6], t);
      fmul(a, d, x, t[6]);
      break;
    default:
      throw Error(ErrorCode::kInternal, std::string("JIT fast math (NEON): no vectorised form of ") + activation_name(k));
  }
}

// x1 input, x2 output, x3 elements, x4 vector / scalar counter; v0 the value, v1-v7 and v16 the
// activation's temporaries.
void emit_fast_unary(a64::Assembler& a, const FastUnarySpec& s) {
  const int t[8] = {1, 2, 3, 4, 5, 6, 7, 16};
  a.ldr(a64::x1, a64::ptr(a64::x0, 0));
  a.ldr(a64::x1, a64::ptr(a64::x1, 0));
  a.ldr(a64::x2, a64::ptr(a64::x0, 8));
  a.ldr(a64::x3, a64::ptr(a64::x0, 24));
  mov_imm(a, a64::x4, s.count);
  a.mul(a64::x3, a64::x3, a64::x4);
  Label vec_done = a.newLabel(), vec_top = a.newLabel(), done = a.newLabel(), tail_top = a.newLabel();
  a.lsr(a64::x4, a64::x3, 2);
  a.cbz(a64::x4, vec_done);
  a.bind(vec_top);
  a.ldr(vq(0), a64::ptr_post(a64::x1, 16));
  emit_activation_fast(a, s.act, s.alpha, 0, 0, t);
  a.str(vq(0), a64::ptr_post(a64::x2, 16));
  a.subs(a64::x4, a64::x4, 1);
  a.b_ne(vec_top);
  a.bind(vec_done);
  a.and_(a64::x4, a64::x3, 3);
  a.cbz(a64::x4, done);
  a.bind(tail_top);
  a.ldr(vsc(0), a64::ptr_post(a64::x1, 4));  // lanes 1-3 zero: computed and dropped
  emit_activation_fast(a, s.act, s.alpha, 0, 0, t);
  a.str(vsc(0), a64::ptr_post(a64::x2, 4));
  a.subs(a64::x4, a64::x4, 1);
  a.b_ne(tail_top);
  a.bind(done);
}

// Per row: the maximum, exp(x - max) into the output and its sum, then the output times 1 / sum.
// x1 / x2 the row's input / output, x3 rows left, x4 counter, x5 / x6 running pointers; v0 the
// value, v1-v4 exp's temporaries, v17 the row maximum, v18 the sum.
void emit_fast_softmax(a64::Assembler& a, int64_t rows_per_sample, int64_t len) {
  const int t[4] = {1, 2, 3, 4};
  constexpr int kMax = 17, kSum = 18;
  const int64_t nv = len / kLanes, tail = len % kLanes;
  a.ldr(a64::x1, a64::ptr(a64::x0, 0));
  a.ldr(a64::x1, a64::ptr(a64::x1, 0));
  a.ldr(a64::x2, a64::ptr(a64::x0, 8));
  a.ldr(a64::x3, a64::ptr(a64::x0, 24));
  mov_imm(a, a64::x4, rows_per_sample);
  a.mul(a64::x3, a64::x3, a64::x4);
  Label row = a.newLabel();
  a.bind(row);
  // Row maximum: vectors, across lanes, then the tail's scalars.
  a.mov(a64::x5, a64::x1);
  dup_const(a, kMax, -std::numeric_limits<float>::infinity());
  counted_loop(a, a64::x4, nv, [&] {
    a.ldr(vq(0), a64::ptr_post(a64::x5, 16));
    fmax(a, kMax, kMax, 0);
  });
  a.fmaxv(vsc(kMax), vs(kMax));
  for (int64_t i = 0; i < tail; ++i) {
    a.ldr(vsc(0), a64::ptr_post(a64::x5, 4));
    a.fmax(vsc(kMax), vsc(kMax), vsc(0));
  }
  a.dup(vs(kMax), a64::VecV(kMax).s(0));
  // exp(x - max) -> output, summed.
  a.mov(a64::x5, a64::x1);
  a.mov(a64::x6, a64::x2);
  zero(a, kSum);
  counted_loop(a, a64::x4, nv, [&] {
    a.ldr(vq(0), a64::ptr_post(a64::x5, 16));
    fsub(a, 0, 0, kMax);
    emit_exp(a, 0, 0, t);
    a.str(vq(0), a64::ptr_post(a64::x6, 16));
    fadd(a, kSum, kSum, 0);
  });
  a.faddp(vs(kSum), vs(kSum), vs(kSum));
  a.faddp(vs(kSum), vs(kSum), vs(kSum));
  for (int64_t i = 0; i < tail; ++i) {
    a.ldr(vsc(0), a64::ptr_post(a64::x5, 4));
    fsub(a, 0, 0, kMax);
    emit_exp(a, 0, 0, t);
    a.str(vsc(0), a64::ptr_post(a64::x6, 4));
    a.fadd(vsc(kSum), vsc(kSum), vsc(0));
  }
  a.dup(vs(kSum), a64::VecV(kSum).s(0));
  dup_const(a, t[0], 1.0f);
  fdiv(a, kSum, t[0], kSum);
  // Scale the output row.
  a.mov(a64::x6, a64::x2);
  counted_loop(a, a64::x4, nv, [&] {
    a.ldr(vq(0), a64::ptr(a64::x6));
    fmul(a, 0, 0, kSum);
    a.str(vq(0), a64::ptr_post(a64::x6, 16));
  });
  for (int64_t i = 0; i < tail; ++i) {
    a.ldr(vsc(0), a64::ptr(a64::x6));
    a.fmul(vsc(0), vsc(0), vsc(kSum));
    a.str(vsc(0), a64::ptr_post(a64::x6, 4));
  }
  add_imm(a, a64::x1, len * 4);
  add_imm(a, a64::x2, len * 4);
  a.subs(a64::x3, a64::x3, 1);
  a.b_ne(row);
}

}  // namespace nnd::jit::neon
