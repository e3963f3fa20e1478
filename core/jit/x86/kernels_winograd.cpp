// Winograd F(2x2, 3x3) transforms (see x86/kernels_winograd.h). Channels are in the vector lanes,
// as in every NHWC kernel, so both transforms are plain vector adds and subtracts over channel
// chunks of width() lanes (the last chunk a tail).
#include "core/jit/x86/kernels_winograd.h"

#include <array>
#include <functional>

#include "core/jit/x86/kernel_epilogue_p.h"
#include "core/jit/x86/kernel_regs_p.h"
#include "core/util/error.h"

namespace nnd::jit {

using namespace regs;
using asmjit::Label;

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

void walk_tiles(VecEmitter& ve, const TileWalk& w, const std::function<void()>& tile) {
  x86::Assembler& a = ve.as();
  a.mov(kN, x86::qword_ptr(kArgs, 24));
  Label ln = a.newLabel(), lty = a.newLabel(), ltx = a.newLabel();
  a.bind(ln);
  a.mov(kRow, slot(w.sample_slot));
  a.mov(slot(kOhCnt), i32(w.tiles_h));
  a.bind(lty);
  a.mov(kCol, kRow);
  a.mov(slot(kOwtCnt), i32(w.tiles_w));
  a.bind(ltx);
  tile();
  add_imm(a, kCol, w.col_step);
  add_imm(a, w.packed, w.packed_step);
  a.dec(slot(kOwtCnt));
  a.jnz(ltx);
  add_imm(a, kRow, w.row_step);
  a.dec(slot(kOhCnt));
  a.jnz(lty);
  add_slot(a, w.sample_slot, w.sample_step);
  a.dec(kN);
  a.jnz(ln);
}

}  // namespace

