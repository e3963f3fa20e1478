// Winograd F(2x2, 3x3) transforms (see x86/kernels_winograd.h). Channels are in the vector lanes,
// as in every NHWC kernel, so both transforms are plain vector adds and subtracts over channel
// chunks of width() lanes (the last chunk a tail).
#include "core/jit/generators/activation.h"
#include "core/jit/kernel_args.h"
#include "core/jit/x86/kernels_winograd.h"

#include <array>
#include <functional>

#include "core/jit/x86/counted_loop_p.h"
#include "core/jit/x86/gp_roles_p.h"
#include "core/jit/x86/kernel_epilogue_p.h"
#include "core/jit/x86/kernel_regs_p.h"
#include "core/jit/vec_reg_pool.h"
#include "core/util/error.h"

namespace nnd::jit {

using namespace regs;

namespace {

// The loops both transforms share. Per sample (kN counts down), per tile row (slot kOhCnt) and
// per tile (slot kOwtCnt), `tile()` emits one tile's work; kCol points at the tile on the spatial
// side (kRow at its row, reloaded per sample from `sample_slot`), `packed` at its [point][c]
// block on the other side.
struct TileWalk {
  int64_t tiles_h = 1, tiles_w = 1;
  int sample_slot = kInN;   // the spatial side's sample base
  int64_t sample_step = 0;  // bytes per sample on the spatial side
  int64_t row_step = 0;     // bytes per tile row on the spatial side
  int64_t col_step = 0;     // bytes per tile on the spatial side
  x86::Gp packed;           // the packed side's pointer, contiguous over tiles and samples
  int64_t packed_step = 0;  // bytes per tile on the packed side
};

// The registers walk_tiles() and the chunk loop inside a tile hold, declared by both transforms.
void declare_walk_roles(GpRoles& g) {
  (void)g.role("args", kArgs);
  (void)g.role("samples left", kN);
  (void)g.role("tile row (spatial side)", kRow);
  (void)g.role("tile (spatial side)", kCol);
  (void)g.role("chunk input", kPix);
  (void)g.role("chunk output", kOb);
  g.clobbered_by("chunks", kChunksCounter);
}

void walk_tiles(VecEmitter& ve, const TileWalk& w, const std::function<void()>& tile) {
  x86::Assembler& a = ve.as();
  a.mov(kN, x86::qword_ptr(kArgs, kArgsBatch));
  count_down_loop(ve, kN, Trips::samples(1), [&] {
    a.mov(kRow, slot(w.sample_slot));
    counted_loop(ve, slot(kOhCnt), w.tiles_h, [&] {
      a.mov(kCol, kRow);
      counted_loop(ve, slot(kOwtCnt), w.tiles_w, [&] {
        tile();
        add_imm(a, kCol, w.col_step);
        add_imm(a, w.packed, w.packed_step);
      });
      add_imm(a, kRow, w.row_step);
    });
    add_slot(a, w.sample_slot, w.sample_step);
  });
}

}  // namespace

void emit_winograd_input(VecEmitter& ve, const WinogradInSpec& s) {
  x86::Assembler& a = ve.as();
  const int64_t c = s.c, in_w = 2 * s.tiles_w + 2, in_h = 2 * s.tiles_h + 2;
  const int64_t px = c * 4, row = in_w * px;
  GpRoles g("f32-wino-in");
  declare_walk_roles(g);
  (void)g.role("input", kIn);
  (void)g.role("transformed tiles", kOut);
  VecRegPool pool(ve, "f32-wino-in");
  a.mov(kIn, x86::qword_ptr(kArgs, kArgsIn));
  a.mov(kIn, x86::qword_ptr(kIn, 0));
  a.mov(slot(kInN), kIn);
  a.mov(kOut, x86::qword_ptr(kArgs, kArgsOut));
  const auto body = [&](int64_t off, int lanes) {
    // Rows of t = B^T d (t holds rows 0, 1 and 3 in turn, t2 row 2), two input vectors, one result.
    const VecRegs t = pool.take_array(4, "row of B^T d"), t2 = pool.take_array(4, "row 2 of B^T d");
    const VecRegs d = pool.take_array(2, "input");
    const VecReg y = pool.take("point");
    auto ld = [&](int v, int i, int j) { ve.load_lanes(v, at(kPix, off + i * row + j * px), lanes); };
    auto st = [&](int point, int v) { ve.store_lanes(at(kOb, off + point * c * 4), v, lanes); };
    // (t B) for one row i of t = B^T d, held in registers r[0..3]: points 4i .. 4i+3.
    auto columns = [&](int i, const VecRegs& r) {
      ve.sub(y, r[0], r[2]);
      st(4 * i + 0, y);
      ve.add(y, r[1], r[2]);
      st(4 * i + 1, y);
      ve.sub(y, r[2], r[1]);
      st(4 * i + 2, y);
      ve.sub(y, r[1], r[3]);
      st(4 * i + 3, y);
    };
    // Row 0 of B^T d: d0 - d2.
    for (int j = 0; j < 4; ++j) {
      ld(d[0], 0, j);
      ld(d[1], 2, j);
      ve.sub(t[j], d[0], d[1]);
    }
    columns(0, t);
    // Rows 1 and 2 read the same input rows: d1 + d2 and d2 - d1.
    for (int j = 0; j < 4; ++j) {
      ld(d[0], 1, j);
      ld(d[1], 2, j);
      ve.add(t[j], d[0], d[1]);
      ve.sub(t2[j], d[1], d[0]);
    }
    columns(1, t);
    columns(2, t2);
    // Row 3: d1 - d3.
    for (int j = 0; j < 4; ++j) {
      ld(d[0], 1, j);
      ld(d[1], 3, j);
      ve.sub(t[j], d[0], d[1]);
    }
    columns(3, t);
  };
  TileWalk w;
  w.tiles_h = s.tiles_h;
  w.tiles_w = s.tiles_w;
  w.sample_slot = kInN;
  w.sample_step = in_h * row;
  w.row_step = 2 * row;
  w.col_step = 2 * px;
  w.packed = kOut;
  w.packed_step = kWinogradPoints * c * 4;
  walk_tiles(ve, w, [&] {
    a.mov(kPix, kCol);
    a.mov(kOb, kOut);
    chunks(ve, c, 1, body, [&](int64_t bytes) {
      add_imm(a, kPix, bytes);
      add_imm(a, kOb, bytes);
    });
  });
}

void emit_winograd_output(VecEmitter& ve, const WinogradOutSpec& s) {
  if (s.residual && !s.out_place.dense()) throw Error(ErrorCode::kInternal, "JIT internal error: f32-wino-out: a residual with a bordered output");
  x86::Assembler& a = ve.as();
  const int64_t c = s.c, out_h = 2 * s.tiles_h, out_w = 2 * s.tiles_w;
  GpRoles g("f32-wino-out");
  declare_walk_roles(g);
  (void)g.role("transformed tiles", kIn);
  (void)g.role("output", kOut);
  if (s.residual) (void)g.role("residual delta", kWk);
  if (s.has_bias) {
    (void)g.role("weights", kW);
    (void)g.role("bias", kBias);
  }
  VecRegPool pool(ve, "f32-wino-out");
  const int64_t orow = (s.out_place.row_floats ? s.out_place.row_floats : out_w * c) * 4;
  const int64_t osample = (s.out_place.sample_floats ? s.out_place.sample_floats : out_h * out_w * c) * 4;
  if (s.residual) {
    load_residual_delta(ve);
    a.mov(kWk, slot(kResDelta));
  }
  if (s.has_bias) {
    a.mov(kW, x86::qword_ptr(kArgs, kArgsWeights));
    a.lea(kBias, at(kW, s.bias_off * 4));
  }
  a.mov(kIn, x86::qword_ptr(kArgs, kArgsIn));
  a.mov(kIn, x86::qword_ptr(kIn, 0));
  a.mov(kOut, x86::qword_ptr(kArgs, kArgsOut));
  add_imm(a, kOut, s.out_place.offset_floats * 4);
  a.mov(slot(kOutN), kOut);
  const auto body = [&](int64_t off, int lanes) {
    auto ld = [&](int v, int point) { ve.load_lanes(v, at(kPix, off + point * c * 4), lanes); };
    VecRegs s0 = pool.take_array(4, "s0"), s1 = pool.take_array(4, "s1");
    VecRegs m = pool.take_array(4, "m");
    // s0[j] = m0j + m1j + m2j, s1[j] = m1j - m2j - m3j: the rows of A^T m.
    for (int j = 0; j < 4; ++j) {
      ld(m[0], j);
      ld(m[1], 4 + j);
      ld(m[2], 8 + j);
      ld(m[3], 12 + j);
      ve.add(s0[j], m[0], m[1]);
      ve.add(s0[j], s0[j], m[2]);
      ve.sub(s1[j], m[1], m[2]);
      ve.sub(s1[j], s1[j], m[3]);
    }
    // (A^T m) A: the 2 x 2 outputs y00, y01, y10, y11, in m's registers.
    m.release();
    const VecRegs y = pool.take_array(4, "y");
    ve.add(y[0], s0[0], s0[1]);
    ve.add(y[0], y[0], s0[2]);
    ve.sub(y[1], s0[1], s0[2]);
    ve.sub(y[1], y[1], s0[3]);
    ve.add(y[2], s1[0], s1[1]);
    ve.add(y[2], y[2], s1[2]);
    ve.sub(y[3], s1[1], s1[2]);
    ve.sub(y[3], y[3], s1[3]);
    s0.release();
    s1.release();
    const VecReg bias = pool.take("bias"), res = pool.take("residual");
    if (s.has_bias) {
      ve.load_lanes(bias, at(kBias, off), lanes);
      for (int k = 0; k < 4; ++k) ve.add(y[k], y[k], bias);
    }
    auto disp = [&](int k) { return off + (k / 2) * orow + (k % 2) * c * 4; };
    auto add_residual = [&] {
      for (int k = 0; k < 4; ++k) {
        ve.load_lanes(res, x86::ptr(kOb, kWk, 0, i32(disp(k))), lanes);
        ve.add(y[k], y[k], res);
      }
    };
    const bool res_last = s.residual_at == ResidualAt::kAfterActivation;
    if (s.residual && !res_last) add_residual();
    const int act_tmp = bias;  // the bias has been added
    generators::epilogue_activation(ve, s.act, y.first(), y.size(), act_tmp);
    if (s.residual && res_last) add_residual();
    for (int k = 0; k < 4; ++k) ve.store_lanes(at(kOb, disp(k)), y[k], lanes);
  };
  TileWalk w;
  w.tiles_h = s.tiles_h;
  w.tiles_w = s.tiles_w;
  w.sample_slot = kOutN;
  w.sample_step = osample;
  w.row_step = 2 * orow;
  w.col_step = 2 * c * 4;
  w.packed = kIn;
  w.packed_step = kWinogradPoints * c * 4;
  walk_tiles(ve, w, [&] {
    a.mov(kPix, kIn);
    a.mov(kOb, kCol);
    chunks(ve, c, 1, body, [&](int64_t bytes) {
      add_imm(a, kPix, bytes);
      add_imm(a, kOb, bytes);
      if (s.has_bias) add_imm(a, kBias, bytes);
    });
  });
}

}  // namespace nnd::jit
