// f32-dwconv / f32-maxpool / f32-avgpool on NEON: the loop structure of the x86 window generator
// (samples, output rows, tiles of `rows` output pixels, channel blocks of `vmax` vectors, then the
// kernel window's taps), with every counter and pointer in its own register (AArch64 has enough:
// the x86 version keeps counters in stack slots). Depthwise loads a tap's weights once per tile
// and multiplies with FMLA; tails of fewer than 4 channels load and store 1, 2 or 3 lanes, the
// packed weights and bias are zero there.
#include <limits>
#include <vector>

#include "core/jit/arm64/neon_asm_p.h"
#include "core/jit/arm64/neon_kernels.h"
#include "core/util/error.h"

namespace nnd::jit::neon {

namespace {

using a64::GpX;

// General-purpose registers of the window kernel.
const GpX kArgs = a64::x0;
const GpX kInN = a64::x1, kOutN = a64::x2, kN = a64::x3;          // sample pointers, samples left
const GpX kInRow = a64::x4, kOutRow = a64::x5, kOhCnt = a64::x6;  // output row
const GpX kIn = a64::x7, kOut = a64::x8, kOwtCnt = a64::x9;       // tile of output pixels
const GpX kCi = a64::x10, kOb = a64::x11, kW = a64::x12, kBias = a64::x13, kBlockCnt = a64::x14;  // channel block
const GpX kWk = a64::x15;                                          // running weights
const GpX kRow = a64::x19, kCol = a64::x20, kKhCnt = a64::x21, kKwCnt = a64::x22;  // taps
const GpX kResDelta = a64::x23, kWBase = a64::x24, kBBase = a64::x25;
constexpr int kSavedGpPairs = 4;  // x19-x26

// Vector registers in the order the kernel takes them: the caller-saved ones first.
int vreg(int i) {
  static const int order[32] = {0,  1,  2,  3,  4,  5,  6,  7,  16, 17, 18, 19, 20, 21, 22, 23,
                                24, 25, 26, 27, 28, 29, 30, 31, 8,  9,  10, 11, 12, 13, 14, 15};
  return order[i];
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

void tile(a64::Assembler& a, const WindowSpec& s, int R, int V, int lanes_last) {
  const bool dw = s.op == WindowOp::kDepthwise;
  auto acc = [&](int r, int v) { return vreg(r * V + v); };
  auto wreg = [&](int v) { return vreg(R * V + v); };
  const int xr = vreg(R * V + (dw ? V : 0));
  const int64_t ps_in = s.sw * s.c * 4, ps_out = s.c * 4;
  for (int v = 0; v < V; ++v) {
    if (s.op == WindowOp::kMax) dup_const(a, acc(0, v), -std::numeric_limits<float>::infinity());
    else if (dw && s.has_bias) load(a, acc(0, v), kBias, v * 16);
    else a.movi(vs(acc(0, v)), 0);
    for (int r = 1; r < R; ++r) a.mov(vq(acc(r, v)).b16(), vq(acc(0, v)).b16());
  }
  a.mov(kWk, kW);
  a.mov(kRow, kCi);
  counted_loop(a, kKhCnt, s.kh, [&] {
    a.mov(kCol, kRow);
    counted_loop(a, kKwCnt, s.kw, [&] {
      if (dw) {
        for (int v = 0; v < V; ++v) load(a, wreg(v), kWk, v * 16);
        add_imm(a, kWk, int64_t{V} * 16);
      }
      for (int r = 0; r < R; ++r) {
        for (int v = 0; v < V; ++v) {
          load_lanes(a, xr, kCol, r * ps_in + v * 16, v == V - 1 ? lanes_last : kLanes);
          if (dw) a.fmla(vs(acc(r, v)), vs(xr), vs(wreg(v)));
          else if (s.op == WindowOp::kMax) a.fmax(vs(acc(r, v)), vs(acc(r, v)), vs(xr));
          else a.fadd(vs(acc(r, v)), vs(acc(r, v)), vs(xr));
        }
      }
      add_imm(a, kCol, s.dw * s.c * 4);
    });
    add_imm(a, kRow, s.dh * s.in_w * s.c * 4);
  });
  if (s.op == WindowOp::kSum && s.scale != 1.0f) {
    dup_const(a, xr, s.scale);
    for (int i = 0; i < R * V; ++i) a.fmul(vs(vreg(i)), vs(vreg(i)), vs(xr));
  }
  if (s.residual) {
    a.add(kCol, kOb, kResDelta);  // the residual at the output's place
    for (int r = 0; r < R; ++r) {
      for (int v = 0; v < V; ++v) {
        load_lanes(a, xr, kCol, r * ps_out + v * 16, v == V - 1 ? lanes_last : kLanes);
        a.fadd(vs(acc(r, v)), vs(acc(r, v)), vs(xr));
      }
    }
  }
  if (s.act != ActivationKind::kLinear) {
    a.movi(vs(xr), 0);
    for (int i = 0; i < R * V; ++i) a.fmax(vs(vreg(i)), vs(vreg(i)), vs(xr));
    if (s.act == ActivationKind::kRelu6) {
      dup_const(a, xr, 6.0f);
      for (int i = 0; i < R * V; ++i) a.fmin(vs(vreg(i)), vs(vreg(i)), vs(xr));
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < V; ++v) store_lanes(a, kOb, r * ps_out + v * 16, acc(r, v), v == V - 1 ? lanes_last : kLanes);
  }
}

// The channel blocks of one tile of R output pixels at kIn / kOut.
void blocks(a64::Assembler& a, const WindowSpec& s, int R) {
  const int vmax = s.vmax;
  const int64_t cw = int64_t{vmax} * kLanes, nb = ceil_div(s.c, cw);
  const int64_t last_ch = s.c - (nb - 1) * cw;
  const int vl = static_cast<int>(ceil_div(last_ch, kLanes));
  const int lanes_last = static_cast<int>(last_ch - int64_t{vl - 1} * kLanes);
  a.mov(kOb, kOut);
  a.mov(kCi, kIn);
  a.mov(kW, kWBase);
  a.mov(kBias, kBBase);
  counted_loop(a, kBlockCnt, nb - 1, [&] {
    tile(a, s, R, vmax, kLanes);
    add_imm(a, kOb, cw * 4);
    add_imm(a, kCi, cw * 4);
    add_imm(a, kW, s.kh * s.kw * cw * 4);
    add_imm(a, kBias, cw * 4);
  });
  tile(a, s, R, vl, lanes_last);
}

}  // namespace

void emit_window(a64::Assembler& a, const WindowSpec& s) {
  const OutPlacement& op = s.out_place;
  if (s.residual && !op.dense()) throw Error(ErrorCode::kInternal, "JIT internal error: a fused residual with a bordered output");
  const int dw_regs = s.op == WindowOp::kDepthwise ? s.vmax : 0;
  const int vec_regs = s.rows * s.vmax + dw_regs + 1;
  if (vec_regs > 32) throw Error(ErrorCode::kInternal, "JIT internal error: window blocking needs more than 32 vector registers");
  CalleeSaved saved(a, kSavedGpPairs, vec_regs > 24);
  if (s.residual) {
    a.ldr(kResDelta, a64::ptr(kArgs, 0));
    a.ldr(kResDelta, a64::ptr(kResDelta, 8));
    a.ldr(a64::x16, a64::ptr(kArgs, 8));
    a.sub(kResDelta, kResDelta, a64::x16);
  }
  a.ldr(kWBase, a64::ptr(kArgs, 16));
  add_imm(a, kBBase, kWBase, s.bias_off * 4);
  add_imm(a, kWBase, s.weight_off * 4);
  const int64_t in_row_step = s.sh * s.in_w * s.c * 4, in_pix_step = s.sw * s.c * 4;
  const int64_t out_row_step = (op.row_floats ? op.row_floats : s.out_w * s.c) * 4, out_pix_step = s.c * 4;
  const int64_t in_sample = s.in_h * s.in_w * s.c * 4;
  const int64_t out_sample = (op.sample_floats ? op.sample_floats : s.out_h * s.out_w * s.c) * 4;
  const int R = s.rows;
  a.ldr(kInN, a64::ptr(kArgs, 0));
  a.ldr(kInN, a64::ptr(kInN, 0));
  a.ldr(kOutN, a64::ptr(kArgs, 8));
  add_imm(a, kOutN, op.offset_floats * 4);
  a.ldr(kN, a64::ptr(kArgs, 24));
  Label sample = a.newLabel();
  a.bind(sample);
  a.mov(kInRow, kInN);
  a.mov(kOutRow, kOutN);
  counted_loop(a, kOhCnt, s.out_h, [&] {
    a.mov(kIn, kInRow);
    a.mov(kOut, kOutRow);
    const int64_t full = s.out_w / R, rem = s.out_w % R;
    counted_loop(a, kOwtCnt, full, [&] {
      blocks(a, s, R);
      add_imm(a, kIn, R * in_pix_step);
      add_imm(a, kOut, R * out_pix_step);
    });
    if (rem > 0) blocks(a, s, static_cast<int>(rem));
    add_imm(a, kInRow, in_row_step);
    add_imm(a, kOutRow, out_row_step);
  });
  add_imm(a, kInN, in_sample);
  add_imm(a, kOutN, out_sample);
  a.subs(kN, kN, 1);
  a.b_ne(sample);
  saved.restore();
}

}  // namespace nnd::jit::neon
