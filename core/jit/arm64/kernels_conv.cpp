// f32-conv / f32-gemm on NEON (arm64/kernels.h). The loop nests follow the x86 generator
// (x86/kernels.cpp: spatial tiles from plan_conv_tiles(), GEMM row tiles, output-channel blocks);
// the tile is NEON's own: per four input channels one register of each position's inputs, then
// per channel (lane) the V weight vectors and R x V FMLA by element. Counters and saved pointers
// live in registers (arm64/regs_p.h), so the kernels need no stack slots.
#include <algorithm>
#include <string>
#include <vector>

#include "core/jit/arm64/kernels.h"
#include "core/jit/arm64/regs_p.h"
#include "core/jit/conv_tiling.h"
#include "core/jit/kernel_config.h"
#include "core/jit/generators/activation.h"
#include "core/jit/kernel_args.h"
#include "core/util/checked_math.h"
#include "core/util/error.h"

namespace nnd::jit::arm64 {

using namespace regs;
using asmjit::Label;

namespace {

// The channel loop of one kernel tap (kPix at its first input channel, kWk at its weights):
// channels in groups of four, each position's four inputs in one register, each lane multiplied
// into the V weight vectors of its channel. Leaves kWk at the next tap's weights.
void conv_channels(NeonEmitter& ve, const ConvSpec& s, const TileLayout& t, int V, int wreg, int xreg) {
  a64::Assembler& a = ve.as();
  const int R = static_cast<int>(t.in.size());
  const int64_t wstep = int64_t{V} * 16;  // bytes of one channel's weights
  auto group = [&](int channels) {
    for (int r = 0; r < R; ++r) ve.load_lanes(xreg + r, kPix, t.in[static_cast<size_t>(r)], channels);
    for (int u = 0; u < channels; ++u) {
      for (int v = 0; v < V; ++v) ve.load(wreg + v, kWk, u * wstep + v * 16);
      for (int r = 0; r < R; ++r) {
        for (int v = 0; v < V; ++v) ve.fmadd_lane(r * V + v, wreg + v, xreg + r, u);
      }
    }
  };
  const int64_t full = s.cin_g / 4;
  const int rem = static_cast<int>(s.cin_g % 4);
  if (full > 0) {
    counted_loop(ve, kCi, full, [&] {
      group(4);
      a.add(kPix, kPix, 16);
      ve.add_imm(kWk, 4 * wstep);
    });
  }
  if (rem > 0) {
    group(rem);
    ve.add_imm(kWk, rem * wstep);
  }
}

// One tile of R positions x V output-channel vectors: accumulators from the bias, every tap, then
// the fused residual and activation, and the stores (the last vector `lanes_last` lanes wide).
void conv_tile(NeonEmitter& ve, const ConvSpec& s, const TileLayout& t, int V, int lanes_last) {
  a64::Assembler& a = ve.as();
  const int R = static_cast<int>(t.in.size());
  const int wreg = R * V, xreg = wreg + V;
  if (xreg + R > ve.usable_regs()) {
    throw Error(ErrorCode::kInternal, "JIT internal error: an f32-conv tile of " + std::to_string(R) + " x " +
                                          std::to_string(V) + " needs more than 31 vector registers");
  }
  for (int v = 0; v < V; ++v) {
    if (s.has_bias) ve.load(v, kBias, v * 16);
    else ve.zero(v);
    for (int r = 1; r < R; ++r) ve.mov(r * V + v, v);
  }
  a.mov(kWk, kW);
  a.mov(kRow, kIn);
  repeat_loop(
      ve, kKh, s.kh,
      [&] {
        a.mov(kCol, kRow);
        repeat_loop(
            ve, kKw, s.kw,
            [&] {
              a.mov(kPix, kCol);
              conv_channels(ve, s, t, V, wreg, xreg);
            },
            [&] { ve.add_imm(kCol, s.dw * s.in_c * 4); });
      },
      [&] { ve.add_imm(kRow, s.dh * s.in_w * s.in_c * 4); });
  const int tmp = wreg;  // the weights are dead now
  auto add_residual = [&] {
    a.add(kPix, kOb, kResDelta);
    for (int r = 0; r < R; ++r) {
      for (int v = 0; v < V; ++v) {
        ve.load_lanes(tmp, kPix, t.out[static_cast<size_t>(r)] + v * 16, v == V - 1 ? lanes_last : 4);
        ve.add(r * V + v, r * V + v, tmp);
      }
    }
  };
  const bool res_last = s.residual_at == ResidualAt::kAfterActivation;
  if (s.residual && !res_last) add_residual();
  generators::epilogue_activation(ve, s.act, 0, R * V, tmp);
  if (s.residual && res_last) add_residual();
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < V; ++v) ve.store_lanes(kOb, t.out[static_cast<size_t>(r)] + v * 16, r * V + v, v == V - 1 ? lanes_last : 4);
  }
}

