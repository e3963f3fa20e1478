// f32-dwconv / f32-maxpool / f32-avgpool on NEON: the loop structure of the x86 window generator
// (samples, output rows, tiles of `rows` output pixels, channel blocks of `vmax` vectors, then the
// kernel window's taps), with every counter and pointer in its own register (AArch64 has enough:
// the x86 version keeps counters in stack slots). Depthwise loads a tap's weights once per tile
// and multiplies with FMLA; tails of fewer than 4 channels load and store 1, 2 or 3 lanes, the
// packed weights and bias are zero there.
#include <limits>
#include <vector>

#include "core/jit/arm64/neon_kernels.h"
#include "core/jit/arm64/regs_p.h"
#include "core/jit/generators/activation.h"
#include "core/jit/kernel_config.h"
#include "core/jit/kernel_args.h"
#include "core/util/error.h"

namespace nnd::jit::neon {

namespace {

namespace a64 = asmjit::a64;
namespace regs = arm64::regs;
using a64::GpX;
using arm64::NeonEmitter;

// General-purpose registers of the window kernel. The frame (arm64/regs_p.h) saves x19-x28 and
// d8-d15, so the kernel takes them like the caller-saved ones.
const GpX kArgs = a64::x0;
const GpX kInN = a64::x1, kOutN = a64::x2, kN = a64::x3;          // sample pointers, samples left
const GpX kInRow = a64::x4, kOutRow = a64::x5, kOhCnt = a64::x6;  // output row
const GpX kIn = a64::x7, kOut = a64::x8, kOwtCnt = a64::x9;       // tile of output pixels
const GpX kCi = a64::x10, kOb = a64::x11, kW = a64::x12, kBias = a64::x13, kBlockCnt = a64::x14;  // channel block
const GpX kWk = a64::x15;                                          // running weights
const GpX kRow = a64::x19, kCol = a64::x20, kKhCnt = a64::x21, kKwCnt = a64::x22;  // taps
const GpX kResDelta = a64::x23, kWBase = a64::x24, kBBase = a64::x25, kTmp = a64::x26;

constexpr int kLanes = NeonEmitter::width();

// Vector registers in the order the kernel takes them: the caller-saved ones first.
int vreg(int i) {
  static const int order[32] = {0,  1,  2,  3,  4,  5,  6,  7,  16, 17, 18, 19, 20, 21, 22, 23,
                                24, 25, 26, 27, 28, 29, 30, 31, 8,  9,  10, 11, 12, 13, 14, 15};
  return order[i];
}

void tile(NeonEmitter& ve, const WindowSpec& s, int R, int V, int lanes_last) {
  a64::Assembler& a = ve.as();
  const bool dw = s.op == WindowOp::kDepthwise;
  auto acc = [&](int r, int v) { return vreg(r * V + v); };
  auto wreg = [&](int v) { return vreg(R * V + v); };
  const int xr = vreg(R * V + (dw ? V : 0));
  const int64_t ps_in = s.sw * s.c * 4, ps_out = s.c * 4;
  for (int v = 0; v < V; ++v) {
    if (s.op == WindowOp::kMax) ve.load_const(acc(0, v), -std::numeric_limits<float>::infinity());
    else if (dw && s.has_bias) ve.load(acc(0, v), kBias, v * 16);
    else ve.zero(acc(0, v));
    for (int r = 1; r < R; ++r) ve.mov(acc(r, v), acc(0, v));
  }
  a.mov(kWk, kW);
  a.mov(kRow, kCi);
  regs::times_loop(ve, kKhCnt, s.kh, [&] {
    a.mov(kCol, kRow);
    regs::times_loop(ve, kKwCnt, s.kw, [&] {
      if (dw) {
        for (int v = 0; v < V; ++v) ve.load(wreg(v), kWk, v * 16);
        ve.add_imm(kWk, int64_t{V} * 16);
      }
      for (int r = 0; r < R; ++r) {
        for (int v = 0; v < V; ++v) {
          ve.load_lanes(xr, kCol, r * ps_in + v * 16, v == V - 1 ? lanes_last : kLanes);
          if (dw) ve.fmadd(acc(r, v), xr, wreg(v));
          else if (s.op == WindowOp::kMax) ve.max(acc(r, v), acc(r, v), xr);
          else ve.add(acc(r, v), acc(r, v), xr);
        }
      }
      ve.add_imm(kCol, s.dw * s.c * 4);
    });
    ve.add_imm(kRow, s.dh * s.in_w * s.c * 4);
  });
  if (s.op == WindowOp::kSum && s.scale != 1.0f) {
    ve.load_const(xr, s.scale);
    for (int i = 0; i < R * V; ++i) ve.mul(vreg(i), vreg(i), xr);
  }
  auto add_residual = [&] {
    a.add(kCol, kOb, kResDelta);  // the residual at the output's place
    for (int r = 0; r < R; ++r) {
      for (int v = 0; v < V; ++v) {
        ve.load_lanes(xr, kCol, r * ps_out + v * 16, v == V - 1 ? lanes_last : kLanes);
        ve.add(acc(r, v), acc(r, v), xr);
      }
    }
  };
  const bool res_last = s.residual_at == ResidualAt::kAfterActivation;
  if (s.residual && !res_last) add_residual();
  generators::epilogue_activation(ve, s.act, R * V, vreg, xr);
  if (s.residual && res_last) add_residual();
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < V; ++v) ve.store_lanes(kOb, r * ps_out + v * 16, acc(r, v), v == V - 1 ? lanes_last : kLanes);
  }
}