void emit_winograd_input(VecEmitter& ve, const WinogradInSpec& s) {
  x86::Assembler& a = ve.as();
  const int64_t c = s.c, in_w = 2 * s.tiles_w + 2, in_h = 2 * s.tiles_h + 2;
  const int64_t px = c * 4, row = in_w * px;
  a.mov(kIn, x86::qword_ptr(kArgs, 0));
  a.mov(kIn, x86::qword_ptr(kIn, 0));
  a.mov(slot(kInN), kIn);
  a.mov(kOut, x86::qword_ptr(kArgs, 8));
  const auto body = [&](int64_t off, int lanes) {
    auto ld = [&](int v, int i, int j) { ve.load_lanes(v, at(kPix, off + i * row + j * px), lanes); };
    auto st = [&](int point, int v) { ve.store_lanes(at(kOb, off + point * c * 4), v, lanes); };
    // (t B) for one row i of t = B^T d, held in registers t[0..3]: points 4i .. 4i+3.
    auto columns = [&](int i, const std::array<int, 4>& t) {
      const int y = 10;
      ve.sub(y, t[0], t[2]);
      st(4 * i + 0, y);
      ve.add(y, t[1], t[2]);
      st(4 * i + 1, y);
      ve.sub(y, t[2], t[1]);
      st(4 * i + 2, y);
      ve.sub(y, t[1], t[3]);
      st(4 * i + 3, y);
    };
    // Row 0 of B^T d: d0 - d2.
    for (int j = 0; j < 4; ++j) {
      ld(8, 0, j);
      ld(9, 2, j);
      ve.sub(j, 8, 9);
    }
    columns(0, {0, 1, 2, 3});
    // Rows 1 and 2 read the same input rows: d1 + d2 and d2 - d1.
    for (int j = 0; j < 4; ++j) {
      ld(8, 1, j);
      ld(9, 2, j);
      ve.add(j, 8, 9);
      ve.sub(4 + j, 9, 8);
    }
    columns(1, {0, 1, 2, 3});
    columns(2, {4, 5, 6, 7});
    // Row 3: d1 - d3.
    for (int j = 0; j < 4; ++j) {
      ld(8, 1, j);
      ld(9, 3, j);
      ve.sub(j, 8, 9);
    }
    columns(3, {0, 1, 2, 3});
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
  if (s.residual && !s.out_place.dense()) throw Error("JIT internal error: f32-wino-out: a residual with a bordered output");
  x86::Assembler& a = ve.as();
  const int64_t c = s.c, out_h = 2 * s.tiles_h, out_w = 2 * s.tiles_w;
  const int64_t orow = (s.out_place.row_floats ? s.out_place.row_floats : out_w * c) * 4;
  const int64_t osample = (s.out_place.sample_floats ? s.out_place.sample_floats : out_h * out_w * c) * 4;
  if (s.residual) {
    load_residual_delta(ve);
    a.mov(kWk, slot(kResDelta));
  }
  if (s.has_bias) {
    a.mov(kW, x86::qword_ptr(kArgs, 16));
    a.lea(kBias, at(kW, s.bias_off * 4));
  }
  a.mov(kIn, x86::qword_ptr(kArgs, 0));
  a.mov(kIn, x86::qword_ptr(kIn, 0));
  a.mov(kOut, x86::qword_ptr(kArgs, 8));
  add_imm(a, kOut, s.out_place.offset_floats * 4);
  a.mov(slot(kOutN), kOut);
  const auto body = [&](int64_t off, int lanes) {
    auto ld = [&](int v, int point) { ve.load_lanes(v, at(kPix, off + point * c * 4), lanes); };
    // s0[j] = m0j + m1j + m2j (registers 0..3), s1[j] = m1j - m2j - m3j (4..7): the rows of A^T m.
    for (int j = 0; j < 4; ++j) {
      ld(8, j);
      ld(9, 4 + j);
      ld(10, 8 + j);
      ld(11, 12 + j);
      ve.add(j, 8, 9);
      ve.add(j, j, 10);
      ve.sub(4 + j, 9, 10);
      ve.sub(4 + j, 4 + j, 11);
    }
    // (A^T m) A: the 2 x 2 outputs y00 (8), y01 (9), y10 (10), y11 (11).
    ve.add(8, 0, 1);
    ve.add(8, 8, 2);
    ve.sub(9, 1, 2);
    ve.sub(9, 9, 3);
    ve.add(10, 4, 5);
    ve.add(10, 10, 6);
    ve.sub(11, 5, 6);
    ve.sub(11, 11, 7);
    const std::array<int, 4> y{8, 9, 10, 11};
    if (s.has_bias) {
      ve.load_lanes(0, at(kBias, off), lanes);
      for (int r : y) ve.add(r, r, 0);
    }
    auto disp = [&](int k) { return off + (k / 2) * orow + (k % 2) * c * 4; };
    if (s.residual) {
      for (int k = 0; k < 4; ++k) {
        ve.load_lanes(1, x86::ptr(kOb, kWk, 0, i32(disp(k))), lanes);
        ve.add(y[static_cast<size_t>(k)], y[static_cast<size_t>(k)], 1);
      }
    }
    emit_fused_act(ve, s.act, {8, 9, 10, 11}, 0);
    for (int k = 0; k < 4; ++k) ve.store_lanes(at(kOb, disp(k)), y[static_cast<size_t>(k)], lanes);
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

std::vector<float> winograd_weights(const std::vector<float>& kernel, int64_t cin, int64_t cout) {
  if (static_cast<int64_t>(kernel.size()) != 9 * cin * cout) {
    throw Error("JIT internal error: winograd_weights: the kernel is not 3 x 3 x cin x cout");
  }
  std::vector<float> out(static_cast<size_t>(cin * kWinogradPoints * cout));
  for (int64_t ci = 0; ci < cin; ++ci) {
    for (int64_t co = 0; co < cout; ++co) {
      double g[3][3];
      for (int ky = 0; ky < 3; ++ky) {
        for (int kx = 0; kx < 3; ++kx) g[ky][kx] = kernel[static_cast<size_t>(((ky * 3 + kx) * cin + ci) * cout + co)];
      }
      // G g (4 x 3), then (G g) G^T (4 x 4).
      double gg[4][3];
      for (int kx = 0; kx < 3; ++kx) {
        gg[0][kx] = g[0][kx];
        gg[1][kx] = 0.5 * (g[0][kx] + g[1][kx] + g[2][kx]);
        gg[2][kx] = 0.5 * (g[0][kx] - g[1][kx] + g[2][kx]);
        gg[3][kx] = g[2][kx];
      }
      for (int i = 0; i < 4; ++i) {
        const double u[4] = {gg[i][0], 0.5 * (gg[i][0] + gg[i][1] + gg[i][2]), 0.5 * (gg[i][0] - gg[i][1] + gg[i][2]),
                             gg[i][2]};
        for (int j = 0; j < 4; ++j) {
          out[static_cast<size_t>(ci * kWinogradPoints * cout + (4 * i + j) * cout + co)] = static_cast<float>(u[j]);
        }
      }
    }
  }
  return out;
}

}  // namespace nnd::jit