// Every output-channel block of one tile (kIn/kOut at its first position).
void conv_blocks(NeonEmitter& ve, const ConvSpec& s, const TileLayout& t) {
  a64::Assembler& a = ve.as();
  const int vmax = s.blocking.vmax;
  const ChannelBlocks cb = channel_blocks(s.cout_g, vmax, NeonEmitter::width());
  const int64_t cw = cb.block_channels, nb = cb.count;
  const int vl = cb.last_vectors, lanes_last = cb.last_lanes;
  a.mov(kOb, kOut);
  a.mov(kW, kWBase);
  a.mov(kBias, kBBase);
  if (nb > 1) {
    counted_loop(ve, kOcb, nb - 1, [&] {
      conv_tile(ve, s, t, vmax, 4);
      ve.add_imm(kOb, cw * 4);
      ve.add_imm(kW, s.kh * s.kw * s.cin_g * cw * 4);
      ve.add_imm(kBias, cw * 4);
    });
  }
  conv_tile(ve, s, t, vl, lanes_last);
}

ConvTileProblem tile_problem(const ConvSpec& s) {
  return conv_tile_problem(s, std::max(1, s.blocking.rows));  // (V + 1) R + V registers (kernel_config.cpp)
}

// Output rows in steps of t.rows over the samples at kInN/kOutN: tiles of t.cols columns, then
// one narrower tile for the rest of the row.
void conv_nest(NeonEmitter& ve, const ConvSpec& s, const ConvTileProblem& p, const ConvTile& t) {
  a64::Assembler& a = ve.as();
  a.mov(kInRow, kInN);
  a.mov(kOutRow, kOutN);
  counted_loop(ve, kOh, p.out_h / t.rows, [&] {
    a.mov(kIn, kInRow);
    a.mov(kOut, kOutRow);
    const int64_t full = p.out_w / t.cols, rem = p.out_w % t.cols;
    const TileLayout tile = tile_layout(t, p);
    if (full >= 1) {
      counted_loop(ve, kOwt, full, [&] {
        conv_blocks(ve, s, tile);
        ve.add_imm(kIn, t.cols * p.in_col);
        ve.add_imm(kOut, t.cols * p.out_col);
      });
    }
    if (rem > 0) conv_blocks(ve, s, tile_layout(ConvTile{t.samples, t.rows, static_cast<int>(rem)}, p));
    ve.add_imm(kInRow, t.rows * p.in_row);
    ve.add_imm(kOutRow, t.rows * p.out_row);
  });
}

// kGroup: the group index of emit_conv's run-time group loop (kGroupsLeft counts it down).
const a64::Gp kGroupsLeft = kT0;
const a64::Gp kGroup = kT1;

// base += kGroup * bytes (the hooks' x16/x17 as temporaries).
void add_group_offset(NeonEmitter& ve, const a64::Gp& base, int64_t bytes) {
  a64::Assembler& a = ve.as();
  ve.mov_imm(kHookImm, bytes);
  a.mul(kHookAddr, kGroup, kHookImm);
  a.add(base, base, kHookAddr);
}

// Spatial conv of group g (g < 0: the group in kGroup at run time): groups of
// plan.batched.samples samples while enough remain, then one sample at a time.
void conv_spatial(NeonEmitter& ve, const ConvSpec& s, int64_t g) {
  a64::Assembler& a = ve.as();
  const ConvTileProblem p = tile_problem(s);
  const ConvTilePlan plan = plan_conv_tiles(p);
  a.ldr(kInN, a64::ptr(kArgs, kArgsIn));
  a.ldr(kInN, a64::ptr(kInN, 0));
  a.ldr(kOutN, a64::ptr(kArgs, kArgsOut));
  if (g >= 0) {
    ve.add_imm(kInN, g * s.cin_g * 4);
    ve.add_imm(kOutN, (s.out_place.offset_floats + g * s.cout_g) * 4);
  } else {
    add_group_offset(ve, kInN, s.cin_g * 4);
    add_group_offset(ve, kOutN, s.cout_g * 4);
    ve.add_imm(kOutN, s.out_place.offset_floats * 4);
  }
  a.ldr(kN, a64::ptr(kArgs, kArgsBatch));
  const int S = plan.batched.samples;
  sample_groups_loop(
      ve, kN, S,
      [&] {
        conv_nest(ve, s, p, plan.batched);
        ve.add_imm(kInN, S * p.in_sample);
        ve.add_imm(kOutN, S * p.out_sample);
      },
      [&] {
        conv_nest(ve, s, p, plan.single);
        ve.add_imm(kInN, p.in_sample);
        ve.add_imm(kOutN, p.out_sample);
      });
}