// The channel blocks of one tile of R output pixels at kIn / kOut.
void blocks(NeonEmitter& ve, const WindowSpec& s, int R) {
  a64::Assembler& a = ve.as();
  const int vmax = s.vmax;
  const ChannelBlocks cb = channel_blocks(s.c, vmax, kLanes);
  const int64_t cw = cb.block_channels, nb = cb.count;
  const int vl = cb.last_vectors, lanes_last = cb.last_lanes;
  a.mov(kOb, kOut);
  a.mov(kCi, kIn);
  a.mov(kW, kWBase);
  a.mov(kBias, kBBase);
  regs::times_loop(ve, kBlockCnt, nb - 1, [&] {
    tile(ve, s, R, vmax, kLanes);
    ve.add_imm(kOb, cw * 4);
    ve.add_imm(kCi, cw * 4);
    ve.add_imm(kW, s.kh * s.kw * cw * 4);
    ve.add_imm(kBias, cw * 4);
  });
  tile(ve, s, R, vl, lanes_last);
}

}  // namespace

void emit_window(NeonEmitter& ve, const WindowSpec& s) {
  a64::Assembler& a = ve.as();
  const OutPlacement& op = s.out_place;
  if (s.residual && !op.dense()) throw Error(ErrorCode::kInternal, "JIT internal error: a fused residual with a bordered output");
  const int dw_regs = s.op == WindowOp::kDepthwise ? s.vmax : 0;
  const int vec_regs = s.rows * s.vmax + dw_regs + 1;
  if (vec_regs > 32) throw Error(ErrorCode::kInternal, "JIT internal error: window blocking needs more than 32 vector registers");
  if (s.residual) {
    a.ldr(kResDelta, a64::ptr(kArgs, kArgsIn));
    a.ldr(kResDelta, a64::ptr(kResDelta, 8));
    a.ldr(kTmp, a64::ptr(kArgs, kArgsOut));
    a.sub(kResDelta, kResDelta, kTmp);
  }
  a.ldr(kWBase, a64::ptr(kArgs, kArgsWeights));
  ve.add_imm(kBBase, kWBase, s.bias_off * 4);
  ve.add_imm(kWBase, s.weight_off * 4);
  const int64_t in_row_step = s.sh * s.in_w * s.c * 4, in_pix_step = s.sw * s.c * 4;
  const int64_t out_row_step = (op.row_floats ? op.row_floats : s.out_w * s.c) * 4, out_pix_step = s.c * 4;
  const int64_t in_sample = s.in_h * s.in_w * s.c * 4;
  const int64_t out_sample = (op.sample_floats ? op.sample_floats : s.out_h * s.out_w * s.c) * 4;
  const int R = s.rows;
  a.ldr(kInN, a64::ptr(kArgs, kArgsIn));
  a.ldr(kInN, a64::ptr(kInN, 0));
  a.ldr(kOutN, a64::ptr(kArgs, kArgsOut));
  ve.add_imm(kOutN, op.offset_floats * 4);
  a.ldr(kN, a64::ptr(kArgs, kArgsBatch));
  regs::count_down_loop(ve, kN, Trips::samples(1), [&] {
    a.mov(kInRow, kInN);
    a.mov(kOutRow, kOutN);
    regs::times_loop(ve, kOhCnt, s.out_h, [&] {
      a.mov(kIn, kInRow);
      a.mov(kOut, kOutRow);
      const int64_t full = s.out_w / R, rem = s.out_w % R;
      regs::times_loop(ve, kOwtCnt, full, [&] {
        blocks(ve, s, R);
        ve.add_imm(kIn, R * in_pix_step);
        ve.add_imm(kOut, R * out_pix_step);
      });
      if (rem > 0) blocks(ve, s, static_cast<int>(rem));
      ve.add_imm(kInRow, in_row_step);
      ve.add_imm(kOutRow, out_row_step);
    });
    ve.add_imm(kInN, in_sample);
    ve.add_imm(kOutN, out_sample);
  });
}

}  // namespace nnd::jit::neon
