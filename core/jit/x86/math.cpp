// Fast-math kernels and register-level function approximations (see x86/math.h).
#include "core/jit/x86/math.h"

#include <array>
#include <cmath>
#include <functional>
#include <initializer_list>
#include <limits>
#include <string>
#include <utility>

#include "core/jit/x86/counted_loop_p.h"
#include "core/jit/x86/gp_roles_p.h"
#include "core/jit/x86/kernel_regs_p.h"
#include "core/jit/x86/vec_reg_pool.h"
#include "core/util/error.h"

namespace nnd::jit {

using namespace regs;

namespace {

// acc = polynomial in x with coefficients from the highest degree down (Horner); a, b scratch.
// Returns the register holding the result (a or b).
int horner(VecEmitter& ve, int x, std::initializer_list<float> coeffs, int a, int b) {
  auto it = coeffs.begin();
  ve.load_const(a, *it++);
  for (; it != coeffs.end(); ++it) {
    ve.load_const(b, *it);
    ve.fmadd(b, a, x);
    std::swap(a, b);
  }
  return a;
}

void abs_into(VecEmitter& ve, int d, int x) {  // d = |x| (d != x)
  ve.zero(d);
  ve.sub(d, d, x);
  ve.max(d, d, x);
}

void softplus(VecEmitter& ve, int d, int x, const int* t) {  // t[0..5]
  abs_into(ve, t[4], x);
  ve.zero(t[5]);
  ve.sub(t[4], t[5], t[4]);
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

// d = alpha * expm1(min(x, 0)) + max(x, 0) via expm1(y) = 2t / (1 - t), t = tanh(y / 2).
void elu(VecEmitter& ve, int d, int x, float alpha, const int* t) {  // t[0..5]
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

void emit_exp(VecEmitter& ve, int d, int x, const int* t) {
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
  std::array<uint32_t, 16> bias{};
  bias.fill(127u);
  ve.load(q, ve.const_u32_lanes(bias));
  ve.add_i32(t[2], t[2], q);
  ve.shl_i32(t[2], t[2], 23);
  ve.mul(d, p, t[2]);
}

void emit_tanh(VecEmitter& ve, int d, int x, const int* t) {
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

void emit_sigmoid(VecEmitter& ve, int d, int x, const int* t) {
  ve.zero(t[4]);
  ve.sub(t[4], t[4], x);
  emit_exp(ve, t[4], t[4], t);
  ve.load_const(t[0], 1.0f);
  ve.add(t[4], t[4], t[0]);
  ve.div(d, t[0], t[4]);
}

void emit_activation_fast(VecEmitter& ve, ActivationKind k, float alpha, int d, int x, const int* t) {
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
      abs_into(ve, t[5], x);
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
      throw Error(ErrorCode::kInternal, std::string("JIT fast math: no vectorised form of ") + activation_name(k));
  }
}

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
  a.mov(in, x86::qword_ptr(args, 0));
  a.mov(in, x86::qword_ptr(in, 0));
  a.mov(out, x86::qword_ptr(args, 8));
  a.mov(left, x86::qword_ptr(args, 24));
  a.imul(left, left, i32(s.count));
  vector_then_scalar_loop(
      ve, left, W, Trips::samples(s.count),
      [&] {
        ve.load(x, x86::ptr(in));
        emit_activation_fast(ve, s.act, s.alpha, x, x, t);
        ve.store(x86::ptr(out), x);
        a.add(in, W * 4);
        a.add(out, W * 4);
      },
      [&] {
        ve.load_scalar(x, x86::ptr(in));
        emit_activation_fast(ve, s.act, s.alpha, x, x, t);
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
  a.mov(in, x86::qword_ptr(args, 0));
  a.mov(in, x86::qword_ptr(in, 0));
  a.mov(out, x86::qword_ptr(args, 8));
  a.mov(rows, x86::qword_ptr(args, 24));
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
      emit_exp(ve, x, x, t);
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