// GEMM rows: batch * rows_per_sample contiguous rows, tiles of R, then one remainder tile.
void conv_rows(NeonEmitter& ve, const ConvSpec& s) {
  a64::Assembler& a = ve.as();
  const int R = std::max(1, s.blocking.rows);
  const int64_t rows_per_sample = s.out_h * s.out_w, ps_in = s.in_c * 4, ps_out = s.out_c * 4;
  a.ldr(kIn, a64::ptr(kArgs, kArgsIn));
  a.ldr(kIn, a64::ptr(kIn, 0));
  a.ldr(kOut, a64::ptr(kArgs, kArgsOut));
  a.ldr(kN, a64::ptr(kArgs, kArgsBatch));
  ve.mul_imm(kN, rows_per_sample);
  row_tiles_loop(
      ve, kN, R, Trips::samples(rows_per_sample),
      [&] {
        conv_blocks(ve, s, strided_layout(R, ps_in, ps_out));
        ve.add_imm(kIn, R * ps_in);
        ve.add_imm(kOut, R * ps_out);
      },
      [&](int r) { conv_blocks(ve, s, strided_layout(r, ps_in, ps_out)); });
}

}  // namespace

void emit_conv(NeonEmitter& ve, const ConvSpec& s) {
  a64::Assembler& a = ve.as();
  GpRoles roles(s.rows_mode ? "f32-gemm" : "f32-conv");
  for (const auto& [name, reg] : {std::pair{"args", kArgs}, {"tile input", kIn}, {"tile output", kOut},
                                  {"block weights", kW}, {"block bias", kBias}, {"samples / rows left", kN},
                                  {"channel input / residual", kPix}, {"block output", kOb},
                                  {"kernel rows left", kKh}, {"kernel columns left", kKw},
                                  {"channel groups left", kCi}, {"kernel row input", kRow},
                                  {"kernel column input", kCol}, {"running weights", kWk},
                                  {"output rows left", kOh}, {"tiles left", kOwt}, {"blocks left", kOcb},
                                  {"sample input", kInN}, {"sample output", kOutN}, {"row input", kInRow},
                                  {"row output", kOutRow}, {"group weights", kWBase}, {"group bias", kBBase},
                                  {"residual delta", kResDelta}, {"groups left", kGroupsLeft},
                                  {"group", kGroup}}) {
    (void)roles.role(name, reg);
  }
  if (s.residual && !s.out_place.dense()) throw Error(ErrorCode::kInternal, "JIT internal error: a fused residual with a bordered output");
  if (s.rows_mode && !s.out_place.dense()) throw Error(ErrorCode::kInternal, "JIT internal error: a GEMM-mode conv cannot write a bordered output");
  if (s.residual) {
    a.ldr(kResDelta, a64::ptr(kArgs, kArgsIn));
    a.ldr(kResDelta, a64::ptr(kResDelta, 8));
    a.ldr(kHookImm, a64::ptr(kArgs, kArgsOut));
    a.sub(kResDelta, kResDelta, kHookImm);
  }
  // Spatial convs with several evenly packed groups (grouped Conv2D, Winograd's 16 transform
  // points) run one copy of the group's code in a loop, as on x86: unrolled, 16 groups would make
  // a kernel larger than an L1 instruction cache.
  if (!s.rows_mode && s.groups >= 4 && uniform_groups(s)) {
    const int64_t stride = s.group_weight_off[1] - s.group_weight_off[0];
    a.ldr(kWBase, a64::ptr(kArgs, kArgsWeights));
    ve.add_imm(kBBase, kWBase, s.group_bias_off[0] * 4);
    ve.add_imm(kWBase, s.group_weight_off[0] * 4);
    a.mov(kGroup, 0);
    counted_loop(ve, kGroupsLeft, s.groups, [&] {
      conv_spatial(ve, s, -1);
      ve.add_imm(kWBase, stride * 4);
      ve.add_imm(kBBase, stride * 4);
      a.add(kGroup, kGroup, 1);
    });
    return;
  }
  for (int64_t g = 0; g < s.groups; ++g) {
    a.ldr(kWBase, a64::ptr(kArgs, kArgsWeights));
    ve.add_imm(kBBase, kWBase, s.group_bias_off[static_cast<size_t>(g)] * 4);
    ve.add_imm(kWBase, s.group_weight_off[static_cast<size_t>(g)] * 4);
    if (s.rows_mode) conv_rows(ve, s);
    else conv_spatial(ve, s, g);
  }
}

}  // namespace nnd::jit::arm64
